//! Patterns a backtracking matcher can take exponential time on.
//!
//! The engine and the Rust crate match with Rust's `regex` crate, and the Zod and standalone outputs with a
//! program of their own ([`super::linear`]), all in time linear in the string. But the bundled schema and the
//! reference keep the pattern as written, and a standard validator reading them (ajv) compiles it to JavaScript's
//! `RegExp`, which backtracks: on `^(a+)+$` and `"aaaa…a!"` it tries every way of splitting the `a`s between the
//! two loops before it fails, about twice as many for each more `a` (27 characters took 0.24 s in Node 20,
//! `tests/bench/backtracking.mjs`; 40 would take hours). One short field of a hostile message would hang it, so
//! the loader refuses the pattern. (Polynomial cost needs a long string, which `maxLength` bounds; it is not
//! refused.) [`deterministic`], on the same automaton, tells where `RegExp` cannot backtrack at all.
//!
//! The test is exact for the automaton the pattern describes: a backtracking matcher takes exponential time on
//! some string exactly when the pattern's automaton has *exponential degree of ambiguity* (Weber and Seidl): a
//! state and a string that lead from that state back to itself along two different paths, so that `n` repeats
//! of the string give `2^n` paths to try. The automaton is the pattern's position (Glushkov) automaton, one
//! state per character class in the pattern, with an edge for each way the pattern lets one class follow another
//! (`(a+)+` has two edges from its one state back to it); two paths read the same string where each step's two
//! classes share a character. The pairs of states two paths can be in at once form the product automaton, and the
//! pattern is exponential when one of its strongly connected parts holds a pair of equal states and either a pair
//! of different ones or a step along two different edges. Polynomial ambiguity (`^a*a*$`: n² ways) is not refused; a counted repetition is written out as the copies
//! a backtracking matcher reads (`{2,4}` as `x x (x (x)?)?`, `{2,}` as `x x+`), so that a count adds no ways of
//! its own (`(?:[0-9a-f]{2})+` is linear) and hides none (`(?:ab{3}|abbb)+` is not). Assertions (`^`, `$`, `\b`) read no character and are
//! left out, which can only add paths: a pattern is never accepted because of them.

use std::collections::HashMap;

use regex_syntax::ast::{Ast, Span};

/// The most pairs of states the product automaton may have, and the most states the automaton may have (counted
/// repetitions are written out, so nested ones multiply it); a pattern beyond either is refused as too large to show that it
/// runs in linear time (no pattern of the JSON-Schema-Test-Suite or of the packages comes near).
const MAX_PAIRS: usize = 1_000_000;
const MAX_STATES: usize = 100_000;

/// Why a pattern (in the `regex` crate's syntax, as [`super::translate`] gives it) is refused, or `None`.
pub(crate) fn refusal(rust: &str) -> Option<String> {
    // The syntax tree as written: the compiled form merges `a|a` into one class, and with it the two ways.
    let ast = regex_syntax::ast::parse::Parser::new().parse(rust).ok()?;
    let mut a = Automaton::default();
    let whole = a.build(&ast, rust);
    if a.classes.len() > MAX_STATES {
        return Some(format!(
            "it is too large to show that JavaScript's backtracking `RegExp` runs in linear time on it (more than \
             {MAX_STATES} character classes with its counted repetitions written out)"
        ));
    }
    let start = a.classes.len();
    a.follow.resize(start + 1, Vec::new());
    a.follow[start] = whole.first;
    if a.many_ways {
        return Some(format!(
            "JavaScript's backtracking `RegExp` can take exponential time on it (a repetition counted {MANY_COPIES} \
             times or more repeats a part that can match the same text in two ways, as in `(a+){{1,100}}` or \
             `(a|aa){{1,10}}`: each copy multiplies the ways), so a validator that reads the bundled schema with one \
             (ajv) would hang on a short hostile string; write the part so that it matches a text one way"
        ));
    }
    match a.exponential(start) {
        Ok(false) => None,
        Ok(true) => Some(
            "JavaScript's backtracking `RegExp` can take exponential time on it (one part of it can match the same \
             text in two ways, and that part repeats, as in `(a+)+` or `(a|ab|b)*`), so a validator that reads the \
             bundled schema with one (ajv) would hang on a short hostile string; write it so that each repetition \
             can match a text one way"
                .to_string(),
        ),
        Err(()) => Some(format!(
            "it is too large to show that JavaScript's backtracking `RegExp` runs in linear time on it (more than \
             {MAX_PAIRS} pairs of positions)"
        )),
    }
}

