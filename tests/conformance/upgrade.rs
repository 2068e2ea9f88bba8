//! The upcasters agree with `wiregen migrate`: every v1 line of the migrate fixtures (the Realistic Flow written
//! the v1 way, the lossy lines, the v1 example's valid envelope fixtures) is upgraded by the generated Rust crate
//! (`session_wire::upgrade::upgrade`), the generated TypeScript package (`upgrade`) and the library's plan that
//! `wiregen migrate` applies; the three results and losses must be equal, and where `wiregen migrate` writes a
//! line it writes exactly that result (it refuses a line exactly when the result has a loss or NEW rejects it).

use std::sync::Arc;

use serde_json::Value;
use wiregen::engine::{Engine, EngineOptions};
use wiregen::migrate::{migrate_value, OnLoss};
use wiregen::upgrade::Plan;

use crate::fixtures::root;

/// Every v1 line: (where it comes from, the value).
fn v1_lines() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for f in ["v1-realistic-flow.jsonl", "v1-lossy.jsonl"] {
        let text = std::fs::read_to_string(root().join("tests/fixtures/migrate").join(f)).expect("fixture");
        for (i, l) in text.lines().enumerate() {
            if let Ok(v) = serde_json::from_str::<Value>(l) {
                out.push((format!("{f}:{}", i + 1), v));
            }
        }
    }
    out.extend(crate::v1_fixtures::v1_envelope_fixtures(&root()));
    out
}

#[test]
fn the_rust_and_typescript_upcasters_agree_with_wiregen_migrate_on_every_fixture() {
    let lines = v1_lines();
    assert!(lines.len() >= 40, "{}", lines.len());
    let v1 = wiregen::load::load(&root().join("examples/happy-wire/schema")).expect("v1");
    let v2 = wiregen::load::load(&root().join("schema")).expect("v2");
    let plan = Plan::of(&v2).expect("a protocol");
    assert!(!plan.is_empty());
    let (oe, ne) = (
        Engine::new(Arc::new(v1), EngineOptions::default()).expect("v1 engine"),
        Engine::new(Arc::new(v2), EngineOptions::default()).expect("v2 engine"),
    );
    // The upcasters take what OLD's readers see (happy-wire's parsed value: the keys its stripping objects drop,
    // dropped), as `wiregen migrate` does before it upgrades.
    let v1_model = oe.model().clone();
    let views: Vec<(Value, Vec<String>)> = lines
        .iter()
        .map(|(_, v)| {
            let mut view = v.clone();
            let gone = if oe.check_value(v).is_empty() {
                wiregen::migrate::stripped(&v1_model, oe.root(), &mut view)
            } else {
                Vec::new()
            };
            (view, gone)
        })
        .collect();
    let raw: Vec<Vec<u8>> = views.iter().map(|(v, _)| serde_json::to_vec(v).expect("json")).collect();
    let ts = crate::zod::run_lines_with_runner("upgrade-runner.mjs", &raw);
    let mut failures = Vec::new();
    let (mut written, mut refused, mut changed) = (0, 0, 0);
    for ((((name, v), (view, gone)), ts), i) in lines.iter().zip(&views).zip(&ts).zip(1..) {
        let mut lib = view.clone();
        let lib_losses: Vec<(String, String)> =
            plan.apply(&mut lib).into_iter().map(|l| (l.rule.to_string(), l.pointer)).collect();
        let mut rust = view.clone();
        let rust_losses: Vec<(String, String)> =
            session_wire::upgrade::upgrade(&mut rust).into_iter().map(|l| (l.rule.to_string(), l.pointer)).collect();
        let ts_losses: Vec<(String, String)> = ts["losses"]
            .as_array()
            .map(|a| {
                a.iter().map(|p| (p[0].as_str().unwrap_or("").into(), p[1].as_str().unwrap_or("").into())).collect()
            })
            .unwrap_or_default();
        if rust != lib || rust_losses != lib_losses {
            failures.push(format!("{name}: Rust {rust} {rust_losses:?}, wiregen {lib} {lib_losses:?}"));
        }
        if ts["value"] != lib || ts_losses != lib_losses {
            failures.push(format!("{name}: TypeScript {ts}, wiregen {lib} {lib_losses:?}"));
        }
        // Keys in the same order too (the generated code keeps a renamed key where it stood).
        if serde_json::to_string(&rust).ok() != serde_json::to_string(&lib).ok() {
            failures.push(format!("{name}: key order differs: {rust} vs {lib}"));
        }
        changed += usize::from(&lib != view);
        match migrate_value(&oe, &ne, &plan, i, v, OnLoss::Refuse) {
            (Some(out), notes) => {
                written += 1;
                // Its only notes: the stripped keys.
                let noted: Vec<&str> = notes.iter().map(|n| n.pointer.as_str()).collect();
                if out != lib || noted != gone.iter().map(String::as_str).collect::<Vec<_>>() || !lib_losses.is_empty()
                {
                    failures.push(format!("{name}: migrate wrote {out} ({notes:?}), the upcasters {lib}"));
                }
            }
            (None, notes) => {
                refused += 1;
                // Refused: a loss, or NEW rejects the upgraded value (or OLD the input).
                let rejected = !ne.check_value(&lib).is_empty() || !oe.check_value(v).is_empty();
                if lib_losses.is_empty() && !rejected {
                    failures.push(format!("{name}: migrate refused a value the upcasters carry: {notes:?}"));
                }
            }
        }
    }
    eprintln!("{} v1 lines: {changed} changed by the upgrade; migrate wrote {written}, refused {refused}", lines.len());
    assert!(changed >= 5 && written >= 30 && refused >= 5, "{changed} {written} {refused}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
