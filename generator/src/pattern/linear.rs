//! Patterns as programs the JavaScript outputs run in time linear in the string.
//!
//! JavaScript's `RegExp` backtracks. The loader refuses the patterns on which that takes exponential time
//! ([`super::backtracking`]), but polynomial time is as bad on a long string: `\d+x` (unanchored, so every start
//! is tried) took 5.3 s in Node 20 on 100,000 digits, `^.*a.*b.*c$` 38.5 s on 10,000 characters, and `^(a|b)*$`
//! throws a `RangeError` (its backtracking stack) on 5,000,000 (`tests/bench/backtracking.mjs`). So each pattern
//! also becomes a [`Program`]: a Thompson automaton (one instruction per character class, alternative, loop and
//! assertion of the pattern) that the outputs' `matcher` (`generator/templates/ts/matcher.ts.j2`) runs one step per
//! code point, in time linear in the string: as a lazy automaton whose states (sets of instructions) and steps it
//! caches, or as a set of states where `\b`/`\B` need the next character. JavaScript's own `RegExp` still answers
//! short strings where it cannot backtrack far ([`Program::native_max`]), which is the common case and faster.
//!
//! The program is compiled from the `regex` crate translation ([`super::translate`]), whose character classes are
//! spelled out and exact for every Unicode scalar value. A JavaScript string may also hold a lone surrogate, which
//! `u`-mode `RegExp` reads as a code point of its own; whether a class holds the surrogates is decided from the
//! class as ECMAScript does (a negated class, `.`, `\S`, `\D`, `\W`, `\P{..}` and `\p{C}` hold them; a range holds
//! them when it spans them), and recorded beside its ranges.

use std::collections::HashMap;

use regex_syntax::ast::{self, AssertionKind, Ast, ClassSet, ClassSetBinaryOpKind, ClassSetItem};

/// The most instructions a program may have (counted repetitions are written out); a pattern beyond it is refused.
pub(crate) const MAX_OPS: usize = 20_000;

/// [`Program::native_max`] of an anchored pattern that reads every string one way: below where `RegExp`'s
/// backtracking stack overflows (a `RangeError` from a few million characters in Node 20, on `^(a|b)*$`).
pub const NATIVE_ANCHORED: u32 = 100_000;

/// [`Program::native_max`] of an unanchored pattern that reads every string one way.
pub const NATIVE_UNANCHORED: u32 = 64;

/// A pattern compiled for the JavaScript outputs' `matcher`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The longest string (in UTF-16 code units) the matcher may give JavaScript's own `RegExp`, which is faster
    /// where it cannot backtrack far: [`NATIVE_ANCHORED`] when the pattern is anchored at the start and reads every
    /// string one way ([`super::backtracking::deterministic`]), so `RegExp` tries one start and never one step
    /// twice; [`NATIVE_UNANCHORED`] when it reads every string one way but is not anchored, so `RegExp` tries every
    /// start, each in time linear in what follows (at most `n²/2` steps: no more than the program's own time on
    /// so short a string); 0 otherwise, and for a pattern with `\B` (see `Compiler::not_word_boundary`): the
    /// program answers every string.
    pub native_max: u32,
    /// The first instruction.
    pub start: u32,
    pub ops: Vec<Op>,
    /// The character classes [`Op::Class`] refers to, each once.
    pub classes: Vec<CharClass>,
}

/// One instruction of a [`Program`]; `next`, the branches and `start` are indices of instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Reads one code point of the class, then goes on at `next`.
    Class { class: u32, next: u32 },
    /// Goes on at both.
    Split(u32, u32),
    /// Goes on at `next` when the assertion holds here (it reads nothing).
    Look { look: Look, next: u32 },
    /// The pattern has matched.
    Match,
}

/// A zero-width assertion, as `u`-mode JavaScript without flags means it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// `^`: the start of the string.
    Start,
    /// `$`: the end of the string.
    End,
    /// `\b`: an ASCII word character (`[0-9A-Za-z_]`) on one side only.
    WordBoundary,
    /// `\B`.
    NotWordBoundary,
}

/// The code points a class reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CharClass {
    /// Whether a lone surrogate (U+D800-U+DFFF) is in the class.
    pub surrogates: bool,
    /// Sorted inclusive ranges of Unicode scalar values (ranges that span the surrogates mean nothing by that:
    /// [`Self::surrogates`] decides them).
    pub ranges: Vec<(u32, u32)>,
}

