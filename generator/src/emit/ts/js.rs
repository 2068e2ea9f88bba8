//! Pieces of TypeScript source that are safe by construction: literals through a JSON/JS escaper, doc comments
//! that no description can close early, identifiers and property keys that are checked, never spliced.

use std::fmt::Write as _;

use super::super::EmitError;

/// A piece of TypeScript source. Only this module and [`super::zod`] build one, from checked identifiers and
/// escaped literals, so schema text can never reach the output unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Code(String);

impl Code {
    /// Joins pieces with a separator.
    pub fn join(parts: &[Code], sep: &str) -> Code {
        Code(parts.iter().map(|c| c.0.as_str()).collect::<Vec<_>>().join(sep))
    }

    /// Source text built by this module's callers from other pieces (`format!` over [`Code`] values and fixed
    /// TypeScript syntax only).
    pub(super) fn from_pieces(s: String) -> Code {
        Code(s)
    }

    /// The source text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Code> for minijinja::Value {
    fn from(c: Code) -> Self {
        minijinja::Value::from_safe_string(c.0)
    }
}

/// Makes JSON text a valid JavaScript literal everywhere: JSON allows U+2028 and U+2029 raw in strings, older
/// JavaScript did not, and they are line terminators to every other tool; escape them.
pub(crate) fn js_safe(json: String) -> String {
    json.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
}

/// A string literal (`"..."`) holding exactly `s`: JSON escaping (quotes, backslashes, control characters), plus
/// U+2028/U+2029. Backticks and `${` are plain characters in a double-quoted literal.
pub(crate) fn string_lit(s: &str) -> Code {
    Code(js_safe(serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""))))
}

/// A pattern's matcher: a call of the runtime's `matcher` (named with `prefix`, `$` in the standalone runtime) with
/// the `u`-mode source and the program that matches it in linear time ([`crate::pattern::linear`]; the template
/// `matcher.ts` reads the numbers as this writes them).
pub(crate) fn matcher_lit(prefix: &str, p: &crate::ir::Pattern) -> String {
    use crate::pattern::linear::{Look, Op};
    let mut ops = Vec::with_capacity(p.linear.ops.len() * 3);
    for op in &p.linear.ops {
        let look = |l: &Look| match l {
            Look::Start => 0,
            Look::End => 1,
            Look::WordBoundary => 2,
            Look::NotWordBoundary => 3,
        };
        ops.extend(match op {
            Op::Class { class, next } => [0, *class, *next],
            Op::Split(a, b) => [1, *a, *b],
            Op::Look { look: l, next } => [2, look(l), *next],
            Op::Match => [3, 0, 0],
        });
    }
    let classes: Vec<String> = p
        .linear
        .classes
        .iter()
        .map(|c| {
            let mut nums = vec![u32::from(c.surrogates)];
            nums.extend(c.ranges.iter().flat_map(|&(lo, hi)| [lo, hi]));
            format!("[{}]", join_numbers(&nums))
        })
        .collect();
    format!(
        "{prefix}matcher({}, {}, {}, [{}], [{}])",
        string_lit(&p.js),
        p.linear.native_max,
        p.linear.start,
        join_numbers(&ops),
        classes.join(", ")
    )
}

fn join_numbers(nums: &[u32]) -> String {
    let mut out = String::with_capacity(nums.len() * 4);
    for (i, n) in nums.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{n}");
    }
    out
}

/// Any JSON value as a JavaScript literal (arrays and objects included), escaped like [`string_lit`].
pub(crate) fn json_lit(v: &serde_json::Value) -> Code {
    let mut out = String::new();
    write_json_lit(v, &mut out);
    Code(js_safe(out))
}

/// JSON text, except that a key `__proto__` is written computed (`["__proto__"]: ...`): in an object literal the
/// plain (or quoted) key sets the object's prototype instead of making a property, so `{"__proto__": 1}` would be
/// the empty object.
fn write_json_lit(v: &serde_json::Value, out: &mut String) {
    let text = |x: &serde_json::Value| serde_json::to_string(x).unwrap_or_else(|_| String::from("null"));
    match v {
        serde_json::Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_lit(x, out);
            }
            out.push(']');
        }
        serde_json::Value::Object(members) => {
            out.push('{');
            for (i, (k, x)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if k == "__proto__" {
                    out.push_str("[\"__proto__\"]");
                } else {
                    out.push_str(&text(&serde_json::Value::String(k.clone())));
                }
                out.push(':');
                write_json_lit(x, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&text(scalar)),
    }
}

