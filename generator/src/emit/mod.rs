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
        let files = match self {
            Output::Schema => schema::emit_model(m)?,
            Output::Rust => rust::emit_model(m)?,
            Output::Ts => ts::emit_model(m)?,
            Output::Docs => docs::emit_model(m)?,
        };
        Ok(files
            .into_iter()
            .map(|f| OutFile { path: format!("{}/{}", self.name(), f.path), contents: f.contents })
            .collect())
    }
}

catalogue! {
    /// A language `wiregen types` prints one schema file's module in.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Lang {
        /// Every language, in the order `--help` lists them.
        const ALL;
        /// The name `--lang` takes.
        fn name;
        /// Parses a name given to `--lang`.
        fn from_name;
        /// A Rust module: the types, with `Deserialize` that accepts only valid values.
        Rust = "rust",
        /// An ES module: Zod 4 schemas and their inferred types.
        Zod = "zod",
        /// An ES module: a dependency-free validator per type, returning the error list.
        TsStandalone = "ts-standalone",
    }
}

impl Lang {
    /// The module for every type of the model (a single schema file's root is `Root`): Rust `Root` that
    /// `serde_json::from_str::<Root>` decodes only when valid; a Zod module exporting `rootSchema` and the type
    /// `Root`; a standalone module exporting `validateRoot(value)`, which returns the error list (empty when valid).
    ///
    /// # Errors
    /// When the model holds something this language cannot express.
    pub fn module(self, m: &Model) -> Result<String, EmitError> {
        match self {
            Lang::Rust => rust::module(m),
            Lang::Zod => ts::zod_module(m),
            Lang::TsStandalone => ts::standalone_module(m),
        }
    }
}

/// The Rust module of one model for a crate that holds many (the JSON-Schema-Test-Suite harness compiles one
/// crate with a module per case): like [`Lang::module`] for [`Lang::Rust`], but the module uses its parent's
/// runtime (`use super::{rt, rt_regex, Rule}`), which [`rust_shared_runtime`] provides once.
///
/// # Errors
/// When the model holds something Rust cannot express.
pub fn rust_module_shared(m: &Model) -> Result<String, EmitError> {
    rust::module_shared(m)
}

/// The top of the `lib.rs` of a crate of [`rust_module_shared`] modules: the `Rule` catalogue and the runtime
/// modules `rt` and `rt_regex`. The crate's dependencies are [`rust_dependencies`].
///
/// # Errors
/// Never, unless the emitter itself is broken.
pub fn rust_shared_runtime() -> Result<String, EmitError> {
    rust::shared_runtime()
}

/// The `[dependencies]` lines generated Rust needs (`serde`, `serde_json`, and `regex` when `patterns`).
pub fn rust_dependencies(patterns: bool) -> String {
    rust::dependencies(patterns)
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
    /// The model holds something this target cannot express, at this place of the schema.
    UnsupportedAt {
        /// Where in the schema.
        origin: crate::ir::Origin,
        /// What cannot be expressed, and why.
        message: String,
    },
}

impl EmitError {
    /// A located refusal: the schema node `origin` holds something this target cannot express.
    pub fn at(origin: &crate::ir::Origin, message: impl Into<String>) -> Self {
        EmitError::UnsupportedAt { origin: origin.clone(), message: message.into() }
    }
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmitError::Template(_) => f.write_str("a template failed to render"),
            EmitError::RustSyntax(_) => f.write_str("the generated Rust does not parse"),
            EmitError::Unsupported(s) => write!(f, "cannot emit: {s}"),
            EmitError::UnsupportedAt { origin, message } => {
                let ptr = if origin.pointer.is_empty() { "(root)" } else { &origin.pointer };
                write!(f, "{}: {ptr}: cannot emit: {message}", origin.file)
            }
        }
    }
}

impl std::error::Error for EmitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EmitError::Template(e) => Some(e),
            EmitError::RustSyntax(e) => Some(e),
            EmitError::Unsupported(_) | EmitError::UnsupportedAt { .. } => None,
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