/// Whether the pattern (its syntax tree as written, of `source`) reads every string one way: its position
/// automaton is deterministic: neither its start nor any state may go on to two states whose classes share a
/// character, or to one state along two edges. A backtracking matcher then never tries one step twice. A
/// counted repetition that may repeat is read as a loop here (`x{1,3}` as `x+`), since its copies are as many
/// ways to read a run of `x` (`^\d{1,100}\d{1,100}$` is read as `^\d+\d+$`); and assertions read no character, so
/// the answer is `false` for some patterns that are in fact read one way, never `true` for one that is not.
pub(crate) fn deterministic(ast: &Ast, source: &str) -> bool {
    let mut a = Automaton { counted_as_loops: true, ..Automaton::default() };
    let whole = a.build(ast, source);
    if a.classes.len() > MAX_DETERMINISTIC {
        return false;
    }
    a.follow.push(whole.first);
    a.follow
        .iter()
        .all(|next| next.iter().enumerate().all(|(i, &x)| next[..i].iter().all(|&y| x != y && !a.overlap(x, y))))
}

/// The most states [`deterministic`] looks at (it compares each state's successors pairwise); a larger pattern is
/// taken as not deterministic.
const MAX_DETERMINISTIC: usize = 2_000;

/// A position automaton: one state per character class of the pattern.
#[derive(Default)]
struct Automaton {
    /// Whether a counted repetition with more than one copy is read as a loop ([`deterministic`]).
    counted_as_loops: bool,
    /// Each state's characters, as sorted inclusive ranges of code points.
    classes: Vec<Vec<(u32, u32)>>,
    /// The states that may come next after each state.
    follow: Vec<Vec<usize>>,
    /// A counted repetition of [`MANY_COPIES`] or more copies whose body, repeated, reads a text in two ways
    /// ([`Automaton::counted`]).
    many_ways: bool,
    /// How many copies the counted repetitions around the part being built make of it (`((a+){3}){3}` makes 9 of
    /// `a+`); 0 is read as 1.
    copies_around: u32,
}

/// The count from which the copies of a repetition whose body reads a text two ways are refused: each copy
/// multiplies the ways, so `(a+){1,100}` has about `2^n` ways to read `n` `a`s up to 100 (1 s in Node 20 at 26
/// characters, helper 87), while `(a|aa){1,3}` has a few.
const MANY_COPIES: u32 = 4;

/// What a part of the pattern contributes: whether it matches the empty string, the states it may start and end
/// with.
struct Part {
    nullable: bool,
    first: Vec<usize>,
    last: Vec<usize>,
}

impl Part {
    fn empty() -> Part {
        Part { nullable: true, first: Vec::new(), last: Vec::new() }
    }
}

impl Automaton {
    fn state(&mut self, ranges: Vec<(u32, u32)>) -> Part {
        self.classes.push(ranges);
        self.follow.push(Vec::new());
        let s = self.classes.len() - 1;
        Part { nullable: false, first: vec![s], last: vec![s] }
    }

    fn then(&mut self, a: Part, b: Part) -> Part {
        for &l in &a.last {
            self.follow[l].extend(&b.first);
        }
        let mut first = a.first;
        if a.nullable {
            first.extend(&b.first);
        }
        let mut last = b.last;
        if b.nullable {
            last.extend(&a.last);
        }
        Part { nullable: a.nullable && b.nullable, first, last }
    }

    fn build(&mut self, ast: &Ast, source: &str) -> Part {
        if self.classes.len() > MAX_STATES {
            return Part::empty();
        }
        match ast {
            Ast::Empty(_) | Ast::Flags(_) | Ast::Assertion(_) => Part::empty(),
            Ast::Literal(l) => self.state(vec![(u32::from(l.c), u32::from(l.c))]),
            Ast::Dot(span) => self.class(source, span),
            Ast::ClassUnicode(c) => self.class(source, &c.span),
            Ast::ClassPerl(c) => self.class(source, &c.span),
            Ast::ClassBracketed(c) => self.class(source, &c.span),
            Ast::Group(g) => self.build(&g.ast, source),
            Ast::Concat(c) => {
                let mut part = Part::empty();
                for a in &c.asts {
                    let next = self.build(a, source);
                    part = self.then(part, next);
                }
                part
            }
            Ast::Alternation(alternation) => {
                let mut part = Part { nullable: false, first: Vec::new(), last: Vec::new() };
                for alternative in &alternation.asts {
                    let a = self.build(alternative, source);
                    part.nullable |= a.nullable;
                    part.first.extend(a.first);
                    part.last.extend(a.last);
                }
                part
            }
            Ast::Repetition(r) => {
                let (min, max) = super::repetition(&r.op.kind);
                if max == Some(0) {
                    return Part::empty();
                }
                if !self.counted_as_loops {
                    return self.counted(&r.ast, source, min, max);
                }
                let max = max.filter(|&m| m <= 1);
                let mut body = self.build(&r.ast, source);
                if max.is_none() {
                    // `x+`: the body again after its end.
                    for &l in &body.last {
                        let first = body.first.clone();
                        self.follow[l].extend(first);
                    }
                } else if max.is_some_and(|m| m > 1) {
                    let mut again = self.build(&r.ast, source);
                    again.nullable = true;
                    body = self.then(body, again);
                }
                body.nullable |= min == 0;
                body
            }
        }
    }