/// A number literal; non-finite numbers cannot be written.
///
/// # Errors
/// [`EmitError::Unsupported`] for NaN or an infinity.
pub(crate) fn number_lit(n: f64) -> Result<Code, EmitError> {
    if !n.is_finite() {
        return Err(EmitError::Unsupported(format!("the number {n} has no TypeScript literal")));
    }
    // Rust's shortest round-trip formatting (`0`, `0.012`, `1e-7`) is valid JavaScript.
    Ok(Code(format!("{n:?}").trim_end_matches(".0").to_string()))
}

/// Words that cannot name a binding in a module (strict mode), nor a type.
const RESERVED: &[&str] = &[
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "new",
    "null",
    "return",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
    "let",
    "static",
    "implements",
    "interface",
    "package",
    "private",
    "protected",
    "public",
    "await",
    "arguments",
    "eval",
    "any",
    "boolean",
    "number",
    "string",
    "symbol",
    "never",
    "unknown",
    "object",
    "undefined",
    "bigint",
];

/// Global types of TypeScript's standard library that are types only, or generic types a module writes in its
/// annotations (`Record<K, V>`, `Readonly<T>`, `Map<K, V>`, `Set<T>`, ...): a module that declares a type of the
/// same name hides the global type from its own code, which then does not type-check. The global values (`String`,
/// `Array`, `Object`, `Error`, ...) are not here: a type alias does not hide a value, and wiregen's modules use
/// those as values only (a wiregen case of `tests/jsts/wiregen-cases.json` type-checks types named after them).
const GLOBAL_TYPES: &[&str] = &[
    "ArrayLike",
    "AsyncGenerator",
    "AsyncIterable",
    "AsyncIterableIterator",
    "AsyncIterator",
    "Awaited",
    "Capitalize",
    "ConstructorParameters",
    "Exclude",
    "Extract",
    "Generator",
    "InstanceType",
    "Iterable",
    "IterableIterator",
    "Iterator",
    "IteratorResult",
    "Lowercase",
    "Map",
    "NoInfer",
    "NonNullable",
    "Omit",
    "OmitThisParameter",
    "Parameters",
    "Partial",
    "Pick",
    "PromiseLike",
    "PropertyDescriptor",
    "PropertyKey",
    "Readonly",
    "ReadonlyArray",
    "ReadonlyMap",
    "ReadonlySet",
    "Record",
    "Required",
    "ReturnType",
    "Set",
    "TemplateStringsArray",
    "ThisParameterType",
    "ThisType",
    "Uncapitalize",
    "Uppercase",
    "WeakMap",
    "WeakSet",
];

/// Global values of JavaScript (ES2022 and the few of Node and browsers a module may reach) but those that are
/// [`GLOBAL_TYPES`] too (`Map`, `Set`, ...), which [`ident`] refuses already: a module that declares a binding of the
/// same name (a Zod schema named `Object` by `x-zod-name`, a validator `isFinite`) hides the global from its own
/// code, which then fails to type-check or misbehaves.
const GLOBAL_VALUES: &[&str] = &[
    "AggregateError",
    "Array",
    "ArrayBuffer",
    "Atomics",
    "BigInt",
    "BigInt64Array",
    "BigUint64Array",
    "Boolean",
    "DataView",
    "Date",
    "Error",
    "EvalError",
    "FinalizationRegistry",
    "Float32Array",
    "Float64Array",
    "Function",
    "Infinity",
    "Int16Array",
    "Int32Array",
    "Int8Array",
    "Intl",
    "JSON",
    "Math",
    "NaN",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RangeError",
    "ReferenceError",
    "Reflect",
    "RegExp",
    "SharedArrayBuffer",
    "String",
    "Symbol",
    "SyntaxError",
    "TextDecoder",
    "TextEncoder",
    "TypeError",
    "URIError",
    "Uint16Array",
    "Uint32Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "WeakRef",
    "console",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "globalThis",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "queueMicrotask",
    "structuredClone",
    "undefined",
    "unescape",
];

