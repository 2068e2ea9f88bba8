//! Emitters: each turns the [`Protocol`] model into the files of one output. Emitters read only the model.

use std::fmt;

use crate::catalogue::catalogue;
use crate::ir::Model;

pub(crate) mod docs;
pub(crate) mod rust;
pub(crate) mod schema;
pub(crate) mod ts;
pub(crate) mod ts_stream;

/// The command that regenerates every output; named in each file's `@generated` header.
pub const REGENERATE: &str = "cargo run -p wiregen -- generate";

catalogue! {
    /// One output of `wiregen generate`; each owns one subdirectory of the output directory.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Output {
        /// Every output, in generation order.
        const ALL;
        /// The name used by `--only` and the subdirectory it owns.
        fn name;
        /// Parses a name given to `--only`.
        fn from_name;
        /// `schema/`: the bundled standard JSON Schema.
        Schema = "schema",
        /// `rust/`: the `session-wire` crate.
        Rust = "rust",
        /// `ts/`: the `session-wire` npm package.
        Ts = "ts",
        /// `docs/`: the markdown reference.
        Docs = "docs",
    }
}

impl Output {
    /// Runs this output's emitter.
    ///
    /// # Errors
    /// When the model holds something the target cannot express.
    pub fn emit(self, m: &Model) -> Result<Vec<OutFile>, EmitError> {
        let p = &crate::legacy::protocol(m)?;
        let files = match self {
            Output::Schema => schema::emit(p)?,
            Output::Rust => rust::emit(p)?,
            Output::Ts => {
                let mut f = ts::emit(p)?;
                f.extend(ts_stream::emit(p)?);
                f
            }
            Output::Docs => docs::emit(p)?,
        };
        Ok(files
            .into_iter()
            .map(|f| OutFile { path: format!("{}/{}", self.name(), f.path), contents: f.contents })
            .collect())
    }
}

/// A file produced by an emitter, with its path relative to the output's own directory (then to the output root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFile {
    /// Relative path with `/` separators.
    pub path: String,
    /// Full contents.
    pub contents: String,
}

impl OutFile {
    /// A file at `path` with `contents`.
    pub fn new(path: impl Into<String>, contents: impl Into<String>) -> Self {
        OutFile { path: path.into(), contents: contents.into() }
    }
}

/// An emitter could not produce its output. `Display` says what failed; the cause, when there is one, is
/// [`source()`](std::error::Error::source).
#[derive(Debug)]
#[non_exhaustive]
pub enum EmitError {
    /// A template failed to render (a template bug, reported with minijinja's own error as the source).
    Template(minijinja::Error),
    /// Generated Rust did not parse (an emitter bug; the source is syn's error).
    RustSyntax(syn::Error),
    /// The model holds something this target cannot express.
    Unsupported(String),
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmitError::Template(_) => f.write_str("a template failed to render"),
            EmitError::RustSyntax(_) => f.write_str("the generated Rust does not parse"),
            EmitError::Unsupported(s) => write!(f, "cannot emit: {s}"),
        }
    }
}

impl std::error::Error for EmitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EmitError::Template(e) => Some(e),
            EmitError::RustSyntax(e) => Some(e),
            EmitError::Unsupported(_) => None,
        }
    }
}

impl From<minijinja::Error> for EmitError {
    fn from(e: minijinja::Error) -> Self {
        EmitError::Template(e)
    }
}

impl From<syn::Error> for EmitError {
    fn from(e: syn::Error) -> Self {
        EmitError::RustSyntax(e)
    }
}
