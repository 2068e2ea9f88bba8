//! Located diagnostics for problems in schema files, and JSON Pointer helpers.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

use crate::catalogue::catalogue;

catalogue! {
    /// What is wrong with the schema input. The code of each kind is stable (see [`SchemaErrorKind::code`]).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum SchemaErrorKind {
        /// Every kind, in catalogue order.
        const ALL;
        /// The stable code of this kind, e.g. `schema.unresolvable-ref`.
        fn code;
        /// The kind with this code.
        fn from_code;
        /// A file could not be read.
        Io = "schema.io",
        /// A file is not valid JSON.
        InvalidJson = "schema.invalid-json",
        /// A `$ref` names a file or pointer that does not exist.
        UnresolvableRef = "schema.unresolvable-ref",
        /// A keyword the generator does not support (it would otherwise be silently dropped).
        UnsupportedKeyword = "schema.unsupported-keyword",
        /// Two union members share one discriminator value.
        DuplicateTag = "schema.duplicate-tag",
        /// A field, type or event has no `description`.
        MissingDescription = "schema.missing-description",
        /// A keyword has a value of the wrong shape.
        InvalidValue = "schema.invalid-value",
        /// A required annotation or keyword is absent.
        Missing = "schema.missing",
        /// A `pattern` that JavaScript and Rust would not read the same way.
        UnsupportedPattern = "schema.unsupported-pattern",
        /// A `$ref` cycle that no object or array breaks.
        RefCycle = "schema.ref-cycle",
        /// A package beyond what its outputs can follow: a chain of too many `$ref`s, or a type that stands for too
        /// many subschemas with its references written out (`load/limits.rs`).
        TooComplex = "schema.too-complex",
        /// Two types would get one name in some language.
        NameCollision = "schema.name-collision",
        /// An output cannot express what the schema says, though the loader accepted it (a count beyond what
        /// JavaScript counts exactly, a property name Zod cannot hold): nothing is generated.
        Unexpressible = "emit.unsupported",
    }
}

/// One problem in the schema input, located by file, line, column and JSON Pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// What kind of problem.
    pub kind: SchemaErrorKind,
    /// The file, as given to the loader (relative to the working directory when the schema dir was relative).
    pub file: PathBuf,
    /// 1-based line, 0 if unknown.
    pub line: usize,
    /// 1-based column, 0 if unknown.
    pub col: usize,
    /// JSON Pointer into the file.
    pub pointer: String,
    /// Human explanation.
    pub message: String,
}

/// A character [`printable`] writes as an escape: a control character, a line or paragraph separator, a
/// bidirectional override or mark.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
        || ('\u{202A}'..='\u{202E}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// A JSON value as JSON text that [`printable`] leaves as it is: every character it would escape (all in the Basic
/// Multilingual Plane, and only inside strings) is written as a JSON escape, `\u2028`, so the text is still JSON
/// and still the value (the notes of the doc comments and the reference quote defaults and examples so).
pub fn json_text(v: &serde_json::Value) -> String {
    escaped(&v.to_string(), |c| format!("\\u{c:04x}")).into_owned()
}

/// `s` with each character [`unsafe_char`] names written as `escape` writes its code point.
fn escaped(s: &str, escape: impl Fn(u32) -> String) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.push_str(&escape(c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A control character that text files do not show (all but tab and the line breaks): the loader refuses one in a
/// schema's prose, and the reference writes one as an escape.
pub(crate) fn hidden_control(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// Text for a terminal: control characters (a newline in a key included), bidirectional overrides and marks, and
/// line or paragraph separators are written as `\u{..}` escapes, so input (a message's keys, a schema's names)
/// cannot forge output lines or reach the terminal as escape sequences. Every text report goes through it.
pub fn printable(s: &str) -> Cow<'_, str> {
    escaped(s, |c| format!("\\u{{{c:04X}}}"))
}

/// A JSON Pointer for a terminal: `(root)` for the whole document, else [`printable`].
pub fn shown_pointer(p: &str) -> Cow<'_, str> {
    if p.is_empty() {
        Cow::Borrowed("(root)")
    } else {
        printable(p)
    }
}

impl fmt::Display for SchemaError {
    /// `file:line:col: error[code]: pointer: message`; a problem with a file or directory as a whole (line 0: it
    /// cannot be read, or holds no schema) is `file: error[code]: message`, as compilers print such errors.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (file, message) = (self.file.display().to_string(), printable(&self.message));
        let file = printable(&file);
        if self.line == 0 && self.pointer.is_empty() {
            return write!(f, "{file}: error[{}]: {message}", self.kind.code());
        }
        let ptr = shown_pointer(&self.pointer);
        write!(f, "{file}:{}:{}: error[{}]: {ptr}: {message}", self.line, self.col, self.kind.code())
    }
}

impl std::error::Error for SchemaError {}

impl SchemaError {
    /// The diagnostic as a JSON object (for `--format json`).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "code": self.kind.code(),
            "file": self.file.display().to_string().replace('\\', "/"),
            "line": self.line,
            "col": self.col,
            "pointer": self.pointer,
            "message": self.message,
        })
    }
}