/// Why `s` cannot be the name of a type (`type_name`) or of a value binding the module declares (a Zod schema, a
/// validator function), if it cannot: it is no ASCII identifier or a reserved word, or it would hide a global
/// type ([`GLOBAL_TYPES`]) or, for a value, a global value ([`GLOBAL_VALUES`]). With the reason, the keyword that
/// renames such a type.
pub(crate) fn unusable(s: &str, type_name: bool) -> Option<(String, Option<&'static str>)> {
    if !type_name && GLOBAL_VALUES.contains(&s) {
        let why = format!("`{s}` is a global value of JavaScript, which the module's own code would no longer reach");
        return Some((why, Some("rename the type (`x-zod-name`, `x-ts-name`)")));
    }
    if GLOBAL_TYPES.contains(&s) {
        let why = format!("`{s}` is a global type of TypeScript, which the module's own code would no longer reach");
        return Some((why, Some("rename the type (`x-ts-name`)")));
    }
    let word = is_identifier_name(s) && !RESERVED.contains(&s);
    (!word).then(|| (format!("`{s}` is not a usable TypeScript identifier"), None))
}

/// An identifier for a value binding the module declares (a Zod schema, a validator function): [`ident`], and no
/// global value it would hide ([`GLOBAL_VALUES`]).
///
/// # Errors
/// [`EmitError::Unsupported`] as [`unusable`] says.
pub(crate) fn value_ident(s: &str) -> Result<Code, EmitError> {
    match unusable(s, false) {
        Some((why, rename)) => Err(unsupported(why, rename)),
        None => Ok(Code(s.to_string())),
    }
}

fn unsupported(why: String, rename: Option<&str>) -> EmitError {
    EmitError::Unsupported(match rename {
        Some(r) => format!("{why}; {r}"),
        None => why,
    })
}

fn is_identifier_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// An identifier for a binding or a type, checked (ASCII identifier, not a reserved word, no global type it would
/// hide: [`GLOBAL_TYPES`]).
///
/// # Errors
/// [`EmitError::Unsupported`] as [`unusable`] says.
pub(crate) fn ident(s: &str) -> Result<Code, EmitError> {
    match unusable(s, true) {
        Some((why, rename)) => Err(unsupported(why, rename)),
        None => Ok(Code(s.to_string())),
    }
}

/// A property key in an object literal or type: bare when it is an identifier name, else a string literal.
///
/// # Errors
/// [`EmitError::Unsupported`] for `__proto__`, which an object literal would take as the prototype.
pub(crate) fn prop_key(s: &str) -> Result<Code, EmitError> {
    if s == "__proto__" {
        return Err(EmitError::Unsupported(
            "a property named `__proto__` cannot be written in an object literal".into(),
        ));
    }
    Ok(if is_identifier_name(s) { Code(s.to_string()) } else { string_lit(s) })
}

/// A property key in a type literal: bare when it is an identifier name, else a string literal (`"__proto__"` is an
/// ordinary property in a type).
pub(crate) fn type_key(s: &str) -> Code {
    if is_identifier_name(s) && s != "__proto__" {
        Code(s.to_string())
    } else {
        string_lit(s)
    }
}

/// A JSDoc comment holding `text`, indented by `indent` spaces (for the lines after the first).
///
/// Nothing in `text` can end the comment or forge a tag: `*/` becomes `*\/`, every line break (`\r\n`, `\r`, `\n`,
/// U+2028, U+2029) starts a new ` * ` line, and a line starting with `@` gets a backslash (TSDoc's escape), so a
/// description cannot declare `@deprecated` or `@type`.
/// [`jsdoc`] of a schema with `deprecated: true` when `deprecated`: its text, then the `@deprecated` tag, which
/// editors show by striking the name through.
pub(crate) fn jsdoc_marked(text: &str, deprecated: bool, indent: usize) -> Code {
    if deprecated {
        jsdoc(text, indent).tagged("@deprecated", indent)
    } else {
        jsdoc(text, indent)
    }
}

