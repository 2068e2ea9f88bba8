//! The generated Zod schemas and standalone validators: not generated yet, so every case is refused.

use crate::{Case, Outcome};

/// Outcomes for Zod and for the standalone validator.
pub fn run(cases: &[Case]) -> (Vec<Outcome>, Vec<Outcome>) {
    let refused = || cases.iter().map(|_| Outcome::Refused("not generated yet".into())).collect();
    (refused(), refused())
}
