//! The checkers of the conformance test. Each takes the whole corpus at once (so a checker that runs in
//! another process, like the CLI or node, starts once) and returns one verdict per fixture.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use wiregen::engine::{Engine, EngineOptions};

use crate::fixtures::{root, Fixture};

/// One checker's answer on one fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted.
    Valid,
    /// Rejected, with the first error's rule and pointer (free text for checkers that have no rule ids).
    Invalid { rule: String, pointer: String },
    /// This checker does not apply (e.g. strict ids for a standard schema validator).
    Skipped,
}

impl Verdict {
    /// A node runner's answer on one value: `{"valid": true}`, or the first error's `pointer` and its rule, read
    /// from the first of `rule_keys` the answer holds (`rule` for wiregen's checkers, ajv's `keyword` or `error`).
    pub fn answered(v: &serde_json::Value, rule_keys: &[&str]) -> Verdict {
        if v["valid"] == true {
            Verdict::Valid
        } else {
            Verdict::Invalid {
                rule: rule_keys.iter().find_map(|k| v[*k].as_str()).unwrap_or_default().into(),
                pointer: v["pointer"].as_str().unwrap_or_default().into(),
            }
        }
    }
}

/// A named checker.
pub struct Checker {
    /// Short name for reports.
    pub name: &'static str,
    /// Whether rule and pointer must match too.
    pub precise: bool,
    /// Runs the whole corpus.
    pub run: fn(&[Fixture]) -> Vec<Verdict>,
}

/// The JSON Schema checkers and wiregen's own validator.
pub fn schema_checkers() -> Vec<Checker> {
    vec![
        Checker { name: "engine", precise: true, run: engine },
        Checker { name: "engine-fast", precise: true, run: engine_fast },
        Checker { name: "cli", precise: true, run: cli },
        Checker { name: "bundled", precise: false, run: bundled },
        Checker { name: "source", precise: false, run: source },
        Checker { name: "ajv", precise: false, run: ajv },
    ]
}

/// The generated outputs (added by the output issues).
pub fn output_checkers() -> Vec<Checker> {
    let mut v = crate::rust_types::checkers();
    v.push(Checker { name: "zod", precise: true, run: crate::zod::zod });
    v.push(Checker { name: "ts-standalone", precise: true, run: crate::zod::ts_standalone });
    v
}

fn protocol() -> wiregen::ir::Model {
    wiregen::load::load(&root().join("schema")).expect("schema/ loads")
}

fn engine(fx: &[Fixture]) -> Vec<Verdict> {
    engine_verdicts(fx, |e, line| e.check_line(line).1)
}

/// The engine's fast path with its precise fallback (what `validate` and `serve` run).
fn engine_fast(fx: &[Fixture]) -> Vec<Verdict> {
    engine_verdicts(fx, |e, line| e.check_line_fast(line))
}

fn engine_verdicts(fx: &[Fixture], check: fn(&Engine, &[u8]) -> Vec<wiregen::engine::Issue>) -> Vec<Verdict> {
    let p = std::sync::Arc::new(protocol());
    let normal = Engine::new(p.clone(), EngineOptions { strict_ids: false, ..Default::default() })
        .expect("the schema has a root type");
    let strict =
        Engine::new(p, EngineOptions { strict_ids: true, ..Default::default() }).expect("the schema has a root type");
    fx.iter()
        .map(|f| match check(if f.strict_ids { &strict } else { &normal }, f.line.as_bytes()).first() {
            None => Verdict::Valid,
            Some(i) => Verdict::Invalid { rule: i.rule.into(), pointer: i.pointer.clone() },
        })
        .collect()
}

