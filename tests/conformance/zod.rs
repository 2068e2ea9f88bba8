//! The generated Zod package (`generated/ts/`, npm `session-wire`) as a checker, and the tests of the package
//! itself: it builds, type-checks under `strict` with the type tests, behaves as documented, and survives hostile
//! schema text.
//!
//! Everything runs the BUILT package in real node: the test installs the package's dependencies from its committed
//! lockfile (`npm ci`) when `node_modules/` is missing, runs `npm run build` once per test process, then runs one
//! node process for a whole corpus (`zod-runner.mjs`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;
use wiregen::engine::{Engine, EngineOptions};

use crate::checkers::Verdict;
use crate::fixtures::{root, Fixture};
use crate::node::run;

/// The package directory.
fn package() -> PathBuf {
    root().join("generated/ts")
}

/// Installs (when missing) and builds the package once per test process; returns `dist/index.js`.
pub fn built_package() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = package();
        crate::node::ensure_npm_deps(&dir);
        // What an earlier build wrote of a module the package no longer has: the build removes it, or it would be
        // packed and published.
        let stale = ["dist/gone.js", "dist/gone.d.ts", "dist/cjs/gone.cjs", "dist/cjs/gone.d.cts"];
        for f in stale {
            let path = dir.join(f);
            std::fs::create_dir_all(path.parent().expect("in dist")).expect("dist/");
            std::fs::write(&path, "export {};\n").expect("a file of an earlier build");
        }
        run(Command::new("npm").current_dir(&dir).args(["run", "--silent", "build"]), "npm run build in generated/ts");
        let index = dir.join("dist/index.js");
        assert!(index.is_file(), "the build wrote {}", index.display());
        for f in stale {
            assert!(!dir.join(f).exists(), "the build left {f} of an earlier build");
        }
        index
    })
}

/// Runs `lines` (raw bytes, one per line) through the runner in one node process; one JSON verdict per line.
fn run_lines(lines: &[Vec<u8>]) -> Vec<Value> {
    run_lines_with("zod-runner.mjs", lines)
}

/// [`run_lines_with`] for other modules: one answer per line from `runner` on the built package.
pub fn run_lines_with_runner(runner: &str, lines: &[Vec<u8>]) -> Vec<Value> {
    run_lines_with(runner, lines)
}

/// Runs `lines` through `runner` (a script in `tests/conformance/`) in one node process; one verdict per line.
fn run_lines_with(runner: &str, lines: &[Vec<u8>]) -> Vec<Value> {
    run_runner(runner, &[], lines)
}

/// Runs `lines` through `runner` (a script in `tests/conformance/`, given the built package and then `args`) in
/// one node process; one JSON answer per line.
pub fn run_runner(runner: &str, args: &[&std::ffi::OsStr], lines: &[Vec<u8>]) -> Vec<Value> {
    let index = built_package();
    let mut input = Vec::new();
    for l in lines {
        assert!(!l.contains(&b'\n'), "a line holds no newline");
        input.extend_from_slice(l);
        input.push(b'\n');
    }
    let runner = root().join("tests/conformance").join(runner);
    let mut argv: Vec<&std::ffi::OsStr> = vec![runner.as_os_str(), std::ffi::OsStr::new(index)];
    argv.extend_from_slice(args);
    crate::node::run_node_answers(&root(), &argv, &input, lines.len())
}