/// All problems found in one load. Never empty. `Display` prints every diagnostic, one per line; there is no
/// further cause ([`source()`](std::error::Error::source) is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaErrors(pub Vec<SchemaError>);

impl SchemaErrors {
    /// How many there are, in words (`1 error`, `2 schema errors`): every command's closing count line says it so.
    pub fn count(&self, noun: &str) -> String {
        crate::engine::counted(self.0.len() as u64, noun, &format!("{noun}s"))
    }
}

impl fmt::Display for SchemaErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SchemaErrors {}

/// The indefinite article before `word` as it is read aloud (`an` before a vowel's sound: `an open-reused rule`,
/// `an order`; `a unique rule`), for the messages and the reference that name a kind or a scope.
pub(crate) fn article(word: &str) -> &'static str {
    match word.bytes().next().map(|b| b.to_ascii_lowercase()) {
        Some(b'a' | b'e' | b'i' | b'o') => "an",
        _ => "a",
    }
}

/// Items as a list in prose: `a`, `a and b`, `a, b and c`.
pub(crate) fn and_list<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [init @ .., last] => {
            let init: Vec<&str> = init.iter().map(AsRef::as_ref).collect();
            format!("{} and {}", init.join(", "), last.as_ref())
        }
    }
}

/// Escapes one JSON Pointer reference token (RFC 6901).
pub(crate) fn escape_token(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_escaped(&mut out, s);
    out
}

/// Appends a token to a pointer.
pub(crate) fn push_ptr(base: &str, token: &str) -> String {
    let mut out = String::with_capacity(base.len() + token.len() + 1);
    out.push_str(base);
    out.push('/');
    push_escaped(&mut out, token);
    out
}

