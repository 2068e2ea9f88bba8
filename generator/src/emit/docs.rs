//! The markdown reference: `docs/<stem>.md` (`session-protocol.md` for the session protocol; the stem is the
//! bundled schema's, [`super::schema::stem`]).
//!
//! For a package with a protocol layer, the protocol's sections: the envelope, the events by category (each with
//! its examples and field table, fields of nested objects as dotted rows), the event summary, the role matrix and
//! what was removed. Then a **Types** section with every type those sections do not show (all types, for a plain
//! type package), by name, each with its anchor (`type-<name>`), its names in each language, its description, what
//! it is, its property table or union members, and its examples. Then the rule catalogues: the message rules this
//! package can give rise to ([`produced_rules`]), and for a protocol the stream rules.
//!
//! Property types are written as the schema refines them: `string (2 to 32 characters; matching `^[0-9a-z]+$`)`,
//! `integer (≥ 1)`, `array of string`, `Foo or null`, `map of string to Bar`; a `?` after the first word marks
//! an optional property. In the protocol's tables types are written in place (an enum as its values, a nested
//! object as `object` followed by its own rows); in the Types section a named type is a link to its section. A type
//! whose words in place would leave something out (an object not followed by its rows, a union, a nested object's
//! `minProperties`, a type that holds itself) is a link in the protocol's tables too: `Describer::new` finds
//! them by phrasing those tables and gives them sections.
//!
//! The emitter turns the model into a plain view (rows of strings, lists, flags) and renders it through a
//! minijinja template (`generator/templates/docs/`) with strict undefined behaviour, so a typo in the template
//! fails instead of printing nothing. Everything that comes from the schema goes through one of three filters
//! that keep it from breaking the markdown around it:
//!
//! - `cell`: prose (descriptions are markdown) inside a table cell: `|` is escaped and line breaks
//!   (`\n`, `\r`, U+2028, U+2029) become `<br>`, so a row stays one line with the header's column count;
//! - `code`: a literal (field name, enum value, tag, pattern) as an inline code span whose backtick fence is
//!   longer than any backtick run inside it, table-safe too;
//! - `fence(lang)`: a fenced code block whose fence is longer than any backtick run inside it;
//! - `segs`: a type cell built of pieces, each text through `cell`, each literal through `code`, type names as
//!   links (`[`Name`](#type-name)`).
//!
//! Nothing here names an event: sections, anchors, the summary, the role matrix and the rule catalogues all
//! come from the [`Model`], [`Protocol::role_rules`], [`Rule::ALL`] and the protocol's sequence declarations ([`crate::ir::Sequence`]) (the definitions the
//! validators use).

use crate::diag::{code_span, longest_run};
use crate::engine::counted;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;
use serde_json::Value;

use super::{EmitError, EmitOptions, OutFile};
use crate::ir::sequence::{AttrSource, FieldRef, Mark, RollupKind, RollupPart, RuleKind, Scope, SeqRule};
use crate::ir::*;
use crate::rules::Rule;

const TEMPLATE: &str = include_str!("../../templates/docs/reference.md.j2");

/// JSON examples at most this long are shown on one line, as in the protocol document.
const ONE_LINE_EXAMPLE: usize = 140;

/// Emits the reference.
///
/// # Errors
/// A template error (a bug in the template, reported with minijinja's error as the source).
pub(crate) fn emit_model(m: &Model, opts: &EmitOptions) -> Result<Vec<OutFile>, EmitError> {
    Ok(vec![OutFile::new(format!("{}.md", super::schema::stem(m)), render(m, opts)?)])
}

/// Renders the reference for `m`.
///
/// # Errors
/// A template error.
pub(crate) fn render(m: &Model, opts: &EmitOptions) -> Result<String, EmitError> {
    let env = environment()?;
    let view = View::new(m, opts);
    let mut out = env.get_template("reference.md")?.render(&view)?;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// The environment every markdown template renders in (the reference, the npm package's README, the diff's
/// changelog): strict undefined behaviour, no escaping (markdown is escaped by the filters), and the markdown
/// filters `cell` (a table cell), `code` (a code span) and `fence` (a fenced block).
pub(crate) fn markdown_environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    env.add_filter("cell", cell);
    env.add_filter("code", code);
    env.add_filter("span", span);
    env.add_filter("prose", prose);
    env.add_filter("line", line);
    env.add_filter("fence", fence);
    env
}

fn environment() -> Result<Environment<'static>, EmitError> {
    let mut env = markdown_environment();
    env.add_filter("segs", segs);
    env.add_template("reference.md", TEMPLATE)?;
    Ok(env)
}

/// Escapes markdown prose for a table cell: `|` becomes `\|` (also inside code spans, which GFM tables
/// allow), and every line break becomes `<br>`, so the row stays on one line.
pub(crate) fn cell(s: String) -> String {
    let s = escape_raw_text_tags(&visible(&s));
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '|' => out.push_str("\\|"),
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push_str("<br>");
            }
            '\n' | '\u{2028}' | '\u{2029}' => out.push_str("<br>"),
            c => out.push(c),
        }
    }
    out
}

/// A literal as an inline code span that survives any content: the backtick fence is one longer than the
/// longest backtick run inside, padded with spaces when the content starts or ends with a backtick; line
/// breaks are written as escapes and `|` is escaped for tables.
pub(crate) fn code(s: String) -> String {
    span(s).replace('|', "\\|")
}

/// A literal as a code span outside a table: `|` stays as it is (a code span keeps backslashes, so the table
/// escape `\|` in a heading or a sentence showed a tag `a|b` as `a\|b`).
pub(crate) fn span(s: String) -> String {
    code_span(&s)
}

/// Prose from the schema (a description) as markdown that cannot reach past itself: a fenced code block it opens
/// and does not close is closed at its end, and a line that would open an HTML block (`<` first on the line, such
/// as `<!--`) starts with an escaped `<`. An unclosed fence turned the rest of the page into code, an unclosed
/// comment hid it (every later section and table). Closed fences and inline markdown stay as written.
pub(crate) fn prose(s: String) -> String {
    let s = line_breaks_as_lf(&visible(&s));
    let mut out = String::with_capacity(s.len() + 8);
    // The open fence: its character and length.
    let mut open: Option<(char, usize)> = None;
    // Whether the line before is a paragraph's (a `---` or `===` under it would make it a heading).
    let mut after_text = false;
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = &line[indent.min(line.len())..];
        let run = |c: char| body.chars().take_while(|x| *x == c).count();
        match open {
            _ if indent > 3 => {}
            Some((c, n)) => {
                if run(c) >= n && body.trim_start_matches(c).trim().is_empty() {
                    open = None;
                }
            }
            None => {
                if let Some(c) = ['`', '~'].into_iter().find(|c| run(*c) >= 3) {
                    let info = body.trim_start_matches(c);
                    if c == '~' || !info.contains('`') {
                        open = Some((c, run(c)));
                    }
                } else {
                    // Text: no HTML block may start here, no heading (the reference's outline is its own), and no
                    // raw-text element inside.
                    let (text, in_list) = after_markers(line);
                    let at = html_block_start(line)
                        .or_else(|| heading_start(&line[text..], after_text && !in_list).map(|at| text + at));
                    let escaped = match at {
                        Some(at) => format!("{}\\{}", &line[..at], &line[at..]),
                        None => line.to_string(),
                    };
                    out.push_str(&escape_raw_text_tags(&escaped));
                    after_text = !body.trim().is_empty();
                    continue;
                }
            }
        }
        after_text = false;
        out.push_str(line);
    }
    if let Some((c, n)) = open {
        out.push('\n');
        out.extend(std::iter::repeat_n(c, n));
    }
    out
}

/// `s` with every line ending CommonMark knows (`\r\n`, `\r`, `\n`) written `\n`: a bare CR ended a line for a
/// markdown reader but not for the filters that split lines.
/// `s` with its control characters other than tab and line breaks written as `\u{..}` escapes, as
/// [`crate::diag::printable`] writes them: prose from the schema reaches the reference from many places
/// (descriptions, which the loader refuses with one, and the protocol's `x-*` texts, which it does not read
/// alike), and a raw ESC or NUL there made the file binary, or a terminal's escape sequence (helper 90).
fn visible(s: &str) -> std::borrow::Cow<'_, str> {
    let hidden = crate::diag::hidden_control;
    if !s.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(s);
    }
    s.chars().map(|c| if hidden(c) { format!("\\u{{{:04X}}}", u32::from(c)) } else { c.to_string() }).collect()
}

fn line_breaks_as_lf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\r', "\n")
}

/// Where a line's `<` would open an HTML block: first in its text after its container markers ([`after_markers`]:
/// `> <!--` and `- <!--` open one as `<!--` first on the line does).
fn html_block_start(line: &str) -> Option<usize> {
    let (i, _) = after_markers(line);
    (line.as_bytes().get(i) == Some(&b'<')).then_some(i)
}

/// Where a line's text starts after up to three spaces and any block quote (`>`) and list markers (`-`, `+`, `*`,
/// `1.`, `1)`) in front of it, each with up to three spaces after; and whether a list marker was among them.
fn after_markers(line: &str) -> (usize, bool) {
    let b = line.as_bytes();
    let blank = |c: &u8| matches!(c, b' ' | b'\t');
    // A tab after a marker is blank too (`-\t<!--` opened one as `- <!--` did; helper 77).
    let spaces = |i: usize| i + b.iter().skip(i).take(3).take_while(|c| blank(c)).count();
    // A tab first on the line indents it as code.
    let mut i = b.iter().take(3).take_while(|c| **c == b' ').count();
    let mut list = false;
    loop {
        match b.get(i) {
            Some(b'>') => i = spaces(i + 1),
            Some(b'-' | b'+' | b'*') if b.get(i + 1).is_some_and(blank) => (i, list) = (spaces(i + 1), true),
            Some(c) if c.is_ascii_digit() => {
                let digits = b.iter().skip(i).take_while(|c| c.is_ascii_digit()).count();
                match (b.get(i + digits), b.get(i + digits + 1)) {
                    (Some(b'.' | b')'), Some(c)) if blank(c) && digits <= 9 => {
                        (i, list) = (spaces(i + digits + 1), true);
                    }
                    _ => return (i, list),
                }
            }
            _ => return (i, list),
        }
    }
}

/// Where a line's text (after its indent and container markers) would make a heading: an ATX heading (`## Title`,
/// also in a block quote or a list item: helper 90), or a setext underline (`===`, `---`) under a paragraph's line
/// (`after_text`; not after a list marker, where `- - -` is a thematic break). Escaped, a description's heading stays a line
/// of its own section: it became a heading in the reference's outline (helper 85).
fn heading_start(body: &str, after_text: bool) -> Option<usize> {
    let hashes = body.bytes().take_while(|c| *c == b'#').count();
    if (1..=6).contains(&hashes) && body.as_bytes().get(hashes).is_none_or(|c| matches!(c, b' ' | b'\t')) {
        return Some(0);
    }
    let mark = body.trim_end();
    let underline = |c: char| !mark.is_empty() && mark.chars().all(|x| x == c);
    (after_text && (underline('=') || underline('-'))).then_some(0)
}

/// HTML elements whose content a browser reads as text up to their closing tag (`<textarea>`, `<script>`,
/// `<plaintext>`, which has none): an unclosed one in schema prose swallowed the rest of the page, as `<!--` did.
const RAW_TEXT_TAGS: &[&str] =
    &["textarea", "script", "style", "title", "xmp", "plaintext", "iframe", "noembed", "noframes", "noscript"];

/// `s` with the `<` of every [`RAW_TEXT_TAGS`] opening tag outside code spans escaped (`\<textarea`), so the tag is
/// text; other inline HTML stays (found by helper 77).
fn escape_raw_text_tags(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    // The backtick run that opened the code span we are in, if any.
    let mut span: Option<usize> = None;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' {
            let run = b[i..].iter().take_while(|c| **c == b'`').count();
            span = match span {
                None => Some(run),
                Some(n) if n == run => None,
                open => open,
            };
            out.push_str(&s[i..i + run]);
            i += run;
            continue;
        }
        if b[i] == b'<' && span.is_none() && (i == 0 || b[i - 1] != b'\\') {
            let name: String = b[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphabetic())
                .map(|c| c.to_ascii_lowercase() as char)
                .collect();
            let after = b.get(i + 1 + name.len());
            if RAW_TEXT_TAGS.contains(&name.as_str()) && !after.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'-')
            {
                out.push('\\');
            }
        }
        let len = s[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&s[i..i + len]);
        i += len;
    }
    out
}

/// Prose on one line (a heading, a status, a list item's text): every line break a space, so it cannot end the line
/// and start a block of its own.
fn line(s: String) -> String {
    let s = visible(&s);
    let one = s.split(['\r', '\n', '\u{2028}', '\u{2029}']).filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" ");
    escape_raw_text_tags(&one)
}