    /// A repetition `{min,max}` of `body` written out: `min` copies (at least one), the last of them a loop when
    /// there is no `max`; else `max` copies, each after the one before, where the text may end after any copy from
    /// the `min`th on. A backtracking matcher reads a count one way, so the copies must not add ways: `x{2}` is
    /// `x x`, not `x x?`, which read `(?:[0-9a-f]{2})+` (hex bytes) as ambiguous and refused it; and one copy
    /// alone would hide the ambiguity of `(?:ab{3}|abbb)+`.
    fn counted(&mut self, body: &Ast, source: &str, min: u32, max: Option<u32>) -> Part {
        let copies = max.unwrap_or(min.max(1));
        // The copies are no loop, so the product automaton sees no cycle in them; but as many copies of a body that
        // reads a text two ways make as many choices, about `2^copies` ways: refused past a few (the written-out
        // automaton's ambiguity is polynomial, of a degree the count sets). Counts around this one multiply it
        // (helper 90: `(((a+){3}){3}){3}` is 27 copies of `a+`, 9.1 s in Node at 31 characters).
        let around = self.copies_around.max(1);
        let all = copies.saturating_mul(around);
        if all >= MANY_COPIES && !self.many_ways {
            let mut loop_ = Automaton::default();
            let part = loop_.build(body, source);
            for &l in &part.last {
                loop_.follow[l].extend(part.first.iter().copied());
            }
            let start = loop_.classes.len();
            loop_.follow.push(part.first);
            self.many_ways = loop_.many_ways || loop_.exponential(start).unwrap_or(true);
        }
        let mut whole = Part::empty();
        let mut last = Vec::new();
        self.copies_around = all;
        for i in 1..=copies {
            if self.classes.len() > MAX_STATES {
                return Part::empty();
            }
            let copy = self.build(body, source);
            if max.is_none() && i == copies {
                // `x+` (or the last of `x{n,}`'s copies): the copy again after its end.
                for &l in &copy.last {
                    let first = copy.first.clone();
                    self.follow[l].extend(first);
                }
            }
            whole = self.then(whole, copy);
            if i >= min.max(1) {
                last.extend(whole.last.iter().copied());
            }
        }
        self.copies_around = around;
        last.sort_unstable();
        last.dedup();
        Part { nullable: whole.nullable || min == 0, first: whole.first, last }
    }

    /// One state for the character class written at `span` of `source`.
    fn class(&mut self, source: &str, span: &Span) -> Part {
        let text = source.get(span.start.offset..span.end.offset).unwrap_or_default();
        // Anything else (it does not happen for a class) is taken to match every character: more paths, never
        // fewer.
        let ranges = super::class_ranges(text).unwrap_or_else(|| vec![(0, u32::from(char::MAX))]);
        self.state(ranges)
    }

