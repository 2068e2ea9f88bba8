//! The npm package as users meet it. The built package (`generated/ts`, ES module and CommonJS builds) is packed
//! with `npm pack` and installed BY NAME into one scratch project per supported zod release (the lowest the peer
//! range allows, the happy monorepo's 4.4.3 and the newest 4.x on the registry; `npm install` from the registry, so
//! an `ERESOLVE` peer conflict fails the test). In each project:
//!
//! - `consumer.mts` and the same text as `consumer.cts` (CommonJS: tsc writes `require("session-wire")` and reads
//!   the `.d.cts` declarations) and `happy-wire-v2-names.mts` pass `tsc --strict` (without `skipLibCheck`, so the
//!   package's declarations are checked against that zod's) and run: they build the seed's Realistic Flow with
//!   `createEnvelope`, check it message by message and as a stream, check invalid messages and the whole message
//!   corpus; the reports are held to the Rust engine and stream checker, and every message to the same text on
//!   every zod and in both module systems;
//! - a module re-exporting every runtime export passes `tsc --declaration` (each export's type can be named);
//! - esbuild bundles `validateSessionLine` alone (zod bundled), `validateSessionLineStandalone` alone and one schema
//!   alone, minified, and each must stay within its budget (the schema's next to the same schema with zod alone).
//!
//! One npm cache (the user's) serves every install; the three projects are set up in parallel, once per test run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{json, Value};
use wiregen::engine::{Engine, EngineOptions};
use wiregen::stream::StreamChecker;

use crate::fixtures::root;
use crate::node::run;

/// The zod releases the package is installed next to: the lowest its peer range (`^4.1.0`) allows, the one the
/// happy monorepo locks, and the newest 4.x (`npm install zod@4`).
const ZOD: &[&str] = &["4.1.0", "4.4.3", "4"];

/// `tsc` as an ES-module project of today compiles: strict, `NodeNext`, and `DOM` for the globals zod's own
/// declarations name (`URL`), as an app's tsconfig would have them.
const TSC_NODE_NEXT: &[&str] = &[
    "--strict",
    "--target",
    "ES2022",
    "--lib",
    "ES2022,DOM",
    "--module",
    "NodeNext",
    "--moduleResolution",
    "NodeNext",
];

/// Minified bytes of a browser bundle of `validateSessionLine` alone, zod bundled. Measured 113,842 with zod 4.6.7
/// (94,001 with 4.4.3; esbuild 0.28.2; stop 68); the budget leaves about 7% for the package and zod to grow.
const BUDGET_LINE: u64 = 120_000;

/// Minified bytes of a browser bundle of `validateSessionLineStandalone` alone (no zod). Measured 24,166 (stop 68).
const BUDGET_STANDALONE: u64 = 25_000;

/// Minified bytes a browser bundle of one small schema (`sessionRoleSchema`) may take beyond the same schema
/// written with zod alone, bundled in the same run: the runtime's part it reaches. Measured 3,588 (63,210 against
/// 59,622 with zod 4.6.7; stop 68); 48,624 before each schema was built in a call marked pure, when one schema kept them all.
const BUDGET_ONE_SCHEMA_OVER_ZOD: u64 = 6_000;

/// One scratch consumer, set up and run.
struct Consumer {
    /// The zod spec installed (`4.1.0`, `4`).
    spec: &'static str,
    /// The zod version npm resolved.
    version: String,
    /// The report of `consumer.mjs` and of `consumer.cjs`.
    esm: Value,
    cjs: Value,
    /// Minified bundle sizes: `validateSessionLine`, `validateSessionLineStandalone`, `sessionRoleSchema`, and the
    /// role schema written with zod alone.
    bundles: [u64; 4],
    /// What the example of the installed package's README printed.
    readme: String,
}

/// The lines every consumer checks after its own messages: the message corpus (strict-id fixtures aside: the
/// package does not check strict ids).
fn corpus() -> Vec<String> {
    crate::fixtures::messages().into_iter().filter(|f| !f.strict_ids).map(|f| f.line).collect()
}