/// A type cell from its pieces ([`Seg`]): text through [`cell`], literals through [`code`], and links to a type's
/// section as `[code](#anchor)` (anchors are ASCII slugs). Outside a table (`segs(false)`), a literal's `|` stays
/// as it is: a code span keeps backslashes, and only a table row needs its pipes escaped.
fn segs(v: minijinja::Value, in_table: Option<bool>) -> Result<String, minijinja::Error> {
    let lit = |t: String| if in_table.unwrap_or(true) { code(t) } else { span(t) };
    let mut out = String::new();
    for s in v.try_iter()? {
        let field = |k: &str| s.get_attr(k).map(|x| x.as_str().unwrap_or_default().to_string());
        let (kind, text) = (field("kind")?, field("text")?);
        match kind.as_str() {
            "code" => out.push_str(&lit(text)),
            "link" => out.push_str(&format!("[{}](#{})", lit(text), field("anchor")?)),
            _ => out.push_str(&cell(text)),
        }
    }
    Ok(out)
}

/// A fenced code block: the fence is longer than any backtick run inside, so content cannot close it.
pub(crate) fn fence(s: String, lang: String) -> String {
    let s = visible(&s).into_owned();
    let ticks = "`".repeat((longest_run(&s, '`') + 1).max(3));
    let body = s.replace("\r\n", "\n");
    let body = body.trim_end_matches('\n');
    format!("{ticks}{lang}\n{body}\n{ticks}")
}

/// A name as an anchor's slug: lowercased, with anything other than ASCII letters, digits, `-` and `_` replaced by
/// `-` (`tool-call-start`, `A b/c` -> `a-b-c`).
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '-' })
        .collect()
}

/// The anchors of the reference's sections, each distinct: the template's own ([`FIXED_ANCHORS`]: `envelope`,
/// `event-types`, ...), then `event-<tag>`, `category-<name>`, `flow-<title>`, `type-<base name>`, each a prefix and
/// a [`slug`]. A slug another section took
/// already gets `-2`, `-3`, ...: two tags that differ only in case or punctuation (`Text` and `text`, `a.b` and
/// `a-b`) would otherwise share one anchor, and every link to the second would lead to the first.
struct Anchors {
    taken: BTreeSet<String>,
    /// By tag.
    events: BTreeMap<String, String>,
    /// By category name.
    categories: BTreeMap<String, String>,
    /// In the protocol's order of flows.
    flows: Vec<String>,
}

/// The anchors the template gives its own sections.
const FIXED_ANCHORS: &[&str] = &[
    "envelope",
    "strict-ids",
    "event-types",
    "event-type-summary",
    "role-matrix",
    "removed",
    "side-channels",
    "open-questions",
    "types",
    "message-rules",
    "stream-rules",
];

impl Anchors {
    /// The template's own anchors taken.
    fn new() -> Self {
        Anchors {
            taken: FIXED_ANCHORS.iter().map(|a| a.to_string()).collect(),
            events: BTreeMap::new(),
            categories: BTreeMap::new(),
            flows: Vec::new(),
        }
    }

    fn take(&mut self, prefix: &str, name: &str) -> String {
        let first = format!("{prefix}{}", slug(name));
        let mut anchor = first.clone();
        let mut n = 2;
        while !self.taken.insert(anchor.clone()) {
            anchor = format!("{first}-{n}");
            n += 1;
        }
        anchor
    }

    /// The anchor of event `tag`'s section.
    fn event(&self, tag: &str) -> String {
        self.events.get(tag).cloned().unwrap_or_default()
    }
}

/// What the template sees: plain strings and lists, nothing to compute.
#[derive(Serialize)]
struct View {
    generated_by: String,
    title: String,
    description: String,
    protocol: Option<ProtocolView>,
    types_intro: String,
    types: Vec<TypeView>,
    rules_scope: String,
    rules: Vec<RuleRow>,
    stream_rules: Vec<StreamRuleRow>,
    stream_scopes: Vec<ScopeRow>,
    stream_rollup: Vec<RollupRow>,
}

#[derive(Serialize)]
struct ProtocolView {
    union_field: String,
    role_field: String,
    /// `ev.t`: how the discriminator is written in prose.
    tag_path: String,
    /// The envelope type's description, when it is not the package's (already the introduction).
    envelope_description: String,
    /// What becomes of the envelope's other properties, unless they are rejected.
    envelope_openness: Vec<Seg>,
    /// The envelope's constraints besides its properties, one bullet each.
    envelope_notes: Vec<Vec<Seg>>,
    /// The envelope type's own `examples` (the loader holds them to the envelope; left out until stop 68, helper
    /// 98).
    envelope_examples: Vec<String>,
    roles: Vec<String>,
    envelope: Vec<Row>,
    event_count: usize,
    categories: Vec<CategoryView>,
    summary: Vec<SummaryRow>,
    matrix: Vec<MatrixRow>,
    role_fields: Vec<RoleField>,
    removed: Vec<RemovedRow>,
    /// The properties with a strict-id pattern (`x-strict-pattern`): where, and the pattern.
    strict_ids: Vec<(String, String)>,
    flows: Vec<FlowView>,
    side_channels: Vec<[String; 3]>,
    open_questions: Vec<[String; 2]>,
}

#[derive(Serialize)]
struct FlowView {
    title: String,
    anchor: String,
    description: String,
    /// The session as a code block: each note as a `//` comment, each message on one line.
    text: String,
}

#[derive(Serialize)]
struct CategoryView {
    title: String,
    anchor: String,
    events: Vec<EventView>,
}

#[derive(Serialize)]
struct EventView {
    tag: String,
    anchor: String,
    /// "user or agent".
    sent_by: String,
    status: String,
    description: String,
    examples: Vec<String>,
    /// What becomes of the event's other properties, unless they are rejected.
    openness: Vec<Seg>,
    /// The event's constraints besides its properties, one bullet each.
    notes: Vec<Vec<Seg>>,
    rows: Vec<Row>,
    replaces: Vec<String>,
    /// The event type's other names (`x-aliases`): Rust, TypeScript and Zod of each.
    aliases: Vec<String>,
    /// The first example as a whole message (an envelope around it), when the envelope's required properties
    /// can be filled: by a role that may send it, `x-auto` ones with sample values.
    message: String,
}

/// A type's example in the Types section.
#[derive(Serialize)]
struct ExampleView {
    text: String,
    /// Why the type rejects it (`/x: expected an integer [type]`), or empty. A protocol's examples are held to it
    /// by the loader; a plain type package's are annotations, as in JSON Schema, and were printed as valid.
    invalid: String,
}

/// One row of a property table.
#[derive(Serialize)]
struct Row {
    /// Dotted path from the table's object (`image.width`).
    path: String,
    /// The type cell.
    ty: Vec<Seg>,
    description: String,
}

/// A piece of a type cell: text (through `cell`), a literal (through `code`) or a link to a type's section.
#[derive(Serialize, Clone, Debug, PartialEq)]
struct Seg {
    /// `text`, `code` or `link`.
    kind: &'static str,
    text: String,
    /// The link target (for `link`).
    anchor: String,
}

fn text(s: impl Into<String>) -> Seg {
    Seg { kind: "text", text: s.into(), anchor: String::new() }
}

fn lit(s: impl Into<String>) -> Seg {
    Seg { kind: "code", text: s.into(), anchor: String::new() }
}

fn link(s: impl Into<String>, anchor: impl Into<String>) -> Seg {
    Seg { kind: "link", text: s.into(), anchor: anchor.into() }
}

#[derive(Serialize)]
struct TypeView {
    name: String,
    anchor: String,
    rust: String,
    ts: String,
    zod: String,
    /// Other names (`x-aliases`): Rust, TypeScript and Zod of each.
    aliases: Vec<String>,
    description: String,
    /// What the type is (`object (closed)`, `union on `t``, `string (non-empty)`).
    kind: Vec<Seg>,
    /// Further constraints, one per bullet.
    notes: Vec<Vec<Seg>>,
    examples: Vec<ExampleView>,
    /// The property table of an object.
    rows: Vec<Row>,
    /// The discriminator and members of a union.
    discriminator: String,
    members: Vec<MemberRow>,
}

#[derive(Serialize)]
struct MemberRow {
    tag: String,
    ty: Vec<Seg>,
}

#[derive(Serialize)]
struct SummaryRow {
    category: String,
    tag: String,
    anchor: String,
    roles: String,
    status: String,
}

#[derive(Serialize)]
struct MatrixRow {
    tag: String,
    anchor: String,
    /// Per role, in role order: may send, and the fields it may not send in this event.
    cells: Vec<MatrixCell>,
}

#[derive(Serialize)]
struct MatrixCell {
    allowed: bool,
    except: Vec<String>,
}

#[derive(Serialize)]
struct RoleField {
    path: String,
    roles: String,
}

#[derive(Serialize)]
struct RemovedRow {
    what: String,
    why: String,
}

#[derive(Serialize)]
struct RuleRow {
    id: String,
    summary: String,
}

#[derive(Serialize)]
struct StreamRuleRow {
    id: String,
    /// What breaks it, in words built from the declaration (kind, scope, filters): the reference says what is
    /// checked, not only the author's `summary` (helper 79: a changed `equals` left the summary saying the old).
    check: Vec<Seg>,
    summary: String,
    pointer: String,
    seed: String,
}

#[derive(Serialize)]
struct ScopeRow {
    name: String,
    key: String,
    opened_by: String,
    closed_by: String,
    /// One at a time, within another, or many by key; its marks and the values it records.
    what: Vec<Seg>,
    description: String,
}

#[derive(Serialize)]
struct RollupRow {
    name: String,
    fold: Vec<Seg>,
    description: String,
}

/// Where a sequence declaration reads a value, as a pointer into the message (`/turn`, `/ev/call`).
fn seq_pointer(p: &Protocol, f: &FieldRef) -> String {
    match f {
        FieldRef::Envelope(n) => format!("/{n}"),
        FieldRef::Event(n) => format!("/{}/{n}", p.union_field),
    }
}

/// What breaks a sequence rule, in words (as the reference's "Broken by" cell says it, literals in backticks): what
/// `wiregen diff` says a changed rule checked and checks.
pub(crate) fn rule_check_text(p: &Protocol, r: &SeqRule) -> String {
    rule_check(p, r).into_iter().map(|s| if s.kind == "text" { s.text } else { format!("`{}`", s.text) }).collect()
}

