//! Compiles the session protocol (`../schema/`, the repository's schema directory) into the `wiregen` binary and
//! the service, so `wiregen validate` and `wiregen serve` work from any folder without `--schema`.
//!
//! Only with the `cli` or `serve` feature: a build script that depends on the library with
//! `default-features = false` embeds nothing. Where `../schema/` is absent (a packaged crate), nothing is
//! embedded either, and those commands ask for `--schema`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let wanted = std::env::var_os("CARGO_FEATURE_CLI").is_some() || std::env::var_os("CARGO_FEATURE_SERVE").is_some();
    let dir =
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("../schema");
    let mut files = Vec::new();
    if wanted && dir.is_dir() {
        println!("cargo::rerun-if-changed={}", dir.display());
        collect(&dir, "", &mut files);
    }
    files.sort();
    let mut code = String::from("&[\n");
    for (rel, path) in &files {
        println!("cargo::rerun-if-changed={}", path.display());
        let _ = writeln!(code, "    ({rel:?}, include_str!({:?})),", path.display().to_string());
    }
    code.push(']');
    std::fs::write(out.join("builtin_schema.rs"), code).expect("write builtin_schema.rs");
}

/// Every `.json` file below `dir`, as (path relative to the schema directory with `/`, absolute path).
fn collect(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            println!("cargo::rerun-if-changed={}", p.display());
            collect(&p, &format!("{prefix}{name}/"), out);
        } else if name.ends_with(".json") {
            out.push((format!("{prefix}{name}"), p));
        }
    }
}
