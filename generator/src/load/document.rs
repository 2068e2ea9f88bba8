//! A schema file's text, parsed into a `Value` as `serde_json` parses it, except that what JSON parsers read
//! differently is refused, so a schema file says one thing to every output and every validator:
//! - an object with a repeated key: parsers disagree on which member it keeps (`serde_json` and `JSON.parse` keep
//!   the last, others the first or refuse the text);
//! - a number no double holds as written ([`inexact`]): an integer beyond 2^53 that JavaScript rounds (a
//!   validator with exact integers, such as Python's, keeps it), or a non-zero number so small it reads as `0`.
//!   Every output holds numbers as doubles: the bundle would write the rounded value.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use crate::diag::{first_repeated_key, line_col, SchemaError, SchemaErrorKind, REPEATED_KEY};

/// Why a text is not a schema document: where (1-based line and column, in characters), the JSON Pointer of a
/// repeated member (empty for a syntax error), and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    /// `schema.invalid-json`, or `schema.invalid-value` for a number no double holds.
    pub kind: SchemaErrorKind,
    pub line: usize,
    pub col: usize,
    pub pointer: String,
    pub message: String,
}

impl Refused {
    /// The diagnostic, for the file at `file` (`schema.invalid-json`).
    pub(crate) fn at(self, file: &std::path::Path) -> SchemaError {
        let Refused { kind, line, col, pointer, message } = self;
        SchemaError { kind, file: file.to_path_buf(), line, col, pointer, message }
    }
}