/// What breaks a sequence rule, from its declaration: the event it is about (its `on` events, else the scope's
/// own event, else "a message"), what makes it break, and who it applies to.
fn rule_check(p: &Protocol, r: &SeqRule) -> Vec<Seg> {
    let sq = &p.sequence;
    let ptr = |f: &FieldRef| lit(seq_pointer(p, f));
    let ev = |e: &Option<String>| lit(e.clone().unwrap_or_default());
    // A rule of a kind without an event of its own reads its `on` events, else every message.
    // A rule that never reads its scope's opening event does not list it (helper 81).
    let opener = r.kind.scope().and_then(|i| sq.scopes.get(i)).and_then(|s| s.opened_by.as_deref());
    let on: Vec<String> = if r.kind.skips_opener(&sq.scopes) {
        r.on.iter().filter(|e| Some(e.as_str()) != opener).cloned().collect()
    } else {
        r.on.clone()
    };
    let subject = |default: Vec<Seg>| if on.is_empty() { default } else { joined(&on, " or ") };
    // ` a ` or ` an ` before a scope's name, as it is read (helper 117: `while a \`order\``).
    let a = |word: &str| text(format!(" {} ", crate::diag::article(word)));
    let mut out = Vec::new();
    if let RuleKind::Unique { key } = &r.kind {
        out.extend(subject(vec![text("a message")]));
        // Only the messages the rule applies to are remembered (helper 117: the text said any accepted message).
        let filtered = !r.on.is_empty() || r.role.is_some() || !r.when.is_empty();
        let earlier = if filtered {
            " an accepted message it applies to already had"
        } else {
            " an accepted message already had"
        };
        out.extend([text(" whose "), ptr(key), text(earlier)]);
    } else if let Some(sc) = r.kind.scope().and_then(|i| sq.scopes.get(i)) {
        let name = || lit(sc.name.clone());
        let key = ptr(&sc.key);
        let other = || subject(vec![text("a message other than "), ev(&sc.opened_by)]);
        match &r.kind {
            RuleKind::OpenWithoutKey { .. } => out.extend([ev(&sc.opened_by), text(" without "), key]),
            RuleKind::OpenWhileOpen { .. } if sc.single => {
                out.extend([ev(&sc.opened_by), text(" while"), a(&sc.name), name(), text(" is open")]);
            }
            RuleKind::OpenWhileOpen { .. } => {
                out.extend([ev(&sc.opened_by), text(" whose "), key, text(" names an open "), name()]);
            }
            RuleKind::OpenReused { .. } => {
                out.extend([
                    ev(&sc.opened_by),
                    text(" whose "),
                    key,
                    text(" names"),
                    a(&sc.name),
                    name(),
                    text(" closed before"),
                ]);
            }
            RuleKind::KeyMissing { .. } => {
                out.extend(other());
                out.extend([text(" without "), key, text(" while"), a(&sc.name), name(), text(" is open")]);
            }
            RuleKind::KeyMismatch { .. } => {
                out.extend(other());
                out.extend([text(" whose "), key, text(" is not the open "), name(), text("'s")]);
            }
            RuleKind::CloseNotOpen { .. } if sc.single => {
                out.extend([ev(&sc.closed_by), text(" while no "), name(), text(" is open")]);
            }
            RuleKind::CloseNotOpen { .. } => {
                out.extend([ev(&sc.closed_by), text(" whose "), key, text(" names no open "), name()]);
            }
            RuleKind::NamesOpen { at, .. } => {
                // The scope's own opening event names what it opens, not something open.
                if r.kind.skips_opener(&sq.scopes) {
                    out.extend(other());
                } else {
                    out.extend(subject(vec![text("a message")]));
                }
                out.extend([text(" whose "), ptr(at), text(", when present, names no open "), name()]);
            }
            RuleKind::NeedsOpen { .. } => {
                out.extend(other());
                out.extend([text(" while no "), name(), text(" is open")]);
            }
            RuleKind::CloseBlocked { by, unless, .. } => {
                let b = sq.scopes.get(*by).map(|b| b.name.clone()).unwrap_or_default();
                out.extend([ev(&sc.closed_by), text(" while"), a(&b), lit(b), text(" opened in that "), name()]);
                out.push(text(" is open"));
                if let Some((u, m)) = *unless {
                    let (us, mark) = (&sq.scopes[u], &sq.scopes[u].marks[m]);
                    out.extend([text(", unless the open "), lit(us.name.clone()), text(" is marked ")]);
                    out.extend(mark_segs(mark));
                }
            }
            RuleKind::CloseRequires { mark, field, equals, .. } => {
                out.extend([ev(&sc.closed_by), text(" of a "), name(), text(" marked ")]);
                out.extend(mark_segs(&sc.marks[*mark]));
                out.extend([text(" whose "), ptr(field), text(" is not "), lit(equals.to_string())]);
            }
            RuleKind::Unique { .. } => {}
        }
    }
    let mut only = Vec::new();
    if let Some(role) = &r.role {
        only.push(vec![text("from "), lit(role.clone())]);
    }
    for (f, v) in &r.when {
        only.push(vec![text("when "), ptr(f), text(" is "), lit(v.to_string())]);
    }
    for (i, o) in only.into_iter().enumerate() {
        out.push(text(if i == 0 { "; only " } else { ", " }));
        out.extend(o);
    }
    out
}

/// A mark as the reference names it: `aborted` (set by `abort` from `user`).
fn mark_segs(m: &Mark) -> Vec<Seg> {
    let mut out = vec![lit(m.name.clone()), text(" (set by "), lit(m.by.clone())];
    if let Some(r) = &m.role {
        out.extend([text(" from "), lit(r.clone())]);
    }
    out.push(text(")"));
    out
}

fn scope_row(p: &Protocol, sc: &Scope) -> ScopeRow {
    let sq = &p.sequence;
    let mut what = match sc.within.and_then(|w| sq.scopes.get(w)) {
        Some(w) => vec![
            text("many, by key, each within the open "),
            lit(w.name.clone()),
            text(" of the same key (its opening event while that one is not open opens nothing)"),
        ],
        None if sc.single => vec![text("one at a time")],
        None => vec![text("many, by key")],
    };
    for (i, m) in sc.marks.iter().enumerate() {
        what.push(text(if i == 0 { "; marks: " } else { ", " }));
        what.extend(mark_segs(m));
    }
    for (i, a) in sc.record.iter().enumerate() {
        what.push(text(if i == 0 { "; records: " } else { ", " }));
        what.push(lit(a.name.clone()));
        match &a.from {
            AttrSource::Field(f) => what.extend([text(" ("), lit(seq_pointer(p, f)), text(")")]),
            AttrSource::OpenKey(s) => {
                let n = sq.scopes.get(*s).map(|x| x.name.clone()).unwrap_or_default();
                what.extend([text(" (the open "), lit(n), text("'s key)")]);
            }
        }
    }
    // Where the rollup lists the open ones (its `open` member; helper 109: the reference named it nowhere).
    if let Some(r) = &sc.rollup {
        let verb = if sc.single { " holds it as " } else { " lists them as " };
        what.extend([text("; the rollup's "), lit("open"), text(verb), lit(r.clone())]);
    }
    ScopeRow {
        name: sc.name.clone(),
        key: seq_pointer(p, &sc.key),
        opened_by: sc.opened_by.clone().unwrap_or_default(),
        closed_by: sc.closed_by.clone().unwrap_or_default(),
        what,
        description: sc.description.clone(),
    }
}

fn rollup_row(p: &Protocol, part: &RollupPart) -> RollupRow {
    let e = || lit(part.event.clone());
    let fold = match &part.kind {
        RollupKind::Last { .. } => vec![text("the last "), e(), text(", every field (`null` before any)")],
        RollupKind::Latest { .. } => vec![text("each field of "), e(), text(" as last set (`null` until set)")],
        RollupKind::Count { field, values } => {
            let mut s = vec![text("how many "), e(), text(" by "), lit(seq_pointer(p, field)), text(": ")];
            s.extend(joined(values, ", "));
            s
        }
        RollupKind::Sum { field, fields } => {
            let mut s = vec![text("the numbers of "), lit(seq_pointer(p, field)), text(" on "), e()];
            s.push(text(", summed: "));
            s.extend(joined(fields, ", "));
            s
        }
    };
    RollupRow { name: part.name.clone(), fold, description: part.description.clone() }
}

impl View {
    fn new(m: &Model, opts: &EmitOptions) -> View {
        let d = Describer::new(m);
        let protocol = m.protocol.as_ref().map(|p| protocol_view(&d, p));
        let types: Vec<TypeView> = d.sectioned().into_iter().map(|id| type_view(&d, id)).collect();
        let n = types.len();
        let noun = if n == 1 { "type" } else { "types" };
        // Whole: a type shown in place has a section too when the tables leave out its examples or title.
        let types_intro = match &m.protocol {
            Some(_) => format!("The {n} {noun} the envelope and event tables above do not spell out whole, by name."),
            None => format!("{n} {noun}, by name."),
        };
        let produced = produced_rules(m);
        let mut rules_scope = if produced.len() < Rule::ALL.len() {
            "; the catalogue's other rules cannot occur with this package".to_string()
        } else {
            String::new()
        };
        if produced.contains(&Rule::StrictId) {
            // Not every checker: helper 85 read the sentence as a promise that Zod reports it too.
            rules_scope.push_str(
                "; `strict-id` only `wiregen validate --strict-ids` and `wiregen serve --strict-ids` report (the \
                 generated Rust and TypeScript checkers and the bundled schema check the default mode: see Strict ids)",
            );
        }
        View {
            // In an HTML comment, which `-->` would end.
            generated_by: opts.generated_by().replace("-->", "--\\>"),
            title: m.title.clone(),
            description: m.description.clone(),
            protocol,
            types_intro,
            types,
            rules_scope,
            rules: produced.iter().map(|r| RuleRow { id: r.id().into(), summary: r.summary().into() }).collect(),
            stream_rules: m
                .protocol
                .iter()
                .flat_map(|p| p.sequence.rules.iter().map(move |r| (p, r)))
                .map(|(p, r)| StreamRuleRow {
                    id: r.id.into(),
                    check: rule_check(p, r),
                    summary: r.summary.clone(),
                    pointer: r.pointer.clone(),
                    seed: r.seed.clone(),
                })
                .collect(),
            stream_scopes: m
                .protocol
                .iter()
                .flat_map(|p| p.sequence.scopes.iter().map(move |s| scope_row(p, s)))
                .collect(),
            stream_rollup: m
                .protocol
                .iter()
                .flat_map(|p| p.sequence.rollup.iter().map(move |r| rollup_row(p, r)))
                .collect(),
        }
    }
}

