//! ECMA-262 regular expressions (Unicode mode, as JSON Schema's `pattern` means) translated to the syntax of
//! Rust's `regex` crate, or refused.
//!
//! JSON Schema says a pattern is an ECMA-262 regular expression. [`translate`] gives it twice: for the engine and
//! the Rust crate in the syntax of Rust's `regex` crate, and for the JavaScript outputs (a `u`-mode `RegExp`) as
//! written except that every `\p{..}`/`\P{..}` class is spelled out as the code point ranges of the `regex`
//! crate's Unicode tables. A General_Category is whatever the runtime's Unicode version says (Rust's `regex` and
//! each JavaScript engine ship their own, and a code point assigned in between would get two verdicts), so both
//! sides take it from the one table. The Rust translation is exact for what it accepts: character classes are
//! spelled out (`\d` is `[0-9]`, `\w` is `[0-9A-Za-z_]`, `\s` is ECMAScript's white space and line terminators,
//! `.` excludes the four line terminators), every literal is written as `\x{..}`, groups become non-capturing.
//! What has no exact counterpart is refused with a reason: lookaround, backreferences, lone surrogates, Unicode
//! properties other than General_Category values, and anything ECMAScript itself rejects in Unicode mode
//! (identity escapes of letters, lone braces).
//!
//! Matching is a yes/no question here (`is_match`), so the difference between backtracking and automata does
//! not show in the verdicts: without backreferences and lookaround both recognise the same language. It shows in
//! the time JavaScript's backtracking `RegExp` can take, which [`backtracking`] bounds.

use std::fmt::Write as _;

pub(crate) mod backtracking;
pub mod linear;

/// Why a pattern is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    /// Character offset in the pattern where the problem starts.
    pub at: usize,
    /// What is wrong.
    pub message: String,
}

/// The code points (sorted inclusive ranges) of one character class written in the `regex` crate's syntax, as
/// the translation writes one; `None` when the text is not a class there.
fn class_ranges(text: &str) -> Option<Vec<(u32, u32)>> {
    use regex_syntax::hir::{Class, HirKind};
    match regex_syntax::ParserBuilder::new().build().parse(text).ok()?.into_kind() {
        HirKind::Class(Class::Unicode(c)) => {
            Some(c.ranges().iter().map(|r| (u32::from(r.start()), u32::from(r.end()))).collect())
        }
        HirKind::Class(Class::Bytes(c)) => {
            Some(c.ranges().iter().map(|r| (u32::from(r.start()), u32::from(r.end()))).collect())
        }
        HirKind::Literal(l) => {
            let mut chars = std::str::from_utf8(&l.0).ok()?.chars();
            let c = u32::from(chars.next()?);
            chars.next().is_none().then(|| vec![(c, c)])
        }
        _ => None,
    }
}

/// How many times a repetition of the `regex` crate's syntax tree matches its body: at least, and at most (`None`:
/// no bound).
fn repetition(kind: &regex_syntax::ast::RepetitionKind) -> (u32, Option<u32>) {
    use regex_syntax::ast::{RepetitionKind as K, RepetitionRange as R};
    match kind {
        K::ZeroOrOne => (0, Some(1)),
        K::ZeroOrMore => (0, None),
        K::OneOrMore => (1, None),
        K::Range(R::Exactly(n)) => (*n, Some(*n)),
        K::Range(R::AtLeast(n)) => (*n, None),
        K::Range(R::Bounded(m, n)) => (*m, Some(*n)),
    }
}

/// ECMAScript's `\s`: WhiteSpace and LineTerminator code points.
const JS_SPACE: &str =
    r"\x{9}-\x{D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
const JS_DIGIT: &str = r"0-9";
const JS_WORD: &str = r"0-9A-Za-z_";
/// ECMAScript's line terminators, which `.` does not match.
const JS_LINE_TERMINATORS: &str = r"\x{A}\x{D}\x{2028}\x{2029}";

