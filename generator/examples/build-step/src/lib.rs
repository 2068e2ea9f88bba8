//! Example of wiregen as a build step: `build.rs` regenerates the protocol's Rust types from `schema/` into
//! `OUT_DIR`, and this crate includes them as [`session_wire`].
//!
//! ```text
//! [build-dependencies]
//! wiregen = { path = "...", default-features = false }   # code generation only: no CLI, no server
//! ```
//!
//! A broken schema fails `cargo build` with the generator's diagnostics, each naming the schema file, line,
//! column and JSON Pointer.

include!(concat!(env!("OUT_DIR"), "/session_wire.rs"));

/// Where `build.rs` wrote the generated output (`<OUT_DIR>/wire`; the Rust crate is in its `rust/` folder).
pub const GENERATED_DIR: &str = concat!(env!("OUT_DIR"), "/wire");