fn protocol_view(d: &Describer<'_>, p: &Protocol) -> ProtocolView {
    let m = d.m;
    let env = m.ty(p.envelope);
    let mut envelope = Vec::new();
    d.begin_table();
    if let Shape::Object(o) = &env.node.shape {
        d.rows("", &o.fields, None, &mut vec![p.envelope], &mut envelope);
    }
    for (f, r) in &p.envelope_field_roles {
        if r.len() < p.roles.len() {
            only(&mut envelope, f, &ordered_roles(p, r));
        }
    }
    let disc = p.discriminator(m);
    let events: Vec<EventView> = p.events.iter().map(|e| event(d, p, e, disc)).collect();
    let mut by_tag: Vec<Option<EventView>> = events.into_iter().map(Some).collect();
    let categories = p
        .categories
        .iter()
        .map(|c| CategoryView {
            title: c.title.clone(),
            anchor: d.sections.categories.get(&c.name).cloned().unwrap_or_default(),
            events: p
                .events
                .iter()
                .zip(by_tag.iter_mut())
                .filter(|(e, _)| e.category == c.name)
                .filter_map(|(_, v)| v.take())
                .collect(),
        })
        .filter(|c| !c.events.is_empty())
        .collect();
    let summary = p
        .events
        .iter()
        .map(|e| SummaryRow {
            category: e.category.clone(),
            tag: e.tag.clone(),
            anchor: d.sections.event(&e.tag),
            roles: ordered_roles(p, &e.roles).join("/"),
            status: status(e),
        })
        .collect();
    let matrix = p
        .events
        .iter()
        .map(|e| MatrixRow {
            tag: e.tag.clone(),
            anchor: d.sections.event(&e.tag),
            cells: p
                .roles
                .iter()
                .map(|r| MatrixCell {
                    allowed: e.roles.contains(r),
                    except: p
                        .role_rules(e)
                        .filter_map(|rule| match rule {
                            RoleRule::EventField { name, allowed } if !allowed.contains(r) => Some(name.to_string()),
                            _ => None,
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    let role_fields = p
        .envelope_field_roles
        .iter()
        .map(|(f, r)| RoleField { path: f.clone(), roles: ordered_roles(p, r).join(" or ") })
        .collect();
    let envelope_description = env.description.clone().filter(|d| *d != m.description).unwrap_or_default();
    ProtocolView {
        union_field: p.union_field.clone(),
        role_field: p.role_field.clone(),
        tag_path: format!("{}.{disc}", p.union_field),
        envelope_description,
        envelope_openness: d.openness(&env.node.shape, None),
        envelope_notes: match &env.node.shape {
            Shape::Object(o) => d.object_notes(o, None),
            _ => Vec::new(),
        },
        envelope_examples: env.examples.iter().map(example).collect(),
        roles: p.roles.clone(),
        envelope,
        event_count: p.events.len(),
        categories,
        summary,
        matrix,
        role_fields,
        removed: p.removed.iter().map(|r| RemovedRow { what: r.what.clone(), why: r.why.clone() }).collect(),
        strict_ids: strict_ids(m, p),
        flows: p
            .flows
            .iter()
            .zip(&d.sections.flows)
            .map(|(f, anchor)| FlowView {
                title: f.title.clone(),
                anchor: anchor.clone(),
                description: f.description.clone(),
                text: flow_text(f),
            })
            .collect(),
        side_channels: p.side_channels.iter().map(|s| [s.thing.clone(), s.mechanism.clone(), s.why.clone()]).collect(),
        open_questions: p.open_questions.iter().map(|q| [q.question.clone(), q.decision.clone()]).collect(),
    }
}

/// A flow as a code block: `// note` lines and one message per line.
fn flow_text(f: &Flow) -> String {
    let mut out = String::new();
    for (i, s) in f.steps.iter().enumerate() {
        if let Some(n) = &s.note {
            if i > 0 {
                out.push('\n');
            }
            for line in line_breaks_as_lf(n).split('\n') {
                out.push_str(&format!("// {line}\n"));
            }
        }
        out.push_str(&serde_json::to_string(&s.message).unwrap_or_default());
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// Where strict-id patterns apply: envelope properties (`id`) and event properties (`subagent-start.agentId`).
fn strict_ids(m: &Model, p: &Protocol) -> Vec<(String, String)> {
    let strict = |n: &Node| match m.resolve(&n.shape) {
        Shape::String(s) => s.strict_pattern.as_ref().map(|x| x.source.clone()),
        _ => None,
    };
    let mut out = Vec::new();
    if let Shape::Object(o) = &m.ty(p.envelope).node.shape {
        out.extend(o.fields.iter().filter_map(|f| strict(&f.node).map(|s| (format!("`{}`", f.name), s))));
    }
    for e in &p.events {
        if let Shape::Object(o) = &m.ty(e.ty).node.shape {
            out.extend(
                o.fields.iter().filter_map(|f| strict(&f.node).map(|s| (format!("`{}` of `{}`", f.name, e.tag), s))),
            );
        }
    }
    out
}

/// The sample time of envelope examples (`x-auto: now`): 2025-02-12T08:00:00Z in milliseconds.
const SAMPLE_TIME: u64 = 1_739_347_200_000;

/// An event's first example inside an envelope, sent by the first role that may send it with these fields;
/// `None` when a required envelope property has no `x-auto` (nothing to fill it with).
fn envelope_example(m: &Model, p: &Protocol, e: &Event) -> Option<Value> {
    let body = m.ty(e.ty).examples.first()?;
    let role = ordered_roles(p, &e.roles).into_iter().find(|r| {
        p.role_rules(e).all(|rule| match rule {
            RoleRule::Event { allowed } => allowed.contains(r),
            RoleRule::EnvelopeField { .. } => true,
            RoleRule::EventField { name, allowed } => body.get(name).is_none() || allowed.contains(r),
        })
    })?;
    let Shape::Object(o) = &m.ty(p.envelope).node.shape else { return None };
    let mut env = serde_json::Map::new();
    for f in &o.fields {
        let v = if f.name == p.role_field {
            Value::from(role.clone())
        } else if f.name == p.union_field {
            body.clone()
        } else if !f.required {
            continue;
        } else {
            match p.auto.iter().find(|(n, _)| *n == f.name).map(|(_, a)| a) {
                Some(AutoValue::Id) => Value::from(format!("m{}", p.events.iter().position(|x| x.tag == e.tag)? + 1)),
                Some(AutoValue::Now) => Value::from(SAMPLE_TIME),
                None => return None,
            }
        };
        env.insert(f.name.clone(), v);
    }
    Some(Value::Object(env))
}

fn event(d: &Describer<'_>, p: &Protocol, e: &Event, disc: &str) -> EventView {
    let t = d.m.ty(e.ty);
    d.begin_table();
    let mut rows = Vec::new();
    if let Shape::Object(o) = &t.node.shape {
        let fields: Vec<Field> = o.fields.iter().filter(|f| f.name != disc).cloned().collect();
        d.rows("", &fields, None, &mut vec![e.ty], &mut rows);
    }
    // A property only some of the event's senders may send says so in its row (it was in the role matrix only).
    for rule in p.role_rules(e) {
        if let RoleRule::EventField { name, allowed } = rule {
            let who: Vec<String> = ordered_roles(p, allowed).into_iter().filter(|r| e.roles.contains(r)).collect();
            if who.len() < e.roles.len() {
                only(&mut rows, name, &who);
            }
        }
    }
    EventView {
        tag: e.tag.clone(),
        anchor: d.sections.event(&e.tag),
        sent_by: ordered_roles(p, &e.roles).join(" or "),
        status: status(e),
        description: noted(d.m.own_title(e.ty), t.description.as_deref(), &t.annotations.notes(), "\n\n"),
        examples: t.examples.iter().map(example).collect(),
        openness: d.openness(&t.node.shape, None),
        notes: match &t.node.shape {
            Shape::Object(o) => d.object_notes(o, None),
            _ => Vec::new(),
        },
        rows,
        replaces: p.replaces(&e.tag).into_iter().map(String::from).collect(),
        aliases: t.aliases.iter().flat_map(|a| [a.rust.clone(), a.ts.clone(), a.zod.clone()]).collect(),
        message: envelope_example(d.m, p, e).map(|v| example(&v)).unwrap_or_default(),
    }
}

/// A description as the reference shows it: the schema's `title` and description (`title — description`), then
/// what its other annotations say ([`crate::ir::Annotations::notes`]), after `gap` (a space in a table cell, a
/// paragraph break in a section).
fn noted(title: Option<&str>, description: Option<&str>, notes: &[String], gap: &str) -> String {
    fn said(s: Option<&str>) -> Option<&str> {
        s.map(str::trim).filter(|s| !s.is_empty())
    }
    let mut out = match (said(title), said(description)) {
        (Some(t), Some(d)) => format!("{t} — {d}"),
        (Some(one), None) | (None, Some(one)) => one.to_string(),
        (None, None) => String::new(),
    };
    if !notes.is_empty() {
        if !out.is_empty() {
            // The author's text ends before the notes: a code fence it leaves open is closed (the notes read as
            // code inside it), and a backtick it leaves unpaired is escaped (it paired with the notes' first).
            if gap.contains('\n') {
                out = prose(out);
            }
            out = unpaired_backticks_escaped(&out);
            out.push_str(gap);
        }
        out.push_str(&notes.join(" "));
    }
    out
}

/// `text` with each run of backticks that no later run of the same length closes (so, in markdown, a literal)
/// escaped, so that text appended after it cannot close it into a code span.
fn unpaired_backticks_escaped(text: &str) -> String {
    // (byte offset, length) of each run of backticks.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, c) in text.char_indices() {
        match runs.last_mut() {
            Some((at, n)) if c == '`' && *at + *n == i => *n += 1,
            _ if c == '`' => runs.push((i, 1)),
            _ => {}
        }
    }
    let mut unpaired = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        match runs[i + 1..].iter().position(|r| r.1 == runs[i].1) {
            Some(k) => i += k + 2,
            None => {
                unpaired.push(runs[i]);
                i += 1;
            }
        }
    }
    let mut out = String::with_capacity(text.len() + unpaired.len() * 2);
    let mut last = 0;
    for (at, n) in unpaired {
        out.push_str(&text[last..at]);
        out.push_str(&"\\`".repeat(n));
        last = at + n;
    }
    out.push_str(&text[last..]);
    out
}

fn type_view(d: &Describer<'_>, id: TypeId) -> TypeView {
    let t = d.m.ty(id);
    let mut view = TypeView {
        name: t.names.base.clone(),
        anchor: d.anchors.get(id.0).cloned().flatten().unwrap_or_default(),
        rust: t.names.rust.clone(),
        ts: t.names.ts.clone(),
        zod: t.names.zod.clone(),
        aliases: t.aliases.iter().flat_map(|a| [a.rust.clone(), a.ts.clone(), a.zod.clone()]).collect(),
        description: noted(d.m.own_title(id), t.description.as_deref(), &t.annotations.notes(), "\n\n"),
        kind: Vec::new(),
        notes: Vec::new(),
        examples: t
            .examples
            .iter()
            .map(|x| ExampleView { text: example(x), invalid: d.example_issue(id, x) })
            .collect(),
        rows: Vec::new(),
        discriminator: String::new(),
        members: Vec::new(),
    };
    for &(whole, narrows) in d.part_of.get(id.0).into_iter().flatten() {
        if narrows {
            let mut n = vec![text("A part of the schema of ")];
            n.extend(d.type_ref(whole));
            n.push(text(": a value there is checked against the whole, which may reject what this part alone accepts"));
            view.notes.push(n);
        } else {
            let mut n = vec![text("An alternative in the schema of ")];
            n.extend(d.type_ref(whole));
            n.extend([text(" ("), lit("anyOf"), text("): a value this type accepts is accepted there too")]);
            view.notes.push(n);
        }
    }
    match &t.node.shape {
        Shape::Object(o) => {
            view.kind = d.object_kind(o);
            view.notes.extend(d.object_notes(o, Some(())));
            for r in &o.removed {
                view.notes.push(vec![
                    text("Removed: "),
                    lit(r.name.clone()),
                    text(" (use "),
                    lit(r.replacement.clone()),
                    text(")"),
                ]);
            }
            let mut stack = vec![id];
            d.rows("", &o.fields, Some(()), &mut stack, &mut view.rows);
        }
        Shape::Union(u) => {
            view.kind = vec![text("union on "), lit(u.discriminator.clone())];
            view.discriminator = u.discriminator.clone();
            view.members =
                u.members.iter().map(|mb| MemberRow { tag: mb.tag.to_string(), ty: d.type_ref(mb.ty) }).collect();
            if !u.removed.is_empty() {
                let mut n = vec![text("Removed values: ")];
                for (i, (old, rep)) in u.removed.iter().enumerate() {
                    if i > 0 {
                        n.push(text(", "));
                    }
                    n.extend([lit(Value::from(old.as_str()).to_string()), text(" (use "), lit(rep.clone()), text(")")]);
                }
                view.notes.push(n);
            }
        }
        Shape::Ref(target) => {
            view.kind = vec![text("the same as ")];
            view.kind.extend(d.type_ref(*target));
        }
        _ => view.kind = d.phrase(&t.node, Some(())).all(),
    }
    view
}

/// Adds ` — agent only` to the type of the top-level property `name`'s row: after a dash, since a parenthesis
/// at the end read as the last alternative's or the items' (`string? or null (agent only)`).
fn only(rows: &mut [Row], name: &str, roles: &[String]) {
    let path = row_path("", name);
    if let Some(row) = rows.iter_mut().find(|r| r.path == path) {
        row.ty.push(text(format!(" — {} only", roles.join(" or "))));
    }
}

/// `modified (added `steer`)`.
fn status(e: &Event) -> String {
    match &e.status_note {
        Some(n) => format!("{} ({n})", e.status),
        None => e.status.clone(),
    }
}

/// `roles` in the order of the role enum.
fn ordered_roles(p: &Protocol, roles: &[String]) -> Vec<String> {
    p.roles.iter().filter(|r| roles.contains(r)).cloned().collect()
}

/// A type cell in two parts, so that an optional property's `?` goes after the first word (`string? (non-empty)`,
/// `string?: "a" | "b"` for values).
#[derive(Default, Clone)]
struct Phrase {
    head: Vec<Seg>,
    tail: Vec<Seg>,
    /// The phrase lists values (an enum, a constant): an optional property is written `<kind>?: <values>`.
    values: Option<&'static str>,
}

impl Phrase {
    fn all(self) -> Vec<Seg> {
        let mut v = self.head;
        v.extend(self.tail);
        v
    }

    fn optional(self) -> Vec<Seg> {
        match self.values {
            Some(kind) => {
                let mut v = vec![text(format!("{kind}?: "))];
                v.extend(self.head);
                v.extend(self.tail);
                v
            }
            None => {
                let mut v = self.head;
                v.push(text("?"));
                v.extend(self.tail);
                v
            }
        }
    }
}

/// Writes types for the reference: in place (the protocol's tables) or with links to type sections (the Types
/// section, `linked` = `Some(())`).
struct Describer<'m> {
    m: &'m Model,
    /// Per type, the anchor of the section that shows it, if any.
    anchors: Vec<Option<String>>,
    /// Every section's anchor.
    sections: Anchors,
    /// Types with a section in the Types section, in order.
    sectioned: Vec<TypeId>,
    /// The types [`Describer::phrase`] is spelling out in place: one reached again inside itself (an array of
    /// itself) is named instead.
    expanding: RefCell<Vec<TypeId>>,
    /// Types the protocol's tables link to instead of spelling them out in place: those whose words in place
    /// would leave something out (see [`Describer::lossy`]). They have a section in the Types section.
    linked_in_place: BTreeSet<TypeId>,
    /// Types a phrase in place has left something out of: an object with properties or constraints outside the
    /// rows that spell them out (a map's values, a member of `anyOf`, a tuple's item, a recursive property), a
    /// union (its members), a type named where it recurs. [`Describer::new`] links them.
    lossy: RefCell<BTreeSet<TypeId>>,
    /// The node [`Describer::rows`] spells out in rows below the one it is phrasing (the object of the property
    /// `usage`, through references, `null` and arrays), by address: its words in place need not say more.
    in_rows: RefCell<Option<*const Node>>,
    /// Per type, whether its node refers to another type.
    composite: Vec<bool>,
    /// Per type, the types whose schema holds it as a part at the same value (an `allOf` member, an `if` or
    /// `then`, ...): its section says so, since it reads alone (`other properties are accepted`) while the whole
    /// may reject what it accepts.
    part_of: Vec<Vec<(TypeId, bool)>>,
    /// A checker of the package's types, for a plain type package's examples (made on first use).
    engine: std::cell::OnceCell<crate::engine::Engine>,
    /// The types that hold others spelled out in place in the table being written ([`Describer::begin_table`]):
    /// one reached again in that table is a link.
    spelled: RefCell<BTreeSet<TypeId>>,
}

impl<'m> Describer<'m> {
    /// Decides which types get a section: the protocol's envelope, event union and events have theirs; the types
    /// the protocol's tables show in place need none, unless a type with a section refers to them or their words in
    /// place would leave something out ([`Describer::lossy`]; found by phrasing the protocol's tables, until no more
    /// are found); every other type has one in the Types section.
    fn new(m: &'m Model) -> Self {
        let mut linked = BTreeSet::new();
        loop {
            let d = Self::linking(m, linked.clone());
            let Some(p) = &m.protocol else { return d };
            protocol_view(&d, p);
            let lossy = d.lossy.take();
            if lossy.is_subset(&linked) {
                return d;
            }
            // Each round links one type more at least: as many rounds as types, at most.
            linked.extend(lossy);
        }
    }

    /// The sections, when the protocol's tables link the types `linked_in_place`.
    fn linking(m: &'m Model, linked_in_place: BTreeSet<TypeId>) -> Self {
        let mut anchors: Vec<Option<String>> = vec![None; m.types.len()];
        let mut sections = Anchors::new();
        let mut shown: BTreeSet<TypeId> = BTreeSet::new();
        if let Some(p) = &m.protocol {
            // (A hand-built model may name types it does not hold: they have no anchor.)
            let mut set = |id: TypeId, a: String| {
                if let Some(slot) = anchors.get_mut(id.0) {
                    *slot = Some(a);
                }
            };
            // The template's own sections for the envelope and the union.
            set(p.envelope, "envelope".into());
            set(p.union, "event-types".into());
            for e in &p.events {
                let a = sections.take("event-", &e.tag);
                sections.events.insert(e.tag.clone(), a.clone());
                set(e.ty, a);
            }
            for c in &p.categories {
                let a = sections.take("category-", &c.name);
                sections.categories.insert(c.name.clone(), a);
            }
            for f in &p.flows {
                let a = sections.take("flow-", &f.title);
                sections.flows.push(a);
            }
            let mut todo = vec![p.envelope];
            while let Some(id) = todo.pop() {
                // A linked type is not shown in place (unless it has a section of the protocol's already).
                let linked_out = linked_in_place.contains(&id) && anchors.get(id.0).is_some_and(Option::is_none);
                if !linked_out && shown.insert(id) {
                    m.ty(id).node.visit_refs(&mut |r| todo.push(r));
                }
            }
        }
        // A type shown in place whose own examples or title the tables cannot show gets a section too (its
        // examples were said nowhere; helper 98).
        let said_in_place =
            |id: &TypeId| shown.contains(id) && m.ty(*id).examples.is_empty() && m.own_title(*id).is_none();
        let mut sectioned: BTreeSet<TypeId> = (0..m.types.len())
            .map(TypeId)
            .filter(|id| !said_in_place(id) && anchors.get(id.0).is_some_and(Option::is_none))
            .collect();
        // Types shown in place that a sectioned type refers to get a section too, until nothing changes.
        let mut todo: Vec<TypeId> = sectioned.iter().copied().collect();
        while let Some(id) = todo.pop() {
            let mut refs = Vec::new();
            m.ty(id).node.visit_refs(&mut |r| refs.push(r));
            for r in refs {
                if anchors.get(r.0).is_some_and(Option::is_none) && sectioned.insert(r) {
                    todo.push(r);
                }
            }
        }
        let mut sectioned: Vec<TypeId> = sectioned.into_iter().collect();
        sectioned.sort_by(|a, b| m.ty(*a).names.base.cmp(&m.ty(*b).names.base));
        for id in &sectioned {
            if let Some(slot) = anchors.get_mut(id.0) {
                *slot = Some(sections.take("type-", &m.ty(*id).names.base));
            }
        }
        Describer {
            m,
            anchors,
            sections,
            sectioned,
            expanding: RefCell::default(),
            linked_in_place,
            lossy: RefCell::default(),
            in_rows: RefCell::default(),
            composite: m
                .types
                .iter()
                .map(|t| {
                    let mut refs = false;
                    t.node.visit(&mut |n: &Node| refs |= matches!(n.shape, Shape::Ref(_)));
                    refs
                })
                .collect(),
            spelled: RefCell::default(),
            part_of: parts(m),
            engine: std::cell::OnceCell::new(),
        }
    }

    /// Why type `id` rejects an example of a plain type package (empty when it accepts it, and for a protocol,
    /// whose loader refuses such examples).
    fn example_issue(&self, id: TypeId, x: &Value) -> String {
        if self.m.protocol.is_some() || self.m.types.is_empty() {
            return String::new();
        }
        let engine = self.engine.get_or_init(|| {
            crate::engine::Engine::for_type(self.m.clone(), TypeId(0), crate::engine::EngineOptions::default())
        });
        let Some(issue) = engine.check_value_as(id, x).into_iter().next() else {
            return String::new();
        };
        let at = if issue.pointer.is_empty() { "(root)" } else { issue.pointer.as_str() };
        format!("{at}: {} [{}]", issue.message, issue.rule)
    }

    /// Starts a table of the protocol's (the envelope's, an event's): nothing in it is spelled out yet.
    fn begin_table(&self) {
        self.spelled.borrow_mut().clear();
    }

    fn sectioned(&self) -> Vec<TypeId> {
        self.sectioned.clone()
    }

    /// A link to a type's section (its name in place when it has none).
    fn type_ref(&self, id: TypeId) -> Vec<Seg> {
        let t = self.m.ty(id);
        match self.anchors.get(id.0).cloned().flatten() {
            Some(a) => vec![link(t.names.base.clone(), a)],
            None => vec![lit(t.names.base.clone())],
        }
    }

    /// Property rows, depth first; in place (`linked` = `None`), a property whose value is an object is followed
    /// by that object's own rows (`usage.cost`), except for an object already being shown (a recursive type).
    /// An object whose rows would leave out its constraints besides properties, or one already being shown, is
    /// not spelled out in rows: its words in place say `object`, which is lossy, and links it.
    fn rows(&self, prefix: &str, fields: &[Field], linked: Option<()>, stack: &mut Vec<TypeId>, out: &mut Vec<Row>) {
        for f in fields {
            let path = row_path(prefix, &f.name);
            let nested = match linked {
                Some(()) => None,
                None => self.nested_object(&f.node).filter(|(id, o, _, _)| {
                    !stack.contains(id) && !unsaid_in_place(o) && self.spelled.borrow_mut().insert(*id)
                }),
            };
            *self.in_rows.borrow_mut() = nested.as_ref().map(|(_, _, _, n)| *n as *const Node);
            let p = self.phrase(&f.node, linked);
            *self.in_rows.borrow_mut() = None;
            let ty = if f.required { p.all() } else { p.optional() };
            let description = noted(f.annotations.title.as_deref(), f.description.as_deref(), &f.notes(), " ");
            out.push(Row { path: path.clone(), ty, description });
            if let Some((id, o, suffix, _)) = nested {
                stack.push(id);
                self.rows(&format!("{path}{suffix}."), &o.fields, linked, stack, out);
                stack.pop();
            }
        }
    }

    /// The object a property holds (through references, `null` and arrays), with the path suffix of its rows and
    /// the reference to it. An array of arrays has one `[]` a level (`grid[][].k`; it read `grid[].k`, an array
    /// of objects). A type the protocol's tables link is not spelled out.
    fn nested_object(&self, n: &'m Node) -> Option<(TypeId, &'m ObjectShape, String, &'m Node)> {
        match &n.shape {
            Shape::Ref(id) if self.linked_in_place.contains(id) => None,
            Shape::Ref(id) => match &self.m.ty(*id).node.shape {
                Shape::Object(o) => Some((*id, o, String::new(), n)),
                Shape::Ref(_) => self.nested_object(&self.m.ty(*id).node),
                _ => None,
            },
            Shape::Nullable(inner) => self.nested_object(inner),
            // Rows `a[].k` would say every item has `k`: after positions, not every item is the items' type.
            Shape::Array(a) if !a.prefix.is_empty() => None,
            Shape::Array(a) => a
                .items
                .as_deref()
                .and_then(|i| self.nested_object(i))
                .map(|(id, o, inner, n)| (id, o, format!("[]{inner}"), n)),
            _ => None,
        }
    }

    /// How a node reads in a type cell.
    fn phrase(&self, n: &Node, linked: Option<()>) -> Phrase {
        let m = self.m;
        match &n.shape {
            Shape::Ref(id) => {
                let anchored = self.anchors.get(id.0).is_some_and(Option::is_some);
                let linking = linked.is_some() || self.linked_in_place.contains(id);
                let recurs = self.expanding.borrow().contains(id);
                if (linking && anchored) || recurs {
                    if !anchored {
                        self.lossy.borrow_mut().insert(*id);
                    }
                    return Phrase { head: self.type_ref(*id), ..Phrase::default() };
                }
                let in_rows = *self.in_rows.borrow() == Some(n as *const Node);
                // A type that holds others is spelled out once a table: its words could double at every level
                // (a type with two properties of the next, sixteen levels deep, made a table of 196,607 rows).
                if linked.is_none()
                    && !in_rows
                    && self.composite.get(id.0).copied().unwrap_or(false)
                    && !self.spelled.borrow_mut().insert(*id)
                {
                    self.lossy.borrow_mut().insert(*id);
                    return Phrase { head: self.type_ref(*id), ..Phrase::default() };
                }
                // Inside itself (a map of itself too) it is named.
                self.expanding.borrow_mut().push(*id);
                let p = match &m.ty(*id).node.shape {
                    Shape::Object(o) => {
                        if !in_rows && (!o.fields.is_empty() || unsaid_in_place(o)) {
                            self.lossy.borrow_mut().insert(*id);
                        }
                        self.object_phrase(o, None)
                    }
                    Shape::Union(_) => {
                        // The event union's members are the Event Types section, which the envelope introduces.
                        if self.m.protocol.as_ref().is_none_or(|p| p.union != *id) {
                            self.lossy.borrow_mut().insert(*id);
                        }
                        Phrase { head: vec![text("object")], ..Phrase::default() }
                    }
                    _ => self.phrase(&m.ty(*id).node, linked),
                };
                self.expanding.borrow_mut().pop();
                p
            }
            Shape::Any => Phrase { head: vec![text("any value")], ..Phrase::default() },
            Shape::Never => {
                Phrase { head: vec![text("nothing")], tail: vec![text(" (no value is valid)")], values: None }
            }
            Shape::Null => Phrase { head: vec![text("null")], ..Phrase::default() },
            Shape::Boolean => Phrase { head: vec![text("boolean")], ..Phrase::default() },
            Shape::String(s) => {
                let mut parts: Vec<Vec<Seg>> = Vec::new();
                let length = match (s.min_length.filter(|n| *n > 0), s.max_length) {
                    (None, None) => None,
                    (Some(1), None) => Some("non-empty".to_string()),
                    (Some(a), None) => Some(format!("at least {}", counted(a, "character", "characters"))),
                    (None, Some(b)) => Some(format!("at most {}", counted(b, "character", "characters"))),
                    (Some(a), Some(b)) if a == b => Some(format!("exactly {}", counted(a, "character", "characters"))),
                    (Some(a), Some(b)) => Some(format!("{a} to {b} characters")),
                };
                parts.extend(length.map(|l| vec![text(l)]));
                if let Some(p) = &s.pattern {
                    parts.push(vec![text("matching "), lit(p.source.clone())]);
                }
                if let Some(p) = &s.strict_pattern {
                    parts.push(vec![text("with strict ids matches "), lit(p.source.clone())]);
                }
                Phrase { head: vec![text("string")], tail: parenthesized(parts), values: None }
            }
            Shape::Number(s) => {
                let word = if s.integer { "integer" } else { "number" };
                let mut parts: Vec<Vec<Seg>> = Vec::new();
                let lower = s.minimum.map(|b| ("≥", b)).or(s.exclusive_minimum.map(|b| (">", b)));
                let upper = s.maximum.map(|b| ("≤", b)).or(s.exclusive_maximum.map(|b| ("<", b)));
                // Both bounds, when the schema has both kinds of one side, are listed separately.
                let both_lower = s.minimum.is_some() && s.exclusive_minimum.is_some();
                let both_upper = s.maximum.is_some() && s.exclusive_maximum.is_some();
                match (lower, upper) {
                    (Some(("≥", a)), Some(("≤", b))) if !both_lower && !both_upper => {
                        parts.push(vec![text(format!("{} to {}", num(a), num(b)))])
                    }
                    _ => {
                        let mut bounds = Vec::new();
                        if let Some(a) = s.minimum {
                            bounds.push(format!("≥ {}", num(a)));
                        }
                        if let Some(a) = s.exclusive_minimum {
                            bounds.push(format!("> {}", num(a)));
                        }
                        if let Some(b) = s.maximum {
                            bounds.push(format!("≤ {}", num(b)));
                        }
                        if let Some(b) = s.exclusive_maximum {
                            bounds.push(format!("< {}", num(b)));
                        }
                        if !bounds.is_empty() {
                            parts.push(vec![text(bounds.join(" and "))]);
                        }
                    }
                }
                if let Some(d) = s.multiple_of {
                    let fails =
                        inexact_multiple(s).map(|x| format!(" by double division, so {x} fails")).unwrap_or_default();
                    parts.push(vec![text(format!("a multiple of {}{fails}", num(d)))]);
                }
                Phrase { head: vec![text(word)], tail: parenthesized(parts), values: None }
            }
            Shape::Const(v) => {
                Phrase { head: vec![lit(v.to_string())], tail: Vec::new(), values: Some(kind_word(&[v])) }
            }
            Shape::Enum(vs) => {
                let mut head = Vec::new();
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        head.push(text(" | "));
                    }
                    head.push(lit(v.to_string()));
                }
                Phrase { head, tail: Vec::new(), values: Some(kind_word(&vs.iter().collect::<Vec<_>>())) }
            }
            Shape::Array(a) => {
                // The array's own constraints right after `array`, so they cannot be read as its items' (`array
                // of string (non-empty)` said the same of a non-empty array and of non-empty strings).
                let mut parts: Vec<Vec<Seg>> = Vec::new();
                let count = match (a.min_items.filter(|n| *n > 0), a.max_items) {
                    (None, None) => None,
                    (Some(1), None) => Some("non-empty".to_string()),
                    (Some(x), None) => Some(format!("at least {}", counted(x, "item", "items"))),
                    (None, Some(y)) => Some(format!("at most {}", counted(y, "item", "items"))),
                    (Some(x), Some(y)) if x == y => Some(format!("exactly {}", counted(x, "item", "items"))),
                    (Some(x), Some(y)) => Some(format!("{x} to {y} items")),
                };
                parts.extend(count.map(|c| vec![text(c)]));
                if a.unique {
                    parts.push(vec![text("unique items")]);
                }
                if let Some(c) = &a.contains {
                    let count = match (c.min, c.max) {
                        (0, None) => None,
                        (1, None) => Some("some item".to_string()),
                        (x, None) => Some(format!("at least {}", counted(x, "item", "items"))),
                        (0, Some(y)) => Some(format!("at most {}", counted(y, "item", "items"))),
                        (x, Some(y)) if x == y => Some(format!("exactly {}", counted(x, "item", "items"))),
                        (x, Some(y)) => Some(format!("{x} to {y} items")),
                    };
                    if let Some(count) = count {
                        let mut part = vec![text(format!("{count} matching "))];
                        part.extend(self.phrase(&c.node, linked).all());
                        parts.push(part);
                    }
                }
                let mut tail = parenthesized(parts);
                if !a.prefix.is_empty() {
                    // Each position by its number: `array of A, B` read as a pair, where a shorter array is
                    // valid too.
                    tail.push(text(" of: "));
                    for (i, p) in a.prefix.iter().enumerate() {
                        if i > 0 {
                            tail.push(text(", "));
                        }
                        tail.push(text(format!("[{}] ", i + 1)));
                        tail.extend(self.part(p, linked));
                    }
                    // The positions `minItems` does not require, by number.
                    let first = a.min_items.unwrap_or(0).saturating_add(1);
                    let optional: Vec<String> = (first..=a.prefix.len() as u64).map(|k| format!("[{k}]")).collect();
                    match optional.len() {
                        0 => {}
                        1 if a.prefix.len() == 1 => tail.push(text(" (only if present)")),
                        n if n == a.prefix.len() => tail.push(text(" (each only if present)")),
                        _ => tail.push(text(format!(" ({} only if present)", optional.join(", ")))),
                    }
                    match &a.items {
                        Some(it) if matches!(it.shape, Shape::Never) => tail.push(text(", then no more items")),
                        Some(it) => {
                            tail.push(text(", then "));
                            tail.extend(self.part(it, linked));
                        }
                        None => tail.push(text(", then anything")),
                    }
                } else if let Some(it) = &a.items {
                    tail.push(text(" of "));
                    tail.extend(self.part(it, linked));
                }
                Phrase { head: vec![text("array")], tail, values: None }
            }
            Shape::Object(o) => self.object_phrase(o, linked),
            Shape::Union(u) => Phrase {
                head: vec![text("object")],
                tail: vec![text(" (union on "), lit(u.discriminator.clone()), text(")")],
                values: None,
            },
            Shape::Nullable(inner) => {
                let mut p = self.phrase(inner, linked);
                // A tuple's commas would run into `or null`.
                if at_top(&p.clone().all(), ", ") {
                    p = Phrase { head: group(p.all()), ..Phrase::default() };
                }
                p.tail.push(text(" or null"));
                p
            }
            Shape::Kinds(ms) => self.kinds(ms, linked),
            Shape::AllOf(ms) => self.joined(ms, linked, "all of"),
            Shape::AnyOf(ms) => self.joined(ms, linked, "any of"),
            Shape::OneOf(ms) => self.joined(ms, linked, "exactly one of"),
            Shape::Not(inner) => self.joined(std::slice::from_ref(inner), linked, "not"),
            Shape::Cond { cond, then, otherwise } => {
                let mut tail = vec![text(" (")];
                tail.extend(self.phrase(cond, linked).all());
                tail.push(text(")"));
                if let Some(t) = then {
                    tail.push(text(" then ("));
                    tail.extend(self.phrase(t, linked).all());
                    tail.push(text(")"));
                }
                if let Some(e) = otherwise {
                    tail.push(text(" else ("));
                    tail.extend(self.phrase(e, linked).all());
                    tail.push(text(")"));
                }
                Phrase { head: vec![text("if")], tail, values: None }
            }
            Shape::Unevaluated { inner, rest, items } => {
                let Phrase { head, tail: mut after, values } = self.phrase(inner, linked);
                // Which are the others: those no part the value passes evaluates (`contains` evaluates items too:
                // `then anything (some item matching integer) (no other items)` hid that every later item must be
                // an integer; and a part the value fails evaluates nothing).
                let what = match items {
                    true => "items but those evaluated by a position, `items` or `contains` of",
                    false => "properties but those evaluated by",
                };
                match &rest.shape {
                    Shape::Never => after.push(text(format!(" (no {what} the parts above the value passes)"))),
                    _ => {
                        let what = match items {
                            true => "items not evaluated by a position, `items` or `contains` of",
                            false => "properties not evaluated by",
                        };
                        after.push(text(format!(" ({what} the parts above the value passes: ")));
                        after.extend(self.phrase(rest, linked).all());
                        after.push(text(")"));
                    }
                }
                Phrase { head, tail: after, values }
            }
            Shape::Dependent { property, then } => {
                let mut tail = vec![text(" then (")];
                tail.extend(self.phrase(then, linked).all());
                tail.push(text(")"));
                Phrase { head: vec![text("if it has "), lit(property.clone())], tail, values: None }
            }
        }
    }

    /// A node's words as a part of another's (an array's items, a map's values, a tuple's position), in
    /// parentheses when they read with an "or" or commas of their own: `array of (string or null)`, which
    /// unwrapped read as a nullable array.
    fn part(&self, n: &Node, linked: Option<()>) -> Vec<Seg> {
        let all = self.phrase(n, linked).all();
        // A tuple reads with commas of its own: as a tuple's position it ran into the next one.
        match at_top(&all, " or ") || at_top(&all, ", ") {
            true => group(all),
            false => all,
        }
    }

    /// Parts after a keyword: `all of (A; B)`, `not (A)`; an optional property's `?` follows the keyword.
    fn joined(&self, ms: &[Node], linked: Option<()>, keyword: &str) -> Phrase {
        let mut tail = vec![text(" (")];
        for (i, n) in ms.iter().enumerate() {
            if i > 0 {
                tail.push(text("; "));
            }
            tail.extend(self.phrase(n, linked).all());
        }
        tail.push(text(")"));
        Phrase { head: vec![text(keyword)], tail, values: None }
    }

    /// The kinds a value may be, `null or string or array (non-empty) of integer`; an optional property's `?`
    /// follows the first (`null? or …`: after the first word before the first parenthesis, it marked a tuple's
    /// position or a count). A kind that reads with commas of its own (a tuple) is in parentheses.
    fn kinds(&self, ms: &[Node], linked: Option<()>) -> Phrase {
        let mut out = Phrase::default();
        for (i, n) in ms.iter().enumerate() {
            let p = self.phrase(n, linked);
            let p = match at_top(&p.clone().all(), ", ") {
                true => Phrase { head: group(p.all()), ..Phrase::default() },
                false => p,
            };
            if i == 0 {
                out = Phrase { values: None, ..p };
            } else {
                out.tail.push(text(" or "));
                out.tail.extend(p.all());
            }
        }
        out
    }

    /// An object in a type cell: `object`, or a map `map of string to X`.
    fn object_phrase(&self, o: &ObjectShape, linked: Option<()>) -> Phrase {
        match &o.additional {
            Additional::Schema(v) if o.fields.is_empty() && o.pattern_properties.is_empty() => {
                let mut tail = vec![text(" of string to ")];
                tail.extend(self.part(v, linked));
                Phrase { head: vec![text("map")], tail, values: None }
            }
            // The reference says once that an object accepts only the properties listed for it: an open one
            // says so where it is named.
            Additional::Open if o.fields.is_empty() && o.pattern_properties.is_empty() => {
                Phrase { head: vec![text("object")], tail: vec![text(" (any properties)")], values: None }
            }
            // What it takes besides its listed properties, said in place (a bare `object` read as closed: it
            // left out the patterns, the other properties' type and the stripping).
            _ => {
                let mut parts: Vec<Vec<Seg>> = Vec::new();
                for (p, n) in &o.pattern_properties {
                    let mut part = vec![text("properties matching "), lit(p.source.clone()), text(": ")];
                    part.extend(self.phrase(n, linked).all());
                    parts.push(part);
                }
                match &o.additional {
                    Additional::Closed if o.fields.is_empty() && o.pattern_properties.is_empty() => {
                        parts.push(vec![text("no properties")])
                    }
                    Additional::Open => parts.push(vec![text("other properties accepted")]),
                    Additional::Strip => parts.push(vec![text("other properties accepted and dropped")]),
                    Additional::Schema(v) => {
                        let mut part = vec![text("other properties: ")];
                        part.extend(self.phrase(v, linked).all());
                        parts.push(part);
                    }
                    Additional::Closed => {}
                }
                Phrase { head: vec![text("object")], tail: parenthesized(parts), values: None }
            }
        }
    }

    /// What an object type is, for its section.
    fn object_kind(&self, o: &ObjectShape) -> Vec<Seg> {
        match &o.additional {
            Additional::Schema(v) if o.fields.is_empty() && o.pattern_properties.is_empty() => {
                self.object_phrase(o, Some(())).all()
            }
            Additional::Schema(v) => {
                let mut k = vec![text("object; other properties: ")];
                k.extend(self.phrase(v, Some(())).all());
                k
            }
            Additional::Closed => vec![text("object; other properties are rejected")],
            Additional::Open => vec![text("object; other properties are accepted and kept")],
            Additional::Strip => vec![
                text("object; other properties are accepted, and dropped from parsed values ("),
                lit("x-unknown-keys: strip"),
                text(")"),
            ],
        }
    }

    /// The constraints of an object besides its properties and what becomes of its other properties, one bullet
    /// each (its removed properties are the Removed section's, for an event, and [`type_view`]'s).
    fn object_notes(&self, o: &ObjectShape, linked: Option<()>) -> Vec<Vec<Seg>> {
        let mut out = Vec::new();
        if !o.required_only.is_empty() {
            out.push(codes("Must also have ", &o.required_only, ""));
        }
        for (p, n) in &o.pattern_properties {
            let mut s = vec![text("Properties whose name matches "), lit(p.source.clone()), text(": ")];
            s.extend(self.phrase(n, linked).all());
            out.push(s);
        }
        if let Some(n) = &o.property_names {
            let mut s = vec![text("Property names: ")];
            s.extend(self.names_phrase(n, linked));
            out.push(s);
        }
        match (o.min_properties.filter(|n| *n > 0), o.max_properties) {
            (Some(a), Some(b)) if a == b => {
                out.push(vec![text(format!("Exactly {}", counted(a, "property", "properties")))])
            }
            (Some(a), Some(b)) => out.push(vec![text(format!("{a} to {}", counted(b, "property", "properties")))]),
            (Some(a), None) => out.push(vec![text(format!("At least {}", counted(a, "property", "properties")))]),
            (None, Some(b)) => out.push(vec![text(format!("At most {}", counted(b, "property", "properties")))]),
            (None, None) => {}
        }
        for (k, deps) in o.dependent_required.iter().filter(|(_, deps)| !deps.is_empty()) {
            let mut s = vec![text("When "), lit(k.clone()), text(" is present, so must be ")];
            s.extend(codes("", deps, "").into_iter().skip(1));
            out.push(s);
        }
        out
    }

    /// What `propertyNames` allows, as strings: a name is one, so what the schema says of other kinds does not
    /// apply (`null or boolean or … or string (at most 3 characters) or …` for `{maxLength: 3}`), and a schema that
    /// allows no string allows no property (`integer` read as if names could be numbers).
    fn names_phrase(&self, n: &Node, linked: Option<()>) -> Vec<Seg> {
        let none = || vec![text("none (a name is a string, and no string is allowed: the object has no properties)")];
        let (r, _) = self.m.resolve_node(n);
        match &r.shape {
            Shape::Kinds(ms) => {
                match ms.iter().find(|k| {
                    matches!(self.m.resolve(&k.shape), Shape::String(_) | Shape::Const(Value::String(_)))
                        || matches!(self.m.resolve(&k.shape), Shape::Enum(vs) if vs.iter().any(Value::is_string))
                }) {
                    Some(k) => self.names_phrase(k, linked),
                    None => none(),
                }
            }
            Shape::Const(v) if !v.is_string() => none(),
            Shape::Enum(vs) if !vs.iter().all(Value::is_string) => {
                let mut out = Vec::new();
                for v in vs.iter().filter(|v| v.is_string()) {
                    if !out.is_empty() {
                        out.push(text(" | "));
                    }
                    out.push(lit(v.to_string()));
                }
                if out.is_empty() {
                    none()
                } else {
                    out
                }
            }
            Shape::Null | Shape::Boolean | Shape::Number(_) | Shape::Array(_) | Shape::Object(_) | Shape::Union(_) => {
                none()
            }
            Shape::Never => none(),
            _ => self.phrase(n, linked).all(),
        }
    }

    /// A sentence on the other properties of an object that does not reject them (nothing for a closed object).
    fn openness(&self, s: &Shape, linked: Option<()>) -> Vec<Seg> {
        match s {
            Shape::Object(o) => match &o.additional {
                Additional::Closed => Vec::new(),
                Additional::Open => vec![text("Other properties are accepted and kept.")],
                Additional::Strip => vec![
                    text("Other properties are accepted, and dropped from parsed values ("),
                    lit("x-unknown-keys: strip"),
                    text(")."),
                ],
                Additional::Schema(v) => {
                    let mut out = vec![text("Other properties are accepted when their value is: ")];
                    out.extend(self.phrase(v, linked).all());
                    out.push(text("."));
                    out
                }
            },
            _ => Vec::new(),
        }
    }
}

/// Whether an object has constraints its words and rows in place do not say: properties `required` names
/// without declaring them, `propertyNames`, a bound on the number of properties, `dependentRequired`.
fn unsaid_in_place(o: &ObjectShape) -> bool {
    !o.required_only.is_empty()
        || o.property_names.is_some()
        || o.min_properties.is_some_and(|n| n > 0)
        || o.max_properties.is_some()
        || o.dependent_required.iter().any(|(_, deps)| !deps.is_empty())
}

/// Per type, the types that hold it as a part of their schema at the same value: reached from the other's node
/// through a composition (`allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`,
/// `unevaluated*`), not through a property or an item. With each, whether the whole may reject what the part
/// accepts: not when the part is reached through `anyOf` alternatives (and kinds) alone, since a value one
/// alternative accepts the `anyOf` accepts (helper 78: every member of MCP's `anyOf`s was told otherwise).
fn parts(m: &Model) -> Vec<Vec<(TypeId, bool)>> {
    fn walk(n: &Node, composed: bool, narrows: bool, out: &mut Vec<(TypeId, bool)>) {
        match &n.shape {
            Shape::Ref(id) if composed => out.push((*id, narrows)),
            Shape::Kinds(ms) => ms.iter().for_each(|x| walk(x, composed, narrows, out)),
            Shape::Nullable(x) => walk(x, composed, narrows, out),
            Shape::AnyOf(ms) => ms.iter().for_each(|x| walk(x, true, narrows, out)),
            Shape::AllOf(ms) | Shape::OneOf(ms) => ms.iter().for_each(|x| walk(x, true, true, out)),
            Shape::Not(x) | Shape::Dependent { then: x, .. } => walk(x, true, true, out),
            Shape::Unevaluated { inner, .. } => walk(inner, true, true, out),
            Shape::Cond { cond, then, otherwise } => {
                for x in std::iter::once(&**cond).chain(then.as_deref()).chain(otherwise.as_deref()) {
                    walk(x, true, true, out);
                }
            }
            _ => {}
        }
    }
    let mut out: Vec<Vec<(TypeId, bool)>> = vec![Vec::new(); m.types.len()];
    for (i, t) in m.types.iter().enumerate() {
        let mut found = Vec::new();
        walk(&t.node, false, false, &mut found);
        for (id, narrows) in found {
            let Some(o) = out.get_mut(id.0) else { continue };
            match o.iter_mut().find(|(w, _)| *w == TypeId(i)) {
                Some(seen) => seen.1 |= narrows,
                None => o.push((TypeId(i), narrows)),
            }
        }
    }
    out
}

/// Whether `needle` stands in the text of `all` outside every parenthesis.
fn at_top(all: &[Seg], needle: &str) -> bool {
    let mut depth = 0i32;
    for s in all.iter().filter(|s| s.kind == "text") {
        let t = s.text.as_str();
        for (i, c) in t.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ if depth == 0 && t[i..].starts_with(needle) => return true,
                _ => {}
            }
        }
    }
    false
}

/// `all` in parentheses.
fn group(all: Vec<Seg>) -> Vec<Seg> {
    let mut v = vec![text("(")];
    v.extend(all);
    v.push(text(")"));
    v
}

/// A property's row path below `prefix` (`usage.` for the rows of `usage`): its name after the dot, or, when the
/// name would read as a path of its own or not at all (a `.`, `[`, `]`, `"`, a space or a control character in it,
/// or no character), as a JSON string in brackets: `usage["a.b"]`, `[""]` (a property `meta.a` read as `a` inside
/// `meta`).
fn row_path(prefix: &str, name: &str) -> String {
    let plain = !name.is_empty() && !name.chars().any(|c| matches!(c, '.' | '[' | ']' | '"' | ' ') || unseen(c));
    if plain {
        return format!("{prefix}{name}");
    }
    let mut quoted = String::from("\"");
    for c in name.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if unseen(c) => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    quoted.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    format!("{}[{quoted}]", prefix.strip_suffix('.').unwrap_or(prefix))
}

/// Whether a character of a name cannot be seen as itself: a control, a space other than U+0020, a line or
/// paragraph separator, a zero-width or direction mark (written as a JSON `\u` escape in a row path).
fn unseen(c: char) -> bool {
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(c, '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}')
        || matches!(c, '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// `prefix` then the names as code, comma-separated, then `suffix`.
fn codes(prefix: &str, names: &[String], suffix: &str) -> Vec<Seg> {
    let mut s = vec![text(prefix)];
    s.extend(joined(names, ", "));
    if !suffix.is_empty() {
        s.push(text(suffix));
    }
    s
}

/// `a`, `b` and `c` as literals, the last joined by `last` (`", "` or `" or "`).
fn joined(names: &[String], last: &str) -> Vec<Seg> {
    let mut s = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            s.push(text(if i + 1 == names.len() { last } else { ", " }));
        }
        s.push(lit(n.clone()));
    }
    s
}

/// ` (a; b)`, or nothing.
fn parenthesized(parts: Vec<Vec<Seg>>) -> Vec<Seg> {
    if parts.is_empty() {
        return Vec::new();
    }
    let mut out = vec![text(" (")];
    for (i, p) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push(text("; "));
        }
        out.extend(p);
    }
    out.push(text(")"));
    out
}