/// General_Category values ECMAScript accepts in `\p{..}` (long and short names), except `Cs` (surrogates, which
/// a Rust string cannot hold) and `Cn` (unassigned, which depends most on the Unicode version).
const GENERAL_CATEGORIES: &[&str] = &[
    "L",
    "Letter",
    "Lu",
    "Uppercase_Letter",
    "Ll",
    "Lowercase_Letter",
    "Lt",
    "Titlecase_Letter",
    "LC",
    "Cased_Letter",
    "Lm",
    "Modifier_Letter",
    "Lo",
    "Other_Letter",
    "M",
    "Mark",
    "Combining_Mark",
    "Mn",
    "Nonspacing_Mark",
    "Mc",
    "Spacing_Mark",
    "Me",
    "Enclosing_Mark",
    "N",
    "Number",
    "Nd",
    "Decimal_Number",
    "digit",
    "Nl",
    "Letter_Number",
    "No",
    "Other_Number",
    "P",
    "Punctuation",
    "punct",
    "Pc",
    "Connector_Punctuation",
    "Pd",
    "Dash_Punctuation",
    "Ps",
    "Open_Punctuation",
    "Pe",
    "Close_Punctuation",
    "Pi",
    "Initial_Punctuation",
    "Pf",
    "Final_Punctuation",
    "Po",
    "Other_Punctuation",
    "S",
    "Symbol",
    "Sm",
    "Math_Symbol",
    "Sc",
    "Currency_Symbol",
    "Sk",
    "Modifier_Symbol",
    "So",
    "Other_Symbol",
    "Z",
    "Separator",
    "Zs",
    "Space_Separator",
    "Zl",
    "Line_Separator",
    "Zp",
    "Paragraph_Separator",
    "C",
    "Other",
    "Cc",
    "Control",
    "cntrl",
    "Cf",
    "Format",
    "Co",
    "Private_Use",
    // The unassigned code points of the `regex` crate's tables, spelled out like every class: `C` and `\P{L}`,
    // which hold them, were accepted while `Cn` was refused (helper 92).
    "Cn",
    "Unassigned",
];

/// An ECMA-262 pattern in the two syntaxes the outputs compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated {
    /// For Rust's `regex` crate.
    pub rust: String,
    /// For JavaScript's `RegExp` with the `u` flag: the source with its property classes spelled out.
    pub js: String,
}

/// Translates an ECMA-262 pattern (Unicode mode) to an equivalent `regex` crate pattern, and to a JavaScript one
/// whose property classes hold the `regex` crate's code points.
///
/// # Errors
/// A construct with no exact counterpart, or a pattern ECMAScript rejects in Unicode mode.
pub fn translate(source: &str) -> Result<Translated, PatternError> {
    let chars: Vec<char> = source.chars().collect();
    let mut p = Parser { chars: &chars, pos: 0, out: String::new(), names: Vec::new(), properties: Vec::new() };
    p.disjunction(0)?;
    if p.pos < chars.len() {
        return Err(p.err(format!("unexpected `{}`", chars[p.pos])));
    }
    let mut js = String::with_capacity(source.len());
    let mut at = 0;
    for prop in &p.properties {
        js.extend(&chars[at..prop.start]);
        js.push_str(&prop.js().map_err(|message| PatternError { at: prop.start, message })?);
        at = prop.end;
    }
    js.extend(&chars[at..]);
    Ok(Translated { rust: p.out, js })
}

/// Whether a pattern in the `regex` crate's syntax (a [`Translated::rust`]) matches every string: it matches the
/// empty text at the start of any (`""`, `^`, `a*`, `(?:)`, `[^]*`) or at the end of any (`$`, `x*$`, `(a|)$`),
/// since a pattern may match anywhere in the string. Sound, not complete: `true` only when that is certain (a word
/// boundary on the way, or an anchor of the other end, says `false`, and so does a pattern that does not parse).
pub fn matches_every_string(rust: &str) -> bool {
    use regex_syntax::hir::{Hir, HirKind, Look};
    /// Whether `h` matches the empty text at a position where, of all the looks, only `at` surely holds (the
    /// start of a text that may not end there, or the end of one that may not start there).
    fn empty_where(h: &Hir, at: Look) -> bool {
        match h.kind() {
            HirKind::Empty => true,
            HirKind::Literal(_) | HirKind::Class(_) => false,
            HirKind::Look(look) => *look == at,
            HirKind::Repetition(r) => r.min == 0 || empty_where(&r.sub, at),
            HirKind::Capture(c) => empty_where(&c.sub, at),
            HirKind::Concat(parts) => parts.iter().all(|p| empty_where(p, at)),
            HirKind::Alternation(parts) => parts.iter().any(|p| empty_where(p, at)),
        }
    }
    regex_syntax::parse(rust).is_ok_and(|h| empty_where(&h, Look::Start) || empty_where(&h, Look::End))
}

