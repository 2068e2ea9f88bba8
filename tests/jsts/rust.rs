//! The generated Rust (`wiregen types --lang rust`, through the library): one crate under `target/jsts/rust/`
//! with a module per case (all sharing one runtime), built once, offline, against the workspace's locked
//! `serde`, `serde_json` and `regex`; one binary reads every instance and prints the verdict of
//! `serde_json::from_str::<Root>` for it, and the first error the generated decoder reports, which must be the
//! engine's (rule id and JSON Pointer) on every instance. A case is refused when the loader refuses its schema
//! or the emitter refuses the model (a located `EmitError`).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use wiregen::engine::{Engine, EngineOptions};

use crate::{root, work_dir, Case, Outcome};

/// One case's module, or why there is none.
enum Module {
    Refused(String),
    /// The module's text and the Rust name of the root type.
    Rust(String, String),
}

fn module(c: &Case) -> Module {
    let model = match wiregen::load::load(&c.file) {
        Ok(m) => m,
        Err(e) => return Module::Refused(format!("loader: {e}")),
    };
    let Some(root) = model.root else { return Module::Refused("the schema has no root type".into()) };
    let name = model.ty(root).names.rust.clone();
    match wiregen::emit::rust_module_shared(&model) {
        Ok(text) => Module::Rust(text, name),
        Err(e) => Module::Refused(format!("emitter: {e}")),
    }
}

/// Writes `text` to `path` unless it holds it already (so cargo rebuilds only what changed).
fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
}

/// serde's verdict on a text: 0 refused, 1 accepted and serialized back to the same JSON (numbers by value, and
/// one the input wrote as an integer whose double fits 64 bits written as an integer; keys as sets), 2 accepted
/// but serialized to something else.
const VERDICT: &str = r#"
fn verdict<T: serde::Serialize>(parsed: Result<T, serde_json::Error>, text: &str) -> u8 {
    fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
        use serde_json::Value as V;
        match (a, b) {
            (V::Number(x), V::Number(y)) => {
                let fits = y.as_f64().is_some_and(|f| (-9.223372036854775808e18..1.8446744073709551616e19).contains(&f));
                x.as_f64() == y.as_f64() && !(x.is_f64() && !y.is_f64() && fits)
            }
            (V::Array(x), V::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
            (V::Object(x), V::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w))),
            _ => a == b,
        }
    }
    match parsed {
        Err(_) => 0,
        Ok(x) => match (serde_json::to_value(&x), serde_json::from_str::<serde_json::Value>(text)) {
            (Ok(back), Ok(input)) if same(&back, &input) => 1,
            _ => 2,
        },
    }
}
"#;

/// The verdict binary; `{DISPATCH}` becomes one match arm per case.
const MAIN: &str = r#"//! Written by tests/jsts/rust.rs: reads `<case>\t<json>` lines; prints per line the verdict of serde (0
//! refused, 1 accepted and written back the same, 2 accepted and written back otherwise), then the generated decoder's first error as `\t<rule>\t<pointer as JSON>` (nothing when it accepts).
use std::io::{BufRead, Write};

fn check(case: usize, text: &str) -> (u8, Result<(), (&'static str, String)>) {
    match case {
{DISPATCH}        _ => (0, Err(("no-such-case", String::new()))),
    }
}

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        let (case, text) = line.split_once('\t').expect("case and JSON");
        let (serde, first) = check(case.parse().expect("case number"), text);
        match first {
            Ok(()) => writeln!(out, "{serde}"),
            Err((rule, pointer)) => {
                let pointer = serde_json::to_string(&pointer).expect("JSON");
                writeln!(out, "{serde}\t{rule}\t{pointer}")
            }
        }
        .expect("stdout");
    }
}
"#;