/// A schema file's bytes as its text: UTF-8 (RFC 8259), refused at the first byte that is not.
pub(crate) fn text(bytes: Vec<u8>) -> Result<String, Refused> {
    // UTF-16 of ASCII text is valid UTF-8 (with NULs) once past a byte order mark, or without one: told as such.
    if let Some(sign) = crate::diag::utf16_sign(&bytes) {
        return Err(Refused {
            kind: SchemaErrorKind::InvalidJson,
            line: 1,
            col: 1,
            pointer: String::new(),
            message: format!("not UTF-8 ({sign}); JSON text is UTF-8: save the file as UTF-8"),
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let (line, col) = line_col(std::str::from_utf8(&bytes[..at]).unwrap_or_default(), at);
        let byte = bytes.get(at).copied().unwrap_or_default();
        Refused {
            kind: SchemaErrorKind::InvalidJson,
            line,
            col,
            pointer: String::new(),
            message: format!("not UTF-8: byte 0x{byte:02x} at offset {at} (JSON text is UTF-8)"),
        }
    })
}

/// Parses one schema file's text (a leading UTF-8 byte order mark is not part of it: see the loader).
pub(crate) fn parse(text: &str) -> Result<Value, Refused> {
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = Doc.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    let e = match parsed {
        // The numbers are read again from the text: serde_json hands over a double, not what was written.
        Ok(v) => return numbers(text).map(|()| v),
        Err(e) => e,
    };
    let at = byte_offset(text, e.line(), e.column());
    let repeated = (crate::engine::parse_error_what(&e) == REPEATED_KEY).then(|| first_repeated_key(text)).flatten();
    Err(match repeated {
        Some((pointer, open)) => {
            let (line, col) = line_col(text, open);
            let key = pointer.rsplit('/').next().map(crate::diag::unescape_token).unwrap_or_default();
            Refused {
                kind: SchemaErrorKind::InvalidJson,
                line,
                col,
                pointer,
                message: format!(
                    "the key `{key}` appears twice in one object; JSON parsers disagree on which member a repeated \
                     key keeps, so say it once"
                ),
            }
        }
        // A number beyond the double range: at the number, with its pointer (serde_json stops after it).
        None if crate::engine::parse_error_what(&e) == "number out of range" => {
            numbers(text).err().unwrap_or_else(|| syntax(text, at, &e))
        }
        None => syntax(text, at, &e),
    })
}

/// A syntax error at `at` (a byte offset).
fn syntax(text: &str, at: Option<usize>, e: &serde_json::Error) -> Refused {
    let (line, col) = at.map_or((1, 1), |at| line_col(text, at));
    Refused { kind: SchemaErrorKind::InvalidJson, line, col, pointer: String::new(), message: parse_error_message(e) }
}

/// Refuses the first number in `text` that no double holds as written ([`inexact`]), at its first character and
/// with its JSON Pointer ([`crate::diag::each_value`] walks the values).
fn numbers(text: &str) -> Result<(), Refused> {
    let b = text.as_bytes();
    let mut found: Option<(String, usize, usize, String)> = None;
    crate::diag::each_value(text, &mut |pointer, start| {
        if found.is_some() || !matches!(b.get(start), Some(b'-' | b'0'..=b'9')) {
            return;
        }
        let len = b[start..].iter().take_while(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')).count();
        if let Some(why) = inexact(&text[start..start + len]) {
            found = Some((pointer.to_string(), start, len, why));
        }
    });
    let Some((pointer, start, len, why)) = found else { return Ok(()) };
    let (line, col) = line_col(text, start);
    let kind = if why.starts_with("beyond") { SchemaErrorKind::InvalidJson } else { SchemaErrorKind::InvalidValue };
    let message = format!("the number `{}` is {why}", &text[start..start + len]);
    Err(Refused { kind, line, col, pointer, message })
}

/// Why no double holds the JSON number `lit` as written, if none does: beyond the double range; an integer that
/// a double rounds (beyond 2^53, where doubles are 2, 4, 8, ... apart), however it is written (`9007199254740993`,
/// `9.007199254740993e15`, `9007199254740993.0`, `1e23`), which parsers with exact integers (Python's) keep and
/// JavaScript rounds; a non-zero number a double reads as `0`. A number with a fraction (`0.1`,
/// `1.00000000000000001`) is read as the nearest double by every parser alike, and is accepted.
fn inexact(lit: &str) -> Option<String> {
    let d: f64 = lit.parse().ok()?;
    if d.is_infinite() {
        return Some(
            "beyond the range of a double (about ±1.8e308), which no checker holds exactly: write a number inside it"
                .into(),
        );
    }
    let unsigned = lit.strip_prefix('-').unwrap_or(lit);
    let (mantissa, exp) = unsigned.split_once(['e', 'E']).unwrap_or((unsigned, "0"));
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // The number is `digits` × 10^`exp`, `digits` without leading or trailing zeros.
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let trimmed = digits.trim_end_matches('0');
    if trimmed.is_empty() {
        return None;
    }
    if d == 0.0 {
        return Some(
            "so close to 0 that a double reads it as `0` (every output and checker would hold 0): write 0, or a \
             number of at least about 5e-324"
                .into(),
        );
    }
    // A finite non-zero double: its exponent is within a few hundred of the digits' count.
    let exp = exp.strip_prefix('+').unwrap_or(exp).parse::<i64>().ok()?;
    let exp = exp - frac.len() as i64 + (digits.len() - trimmed.len()) as i64;
    // A fraction, or an integer of up to 15 digits (below 2^53, where doubles hold every integer).
    if exp < 0 || trimmed.len() as i64 + exp <= 15 {
        return None;
    }
    let written = format!("{trimmed}{}", "0".repeat(usize::try_from(exp).ok()?));
    // `{:.0}` writes a double's exact integer value, `{}` its shortest text (without an exponent).
    let held = format!("{:.0}", d.abs());
    // Written with a fraction or an exponent, an integer is also kept where every output writes it as written
    // (`1e23`: no double is 10^23, but every output writes the nearest one `1e23`).
    let shown = unsigned.contains(['.', 'e', 'E']) && written == format!("{}", d.abs());
    (written != held && !shown).then(|| {
        let held = format!("{d:.0}");
        format!(
            "an integer no double holds (beyond 2^53 doubles are more than 1 apart): JavaScript and every output \
             read it as {held}, a validator with exact integers as written, so they would disagree; write {held}, \
             or keep such integers within ±9007199254740992"
        )
    })
}

/// What a schema file serde_json cannot read is told: JSON that the grammar allows but serde_json does not read
/// (nesting past 127 levels, its recursion limit) is named as such, not as invalid JSON. The place is the
/// diagnostic's (line and column in characters), not serde_json's (its column counts bytes).
fn parse_error_message(e: &serde_json::Error) -> String {
    let what = crate::engine::parse_error_what(e);
    match what.as_str() {
        "recursion limit exceeded" => "the document nests deeper than 127 levels, more than wiregen reads".into(),
        "number out of range" => "a number beyond the range of a double (about ±1.8e308)".into(),
        "EOF while parsing a value" if e.line() <= 1 && e.column() == 0 => "not valid JSON: the file is empty".into(),
        _ => format!("not valid JSON: {what}"),
    }
}

/// The byte offset of `serde_json`'s position (1-based line, 1-based column in bytes; line 0: none), so that the
/// diagnostic gives the column in characters as every other one does.
fn byte_offset(text: &str, line: usize, byte_col: usize) -> Option<usize> {
    let before = line.checked_sub(1)?;
    let start: usize = text.split_inclusive('\n').take(before).map(str::len).sum();
    Some(start + byte_col.saturating_sub(1))
}

/// The seed and visitor that build the `Value`, stopping at a repeated key ([`REPEATED_KEY`]).
#[derive(Clone, Copy)]
struct Doc;

impl<'de> DeserializeSeed<'de> for Doc {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Doc {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Number::from_f64(n).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match members.entry(key) {
                Entry::Occupied(_) => return Err(A::Error::custom(REPEATED_KEY)),
                Entry::Vacant(slot) => {
                    let v = map.next_value_seed(self)?;
                    slot.insert(v);
                }
            }
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_parse_as_serde_json_parses_them() {
        for text in [
            r#"{"a": [1, -2, 3.5, 9007199254740992, -9223372036854775808, 1e300, 0.1, 0e-999], "b": {"c": null}}"#,
            r#"{"s": "\u00e9\ud83d\ude00\n", "t": true, "f": false, "e": {}, "l": []}"#,
            "[1, {\"x\": [{}]}]",
            "\"text\"",
        ] {
            let ours = parse(text).map_err(|r| r.message);
            let theirs = serde_json::from_str::<Value>(text).map_err(|e| parse_error_message(&e));
            assert_eq!(ours, theirs, "{text}");
        }
    }

    #[test]
    fn syntax_errors_are_located_in_characters() {
        let text = "{\n  \"é\": tru }";
        let r = parse(text).expect_err("not JSON");
        assert_eq!((r.line, r.pointer.as_str()), (2, ""));
        // serde_json counts `é` as two bytes; the column is in characters.
        let theirs = serde_json::from_str::<Value>(text).expect_err("not JSON");
        assert_eq!((theirs.line(), r.col), (2, theirs.column() - 1));
        assert!(r.message.starts_with("not valid JSON: "), "{}", r.message);
        // 127 levels are read, 128 are not, and the message says so (it said 128; helper 102).
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&deep(127)).is_ok());
        assert!(parse(&deep(128))
            .expect_err("too deep")
            .message
            .starts_with("the document nests deeper than 127 levels"));
        let empty = parse("").expect_err("empty");
        assert_eq!((empty.line, empty.col, empty.message.as_str()), (1, 1, "not valid JSON: the file is empty"));
        // serde_json's own position (in bytes) is not repeated in the message.
        let ctrl = parse("{\"é\": \"a\u{1}\"}").expect_err("control character");
        assert!(!ctrl.message.contains("column"), "{}", ctrl.message);
        assert!(parse("{} x").is_err());
    }

    #[test]
    fn a_number_no_double_holds_as_written_is_refused_at_it() {
        let at = |text: &str| {
            let r = parse(text).expect_err(text);
            (r.kind, r.line, r.col, r.pointer, r.message)
        };
        let (.., message) = at("{\"minimum\": -9007199254740993}");
        assert!(message.contains("read it as -9007199254740992"), "{message}");
        let (kind, line, col, pointer, message) = at("{\n  \"enum\": [1, 9007199254740993]\n}");
        assert_eq!((kind, line, col, pointer.as_str()), (SchemaErrorKind::InvalidValue, 2, 15, "/enum/1"));
        assert!(message.contains("`9007199254740993`") && message.contains("read it as 9007199254740992"), "{message}");
        // Negative, or beyond u64: the same.
        for lit in ["-9007199254740993", "18446744073709551615", "123456789012345678901234567890"] {
            let (kind, .., message) = at(&format!("{{\"minimum\": {lit}}}"));
            assert_eq!(kind, SchemaErrorKind::InvalidValue, "{lit}: {message}");
        }
        let (kind, _, col, pointer, message) = at("{\"a/b\": {\"const\": 1e-400}}");
        assert_eq!((kind, col, pointer.as_str()), (SchemaErrorKind::InvalidValue, 19, "/a~1b/const"), "{message}");
        assert!(message.contains("reads it as `0`"), "{message}");
        // Beyond the double range: at the number (it was at its last character, with the root's pointer).
        let (kind, line, col, pointer, message) = at("{\n  \"properties\": {\"a\": {\"maximum\": 1e400}}\n}");
        assert_eq!((kind, line, col, pointer.as_str()), (SchemaErrorKind::InvalidJson, 2, 35, "/properties/a/maximum"));
        assert!(message.contains("beyond the range of a double"), "{message}");
        // An integer written with a fraction or an exponent is held to its value too (they were kept, and read as
        // the double below: `exclusiveMaximum: 9007199254740993.0` refused 9007199254740992, and an `enum` of both
        // spellings lost a member in the bundle).
        for lit in ["9007199254740993.0", "9.007199254740993e15", "90071992547409930e-1", "1.8446744073709551615e19"] {
            let (kind, .., message) = at(&format!("{{\"exclusiveMaximum\": {lit}}}"));
            assert_eq!(kind, SchemaErrorKind::InvalidValue, "{lit}: {message}");
            assert!(message.contains("an integer no double holds"), "{lit}: {message}");
        }
        // What every double holds exactly, what every output writes as written (`1e23`, `1e300`), and fractions
        // (read as the nearest double by every parser), are kept.
        let kept = ["9007199254740992", "-9007199254740992", "18446744073709551616", "1e300", "9007199254740992.0"];
        for ok in kept.into_iter().chain(["1e23", "-1e308", "9.007199254740992e15", "0.1", "0.0", "-0", "5e-324"]) {
            let text = format!("{{\"const\": {ok}, \"s\": \"9007199254740993\"}}");
            assert!(parse(&text).is_ok(), "{ok}");
        }
    }

    #[test]
    fn a_repeated_key_is_refused_at_its_second_occurrence() {
        let text = "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"a\": [{\"x\": 1, \"x\": 2}]\n  }\n}";
        let r = parse(text).expect_err("repeated key");
        assert_eq!(r.pointer, "/properties/a/0/x");
        assert_eq!(r.line, 4);
        assert_eq!(&text.lines().nth(3).expect("line 4")[..r.col - 1], "    \"a\": [{\"x\": 1, ");
        assert!(r.message.contains("the key `x` appears twice"), "{}", r.message);
        // A key with escaped quotes and backslashes: the column is its opening quote's.
        let text = r#"{"k\"\\": 1, "k\"\\": 2}"#;
        let r = parse(text).expect_err("repeated key");
        assert_eq!((r.line, r.col, r.pointer.as_str()), (1, 14, "/k\"\\"));
        let r = parse(r#"{"a/b~": 1, "a/b~": 2}"#).expect_err("repeated key");
        assert_eq!((r.pointer.as_str(), r.col), ("/a~1b~0", 13));
        assert!(r.message.contains("the key `a/b~` appears twice"), "{}", r.message);
        // Whitespace between the key and its colon (serde_json's position is past it), an escaped spelling of
        // the same key, a repetition inside a repeated member's first value (that one comes first).
        let r = parse("{\"ab\": 1, \"ab\"  \n :2}").expect_err("repeated key");
        assert_eq!((r.line, r.col, r.pointer.as_str()), (1, 11, "/ab"));
        let r = parse(r#"{"ab": 1, "\u0061b": 2}"#).expect_err("repeated key");
        assert_eq!((r.col, r.pointer.as_str()), (11, "/ab"));
        let r = parse(r#"{"a": {"x": 1, "x": 2}, "a": 3}"#).expect_err("repeated key");
        assert_eq!((r.col, r.pointer.as_str()), (16, "/a/x"));
        // The same key in two objects is no repetition.
        assert!(parse(r#"{"a": {"k": 1}, "b": {"k": 1}, "k": 0}"#).is_ok());
    }
}