/// Appends one JSON Pointer reference token to `out`, escaped (`~` as `~0`, `/` as `~1`): the one place the
/// escape is written.
pub(crate) fn push_escaped(out: &mut String, token: &str) {
    if !token.contains(['~', '/']) {
        return out.push_str(token);
    }
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// One JSON Pointer reference token unescaped (`~1` as `/`, then `~0` as `~`): the one place the unescape is
/// written, the inverse of [`push_escaped`].
pub(crate) fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Where each value of a JSON text starts, by JSON Pointer, found in one pass over the text: locating many
/// diagnostics in one file (a schema with 50,000 mistakes, a diff of 16,000 changes) costs that pass and a lookup
/// each, not a scan of the text each (which took a minute on those).
#[derive(Debug, Clone)]
pub(crate) struct Locator {
    /// 1-based line and column (in characters, or in bytes: [`Locator::in_bytes`]) of each value, by pointer.
    at: HashMap<String, (usize, usize)>,
}

/// Containers nested deeper than this are not indexed (their values are located at the container). A schema
/// file that parsed is nested at most 128 deep (serde_json's limit).
const LOCATOR_DEPTH: usize = 256;

impl Locator {
    /// Lines and columns as an editor counts them (columns in characters; lines end at LF, CR LF or a lone CR): a
    /// schema file's.
    pub(crate) fn new(text: &str) -> Locator {
        Locator::with(text, false)
    }

    /// Lines and columns as serde_json counts them (columns in bytes; lines end at LF): a message's, where the
    /// parser's own positions count so.
    pub(crate) fn in_bytes(text: &str) -> Locator {
        Locator::with(text, true)
    }

    fn with(text: &str, bytes: bool) -> Locator {
        let mut starts: Vec<(String, usize)> = Vec::new();
        each_value(text, &mut |pointer, at| starts.push((pointer.to_string(), at)));
        // The line and column of every start, in one sweep through the text in order.
        let mut order: Vec<usize> = (0..starts.len()).collect();
        order.sort_by_key(|&i| starts[i].1);
        let mut place = vec![(1, 1); starts.len()];
        let mut cursor = Cursor::default();
        let (mut line, mut line_start, mut seen) = (1, 0, 0);
        for i in order {
            let off = starts[i].1;
            place[i] = if bytes {
                let b = text.as_bytes();
                for (k, &c) in b.iter().enumerate().take(off).skip(seen) {
                    if c == b'\n' {
                        line += 1;
                        line_start = k + 1;
                    }
                }
                seen = seen.max(off);
                (line, off - line_start + 1)
            } else {
                cursor.advance(text, off)
            };
        }
        let mut at = HashMap::with_capacity(starts.len());
        for ((pointer, _), lc) in starts.into_iter().zip(place) {
            // A repeated key: its first place, as a reader scanning the text finds it.
            at.entry(pointer).or_insert(lc);
        }
        Locator { at }
    }

    /// The 1-based line and column of the value at `pointer`, or of its nearest ancestor the text has.
    pub(crate) fn locate(&self, pointer: &str) -> (usize, usize) {
        let mut p = pointer;
        loop {
            if let Some(&lc) = self.at.get(p) {
                return lc;
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return self.at.get("").copied().unwrap_or((1, 1)),
            }
        }
    }
}

/// Calls `f` with the JSON Pointer and byte offset of every value of a JSON text, in text order (the one walk that
/// knows where values are: [`Locator`], and the loader's check of number literals).
pub(crate) fn each_value(text: &str, f: &mut dyn FnMut(&str, usize)) {
    index_values(text, skip_ws(text.as_bytes(), 0), &mut String::new(), f, 0);
}

/// What a parser of ours says, as a serde custom error, when it stops at a key its object already has (a schema
/// file's, `load::document`, and a message's, `engine::json`): the place is then found by [`first_repeated_key`].
pub(crate) const REPEATED_KEY: &str = "a repeated key";

/// The first member of a JSON text whose key its object already has, as a reader going left to right meets it
/// (at the key, whatever follows it): the member's JSON Pointer and the byte offset of the repeated key's opening
/// quote. One pass, holding the keys of the objects open at that point and the path to it: linear in the text.
/// The text is JSON up to there (a parser stopped at that key); past it the scan may read anything, and stops.
pub(crate) fn first_repeated_key(text: &str) -> Option<(String, usize)> {
    /// An open array (its item's index) or object (its keys so far, and whether a key comes next).
    enum Open {
        Array(usize),
        Object(std::collections::HashSet<String>, bool),
    }
    let b = text.as_bytes();
    // Each open container with the pointer token of its member or item being read.
    let mut open: Vec<(Open, String)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let mut end = i + 1;
                while end < b.len() && b[end] != b'"' {
                    end += if b[end] == b'\\' { 2 } else { 1 };
                }
                let end = (end + 1).min(b.len());
                if let Some((Open::Object(keys, expect_key @ true), token)) = open.last_mut() {
                    *expect_key = false;
                    let key: String = serde_json::from_str(&text[i..end]).unwrap_or_default();
                    *token = escape_token(&key);
                    if !keys.insert(key) {
                        let mut pointer = String::new();
                        for (_, t) in &open {
                            pointer.push('/');
                            pointer.push_str(t);
                        }
                        return Some((pointer, i));
                    }
                }
                i = end;
                continue;
            }
            b'{' => open.push((Open::Object(Default::default(), true), String::new())),
            b'[' => open.push((Open::Array(0), "0".into())),
            b'}' | b']' => {
                open.pop();
            }
            b',' => match open.last_mut() {
                Some((Open::Array(n), token)) => {
                    *n += 1;
                    *token = n.to_string();
                }
                Some((Open::Object(_, expect_key), _)) => *expect_key = true,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    None
}

/// Hands `f` the start of the value at `p` (pointer `ptr`) and of every value inside it; returns where it ends.
/// Text that is not JSON ends the walk early, never loops: each step moves past a `,` or returns.
fn index_values(text: &str, p: usize, ptr: &mut String, f: &mut dyn FnMut(&str, usize), depth: usize) -> usize {
    let b = text.as_bytes();
    f(ptr, p);
    let close = match b.get(p) {
        Some(b'{') if depth < LOCATOR_DEPTH => b'}',
        Some(b'[') if depth < LOCATOR_DEPTH => b']',
        _ => return skip_value(b, p),
    };
    let len = ptr.len();
    let mut q = p + 1;
    let mut i = 0usize;
    loop {
        q = skip_ws(b, q);
        if b.get(q) == Some(&close) {
            return q + 1;
        }
        ptr.push('/');
        if close == b'}' {
            if b.get(q) != Some(&b'"') {
                ptr.truncate(len);
                return q;
            }
            let (key, after) = read_string(text, q);
            q = skip_ws(b, after);
            if b.get(q) != Some(&b':') {
                ptr.truncate(len);
                return q;
            }
            q = skip_ws(b, q + 1);
            push_escaped(ptr, &key);
        } else {
            ptr.push_str(&i.to_string());
            i += 1;
        }
        q = skip_ws(b, index_values(text, q, ptr, f, depth + 1));
        ptr.truncate(len);
        match b.get(q) {
            Some(b',') => q += 1,
            Some(c) if *c == close => return q + 1,
            _ => return q,
        }
    }
}

/// A text with its [`Locator`], built the first time a place in it is asked for.
#[derive(Debug, Clone)]
pub(crate) struct LocatedText {
    pub(crate) text: String,
    locator: std::sync::OnceLock<Locator>,
}

impl LocatedText {
    pub(crate) fn new(text: String) -> LocatedText {
        LocatedText { text, locator: std::sync::OnceLock::new() }
    }

    /// The 1-based line and column of the value at `pointer` ([`Locator::locate`]).
    pub(crate) fn locate(&self, pointer: &str) -> (usize, usize) {
        self.locator.get_or_init(|| Locator::new(&self.text)).locate(pointer)
    }
}

/// 1-based line and column (in bytes, as serde_json counts them) of byte offset `offset`.
pub(crate) fn byte_line_col(text: &[u8], offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let column = offset - before.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1) + 1;
    (line, column)
}

