//! Regenerates the session protocol's Rust types from `schema/` into `OUT_DIR` on every schema change, and
//! fails the build with the generator's located diagnostics when the schema is broken.
//!
//! Set `WIREGEN_SCHEMA_DIR` to build from another schema directory.

#[path = "step.rs"]
mod step;

use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    println!("cargo::rerun-if-env-changed={}", step::SCHEMA_ENV);
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=step.rs");
    let schema = step::schema_dir(&manifest_dir, std::env::var_os(step::SCHEMA_ENV));
    // A directory is scanned recursively: any schema file change reruns this script.
    println!("cargo::rerun-if-changed={}", schema.display());
    let wire = out_dir.join("wire");
    match step::regenerate(&schema, &wire) {
        Ok(_) => {
            let module = out_dir.join("session_wire.rs");
            let text = step::module_file(&wire);
            // Write only if changed, like the generator does.
            if std::fs::read_to_string(&module).ok().as_deref() != Some(text.as_str()) {
                std::fs::write(&module, text).expect("write OUT_DIR/session_wire.rs");
            }
        }
        Err(diagnostics) => {
            for d in &diagnostics {
                println!("cargo::error={d}");
            }
            println!("cargo::error=wiregen: the schema in {} is broken; nothing was generated", schema.display());
        }
    }
}
