//! The generated TypeScript: each case's schema file through `wiregen types --lang zod` and `--lang
//! ts-standalone` (the library functions behind them), both modules written under `target/jsts/ts/`, and ONE node
//! process (`ts-runner.mjs`) that imports every module and checks every instance: `rootSchema.safeParse(data)` for
//! Zod, `validateRoot(data)` for the standalone validator; then one `tsc --noEmit --strict` over all the modules.
//! Zod comes from `generated/ts/node_modules` (installed
//! with `npm ci` when missing, as the conformance tests do).

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use wiregen::emit::Lang;

use crate::{Case, Outcome};

/// Installs the dependencies of `generated/ts` from its lockfile when `node_modules/` is missing.
fn ensure_npm_deps(dir: &Path) {
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

/// The generated `.ts` modules in `dir`, sorted.
fn manifest_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read target/jsts/ts")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".ts"))
        .collect();
    v.sort();
    v
}

/// Outcomes for Zod and for the standalone validator.
pub fn run(cases: &[Case]) -> (Vec<Outcome>, Vec<Outcome>) {
    let package = crate::root().join("generated/ts");
    ensure_npm_deps(&package);
    let dir = crate::work_dir().join("ts");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create target/jsts/ts");
    #[cfg(unix)]
    std::os::unix::fs::symlink(package.join("node_modules"), dir.join("node_modules")).expect("link node_modules");
    let mut zod: Vec<Option<Outcome>> = Vec::new();
    let mut standalone: Vec<Option<Outcome>> = Vec::new();
    let mut manifest = Vec::new();
    for c in cases {
        let model = match wiregen::load::load(&c.file) {
            Ok(m) => m,
            Err(e) => {
                zod.push(Some(Outcome::Refused(e.to_string())));
                standalone.push(Some(Outcome::Refused(e.to_string())));
                continue;
            }
        };
        let mut entry = json!({ "id": c.id, "zod": false, "standalone": false });
        for (lang, file, slot, key) in [
            (Lang::Zod, format!("{}.zod.ts", c.id), &mut zod, "zod"),
            (Lang::TsStandalone, format!("{}.standalone.ts", c.id), &mut standalone, "standalone"),
        ] {
            match lang.module(&model) {
                Ok(src) => {
                    std::fs::write(dir.join(file), src).expect("write a module");
                    entry[key] = json!(true);
                    slot.push(None);
                }
                Err(e) => slot.push(Some(Outcome::Refused(e.to_string()))),
            }
        }
        entry["data"] = Value::Array(c.tests.iter().map(|(_, d, _)| Value::String(d.to_string())).collect());
        manifest.push(entry);
    }
    std::fs::write(dir.join("cases.json"), serde_json::to_string(&manifest).expect("JSON")).expect("write cases.json");
    let out = Command::new("node")
        .arg(crate::root().join("tests/jsts/ts-runner.mjs"))
        .arg(&dir)
        .arg(package.join("node_modules/typescript"))
        .output()
        .expect("node runs");
    assert!(out.status.success(), "ts-runner.mjs failed: {}", String::from_utf8_lossy(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).expect("the runner prints JSON");
    let mut errors = Vec::new();
    let mut finish = |slots: Vec<Option<Outcome>>, key: &str| -> Vec<Outcome> {
        slots
            .into_iter()
            .zip(cases)
            .map(|(s, c)| match s {
                Some(o) => o,
                None => {
                    let r = &result[&c.id];
                    for e in r["errors"].as_array().into_iter().flatten() {
                        errors.push(format!("{}: {}", c.id, e.as_str().unwrap_or_default()));
                    }
                    match r[key].as_array() {
                        Some(v) => Outcome::Verdicts(v.iter().map(|b| b.as_bool() == Some(true)).collect()),
                        // A module that does not load is an emitter bug: every instance counts as wrong.
                        None => Outcome::Verdicts(c.tests.iter().map(|(_, _, valid)| !valid).collect()),
                    }
                }
            })
            .collect()
    };
    // The modules are TypeScript: every one must also type-check under `strict` (one compiler run for all).
    let tsc = Command::new("node")
        .current_dir(&dir)
        .arg(package.join("node_modules/typescript/bin/tsc"))
        .args(["--noEmit", "--strict", "--target", "ES2022", "--lib", "ES2022", "--module", "NodeNext"])
        .args(["--moduleResolution", "NodeNext", "--skipLibCheck"])
        .args(manifest_files(&dir))
        .output()
        .expect("tsc runs");
    assert!(tsc.status.success(), "the generated modules do not type-check:\n{}", String::from_utf8_lossy(&tsc.stdout));
    let z = finish(zod, "zod");
    let s = finish(standalone, "standalone");
    for e in &errors {
        eprintln!("module failed to load: {e}");
    }
    (z, s)
}
