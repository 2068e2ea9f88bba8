//! # wiregen
//!
//! Schema-first code generation and validation for the agent session protocol. JSON Schema files in `schema/`
//! are the single source of truth; wiregen loads them into one typed model ([`ir::Model`]), emits a bundled
//! standard schema, Rust types, TypeScript/Zod and a markdown reference from that model, and validates messages
//! and streams against it. The library is the product: the `wiregen` binary is a thin clap wrapper over the
//! functions below, and a `build.rs` or a test calls them directly.
//!
//! # Example
//!
//! Regenerate the Rust types in a build script (the crate's `generator/examples/build-step` does exactly this),
//! with `wiregen = { path = "...", default-features = false }` under `[build-dependencies]`:
//!
//! ```no_run
//! let out_dir = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
//! let mut opts = wiregen::Options::new("schema", out_dir.join("wire"));
//! opts.outputs = vec![wiregen::emit::Output::Rust];
//! match wiregen::generate(&opts) {
//!     // Only files whose bytes changed were written, so an unchanged schema rebuilds nothing downstream.
//!     Ok(report) => println!("cargo::warning={} file(s) written", report.written.len()),
//!     // Every located diagnostic: `file:line:col: error[code]: pointer: message`.
//!     Err(wiregen::Error::Schema(errs)) => errs.0.iter().for_each(|d| println!("cargo::error={d}")),
//!     Err(e) => println!("cargo::error={e}"),
//! }
//! ```
//!
//! Check messages with the same engine as `wiregen validate`:
//!
//! ```
//! use wiregen::engine::{Engine, EngineOptions};
//!
//! let schema = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../schema"));
//! let engine = Engine::new(wiregen::load::load(schema)?, EngineOptions::default())?;
//! let issues = engine.check_line_fast(br#"{"id":"m1","time":1,"role":"agent","ev":{"t":"turn-end","status":"done"}}"#);
//! assert_eq!((issues[0].rule, issues[0].pointer.as_str()), ("enum", "/ev/status"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is public, and why
//!
//! Only what a build script, a test, a tool or a service embedding the checker needs; the fast path, the
//! emitters' helpers, the JSON Pointer locator and the I/O plumbing are private, so they can change freely.
//!
//! - **Generating**: [`generate()`] writes the outputs (only files that changed; files an output no longer
//!   produces are deleted), [`check()`] compares them in memory and reports what is stale with a diff;
//!   [`Options`] says from where, to where and which [`emit::Output`]s. [`emit::Output::emit`] renders one output
//!   in memory as [`emit::OutFile`]s.
//! - **The model**: [`load::load`] reads and checks a schema directory (or one schema file) into an
//!   [`ir::Model`]: its named types, and the session-protocol layer when the schema has one. It is the one model
//!   every emitter and checker reads, public so a tool can inspect it, or adjust it before emitting.
//! - **Validating**: [`engine::Engine`] checks one message and explains every error as an [`engine::Issue`]
//!   (a [`rules::Rule`] id and a JSON Pointer); [`validate::validate_reader`] checks a file or stdin on all
//!   cores; [`stream`] checks the protocol's sequence rules and folds the session rollup.
//! - **Comparing versions**: [`diff::diff`] compares two loaded schemas ([`diff::Side`]: a directory, a file or
//!   `REV:PATH` from git) and says who each change breaks ([`diff::Report`], [`diff::Policy`]).
//! - **Reading old versions**: [`upgrade::Plan`] is a protocol's declared renames and moves, which the generated
//!   `upgrade` functions print; [`migrate::migrate_reader`] rewrites a JSONL stream from one version to the next,
//!   reporting what it cannot carry.
//! - **Serving** (feature `serve`): `serve::run` runs the HTTP validation service; `serve::App` and
//!   `serve::serve` embed it in your own tokio runtime. The library installs no log subscriber and prints
//!   nothing: the binary does both.
//!
//! # Features
//!
//! - `cli` (default): the `wiregen` binary (clap), and [`builtin`]: the repository's `schema/` compiled in, so
//!   `wiregen validate` and `wiregen serve` work from any folder.
//! - `serve` (default): the `serve` module and `wiregen serve` (axum, tokio, hyper, tracing).
//!
//! With `default-features = false` (what a build script wants) neither is compiled: no CLI parser, no async
//! runtime, no HTTP stack.
//!
//! # Errors
//!
//! - A broken schema is [`Error::Schema`] holding [`diag::SchemaErrors`]: every problem, each with its file,
//!   line, column, JSON Pointer and a stable code ([`diag::SchemaErrorKind`]); nothing is written.
//! - Every error type's `Display` says what failed at its own level and returns the cause from
//!   [`source()`](std::error::Error::source), never both: walk the chain (as anyhow's `{:#}` does) for the full
//!   story, and no line is printed twice.
//! - Problems with messages are not errors: they are [`engine::Issue`]s inside [`validate::Record`]s; reading
//!   fails only on I/O.
//! - The error enums and the catalogues ([`rules::Rule`], [`diag::SchemaErrorKind`], [`emit::Output`],
//!   [`diff::ChangeRule`], the service's error codes) are `#[non_exhaustive]`: match them with a wildcard arm.
#![deny(missing_docs)]

#[cfg(any(feature = "cli", feature = "serve"))]
pub mod builtin;
mod catalogue;
mod fast;
#[cfg(test)]
mod freshness;
// The test support files name the library `wiregen::` as the integration tests do (`support/golden.rs` is
// included by both).
#[cfg(test)]
extern crate self as wiregen;
mod generate;
mod graph;
mod pattern;

pub mod diag;
pub mod diff;
pub mod emit;
pub mod engine;
pub mod ir;
pub mod load;
pub mod migrate;
pub mod rules;
#[cfg(feature = "serve")]
pub mod serve;
pub mod stream;
pub mod upgrade;
pub mod validate;

pub use generate::{check, generate, short_diff, CheckReport, Error, GenerateReport, Options};
