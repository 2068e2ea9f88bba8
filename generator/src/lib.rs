//! # wiregen
//!
//! Schema-first code generation and validation for the agent session protocol. JSON Schema files in `schema/`
//! are the single source of truth; wiregen loads them into one typed model ([`ir::Protocol`]) and emits a
//! bundled standard schema, Rust types, TypeScript/Zod and a markdown reference from that model, and validates
//! messages and streams against it.
//!
//! The pipeline is load -> IR -> emit: [`load::load`] reads and checks the schema, [`emit::Output::emit`]
//! turns the model into files, [`generate()`] writes them (only what changed) and [`check()`] compares them.
//!
//! # Example
//! ```no_run
//! let opts = wiregen::Options::new("schema", "generated");
//! let report = wiregen::generate(&opts).expect("schema is valid");
//! println!("{} files written", report.written.len());
//! ```
//!
//! # Errors
//! Schema problems come back as [`diag::SchemaErrors`]: every problem with its file, line, column, JSON
//! Pointer and a stable code. Message problems come back as [`engine::Issue`]s with a pointer and rule id.
#![deny(missing_docs)]

mod catalogue;
pub mod diag;
pub mod emit;
pub mod engine;
pub mod fast;
pub mod generate;
pub mod ir;
pub mod load;
pub mod rules;
#[cfg(feature = "serve")]
pub mod serve;
pub mod stream;
pub mod validate;

pub use generate::{check, generate, CheckReport, Error, GenerateReport, Options};
