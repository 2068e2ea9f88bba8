//! The one golden helper of the test suite (in the spirit of expectorate's `assert_contents` and insta).
//!
//! A golden is a committed file that a test's output must equal byte for byte. There is ONE update switch:
//! `WIREGEN_UPDATE_GOLDEN=1` makes [`check_golden`] / [`assert_golden`] rewrite the file instead of comparing
//! (and [`updating`] tells a test to delete goldens it no longer produces). It is ignored when `CI` is set, so CI
//! can never accept a changed golden; any value other than `1` is ignored too.
//!
//! Include it with `#[path = "support/golden.rs"] mod golden;` (the conformance test, compiled from the top-level
//! `tests/` folder, uses `#[path = "../../generator/tests/support/golden.rs"]`).
#![allow(dead_code)]

use std::path::Path;

/// The variable that turns updating on (value `1`).
pub const UPDATE_VAR: &str = "WIREGEN_UPDATE_GOLDEN";

/// Whether goldens are rewritten in this run: `WIREGEN_UPDATE_GOLDEN=1` and `CI` unset.
pub fn updating() -> bool {
    std::env::var_os(UPDATE_VAR).is_some_and(|v| v == "1") && std::env::var_os("CI").is_none()
}

/// Compares `actual` with the golden file at `path`; when [`updating`], writes `actual` there instead (only if it
/// differs, creating the directory). The error names the file, shows a short diff and how to accept the change.
pub fn check_golden(path: &Path, actual: &str) -> Result<(), String> {
    let expected = std::fs::read_to_string(path).ok();
    if expected.as_deref() == Some(actual) {
        return Ok(());
    }
    if updating() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(path, actual).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("golden updated: {}", path.display());
        return Ok(());
    }
    let what = match &expected {
        None => format!("{}: no such golden file; the output is:\n{actual}", path.display()),
        Some(old) => format!("{} differs from the output:\n{}", path.display(), diff(old, actual)),
    };
    Err(format!("{what}\naccept the output with: {UPDATE_VAR}=1 cargo test (ignored when CI is set)"))
}

/// [`check_golden`], panicking on a difference.
pub fn assert_golden(path: &Path, actual: &str) {
    if let Err(e) = check_golden(path, actual) {
        panic!("{e}");
    }
}

/// A short line diff (`-` golden, `+` output): the one `wiregen check` shows.
pub fn diff(old: &str, new: &str) -> String {
    wiregen::short_diff(old, new)
}