/// The word for the JSON kind of some values (`string` when all are strings).
fn kind_word(vs: &[&Value]) -> &'static str {
    let k = |v: &Value| match v {
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::Null => "null",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    match vs.first() {
        Some(f) if vs.iter().all(|v| k(v) == k(f)) => k(f),
        _ => "value",
    }
}

/// A number for prose: whole numbers without a fraction, `2^53-1` for the largest integer JavaScript represents
/// exactly, other numbers as JSON writes them.
/// A decimal multiple of a fractional `multipleOf` (as its decimal text reads; from the lower bound on, 2,000 of
/// them at most) that the number's bounds allow and the checkers refuse, since they divide doubles
/// ([`crate::engine::is_multiple`]): `0.3` for `0.1`; `1.2` for `0.1` between 1 and 2. `None` for an integer (no
/// integer fails a fraction's division: helper 90) or when none of those fails. A reader of "a multiple of 0.1"
/// expected `0.3` to pass (helper 85).
fn inexact_multiple(s: &NumberShape) -> Option<String> {
    let d = s.multiple_of?;
    // Rust writes a double's shortest decimal digits without an exponent (`1e-7` as `0.0000001`).
    let text = d.to_string();
    let (whole, frac) = text.split_once('.')?;
    if s.integer || d <= 0.0 {
        return None;
    }
    let digits: u128 = format!("{whole}{frac}").parse().ok()?;
    let lower = [s.minimum, s.exclusive_minimum].into_iter().flatten().fold(0.0f64, f64::max);
    let first = ((lower / d).floor().max(1.0) as u128).min(u128::from(u64::MAX));
    let within = |v: f64| {
        s.minimum.is_none_or(|m| v >= m)
            && s.exclusive_minimum.is_none_or(|m| v > m)
            && s.maximum.is_none_or(|m| v <= m)
            && s.exclusive_maximum.is_none_or(|m| v < m)
    };
    (first..first + 2_000).find_map(|k| {
        let all = format!("{:0>width$}", digits.checked_mul(k)?, width = frac.len() + 1);
        let (w, f) = all.split_at(all.len() - frac.len());
        let x = format!("{w}.{f}");
        let x = x.trim_end_matches('0').trim_end_matches('.').to_string();
        let v: f64 = x.parse().ok()?;
        (within(v) && !crate::engine::is_multiple(v, d)).then_some(x)
    })
}

