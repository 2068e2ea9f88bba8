//! The JavaScript outputs' pattern matcher (`generator/src/pattern/linear.rs`,
//! `generator/templates/ts/matcher.ts.j2`) against node's own `RegExp` in `u` mode, the meaning JSON Schema gives a
//! pattern (ECMA-262's search: a sticky `RegExp` tried at each code point boundary, since V8's `test` also finds a
//! `\B` inside a surrogate pair, where Rust's `regex` and the engine find none): for many patterns and strings
//! (lone surrogates, astral characters, line terminators and the pattern's own characters among them; with the
//! JSON-Schema-Test-Suite's patterns and the strings its cases test them on), the standalone validator's verdict as
//! generated, and with JavaScript's `RegExp` turned off so that the program answers every string, must be
//! `RegExp`'s. Then, on strings of a million characters and more, where a backtracking `RegExp` takes quadratic or
//! worse time or throws, the generated validator must answer, and answer as Rust's `regex` crate does, within a
//! deadline.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wiregen::ir::{Model, Shape};

use crate::fixtures::root;
use crate::rng::Rng;

/// Patterns that hold every construct the translation accepts: classes and their negations, the escapes, property
/// classes (`C` holds the lone surrogates in JavaScript), ranges next to the surrogates, assertions, counted and
/// lazy repetitions, alternatives that can be empty, named groups.
const PATTERNS: &[&str] = &[
    "",
    "a",
    "^a$",
    "^a*$",
    "a+",
    "^[a-c]*$",
    "\\d",
    "^.{2}$",
    "é|💩",
    "[^a]",
    "^[^a]$",
    "\\bfoo\\b",
    "\\Bb",
    "a\\b",
    "^$",
    "x{2,4}",
    "^x{2,4}$",
    "^(?:ab|a)c$",
    "[\\s\\S]",
    "^\\p{L}+$",
    "^\\P{L}$",
    "^\\p{C}$",
    "^[\\p{C}a]$",
    "^[^\\p{C}]$",
    "^\\P{C}$",
    "^[\\uD7FF-\\uE000]$",
    "^[^\\uE000]$",
    "^[\\uD7FF\\uE000]$",
    "\\S+@\\S+",
    "^\\S+@\\S+\\.\\S+$",
    "^(a|b)*c$",
    "[]",
    "^[^]$",
    "^\\w+$",
    "^\\W$",
    "\\D\\d",
    ".",
    "^.$",
    "^\\s$",
    "^\\S$",
    "(?<n>a)b",
    "a|^b|c$",
    "\\u{1F432}",
    "^[🐲-🐳]+$",
    "^[^\\n]*$",
    "a{0}b",
    "(?:)",
    "a??b",
    "^a+?$",
    "\\cJ",
    "\\x41",
    "[\\b]",
    "^\\$",
    "^.*a.*b.*c$",
    "[a-z]+$",
    "\\d+x",
    "^(?:[a-z]+-)*[a-z]+$",
    "^[0-9a-z]+$",
    "^\\d{1,3}(?:\\.\\d{1,3}){3}$",
    "(?:a|b|)+c",
    "^(?:a|\\b)+$",
    "\\b",
    "\\B",
    "^\\B$",
    "[\\w-]+\\.",
    // Categories of one code point, which the `regex` crate's tree holds as a literal (refused until stop 62).
    "^\\p{Zl}$",
    "^[\\P{Zp}a]$",
];

/// The code units strings are made of besides each pattern's own characters: letters, digits, `_`, white space and
/// line terminators, a non-ASCII letter, both halves of an astral character alone and together, the first and last
/// code points around the surrogates.
const UNITS: &[&[u16]] = &[
    &[0x61],
    &[0x62],
    &[0x63],
    &[0x78],
    &[0x41],
    &[0x30],
    &[0x39],
    &[0x5F],
    &[0x2D],
    &[0x2E],
    &[0x40],
    &[0x20],
    &[0x0A],
    &[0x0D],
    &[0x2028],
    &[0xA0],
    &[0xE9],
    &[0x3C0],
    &[0xD83D, 0xDC32],
    &[0xD83D],
    &[0xDC32],
    &[0xD800],
    &[0xDFFF],
    &[0xD7FF],
    &[0xE000],
    &[0xDBFF, 0xDFFF],
];

/// Hostile strings (pattern, runs of one code unit), each a million code units or more.
const LONG: &[(&str, &[(u16, usize)])] = &[
    ("\\d+x", &[(0x31, 1_000_000)]),
    ("\\d+x", &[(0x31, 1_000_000), (0x78, 1)]),
    ("[a-z]+$", &[(0x61, 1_000_000), (0x21, 1)]),
    ("^.*a.*b.*c$", &[(0x61, 500_000), (0x62, 500_000)]),
    ("^\\S+@\\S+\\.\\S+$", &[(0x40, 1_000_000)]),
    ("^(?:[a-z]+-)*[a-z]+$", &[(0x61, 1_000_000), (0x2D, 1)]),
    ("^[0-9a-z]+$", &[(0x61, 5_000_000), (0x21, 1)]),
    ("^(a|b)*c$", &[(0x61, 5_000_000)]),
    ("^(a|b)*c$", &[(0x61, 5_000_000), (0x63, 1)]),
];