fn tsc() -> PathBuf {
    root().join("generated/ts/node_modules/typescript/bin/tsc")
}

fn esbuild() -> PathBuf {
    let dir = root().join("tests/node");
    crate::node::ensure_npm_deps(&dir);
    if !dir.join("node_modules/esbuild").is_dir() {
        // node_modules from before esbuild joined the lockfile: add what is missing (`npm ci` would delete the
        // directory other checkers may be reading right now).
        run(
            Command::new("npm").current_dir(&dir).args(["install", "--no-audit", "--no-fund", "--loglevel=error"]),
            "npm install in tests/node",
        );
    }
    // The native binary (esbuild's install step puts it in place of the JavaScript launcher).
    dir.join("node_modules/.bin/esbuild")
}

/// Packs the built package; returns the tarball.
fn pack(into: &Path) -> PathBuf {
    crate::zod::built_package();
    let out = run(
        Command::new("npm")
            .current_dir(root().join("generated/ts"))
            .args(["pack", "--ignore-scripts", "--json", "--loglevel=error", "--pack-destination"])
            .arg(into),
        "npm pack",
    );
    let info: Value = serde_json::from_slice(&out.stdout).expect("npm pack --json");
    let files: Vec<&str> =
        info[0]["files"].as_array().expect("files").iter().filter_map(|f| f["path"].as_str()).collect();
    for want in [
        "package.json",
        "README.md",
        "LICENSE",
        "dist/index.js",
        "dist/index.d.ts",
        "dist/cjs/index.cjs",
        "dist/cjs/index.d.cts",
        "dist/cjs/runtime.cjs",
        "dist/standalone.js",
        "dist/standalone.d.ts",
        "dist/cjs/standalone.cjs",
        "dist/cjs/standalone.d.cts",
    ] {
        assert!(files.contains(&want), "the packed package holds {want}: {files:?}");
    }
    assert!(!files.iter().any(|f| f.starts_with("node_modules/") || *f == "build-cjs.mjs"), "{files:?}");
    into.join(info[0]["filename"].as_str().expect("filename"))
}

fn node_with_input(dir: &Path, script: &str, input: &str) -> Value {
    let out = crate::node::run_node(dir, &[script], input);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{script}: one JSON report ({e})"))
}

