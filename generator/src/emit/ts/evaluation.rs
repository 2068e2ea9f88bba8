//! An evaluation plan ([`Evaluation`], what a node evaluates for `unevaluatedProperties`/`unevaluatedItems`) as
//! the TypeScript literal both runtimes read (`evaluated` in the Zod runtime, `$evaluated` in the standalone
//! validator's): one shape, each output giving its own validity tests and regular expressions.

use super::js::string_lit;
use super::EmitError;
use crate::ir::*;

/// What an output puts in a plan literal.
pub(crate) trait PlanChecks {
    /// A `(x: unknown) => boolean` expression: whether a value is valid against `n`.
    fn valid_fn(&mut self, n: &Node) -> Result<String, EmitError>;
    /// A matcher expression for a pattern ([`super::js::matcher_lit`]).
    fn matcher_expr(&mut self, p: &Pattern) -> String;
}

/// The literal of `e`.
pub(crate) fn literal(e: &Evaluation, c: &mut dyn PlanChecks) -> Result<String, EmitError> {
    Ok(match e {
        Evaluation::None => "null".to_string(),
        Evaluation::Items { prefix, rest, contains } => {
            let f = match contains {
                Some(n) => c.valid_fn(n)?,
                None => "null".to_string(),
            };
            format!("{{ prefix: {prefix}, rest: {rest}, contains: {f} }}")
        }
        Evaluation::Keys { names, patterns, rest } => {
            let names: Vec<String> = names.iter().map(|n| string_lit(n).to_string()).collect();
            let res: Vec<String> = patterns.iter().map(|p| c.matcher_expr(p)).collect();
            format!("{{ names: new Set([{}]), patterns: [{}], rest: {rest} }}", names.join(", "), res.join(", "))
        }
        Evaluation::All(plans) => {
            let ps = plans.iter().map(|p| literal(p, c)).collect::<Result<Vec<_>, _>>()?;
            format!("{{ all: [{}] }}", ps.join(", "))
        }
        Evaluation::Valid(plans) => {
            let mut ps = Vec::new();
            for (n, p) in plans {
                ps.push(format!("[{}, {}]", c.valid_fn(n)?, literal(p, c)?));
            }
            format!("{{ valid: [{}] }}", ps.join(", "))
        }
        Evaluation::Cond { cond, then, otherwise } => {
            let f = c.valid_fn(cond)?;
            format!("{{ cond: {f}, then: {}, otherwise: {} }}", literal(then, c)?, literal(otherwise, c)?)
        }
        Evaluation::Dependent { property, then } => {
            format!("{{ property: {}, then: {} }}", string_lit(property), literal(then, c)?)
        }
    })
}
