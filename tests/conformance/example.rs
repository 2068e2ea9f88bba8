//! The happy-wire example (`examples/happy-wire/`): its fixtures, whose verdicts come from happy-wire's own Zod
//! schemas, through every checker. Each fixture names the exported schema it is for (`sessionEnvelopeSchema`);
//! every checker must give the fixture's verdict, and the precise checkers the engine's first rule and pointer.

use std::path::PathBuf;

use serde_json::Value;
use wiregen::engine::{Engine, EngineOptions};

use crate::checkers::Verdict;
use crate::fixtures::root;

/// One fixture of the example.
#[derive(Debug, Clone)]
pub struct ExampleFixture {
    /// File stem.
    pub name: String,
    /// What it shows.
    pub about: String,
    /// The exported Zod schema name of the type it is checked against.
    pub ty: String,
    /// The value.
    pub value: Value,
    /// The verdict happy-wire's own schema gives.
    pub valid: bool,
    /// What happy-wire's schema returns for a valid value (unknown keys of strip objects dropped).
    pub parsed: Option<Value>,
}

/// The example's schema directory.
pub fn schema_dir() -> PathBuf {
    root().join("examples/happy-wire/schema")
}

/// Every fixture of the example, sorted by name.
pub fn fixtures() -> Vec<ExampleFixture> {
    let dir = root().join("examples/happy-wire/fixtures");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("JSON");
            ExampleFixture {
                name: p.file_stem().and_then(|s| s.to_str()).expect("name").to_string(),
                about: v["about"].as_str().unwrap_or_default().to_string(),
                ty: v["type"].as_str().expect("type").to_string(),
                value: v["value"].clone(),
                valid: v["valid"].as_bool().expect("valid"),
                parsed: v.get("parsed").cloned(),
            }
        })
        .collect()
}

/// A checker of the example's fixtures.
pub struct ExampleChecker {
    /// Short name for reports.
    pub name: &'static str,
    /// Whether rule and pointer must equal the engine's.
    pub precise: bool,
    /// Runs every fixture.
    pub run: fn(&[ExampleFixture]) -> Vec<Verdict>,
}

/// Every checker of the example (outputs add theirs here).
pub fn checkers() -> Vec<ExampleChecker> {
    let mut v = vec![ExampleChecker { name: "engine", precise: true, run: engine }];
    v.extend(crate::example_rust::checkers());
    v
}

fn engine(fx: &[ExampleFixture]) -> Vec<Verdict> {
    let model = std::sync::Arc::new(wiregen::load::load(&schema_dir()).expect("the example's schema loads"));
    fx.iter()
        .map(|f| {
            let e = Engine::for_type_named(model.clone(), &f.ty, EngineOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", f.name));
            match e.check_value(&f.value).first() {
                None => Verdict::Valid,
                Some(i) => Verdict::Invalid { rule: i.rule.to_string(), pointer: i.pointer.clone() },
            }
        })
        .collect()
}

#[test]
fn every_example_fixture_gets_happy_wires_verdict_from_every_checker() {
    let fx = fixtures();
    assert!(fx.len() >= 300, "the example lost fixtures: {}", fx.len());
    for f in &fx {
        assert_eq!(f.valid, f.parsed.is_some(), "{}: a valid fixture records what happy-wire parses it to", f.name);
    }
    let oracle = engine(&fx);
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for c in checkers() {
        let verdicts = (c.run)(&fx);
        assert_eq!(verdicts.len(), fx.len(), "{}: one verdict per fixture", c.name);
        let mut ran = 0;
        for ((f, v), o) in fx.iter().zip(&verdicts).zip(&oracle) {
            let why = match (f.valid, v) {
                (_, Verdict::Skipped) => continue,
                (true, Verdict::Valid) | (false, Verdict::Invalid { .. }) => match (c.precise, v, o) {
                    (true, Verdict::Invalid { rule, pointer }, Verdict::Invalid { rule: r, pointer: p })
                        if (rule, pointer) != (r, p) =>
                    {
                        Some(format!("first error {rule} at {pointer:?}, the engine's is {r} at {p:?}"))
                    }
                    _ => None,
                },
                (true, Verdict::Invalid { rule, pointer }) => {
                    Some(format!("expected valid, got {rule} at {pointer:?}"))
                }
                (false, Verdict::Valid) => Some("expected invalid, got valid".into()),
            };
            ran += 1;
            if let Some(why) = why {
                failures.push(format!("{:<13} {} ({}): {why}\n              ({})", c.name, f.name, f.ty, f.about));
            }
        }
        counts.push(format!("{}: {ran}", c.name));
    }
    eprintln!("example fixtures per checker: {}", counts.join(", "));
    assert!(failures.is_empty(), "{} disagreement(s):\n{}", failures.len(), failures.join("\n"));
}
