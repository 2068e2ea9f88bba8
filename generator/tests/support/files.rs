//! The files of a directory tree, for tests that read a tree of fixtures or schemas.

use std::path::{Path, PathBuf};

/// Every file below `dir`, at any depth, sorted by path.
pub fn below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("read {}: {e}", d.display())) {
            let p = e.expect("directory entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The `*.json` files directly in `dir` (not below it), sorted by path.
#[allow(dead_code)] // Not every test that includes this file reads a flat directory.
pub fn json_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
        .collect();
    out.sort();
    out
}

/// [`below`], each file with its path relative to `dir` (`/`-separated).
#[allow(dead_code)] // Not every test that includes this file lists relative paths.
pub fn relative(dir: &Path) -> Vec<(String, PathBuf)> {
    below(dir)
        .into_iter()
        .map(|p| (p.strip_prefix(dir).expect("below the directory").to_string_lossy().replace('\\', "/"), p))
        .collect()
}