/// Compiles a pattern in the `regex` crate's syntax, as [`super::translate`] gives it.
///
/// # Errors
/// A pattern whose program would pass [`MAX_OPS`], or a construct the translation never writes.
pub(crate) fn program(rust: &str) -> Result<Program, String> {
    let ast = ast::parse::Parser::new()
        .parse(rust)
        .map_err(|e| format!("the regex crate's parser refuses its translation `{rust}`: {e}"))?;
    let mut c = Compiler {
        source: rust,
        ops: Vec::new(),
        classes: Vec::new(),
        index: HashMap::new(),
        error: None,
        not_word_boundary: false,
    };
    let end = c.push(Op::Match);
    let start = c.compile(&ast, end);
    if let Some(e) = c.error {
        return Err(e);
    }
    let native_max = if c.not_word_boundary || !super::backtracking::deterministic(&ast, rust) {
        0
    } else if anchored(&ast) {
        NATIVE_ANCHORED
    } else {
        NATIVE_UNANCHORED
    };
    Ok(Program { native_max, start, ops: c.ops, classes: c.classes })
}

/// Whether every match must start at the start of the string (`^` before anything else, in every alternative).
fn anchored(ast: &Ast) -> bool {
    match ast {
        Ast::Assertion(a) => matches!(a.kind, AssertionKind::StartLine | AssertionKind::StartText),
        Ast::Group(g) => anchored(&g.ast),
        Ast::Concat(c) => c.asts.first().is_some_and(anchored),
        Ast::Alternation(a) => a.asts.iter().all(anchored),
        _ => false,
    }
}

struct Compiler<'s> {
    source: &'s str,
    ops: Vec<Op>,
    classes: Vec<CharClass>,
    index: HashMap<CharClass, u32>,
    error: Option<String>,
    /// Whether the pattern has a `\B`, which V8's `RegExp` finds inside a surrogate pair where ECMA-262 (and Rust's
    /// `regex`) see no position: `/\B/u.test("b\u{10FFFF}c")` is `true` in Node 20 (at index 2, between the pair's
    /// halves). Such a pattern always goes through the program, which follows ECMA-262 and the engine.
    not_word_boundary: bool,
}

impl Compiler<'_> {
    fn push(&mut self, op: Op) -> u32 {
        if self.ops.len() >= MAX_OPS && self.error.is_none() {
            self.error = Some(format!(
                "it is too large for the JavaScript outputs' linear-time matcher (more than {MAX_OPS} instructions \
                 with its counted repetitions written out)"
            ));
        }
        self.ops.push(op);
        (self.ops.len() - 1) as u32
    }

    fn class(&mut self, class: CharClass, next: u32) -> u32 {
        let n = self.classes.len() as u32;
        let class = *self.index.entry(class).or_insert_with_key(|c| {
            self.classes.push(c.clone());
            n
        });
        self.push(Op::Class { class, next })
    }

    /// The entry of `ast`'s instructions, which go on at `next` once it has matched.
    fn compile(&mut self, ast: &Ast, next: u32) -> u32 {
        if self.error.is_some() {
            return next;
        }
        match ast {
            Ast::Empty(_) | Ast::Flags(_) => next,
            Ast::Literal(l) => {
                let c = u32::from(l.c);
                self.class(CharClass { surrogates: false, ranges: vec![(c, c)] }, next)
            }
            Ast::Dot(span) => self.written_class(span, true, next),
            Ast::ClassUnicode(c) => self.written_class(&c.span, unicode_surrogates(c), next),
            Ast::ClassPerl(c) => self.written_class(&c.span, c.negated, next),
            Ast::ClassBracketed(c) => self.written_class(&c.span, set_surrogates(&c.kind) != c.negated, next),
            Ast::Assertion(a) => {
                let look = match a.kind {
                    AssertionKind::StartLine | AssertionKind::StartText => Look::Start,
                    AssertionKind::EndLine | AssertionKind::EndText => Look::End,
                    AssertionKind::WordBoundary => Look::WordBoundary,
                    AssertionKind::NotWordBoundary => {
                        self.not_word_boundary = true;
                        Look::NotWordBoundary
                    }
                    _ => {
                        self.error =
                            Some(format!("the assertion at {} has no JavaScript meaning", a.span.start.offset));
                        return next;
                    }
                };
                self.push(Op::Look { look, next })
            }
            Ast::Group(g) => self.compile(&g.ast, next),
            Ast::Concat(c) => c.asts.iter().rev().fold(next, |next, a| self.compile(a, next)),
            Ast::Alternation(a) => {
                let entries: Vec<u32> = a.asts.iter().map(|a| self.compile(a, next)).collect();
                let mut entry = entries.last().copied().unwrap_or(next);
                for &e in entries.iter().rev().skip(1) {
                    entry = self.push(Op::Split(e, entry));
                }
                entry
            }
            Ast::Repetition(r) => {
                let (min, max) = super::repetition(&r.op.kind);
                // The optional part first (the program is built from the end), then `min` copies before it.
                let mut entry = match max {
                    None => {
                        let repeat = self.push(Op::Split(0, 0));
                        let body = self.compile(&r.ast, repeat);
                        self.ops[repeat as usize] = Op::Split(body, next);
                        repeat
                    }
                    Some(max) => {
                        let mut entry = next;
                        for _ in min..max {
                            let body = self.compile(&r.ast, entry);
                            entry = self.push(Op::Split(body, entry));
                            if self.error.is_some() {
                                return next;
                            }
                        }
                        entry
                    }
                };
                for _ in 0..min {
                    entry = self.compile(&r.ast, entry);
                    if self.error.is_some() {
                        return next;
                    }
                }
                entry
            }
        }
    }

    /// A class as written at `span`, with its ranges from the `regex` crate and its lone surrogates as decided.
    fn written_class(&mut self, span: &ast::Span, surrogates: bool, next: u32) -> u32 {
        let text = self.source.get(span.start.offset..span.end.offset).unwrap_or_default();
        match super::class_ranges(text) {
            Some(ranges) => self.class(CharClass { surrogates, ranges }, next),
            None => {
                self.error = Some(format!("the regex crate does not read `{text}` as a character class"));
                next
            }
        }
    }
}