/// Installs the tarball and `zod@spec` into a fresh project, type-checks and runs the consumers, bundles.
fn consumer(base: &Path, tarball: &Path, spec: &'static str, input: &str) -> Consumer {
    let dir = base.join(format!("zod-{spec}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    // No "type": the project is CommonJS, as most are; `.mjs`/`.mts` files are ES modules in any project.
    std::fs::write(dir.join("package.json"), r#"{ "name": "consumer", "private": true }"#).expect("package.json");
    run(
        Command::new("npm")
            .current_dir(&dir)
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
            .arg(tarball)
            .arg(format!("zod@{spec}")),
        &format!("npm install of the packed package next to zod@{spec}"),
    );
    let zod: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("node_modules/zod/package.json")).expect("zod is installed"),
    )
    .expect("zod's package.json");
    let version = zod["version"].as_str().expect("a version").to_string();
    let tests = root().join("tests/conformance");
    let consumer = std::fs::read_to_string(tests.join("consumer.mts")).expect("consumer.mts");
    std::fs::write(dir.join("consumer.mts"), &consumer).expect("write");
    std::fs::write(dir.join("consumer.cts"), &consumer).expect("write");
    std::fs::copy(tests.join("happy-wire-v2-names.mts"), dir.join("happy-wire-v2-names.mts")).expect("copy");
    run(
        Command::new("node").current_dir(&dir).arg(tsc()).args(TSC_NODE_NEXT).args([
            "--outDir",
            "out",
            "consumer.mts",
            "consumer.cts",
            "happy-wire-v2-names.mts",
        ]),
        &format!("tsc --strict on the consumers next to zod {version}"),
    );
    // TypeScript's `node10` resolution (the default of `module: commonjs`) reads no `exports`: the subpath's types
    // come from `typesVersions` (helper 89: TS2307 without it).
    std::fs::write(
        dir.join("node10.ts"),
        "import { isSessionRole } from \"session-wire/standalone\";\n\
         import { sessionRoleSchema } from \"session-wire\";\n\
         export const ok: boolean = isSessionRole(\"user\") && sessionRoleSchema.safeParse(\"user\").success;\n",
    )
    .expect("node10.ts");
    run(
        Command::new("node").current_dir(&dir).arg(tsc()).args([
            "--strict",
            "--noEmit",
            "--target",
            "ES2022",
            "--lib",
            "ES2022,DOM",
            "--module",
            "CommonJS",
            "--moduleResolution",
            "Node10",
            // As a CommonJS project's tsconfig has it (zod's declarations import its locales by default).
            "--esModuleInterop",
            "node10.ts",
        ]),
        &format!("tsc --moduleResolution node10 on both entries next to zod {version}"),
    );
    // A project that emits declarations can re-export every runtime export: each one's type is named through the
    // package (helper 97: `$TInt`'s named a function the package does not export, and tsc gave TS2742, "cannot be
    // named without a reference to .../zod/v4/core/util.cjs").
    let names = run(
        Command::new("node").current_dir(&dir).args([
            "--input-type=module",
            "-e",
            "console.log(JSON.stringify(Object.keys(await import(\"session-wire\"))))",
        ]),
        "the package's runtime exports",
    );
    let names: Vec<String> = serde_json::from_slice(&names.stdout).expect("a JSON list of names");
    assert!(names.len() > 100 && names.iter().any(|n| n == "$TInt"), "{names:?}");
    let mut reexport = String::from("import * as sw from \"session-wire\";\n");
    for (i, name) in names.iter().enumerate() {
        reexport.push_str(&format!("export const e{i} = sw[{}];\n", json!(name)));
    }
    std::fs::write(dir.join("reexport.mts"), reexport).expect("reexport.mts");
    run(
        Command::new("node").current_dir(&dir).arg(tsc()).args(TSC_NODE_NEXT).args([
            "--declaration",
            "--emitDeclarationOnly",
            "--outDir",
            "out/declarations",
            "reexport.mts",
        ]),
        &format!("tsc --declaration on a module re-exporting every runtime export next to zod {version}"),
    );
    let cjs_source = std::fs::read_to_string(dir.join("out/consumer.cjs")).expect("tsc wrote consumer.cjs");
    assert!(cjs_source.contains("require(\"session-wire\")"), "the CommonJS consumer requires the package by name");
    let esm = node_with_input(&dir, "out/consumer.mjs", input);
    let cjs = node_with_input(&dir, "out/consumer.cjs", input);
    run(Command::new("node").current_dir(&dir).arg("out/happy-wire-v2-names.mjs"), "happy-wire-v2-names.mjs");
    // The example of the README that ships in the package, as a user would paste it.
    let readme = std::fs::read_to_string(dir.join("node_modules/session-wire/README.md")).expect("the README ships");
    let example = readme
        .split("```js\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the README has a ```js example");
    std::fs::write(dir.join("readme-example.mjs"), example).expect("write");
    let printed = run(Command::new("node").current_dir(&dir).arg("readme-example.mjs"), "the README's example");
    let readme = String::from_utf8(printed.stdout).expect("utf-8");
    let mut sizes = [0; 4];
    let entries = [
        ("bundle-line.mjs", "export { validateSessionLine } from \"session-wire\";\n"),
        ("bundle-standalone.mjs", "export { validateSessionLineStandalone } from \"session-wire\";\n"),
        ("bundle-one-schema.mjs", "export { sessionRoleSchema } from \"session-wire\";\n"),
        (
            "bundle-zod-alone.mjs",
            "import * as z from \"zod\";\nexport const role = z.enum([\"user\", \"agent\"]).describe(\"Who\");\n",
        ),
    ];
    for ((entry, source), size) in entries.into_iter().zip(&mut sizes) {
        std::fs::write(dir.join(entry), source).expect("entry");
        let outfile = dir.join(format!("out/{entry}"));
        run(
            Command::new(esbuild())
                .current_dir(&dir)
                .args([entry, "--bundle", "--minify", "--format=esm", "--platform=browser", "--log-level=warning"])
                .arg(format!("--outfile={}", outfile.display())),
            &format!("esbuild {entry}"),
        );
        *size = std::fs::metadata(&outfile).expect("the bundle").len();
    }
    Consumer { spec, version, esm, cjs, bundles: sizes, readme }
}

/// The consumers, set up once per test process (in parallel, one thread per zod release).
fn consumers() -> &'static [Consumer] {
    static DONE: OnceLock<Vec<Consumer>> = OnceLock::new();
    DONE.get_or_init(|| {
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("npm-consumers");
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).expect("mkdir");
        let tarball = pack(&base);
        esbuild();
        let input = serde_json::to_string(&corpus()).expect("json");
        let started = std::time::Instant::now();
        let out: Vec<Consumer> = std::thread::scope(|s| {
            let handles: Vec<_> = ZOD.iter().map(|spec| s.spawn(|| consumer(&base, &tarball, spec, &input))).collect();
            handles.into_iter().map(|h| h.join().expect("a consumer")).collect()
        });
        eprintln!(
            "package consumers ({:.1} s): {}",
            started.elapsed().as_secs_f64(),
            out.iter()
                .map(|c| format!("zod@{} -> {} (bundles {:?} bytes)", c.spec, c.version, c.bundles))
                .collect::<Vec<_>>()
                .join(", ")
        );
        out
    })
}