/// Each case's generated module, built into one crate; wiregen's own cases ([`crate::WIREGEN`]) must not be
/// refused, and they and the random ones must get every instance right here too. Every instance's
/// verdict must be the engine's, with the engine's first error, and a valid one must serialize back to itself
/// (unless a strip object dropped some of it).
pub fn run(cases: &[Case]) -> Vec<Outcome> {
    let modules: Vec<Module> = cases.iter().map(module).collect();
    let dir = work_dir().join("rust");
    let src = dir.join("src");
    std::fs::create_dir_all(&src).expect("create target/jsts/rust/src");
    let mut cargo = String::from(
        "# Written by tests/jsts/rust.rs: one module per JSON-Schema-Test-Suite case.\n[package]\nname = \"jsts-rust\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n\n[dependencies]\n",
    );
    cargo.push_str(&wiregen::emit::rust_dependencies(true));
    write_if_changed(&dir.join("Cargo.toml"), &cargo);
    // The workspace's lock, so the build is offline and uses the versions the workspace was tested with.
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).expect("the workspace has a Cargo.lock");
    write_if_changed(&dir.join("Cargo.lock"), &lock);

    let runtime = wiregen::emit::rust_shared_runtime().expect("the shared runtime renders");
    // Each case's module uses a part of the shared runtime (the rest is dead code here); the lints a generated
    // crate can break in its own code are denied (an empty closed object's serializer had an unused `mut`).
    let denied = "#![deny(unused_mut, unused_variables, unused_parens, unreachable_patterns)]";
    let mut lib = format!("//! Written by tests/jsts/rust.rs.\n#![allow(warnings)]\n{denied}\n{runtime}\n{VERDICT}\n");
    let mut dispatch = String::new();
    for (i, (c, m)) in cases.iter().zip(&modules).enumerate() {
        if let Module::Rust(text, name) = m {
            let file = format!("c{i}.rs");
            write_if_changed(&src.join(&file), &format!("// {}: {}\n{text}", c.id, c.description.replace('\n', " ")));
            writeln!(lib, "pub mod c{i};").expect("write");
            writeln!(
                lib,
                "pub fn check_c{i}(text: &str) -> (u8, Result<(), (&'static str, String)>) {{ \
                 (verdict(serde_json::from_str::<c{i}::{name}>(text), text), \
                 rt::from_str::<c{i}::{name}>(text).map(drop).map_err(|e| (e.rule().id(), e.pointer().to_string()))) }}"
            )
            .expect("write");
            writeln!(dispatch, "        {i} => jsts_rust::check_c{i}(text),").expect("write");
        }
    }
    // `wiregen types --lang rust` gives self-contained modules (their own runtime): two of them compile here too.
    for kw in ["pattern", "properties"] {
        let c = cases.iter().find(|c| c.keyword == kw).expect("a case of the keyword");
        let model = wiregen::load::load(&c.file).expect("the case loads");
        let text = wiregen::emit::Lang::Rust.module(&model).expect("the case has a module");
        write_if_changed(&src.join(format!("inline_{kw}.rs")), &text);
        writeln!(lib, "pub mod inline_{kw};").expect("write");
    }
    write_if_changed(&src.join("lib.rs"), &lib);
    let main = MAIN.replace("{DISPATCH}", &dispatch);
    write_if_changed(&src.join("main.rs"), &main);

    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(dir.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo build");
    assert!(
        out.status.success(),
        "the crate of generated modules does not build:\n{}",
        String::from_utf8_lossy(&out.stderr).chars().take(20_000).collect::<String>()
    );
    eprintln!("rust: built {} modules in {:.1}s", modules.len(), started.elapsed().as_secs_f64());

    let mut input = String::new();
    let mut asked = Vec::new();
    for (i, (c, m)) in cases.iter().zip(&modules).enumerate() {
        if let Module::Rust(..) = m {
            for (_, data, _) in &c.tests {
                writeln!(input, "{i}\t{}", serde_json::to_string(data).expect("JSON")).expect("write");
                asked.push(i);
            }
        }
    }
    let bin = dir.join("target/debug/jsts-rust");
    let mut child = Command::new(&bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {}: {e}", bin.display()));
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("the verdict binary runs");
    writer.join().expect("writer").expect("write stdin");
    assert!(output.status.success(), "the verdict binary failed");
    let text = String::from_utf8(output.stdout).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), asked.len(), "one verdict per instance");
    // serde's verdict is the outcome; the decoder's first error must be the engine's, and its verdict serde's.
    let mut verdicts = Vec::new();
    let mut differ = Vec::new();
    let mut engines: Vec<Option<Engine>> = (0..cases.len()).map(|_| None).collect();
    let mut k = 0;
    for (i, (c, m)) in cases.iter().zip(&modules).enumerate() {
        if let Module::Refused(why) = m {
            assert!(c.keyword != crate::WIREGEN, "{} is refused: {why}", c.id);
            continue;
        }
        let engine = engines[i].get_or_insert_with(|| {
            let model = wiregen::load::load(&c.file).expect("loaded above");
            Engine::new(model, EngineOptions::default()).expect("a root type")
        });
        for (desc, data, valid) in &c.tests {
            let mut parts = lines[k].split('\t');
            k += 1;
            let answer = parts.next();
            // A strip object drops what it does not declare: its input need not come back.
            let drops_keys = || crate::schema_text(c).contains(r#""x-unknown-keys": "strip""#);
            if answer == Some("2") && !drops_keys() {
                differ.push(format!("{} ({}): {desc}: {data}: serialized back to other JSON", c.id, c.description));
            }
            let serde = answer != Some("0");
            let first = parts.next().map(|rule| {
                let pointer = parts.next().and_then(|p| serde_json::from_str::<String>(p).ok()).unwrap_or_default();
                (rule.to_string(), pointer)
            });
            let expected = engine.check_value(data).first().map(|e| (e.rule.to_string(), e.pointer.clone()));
            if serde != first.is_none() || first != expected {
                differ.push(format!(
                    "{} ({}): {desc}: {data}: serde {}, decoder {first:?}, engine {expected:?}",
                    c.id,
                    c.description,
                    if serde { "valid" } else { "invalid" }
                ));
            }
            // wiregen's own cases and the random ones state their verdicts (the suite's are counted by the caller).
            if (c.keyword == crate::WIREGEN || c.keyword == crate::random::RANDOM) && serde != *valid {
                differ.push(format!("{} ({}): {desc}: {data}: expected valid = {valid}", c.id, c.description));
            }
            verdicts.push(serde);
        }
    }
    assert!(differ.is_empty(), "the generated Rust and the engine differ:\n{}", differ.join("\n"));

    let mut next = verdicts.into_iter();
    modules
        .into_iter()
        .zip(cases)
        .map(|(m, c)| match m {
            Module::Refused(why) => Outcome::Refused(why),
            Module::Rust(..) => Outcome::Verdicts(c.tests.iter().map(|_| next.next().unwrap_or(false)).collect()),
        })
        .collect()
}
