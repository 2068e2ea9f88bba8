//! One number semantics in every language: many boundary numbers, written as JSON number text, in the integer
//! fields (`time`, `size`, `image.width`/`height`, token counts: 0 to 2^53-1) and in the one number field
//! (`usage.cost`, >= 0), through the engine, the fast path, the Rust crate (text and value), Zod, the standalone
//! validator and ajv (`differential.rs`; the JavaScript side in one node process). Every checker must give the
//! engine's verdict (and, the precise ones, its first rule and pointer): the integer check runs on the correctly
//! rounded double everywhere, as JavaScript reads the text.

use crate::differential::{Harness, Report};
use crate::rng::Rng;

/// Where a number goes: a message with `N` in one numeric field.
const TEMPLATES: &[&str] = &[
    r#"{"id":"m1","time":N,"role":"user","ev":{"t":"abort"}}"#,
    r#"{"id":"m1","time":1,"role":"user","ev":{"t":"file","ref":"r","name":"n","size":N}}"#,
    r#"{"id":"m1","time":1,"role":"user","ev":{"t":"file","ref":"r","name":"n","size":1,"image":{"width":N,"height":1,"thumbhash":"h"}}}"#,
    r#"{"id":"m1","time":1,"role":"agent","ev":{"t":"file","ref":"r","name":"n","size":1,"image":{"width":1,"height":N,"thumbhash":"h"}}}"#,
    r#"{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-end","status":"completed","usage":{"inputTokens":N,"outputTokens":1,"cost":0.5}}}"#,
    r#"{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-end","status":"completed","usage":{"inputTokens":1,"outputTokens":N,"cost":0.5}}}"#,
    r#"{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-end","status":"completed","usage":{"inputTokens":1,"outputTokens":1,"cost":N}}}"#,
];

/// Number texts at the edges of what doubles, integers and the bounds can tell apart.
fn fixed_numbers() -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let two53: u64 = 1 << 53;
    for k in two53 - 4..=two53 + 4 {
        v.push(k.to_string());
        for frac in ["0", "00", "4", "5", "6", "49999999999999999", "50000000000000001", "999999999999999999"] {
            v.push(format!("{k}.{frac}"));
        }
        v.push(format!("{k}e0"));
        v.push(format!("{k}.0e0"));
        v.push(format!("{k}0e-1"));
        let s = k.to_string();
        v.push(format!("{}.{}e{}", &s[..1], &s[1..], s.len() - 1));
    }
    // The issue's reproductions and their neighbours.
    for s in
        ["4000000000000000.5", "9007199254740991.4", "4000000000000000.25", "4503599627370495.5", "4503599627370496.5"]
    {
        v.push(s.to_string());
    }
    for s in [
        "0",
        "-0",
        "-0.0",
        "0.0",
        "0e0",
        "-0e0",
        "0e-5",
        "0E+5",
        "-0e-400",
        "1",
        "-1",
        "1.0",
        "1.5",
        "1e0",
        "1E3",
        "1e+3",
        "1e-3",
        "15e-1",
        "1.5e1",
        "1e15",
        "1e16",
        "1e21",
        "1e22",
        "1e23",
        "1e300",
        "1e308",
        "-1e308",
        "1e309",
        "1e400",
        "-1e400",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "5e-324",
        "4.9e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "2.2250738585072014e-308",
        "2.2250738585072011e-308",
        "1e-400",
        "0.1",
        "0.2",
        "0.30000000000000004",
        "1e-7",
        "123456789012345678901234567890",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "9223372036854775807",
        "9223372036854775808",
    ] {
        v.push(s.to_string());
    }
    v.push(format!("1.{}1", "0".repeat(30)));
    v.push(format!("0.{}", "9".repeat(40)));
    v.push(format!("9007199254740991.{}1", "0".repeat(20)));
    v.push(format!("{}.{}", "9".repeat(16), "9".repeat(20)));
    v.push(format!("1{}", "0".repeat(400)));
    v.push(format!("0.{}1", "0".repeat(400)));
    v
}

/// A random number text: random digits, point and exponent, leaning to the interesting magnitudes.
fn random_number(rng: &mut Rng) -> String {
    match rng.below(6) {
        // x.5-like fractions near large integers.
        0 => {
            let k = (1u64 << (48 + rng.below(8))) + rng.below(1 << 20) - (1 << 19);
            let frac = *rng.pick(&["5", "25", "75", "4999999999", "5000000001", "0", "1", "9"]);
            format!("{k}.{frac}")
        }
        // Integers around 2^53 written with an exponent.
        1 => {
            let k = (1u64 << 53) - 64 + rng.below(128);
            let s = k.to_string();
            let cut = 1 + rng.below(s.len() as u64 - 1) as usize;
            format!("{}.{}e{}", &s[..cut], &s[cut..], s.len() - cut)
        }
        // Many digits, anywhere.
        2 => {
            let n = 1 + rng.below(40) as usize;
            let mut digits: String = (0..n).map(|_| char::from(b'0' + rng.below(10) as u8)).collect();
            if digits.len() > 1 && digits.starts_with('0') {
                digits.replace_range(..1, "1");
            }
            let point = rng.below(n as u64 + 1) as usize;
            if point > 0 && point < n {
                digits.insert(point, '.');
            }
            digits
        }
        // Mantissa and exponent, including subnormals and overflow.
        3 => {
            let m = 1 + rng.below(9);
            let e = rng.below(700) as i64 - 350;
            format!("{m}.{}e{e}", rng.below(1_000_000))
        }
        // Small integers and halves (the common case, both verdicts).
        4 => {
            let k = rng.below(1 << 20);
            if rng.below(2) == 0 {
                k.to_string()
            } else {
                format!("{k}.5")
            }
        }
        // Negative forms of the above.
        _ => format!("-{}", random_number(rng).trim_start_matches('-')),
    }
}

/// One number text for the fuzz: a fixed boundary number or a random one.
pub fn number(rng: &mut Rng) -> String {
    static FIXED: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let fixed = FIXED.get_or_init(fixed_numbers);
    if rng.below(3) == 0 {
        rng.pick(fixed).clone()
    } else {
        random_number(rng)
    }
}

/// `count` numbers: the fixed ones, then random ones.
pub fn numbers(count: usize, rng: &mut Rng) -> Vec<String> {
    let mut v = fixed_numbers();
    while v.len() < count {
        v.push(random_number(rng));
    }
    v
}

#[test]
fn boundary_numbers_get_the_same_verdict_from_every_checker() {
    let mut rng = Rng(0x5EED_2053);
    let nums = numbers(20_000, &mut rng);
    // Every number in `time`, and in one of the other numeric fields in turn.
    let mut lines = Vec::with_capacity(nums.len() * 2);
    for (i, n) in nums.iter().enumerate() {
        lines.push(TEMPLATES[0].replace('N', n).into_bytes());
        lines.push(TEMPLATES[1 + i % (TEMPLATES.len() - 1)].replace('N', n).into_bytes());
    }
    let harness = Harness::new();
    let mut report = Report::default();
    harness.check(&lines, &mut report);
    eprintln!("boundary numbers: {}", report.summary());
    report.assert_agreement();
    // Both verdicts, and each of the number rules, are reached.
    for rule in ["valid", "type", "minimum", "maximum", "malformed-json"] {
        assert!(report.by_rule.get(rule).copied().unwrap_or(0) > 100, "{rule}: {}", report.summary());
    }
}