fn engine() -> Engine {
    let p = wiregen::load::load(&root().join("schema")).expect("schema/ loads");
    Engine::new(p, EngineOptions { strict_ids: false, ..Default::default() }).expect("the schema has a root type")
}

fn first_of(engine: &Engine, line: &str) -> Value {
    match engine.check_line(line.as_bytes()).1.first() {
        None => Value::Null,
        Some(i) => json!({ "pointer": i.pointer, "rule": i.rule }),
    }
}

fn brief(e: &Value) -> Value {
    if e.is_null() {
        Value::Null
    } else {
        json!({ "pointer": e["pointer"], "rule": e["rule"] })
    }
}

#[test]
fn the_packed_package_installs_next_to_every_supported_zod() {
    let pj: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("generated/ts/package.json")).expect("package.json"))
            .expect("json");
    assert_eq!(pj["peerDependencies"]["zod"], format!("^{}", ZOD[0]), "the peer range starts at the lowest tested zod");
    let readme = std::fs::read_to_string(root().join("generated/ts/README.md")).expect("README.md");
    assert!(readme.contains("beside zod 4.1.0, 4.4.3 and the newest 4.x"), "the package README names the tested zods");
    let cs = consumers();
    assert_eq!(cs.len(), ZOD.len());
    for c in cs {
        if c.spec != "4" {
            assert_eq!(c.version, c.spec, "npm installed the zod asked for");
        }
        assert!(c.version.starts_with("4."), "zod {}", c.version);
    }
}