struct Parser<'a> {
    chars: &'a [char],
    pos: usize,
    out: String,
    /// The group names seen so far: JavaScript refuses a name used twice (Node 20's V8 even in two alternatives).
    names: Vec<String>,
    /// The `\p{..}`/`\P{..}` escapes, in order.
    properties: Vec<Property>,
}

/// A property escape of the source: where it is and what the JavaScript pattern writes instead.
struct Property {
    /// Character offsets of the escape (from the backslash to past the `}`).
    start: usize,
    end: usize,
    /// The General_Category value.
    value: String,
    /// `\P`.
    negated: bool,
    /// Inside a `[..]` class, where the replacement is a class body.
    in_class: bool,
}

impl Property {
    /// The escape as JavaScript writes it with the `regex` crate's code points: `[ranges]` or `[^ranges]` alone, the
    /// ranges (or their complement, for `\P`) inside a class.
    fn js(&self) -> Result<String, String> {
        let text = format!(r"\p{{{}}}", self.value);
        // A category of one code point (`Zl`, `Zp`) is a literal in the `regex` crate's tree: `class_ranges` reads
        // it as its one range (it was refused as "not a class").
        let Some(mut ranges) = class_ranges(&text) else {
            return Err(match regex_syntax::ParserBuilder::new().build().parse(&text) {
                Err(e) => format!("Rust's regex crate cannot read `{text}`: {e}"),
                Ok(_) => format!("`{text}` is not a class of code points in Rust's regex crate"),
            });
        };
        // The surrogates are in `Other` (`Cs`) for JavaScript, which can hold a lone one; a Rust `char` cannot, so
        // the table leaves them out. They go back in, so a lone surrogate stays what JavaScript says it is.
        if matches!(self.value.as_str(), "C" | "Other") {
            ranges.push((0xD800, 0xDFFF));
            ranges.sort_unstable();
        }
        let body = |ranges: &[(u32, u32)]| {
            let mut out = String::new();
            for &(lo, hi) in ranges {
                let _ = write!(out, r"\u{{{lo:X}}}");
                if hi > lo {
                    let _ = write!(out, r"-\u{{{hi:X}}}");
                }
            }
            out
        };
        Ok(match (self.in_class, self.negated) {
            (false, false) => format!("[{}]", body(&ranges)),
            (false, true) => format!("[^{}]", body(&ranges)),
            (true, false) => body(&ranges),
            (true, true) => body(&complement(&ranges)),
        })
    }
}

/// The code points of `0..=0x10FFFF` (surrogates included: JavaScript strings can hold them) outside `ranges`
/// (sorted, not overlapping).
fn complement(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut next = 0u32;
    for &(lo, hi) in ranges {
        if lo > next {
            out.push((next, lo - 1));
        }
        next = next.max(hi + 1);
    }
    if next <= 0x10FFFF {
        out.push((next, 0x10FFFF));
    }
    out
}

/// What an escape inside or outside a class stands for.
enum Escaped {
    /// One code point.
    Char(char),
    /// A class body (without brackets), e.g. `0-9`, and whether it is negated.
    Class(String, bool),
}

