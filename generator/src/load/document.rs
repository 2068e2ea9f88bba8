//! A schema file's text, parsed into a `Value` as `serde_json` parses it, except that an object with a repeated
//! key is refused: parsers disagree on which member a repeated key keeps (`serde_json` and `JSON.parse` keep the
//! last, others the first or refuse the text), so a schema file with one does not say one thing.

use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use crate::diag::{line_col, push_ptr, SchemaError, SchemaErrorKind};

/// Why a text is not a schema document: where (1-based line and column, in characters), the JSON Pointer of a
/// repeated member (empty for a syntax error), and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    pub line: usize,
    pub col: usize,
    pub pointer: String,
    pub message: String,
}

impl Refused {
    /// The diagnostic, for the file at `file` (`schema.invalid-json`).
    pub(crate) fn at(self, file: &std::path::Path) -> SchemaError {
        let Refused { line, col, pointer, message } = self;
        SchemaError { kind: SchemaErrorKind::InvalidJson, file: file.to_path_buf(), line, col, pointer, message }
    }
}

/// A schema file's bytes as its text: UTF-8 (RFC 8259), refused at the first byte that is not.
pub(crate) fn text(bytes: Vec<u8>) -> Result<String, Refused> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let (line, col) = line_col(std::str::from_utf8(&bytes[..at]).unwrap_or_default(), at);
        let byte = bytes.get(at).copied().unwrap_or_default();
        Refused {
            line,
            col,
            pointer: String::new(),
            message: format!("not UTF-8: byte 0x{byte:02x} at offset {at} (JSON text is UTF-8)"),
        }
    })
}

/// Parses one schema file's text (a leading UTF-8 byte order mark is not part of it: see the loader).
pub(crate) fn parse(text: &str) -> Result<Value, Refused> {
    let repeated = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = Doc { repeated: &repeated }.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    let e = match parsed {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let at = byte_offset(text, e.line(), e.column());
    Err(match repeated.into_inner() {
        // The tokens were gathered on the way out, innermost first.
        Some(tokens) => {
            // serde_json stopped on the repeated key's closing quote: the diagnostic points at its opening one.
            let (line, col) = line_col(text, at.map_or(0, |close| key_start(text.as_bytes(), close)));
            let key = tokens.first().cloned().unwrap_or_default();
            let pointer = tokens.iter().rev().fold(String::new(), |p, t| push_ptr(&p, t));
            Refused {
                line,
                col,
                pointer,
                message: format!(
                    "the key `{key}` appears twice in one object; JSON parsers disagree on which member a repeated \
                     key keeps, so say it once"
                ),
            }
        }
        None => {
            let (line, col) = at.map_or((0, 0), |at| line_col(text, at));
            Refused { line, col, pointer: String::new(), message: parse_error_message(&e) }
        }
    })
}

/// What a schema file serde_json cannot read is told: JSON that the grammar allows but serde_json does not read
/// (nesting past its 128 levels, a number beyond the double range) is named as such, not as invalid JSON.
fn parse_error_message(e: &serde_json::Error) -> String {
    let what = crate::engine::parse_error_what(e);
    let at = format!("at line {} column {}", e.line(), e.column());
    match what.as_str() {
        "recursion limit exceeded" => {
            format!("the document nests deeper than 128 levels, more than wiregen reads ({at})")
        }
        "number out of range" => {
            format!("a number beyond the range of a double (about ±1.8e308), which no checker holds exactly ({at})")
        }
        _ => format!("not valid JSON: {e}"),
    }
}

/// The byte offset of `serde_json`'s position (1-based line, 1-based column in bytes; line 0: none), so that the
/// diagnostic gives the column in characters as every other one does.
fn byte_offset(text: &str, line: usize, byte_col: usize) -> Option<usize> {
    let before = line.checked_sub(1)?;
    let start: usize = text.split_inclusive('\n').take(before).map(str::len).sum();
    Some(start + byte_col.saturating_sub(1))
}

/// The offset of the quote that opens the string whose closing quote is at `close` (a quote is a closing or
/// opening one when an even number of backslashes precedes it).
fn key_start(b: &[u8], close: usize) -> usize {
    let unescaped = |i: usize| b[..i].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0;
    (0..close.min(b.len())).rev().find(|&i| b[i] == b'"' && unescaped(i)).unwrap_or(close)
}

/// The seed and visitor that build the `Value`, noting the path to a repeated key.
#[derive(Clone, Copy)]
struct Doc<'r> {
    /// Set at a repeated key (to that key), then each enclosing member's token is added on the way out.
    repeated: &'r RefCell<Option<Vec<String>>>,
}

impl Doc<'_> {
    /// `e`, after adding `token` to the path of a repeated key below it (when that is what `e` is).
    fn below<E>(self, token: &str, e: E) -> E {
        if let Some(tokens) = self.repeated.borrow_mut().as_mut() {
            tokens.push(token.to_string());
        }
        e
    }
}

impl<'de> DeserializeSeed<'de> for Doc<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Doc<'_> {
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
        loop {
            match seq.next_element_seed(self) {
                Ok(Some(v)) => items.push(v),
                Ok(None) => return Ok(Value::Array(items)),
                Err(e) => return Err(self.below(&items.len().to_string(), e)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match members.entry(key) {
                Entry::Occupied(o) => {
                    *self.repeated.borrow_mut() = Some(vec![o.key().clone()]);
                    return Err(A::Error::custom("a repeated key"));
                }
                Entry::Vacant(slot) => {
                    let v = map.next_value_seed(self).map_err(|e| self.below(slot.key(), e))?;
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
            r#"{"a": [1, -2, 3.5, 1e400, 18446744073709551615, -9223372036854775808, 0.1], "b": {"c": null}}"#,
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
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(&deep).expect_err("too deep").message.starts_with("the document nests deeper than 128 levels"));
        let huge = parse("{\"const\": 1e400}").expect_err("out of range").message;
        assert!(huge.starts_with("a number beyond the range of a double"), "{huge}");
        assert!(parse("{} x").is_err());
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
        assert_eq!(r.pointer, "/a~1b~0");
        // The same key in two objects is no repetition.
        assert!(parse(r#"{"a": {"k": 1}, "b": {"k": 1}, "k": 0}"#).is_ok());
    }
}