/// Whether ECMAScript puts the lone surrogates in `\p{..}`/`\P{..}`: of the General_Category values the
/// translation keeps, only `Other` (`C`) holds them (as `Cs`).
fn unicode_surrogates(c: &ast::ClassUnicode) -> bool {
    let name = match &c.kind {
        ast::ClassUnicodeKind::OneLetter(l) => l.to_string(),
        ast::ClassUnicodeKind::Named(n) => n.clone(),
        ast::ClassUnicodeKind::NamedValue { value, .. } => value.clone(),
    };
    matches!(name.as_str(), "C" | "Other") != c.negated
}

/// Whether a bracketed class's set holds the lone surrogates, as ECMAScript decides each part.
fn set_surrogates(set: &ClassSet) -> bool {
    match set {
        ClassSet::Item(item) => item_surrogates(item),
        ClassSet::BinaryOp(op) => {
            let (l, r) = (set_surrogates(&op.lhs), set_surrogates(&op.rhs));
            match op.kind {
                ClassSetBinaryOpKind::Intersection => l && r,
                ClassSetBinaryOpKind::Difference => l && !r,
                ClassSetBinaryOpKind::SymmetricDifference => l != r,
            }
        }
    }
}

fn item_surrogates(item: &ClassSetItem) -> bool {
    match item {
        ClassSetItem::Empty(_) | ClassSetItem::Literal(_) => false,
        ClassSetItem::Range(r) => r.start.c <= '\u{D7FF}' && r.end.c >= '\u{E000}',
        ClassSetItem::Ascii(a) => a.negated,
        ClassSetItem::Unicode(u) => unicode_surrogates(u),
        ClassSetItem::Perl(p) => p.negated,
        ClassSetItem::Bracketed(b) => set_surrogates(&b.kind) != b.negated,
        ClassSetItem::Union(u) => u.items.iter().any(item_surrogates),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(js: &str) -> Program {
        let t = super::super::translate(js).unwrap_or_else(|e| panic!("{js}: {e:?}"));
        program(&t.rust).unwrap_or_else(|e| panic!("{js}: {e}"))
    }

    /// A direct run of the program over a string's code points, as the JavaScript `matcher` runs it (its
    /// agreement with `RegExp` itself, lone surrogates included, is checked in node: `tests/linear_matcher.rs`).
    fn runs(p: &Program, s: &[u32]) -> bool {
        let word = |i: usize| {
            s.get(i).is_some_and(|&c| c < 128 && (c as u8 as char).is_ascii_alphanumeric()) || s.get(i) == Some(&95)
        };
        let closure = |pcs: &mut Vec<u32>, from: u32, i: usize| -> bool {
            let mut stack = vec![from];
            let mut seen = std::collections::HashSet::new();
            while let Some(pc) = stack.pop() {
                if !seen.insert(pc) {
                    continue;
                }
                match p.ops[pc as usize] {
                    Op::Class { .. } => pcs.push(pc),
                    Op::Split(a, b) => stack.extend([b, a]),
                    Op::Match => return true,
                    Op::Look { look, next } => {
                        let before = i.checked_sub(1).is_some_and(word);
                        let holds = match look {
                            Look::Start => i == 0,
                            Look::End => i == s.len(),
                            Look::WordBoundary => before != word(i),
                            Look::NotWordBoundary => before == word(i),
                        };
                        if holds {
                            stack.push(next);
                        }
                    }
                }
            }
            false
        };
        let mut cur = Vec::new();
        for i in 0..=s.len() {
            let mut next = Vec::new();
            if closure(&mut next, p.start, i) {
                return true;
            }
            for &pc in &cur {
                let Op::Class { class, next: to } = p.ops[pc as usize] else { continue };
                let c = &p.classes[class as usize];
                let cp = s[i - 1];
                let holds = if (0xD800..=0xDFFF).contains(&cp) {
                    c.surrogates
                } else {
                    c.ranges.iter().any(|&(lo, hi)| lo <= cp && cp <= hi)
                };
                if holds && closure(&mut next, to, i) {
                    return true;
                }
            }
            cur = next;
        }
        false
    }

    fn cps(s: &str) -> Vec<u32> {
        s.chars().map(u32::from).collect()
    }

    #[test]
    fn programs_match_what_the_regex_crate_matches() {
        let strings = ["", "a", "ab", "aab", "abc", "ba", "a b", "x_1", "é", "🐲a", "\n", "aaaa!", "12x", "a-b-c"];
        for js in [
            "",
            "a",
            "^a$",
            "^a*$",
            "a+b",
            "^(a|b)*c$",
            r"\bab",
            r"a\B",
            r"^\w+$",
            r"^.$",
            r"[^a]",
            r"^[]$",
            r"^[^]$",
            "^a{2,3}$",
            "^(?:ab){0,2}$",
            "a{2,}",
            r"^\S+@\S+\.\S+$",
            r"^\p{L}+$",
            r"\d+x",
            "^(a|)+$",
            "(a*)*$",
            r"^[\w-]+(-[\w-]+)*$",
        ] {
            let t = super::super::translate(js).expect("translates");
            let re = regex::Regex::new(&t.rust).expect("compiles");
            let p = compiled(js);
            for s in strings {
                assert_eq!(runs(&p, &cps(s)), re.is_match(s), "{js} on {s:?}");
            }
        }
    }

    #[test]
    fn lone_surrogates_are_in_a_class_as_ecmascript_decides() {
        let holds = |js: &str| {
            let p = compiled(js);
            p.classes.iter().map(|c| c.surrogates).collect::<Vec<_>>()
        };
        for js in [
            ".",
            r"\S",
            r"\D",
            r"\W",
            "[^a]",
            r"\P{L}",
            r"\p{C}",
            r"\p{Other}",
            "[^]",
            r"[\0-\u{10FFFF}]",
            r"[\uD7FF-\uE000]",
            r"[a\S]",
            r"[^\s]",
            r"[^\uE000]",
            r"[\P{L}]",
        ] {
            assert_eq!(holds(js), [true], "{js}");
        }
        for js in [
            "a",
            r"\s",
            r"\d",
            r"\w",
            "[a-z]",
            r"\p{L}",
            r"\P{C}",
            "[]",
            r"[^\S]",
            r"[\0-\uD7FF]",
            r"[\uE000-\u{10FFFF}]",
            r"[^\0-\u{10FFFF}]",
            r"[\uD7FF\uE000]",
            r"\p{Cc}",
        ] {
            assert_eq!(holds(js), [false], "{js}");
        }
    }

    #[test]
    fn javascript_may_answer_only_where_it_cannot_backtrack_long() {
        for js in [
            "^[0-9a-z]+$",
            "^a*$",
            "^(ab)*$",
            r"^[0-9]{1,3}(\.[0-9]{1,3}){3}$",
            "^(a|b)*c$",
            "^$",
            "^x{1000}$",
            r"^[a-z][a-z0-9-]*$",
            "^(?:a|^b)",
        ] {
            assert_eq!(compiled(js).native_max, NATIVE_ANCHORED, "{js} is anchored and reads each string one way");
        }
        for js in ["a+", "[a-z]+$", r"\d+x", "x", "", "a|^b"] {
            assert_eq!(compiled(js).native_max, NATIVE_UNANCHORED, "{js} reads each string one way, from every start");
        }
        for js in [
            r"^\S+@\S+\.\S+$",
            "^.*a.*b.*c$",
            "^a*a*$",
            "^a{0,5}a$",
            "^(a|ab)c$",
            r"^\d{1,100}\d{1,100}$",
            r"^(\d{1,3}){1,3}$",
            "a*a",
            "(a|a)",
        ] {
            assert_eq!(compiled(js).native_max, 0, "{js} reads some string two ways");
        }
        for js in [r"\B", r"^a\B", r"^(?:a|\B)$"] {
            assert_eq!(compiled(js).native_max, 0, "{js} has a `\\B`, which V8 finds inside a surrogate pair");
        }
    }

    #[test]
    fn counted_repetitions_are_written_out_up_to_a_bound() {
        assert_eq!(compiled("^a{3}$").ops.len(), 6); // match, $, three classes, ^
        assert!(program(&super::super::translate("(a{1000}){1000}").expect("translates").rust).is_err());
        assert!(program(&super::super::translate("a{1000}b{1000}").expect("translates").rust).is_ok());
    }
}