    /// Whether two states' classes share a character.
    fn overlap(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.classes[a], &self.classes[b]);
        let (mut i, mut j) = (0, 0);
        while i < x.len() && j < y.len() {
            if x[i].1 < y[j].0 {
                i += 1;
            } else if y[j].1 < x[i].0 {
                j += 1;
            } else {
                return true;
            }
        }
        false
    }

    /// Whether the product automaton, from `(start, start)`, has a strongly connected part holding a pair of equal
    /// states and either a pair of different ones or a step of the two paths along two different edges between
    /// the same states (`(a+)+` has two edges from its one state back to it); `Err` past [`MAX_PAIRS`].
    fn exponential(&self, start: usize) -> Result<bool, ()> {
        let mut index: HashMap<(usize, usize), usize> = HashMap::new();
        let mut pairs: Vec<(usize, usize)> = vec![(start, start)];
        let mut edges: Vec<Vec<usize>> = vec![Vec::new()];
        // Steps from an equal pair to an equal pair along two different edges.
        let mut split: Vec<(usize, usize)> = Vec::new();
        index.insert((start, start), 0);
        let mut next = 0;
        while next < pairs.len() {
            let (p, q) = pairs[next];
            for (i, &a) in self.follow[p].iter().enumerate() {
                for (j, &b) in self.follow[q].iter().enumerate() {
                    if !self.overlap(a, b) {
                        continue;
                    }
                    let n = match index.get(&(a, b)) {
                        Some(&n) => n,
                        None => {
                            if pairs.len() >= MAX_PAIRS {
                                return Err(());
                            }
                            pairs.push((a, b));
                            edges.push(Vec::new());
                            index.insert((a, b), pairs.len() - 1);
                            pairs.len() - 1
                        }
                    };
                    edges[next].push(n);
                    if p == q && a == b && i != j {
                        split.push((next, n));
                    }
                }
            }
            next += 1;
        }
        let of = crate::graph::components(&edges);
        let count = of.iter().max().map_or(0, |m| m + 1);
        let mut equal = vec![false; count];
        let mut different = vec![false; count];
        for (i, &(p, q)) in pairs.iter().enumerate() {
            if p == q {
                equal[of[i]] = true;
            } else {
                different[of[i]] = true;
            }
        }
        for (from, to) in split {
            if of[from] == of[to] {
                different[of[from]] = true;
            }
        }
        Ok((0..count).any(|c| equal[c] && different[c]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(js: &str) -> bool {
        let t = super::super::translate(js).expect("translates");
        refusal(&t.rust).is_some()
    }

    /// The first list is refused, the second loads (polynomial ones among them: `tests/bench/backtracking.mjs`
    /// times both kinds in Node).
    #[test]
    fn exponential_patterns_are_refused_and_linear_ones_pass() {
        for p in [
            "^(a+)+$",
            "(a|a)*",
            "^(a|aa)*$",
            "^(\\w+\\s?)*$",
            "^([a-z]+)*[0-9]$",
            "(a*)*b",
            "^(ab|a|b)*c$",
            "(x+x+)+y",
            "^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$",
            "^(.*a){2,}$",
            "^(\\d+|\\d+\\.\\d+)*$",
            "^(?:a{2,3})*$",
            "^(?:ab{3}|abbb)+$",
            "^(?:a{2}|aa)+$",
            "^(?:x{0,2})+y$",
            // Counted copies of a part that reads a text two ways multiply the ways (helper 87).
            "^(a+){1,100}$",
            "^(a|aa){1,10}$",
            "^(?:a|aa){1,100}$",
            "^(\\w|\\d){1,50}$",
            "^(a|a){1,50}$",
            "^(a+){4}$",
            "^((a|aa){1,5}b){1,5}$",
            // Counts around a count multiply its copies (helper 90).
            "^(((a+){3}){3}){3}$",
            "^((a+){3}){3}$",
            "^((a+){3}b?){3}$",
        ] {
            assert!(refused(p), "{p} is exponential");
        }
        for p in [
            "^a*$",
            "a+",
            "^[a-z][a-z0-9]{23}$",
            "^(ab)*$",
            "^(a|b)*c$",
            "^[^a-z]*$",
            "^\\p{L}+$",
            "^a*a*$",
            "a*b",
            "^.*a.*b.*c$",
            "^\\S+@\\S+\\.\\S+$",
            "^(a+b)+$",
            "^[0-9]{1,3}(\\.[0-9]{1,3}){3}$",
            "^([a-z0-9]+-)*[a-z0-9]+$",
            "x{1000}",
            "^(?:[a-z]{2,8})(?:-[a-z0-9]{1,8})*$",
            // A count reads its text one way (hex bytes, base64: they were refused).
            "^(?:[0-9a-f]{2})+$",
            "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
            "^(?:ab{3}|ab{2})+$",
            "^(?:[0-9]{1,3}\\.){3}[0-9]{1,3}$",
            "^(?:a{1,3}b)+$",
            "^(a|aa){1,3}$",
            "^(a+){1,3}$",
            "^(?:ab|cd){1,100}$",
            "",
        ] {
            assert!(!refused(p), "{p} is not exponential");
        }
    }

    #[test]
    fn a_long_pattern_is_checked_without_recursion() {
        let p = format!("^{}$", "(?:a|b)c".repeat(5_000));
        assert!(!refused(&p));
    }
}
