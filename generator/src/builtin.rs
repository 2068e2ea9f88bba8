//! The session protocol compiled into this build (features `cli` or `serve`): the files of the repository's
//! `schema/` directory as they were at build time, so `wiregen validate` and `wiregen serve` need no `--schema`.

use std::path::Path;

use crate::diag::{SchemaError, SchemaErrorKind, SchemaErrors};
use crate::ir::Model;

/// The schema files compiled in: (path relative to the schema directory, text). Empty when the crate was built
/// without its repository's `schema/` beside it.
pub const FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/builtin_schema.rs"));

/// The name diagnostics give the compiled-in directory.
pub const NAME: &str = "<built-in schema>";

/// Loads the compiled-in protocol.
///
/// # Errors
/// When nothing was compiled in (then a schema must be named, e.g. with `--schema`); a compiled-in schema that
/// does not load cannot happen, as the build that embedded it generated from it.
pub fn load() -> Result<Model, SchemaErrors> {
    if FILES.is_empty() {
        return Err(SchemaErrors(vec![SchemaError {
            kind: SchemaErrorKind::Io,
            file: NAME.into(),
            line: 0,
            col: 0,
            pointer: String::new(),
            message: "this build has no compiled-in schema: name one with --schema DIR".into(),
        }]));
    }
    crate::load::load_builtin(Path::new(NAME), FILES)
}