/// A pattern whose lazy automaton has 2^13 states, more than a matcher keeps (`MAX_MATCH_STATES`): the long
/// strings of `a` and `b` in runs of one to three make it start again from none many times.
const MANY_STATES: &str = "(?:a|b)*a(?:a|b){12}$";

/// [`LONG`], and strings of a million `a` and `b` for [`MANY_STATES`] (one ends so that it matches, one not).
fn long_strings(rng: &mut Rng) -> Vec<(&'static str, Vec<(u16, usize)>)> {
    let mut out: Vec<(&str, Vec<(u16, usize)>)> = LONG.iter().map(|(p, runs)| (*p, runs.to_vec())).collect();
    for last in [0x61, 0x62] {
        let mut runs = Vec::new();
        let mut total = 0;
        while total < 1_000_000 {
            let n = 1 + rng.below(3) as usize;
            runs.push((if runs.len() % 2 == 0 { 0x61 } else { 0x62 }, n));
            total += n;
        }
        runs.push((last, 1));
        runs.push((0x62, 12));
        out.push((MANY_STATES, runs));
    }
    out
}

/// The JSON-Schema-Test-Suite files whose cases hold a `pattern` at the schema's top, and the string instances each
/// case tests it on: their patterns join [`PATTERNS`] (those the loader accepts), their strings the random ones.
const SUITE: &[&str] = &["pattern.json", "optional/ecmascript-regex.json", "optional/non-bmp-regex.json"];

/// The suite's patterns (from [`SUITE`]) that the loader accepts, each with the strings its cases test.
fn suite_patterns() -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for file in SUITE {
        let path = root().join("tests/jsts/suite/draft2020-12").join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let groups: Vec<Value> = serde_json::from_str(&text).expect("a suite file");
        for g in groups {
            let Some(pattern) = g["schema"]["pattern"].as_str() else { continue };
            let strings =
                g["tests"].as_array().into_iter().flatten().filter_map(|t| t["data"].as_str().map(String::from));
            match out.iter_mut().find(|(p, _)| p == pattern) {
                Some((_, v)) => v.extend(strings),
                None => out.push((pattern.to_string(), strings.collect())),
            }
        }
    }
    let dir = root().join("target/conformance/patterns-suite");
    std::fs::create_dir_all(&dir).expect("create the test directory");
    out.retain(|(p, _)| {
        let file = dir.join("one.schema.json");
        std::fs::write(&file, json!({ "type": "string", "pattern": p }).to_string()).expect("write a schema");
        wiregen::load::load(&file).is_ok()
    });
    assert!(out.len() >= 15, "the suite's patterns the loader accepts: {}", out.len());
    out
}

/// How long node may take for everything; a backtracking `RegExp` would take hours on the long strings.
const DEADLINE: Duration = Duration::from_secs(240);

fn schema(patterns: &[String]) -> Value {
    let properties: serde_json::Map<String, Value> =
        patterns.iter().enumerate().map(|(i, p)| (i.to_string(), json!({ "type": "string", "pattern": p }))).collect();
    json!({ "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": properties })
}

/// The model with every pattern's `RegExp` shortcut off, so the program answers every string.
fn program_only(mut m: Model) -> Model {
    for t in &mut m.types {
        let Shape::Object(o) = &mut t.node.shape else { continue };
        for f in &mut o.fields {
            if let Shape::String(s) = &mut f.node.shape {
                if let Some(p) = &mut s.pattern {
                    p.linear.native_max = 0;
                }
            }
        }
    }
    m
}

