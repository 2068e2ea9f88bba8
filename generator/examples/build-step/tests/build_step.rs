//! The build-step example: it compiles (this test is part of it), regenerates what `wiregen generate` does,
//! fails with located diagnostics on a broken schema, and rewrites nothing when the schema is unchanged.

#[path = "../step.rs"]
#[allow(dead_code)]
mod step;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("build-step-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A copy of `schema/` whose `file` event refers to a definition that does not exist.
fn broken_schema(name: &str) -> PathBuf {
    let dir = tmp(name);
    copy_dir(&workspace().join("schema"), &dir);
    let f = dir.join("events/file.schema.json");
    let text = std::fs::read_to_string(&f).unwrap();
    let broken = text.replace("../defs.schema.json#/$defs/uint53", "../defs.schema.json#/$defs/no-such-def");
    assert_ne!(text, broken);
    std::fs::write(&f, broken).unwrap();
    dir
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().unwrap().is_dir() {
                out.extend(files_under(&e.path()));
            } else {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn build_script_output_is_the_generators_rust_output() {
    // What build.rs wrote into OUT_DIR is byte for byte what `wiregen generate` commits in generated/rust.
    let built = Path::new(build_step::GENERATED_DIR).join("rust");
    let committed = workspace().join("generated/rust");
    let files = files_under(&built);
    assert!(files.iter().any(|f| f.ends_with("src/lib.rs")), "no lib.rs in {}", built.display());
    let mut stale = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&built).unwrap();
        let committed_text = std::fs::read_to_string(committed.join(rel)).unwrap_or_default();
        let built_text = std::fs::read_to_string(&f).unwrap();
        if committed_text != built_text {
            stale.push(format!("generated/rust/{}\n{}", rel.display(), first_difference(&committed_text, &built_text)));
        }
    }
    assert!(
        stale.is_empty(),
        "generated/rust is not what schema/ gives (the build script's output differs):\n{}\n\
         fix: run `cargo run -p wiregen -- generate` from the workspace root and commit generated/",
        stale.join("\n")
    );
}

/// The first differing line of two texts, with its number (`-` committed, `+` generated now).
fn first_difference(committed: &str, built: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (committed.lines().collect(), built.lines().collect());
    let i = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let show = |l: Option<&&str>| l.map_or("(end of file)".to_string(), |l| l.chars().take(200).collect());
    format!("@@ line {} @@\n-{}\n+{}", i + 1, show(a.get(i)), show(b.get(i)))
}

#[test]
fn example_declares_the_generated_crates_dependencies_and_features() {
    let generated = std::fs::read_to_string(Path::new(build_step::GENERATED_DIR).join("rust/Cargo.toml")).unwrap();
    let ours = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let section = |toml: &str, name: &str| -> Vec<String> {
        let start = toml.find(&format!("\n[{name}]\n")).map(|i| i + name.len() + 3);
        let Some(start) = start else { return Vec::new() };
        let body = &toml[start..];
        let body = &body[..body.find("\n[").unwrap_or(body.len())];
        body.lines()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .filter_map(|l| l.split(['=', '.']).next().map(|k| k.trim().to_string()))
            .collect()
    };
    for table in ["dependencies", "features"] {
        let declared = section(&ours, table);
        for name in section(&generated, table) {
            assert!(declared.contains(&name), "generated code needs `{name}`; add it to the example's [{table}]");
        }
    }
    // The README's build.rs section shows the same lines, as the generated Cargo.toml writes them.
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let at = readme.find("# What the generated code uses").expect("the README's build.rs toml block");
    let block = &readme[at..at + readme[at..].find("```").unwrap()];
    for line in generated.lines().skip_while(|l| *l != "[dependencies]").filter(|l| !l.trim().is_empty()) {
        assert!(block.lines().any(|b| b == line), "the README's build.rs toml block lacks `{line}`");
    }
}

#[test]
fn broken_schema_fails_with_file_and_pointer() {
    let schema = broken_schema("lib");
    let out = tmp("lib-out");
    let errors = step::regenerate(&schema, &out).expect_err("a broken schema must fail");
    let hit = errors
        .iter()
        .find(|e| e.contains("events/file.schema.json") && e.contains("/properties/size/$ref"))
        .unwrap_or_else(|| panic!("no diagnostic names the file and pointer:\n{}", errors.join("\n")));
    assert!(hit.contains("error[schema.unresolvable-ref]"), "{hit}");
    assert!(files_under(&out).is_empty(), "nothing may be written on error");
    let _ = std::fs::remove_dir_all(&schema);
}

#[test]
fn unchanged_schema_rewrites_nothing() {
    let out = tmp("idem");
    let schema = workspace().join("schema");
    let first = step::regenerate(&schema, &out).unwrap();
    assert!(!first.written.is_empty());
    let mtimes: Vec<_> =
        files_under(&out).iter().map(|f| (f.clone(), std::fs::metadata(f).unwrap().modified().unwrap())).collect();
    std::thread::sleep(Duration::from_millis(20));
    let second = step::regenerate(&schema, &out).unwrap();
    assert!(second.written.is_empty(), "rewrote {:?}", second.written);
    assert!(second.deleted.is_empty());
    assert_eq!(second.unchanged.len(), first.written.len());
    for (f, t) in mtimes {
        assert_eq!(std::fs::metadata(&f).unwrap().modified().unwrap(), t, "{} was touched", f.display());
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// A build script that generates code compiles no async runtime, HTTP stack, CLI parser or logging framework:
/// with `default-features = false`, wiregen brings only what code generation needs. Read from `cargo tree` over
/// the normal and build dependencies, as a user of the example would see them.
#[test]
fn the_build_dependency_tree_has_no_server_and_no_cli() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "-e", "normal,build", "-p", "build-step", "--prefix", "none", "--offline", "--color", "never"])
        .current_dir(workspace())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut crates: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().next()).collect();
    crates.sort_unstable();
    crates.dedup();
    assert!(crates.contains(&"wiregen"), "wiregen is not in the tree:\n{text}");
    let forbidden = ["tokio", "hyper", "axum", "tower", "mio", "clap", "tracing"];
    let found: Vec<&str> = crates
        .iter()
        .copied()
        .filter(|c| {
            forbidden.iter().any(|f| c == f || c.starts_with(&format!("{f}-")) || c.starts_with(&format!("{f}_")))
        })
        .collect();
    assert!(found.is_empty(), "a code-generating build script compiles {found:?}; the tree is:\n{text}");
}

/// The real thing: `cargo build -p build-step` with the schema pointed at a broken copy fails, and cargo prints
/// the generator's diagnostic naming the file and JSON Pointer.
#[test]
fn cargo_build_fails_on_a_broken_schema() {
    let schema = broken_schema("cargo");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut child = Command::new(cargo)
        .args(["build", "-p", "build-step", "--offline", "--color", "never"])
        .current_dir(workspace())
        .env(step::SCHEMA_ENV, &schema)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let deadline = Instant::now() + Duration::from_secs(480);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("nested cargo build did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let err = reader.join().unwrap();
    assert!(!status.success(), "build succeeded on a broken schema:\n{err}");
    assert!(
        err.contains("events/file.schema.json") && err.contains("/properties/size/$ref"),
        "cargo output does not name the file and pointer:\n{err}"
    );
    let _ = std::fs::remove_dir_all(&schema);
}