/// The verdict of the line checker (`validateSessionLine`), turned into a failure when the package disagrees with
/// itself: the string entry point against the bytes one, the first raw Zod issue of `sessionEnvelopeSchema` (its
/// path as a pointer, its rule from the issue) against the line checker, or a valid line whose parsed value is not
/// deep-equal to the input.
fn verdict(a: &Value) -> Verdict {
    let helper = if a["valid"] == true { Verdict::Valid } else { Verdict::answered(&a["first"], &["rule"]) };
    let disagree = |what: &str, other: Verdict| Verdict::Invalid {
        rule: format!("zod {what} disagrees with validateSessionLine: {other:?} vs {helper:?}"),
        pointer: String::new(),
    };
    if !a["text"].is_null() && Verdict::answered(&a["text"], &["rule"]) != helper {
        return disagree("on the decoded string", Verdict::answered(&a["text"], &["rule"]));
    }
    if !a["schema"].is_null() && Verdict::answered(&a["schema"], &["rule"]) != helper {
        return disagree("sessionEnvelopeSchema's first issue", Verdict::answered(&a["schema"], &["rule"]));
    }
    if helper == Verdict::Valid && a["roundTrip"] != true {
        return Verdict::Invalid {
            rule: "zod: the parsed value is not deep-equal to the input".into(),
            pointer: String::new(),
        };
    }
    helper
}

/// The conformance checker: every fixture through the built package, in one node process. Strict-id fixtures are
/// skipped: the Zod schemas accept any non-empty id (see the README's TypeScript section).
pub fn zod(fx: &[Fixture]) -> Vec<Verdict> {
    let idx: Vec<usize> = (0..fx.len()).filter(|&i| !fx[i].strict_ids).collect();
    let lines: Vec<Vec<u8>> = idx.iter().map(|&i| fx[i].line.as_bytes().to_vec()).collect();
    let answers = run_lines(&lines);
    let mut out = vec![Verdict::Skipped; fx.len()];
    for (a, &i) in answers.iter().zip(&idx) {
        out[i] = verdict(a);
    }
    out
}

/// The verdict of the standalone validator (`validateSessionLineStandalone`), turned into a failure when the
/// string entry point disagrees with the bytes one, or the type guard `isSessionEnvelope` with the verdict.
fn standalone_verdict(a: &Value) -> Verdict {
    let first = if a["valid"] == true { Verdict::Valid } else { Verdict::answered(&a["first"], &["rule"]) };
    if !a["text"].is_null() && Verdict::answered(&a["text"], &["rule"]) != first {
        return Verdict::Invalid {
            rule: format!(
                "standalone on the decoded string disagrees: {:?} vs {first:?}",
                Verdict::answered(&a["text"], &["rule"])
            ),
            pointer: String::new(),
        };
    }
    if !a["guard"].is_null() && (a["guard"] == true) != (first == Verdict::Valid) {
        return Verdict::Invalid {
            rule: format!("isSessionEnvelope says {} but the validator says {first:?}", a["guard"]),
            pointer: String::new(),
        };
    }
    first
}

/// The standalone validator as a conformance checker (`ts-standalone`): every fixture through the built package's
/// dependency-free validator, in one node process. Strict-id fixtures are skipped, as for the Zod schemas.
pub fn ts_standalone(fx: &[Fixture]) -> Vec<Verdict> {
    let idx: Vec<usize> = (0..fx.len()).filter(|&i| !fx[i].strict_ids).collect();
    let lines: Vec<Vec<u8>> = idx.iter().map(|&i| fx[i].line.as_bytes().to_vec()).collect();
    let answers = run_lines_with("standalone-runner.mjs", &lines);
    let mut out = vec![Verdict::Skipped; fx.len()];
    for (a, &i) in answers.iter().zip(&idx) {
        out[i] = standalone_verdict(a);
    }
    out
}

fn engine_verdict(e: &Engine, line: &[u8]) -> Verdict {
    match e.check_line(line).1.first() {
        None => Verdict::Valid,
        Some(i) => Verdict::Invalid { rule: i.rule.into(), pointer: i.pointer.clone() },
    }
}

