//! Located diagnostics for problems in schema files, and JSON Pointer helpers.

use std::borrow::Cow;
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

/// Text for a terminal: control characters (a newline in a key included), bidirectional overrides and marks, and
/// line or paragraph separators are written as `\u{..}` escapes, so input (a message's keys, a schema's names)
/// cannot forge output lines or reach the terminal as escape sequences. Every text report goes through it.
pub fn printable(s: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control()
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
            || ('\u{202A}'..='\u{202E}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    };
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
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

/// Finds the 1-based line and column of the value at `pointer` in JSON `text`, or of the nearest existing
/// ancestor. Returns (1, 1) when nothing better is known.
pub(crate) fn locate(text: &str, pointer: &str) -> (usize, usize) {
    let tokens: Vec<String> =
        if pointer.is_empty() { Vec::new() } else { pointer.split('/').skip(1).map(unescape_token).collect() };
    let bytes = text.as_bytes();
    let mut pos = 0usize;
    let mut best = skip_ws(bytes, 0);
    for tok in &tokens {
        pos = skip_ws(bytes, pos);
        match bytes.get(pos) {
            Some(b'{') => {
                let mut p = pos + 1;
                let mut found = None;
                loop {
                    p = skip_ws(bytes, p);
                    if bytes.get(p) != Some(&b'"') {
                        break;
                    }
                    let key_start = p;
                    let (key, after) = read_string(text, p);
                    p = skip_ws(bytes, after);
                    if bytes.get(p) != Some(&b':') {
                        break;
                    }
                    p = skip_ws(bytes, p + 1);
                    if key == *tok {
                        found = Some((key_start, p));
                        break;
                    }
                    p = skip_value(bytes, p);
                    p = skip_ws(bytes, p);
                    if bytes.get(p) == Some(&b',') {
                        p += 1;
                    } else {
                        break;
                    }
                }
                match found {
                    Some((_k, v)) => {
                        pos = v;
                        best = v;
                    }
                    None => break,
                }
            }
            Some(b'[') => {
                let Ok(idx) = tok.parse::<usize>() else { break };
                let mut p = pos + 1;
                let mut ok = true;
                for _ in 0..idx {
                    p = skip_ws(bytes, p);
                    p = skip_value(bytes, p);
                    p = skip_ws(bytes, p);
                    if bytes.get(p) == Some(&b',') {
                        p += 1;
                    } else {
                        ok = false;
                        break;
                    }
                }
                if !ok {
                    break;
                }
                pos = skip_ws(bytes, p);
                best = pos;
            }
            _ => break,
        }
    }
    line_col(text, best)
}

/// 1-based line and column (in characters) of byte offset `off`.
pub(crate) fn line_col(text: &str, off: usize) -> (usize, usize) {
    let off = off.min(text.len());
    let before = &text[..floor_char_boundary(text, off)];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn locates_nested_values() {
        let t = "{\n  \"a\": 1,\n  \"b\": {\n    \"c/d\": [10, {\"e\": true}]\n  }\n}";
        assert_eq!(locate(t, ""), (1, 1));
        assert_eq!(locate(t, "/a"), (2, 8));
        assert_eq!(locate(t, "/b/c~1d/1/e"), (4, 23));
        assert_eq!(locate(t, "/b/missing"), (3, 8));
    }
}
