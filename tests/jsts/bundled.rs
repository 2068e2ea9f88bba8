//! The bundled schema: each case's schema file loaded as `wiregen generate` does, bundled by the schema output
//! (`Output::Schema`), and every instance checked against the bundle by the `jsonschema` crate.

use serde_json::Value;

use crate::{Case, Outcome};

pub fn run(cases: &[Case]) -> Vec<Outcome> {
    cases
        .iter()
        .map(|c| {
            let model = match wiregen::load::load(&c.file) {
                Ok(m) => m,
                Err(e) => return Outcome::Refused(e.to_string()),
            };
            let files = match wiregen::emit::Output::Schema.emit(&model, &Default::default()) {
                Ok(f) => f,
                Err(e) => return Outcome::Refused(e.to_string()),
            };
            let bundle: Value = serde_json::from_str(&files[0].contents).expect("the bundle is JSON");
            let v = jsonschema::draft202012::new(&bundle)
                .unwrap_or_else(|e| panic!("{}: the bundle does not compile: {e}", c.id));
            Outcome::Verdicts(c.tests.iter().map(|(_, data, _)| v.is_valid(data)).collect())
        })
        .collect()
}
