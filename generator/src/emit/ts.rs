//! Emitter stub: replaced by the real ts emitter.

use super::{EmitError, OutFile};
use crate::ir::Protocol;

/// Emits the ts output.
///
/// # Errors
/// Never yet.
pub fn emit(_p: &Protocol) -> Result<Vec<OutFile>, EmitError> {
    Ok(Vec::new())
}
