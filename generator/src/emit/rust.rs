//! Emitter stub: replaced by the real rust emitter.

use super::{EmitError, OutFile};
use crate::ir::Protocol;

/// Emits the rust output.
///
/// # Errors
/// Never yet.
pub fn emit(_p: &Protocol) -> Result<Vec<OutFile>, EmitError> {
    Ok(Vec::new())
}