/// What says `bytes` (a file's or an input's first bytes) are UTF-16, not UTF-8, if anything does: its byte order
/// mark (Windows PowerShell 5's `>` writes UTF-16LE with one), or a NUL beside each of its first ASCII characters.
pub(crate) fn utf16_sign(bytes: &[u8]) -> Option<&'static str> {
    // Eight characters at least: `a\0b\0` alone is too little to tell.
    let ascii_then_nul = |b: &[u8], nul: usize| {
        b.len() >= 16 && b.chunks_exact(2).take(8).all(|p| p[nul] == 0 && p[1 - nul] != 0 && p[1 - nul].is_ascii())
    };
    match bytes {
        [0xFF, 0xFE, 0, 0, ..] => Some("it starts with FF FE 00 00, the byte order mark of UTF-32LE"),
        [0, 0, 0xFE, 0xFF, ..] => Some("it starts with 00 00 FE FF, the byte order mark of UTF-32BE"),
        [0xFF, 0xFE, ..] => Some("it starts with FF FE, the byte order mark of UTF-16LE"),
        [0xFE, 0xFF, ..] => Some("it starts with FE FF, the byte order mark of UTF-16BE"),
        b if ascii_then_nul(b, 1) => Some("its characters are followed by NUL bytes, as in UTF-16LE"),
        b if ascii_then_nul(b, 0) => Some("its characters are preceded by NUL bytes, as in UTF-16BE"),
        _ => None,
    }
}

/// 1-based line and column (in characters) of byte offset `off`.
pub(crate) fn line_col(text: &str, off: usize) -> (usize, usize) {
    Cursor::default().advance(text, off)
}

/// A place in a text that moves forward only, counting lines and columns (1-based, columns in characters) on its
/// way: the one count behind [`line_col`] and [`Locator`]'s sweep.
struct Cursor {
    line: usize,
    col: usize,
    at: usize,
    /// The character before `at` is a CR: a LF at `at` ends no other line.
    after_cr: bool,
}

impl Default for Cursor {
    fn default() -> Cursor {
        Cursor { line: 1, col: 1, at: 0, after_cr: false }
    }
}