/// The seed's Realistic Flow, built with `createEnvelope` in both module systems next to every zod: the same 28
/// lines as the fixture, valid for the engine, accepted by the stream checkers with the Rust checker's rollup;
/// invalid messages and streams get the engine's and the stream checker's first errors, and lines with an own
/// `__proto__` key the engine's from the raw schema and a `.describe()` copy of it.
#[test]
fn esm_and_commonjs_consumers_build_and_check_the_realistic_flow() {
    let engine = engine();
    let fixture =
        std::fs::read_to_string(root().join("tests/fixtures/streams/seed-realistic-flow.jsonl")).expect("flow");
    let want: Vec<Value> = fixture.lines().map(|l| serde_json::from_str(l).expect("json")).collect();
    let mut checker = StreamChecker::new(&engine);
    for (i, l) in fixture.lines().enumerate() {
        assert!(checker.check(i + 1, l.as_bytes()).valid, "the fixture's line {} is valid", i + 1);
    }
    let rollup = serde_json::to_value(checker.rollup()).expect("rollup");
    let mut failures = Vec::new();
    for c in consumers() {
        for (kind, r) in [("esm", &c.esm), ("cjs", &c.cjs)] {
            let at = format!("{kind} next to zod {}", c.version);
            let got: Vec<Value> = r["flow"]
                .as_array()
                .expect("flow")
                .iter()
                .map(|l| serde_json::from_str(l.as_str().expect("a line")).expect("json"))
                .collect();
            if got != want {
                failures.push(format!("{at}: createEnvelope built another flow:\n{got:?}"));
            }
            if crate::streams::normalize(&r["rollup"]) != crate::streams::normalize(&rollup) {
                failures.push(format!("{at}: rollup {} != the Rust checker's {rollup}", r["rollup"]));
            }
            if r["typed"] != json!({ "controller": "browser", "model": "claude-sonnet-4-6", "cancelled": 1 }) {
                failures.push(format!("{at}: typed reads of the rollup: {}", r["typed"]));
            }
            for x in r["invalid"].as_array().expect("invalid") {
                let line = x["line"].as_str().expect("line");
                let engine_first = first_of(&engine, line);
                if engine_first.is_null() || brief(&x["zod"]) != engine_first || brief(&x["standalone"]) != engine_first
                {
                    failures.push(format!(
                        "{at}: {line}: engine {engine_first}, zod {}, standalone {}",
                        x["zod"], x["standalone"]
                    ));
                }
            }
            for x in r["ownProto"].as_array().expect("ownProto") {
                let line = x["line"].as_str().expect("line");
                let engine_first = first_of(&engine, line);
                let raw = x["raw"].as_array().expect("raw");
                if engine_first.is_null() || raw.len() != 2 || raw.iter().any(|r| *r != engine_first) {
                    failures.push(format!("{at}: {line}: engine {engine_first}, raw sessionEnvelopeSchema {raw:?}"));
                }
            }
            let thrown = engine_first_role_event(&engine);
            if brief(&r["thrown"]) != thrown {
                failures
                    .push(format!("{at}: createEnvelope(\"user\", service) threw {} (engine: {thrown})", r["thrown"]));
            }
            for s in r["streams"].as_array().expect("streams") {
                let mut sc = StreamChecker::new(&engine);
                let mut rust = Vec::new();
                for (i, l) in s["lines"].as_array().expect("lines").iter().enumerate() {
                    let rec = sc.check(i + 1, l.as_str().expect("line").as_bytes());
                    if let Some(e) = rec.errors.first() {
                        rust.push(json!({ "line": i + 1, "first": { "pointer": e.pointer, "rule": e.rule, "message": e.message } }));
                    }
                }
                if rust.is_empty() || Value::Array(rust.clone()) != s["records"] {
                    failures.push(format!("{at}: stream {}: rust {rust:?}, package {}", s["lines"], s["records"]));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

/// What the engine reports first for `createEnvelope("user", { t: "service", text: "x" })`.
fn engine_first_role_event(engine: &Engine) -> Value {
    first_of(engine, r#"{"id":"m1","time":1,"role":"user","ev":{"t":"service","text":"x"}}"#)
}

/// Every message of the corpus gives the engine's first error (rule and pointer) on every zod, from both module
/// systems, with the same error list and the same text everywhere (role errors once said only "Invalid input" on
/// zod before 4.6), never Zod's own default message.
#[test]
fn every_message_reads_the_same_on_every_supported_zod_and_module_system() {
    let engine = engine();
    let lines = corpus();
    let cs = consumers();
    let reference = &cs[cs.len() - 1].esm["corpus"];
    let mut failures = Vec::new();
    for c in cs {
        for (kind, r) in [("esm", &c.esm), ("cjs", &c.cjs)] {
            let at = format!("{kind} next to zod {}", c.version);
            let got = r["corpus"].as_array().expect("corpus");
            assert_eq!(got.len(), lines.len(), "{at}: one answer per line");
            for (i, (line, errors)) in lines.iter().zip(got).enumerate() {
                let first = errors.as_array().and_then(|a| a.first()).map_or(Value::Null, brief);
                let want = first_of(&engine, line);
                if first != want {
                    failures.push(format!("{at}: {line}: engine {want}, package {first}"));
                }
                if errors != &reference[i] {
                    failures.push(format!("{at}: {line}: {errors} differs from {}", reference[i]));
                }
                for e in errors.as_array().expect("errors") {
                    let m = e["message"].as_str().unwrap_or_default();
                    let suffix = format!("[{}]", e["rule"].as_str().unwrap_or_default());
                    if m.is_empty() || m.starts_with("Invalid input") || m.ends_with(&suffix) {
                        failures.push(format!("{at}: {line}: message {m:?}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

/// The README's example runs as printed and says what its comments say.
#[test]
fn the_readme_example_runs_as_it_says() {
    for c in consumers() {
        let lines: Vec<&str> = c.readme.lines().collect();
        assert_eq!(lines.first(), Some(&"true"), "next to zod {}: {}", c.version, c.readme);
        assert!(c.readme.contains("rule: 'required'"), "the first error of `{{}}`: {}", c.readme);
        assert_eq!(lines.iter().filter(|l| **l == "true").count(), 2, "{}", c.readme);
        assert_eq!(lines.last(), Some(&"{ accepted: 1, rejected: 0 }"), "{}", c.readme);
    }
}

/// esbuild keeps only what an import needs: `validateSessionLine` with zod, the standalone line checker without.
#[test]
fn browser_bundles_stay_within_their_budgets() {
    for c in consumers() {
        let [line, standalone, one_schema, zod_alone] = c.bundles;
        assert!(
            line <= BUDGET_LINE,
            "validateSessionLine alone bundles to {line} bytes next to zod {} (budget {BUDGET_LINE}): did the \
             generated code stop tree-shaking (`import {{ z }}` pulls in every locale), or did zod grow?",
            c.version
        );
        assert!(
            standalone <= BUDGET_STANDALONE,
            "validateSessionLineStandalone alone bundles to {standalone} bytes (budget {BUDGET_STANDALONE}): \
             did zod or the schemas leak into it?"
        );
        // Both bundles hold their checker (a failed or empty build would pass any budget).
        assert!(standalone > 10_000 && line > standalone * 3, "bundle sizes {line} / {standalone}");
        // One schema brings zod and what of the runtime it uses, not every other schema of the package.
        assert!(
            one_schema > zod_alone && one_schema <= zod_alone + BUDGET_ONE_SCHEMA_OVER_ZOD,
            "sessionRoleSchema alone bundles to {one_schema} bytes next to zod {}, the same schema with zod alone to \
             {zod_alone} (budget: {BUDGET_ONE_SCHEMA_OVER_ZOD} more): are the schemas still built in calls marked pure?",
            c.version
        );
    }
}

/// The standalone entry (`session-wire/standalone`) as a program without Zod meets it: the package installed with
/// no peer dependencies (`--legacy-peer-deps`), imported as an ES module and required as CommonJS, unbundled. Its
/// validators run and give the engine's first error; the root entry, which needs Zod, fails for want of it, so
/// the first part proves that the standalone one loads none.
#[test]
fn the_standalone_entry_runs_without_zod() {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("npm-no-zod");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("mkdir");
    let tarball = pack(&base);
    let dir = base.join("consumer");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("package.json"), r#"{ "name": "consumer", "private": true }"#).expect("package.json");
    run(
        Command::new("npm")
            .current_dir(&dir)
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--legacy-peer-deps"])
            .arg(&tarball),
        "npm install of the packed package without its peer dependencies",
    );
    assert!(!dir.join("node_modules/zod").exists(), "zod was installed");
    let script = r#"
import { createRequire } from "node:module";
import { isSessionEnvelope, validateSessionEnvelope } from "session-wire/standalone";
const cjs = createRequire(import.meta.url)("session-wire/standalone");
const lines = JSON.parse(await new Promise((ok) => { let s = ""; process.stdin.on("data", (d) => (s += d)); process.stdin.on("end", () => ok(s)); }));
const first = (errors) => (errors.length === 0 ? null : { pointer: errors[0].pointer, rule: errors[0].rule });
const report = (m) => lines.map((l) => { const v = JSON.parse(l); return { guard: m.isSessionEnvelope(v), first: first(m.validateSessionEnvelope(v)) }; });
let root;
try { await import("session-wire"); root = "loaded"; } catch (e) { root = `${e.code}: ${/zod/.test(e.message)}`; }
console.log(JSON.stringify({ esm: report({ isSessionEnvelope, validateSessionEnvelope }), cjs: report(cjs), root }));
"#;
    std::fs::write(dir.join("standalone.mjs"), script).expect("write");
    let engine = engine();
    // Lines that JSON.parse reads as the engine does (the line framing is the root entry's; a repeated key is
    // refused by it), valid and invalid.
    let lines: Vec<String> = corpus()
        .into_iter()
        .filter(|l| crate::fixtures::parsed(l).is_some() && !l.contains("__proto__") && !l.starts_with('\u{feff}'))
        .collect();
    assert!(lines.len() > 150, "{} lines", lines.len());
    let out = node_with_input(&dir, "standalone.mjs", &serde_json::to_string(&lines).expect("json"));
    assert_eq!(out["root"], "ERR_MODULE_NOT_FOUND: true", "the root entry needs zod, which is not installed");
    let mut invalid = 0;
    for (i, line) in lines.iter().enumerate() {
        let want = first_of(&engine, line);
        let want = if want.is_null() { Value::Null } else { json!({"pointer": want["pointer"], "rule": want["rule"]}) };
        invalid += usize::from(!want.is_null());
        for side in ["esm", "cjs"] {
            assert_eq!(out[side][i]["first"], want, "{side}: {line}");
            assert_eq!(out[side][i]["guard"], want.is_null(), "{side}: {line}");
        }
    }
    assert!(invalid > 100 && invalid < lines.len(), "{invalid} of {} invalid", lines.len());
}

/// Every strictness flag of `tsc` beyond `--strict`: a user who compiles the generated sources under their own
/// settings must not meet an error (an unused runtime import failed `noUnusedLocals`).
const STRICTEST: &[&str] = &[
    "--noUnusedLocals",
    "--noUnusedParameters",
    "--noImplicitReturns",
    "--noFallthroughCasesInSwitch",
    "--noImplicitOverride",
    "--exactOptionalPropertyTypes",
    "--noUncheckedIndexedAccess",
    "--noPropertyAccessFromIndexSignature",
];

/// The generated sources of both packages, and of a package whose only object keyword is `dependentRequired`
/// (its record's `dependent:` key made the module import the runtime's `dependent`, which it never called),
/// type-check with every flag of [`STRICTEST`].
#[test]
fn the_generated_sources_type_check_under_the_strictest_flags() {
    let v2 = root().join("generated/ts");
    let v1 = crate::example::ts_package();
    crate::node::ensure_npm_deps(&v2);
    crate::node::ensure_npm_deps(&v1);
    let scratch = std::env::temp_dir().join(format!("wiregen-strictest-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let schema = scratch.join("schema");
    std::fs::create_dir_all(&schema).expect("mkdir");
    let dependent = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "dependentRequired": {"a": ["b"]}
    });
    std::fs::write(schema.join("main.schema.json"), dependent.to_string()).expect("write");
    let out = scratch.join("out");
    run(
        Command::new(env!("CARGO_BIN_EXE_wiregen")).args(["generate", "--schema"]).arg(&schema).arg("--out").arg(&out),
        "wiregen generate of the dependentRequired package",
    );
    let third = out.join("ts");
    // Its zod is the v2 package's, as a monorepo would share it.
    std::os::unix::fs::symlink(v2.join("node_modules"), third.join("node_modules")).expect("symlink node_modules");
    for dir in [&v2, &v1, &third] {
        run(
            Command::new("node").current_dir(dir).arg(tsc()).args(["-p", ".", "--noEmit"]).args(STRICTEST),
            &format!("tsc with every strictness flag in {}", dir.display()),
        );
    }
    std::fs::remove_dir_all(&scratch).expect("remove the scratch directory");
}

/// The generated types admit what the validators admit and reject what they reject, where the types can say it:
/// `tests/fixtures/ts-typing/use.mts` (its `@ts-expect-error` lines must stay errors) against a plain package
/// (a tagged union the Zod module dispatches with `union`, a closed object without properties, an optional
/// property, in the package and in `wiregen types --lang ts-standalone`) and a protocol package (an open event
/// with a role-limited field), under `--strict --exactOptionalPropertyTypes`; then, built, the protocol package's
/// `createEnvelope` refuses a tuple position holding `undefined` as its standalone validator does
/// (`tests/fixtures/ts-typing/run.mjs`).
#[test]
fn the_types_admit_what_the_validators_admit() {
    let v2 = root().join("generated/ts");
    crate::node::ensure_npm_deps(&v2);
    let fixtures = root().join("tests/fixtures/ts-typing");
    let scratch = std::env::temp_dir().join(format!("wiregen-ts-typing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("mkdir");
    for package in ["plain", "protocol"] {
        run(
            Command::new(env!("CARGO_BIN_EXE_wiregen"))
                .args(["generate", "--only", "ts", "--schema"])
                .arg(fixtures.join(package))
                .arg("--out")
                .arg(scratch.join(package)),
            &format!("wiregen generate of the {package} package"),
        );
    }
    let standalone = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .args(["types", "--lang", "ts-standalone"])
        .arg(fixtures.join("plain/shapes.schema.json"))
        .output()
        .expect("wiregen types");
    assert!(standalone.status.success(), "{}", String::from_utf8_lossy(&standalone.stderr));
    std::fs::write(scratch.join("plain-standalone.ts"), &standalone.stdout).expect("write");
    std::fs::copy(fixtures.join("use.mts"), scratch.join("use.mts")).expect("copy");
    std::os::unix::fs::symlink(v2.join("node_modules"), scratch.join("node_modules")).expect("symlink node_modules");
    run(
        Command::new("node")
            .current_dir(&scratch)
            .arg(tsc())
            .args(["--noEmit", "--strict", "--exactOptionalPropertyTypes", "--target", "ES2022", "--lib", "ES2022"])
            .args(["--module", "NodeNext", "--moduleResolution", "NodeNext", "--skipLibCheck", "use.mts"]),
        "tsc on tests/fixtures/ts-typing/use.mts",
    );
    // And at run time: the built protocol package's createEnvelope returns only what its checkers accept.
    run(
        Command::new("node").current_dir(&scratch).arg(tsc()).args(["-p", "protocol/ts"]),
        "tsc -p protocol/ts (the build)",
    );
    std::fs::copy(fixtures.join("run.mjs"), scratch.join("run.mjs")).expect("copy");
    run(Command::new("node").current_dir(&scratch).arg("run.mjs"), "node tests/fixtures/ts-typing/run.mjs");
    std::fs::remove_dir_all(&scratch).expect("remove the scratch directory");
}
