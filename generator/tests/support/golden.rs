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

/// A short line diff: the first differing region with up to 12 lines on each side (`-` golden, `+` output).
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut out = format!("@@ line {} @@\n", prefix + 1);
    let max = 12;
    for l in a_mid.iter().take(max) {
        out.push_str(&format!("-{l}\n"));
    }
    for l in b_mid.iter().take(max) {
        out.push_str(&format!("+{l}\n"));
    }
    if a_mid.len() > max || b_mid.len() > max {
        out.push_str("... (diff cut)\n");
    }
    if a_mid.is_empty() && b_mid.is_empty() {
        out.push_str("(the files differ only in line endings or a final newline)\n");
    }
    out
}