impl Cursor {
    /// Moves to byte offset `off` (or to the start of the character it falls in, or to the end), at or after
    /// where it is, and gives its line and column.
    fn advance(&mut self, text: &str, off: usize) -> (usize, usize) {
        let off = floor_char_boundary(text, off.min(text.len()));
        // Lines end as editors end them: at LF, CR LF, or a CR alone (a file saved with classic Mac endings).
        for c in text.get(self.at..off).unwrap_or_default().chars() {
            match c {
                '\n' if self.after_cr => {}
                '\n' | '\r' => {
                    self.line += 1;
                    self.col = 1;
                }
                _ => self.col += 1,
            }
            self.after_cr = c == '\r';
        }
        self.at = self.at.max(off);
        (self.line, self.col)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn skip_ws(b: &[u8], mut p: usize) -> usize {
    while p < b.len() && matches!(b[p], b' ' | b'\t' | b'\n' | b'\r') {
        p += 1;
    }
    p
}

fn read_string(text: &str, p: usize) -> (String, usize) {
    let b = text.as_bytes();
    let mut q = p + 1;
    while q < b.len() {
        match b[q] {
            b'\\' => q += 2,
            b'"' => break,
            _ => q += 1,
        }
    }
    let end = (q + 1).min(b.len());
    let raw = &text[p..end];
    let s = serde_json::from_str::<String>(raw).unwrap_or_default();
    (s, end)
}

fn skip_value(b: &[u8], p: usize) -> usize {
    let mut depth = 0usize;
    let mut q = p;
    while q < b.len() {
        match b[q] {
            b'"' => {
                q += 1;
                while q < b.len() && b[q] != b'"' {
                    if b[q] == b'\\' {
                        q += 1;
                    }
                    q += 1;
                }
                q += 1;
                if depth == 0 {
                    return q;
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 0 {
                    return q;
                }
                depth -= 1;
                if depth == 0 {
                    return q + 1;
                }
            }
            b',' if depth == 0 => return q,
            _ => {}
        }
        q += 1;
    }
    q
}

/// A literal as a markdown inline code span that survives any content (the reference's literals outside its
/// tables, the values in `wiregen diff`'s messages): the backtick fence is one longer than the longest backtick run
/// inside, padded with spaces where a reader would otherwise take its own ones off.
pub(crate) fn code_span(s: &str) -> String {
    // A span is one line: line breaks are written `\n` and `\r` (a space would make `a\nb` read as the name
    // `a b`); other control characters and bidirectional overrides are written as `\u{..}` escapes, as on a
    // terminal, so a name cannot hide itself or its neighbours in the page.
    let flat = s.replace('\n', "\\n").replace('\r', "\\r");
    let flat = printable(&flat).into_owned();
    if flat.is_empty() {
        // A span of one space read as the literal ` ` (a property named " ", the pattern " ").
        return "*(empty)*".into();
    }
    let ticks = "`".repeat(longest_run(&flat, '`') + 1);
    // A reader strips one space from each end of a span that has one at both (unless it is all spaces): padded,
    // such a literal keeps its own.
    let spaced = flat.starts_with(' ') && flat.ends_with(' ') && !flat.bytes().all(|b| b == b' ');
    let pad = if flat.starts_with('`') || flat.ends_with('`') || spaced { " " } else { "" };
    format!("{ticks}{pad}{flat}{pad}{ticks}")
}

/// The longest run of `ch` in `s`.
pub(crate) fn longest_run(s: &str, ch: char) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The first repeated key is found at the key (a colon need not follow), its pointer escaped, in one pass: a
    /// line whose values before the repeat are many and deep under long keys is answered without holding a pointer
    /// per value (it took memory in the square of the line's size, gigabytes for a 2 MB line).
    #[test]
    fn the_first_repeated_key_is_found_at_the_key() {
        let at = first_repeated_key;
        assert_eq!(at(r#"{"a":1,"a"}"#), Some(("/a".into(), 7)));
        assert_eq!(at(r#"{"a":1,"b":[{"~/":0},{"x":{},"~/":1,"~/":2}]}"#), Some(("/b/1/~0~1".into(), 36)));
        assert_eq!(at(r#"{"a":{"x":1,"x":2},"a":3}"#), Some(("/a/x".into(), 12)));
        assert_eq!(at(r#"{"a":"\"a\":","b":["a","a"],"\u0061":1}"#), Some(("/a".into(), 28)));
        assert_eq!(at(r#"{"a":{"k":1},"b":{"k":1},"k":[{"k":0},{"k":0}]}"#), None);
        let key = "k".repeat(1 << 20);
        let nested = (0..64).map(|j| format!("{{\"{j}{key}\":")).collect::<String>();
        let items = vec!["0"; 1 << 20].join(",");
        let text = format!("{nested}{{\"x\":[{items}],\"x\":1}}{}", "}".repeat(64));
        let (pointer, open) = first_repeated_key(&text).expect("repeated");
        let want = (0..64).map(|j: usize| 1 + j.to_string().len() + key.len()).sum::<usize>() + "/x".len();
        assert_eq!((pointer.len(), &text[open..open + 4]), (want, "\"x\":"));
    }

    #[test]
    fn a_diagnostic_without_a_position_prints_no_position() {
        let at = |line, col, pointer: &str| SchemaError {
            kind: SchemaErrorKind::InvalidJson,
            file: "s/a.json".into(),
            line,
            col,
            pointer: pointer.into(),
            message: "what".into(),
        };
        assert_eq!(at(3, 7, "/x").to_string(), "s/a.json:3:7: error[schema.invalid-json]: /x: what");
        assert_eq!(at(3, 7, "").to_string(), "s/a.json:3:7: error[schema.invalid-json]: (root): what");
        assert_eq!(at(0, 0, "").to_string(), "s/a.json: error[schema.invalid-json]: what");
        assert_eq!(at(0, 0, "").to_json()["line"], 0);
    }

    #[test]
    fn the_article_follows_the_sound_of_the_word() {
        // Kinds and scope names as messages and the reference name them (helper 117: `a \`open-while-open\``).
        for (word, want) in
            [("open-while-open", "an"), ("order", "an"), ("Event", "an"), ("unique", "a"), ("turn", "a")]
        {
            assert_eq!(super::article(word), want, "{word}");
        }
    }

    #[test]
    fn locates_in_bytes_as_serde_json_counts() {
        // Columns in bytes, lines at `\n` only (a lone `\r` is within a line), as a parser's positions count.
        let text = "{\"a\": \"\u{e9}\",\r\"b\":\n 1}";
        assert_eq!(Locator::in_bytes(text).locate("/b"), (2, 2));
        assert_eq!(Locator::in_bytes(text).locate("/a"), (1, 7));
        assert_eq!(Locator::new(text).locate("/b"), (3, 2));
    }

    #[test]
    fn locates_nested_values() {
        let t = "{\n  \"a\": 1,\n  \"b\": {\n    \"c/d\": [10, {\"e\": true}]\n  }\n}";
        let locate = |t: &str, p: &str| Locator::new(t).locate(p);
        assert_eq!(locate(t, ""), (1, 1));
        assert_eq!(locate(t, "/a"), (2, 8));
        assert_eq!(locate(t, "/b/c~1d/1/e"), (4, 23));
        assert_eq!(locate(t, "/b/missing"), (3, 8));
        // Columns count characters; `~` and `/` in keys are escaped in the pointer.
        let u = "{\"é\": [1, \"x\"], \"a~b\": {\"c\": null}}";
        assert_eq!(locate(u, "/é/1"), (1, 11));
        assert_eq!(locate(u, "/a~0b/c"), (1, 30));
        // Lines end at LF, CR LF or a CR alone, as editors count them (a bare CR was no line break: helper 74).
        for eol in ["\n", "\r\n", "\r"] {
            assert_eq!(locate(&t.replace('\n', eol), "/b/c~1d/1/e"), (4, 23), "{eol:?}");
        }
        assert_eq!(line_col("a\rb\r\nc\n\rd", 8), (5, 1));
        // Text that is not (all) JSON: the nearest place there is.
        assert_eq!(locate("", "/a"), (1, 1));
        assert_eq!(locate("  ", ""), (1, 3));
        assert_eq!(locate("{\"a\": [1, ", "/a/1"), (1, 11));
        assert_eq!(locate("{\"a\" 1, \"b\": 2}", "/b"), (1, 1));
        assert_eq!(locate("[1,,2]", "/2"), (1, 5));
    }

    #[test]
    fn utf16_is_told_from_utf8() {
        let le: Vec<u8> = "{\"a\": 1}".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = "{\"a\": 1}".encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert!(utf16_sign(b"\xFF\xFE\0\0{\0\0\0").is_some_and(|s| s.contains("UTF-32LE")));
        for short in [&b"a\0b\0"[..], b"{\0\"\0", b"{\0\"\0a\0\"\0:\x001\0}\0"] {
            assert_eq!(utf16_sign(short), None, "{short:?}");
        }
        assert!(utf16_sign(&[[0xFF, 0xFE].as_slice(), &le].concat()).is_some_and(|s| s.contains("FF FE")));
        assert!(utf16_sign(&[[0xFE, 0xFF].as_slice(), &be].concat()).is_some_and(|s| s.contains("FE FF")));
        assert!(utf16_sign(&le).is_some_and(|s| s.contains("UTF-16LE")));
        assert!(utf16_sign(&be).is_some_and(|s| s.contains("UTF-16BE")));
        for utf8 in ["{\"a\": 1}", "\u{feff}{}", "", "{}", "\"\u{0}\u{0}\""] {
            assert_eq!(utf16_sign(utf8.as_bytes()), None, "{utf8:?}");
        }
    }
}
