//! The conformance test: every fixture in `tests/fixtures/` goes through every checker and every output, and
//! all must give the fixture's verdict. Precise checkers (the engine, the CLI, the generated Rust types, the
//! generated Zod) must also agree on the first error's rule id and JSON Pointer; standard JSON Schema
//! validators (the bundled schema, the source schema) are held to the verdict.

mod checkers;
mod differential;
mod example;
mod example_rust;
#[path = "../../generator/tests/support/files.rs"]
mod files;
mod fixtures;
mod fuzz;
#[path = "../../generator/tests/support/golden.rs"]
mod golden;
mod many_keys;
#[path = "../../generator/tests/support/mutate.rs"]
mod mutate;
#[path = "../../generator/tests/support/node.rs"]
mod node;
mod numbers;
mod package;
mod patterns;
#[path = "../../generator/tests/support/rng.rs"]
mod rng;
mod rust_types;
mod streams;
mod upgrade;
#[path = "../../generator/tests/support/v1_fixtures.rs"]
mod v1_fixtures;
mod zod;

use checkers::{Checker, Verdict};
use fixtures::{Expect, Fixture};

fn all_checkers() -> Vec<Checker> {
    let mut v = checkers::schema_checkers();
    v.extend(checkers::output_checkers());
    v
}

#[test]
fn every_message_fixture_gets_the_same_verdict_from_every_checker() {
    let fx = fixtures::messages();
    assert!(fx.len() >= 60, "the corpus lost fixtures: {}", fx.len());
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for c in all_checkers() {
        let verdicts = (c.run)(&fx);
        assert_eq!(
            verdicts.len(),
            fx.len(),
            "{} returned {} verdicts for {} fixtures",
            c.name,
            verdicts.len(),
            fx.len()
        );
        let mut ran = 0;
        for (f, v) in fx.iter().zip(&verdicts) {
            if matches!(v, Verdict::Skipped) {
                continue;
            }
            ran += 1;
            if let Some(why) = mismatch(f, v, c.precise) {
                failures.push(format!("{:<10} {}: {why}\n           ({})", c.name, f.name, f.about));
            }
        }
        assert!(ran > 0, "{}: the checker ran no fixture", c.name);
        counts.push(format!("{}: {ran}", c.name));
    }
    eprintln!("fixtures per checker: {}", counts.join(", "));
    assert!(failures.is_empty(), "{} disagreement(s):\n{}", failures.len(), failures.join("\n"));
}

fn mismatch(f: &Fixture, v: &Verdict, precise: bool) -> Option<String> {
    match (&f.expect, v) {
        (Expect::Valid, Verdict::Valid) => None,
        (Expect::Valid, Verdict::Invalid { rule, pointer }) => {
            Some(format!("expected valid, got {rule} at {pointer:?}"))
        }
        (Expect::Invalid { .. }, Verdict::Valid) => Some("expected invalid, got valid".into()),
        (Expect::Invalid { rule, pointer }, Verdict::Invalid { rule: r, pointer: p }) => {
            if precise && (rule != r || pointer != p) {
                Some(format!("expected {rule} at {pointer:?}, got {r} at {p:?}"))
            } else {
                None
            }
        }
        (_, Verdict::Skipped) => None,
    }
}
