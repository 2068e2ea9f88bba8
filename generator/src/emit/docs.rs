//! The markdown reference: `docs/session-protocol.md`, laid out like the protocol's reference tables.
//!
//! The emitter turns the model into a plain view (rows of strings, lists, flags) and renders it through a
//! minijinja template (`generator/templates/docs/`) with strict undefined behaviour, so a typo in the template
//! fails instead of printing nothing. Everything that comes from the schema goes through one of three filters
//! that keep it from breaking the markdown around it:
//!
//! - `cell`: prose (descriptions are markdown) inside a table cell: `|` is escaped and line breaks
//!   (`\n`, `\r`, U+2028, U+2029) become `<br>`, so a row stays one line with the header's column count;
//! - `code`: a literal (field name, enum value, tag) as an inline code span whose backtick fence is longer
//!   than any backtick run inside it, table-safe too;
//! - `fence(lang)`: a fenced code block whose fence is longer than any backtick run inside it.
//!
//! Nothing here names an event: sections, anchors, the summary, the role matrix and the rule catalogues all
//! come from [`Protocol`], [`Rule::ALL`] and [`StreamRule::ALL`] (the definitions the validators use).

use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;
use serde_json::Value;

use super::{EmitError, OutFile, REGENERATE};
use crate::legacy::ir::{Field, Protocol, Ty};
use crate::rules::Rule;
use crate::stream::rules::StreamRule;

/// File name of the reference inside `generated/docs/`.
pub(crate) const FILE: &str = "session-protocol.md";

const TEMPLATE: &str = include_str!("../../templates/docs/session-protocol.md.j2");

/// JSON examples at most this long are shown on one line, as in the protocol document.
const ONE_LINE_EXAMPLE: usize = 140;

/// Emits `session-protocol.md`.
///
/// # Errors
/// A template error (a bug in the template, reported with minijinja's error as the source).
/// Emits this output for a model (through the legacy view until this emitter reads the model itself).
///
/// # Errors
/// When the model holds something this output cannot express.
pub(crate) fn emit_model(m: &crate::ir::Model) -> Result<Vec<OutFile>, EmitError> {
    emit(&crate::legacy::protocol(m)?)
}

pub(crate) fn emit(p: &Protocol) -> Result<Vec<OutFile>, EmitError> {
    Ok(vec![OutFile::new(FILE, render(p)?)])
}

/// Renders the reference for `p`.
///
/// # Errors
/// A template error.
pub(crate) fn render(p: &Protocol) -> Result<String, EmitError> {
    let env = environment()?;
    let view = View::new(p);
    let mut out = env.get_template("session-protocol.md")?.render(&view)?;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

fn environment() -> Result<Environment<'static>, EmitError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    env.add_filter("cell", cell);
    env.add_filter("code", code);
    env.add_filter("fence", fence);
    env.add_template("session-protocol.md", TEMPLATE)?;
    Ok(env)
}

