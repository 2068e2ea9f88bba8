//! The freshness tests of the committed outputs: `wiregen::check` on `schema/` -> `generated/` must be clean
//! for every output (the bundled schema, the Rust crate, the TypeScript package, the markdown reference and
//! their manifests). Editing a byte of any generated file, deleting one, or leaving one an output no longer
//! produces fails here with the list of files, a diff and the command that fixes them (uv's
//! `generate-all --mode check`). The other tests then test what this one proves is current. The same holds for the
//! happy-wire example (`examples/happy-wire/schema` -> `examples/happy-wire/generated`, the outputs it has).
//!
//! It is a unit test of the library, using only the public API, because `cargo test` runs a package's unit tests
//! before its integration tests and stops at the first failing test binary: a stale `generated/` then fails here,
//! with the fix command, before the conformance or docs tests trip over it with a confusing difference.
//!
//! `WIREGEN_UPDATE_GOLDEN=1` (the one golden switch, ignored when `CI` is set) regenerates instead of failing.

#[path = "../tests/support/golden.rs"]
mod golden;

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// An error and its causes, one per line (the chain `source()` walks).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(&format!("\ncaused by: {c}"));
        cur = c.source();
    }
    s
}

#[test]
fn generated_outputs_are_what_the_schema_gives() {
    let root = root();
    let opts = crate::Options::new(root.join("schema"), root.join("generated"));
    assert_eq!(opts.outputs, crate::emit::Output::ALL, "every output is checked");
    assert_fresh(&opts, crate::emit::REGENERATE.to_string());
}

/// The happy-wire example's committed outputs (`examples/happy-wire/generated/<output>/`, each output that is
/// there) are what its schema gives.
#[test]
fn the_examples_generated_outputs_are_what_its_schema_gives() {
    let ex = root().join("examples/happy-wire");
    let mut opts = crate::Options::new(ex.join("schema"), ex.join("generated"));
    opts.outputs.retain(|o| ex.join("generated").join(o.name()).is_dir());
    assert!(!opts.outputs.is_empty(), "the example has generated outputs");
    opts.emit.regenerate =
        format!("{} --schema examples/happy-wire/schema --out examples/happy-wire/generated", crate::emit::REGENERATE);
    let only: Vec<&str> = opts.outputs.iter().map(|o| o.name()).collect();
    let fix = format!("{} --only {}", opts.emit.regenerate, only.join(","));
    assert_fresh(&opts, fix);
}

/// Fails with the stale files, their diffs and `fix` unless `opts.out_dir` is what `opts.schema_dir` gives.
fn assert_fresh(opts: &crate::Options, fix: String) {
    let root = root();
    if golden::updating() {
        let r = crate::generate(opts).unwrap_or_else(|e| panic!("generate failed: {}", chain(&e)));
        for p in r.written.iter().chain(&r.deleted) {
            eprintln!("regenerated: {}", p.display());
        }
        return;
    }
    let report = crate::check(opts).unwrap_or_else(|e| panic!("check failed: {}", chain(&e)));
    assert!(report.fresh > 0, "no generated file was compared");
    if report.is_clean() {
        return;
    }
    let rel = |p: &Path| p.strip_prefix(&root).unwrap_or(p).display().to_string();
    let mut msg = format!("{} is out of date with its schema and the emitters:\n", rel(&opts.out_dir));
    for p in &report.missing {
        msg.push_str(&format!("missing: {}\n", rel(p)));
    }
    for (p, _) in &report.changed {
        msg.push_str(&format!("stale:   {}\n", rel(p)));
    }
    for p in &report.extra {
        msg.push_str(&format!("extra:   {}\n", rel(p)));
    }
    for (p, diff) in &report.changed {
        msg.push_str(&format!("\n--- {} (- on disk, + generated)\n{diff}", rel(p)));
    }
    msg.push_str(&format!(
        "\nfix: run `{fix}` from the workspace root and commit the result (or set {}=1 for this test)",
        golden::UPDATE_VAR
    ));
    panic!("{msg}");
}

/// Template text left in a doc: a `#` followed by an identifier inside a link's brackets (``[`#opts_ty`]``, a
/// `quote!` interpolation that was written into a doc string instead of being expanded).
/// In code only doc comments are read; in markdown (`every_line`) every line is.
fn template_leftovers(text: &str, every_line: bool) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if !every_line && !["///", "//!", "*", "/**", "#[doc"].iter().any(|p| t.starts_with(p)) {
            continue;
        }
        let mut rest = line;
        while let Some(open) = rest.find('[') {
            let inner = &rest[open + 1..];
            let Some(close) = inner.find(']') else { break };
            let link = &inner[..close];
            if link.char_indices().any(|(i, c)| {
                c == '#' && link[i + 1..].chars().next().is_some_and(|n| n.is_ascii_alphabetic() || n == '_')
            }) {
                found.push(line.trim().to_string());
            }
            rest = &inner[close + 1..];
        }
    }
    found
}

#[test]
fn the_detector_finds_template_leftovers() {
    assert_eq!(
        template_leftovers("/// Options, see [`#opts_ty`].\nfn f() {}", false),
        ["/// Options, see [`#opts_ty`]."]
    );
    assert_eq!(template_leftovers("    /// as [`#env::create`] does", false), ["/// as [`#env::create`] does"]);
    assert!(template_leftovers("/// [`Envelope`](#event-file) and [`Options`]\nlet a = v[#x];", false).is_empty());
    assert_eq!(template_leftovers("| [`#file`](#event-file) |", true).len(), 1);
}

/// No generated doc (Rust, TypeScript, markdown; the v2 outputs and the example's) holds template text.
#[test]
fn no_generated_doc_holds_template_text() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("read a generated directory").flatten() {
            let p = e.path();
            let name = e.file_name();
            if p.is_dir() {
                if name != "node_modules" && name != "dist" && name != "target" {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "rs" || x == "ts" || x == "md") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("generated"), &mut files);
    walk(&root().join("examples/happy-wire/generated"), &mut files);
    assert!(files.len() > 10, "the generated files were found: {files:?}");
    let bad: Vec<String> = files
        .iter()
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).expect("read a generated file");
            let markdown = p.extension().is_some_and(|x| x == "md");
            template_leftovers(&text, markdown).into_iter().map(move |l| format!("{}: {l}", p.display()))
        })
        .collect();
    assert!(bad.is_empty(), "template text in generated docs:\n{}", bad.join("\n"));
}