impl Parser<'_> {
    fn err(&self, message: impl Into<String>) -> PatternError {
        PatternError { at: self.pos, message: message.into() }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn disjunction(&mut self, depth: usize) -> Result<(), PatternError> {
        if depth > 64 {
            return Err(self.err("groups nest too deeply"));
        }
        self.alternative(depth)?;
        while self.eat('|') {
            self.out.push('|');
            self.alternative(depth)?;
        }
        Ok(())
    }

    fn alternative(&mut self, depth: usize) -> Result<(), PatternError> {
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            self.term(depth)?;
        }
        Ok(())
    }

    fn term(&mut self, depth: usize) -> Result<(), PatternError> {
        let start = self.pos;
        let c = self.peek().ok_or_else(|| self.err("unexpected end"))?;
        // Assertions: never quantified in Unicode mode.
        match c {
            '^' | '$' => {
                self.pos += 1;
                self.out.push(c);
                return self.no_quantifier();
            }
            '\\' if matches!(self.peek_at(1), Some('b' | 'B')) => {
                let neg = self.peek_at(1) == Some('B');
                self.pos += 2;
                self.out.push_str(if neg { r"(?-u:\B)" } else { r"(?-u:\b)" });
                return self.no_quantifier();
            }
            '(' if self.peek_at(1) == Some('?') && self.lookaround() => {
                return Err(self.err("lookahead and lookbehind have no equivalent in Rust's regex crate"));
            }
            _ => {}
        }
        match c {
            '(' => {
                self.pos += 1;
                if self.eat('?') {
                    if self.eat(':') {
                    } else if self.eat('<') {
                        // A named group: the name does not matter for matching, but JavaScript refuses the whole
                        // pattern (and so the module holding it) for a name that is not an identifier or is used
                        // twice. Names are held to ASCII, where both sides agree on what an identifier is.
                        let name_start = self.pos;
                        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
                            self.pos += 1;
                        }
                        let name: String = self.chars[name_start..self.pos].iter().collect();
                        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) || !self.eat('>') {
                            self.pos = name_start;
                            return Err(self.err(
                                "a group name is an identifier of ASCII letters, digits (not first), `_` and `$`",
                            ));
                        }
                        if self.names.contains(&name) {
                            self.pos = name_start;
                            return Err(self.err(format!("the group name `{name}` is used twice")));
                        }
                        self.names.push(name);
                    } else {
                        return Err(self.err("unsupported group syntax"));
                    }
                }
                self.out.push_str("(?:");
                self.disjunction(depth + 1)?;
                if !self.eat(')') {
                    return Err(self.err("unclosed group"));
                }
                self.out.push(')');
            }
            ')' => return Err(self.err("unmatched `)`")),
            '[' => self.class()?,
            '.' => {
                self.pos += 1;
                let _ = write!(self.out, "[^{JS_LINE_TERMINATORS}]");
            }
            '\\' => match self.escape(false)? {
                Escaped::Char(ch) => push_literal(&mut self.out, ch),
                Escaped::Class(body, neg) => {
                    let _ = write!(self.out, "[{}{body}]", if neg { "^" } else { "" });
                }
            },
            '*' | '+' | '?' => return Err(self.err(format!("nothing to repeat before `{c}`"))),
            '{' | '}' | ']' => return Err(self.err(format!("a lone `{c}` is a syntax error in Unicode mode"))),
            _ => {
                self.pos += 1;
                push_literal(&mut self.out, c);
            }
        }
        let _ = start;
        self.quantifier()
    }

    /// Whether the group starting here is a lookahead `(?=`, `(?!` or a lookbehind `(?<=`, `(?<!`.
    fn lookaround(&self) -> bool {
        match self.peek_at(2) {
            Some('=' | '!') => true,
            Some('<') => matches!(self.peek_at(3), Some('=' | '!')),
            _ => false,
        }
    }

    fn no_quantifier(&mut self) -> Result<(), PatternError> {
        match self.peek() {
            Some('*' | '+' | '?' | '{') => Err(self.err("an assertion cannot be repeated")),
            _ => Ok(()),
        }
    }

    fn quantifier(&mut self) -> Result<(), PatternError> {
        match self.peek() {
            Some(c @ ('*' | '+' | '?')) => {
                self.pos += 1;
                self.out.push(c);
            }
            Some('{') => {
                self.pos += 1;
                let min = self.number().ok_or_else(|| self.err("a lone `{` is a syntax error in Unicode mode"))?;
                let max = if self.eat(',') {
                    if self.peek() == Some('}') {
                        None
                    } else {
                        Some(self.number().ok_or_else(|| self.err("bad repetition"))?)
                    }
                } else {
                    Some(min)
                };
                if !self.eat('}') {
                    return Err(self.err("unclosed repetition"));
                }
                if max.is_some_and(|m| m < min) {
                    return Err(self.err("repetition range out of order"));
                }
                if min > 1000 || max.is_some_and(|m| m > 1000) {
                    return Err(self.err("repetition counts above 1000 are not supported"));
                }
                match max {
                    Some(m) if m == min => {
                        let _ = write!(self.out, "{{{min}}}");
                    }
                    Some(m) => {
                        let _ = write!(self.out, "{{{min},{m}}}");
                    }
                    None => {
                        let _ = write!(self.out, "{{{min},}}");
                    }
                }
            }
            _ => return Ok(()),
        }
        if self.eat('?') {
            self.out.push('?');
        }
        match self.peek() {
            Some('*' | '+' | '?' | '{') => Err(self.err("nothing to repeat")),
            _ => Ok(()),
        }
    }

    fn number(&mut self) -> Option<u64> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos == start {
            return None;
        }
        let s: String = self.chars[start..self.pos].iter().collect();
        s.parse().ok().or(Some(u64::MAX))
    }

    fn hex(&mut self, n: usize) -> Option<u32> {
        let mut v = 0u32;
        for _ in 0..n {
            let d = self.peek()?.to_digit(16)?;
            v = v * 16 + d;
            self.pos += 1;
        }
        Some(v)
    }

    /// `\u` escapes in Unicode mode: `\u{H..}`, `\uHHHH`, or a surrogate pair of two `\uHHHH`.
    fn unicode_escape(&mut self) -> Result<char, PatternError> {
        if self.eat('{') {
            let start = self.pos;
            let mut v: u32 = 0;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                v = v.saturating_mul(16).saturating_add(d);
                self.pos += 1;
            }
            if self.pos == start || !self.eat('}') {
                return Err(self.err("malformed `\\u{..}` escape"));
            }
            return char::from_u32(v).ok_or_else(|| self.err("`\\u{..}` names a surrogate or no code point"));
        }
        let hi = self.hex(4).ok_or_else(|| self.err("malformed `\\u` escape"))?;
        if (0xD800..0xDC00).contains(&hi) && self.peek() == Some('\\') && self.peek_at(1) == Some('u') {
            let save = self.pos;
            self.pos += 2;
            if let Some(lo) = self.hex(4).filter(|lo| (0xDC00..0xE000).contains(lo)) {
                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                return char::from_u32(c).ok_or_else(|| self.err("bad surrogate pair"));
            }
            self.pos = save;
        }
        // Refused, not read as matching nothing: JSON.parse gives a JavaScript string a lone surrogate, where a
        // Rust one holds none, so a pattern that names one (`[^\uD83D]`) could decide such a string otherwise in
        // the TS outputs.
        char::from_u32(hi).ok_or_else(|| {
            self.err(
                "a lone surrogate (`\\u` of D800-DFFF without its pair) is not supported: a Rust string cannot \
                 hold one, a JavaScript string can, so the outputs could disagree on it",
            )
        })
    }

    /// An escape after `\` (the backslash not yet consumed).
    fn escape(&mut self, in_class: bool) -> Result<Escaped, PatternError> {
        let backslash = self.pos;
        self.pos += 1;
        let c = self.peek().ok_or_else(|| self.err("`\\` at the end of the pattern"))?;
        self.pos += 1;
        let class = |body: &str, neg: bool| Ok(Escaped::Class(body.to_string(), neg));
        match c {
            'd' => class(JS_DIGIT, false),
            'D' => class(JS_DIGIT, true),
            'w' => class(JS_WORD, false),
            'W' => class(JS_WORD, true),
            's' => class(JS_SPACE, false),
            'S' => class(JS_SPACE, true),
            't' => Ok(Escaped::Char('\t')),
            'n' => Ok(Escaped::Char('\n')),
            'v' => Ok(Escaped::Char('\u{B}')),
            'f' => Ok(Escaped::Char('\u{C}')),
            'r' => Ok(Escaped::Char('\r')),
            'b' if in_class => Ok(Escaped::Char('\u{8}')),
            '-' if in_class => Ok(Escaped::Char('-')),
            'c' => match self.peek() {
                Some(l) if l.is_ascii_alphabetic() => {
                    self.pos += 1;
                    Ok(Escaped::Char(char::from(l as u8 % 32)))
                }
                _ => Err(self.err("malformed `\\c` escape")),
            },
            '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => Ok(Escaped::Char('\0')),
            '1'..='9' => Err(self.err("backreferences have no equivalent in Rust's regex crate")),
            'k' if self.peek() == Some('<') => Err(self.err("backreferences have no equivalent in Rust's regex crate")),
            // Without a group name, `\k` is a syntax error with JavaScript's `u` flag (it said "backreference").
            'k' => Err(self.err("`\\k` must be followed by `<name>` of a group (JavaScript's `u` flag)")),
            'x' => {
                let v = self.hex(2).ok_or_else(|| self.err("malformed `\\x` escape"))?;
                Ok(Escaped::Char(char::from_u32(v).unwrap_or('\0')))
            }
            'u' => self.unicode_escape().map(Escaped::Char),
            'p' | 'P' => {
                if !self.eat('{') {
                    return Err(self.err("malformed property escape"));
                }
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '}') {
                    self.pos += 1;
                }
                let name: String = self.chars[start..self.pos].iter().collect();
                if !self.eat('}') {
                    return Err(self.err("unclosed property escape"));
                }
                let value =
                    name.strip_prefix("General_Category=").or_else(|| name.strip_prefix("gc=")).unwrap_or(&name);
                if !GENERAL_CATEGORIES.contains(&value) {
                    let why = match value {
                        "Cs" | "Surrogate" => "the surrogates, which a Rust string cannot hold",
                        _ => "only General_Category values are, except `Cs`",
                    };
                    return Err(self.err(format!("the Unicode property `{name}` is not supported ({why})")));
                }
                self.properties.push(Property {
                    start: backslash,
                    end: self.pos,
                    value: value.to_string(),
                    negated: c == 'P',
                    in_class,
                });
                class(&format!(r"\p{{{value}}}"), c == 'P')
            }
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '/' => {
                Ok(Escaped::Char(c))
            }
            _ => Err(self.err(format!("`\\{c}` is not a valid escape in Unicode mode"))),
        }
    }

    fn class(&mut self) -> Result<(), PatternError> {
        self.pos += 1;
        let negated = self.eat('^');
        let mut body = String::new();
        let mut empty = true;
        loop {
            let c = self.peek().ok_or_else(|| self.err("unclosed character class"))?;
            if c == ']' {
                self.pos += 1;
                break;
            }
            empty = false;
            let lo = self.class_atom()?;
            let is_range = self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']');
            if is_range {
                self.pos += 1;
                let hi = self.class_atom()?;
                match (lo, hi) {
                    (Escaped::Char(a), Escaped::Char(b)) if a <= b => {
                        let _ = write!(body, r"\x{{{:X}}}-\x{{{:X}}}", a as u32, b as u32);
                    }
                    (Escaped::Char(_), Escaped::Char(_)) => return Err(self.err("class range out of order")),
                    _ => return Err(self.err("a class escape cannot be a range bound in Unicode mode")),
                }
            } else {
                match lo {
                    Escaped::Char(ch) => {
                        let _ = write!(body, r"\x{{{:X}}}", ch as u32);
                    }
                    Escaped::Class(b, neg) => {
                        let _ = write!(body, "[{}{b}]", if neg { "^" } else { "" });
                    }
                }
            }
        }
        if empty {
            // `[]` matches nothing and `[^]` anything.
            self.out.push_str(if negated { r"[\x{0}-\x{10FFFF}]" } else { r"[^\x{0}-\x{10FFFF}]" });
            return Ok(());
        }
        let _ = write!(self.out, "[{}{body}]", if negated { "^" } else { "" });
        Ok(())
    }

    fn class_atom(&mut self) -> Result<Escaped, PatternError> {
        let c = self.peek().ok_or_else(|| self.err("unclosed character class"))?;
        if c == '\\' {
            return self.escape(true);
        }
        self.pos += 1;
        Ok(Escaped::Char(c))
    }
}