/// Escapes markdown prose for a table cell: `|` becomes `\|` (also inside code spans, which GFM tables
/// allow), and every line break becomes `<br>`, so the row stays on one line.
pub(crate) fn cell(s: String) -> String {
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
/// breaks become spaces (as markdown would render them) and `|` is escaped for tables.
pub(crate) fn code(s: String) -> String {
    let flat: String =
        s.chars().map(|c| if matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}') { ' ' } else { c }).collect();
    if flat.is_empty() {
        return "` `".into();
    }
    let ticks = "`".repeat(longest_run(&flat, '`') + 1);
    let pad = if flat.starts_with('`') || flat.ends_with('`') { " " } else { "" };
    format!("{ticks}{pad}{}{pad}{ticks}", flat.replace('|', "\\|"))
}

/// A fenced code block: the fence is longer than any backtick run inside, so content cannot close it.
pub(crate) fn fence(s: String, lang: String) -> String {
    let ticks = "`".repeat((longest_run(&s, '`') + 1).max(3));
    let body = s.replace("\r\n", "\n");
    let body = body.trim_end_matches('\n');
    format!("{ticks}{lang}\n{body}\n{ticks}")
}

fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in s.chars() {
        if c == ch {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// The stable anchor of an event section: `event-` and the tag, lowercased, with anything other than ASCII
/// letters, digits, `-` and `_` replaced by `-`.
pub(crate) fn event_anchor(tag: &str) -> String {
    let slug: String = tag
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '-' })
        .collect();
    format!("event-{slug}")
}

/// What the template sees: plain strings and lists, nothing to compute.
#[derive(Serialize)]
struct View {
    generated_by: String,
    title: String,
    description: String,
    union_field: String,
    role_field: String,
    /// `ev.t`: how the discriminator is written in prose.
    tag_path: String,
    roles: Vec<String>,
    envelope: Vec<Row>,
    event_count: usize,
    categories: Vec<CategoryView>,
    summary: Vec<SummaryRow>,
    matrix: Vec<MatrixRow>,
    role_fields: Vec<RoleField>,
    removed: Vec<RemovedRow>,
    rules: Vec<RuleRow>,
    stream_rules: Vec<StreamRuleRow>,
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
    rows: Vec<Row>,
    replaces: Vec<String>,
}

/// One row of a field table.
#[derive(Serialize)]
struct Row {
    /// Dotted path from the table's object (`image.width`).
    path: String,
    /// Base type word: string, integer, number, boolean, object.
    ty: String,
    /// Allowed values of an enum, as JSON literals (`"completed"`); empty for other types.
    values: Vec<String>,
    /// Constraints, as markdown (`0 to 2^53-1`, `non-empty`); empty when none.
    constraint: String,
    /// A literal shown as code inside the constraint (the strict-id pattern); empty when none.
    pattern: String,
    optional: bool,
    description: String,
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
    summary: String,
    pointer: String,
    seed: String,
}

impl View {
    fn new(p: &Protocol) -> View {
        let roles = p.roles().to_vec();
        let mut envelope = Vec::new();
        rows(p, "", &p.envelope.fields, &mut envelope);
        let categories = p
            .categories
            .iter()
            .map(|c| CategoryView {
                title: c.title.clone(),
                anchor: format!("category-{}", event_anchor(&c.name).trim_start_matches("event-")),
                events: p.union.variants.iter().filter(|v| v.category == c.name).map(|v| event(p, v)).collect(),
            })
            .filter(|c| !c.events.is_empty())
            .collect();
        let summary = p
            .union
            .variants
            .iter()
            .map(|v| SummaryRow {
                category: v.category.clone(),
                tag: v.tag.clone(),
                anchor: event_anchor(&v.tag),
                roles: ordered_roles(p, &v.roles).join("/"),
                status: status(v),
            })
            .collect();
        let matrix = p
            .union
            .variants
            .iter()
            .map(|v| MatrixRow {
                tag: v.tag.clone(),
                anchor: event_anchor(&v.tag),
                cells: roles
                    .iter()
                    .map(|r| MatrixCell {
                        allowed: v.roles.contains(r),
                        except: v
                            .fields
                            .iter()
                            .filter(|f| !Protocol::field_allowed(f, r))
                            .map(|f| f.name.clone())
                            .collect(),
                    })
                    .collect(),
            })
            .collect();
        let role_fields = p
            .envelope
            .fields
            .iter()
            .filter_map(|f| {
                f.roles.as_ref().map(|r| RoleField { path: f.name.clone(), roles: ordered_roles(p, r).join(" or ") })
            })
            .collect();
        View {
            generated_by: format!(
                "@generated by `{REGENERATE}` from schema/. Do not edit: change schema/ and regenerate."
            ),
            title: p.title.clone(),
            description: p.envelope.description.clone(),
            union_field: p.union_field.clone(),
            role_field: p.role_field.clone(),
            tag_path: format!("{}.{}", p.union_field, p.union.tag),
            roles,
            envelope,
            event_count: p.union.variants.len(),
            categories,
            summary,
            matrix,
            role_fields,
            removed: p.removed.iter().map(|r| RemovedRow { what: r.what.clone(), why: r.why.clone() }).collect(),
            rules: Rule::ALL.iter().map(|r| RuleRow { id: r.id().into(), summary: r.summary().into() }).collect(),
            stream_rules: StreamRule::ALL
                .iter()
                .map(|r| StreamRuleRow {
                    id: r.id().into(),
                    summary: r.summary().into(),
                    pointer: r.pointer().into(),
                    seed: r.seed().into(),
                })
                .collect(),
        }
    }
}

fn event(p: &Protocol, v: &crate::legacy::ir::Variant) -> EventView {
    let mut rows_out = Vec::new();
    rows(p, "", &v.fields, &mut rows_out);
    EventView {
        tag: v.tag.clone(),
        anchor: event_anchor(&v.tag),
        sent_by: ordered_roles(p, &v.roles).join(" or "),
        status: status(v),
        description: v.description.clone(),
        examples: v.examples.iter().map(example).collect(),
        rows: rows_out,
        replaces: p.replaces(&v.tag).into_iter().map(String::from).collect(),
    }
}

/// `modified (added `steer`)`.
fn status(v: &crate::legacy::ir::Variant) -> String {
    match &v.status_note {
        Some(n) => format!("{} ({n})", v.status),
        None => v.status.clone(),
    }
}

/// `roles` in the order of the role enum.
fn ordered_roles(p: &Protocol, roles: &[String]) -> Vec<String> {
    p.roles().iter().filter(|r| roles.contains(r)).cloned().collect()
}

/// Field rows, depth first: a field of a named object type is followed by its own fields (`usage.cost`).
fn rows(p: &Protocol, prefix: &str, fields: &[Field], out: &mut Vec<Row>) {
    for f in fields {
        let path = format!("{prefix}{}", f.name);
        let (ty, constraint, pattern, values) = match &f.ty {
            Ty::String(s) => {
                let mut c = match s.min_length {
                    Some(1) => "non-empty".to_string(),
                    Some(n) if n > 1 => format!("at least {n} characters"),
                    _ => String::new(),
                };
                let pattern = s.strict_pattern.clone().unwrap_or_default();
                if !pattern.is_empty() {
                    c.push_str(if c.is_empty() { "with strict ids matches" } else { "; with strict ids matches" });
                }
                ("string", c, pattern, Vec::new())
            }
            Ty::Integer { minimum, maximum } => {
                ("integer", format!("{} to {}", bound(*minimum), bound(*maximum)), String::new(), Vec::new())
            }
            Ty::Number { minimum } => {
                ("number", minimum.map(|m| format!("≥ {m}")).unwrap_or_default(), String::new(), Vec::new())
            }
            Ty::Boolean => ("boolean", String::new(), String::new(), Vec::new()),
            Ty::Enum(name) => {
                let values =
                    p.enums.get(name).map(|e| e.values.iter().map(|v| Value::from(v.as_str()).to_string()).collect());
                ("string", String::new(), String::new(), values.unwrap_or_default())
            }
            Ty::Object(_) | Ty::AnyObject | Ty::Union => ("object", String::new(), String::new(), Vec::new()),
        };
        out.push(Row {
            path: path.clone(),
            ty: ty.into(),
            values,
            constraint,
            pattern,
            optional: !f.required,
            description: f.description.clone(),
        });
        if let Ty::Object(name) = &f.ty {
            if let Some(o) = p.objects.get(name) {
                rows(p, &format!("{path}."), &o.fields, out);
            }
        }
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

    #[test]
    fn cell_keeps_rows_on_one_line() {
        assert_eq!(cell("a | b\nc\r\nd\u{2028}e\u{2029}f\rg".into()), "a \\| b<br>c<br>d<br>e<br>f<br>g");
        assert_eq!(cell("`x` */".into()), "`x` */");
    }

    #[test]
    fn code_spans_survive_backticks_and_pipes() {
        assert_eq!(code("ev.t".into()), "`ev.t`");
        assert_eq!(code("a`b".into()), "``a`b``");
        assert_eq!(code("`x".into()), "`` `x ``");
        assert_eq!(code("a|b\nc".into()), "`a\\|b c`");
        assert_eq!(code(String::new()), "` `");
    }

    #[test]
    fn fences_outgrow_their_content() {
        assert_eq!(fence("{}".into(), "json".into()), "```json\n{}\n```");
        assert_eq!(fence("a ```` b\n".into(), "".into()), "`````\na ```` b\n`````");
    }

    #[test]
    fn anchors_are_slugs() {
        assert_eq!(event_anchor("tool-call-start"), "event-tool-call-start");
        assert_eq!(event_anchor("A b/c"), "event-a-b-c");
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
