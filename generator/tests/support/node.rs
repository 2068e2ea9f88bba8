//! Running node-side checkers: install their dependencies from the committed lockfile when missing, then run a
//! script once with every fixture line on stdin.

#![allow(dead_code)] // Each test that includes this file uses some of it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `npm ci` in `dir` when its `node_modules/` is missing (a fresh clone), so the single test command
/// covers the node checkers too.
pub fn ensure_npm_deps(dir: &Path) {
    if dir.join("node_modules").is_dir() {
        return;
    }
    let status = Command::new("npm")
        .current_dir(dir)
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .status()
        .unwrap_or_else(|e| panic!("npm ci in {}: {e} (is node installed?)", dir.display()));
    assert!(status.success(), "npm ci failed in {}", dir.display());
}

/// Runs `node <args>` in `dir` with `input` on stdin and returns stdout, panicking with stderr on failure.
pub fn run_node<S: AsRef<std::ffi::OsStr>>(dir: &Path, args: &[S], input: impl AsRef<[u8]>) -> String {
    let mut child = Command::new("node")
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("node: {e}"));
    let mut stdin = child.stdin.take().expect("stdin");
    let data = input.as_ref().to_vec();
    let w = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().expect("node runs");
    w.join().expect("writer").expect("write stdin");
    let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
    assert!(
        out.status.success(),
        "node {shown:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Runs a command that must succeed (npm, node, tsc, esbuild); its output, or a panic naming `what` with its
/// stdout and stderr.
pub fn run(cmd: &mut Command, what: &str) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e} (are node and npm installed?)"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// [`run_node`] for a script that answers each input line with one JSON line: the answers, in order (there must be
/// `expected` of them).
pub fn run_node_answers<S: AsRef<std::ffi::OsStr>>(
    dir: &Path,
    args: &[S],
    input: impl AsRef<[u8]>,
    expected: usize,
) -> Vec<serde_json::Value> {
    let text = run_node(dir, args, input);
    let answers: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).expect("one JSON answer per line")).collect();
    assert_eq!(answers.len(), expected, "one answer per input line");
    answers
}

/// Runs `node <args>` and returns its stdout; panics when it fails, or when it has not finished within `deadline`
/// (it is killed then): for checks that a generated module answers hostile input in linear time.
pub fn run_node_within<S: AsRef<std::ffi::OsStr>>(args: &[S], deadline: std::time::Duration) -> String {
    let mut child = Command::new("node")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("node: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            r.read_to_string(&mut s).map(|_| s)
        })
    };
    let (out, err) = (read(Box::new(stdout)), read(Box::new(stderr)));
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for node") {
            break status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("node did not finish within {deadline:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let out = out.join().expect("reader").expect("read stdout");
    let err = err.join().expect("reader").expect("read stderr");
    assert!(status.success(), "node failed: {err}");
    out
}
