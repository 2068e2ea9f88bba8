//! The engine: each case's schema file loaded as `wiregen validate --schema FILE` does, every instance checked.

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
            Outcome::Verdicts(c.tests.iter().map(|(_, data, _)| engine.check_value(data).is_empty()).collect())
        })
        .collect()
}