/// Runs the real binary once per mode, all fixtures of that mode as JSONL on stdin.
fn cli(fx: &[Fixture]) -> Vec<Verdict> {
    let mut out = vec![Verdict::Skipped; fx.len()];
    for strict in [false, true] {
        let idx: Vec<usize> = (0..fx.len()).filter(|&i| fx[i].strict_ids == strict).collect();
        if idx.is_empty() {
            continue;
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wiregen"));
        cmd.current_dir(root()).args(["validate", "--format", "json"]);
        if strict {
            cmd.arg("--strict-ids");
        }
        cmd.arg("-").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("run wiregen");
        let mut input = String::new();
        for &i in &idx {
            assert!(!fx[i].line.contains('\n'), "{}: a fixture line must be one line", fx[i].name);
            input.push_str(&fx[i].line);
            input.push('\n');
        }
        let mut stdin = child.stdin.take().expect("stdin");
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let output = child.wait_with_output().expect("wiregen runs");
        writer.join().expect("writer").expect("write stdin");
        let text = String::from_utf8(output.stdout).expect("utf-8 output");
        let records: Vec<Value> =
            text.lines().map(|l| serde_json::from_str(l).expect("one JSON record per line")).collect();
        assert_eq!(
            records.len(),
            idx.len(),
            "one record per input line; stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let any_invalid = records.iter().any(|r| r["valid"] == false);
        assert_eq!(output.status.code(), Some(if any_invalid { 1 } else { 0 }), "exit status");
        for (k, &i) in idx.iter().enumerate() {
            let r = &records[k];
            assert_eq!(r["line"], json!(k + 1), "records come in input order");
            out[i] = if r["valid"] == true {
                Verdict::Valid
            } else {
                let e = &r["errors"][0];
                Verdict::Invalid {
                    rule: e["rule"].as_str().unwrap_or("").into(),
                    pointer: e["pointer"].as_str().unwrap_or("").into(),
                }
            };
        }
    }
    out
}

fn first_error(v: &jsonschema::Validator, m: &Value) -> Verdict {
    match v.iter_errors(m).next() {
        None => Verdict::Valid,
        Some(e) => Verdict::Invalid {
            rule: format!("{:?}", e.kind()).chars().take(40).collect(),
            pointer: e.instance_path().to_string(),
        },
    }
}

/// The bundled schema in `generated/schema/`, through the `jsonschema` crate.
fn bundled(fx: &[Fixture]) -> Vec<Verdict> {
    let text =
        std::fs::read_to_string(root().join("generated/schema/session-protocol.schema.json")).expect("bundled schema");
    let schema: Value = serde_json::from_str(&text).expect("bundled schema is JSON");
    let v = jsonschema::draft202012::new(&schema).expect("bundled schema compiles");
    fx.iter()
        .map(|f| match (&f.message, f.strict_ids) {
            (_, true) => Verdict::Skipped,
            (None, _) => Verdict::Invalid { rule: "not JSON".into(), pointer: String::new() },
            (Some(m), _) => first_error(&v, m),
        })
        .collect()
}

/// The source files in `schema/` through the `jsonschema` crate: the envelope schema, then the member schema
/// picked by `ev.t` from the members directory, then the `x-roles` annotations read straight from the files.
/// This reads the raw files, not wiregen's model, so it checks the loader too.
fn source(fx: &[Fixture]) -> Vec<Verdict> {
    let dir = root().join("schema");
    let mut resources = Vec::new();
    let mut members: BTreeMap<String, Value> = BTreeMap::new();
    let mut envelope = Value::Null;
    for p in crate::files::below(&dir) {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).expect("read")).expect("schema file is JSON");
        let id = v["$id"].as_str().expect("every schema file has $id").to_string();
        if p.file_name().is_some_and(|n| n == "envelope.schema.json") {
            envelope = v.clone();
        } else if let Some(t) = v["properties"]["t"]["const"].as_str() {
            members.insert(t.to_string(), v.clone());
        }
        resources.push((id, v));
    }
    let mut registry = jsonschema::Registry::new();
    for (id, v) in &resources {
        registry = registry.add(id.as_str(), v.clone()).expect("add resource");
    }
    let registry = registry.prepare().expect("registry");
    let build = |id: &str| {
        jsonschema::options().with_registry(&registry).build(&json!({"$ref": id})).expect("source schema compiles")
    };
    let env_v = build(envelope["$id"].as_str().expect("envelope $id"));
    let member_v: BTreeMap<&str, (jsonschema::Validator, &Value)> =
        members.iter().map(|(t, v)| (t.as_str(), (build(v["$id"].as_str().expect("$id")), v))).collect();
    let role_field = envelope["x-role-property"].as_str().expect("x-role-property");
    fx.iter()
        .map(|f| {
            let Some(m) = &f.message else {
                return Verdict::Invalid { rule: "not JSON".into(), pointer: String::new() };
            };
            if f.strict_ids {
                return Verdict::Skipped;
            }
            let v = first_error(&env_v, m);
            if v != Verdict::Valid {
                return v;
            }
            let ev = &m["ev"];
            let Some((mv, schema)) = ev["t"].as_str().and_then(|t| member_v.get(t)) else {
                return Verdict::Invalid { rule: "no member for t".into(), pointer: "/ev/t".into() };
            };
            if let Some(Verdict::Invalid { rule, pointer }) = Some(first_error(mv, ev)) {
                return Verdict::Invalid { rule, pointer: format!("/ev{pointer}") };
            }
            let role = m[role_field].as_str().unwrap_or_default();
            let allows =
                |s: &Value| s.get("x-roles").and_then(Value::as_array).is_none_or(|r| r.iter().any(|x| x == role));
            if !allows(schema) {
                return Verdict::Invalid { rule: "x-roles".into(), pointer: format!("/{role_field}") };
            }
            for (k, s) in envelope["properties"].as_object().expect("properties") {
                if m.get(k).is_some() && !allows(s) {
                    return Verdict::Invalid { rule: "x-roles".into(), pointer: format!("/{k}") };
                }
            }
            for (k, s) in schema["properties"].as_object().expect("properties") {
                if ev.get(k).is_some() && !allows(s) {
                    return Verdict::Invalid { rule: "x-roles".into(), pointer: format!("/ev/{k}") };
                }
            }
            Verdict::Valid
        })
        .collect()
}

