//! The engine: each case's schema file loaded as `wiregen validate --schema FILE` does, every instance checked, as
//! a parsed value and as a line (the byte scanner's path).

use wiregen::engine::{Engine, EngineOptions};

use crate::{Case, Outcome};

pub fn run(cases: &[Case]) -> Vec<Outcome> {
    cases
        .iter()
        .map(|c| {
            let model = match wiregen::load::load(&c.file) {
                Ok(m) => m,
                Err(e) => return Outcome::Refused(e.to_string()),
            };
            let engine = match Engine::new(model, EngineOptions::default()) {
                Ok(e) => e,
                Err(e) => return Outcome::Refused(e.to_string()),
            };
            let verdicts = c
                .tests
                .iter()
                .map(|(desc, data, _)| {
                    let issues = engine.check_value(data);
                    // The CLI's path, a line through the byte scanner (then the tree when it is not certainly
                    // valid), says exactly what the engine says of the parsed value: the same errors, in order.
                    let line = serde_json::to_vec(data).expect("JSON");
                    assert_eq!(engine.check_line_fast(&line), issues, "{} ({}): {desc}: {data}", c.id, c.description);
                    issues.is_empty()
                })
                .collect();
            Outcome::Verdicts(verdicts)
        })
        .collect()
}