fn num(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e16 {
        bound(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or_else(|| f.to_string(), |n| n.to_string())
    }
}

/// The rules a checker can report for this package, in catalogue order: the line rules, and every rule one of its
/// types or its protocol can break.
pub(crate) fn produced_rules(m: &Model) -> Vec<Rule> {
    let mut set: BTreeSet<Rule> = [Rule::MalformedJson, Rule::InvalidUtf8, Rule::BlankLine, Rule::TooDeep].into();
    for t in &m.types {
        t.node.visit(&mut |n: &Node| node_rules(&n.shape, &mut set));
    }
    if let Some(p) = &m.protocol {
        for e in &p.events {
            for rule in p.role_rules(e) {
                match rule {
                    RoleRule::Event { allowed } if !p.roles.iter().all(|r| allowed.contains(r)) => {
                        set.insert(Rule::RoleEvent);
                    }
                    RoleRule::EnvelopeField { allowed, .. } | RoleRule::EventField { allowed, .. }
                        if !p.roles.iter().all(|r| allowed.contains(r)) =>
                    {
                        set.insert(Rule::RoleField);
                    }
                    _ => {}
                }
            }
        }
    }
    Rule::ALL.iter().copied().filter(|r| set.contains(r)).collect()
}

/// The rules one node can break itself (not counting the nodes inside it).
fn node_rules(s: &Shape, set: &mut BTreeSet<Rule>) {
    let mut add = |r: Rule| {
        set.insert(r);
    };
    match s {
        Shape::Any
        | Shape::Ref(_)
        | Shape::Nullable(_)
        | Shape::AllOf(_)
        | Shape::Cond { .. }
        | Shape::Dependent { .. } => {}
        Shape::Unevaluated { rest, items, .. } => {
            if matches!(rest.shape, Shape::Never) {
                add(if *items { Rule::Never } else { Rule::AdditionalProperty });
            }
        }
        Shape::Never => add(Rule::Never),
        Shape::Null | Shape::Boolean | Shape::Kinds(_) => add(Rule::Type),
        Shape::String(st) => {
            add(Rule::Type);
            if st.min_length.is_some_and(|n| n > 0) {
                add(Rule::MinLength);
            }
            if st.max_length.is_some() {
                add(Rule::MaxLength);
            }
            if st.pattern.is_some() {
                add(Rule::Pattern);
            }
            if st.strict_pattern.is_some() {
                add(Rule::StrictId);
            }
        }
        Shape::Number(n) => {
            add(Rule::Type);
            let bounds = [
                (n.minimum, Rule::Minimum),
                (n.exclusive_minimum, Rule::ExclusiveMinimum),
                (n.maximum, Rule::Maximum),
                (n.exclusive_maximum, Rule::ExclusiveMaximum),
                (n.multiple_of, Rule::MultipleOf),
            ];
            for (b, r) in bounds {
                if b.is_some() {
                    add(r);
                }
            }
        }
        Shape::Const(_) => add(Rule::Const),
        Shape::Enum(vs) => {
            if vs.iter().all(Value::is_string) {
                add(Rule::Type);
            }
            add(Rule::Enum);
        }
        Shape::Array(a) => {
            add(Rule::Type);
            if a.min_items.is_some_and(|n| n > 0) {
                add(Rule::MinItems);
            }
            if a.max_items.is_some() {
                add(Rule::MaxItems);
            }
            if a.unique {
                add(Rule::UniqueItems);
            }
            if a.contains.as_ref().is_some_and(|c| c.min > 0 || c.max.is_some()) {
                add(Rule::Contains);
            }
        }
        Shape::Object(o) => {
            add(Rule::Type);
            if o.fields.iter().any(|f| f.required) || !o.required_only.is_empty() {
                add(Rule::Required);
            }
            if o.additional == Additional::Closed {
                add(Rule::AdditionalProperty);
                if !o.removed.is_empty() {
                    add(Rule::RemovedProperty);
                }
            }
            if o.property_names.is_some() {
                add(Rule::PropertyNames);
            }
            if o.min_properties.is_some_and(|n| n > 0) {
                add(Rule::MinProperties);
            }
            if o.max_properties.is_some() {
                add(Rule::MaxProperties);
            }
            if !o.dependent_required.is_empty() {
                add(Rule::DependentRequired);
            }
        }
        Shape::Union(u) => {
            add(Rule::Type);
            add(Rule::Required);
            if !u.removed.is_empty() {
                add(Rule::RemovedEvent);
            }
            add(if u.events { Rule::UnknownEvent } else { Rule::UnknownVariant });
        }
        Shape::AnyOf(_) => add(Rule::AnyOf),
        Shape::OneOf(_) => add(Rule::OneOf),
        Shape::Not(_) => add(Rule::Not),
    }
}

/// An integer bound; the largest integer JavaScript represents exactly is written `2^53-1`.
fn bound(n: i64) -> String {
    const MAX_SAFE: i64 = (1 << 53) - 1;
    match n {
        MAX_SAFE => "2^53-1".into(),
        n if n == -MAX_SAFE => "-(2^53-1)".into(),
        n => n.to_string(),
    }
}

/// An example as JSON: on one line (`{ "t": "text", ... }`) when short, pretty-printed otherwise.
fn example(v: &Value) -> String {
    let one = one_line(v);
    if one.chars().count() <= ONE_LINE_EXAMPLE {
        one
    } else {
        serde_json::to_string_pretty(v).unwrap_or(one)
    }
}

fn one_line(v: &Value) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Object(m) => {
            let parts: Vec<String> =
                m.iter().map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), one_line(v))).collect();
            format!("{{ {} }}", parts.join(", "))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(one_line).collect::<Vec<_>>().join(", ")),
        v => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name that would read as a path, or as nothing, is written as a JSON string in brackets.
    #[test]
    fn row_paths_say_which_property_they_are() {
        assert_eq!(row_path("", "text"), "text");
        assert_eq!(row_path("usage.", "cost"), "usage.cost");
        assert_eq!(row_path("", "meta.a"), r#"["meta.a"]"#);
        assert_eq!(row_path("meta.", "a"), "meta.a");
        assert_eq!(row_path("grid[][].", "a b"), r#"grid[][]["a b"]"#);
        assert_eq!(row_path("", ""), r#"[""]"#);
        assert_eq!(row_path("x.", "t\tab"), r#"x["t\u0009ab"]"#);
        assert_eq!(row_path("", "a\u{2028}\u{200B}b"), r#"["a\u2028\u200bb"]"#);
        assert_eq!(row_path("", "\u{1F600}"), "\u{1F600}");
        assert_eq!(row_path("x.", "q\"[0]"), r#"x["q\"[0]"]"#);
    }

    #[test]
    fn cell_keeps_rows_on_one_line() {
        assert_eq!(cell("a | b\nc\r\nd\u{2028}e\u{2029}f\rg".into()), "a \\| b<br>c<br>d<br>e<br>f<br>g");
        assert_eq!(cell("`x` */".into()), "`x` */");
    }

    #[test]
    fn annotation_notes_stay_out_of_the_authors_markup() {
        let notes = ["Default: `1`.".to_string()];
        // An unpaired backtick in a title paired with the notes' first one.
        assert_eq!(noted(Some("A `b"), None, &notes, " "), "A \\`b Default: `1`.");
        // Paired spans are left as written.
        assert_eq!(noted(None, Some("use `a` and ``b``"), &notes, " "), "use `a` and ``b`` Default: `1`.");
        // An open fence is closed before the notes in a section (they were rendered as code).
        let text = noted(None, Some("x\n```\ncode"), &notes, "\n\n");
        let (before, after) = text.split_once("Default:").expect("notes");
        assert!(before.trim_end().ends_with("```") && after == " `1`.", "{text}");
        assert_eq!(noted(Some("T"), Some("D"), &[], " "), "T — D");
    }

    #[test]
    fn code_spans_survive_backticks_and_pipes() {
        assert_eq!(code("ev.t".into()), "`ev.t`");
        assert_eq!(code("a`b".into()), "``a`b``");
        assert_eq!(code("`x".into()), "`` `x ``");
        assert_eq!(code("a|b\nc".into()), "`a\\|b\\nc`");
        assert_eq!(code("a\r\nb\u{2028}c".into()), "`a\\r\\nb\\u{2028}c`");
        // Empty is said in words: a span of one space read as the literal " ".
        assert_eq!(code(String::new()), "*(empty)*");
        // Outside a table a `|` is not escaped (the escape showed in a heading's code span).
        assert_eq!(span("a|b".into()), "`a|b`");
        // A reader strips one space from each end when both have one: padded, the literal keeps its spaces.
        assert_eq!(code(" spaced ".into()), "`  spaced  `");
        assert_eq!(code(" `x` ".into()), "``  `x`  ``");
        assert_eq!(code(" x".into()), "` x`");
        assert_eq!(code("  ".into()), "`  `");
        // A terminal escape or a bidirectional override in a name is shown, not obeyed.
        assert_eq!(code("a\u{1b}[31mb\u{202E}c".into()), "`a\\u{001B}[31mb\\u{202E}c`");
    }

    /// A description cannot open a code block or an HTML block that runs past it: an unclosed fence is closed at
    /// its end, a line starting with `<` is escaped; closed fences, indented lines and inline markup stay.
    #[test]
    fn a_fractional_multiple_names_a_multiple_the_checkers_refuse() {
        let of = |d: f64| NumberShape { multiple_of: Some(d), ..NumberShape::default() };
        assert_eq!(inexact_multiple(&of(0.1)).as_deref(), Some("0.3"));
        assert_eq!(inexact_multiple(&of(0.5)), None);
        assert_eq!(inexact_multiple(&of(2.0)), None);
        // Within the bounds, and none for an integer (helper 90).
        let bounded = NumberShape { minimum: Some(1.0), maximum: Some(2.0), ..of(0.1) };
        let x: f64 = inexact_multiple(&bounded).expect("one in [1, 2]").parse().expect("number");
        assert!((1.0..=2.0).contains(&x) && !crate::engine::is_multiple(x, 0.1), "{x}");
        assert_eq!(inexact_multiple(&NumberShape { integer: true, ..of(0.1) }), None);
        assert_eq!(inexact_multiple(&NumberShape { maximum: Some(0.2), ..of(0.1) }), None);
        for d in [0.01, 1e-7, 0.3, 0.7] {
            let x = inexact_multiple(&of(d)).unwrap_or_else(|| panic!("{d} has one"));
            assert!(!crate::engine::is_multiple(x.parse().expect("number"), d), "{d}: {x}");
        }
    }

    #[test]
    fn prose_cannot_reach_past_itself() {
        assert_eq!(prose("Example:\n```\n{\"a\": 1}".into()), "Example:\n```\n{\"a\": 1}\n```");
        assert_eq!(prose("x\n````json\n```\n````\nafter".into()), "x\n````json\n```\n````\nafter");
        assert_eq!(prose("~~~\nno end".into()), "~~~\nno end\n~~~");
        assert_eq!(prose("<!-- hidden\n  <div>".into()), "\\<!-- hidden\n  \\<div>");
        assert_eq!(prose("a <b>bold</b> and `<x>`".into()), "a <b>bold</b> and `<x>`");
        assert_eq!(prose("```\n<!-- in code -->\n```".into()), "```\n<!-- in code -->\n```");
        assert_eq!(prose("    ```indented".into()), "    ```indented");
        assert_eq!(prose("``` `a` not a fence".into()), "``` `a` not a fence");
        // A bare CR ends a line for markdown readers; `<` after block quote and list markers opens a block too.
        assert_eq!(prose("A note.\r<!-- x".into()), "A note.\n\\<!-- x");
        assert_eq!(prose("A note.\r\n```text\ropen".into()), "A note.\n```text\nopen\n```");
        assert_eq!(prose("a\n> <!-- x\n- <!-- y\n>> 2. <z>".into()), "a\n> \\<!-- x\n- \\<!-- y\n>> 2. \\<z>");
        assert_eq!(prose("a\n-<b>\n10 <c>\n1234567890. <d>".into()), "a\n-<b>\n10 <c>\n1234567890. <d>");
        assert_eq!(prose("a\n-\t<!-- x\n>\t1)\t<y>".into()), "a\n-\t\\<!-- x\n>\t1)\t\\<y>");
        assert_eq!(line("Realistic\rFlow\r\n\n<!-- x".into()), "Realistic Flow <!-- x");
        // Raw-text elements read the rest of the page as their text: escaped outside code spans and fences.
        assert_eq!(prose("a <TextArea> b `<textarea>` <b>".into()), "a \\<TextArea> b `<textarea>` <b>");
        assert_eq!(prose("<script>x\n```\n<script>\n```".into()), "\\<script>x\n```\n<script>\n```");
        assert_eq!(prose("<textareas> \\<title> <title-x>".into()), "\\<textareas> \\<title> <title-x>");
        assert_eq!(cell("a|<plaintext>".into()), "a\\|\\<plaintext>");
        assert_eq!(line("T <style>".into()), "T \\<style>");
        // Headings of a description's own would enter the reference's outline: escaped, in fences kept.
        assert_eq!(
            prose("Para\n## Injected\n#tag and ####### seven".into()),
            "Para\n\\## Injected\n#tag and ####### seven"
        );
        assert_eq!(prose("  # a\n```\n# code\n```".into()), "  \\# a\n```\n# code\n```");
        assert_eq!(prose("Title\n===\n\n---\nx\n- - -\ny\n--- ".into()), "Title\n\\===\n\n---\nx\n- - -\ny\n\\--- ");
        // Control characters are shown, not written (helper 90: an ESC in `x-removed`'s `why`).
        assert_eq!(prose("a\u{1b}[31mb\u{0}".into()), "a\\u{001B}[31mb\\u{0000}");
        assert_eq!(cell("a\u{85}\tb".into()), "a\\u{0085}\tb");
        assert_eq!(line("T\u{7f}".into()), "T\\u{007F}");
        assert_eq!(
            prose("> ## q\n- ## l\n1. ## o\n> para\n> ---".into()),
            "> \\## q\n- \\## l\n1. \\## o\n> para\n> \\---"
        );
    }

    #[test]
    fn fences_outgrow_their_content() {
        assert_eq!(fence("{}".into(), "json".into()), "```json\n{}\n```");
        assert_eq!(fence("a ```` b\n".into(), "".into()), "`````\na ```` b\n`````");
    }

    /// The list of the template's own anchors is the template's.
    #[test]
    fn the_fixed_anchors_are_the_templates() {
        let literal: BTreeSet<&str> = TEMPLATE
            .match_indices("<a id=\"")
            .map(|(i, _)| &TEMPLATE[i + 7..i + 7 + TEMPLATE[i + 7..].find('"').unwrap_or(0)])
            .filter(|id| !id.contains("{{"))
            .collect();
        assert_eq!(literal, FIXED_ANCHORS.iter().copied().collect::<BTreeSet<_>>());
    }

    #[test]
    fn anchors_are_slugs_and_distinct() {
        let mut a = Anchors::new();
        assert_eq!(a.take("event-", "tool-call-start"), "event-tool-call-start");
        assert_eq!(a.take("event-", "type-summary"), "event-type-summary-2");
        assert_eq!(a.take("event-", "A b/c"), "event-a-b-c");
        assert_eq!(a.take("event-", "a.b.c"), "event-a-b-c-2");
        assert_eq!(a.take("event-", "a-b-c-2"), "event-a-b-c-2-2");
        assert_eq!(a.take("type-", "A b/c"), "type-a-b-c");
    }

    #[test]
    fn examples_one_line_or_pretty() {
        let v = serde_json::json!({"t": "x", "a": {"b": 1}, "c": [1, "z"], "d": {}});
        assert_eq!(example(&v), r#"{ "t": "x", "a": { "b": 1 }, "c": [1, "z"], "d": {} }"#);
        let long = serde_json::json!({"t": "x".repeat(200)});
        assert!(example(&long).contains('\n'));
    }

    #[test]
    fn integer_bounds() {
        assert_eq!(bound(9007199254740991), "2^53-1");
        assert_eq!(bound(0), "0");
    }
}