impl Code {
    /// A doc comment of [`jsdoc`] with a block tag line added last, after a blank line.
    fn tagged(self, tag: &str, indent: usize) -> Code {
        let pad = " ".repeat(indent);
        let body = match self.0.strip_prefix("/** ").and_then(|b| b.strip_suffix(" */")) {
            Some(line) => format!("/**\n{pad} * {line}\n"),
            None => self.0.strip_suffix(&format!("{pad} */")).unwrap_or(&self.0).to_string(),
        };
        Code(format!("{body}{pad} *\n{pad} * {tag}\n{pad} */"))
    }
}

pub(crate) fn jsdoc(text: &str, indent: usize) -> Code {
    let normalized = text.replace("\r\n", "\n").replace(['\r', '\u{2028}', '\u{2029}'], "\n").replace("*/", "*\\/");
    let lines: Vec<String> = normalized
        .trim()
        .split('\n')
        .map(|l| {
            // A tag starts at an `@` after whitespace anywhere on a line, not only first (TypeScript took "which
            // is @deprecated" in a description for the tag): each such `@` is escaped.
            let mut out = String::with_capacity(l.len());
            let mut after_space = true;
            for c in l.trim_end().chars() {
                if c == '@' && after_space {
                    out.push('\\');
                }
                out.push(c);
                after_space = c.is_whitespace();
            }
            out
        })
        .collect();
    let pad = " ".repeat(indent);
    if lines.len() == 1 {
        let l = &lines[0];
        // A line ending in `*` would still be safe before ` */`; keep the usual spacing.
        return Code(format!("/** {l} */"));
    }
    let mut out = String::from("/**\n");
    for l in &lines {
        if l.is_empty() {
            out.push_str(&format!("{pad} *\n"));
        } else {
            out.push_str(&format!("{pad} * {l}\n"));
        }
    }
    out.push_str(&format!("{pad} */"));
    Code(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_literals_escape_everything_that_matters() {
        assert_eq!(string_lit("a\"b\\c").as_str(), r#""a\"b\\c""#);
        assert_eq!(string_lit("x\u{2028}y\u{2029}").as_str(), r#""x\u2028y\u2029""#);
        assert_eq!(string_lit("`${x}`").as_str(), "\"`${x}`\"");
        assert_eq!(string_lit("\n\t\u{0}").as_str(), r#""\n\t\u0000""#);
    }

    #[test]
    fn doc_comments_cannot_be_closed_or_tagged() {
        assert_eq!(jsdoc("Ends */ here", 0).as_str(), "/** Ends *\\/ here */");
        let d = jsdoc("one\u{2028}@deprecated two\r\nthree\rfour", 2);
        assert_eq!(d.as_str(), "/**\n   * one\n   * \\@deprecated two\n   * three\n   * four\n   */");
        assert!(!d.as_str()[3..d.as_str().len() - 2].contains("*/"));
        // Not only first on a line: any `@` after whitespace starts a tag; one inside a word does not.
        let d = jsdoc("Replaces old, which is @deprecated; mail a@b.c\n  @param x", 0);
        assert_eq!(d.as_str(), "/**\n * Replaces old, which is \\@deprecated; mail a@b.c\n *   \\@param x\n */");
    }

    #[test]
    fn identifiers_and_keys() {
        assert!(ident("sessionTextEventSchema").is_ok());
        assert!(ident("class").is_err());
        assert!(ident("Record").is_err() && ident("Map").is_err() && ident("RecordEntry").is_ok());
        assert!(ident("Object").is_ok() && value_ident("Object").is_err() && value_ident("isFinite").is_err());
        assert!(value_ident("objectSchema").is_ok() && value_ident("class").is_err());
        assert!(ident("a-b").is_err());
        assert_eq!(prop_key("toolName").expect("key").as_str(), "toolName");
        assert_eq!(prop_key("tool-name").expect("key").as_str(), "\"tool-name\"");
        assert!(prop_key("__proto__").is_err());
    }

    #[test]
    fn numbers() {
        assert_eq!(number_lit(0.0).expect("finite").as_str(), "0");
        assert_eq!(number_lit(0.5).expect("finite").as_str(), "0.5");
        assert!(number_lit(f64::NAN).is_err());
    }
}