/// The bundled schema through ajv 8 in strict mode (real node, one process for the whole corpus).
fn ajv(fx: &[Fixture]) -> Vec<Verdict> {
    let dir = root().join("tests/node");
    crate::node::ensure_npm_deps(&dir);
    let idx: Vec<usize> = (0..fx.len()).filter(|&i| !fx[i].strict_ids).collect();
    let input: String = idx.iter().map(|&i| format!("{}\n", fx[i].line)).collect();
    let schema = root().join("generated/schema/session-protocol.schema.json");
    let answers = crate::node::run_node_answers(
        &dir,
        &["ajv-check.mjs", schema.to_str().expect("utf-8 path")],
        &input,
        idx.len(),
    );
    let mut out = vec![Verdict::Skipped; fx.len()];
    for (a, &i) in answers.iter().zip(&idx) {
        out[i] = if fx[i].message.is_none() && crate::fixtures::repeats_a_key(fx[i].line.as_bytes()) {
            // ajv sees `JSON.parse`'s value, which keeps a repeated key's last member: the line framing refuses the
            // text before a standard validator sees a value (README, *Bundled JSON Schema*, "Line rules").
            Verdict::Invalid { rule: "not JSON".into(), pointer: String::new() }
        } else {
            Verdict::answered(a, &["keyword", "error"])
        };
    }
    out
}

// ---- the happy-wire example: verdicts only ---------------------------------------------------------------------

use crate::example::ExampleFixture;

/// The example's model (to find each fixture's type).
fn example_model() -> wiregen::ir::Model {
    wiregen::load::load(&crate::example::schema_dir()).expect("the example's schema loads")
}

/// The example's bundled schema (`examples/happy-wire/generated/schema/`).
fn example_bundle() -> (std::path::PathBuf, Value) {
    let dir = root().join("examples/happy-wire/generated/schema");
    let path = dir.join("happy-wire.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path, serde_json::from_str(&text).expect("the bundled schema is JSON"))
}

/// Where a type is in the bundled schema, by the README's rule: `#/$defs/<base name>`, `<base name>Event` for an
/// event of the protocol.
fn bundled_ref(m: &wiregen::ir::Model, ty: &str) -> String {
    let id = m.type_named(ty).unwrap_or_else(|| panic!("the example has no type `{ty}`"));
    let base = &m.ty(id).names.base;
    let event = m.protocol.as_ref().is_some_and(|p| p.events.iter().any(|e| e.ty == id));
    format!("#/$defs/{base}{}", if event { "Event" } else { "" })
}

/// The example's bundled schema through the `jsonschema` crate, each fixture against its type's `$defs` entry.
pub fn example_bundled(fx: &[ExampleFixture]) -> Vec<Verdict> {
    let m = example_model();
    let (_, schema) = example_bundle();
    let id = schema["$id"].as_str().expect("the bundle has an $id").to_string();
    let registry = jsonschema::Registry::new().add(id.as_str(), schema.clone()).expect("add the bundle");
    let registry = registry.prepare().expect("registry");
    let mut validators: BTreeMap<String, jsonschema::Validator> = BTreeMap::new();
    fx.iter()
        .map(|f| {
            let r = bundled_ref(&m, &f.ty);
            let v = validators.entry(r.clone()).or_insert_with(|| {
                jsonschema::options()
                    .with_registry(&registry)
                    .build(&json!({ "$ref": format!("{id}{r}") }))
                    .unwrap_or_else(|e| panic!("{r}: the bundle does not compile: {e}"))
            });
            first_error(v, &f.value)
        })
        .collect()
}

/// The example's bundled schema through ajv 8 in strict mode (one node process for every fixture).
pub fn example_ajv(fx: &[ExampleFixture]) -> Vec<Verdict> {
    let dir = root().join("tests/node");
    crate::node::ensure_npm_deps(&dir);
    let m = example_model();
    let (path, _) = example_bundle();
    let input: String =
        fx.iter().map(|f| format!("{}\n", json!({ "ref": bundled_ref(&m, &f.ty), "value": f.value }))).collect();
    let answers =
        crate::node::run_node_answers(&dir, &["ajv-types.mjs", path.to_str().expect("utf-8 path")], &input, fx.len());
    answers.iter().map(|a| Verdict::answered(a, &["keyword"])).collect()
}

/// The example's source files (`examples/happy-wire/schema/`) through the `jsonschema` crate, each fixture against
/// its type where the schema defines it. The source says the role rule only with `x-roles` (on each event, and
/// on envelope properties), which standard validators ignore; this checker reads those annotations straight from
/// the files and adds the rule to the envelope as `if`/`then` (independently of wiregen's model and bundle).
pub fn example_source(fx: &[ExampleFixture]) -> Vec<Verdict> {
    let m = example_model();
    let dir = crate::example::schema_dir();
    let mut files: BTreeMap<String, Value> = BTreeMap::new();
    for e in std::fs::read_dir(&dir).expect("the example's schema directory") {
        let p = e.expect("entry").path();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).expect("read")).expect("JSON");
        files.insert(p.file_name().and_then(|n| n.to_str()).expect("name").to_string(), v);
    }
    add_source_role_rule(&mut files);
    let mut registry = jsonschema::Registry::new();
    for v in files.values() {
        registry = registry.add(v["$id"].as_str().expect("every file has an $id"), v.clone()).expect("add a file");
    }
    let registry = registry.prepare().expect("registry");
    let mut validators: BTreeMap<String, jsonschema::Validator> = BTreeMap::new();
    fx.iter()
        .map(|f| {
            let id = m.type_named(&f.ty).unwrap_or_else(|| panic!("the example has no type `{}`", f.ty));
            let o = &m.ty(id).origin;
            let target = format!("{}#{}", files[&o.file]["$id"].as_str().expect("$id"), o.pointer);
            let v = validators.entry(target.clone()).or_insert_with(|| {
                jsonschema::options()
                    .with_registry(&registry)
                    .build(&json!({ "$ref": target }))
                    .unwrap_or_else(|e| panic!("{target}: the source does not compile: {e}"))
            });
            first_error(v, &f.value)
        })
        .collect()
}

