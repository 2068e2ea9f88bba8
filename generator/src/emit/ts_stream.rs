//! Emits the TypeScript stream checker `src/stream.ts` (STUB: the stream-validation work replaces this).

use super::{EmitError, OutFile};
use crate::ir::Protocol;

/// Emits `src/stream.ts` of the TypeScript package.
///
/// # Errors
/// Never yet.
pub fn emit(_p: &Protocol) -> Result<Vec<OutFile>, EmitError> {
    Ok(vec![OutFile::new("src/stream.ts", "// @generated stub: the stream checker comes with stream validation.\nexport {};\n")])
}