fn envelope(ev: &str) -> String {
    format!(r#"{{"id":"m1","time":1000,"role":"agent","ev":{ev}}}"#)
}

fn nested_args(depth: usize, tail: &str) -> String {
    let ev = format!(
        r#"{{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{{"x":{}{tail}"#,
        "[".repeat(depth)
    );
    format!(r#"{{"id":"m1","time":1000,"role":"agent","ev":{ev}"#)
}

/// Lines the fixture corpus does not hold, where JavaScript and Rust parse or compare differently unless the
/// package takes care: bytes that are not UTF-8, a byte-order mark, Unicode blank lines, surrogate escapes,
/// numbers out of range, nesting around the limit, `__proto__` keys, duplicate keys, large and negative zero
/// integers. The engine is the oracle; nothing here states an expected verdict.
fn edge_lines() -> Vec<Vec<u8>> {
    let mut l: Vec<Vec<u8>> = Vec::new();
    let abort = r#"{"id":"m1","time":1000,"role":"user","ev":{"t":"abort"}}"#;
    l.push(b"\xff\xfe{}".to_vec());
    l.push([b"{\"id\":\"m\xc3\x28\"".as_slice(), &abort.as_bytes()[8..]].concat());
    l.push(format!("\u{feff}{abort}").into_bytes());
    for blank in ["\u{85}", "\u{3000}\t", "\u{a0}", "\u{feff}", "\u{200b}", "\u{2028}"] {
        l.push(blank.as_bytes().to_vec());
    }
    for text in [r#""\ud800""#, r#""\udc00x""#, r#""\ud800\u0041""#, r#""\ud83d\ude00""#, r#""\u00e9\t\/""#, r#""\x""#]
    {
        l.push(envelope(&format!(r#"{{"t":"service","text":{text}}}"#)).into_bytes());
    }
    for time in [
        "1e400",
        "-1e400",
        "1e-400",
        "-0",
        "1.0",
        "1.5",
        "9007199254740991",
        "9007199254740992",
        "1e16",
        "-1",
        "01",
        "1.",
        "-",
    ] {
        l.push(format!(r#"{{"id":"m1","time":{time},"role":"user","ev":{{"t":"abort"}}}}"#).into_bytes());
    }
    for cost in ["1e-400", "0.0", "-0.0", "1E+2", "-1e-9"] {
        l.push(
            envelope(&format!(
                r#"{{"t":"turn-end","status":"completed","usage":{{"inputTokens":1,"outputTokens":2,"cost":{cost}}}}}"#
            ))
            .into_bytes(),
        );
    }
    for depth in 121..=127 {
        l.push(nested_args(depth, &format!("{}}}}}}}", "]".repeat(depth))).into_bytes());
    }
    l.push(nested_args(200, "").into_bytes());
    l.push(format!(r#"{{"id" "m1","ev":{{"args":{}"#, "[".repeat(200)).into_bytes());
    l.push(format!(r#"{{"id":"m1","x":{}oops"#, "[".repeat(130)).into_bytes());
    l.push(r#"{"id":"m1","time":1000,"role":"user","__proto__":{"x":1},"ev":{"t":"abort"}}"#.as_bytes().to_vec());
    l.push(r#"{"id":"m1","time":1000,"role":"user","ev":{"t":"abort","\u005f_proto__":1}}"#.as_bytes().to_vec());
    l.push(envelope(r#"{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{"__proto__":{"polluted":true},"a":[{"__proto__":null}]}}"#).into_bytes());
    l.push(r#"{"id":"m1","time":1000,"role":"user","zz":1,"__proto__":1,"ev":{"t":"abort"}}"#.as_bytes().to_vec());
    l.push(r#"{"id":"m1","time":1000,"time":2000,"role":"user","ev":{"t":"abort"}}"#.as_bytes().to_vec());
    l.push(
        r#"{"id":"m1","time":1000,"role":"user","ev":{"t":"abort"},"ev":{"t":"text","text":"x"}}"#.as_bytes().to_vec(),
    );
    l.push(r#"{"id":"m1","time":1000,"role":"agent","ev":{"t":"session-control-changed","zz":1,"machineId":"m","clientType":"x"}}"#.as_bytes().to_vec());
    l.push(r#"{"id":"m1","time":1000,"role":"agent","ev":{"t":"constructor"}}"#.as_bytes().to_vec());
    l.push(r#"{"id":"m1","time":1000,"role":"agent","ev":{"t":"toString"}}"#.as_bytes().to_vec());
    l.push(r#"{"id":"m1","time":1000,"role":"constructor","ev":{"t":"abort"}}"#.as_bytes().to_vec());
    l.push(r#"{"id":"m1","time":1000,"role":"user","ev":{"t":"text","text":"x","steer":true,"thinking":false},"subagent":"s"}"#.as_bytes().to_vec());
    l.push(r#"{"id":"","time":-1,"role":"nobody","ev":{"t":"ready"},"x":1}"#.as_bytes().to_vec());
    l.push(br#"[]"#.to_vec());
    l.push(br#""text""#.to_vec());
    l.push(br#"{} "#.to_vec());
    l.push(b"\t{\"id\":\"m1\",\"time\":1,\"role\":\"user\",\"ev\":{\"t\":\"abort\"}}\r".to_vec());
    l
}

#[test]
fn zod_agrees_with_the_engine_on_edge_lines() {
    let p = wiregen::load::load(&root().join("schema")).expect("schema/ loads");
    let engine =
        Engine::new(p, EngineOptions { strict_ids: false, ..Default::default() }).expect("the schema has a root type");
    let lines = edge_lines();
    let answers = run_lines(&lines);
    let mut failures = Vec::new();
    for (line, a) in lines.iter().zip(&answers) {
        let want = engine_verdict(&engine, line);
        let got = verdict(a);
        if want != got {
            failures.push(format!(
                "{}\n    engine {want:?}\n    zod    {got:?}",
                String::from_utf8_lossy(line).chars().take(160).collect::<String>()
            ));
        }
    }
    assert!(failures.is_empty(), "{} disagreement(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_standalone_validator_gives_the_engines_error_list_on_edge_lines_and_fixtures() {
    let p = wiregen::load::load(&root().join("schema")).expect("schema/ loads");
    let engine =
        Engine::new(p, EngineOptions { strict_ids: false, ..Default::default() }).expect("the schema has a root type");
    // The edge lines, then every non-strict fixture: not only the first error, the whole list in the engine's order.
    let mut lines = edge_lines();
    lines.extend(crate::fixtures::messages().iter().filter(|f| !f.strict_ids).map(|f| f.line.as_bytes().to_vec()));
    let answers = run_lines_with("standalone-runner.mjs", &lines);
    let mut failures = Vec::new();
    for (line, a) in lines.iter().zip(&answers) {
        let want = engine_verdict(&engine, line);
        let got = standalone_verdict(a);
        let want_all: Vec<Value> =
            engine.check_line(line).1.iter().map(|i| serde_json::json!([i.pointer, i.rule])).collect();
        if want != got || a["all"] != Value::Array(want_all.clone()) {
            failures.push(format!(
                "{}\n    engine     {want:?} {want_all:?}\n    standalone {got:?} {}",
                String::from_utf8_lossy(line).chars().take(160).collect::<String>(),
                a["all"]
            ));
        }
    }
    assert!(failures.is_empty(), "{} disagreement(s):\n{}", failures.len(), failures.join("\n"));
}

/// Names another module of the package binds for itself alone (neither exports nor imports from the schemas) are
/// free for the schema's types (`wiregen::emit::ts::names`): a v2 package whose types are named like the stream
/// checker's `Item` and `Scope`, the line checker's `checkParsed` and the Zod runtime's private `RawIssue`, with
/// the upcaster's `$isObj` and the stream checker's `fill` as Zod schemas, builds under the package's strict
/// tsconfig and exports them.
#[test]
fn a_package_whose_types_take_names_other_modules_keep_to_themselves_builds() {
    crate::node::ensure_npm_deps(&package());
    let dir = std::env::temp_dir().join(format!("wiregen-zod-private-names-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let schema = dir.join("schema");
    for entry in walk(&root().join("schema")) {
        let to = schema.join(entry.strip_prefix(root().join("schema")).expect("below schema/"));
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(&entry, &to).expect("copy");
    }
    let defs_file = schema.join("defs.schema.json");
    let mut defs: Value = serde_json::from_str(&std::fs::read_to_string(&defs_file).expect("read")).expect("JSON");
    for (key, ts, zod) in [("item", "Item", "checkParsed"), ("scope", "Scope", "fill"), ("raw", "RawIssue", "$isObj")] {
        defs["$defs"][key] =
            serde_json::json!({ "type": "string", "description": "A name.", "x-ts-name": ts, "x-zod-name": zod });
    }
    std::fs::write(&defs_file, serde_json::to_string_pretty(&defs).expect("JSON")).expect("write");
    let p = wiregen::load::load(&schema).unwrap_or_else(|e| panic!("the schema loads: {e}"));
    let files = wiregen::emit::Output::Ts.emit(&p, &Default::default()).expect("the names are usable");
    let out = dir.join("ts");
    build_beside(&files, &out, "the package");
    let script = r#"
        import { pathToFileURL } from "node:url";
        const w = await import(pathToFileURL(process.argv[1] + "/dist/index.js").href);
        for (const [schema, validate] of [["checkParsed", "validateItem"], ["fill", "validateScope"], ["$isObj", "validateRawIssue"]]) {
          if (!w[schema].safeParse("a").success || w[validate]("a").length !== 0 || w[validate](1).length === 0) {
            console.error(schema, validate); process.exit(1);
          }
        }
    "#;
    run(
        Command::new("node").args(["--input-type=module", "-e", script]).arg(&out),
        "the package's exports under the reused names",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes the files of a TypeScript output into `dir`, links the package's `node_modules/` there and builds it with
/// `tsc -p tsconfig.json` (into `dir/dist/`).
fn build_beside(files: &[wiregen::emit::OutFile], dir: &Path, what: &str) {
    for f in files {
        let path = dir.join(f.path.strip_prefix("ts/").expect("a file of the ts output"));
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, &f.contents).expect("write");
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink(package().join("node_modules"), dir.join("node_modules")).expect("link node_modules");
    run(Command::new("node").current_dir(dir).arg(tsc()).args(["-p", "tsconfig.json"]), &format!("tsc on {what}"));
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        if e.file_type().expect("file type").is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

fn tsc() -> PathBuf {
    package().join("node_modules/typescript/bin/tsc")
}

/// `tsc --noEmit` under the package's strict tsconfig, then the type tests (narrowing, role-typed
/// `createEnvelope`, `@ts-expect-error` lines that must stay errors) against the built declarations.
#[test]
fn the_package_and_its_type_tests_type_check_under_strict() {
    built_package();
    let dir = package();
    run(
        Command::new("node").current_dir(&dir).arg(tsc()).args(["-p", "tsconfig.json", "--noEmit"]),
        "tsc --noEmit on generated/ts",
    );
    let tests = root().join("tests/conformance/zod-types.mts");
    run(
        Command::new("node")
            .current_dir(&dir)
            .arg(tsc())
            .args([
                "--noEmit",
                "--strict",
                "--target",
                "ES2022",
                "--lib",
                "ES2022",
                "--module",
                "NodeNext",
                "--moduleResolution",
                "NodeNext",
                "--skipLibCheck",
            ])
            .arg(&tests),
        "tsc --noEmit --strict on the type tests",
    );
    // Every valid message of the fixtures (the message fixtures and the lines of the stream fixtures the engine
    // takes) is a `SessionEnvelope`: the type is a supertype of what the schema accepts.
    let model = wiregen::load::load(&root().join("schema")).expect("schema/ loads");
    let protocol = model.protocol.clone().expect("a protocol");
    let engine = Engine::new(model, EngineOptions::default()).expect("an engine");
    let mut valid: Vec<Value> = crate::fixtures::messages()
        .into_iter()
        .filter(|f| f.expect == crate::fixtures::Expect::Valid)
        .filter_map(|f| f.message)
        .collect();
    for f in crate::files::below(&root().join("tests/fixtures/streams"))
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
    {
        let text = std::fs::read_to_string(f).expect("read a stream fixture");
        for line in text.lines() {
            if let Ok(v) = serde_json::from_str::<Value>(line) {
                if engine.check_value(&v).is_empty() {
                    valid.push(v);
                }
            }
        }
    }
    assert!(valid.len() > 300, "only {} valid messages found", valid.len());
    let file = values_file("valid-messages.mts");
    let items: String = valid.iter().map(|v| format!("  {v},\n")).collect();
    // And each one's event is of the events its role may send, without the fields that role may not send.
    let by_role: String = protocol
        .roles
        .iter()
        .map(|role| {
            let events: String = valid
                .iter()
                .filter(|v| v[&protocol.role_field] == role.as_str())
                .map(|v| format!("  {},\n", v[&protocol.union_field]))
                .collect();
            format!("export const {role}: readonly SessionEventForRole<{role:?}>[] = [\n{events}];\n")
        })
        .collect();
    std::fs::write(
        &file,
        format!(
            "// Written by tests/conformance/zod.rs: every valid fixture message, as a `SessionEnvelope`.\n\
             import type {{ SessionEnvelope, SessionEventForRole }} from \"../../generated/ts/dist/index.js\";\n\
             export const valid: readonly SessionEnvelope[] = [\n{items}];\n{by_role}"
        ),
    )
    .expect("write the valid messages");
    type_check_values(&file, "the valid fixture messages");
}

/// Type-checks a module of values ([`values_file`]) with `tsc --strict --exactOptionalPropertyTypes`: the values
/// must be of the types they are given.
pub fn type_check_values(file: &Path, what: &str) {
    crate::node::ensure_npm_deps(&package());
    run(
        Command::new("node")
            .current_dir(file.parent().expect("a directory"))
            .arg(tsc())
            .args(["--noEmit", "--strict", "--exactOptionalPropertyTypes", "--target", "ES2022", "--lib", "ES2022"])
            .args(["--module", "NodeNext", "--moduleResolution", "NodeNext", "--skipLibCheck"])
            .arg(file),
        &format!("tsc --noEmit --strict on {what}"),
    );
}

/// The file `name` in `target/conformance-types/`, the directory of the value type-checks (two levels below the
/// repository root, so a module there imports the packages as `../../generated/...`).
pub fn values_file(name: &str) -> PathBuf {
    let dir = root().join("target/conformance-types");
    std::fs::create_dir_all(&dir).expect("create target/conformance-types");
    dir.join(name)
}

/// The package's API through node's test runner: `createEnvelope`, ids, issues that carry rule ids and paths,
/// the package's `exports` map (imported by name).
#[test]
fn the_package_api_behaves_as_documented() {
    let index = built_package();
    let p = wiregen::load::load(&root().join("schema")).expect("schema/ loads");
    let env = p.ty(p.protocol.as_ref().expect("a protocol").envelope);
    let id_pattern = match &env.node.shape {
        wiregen::ir::Shape::Object(o) => {
            o.fields.iter().find(|f| f.name == "id").and_then(|f| match p.resolve(&f.node.shape) {
                wiregen::ir::Shape::String(s) => s.strict_pattern.as_ref().map(|x| x.source.clone()),
                _ => None,
            })
        }
        _ => None,
    };
    let mut cmd = Command::new("node");
    cmd.current_dir(package())
        .args(["--test", "--test-reporter=spec"])
        .arg(root().join("tests/conformance/zod-api.test.mjs"))
        .env("SESSION_WIRE_DIST", index)
        .env("SESSION_WIRE_ID_PATTERN", id_pattern.expect("the envelope id has a strict pattern"));
    run(&mut cmd, "node --test zod-api.test.mjs");
}

/// A temporary model whose every description (and an enum value, a property name) holds text that breaks naive
/// code generation: `*/`, backticks, `${`, quotes, backslashes, U+2028/U+2029, `@` tags, a `</script>`. The emitted
/// package must compile under strict, and every description must come back byte for byte at run time.
#[test]
fn hostile_schema_text_still_gives_valid_typescript() {
    built_package();
    let nasty = "x */ y `z` ${a} \"q\" 'r' \\ \u{2028}s\u{2029}t\r\n@deprecated u </script> /* v";
    let mut p = wiregen::load::load(&root().join("schema")).expect("schema/ loads");
    p.title = format!("T {nasty}");
    let role_enum = p.protocol.as_ref().expect("a protocol").role_enum;
    let events: Vec<wiregen::ir::TypeId> =
        p.protocol.as_ref().expect("a protocol").events.iter().map(|e| e.ty).collect();
    let mut extra_enum_done = false;
    let mut odd_done = false;
    let odd_field = "odd-\"key\" */";
    for (i, t) in p.types.iter_mut().enumerate() {
        t.description = Some(format!("{} {nasty}", t.names.base));
        match &mut t.node.shape {
            wiregen::ir::Shape::Object(o) => {
                for f in &mut o.fields {
                    f.description = Some(format!("{} {nasty}", f.name));
                    // The annotations' notes and `@deprecated` go into the same doc comments.
                    f.annotations.title = Some(nasty.to_string());
                    f.annotations.default = Some(serde_json::Value::String(nasty.to_string()));
                    f.annotations.deprecated = true;
                    f.examples = vec![serde_json::Value::String(nasty.to_string())];
                }
                if !odd_done && events.contains(&wiregen::ir::TypeId(i)) && o.fields.iter().all(|f| f.required) {
                    odd_done = true;
                    o.fields.push(wiregen::ir::Field {
                        name: odd_field.to_string(),
                        description: Some(nasty.to_string()),
                        examples: Vec::new(),
                        annotations: Default::default(),
                        required: false,
                        renamed_from: None,
                        moved_from: None,
                        node: wiregen::ir::Node {
                            origin: Default::default(),
                            description: None,
                            shape: wiregen::ir::Shape::String(Default::default()),
                        },
                    });
                }
            }
            wiregen::ir::Shape::Enum(values) if i != role_enum.0 && !extra_enum_done => {
                extra_enum_done = true;
                values.push(serde_json::Value::String(nasty.to_string()));
            }
            _ => {}
        }
    }
    assert!(extra_enum_done && odd_done, "the model has a second enum and an event with only required fields");
    let files = wiregen::emit::Output::Ts.emit(&p, &Default::default()).expect("the emitter takes hostile text");
    let dir = std::env::temp_dir().join(format!("wiregen-zod-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    build_beside(&files, &dir, "the hostile package");
    let expected = serde_json::json!({
        "envelope": p.ty(p.protocol.as_ref().expect("a protocol").envelope).description,
        "union": p.ty(p.protocol.as_ref().expect("a protocol").union).description,
        "event": p.ty(events[0]).description,
        "enumValue": nasty,
        "oddField": odd_field,
    });
    let script = r#"
        import { pathToFileURL } from "node:url";
        const want = JSON.parse(process.env.EXPECTED);
        const w = await import(pathToFileURL(process.argv[1] + "/dist/index.js").href);
        const got = {
          envelope: w.sessionEnvelopeSchema.description,
          union: w.sessionEventSchema.description,
          event: w.sessionEventSchema.options[0].description,
          enumValue: Object.values(w).flatMap((s) => (s && s.options && Array.isArray(s.options) && typeof s.options[0] === "string" ? s.options : [])).find((o) => o === want.enumValue),
          oddField: w.sessionEventSchema.options.flatMap((o) => Object.keys(o.shape)).find((k) => k === want.oddField),
        };
        for (const k of Object.keys(want)) {
          if (got[k] !== want[k]) { console.error(k, JSON.stringify(got[k]), "!==", JSON.stringify(want[k])); process.exit(1); }
        }
    "#;
    run(
        Command::new("node")
            .current_dir(&dir)
            .args(["--input-type=module", "-e", script])
            .arg(&dir)
            .env("EXPECTED", expected.to_string()),
        "the hostile package at run time",
    );
    // The doc comments are still comments: no description closed one early (tsc would have failed), and the text
    // is there, escaped (field descriptions live only in doc comments).
    let schemas = std::fs::read_to_string(dir.join("src/schemas.ts")).expect("schemas.ts");
    assert!(schemas.contains("x *\\/ y `z` ${a}"), "descriptions appear in doc comments, escaped");
    assert!(schemas.contains("\\@deprecated u"), "a description cannot add a doc tag");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A key that holds `undefined` is absent to the Zod module and the standalone validator wherever the schema asks
/// whether a property is there, as it is for declared properties and as `JSON.stringify` writes it: a name `required`
/// that `properties` does not declare, `dependentRequired` (its trigger and what it asks for) and the count of
/// `minProperties`/`maxProperties`. They counted such a key, and so passed values whose JSON the engine refuses
/// (helper 80). Each value's verdict is the engine's on its JSON.
#[test]
fn a_key_holding_undefined_is_absent_to_every_presence_rule() {
    let dir = std::env::temp_dir().join(format!("wiregen-undefined-absent-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let file = dir.join("root.schema.json");
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["x"], "dependentRequired": {"a": ["b"]}, "minProperties": 2, "maxProperties": 3
    });
    std::fs::write(&file, schema.to_string()).expect("write");
    let model = wiregen::load::load(&file).expect("the schema loads");
    let files = wiregen::emit::Output::Ts.emit(&model, &Default::default()).expect("emits");
    let pkg = dir.join("pkg");
    build_beside(&files, &pkg, "the undefined-for-absent package");
    let script = r#"
        import { pathToFileURL } from "node:url";
        const w = await import(pathToFileURL(process.argv[1] + "/dist/index.js").href);
        const u = undefined;
        const values = [
          { x: 1, a: "s", b: "t" },
          { x: u, a: "s", b: "t" },
          { x: 1, a: "s", b: u },
          { x: 1, a: u, q: u },
          { x: 1, a: u, b: "t" },
          { x: 1, a: "s", b: "t", q: u },
          { x: 1, b: "t", q: u, r: u, s: u },
        ];
        const first = (e) => (e.length === 0 ? null : [e[0].rule, e[0].pointer]);
        const out = values.map((v) => {
          const z = w.rootSchema.safeParse(v);
          return { json: JSON.stringify(v), zod: z.success ? null : first(w.toWireErrors(z.error)), standalone: first(w.validateRoot(v)) };
        });
        process.stdout.write(JSON.stringify(out));
    "#;
    let out = Command::new("node")
        .current_dir(&pkg)
        .args(["--input-type=module", "-e", script])
        .arg(&pkg)
        .output()
        .expect("node runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answers: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    let engine = Engine::new(model, EngineOptions::default()).expect("a root type");
    let mut refused = 0;
    for a in &answers {
        let json = a["json"].as_str().expect("the value's JSON");
        let want = engine
            .check_line(json.as_bytes())
            .1
            .first()
            .map_or(Value::Null, |e| serde_json::json!([e.rule, e.pointer]));
        refused += usize::from(!want.is_null());
        assert_eq!((&a["zod"], &a["standalone"]), (&want, &want), "{json}");
    }
    assert_eq!(refused, 3, "{answers:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