/// Finds the envelope (`x-role-property`) in the raw files and writes its role rule as `if`/`then` from the raw
/// `x-roles`: per event (a `oneOf` member of the union its union property refers to) the roles that may send it,
/// per envelope property the roles that may send it.
fn add_source_role_rule(files: &mut BTreeMap<String, Value>) {
    let mut rules = Vec::new();
    let mut at = None;
    for (file, v) in files.iter() {
        for (name, def) in v["$defs"].as_object().into_iter().flatten() {
            let Some(role) = def["x-role-property"].as_str() else { continue };
            let roles: Vec<Value> = {
                let r = def["properties"][role]["$ref"].as_str().expect("the role property is a $ref");
                let key = r.rsplit('/').next().expect("a $defs key");
                v["$defs"][key]["enum"].as_array().expect("the roles are an enum").clone()
            };
            for (prop, s) in def["properties"].as_object().expect("properties") {
                if let Some(allowed) = s["x-roles"].as_array() {
                    for r in roles.iter().filter(|r| !allowed.contains(r)) {
                        rules.push(json!({
                            "if": { "properties": { role: { "const": r } }, "required": [role] },
                            "then": { "properties": { prop: false } }
                        }));
                    }
                }
                let Some(r) = s["$ref"].as_str() else { continue };
                let union = &v["$defs"][r.rsplit('/').next().expect("a $defs key")];
                let Some(disc) = union["x-discriminator"].as_str() else { continue };
                for member in union["oneOf"].as_array().expect("a union lists its members") {
                    let key = member["$ref"].as_str().expect("a member is a $ref").rsplit('/').next().expect("key");
                    let ev = &v["$defs"][key];
                    let tag = &ev["properties"][disc]["const"];
                    let allowed = ev["x-roles"].as_array().cloned().unwrap_or_else(|| roles.clone());
                    rules.push(json!({
                        "if": { "properties": { prop: { "properties": { disc: { "const": tag } }, "required": [disc] } },
                                "required": [prop] },
                        "then": { "properties": { role: { "enum": allowed } } }
                    }));
                }
            }
            at = Some((file.clone(), name.clone()));
        }
    }
    let (file, name) = at.expect("the example has an envelope (x-role-property)");
    let env = &mut files.get_mut(&file).expect("file")["$defs"][&name];
    assert!(env.get("allOf").is_none(), "the envelope has no allOf of its own");
    env["allOf"] = Value::Array(rules);
}