fn push_literal(out: &mut String, c: char) {
    if c.is_alphanumeric() && c.is_ascii() {
        out.push(c);
    } else {
        let _ = write!(out, r"\x{{{:X}}}", c as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> regex::Regex {
        let t = translate(src).unwrap_or_else(|e| panic!("{src}: {e:?}")).rust;
        regex::Regex::new(&t).unwrap_or_else(|e| panic!("{src} -> {t}: {e}"))
    }

    /// A pattern said to match every string does (on texts that start with what could stop it: a line break, a
    /// letter, nothing), and one that does not is not said to.
    #[test]
    fn a_pattern_that_matches_every_string_is_known() {
        let texts = ["", "a", "\n", "é🐲", " x\r\n", "\u{2028}"];
        for src in [
            "", "^", "a*", "(?:)", "[^]*", "x?y*", "^|a", "(a|)", "(?:^a?)+", "\\b|", "a{0,3}", "$", "x*$", "(a|)$",
            "a|$",
        ] {
            let t = translate(src).unwrap_or_else(|e| panic!("{src}: {e:?}")).rust;
            assert!(matches_every_string(&t), "{src} ({t})");
            let re = ok(src);
            assert!(texts.iter().all(|x| re.is_match(x)), "{src}");
        }
        for src in ["a", "^$", "$a", "\\b", "^a*$", ".", "[^]+", "a|b", "^.*$", "a{1,3}", "[]", "$\\b", "(^|a)$"] {
            let t = translate(src).unwrap_or_else(|e| panic!("{src}: {e:?}")).rust;
            assert!(!matches_every_string(&t), "{src} ({t})");
        }
    }

    #[test]
    fn classes_mean_what_ecmascript_means() {
        let d = ok(r"^\d+$");
        assert!(d.is_match("0123"));
        assert!(!d.is_match("١٢")); // Arabic-Indic digits are not `\d` in ECMAScript
        let w = ok(r"^\w$");
        assert!(w.is_match("_") && !w.is_match("é"));
        let s = ok(r"^\s$");
        for c in ["\u{FEFF}", "\u{A0}", "\u{2028}", "\u{B}"] {
            assert!(s.is_match(c), "{c:?}");
        }
        assert!(!s.is_match("\u{85}")); // NEL is not white space in ECMAScript
        let dot = ok(r"^.$");
        assert!(dot.is_match("🐲") && !dot.is_match("\r") && !dot.is_match("\u{2029}"));
        let b = ok(r"\bé");
        assert!(!b.is_match("é")); // no word boundary before a non-ASCII letter in ECMAScript
        assert!(ok(r"^[^]$").is_match("\n"));
        assert!(!ok(r"[]").is_match("a"));
        assert!(ok(r"^\p{Letter}+$").is_match("π"));
        assert!(ok(r"^[a\-z]+$").is_match("-a"));
        assert!(ok(r"^\u{1F432}\uD83D\uDC32$").is_match("🐲🐲"));
        assert!(ok(r"^a{2,3}?$").is_match("aaa"));
        assert!(ok(r"^(?<n>x)|(?:y)$").is_match("y"));
    }

    /// The JavaScript pattern holds the `regex` crate's code points for a property class; everything else is the
    /// source as written. (The generated packages' tests run these in node: `tests/jsts`.)
    #[test]
    fn javascript_spells_property_classes_out_from_the_rust_tables() {
        let js = |src: &str| translate(src).unwrap_or_else(|e| panic!("{src}: {e:?}")).js;
        assert_eq!(js(r"^[a-z]+\d$"), r"^[a-z]+\d$");
        let letters = js(r"\p{L}");
        assert!(letters.starts_with(r"[\u{41}-\u{5A}\u{61}-\u{7A}\u{AA}\u{B5}"), "{letters}");
        assert_eq!(js(r"\p{Letter}"), letters);
        assert_eq!(js(r"\p{gc=L}"), letters);
        assert_eq!(js(r"^\P{L}$"), format!("^[^{}$", &letters[1..]));
        // Inside a class, the body; `\P` there is the complement, surrogates included.
        assert_eq!(js(r"[\p{L}_]"), format!("[{}_]", &letters[1..letters.len() - 1]));
        let not_letters = js(r"[\P{L}]");
        assert!(not_letters.starts_with(r"[\u{0}-\u{40}\u{5B}-\u{60}"), "{not_letters}");
        // Every code point is in exactly one of the two, the surrogates in the complement.
        let (l, not_l, rust) = (ranges(&letters), ranges(&not_letters), ok(r"^\p{L}$"));
        for cp in (0..=0x10FFFF).step_by(89).chain(l.iter().flat_map(|&(lo, hi)| [lo, hi, hi + 1])) {
            assert_ne!(covers(&l, cp), covers(&not_l, cp), "U+{cp:X}");
            if let Some(c) = char::from_u32(cp) {
                assert_eq!(covers(&l, cp), rust.is_match(c.encode_utf8(&mut [0; 4])), "U+{cp:X}");
            }
        }
        assert!(covers(&not_l, 0xDABC));
        // `Other` has the surrogates in JavaScript; the Rust table cannot hold them.
        assert!(covers(&ranges(&js(r"\p{C}")), 0xDABC));
        assert!(!covers(&ranges(&js(r"\p{Cc}")), 0xDABC));
        // A category of one code point is a literal in the `regex` crate's tree (it was refused as "not a class").
        assert_eq!(js(r"^\p{Zl}$"), r"^[\u{2028}]$");
        assert_eq!(js(r"\p{Paragraph_Separator}"), r"[\u{2029}]");
        assert_eq!(js(r"^\P{Zp}$"), r"^[^\u{2029}]$");
        assert_eq!(js(r"[\P{Zl}a]"), r"[\u{0}-\u{2027}\u{2029}-\u{10FFFF}a]");
    }

    /// The `\u{X}` and `\u{X}-\u{Y}` ranges of a spelled-out class.
    fn ranges(js: &str) -> Vec<(u32, u32)> {
        let hex = |s: &str| u32::from_str_radix(s, 16).unwrap_or_else(|e| panic!("{s}: {e}"));
        let body = js.trim_start_matches('[').trim_start_matches('^').trim_end_matches(']');
        let (mut out, mut lo) = (Vec::new(), None);
        for piece in body.split(r"\u{").skip(1) {
            if let Some(x) = piece.strip_suffix("}-") {
                lo = Some(hex(x));
            } else {
                let x = hex(piece.strip_suffix('}').unwrap_or_else(|| panic!("{piece}")));
                out.push((lo.take().unwrap_or(x), x));
            }
        }
        out
    }

    fn covers(ranges: &[(u32, u32)], cp: u32) -> bool {
        ranges.iter().any(|&(lo, hi)| lo <= cp && cp <= hi)
    }

    #[test]
    fn refuses_what_rust_cannot_match_exactly() {
        for src in [
            r"(?=a)",
            r"(?!a)",
            r"(?<=a)b",
            r"(?<!a)b",
            r"(a)\1",
            r"\k<n>",
            r"\p{Script=Greek}",
            r"\uD800",
            r"\e",
            r"a{",
            r"}",
            r"]",
            r"^*",
            r"a{2,1}",
            r"^(?<a>x)(?<a>y)$",
            r"^(?:(?<a>x)|(?<a>y))$",
            r"^(?<1a>x)$",
            "^(?<a\u{b2}>x)$",
        ] {
            assert!(translate(src).is_err(), "{src} should be refused");
        }
        // `Cs` is a General_Category value: the refusal says why it is left out, not that it is not one.
        let why = |src: &str| translate(src).err().map(|e| format!("{e:?}")).unwrap_or_default();
        assert!(why(r"\p{Cs}").contains("a Rust string cannot hold"), "{}", why(r"\p{Cs}"));
        // `Cn` is the unassigned code points of the `regex` crate's tables (U+10940 is one in its Unicode 16), as
        // `C` and `\P{L}`, which hold them, always were.
        let cn = ok(r"^\p{gc=Unassigned}$");
        assert!(cn.is_match("\u{10940}") && !cn.is_match("a") && !cn.is_match("\u{E000}"));
        assert!(why(r"\p{Script=Greek}").contains("only General_Category values are"), "{}", why(r"\p{Script=Greek}"));
        // What the refusals say (helper 102: `[^\ud83d]` was told it "cannot occur in a valid string", `^\k$` that
        // it was a backreference).
        assert!(why(r"[^\ud83d]").contains("a lone surrogate"), "{}", why(r"[^\ud83d]"));
        assert!(why(r"[^\ud83d]").contains("a JavaScript string can"), "{}", why(r"[^\ud83d]"));
        assert!(why(r"^\k$").contains("must be followed by `<name>`"), "{}", why(r"^\k$"));
        assert!(why(r"(?<n>a)\k<n>").contains("backreferences have no equivalent"), "{}", why(r"(?<n>a)\k<n>"));
    }
}