#[test]
fn the_javascript_matcher_answers_as_regexp_does_and_in_linear_time() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let long_strings = long_strings(&mut rng);
    let suite = suite_patterns();
    let mut sources: Vec<String> = PATTERNS.iter().map(|p| p.to_string()).collect();
    sources.extend(suite.iter().map(|(p, _)| p.clone()).filter(|p| !PATTERNS.contains(&p.as_str())));
    let long_at: Vec<usize> = long_strings
        .iter()
        .map(|(p, _)| match sources.iter().position(|s| s == p) {
            Some(i) => i,
            None => {
                sources.push(p.to_string());
                sources.len() - 1
            }
        })
        .collect();
    let dir = root().join("target/conformance/patterns");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the test directory");
    let file = dir.join("patterns.schema.json");
    std::fs::write(&file, schema(&sources).to_string()).expect("write the schema");
    let model = wiregen::load::load(&file).unwrap_or_else(|e| panic!("the patterns load: {e}"));
    let mut js = Vec::new();
    let mut rust = Vec::new();
    let mut kinds = std::collections::BTreeMap::new();
    for f in match &model.types[0].node.shape {
        Shape::Object(o) => &o.fields,
        _ => panic!("the root is an object"),
    } {
        let Shape::String(s) = &f.node.shape else { panic!("{} is a string", f.name) };
        let p = s.pattern.as_ref().expect("a pattern");
        js.push(p.js.clone());
        rust.push(regex::Regex::new(&p.rust).expect("the translation compiles"));
        *kinds.entry(p.linear.native_max).or_insert(0) += 1;
    }
    assert_eq!(js.len(), sources.len());
    // Every path is exercised as generated: patterns left to JavaScript's RegExp up to 100,000 code units (anchored,
    // read one way), up to 64 (read one way from every start), and never.
    assert!(kinds.len() == 3 && kinds.values().all(|&n| n >= 3), "patterns per RegExp length: {kinds:?}");
    for (name, m) in [("as-generated", model.clone()), ("program-only", program_only(model))] {
        let src = wiregen::emit::Lang::TsStandalone.module(&m).expect("the standalone module");
        std::fs::write(dir.join(format!("{name}.ts")), src).expect("write a module");
    }

    let strings: Vec<Vec<Vec<u16>>> = sources
        .iter()
        .map(|p| {
            let mut units: Vec<Vec<u16>> = UNITS.iter().map(|u| u.to_vec()).collect();
            units.extend(p.chars().map(|c| c.encode_utf16(&mut [0; 2]).to_vec()));
            let mut out: Vec<Vec<u16>> = vec![Vec::new()];
            out.extend(units.iter().cloned());
            for _ in 0..300 {
                let len = rng.below(9);
                out.push((0..len).flat_map(|_| rng.pick(&units).clone()).collect());
            }
            for (_, strings) in suite.iter().filter(|(q, _)| q == p) {
                out.extend(strings.iter().map(|s| s.encode_utf16().collect::<Vec<u16>>()));
            }
            out
        })
        .collect();
    let long: Vec<Value> = long_strings
        .iter()
        .zip(&long_at)
        .map(|((_, runs), i)| json!([i, runs.iter().map(|(u, n)| json!([u, n])).collect::<Vec<_>>()]))
        .collect();
    let input = json!({ "sources": js, "strings": strings, "long": long });
    std::fs::write(dir.join("input.json"), input.to_string()).expect("write the input");

    let package = root().join("generated/ts");
    crate::node::ensure_npm_deps(&package);
    let typescript = package.join("node_modules/typescript");
    let started = Instant::now();
    let runner = root().join("tests/conformance/pattern-runner.mjs");
    let out = crate::node::run_node_within(&[runner.as_os_str(), dir.as_os_str(), typescript.as_os_str()], DEADLINE);
    let took = started.elapsed();
    let out: Value = serde_json::from_str(&out).expect("the runner prints JSON");

    let mut wrong = Vec::new();
    let mut quirks = Vec::new();
    let mut checked = 0;
    for (i, per) in out["short"].as_array().expect("short").iter().enumerate() {
        for (s, v) in strings[i].iter().zip(per.as_array().expect("verdicts")) {
            let [regexp, program, generated, test] = [0, 1, 2, 3].map(|k| v[k].as_bool().expect("a verdict"));
            checked += 1;
            if test != regexp {
                quirks.push(format!("/{}/u on {:?}", js[i], String::from_utf16_lossy(s)));
                assert!(js[i].contains("\\B"), "V8's test and its search differ on /{}/u: {test} {regexp}", js[i]);
            }
            let re = &rust[i];
            if let Ok(text) = String::from_utf16(s) {
                assert_eq!(re.is_match(&text), regexp, "Rust's regex and ECMA-262 on /{}/u and {text:?}", js[i]);
            }
            if program != regexp || generated != regexp {
                wrong.push(format!(
                    "/{}/u on {:?}: RegExp {regexp}, program {program}, as generated {generated}",
                    js[i],
                    String::from_utf16_lossy(s)
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {checked} verdicts differ:\n{}", wrong.len(), wrong.join("\n"));
    for (k, ((p, runs), i)) in long_strings.iter().zip(&long_at).enumerate() {
        let s: String = runs
            .iter()
            .map(|&(u, n)| char::from_u32(u32::from(u)).expect("a character").to_string().repeat(n))
            .collect();
        assert_eq!(out["long"][k].as_bool(), Some(rust[*i].is_match(&s)), "/{p}/ on {} characters", s.len());
    }
    // The quirk shows on some strings of `\B` patterns, or the comparison above would not have needed the search.
    assert!(!quirks.is_empty(), "V8's RegExp no longer finds `\\B` inside a surrogate pair");
    eprintln!(
        "{checked} short verdicts on {} patterns agree; {} where V8's test finds `\\B` inside a surrogate pair; {} \
         long strings answered; node took {took:?}",
        js.len(),
        quirks.len(),
        long_strings.len()
    );
}
