//! What the loader used to accept silently or crash on (issue 12's list) is now either exact or a located refusal.
//! The refusals are golden cases in `tests/fixtures/broken-schemas/` (`ref-cycle`, `ref-beside-union`,
//! `second-event-union`, `constructor-default`); these tests cover what is now supported exactly.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use wiregen::engine::{Engine, EngineOptions};

/// A test's scratch directory (and the `.out` directory beside it, where a test generates), removed when the
/// test ends, whether it passed or not.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let s = Scratch(std::env::temp_dir().join(format!("wiregen-model-{}-{name}", std::process::id())));
        s.remove();
        s
    }

    fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_dir_all(self.0.with_extension("out"));
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.remove();
    }
}

/// A fresh directory holding the given schema files.
fn schema_dir(name: &str, files: &[(&str, Value)]) -> Scratch {
    let dir = Scratch::new(name);
    for (file, v) in files {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, serde_json::to_string_pretty(v).expect("json")).expect("write");
    }
    dir
}

/// The first error's (rule, pointer), or `None` when the value is valid.
fn first(engine: &Engine, v: Value) -> Option<(String, String)> {
    engine.check_value(&v).first().map(|i| (i.rule.to_string(), i.pointer.clone()))
}

fn wiregen(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wiregen")).current_dir(dir).args(args).output().expect("run wiregen")
}

/// The text of the bundled schema `wiregen generate --only schema --out out` (with `more` arguments) writes in `dir`.
fn bundled_schema(dir: &Path, more: &[&str]) -> String {
    let args: Vec<&str> =
        ["generate", "--only", "schema", "--out", "out"].into_iter().chain(more.iter().copied()).collect();
    let o = wiregen(dir, &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let file = std::fs::read_dir(dir.join("out/schema"))
        .expect("out/schema")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("the bundled schema");
    std::fs::read_to_string(file).expect("read")
}

/// `wiregen types --lang rust FILE` in `dir`.
fn rust_module(dir: &Path, file: &str) -> String {
    let o = wiregen(dir, &["types", "--lang", "rust", file]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).expect("utf-8")
}

/// The lines of the Rust item that starts with `start` (`pub struct Circle {`), after that line and without
/// doc comments, trimmed.
fn item_lines(rust: &str, start: &str) -> Vec<String> {
    let at = rust.find(start).unwrap_or_else(|| panic!("no `{start}`:\n{rust}"));
    let text = &rust[at..at + rust[at..].find("\n}").expect("end")];
    text.lines().skip(1).map(str::trim).filter(|l| !l.starts_with("///")).map(str::to_string).collect()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_path_buf()
}

#[test]
fn a_const_on_any_property_keeps_its_value() {
    // It used to become `boolean` in every output.
    let dir = schema_dir(
        "const",
        &[(
            "root.schema.json",
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["kind", "flag", "n", "nothing"],
                "properties": {
                    "kind": {"const": "x"}, "flag": {"const": true}, "n": {"const": 3}, "nothing": {"const": null}
                }
            }),
        )],
    );
    let file = dir.join("root.schema.json");
    let engine = Engine::new(wiregen::load::load(&file).expect("loads"), EngineOptions::default()).expect("engine");
    let valid = json!({"kind": "x", "flag": true, "n": 3.0, "nothing": null});
    assert_eq!(first(&engine, valid), None);
    for (field, wrong) in [("kind", json!("y")), ("flag", json!(false)), ("n", json!(4)), ("nothing", json!(0))] {
        let mut v = json!({"kind": "x", "flag": true, "n": 3, "nothing": null});
        v[field] = wrong;
        assert_eq!(first(&engine, v), Some(("const".into(), format!("/{field}"))), "{field}");
    }
    // Every generated output states the value, not a type.
    let zod = wiregen(&dir, &["types", "--lang", "zod", file.to_str().expect("utf-8")]);
    let zod = String::from_utf8(zod.stdout).expect("utf-8");
    for lit in ["z.literal(\"x\"", "z.literal(true", "z.literal(3", "z.literal(null"] {
        assert!(zod.contains(lit), "zod has {lit}");
    }
    let ts = wiregen(&dir, &["types", "--lang", "ts-standalone", file.to_str().expect("utf-8")]);
    assert!(String::from_utf8(ts.stdout).expect("utf-8").contains("!== true"));
}

#[test]
fn a_schema_file_nothing_references_becomes_a_type() {
    // It used to be ignored without a word.
    let dir = schema_dir(
        "unreferenced",
        &[
            (
                "main.schema.json",
                json!({"x-package": {"crate": "demo-wire", "npm": "demo-wire"}, "type": "object",
                       "properties": {"a": {"type": "string"}}}),
            ),
            (
                "point.schema.json",
                json!({"type": "object", "required": ["b"], "properties": {"b": {"type": "integer"}}}),
            ),
        ],
    );
    let model = wiregen::load::load(&dir).expect("loads");
    assert!(model.types.iter().any(|t| t.names.base == "Point"), "{:?}", model.types);
    let engine = Engine::for_type_named(model, "Point", EngineOptions::default()).expect("a type named Point");
    assert_eq!(first(&engine, json!({"b": 1})), None);
    assert_eq!(first(&engine, json!({"b": 1.5})), Some(("type".into(), "/b".into())));
    // Outside the schema directory: the TypeScript package's `package.json` would be read back as a schema file.
    let out_dir = dir.with_extension("out");
    let out =
        wiregen(&dir, &["generate", "--only", "rust,ts", "--schema", ".", "--out", out_dir.to_str().expect("path")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rust = std::fs::read_to_string(out_dir.join("rust/src/lib.rs")).expect("lib.rs");
    assert!(rust.contains("pub struct Point"), "the Rust crate exports Point");
    let zod = std::fs::read_to_string(out_dir.join("ts/src/schemas.ts")).expect("schemas.ts");
    assert!(zod.contains("export const pointSchema"), "the Zod module exports pointSchema");
}

#[test]
fn a_folder_of_plain_type_files_gets_a_title_and_no_relative_id() {
    // No `x-package`, no protocol: the package is `wire-types`, its root gives no title and no base URI.
    let dir = schema_dir(
        "plain",
        &[(
            "person.schema.json",
            json!({"$id": "https://example.com/person.schema.json", "title": "Person", "type": "object",
                   "properties": {"name": {"type": "string"}}}),
        )],
    );
    let out_dir = dir.with_extension("out");
    let out =
        wiregen(&dir, &["generate", "--only", "schema,docs", "--schema", ".", "--out", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bundle: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("schema/wire-types.schema.json")).unwrap()).unwrap();
    // A root `$id` should be absolute: "wire-types.schema.json" was refused by some validators. The title was "".
    assert_eq!((bundle.get("$id"), &bundle["title"]), (None, &json!("wire-types")), "{bundle}");
    let docs = std::fs::read_to_string(out_dir.join("docs/wire-types.md")).unwrap();
    assert!(docs.lines().any(|l| l == "# wire-types"), "{docs}");
}

#[test]
fn the_packages_carry_the_version_x_package_gives() {
    let dir = schema_dir(
        "versioned",
        &[(
            "main.schema.json",
            json!({"x-package": {"crate": "demo-wire", "npm": "@demo/wire", "version": "2.1.0-rc.1"}, "type": "object",
                   "properties": {"a": {"type": "string"}}}),
        )],
    );
    let out_dir = dir.with_extension("out");
    let out =
        wiregen(&dir, &["generate", "--only", "rust,ts", "--schema", ".", "--out", out_dir.to_str().expect("path")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cargo = std::fs::read_to_string(out_dir.join("rust/Cargo.toml")).expect("Cargo.toml");
    assert!(cargo.contains("\nversion = \"2.1.0-rc.1\"\n"), "{cargo}");
    let package: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("ts/package.json")).expect("package.json"))
            .expect("JSON");
    assert_eq!(package["version"], "2.1.0-rc.1");
    // A scoped name is published as public (npm's default for one is restricted).
    assert_eq!(package["publishConfig"], json!({"access": "public"}));
}

#[test]
fn a_recursive_type_through_ref_is_supported() {
    // A `$ref` cycle that an object breaks is a recursive type (one that nothing breaks is refused: the
    // `ref-cycle` golden case); it used to overflow the stack.
    let dir = schema_dir(
        "recursive",
        &[(
            "tree.schema.json",
            json!({"type": "object", "required": ["name"], "additionalProperties": false,
                   "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}}}),
        )],
    );
    let file = dir.join("tree.schema.json");
    let engine = Engine::new(wiregen::load::load(&file).expect("loads"), EngineOptions::default()).expect("engine");
    let deep = json!({"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]});
    assert_eq!(first(&engine, deep), None);
    let bad = json!({"name": "a", "children": [{"name": "b", "children": [{"name": 1}]}]});
    assert_eq!(first(&engine, bad), Some(("type".into(), "/children/0/children/0/name".into())));
    let zod = wiregen(&dir, &["types", "--lang", "zod", file.to_str().expect("utf-8")]);
    assert!(zod.status.success());
    assert!(String::from_utf8(zod.stdout).expect("utf-8").contains("z.lazy("), "Zod refers to itself lazily");
    let rust = wiregen(&dir, &["types", "--lang", "rust", file.to_str().expect("utf-8")]);
    assert!(rust.status.success());
    assert!(String::from_utf8(rust.stdout).expect("utf-8").contains("Vec<Root>"), "Rust holds children by value");
}

#[test]
fn an_envelope_time_of_type_number_is_filled_by_the_constructor() {
    // It used to load and then fail in an emitter, unlocated. With `x-auto: "now"` on a number every output
    // generates; without `x-auto` it is the located `constructor-default` golden case.
    let dir = Scratch::new("time");
    let schema = dir.join("schema");
    std::fs::create_dir_all(schema.join("events")).expect("mkdir");
    for e in std::fs::read_dir(repo().join("schema"))
        .expect("schema")
        .chain(std::fs::read_dir(repo().join("schema/events")).expect("events"))
    {
        let p = e.expect("entry").path();
        if p.is_file() {
            let rel = p.strip_prefix(repo().join("schema")).expect("inside");
            std::fs::copy(&p, schema.join(rel)).expect("copy");
        }
    }
    let env = schema.join("envelope.schema.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&env).expect("read")).expect("json");
    v["properties"]["time"] = json!({"type": "number", "description": "Unix time in milliseconds", "x-auto": "now"});
    std::fs::write(&env, serde_json::to_string_pretty(&v).expect("json")).expect("write");
    let out = wiregen(&dir, &["generate", "--schema", "schema", "--out", "out"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rust = std::fs::read_to_string(dir.join("out/rust/src/lib.rs")).expect("lib.rs");
    assert!(rust.contains("pub time: ::std::option::Option<f64>"), "the constructor option is a number");
    let engine = Engine::new(wiregen::load::load(&schema).expect("loads"), EngineOptions::default()).expect("engine");
    let msg = json!({"id": "m1", "time": 1.5, "role": "agent", "ev": {"t": "text", "text": "hi"}});
    assert_eq!(first(&engine, msg), None, "a fractional time is valid now");
}

#[test]
fn one_schema_file_is_enough_and_a_refusal_names_the_keyword_and_pointer() {
    let dir = schema_dir(
        "types-cli",
        &[
            ("ok.schema.json", json!({"type": "array", "items": {"type": "integer"}, "maxItems": 2})),
            (
                "bad.schema.json",
                json!({"type": "object", "properties": {"when": {"type": "string", "format": "date"}}}),
            ),
        ],
    );
    for lang in ["rust", "zod", "ts-standalone"] {
        let ok = wiregen(&dir, &["types", "--lang", lang, "ok.schema.json"]);
        assert!(ok.status.success(), "{lang}: {}", String::from_utf8_lossy(&ok.stderr));
        assert!(!ok.stdout.is_empty());
        let bad = wiregen(&dir, &["types", "--lang", lang, "bad.schema.json"]);
        assert_eq!(bad.status.code(), Some(2), "{lang}");
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(
            err.contains("bad.schema.json:") && err.contains("/properties/when/format") && err.contains("`format`"),
            "{lang}: {err}"
        );
        assert!(!err.contains("panicked"));
    }
    // `validate --schema FILE` checks instances against the file's root with the engine.
    std::fs::write(dir.join("in.jsonl"), "[1,2]\n[1,2,3]\n[1.5]\n").expect("write");
    let v = wiregen(&dir, &["validate", "--schema", "ok.schema.json", "--format", "json", "in.jsonl"]);
    assert_eq!(v.status.code(), Some(1));
    let records: Vec<Value> = String::from_utf8(v.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record"))
        .collect();
    assert_eq!(records.len(), 3);
    assert_eq!(records[0]["valid"], true);
    assert_eq!(records[1]["errors"][0]["rule"], "max-items");
    assert_eq!(records[2]["errors"][0]["pointer"], "/0");
    assert_eq!(records[2]["errors"][0]["rule"], "type");
}

#[test]
fn x_aliases_give_a_type_other_names_in_every_language() {
    // The v2 schema keeps happy-wire's names for the two types v2 renamed.
    let m = wiregen::load::load(&repo().join("schema")).expect("schema/ loads");
    let aliases = |base: &str| -> Vec<(String, String, String)> {
        let t = m.types.iter().find(|t| t.names.base == base).expect("the type");
        t.aliases.iter().map(|a| (a.rust.clone(), a.ts.clone(), a.zod.clone())).collect()
    };
    assert_eq!(
        aliases("Service"),
        [("ServiceMessage".into(), "SessionServiceMessageEvent".into(), "sessionServiceMessageEventSchema".into())]
    );
    assert_eq!(
        aliases("TurnStatus"),
        [("TurnEndStatus".into(), "SessionTurnEndStatus".into(), "sessionTurnEndStatusSchema".into())]
    );
    // One file: every output of `wiregen types` prints the alias as the same type (and the same Zod schema).
    let dir = schema_dir(
        "aliases",
        &[(
            "status.schema.json",
            json!({
                "x-name": "Status",
                "x-aliases": ["OldStatus", "LegacyStatus"],
                "description": "A status.",
                "enum": ["on", "off"]
            }),
        )],
    );
    let out = |lang: &str| {
        let o = wiregen(&dir, &["types", "--lang", lang, "status.schema.json"]);
        assert!(o.status.success(), "{lang}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).expect("utf-8")
    };
    let rust = out("rust");
    assert!(
        rust.contains("pub type OldStatus = Status;") && rust.contains("pub type LegacyStatus = Status;"),
        "{rust}"
    );
    let zod = out("zod");
    assert!(zod.contains("export const oldStatusSchema = statusSchema;"), "{zod}");
    assert!(zod.contains("export type LegacyStatus = Status;"), "{zod}");
    let sa = out("ts-standalone");
    assert!(sa.contains("export type OldStatus = Status;"), "{sa}");
}

#[test]
fn an_all_of_of_objects_is_one_rust_struct_of_their_properties() {
    // Inheritance through `allOf`: the Rust type holds every object part's properties (through references and
    // nested `allOf`s), required where any part requires them; a part that is no object only constrains. Two
    // parts that declare one property are typed by the first. The verdicts and errors are held to the engine's
    // by the JSON-Schema-Test-Suite harness (`tests/jsts/wiregen-cases.json`, the `allOf` inheritance cases).
    let dir = schema_dir(
        "allof-struct",
        &[(
            "shapes.schema.json",
            json!({
                "$defs": {
                    "base": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
                    "named": {"allOf": [
                        {"$ref": "#/$defs/base"},
                        {"type": "object", "properties": {"name": {"type": "string"}, "size": {"type": "integer", "minimum": 0, "maximum": 1000}}}
                    ]},
                    "circle": {"allOf": [
                        {"$ref": "#/$defs/named"},
                        {"type": "object", "properties": {"parent": {"$ref": "#/$defs/circle"}}, "required": ["name"]},
                        {"not": {"required": ["radius"]}}
                    ]},
                    "twice": {"allOf": [
                        {"$ref": "#/$defs/base"},
                        {"type": "object", "properties": {"id": {"minLength": 2}}}
                    ]},
                    "more": {"allOf": [
                        {"$ref": "#/$defs/base"},
                        {"properties": {"id": {"maxLength": 3}, "n": {"type": "integer", "minimum": 0, "maximum": 9}, "m": {"type": ["string", "null"]}}, "required": ["n"]},
                        {"properties": {"m": {"type": "string"}}}
                    ]}
                },
                "type": "object",
                "properties": {"circle": {"$ref": "#/$defs/circle"}, "twice": {"$ref": "#/$defs/twice"}, "more": {"$ref": "#/$defs/more"}}
            }),
        )],
    );
    let rust = rust_module(&dir, "shapes.schema.json");
    assert_eq!(
        item_lines(&rust, "pub struct Circle {"),
        [
            "pub id: ::std::string::String,",
            "pub name: ::std::string::String,",
            "pub size: ::std::option::Option<u64>,",
            "pub parent: ::std::option::Option<::std::boxed::Box<Circle>>,",
            "pub extra: Extra<::serde_json::Value>,",
        ]
    );
    // Two parts that declare `id`: the type of the first typed part, checked whole first.
    assert!(rust.contains("pub struct Twice(\n    /// The value.\n    pub Base,"), "{rust}");
    // A part that declares `id` again and adds `n` and `m`: one struct of all of them, `id` typed by the first
    // part, `m` without the `null` the last part refuses (it was `More(pub Base)`, `n` only in `extra`, so
    // `More(Base::new(..))` wrote a value without the required `n`).
    assert_eq!(
        item_lines(&rust, "pub struct More {"),
        [
            "pub id: ::std::string::String,",
            "pub n: u64,",
            "pub m: ::std::option::Option<::std::string::String>,",
            "pub extra: Extra<::serde_json::Value>,",
        ]
    );
}

#[test]
fn an_any_of_one_of_or_type_list_is_a_rust_enum_of_its_alternatives() {
    // A variant per alternative, named after its type or its kind; a struct that holds the enum through its own
    // alternative holds it boxed. Verdicts, errors and round trips: `tests/jsts/wiregen-cases.json`.
    let dir = schema_dir(
        "choice-enum",
        &[(
            "expr.schema.json",
            json!({
                "$defs": {
                    "expr": {"oneOf": [{"type": "number"}, {"type": "string"}, {"$ref": "#/$defs/pair"}, {"type": "string", "maxLength": 0}]},
                    "pair": {"type": "object", "properties": {"left": {"$ref": "#/$defs/expr"}}, "required": ["left"]},
                    "stripped": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/dropping"}}]},
                    "dropping": {"type": "object", "properties": {"a": {"type": "string"}}, "x-unknown-keys": "strip"},
                    "kinds": {"type": ["string", "integer", "array", "null"], "minimum": 0, "maximum": 9, "items": {"type": "boolean"}}
                },
                "type": "object",
                "properties": {
                    "expr": {"$ref": "#/$defs/expr"},
                    "stripped": {"$ref": "#/$defs/stripped"},
                    "kinds": {"$ref": "#/$defs/kinds"}
                }
            }),
        )],
    );
    let rust = rust_module(&dir, "expr.schema.json");
    let body = |start: &str| item_lines(&rust, start);
    assert_eq!(
        body("pub enum Expr {"),
        ["Number(f64),", "String(::std::string::String),", "Pair(Pair),", "String2(::std::string::String),"]
    );
    assert_eq!(
        body("pub struct Pair {"),
        ["pub left: ::std::boxed::Box<Expr>,", "pub extra: Extra<::serde_json::Value>,"]
    );
    assert_eq!(
        body("pub enum Kinds {"),
        ["Null,", "Integer(u64),", "String(::std::string::String),", "Array(::std::vec::Vec<bool>),"]
    );
    // An alternative that drops keys would lose what the checked value (and the TypeScript outputs) keep.
    assert!(rust.contains("pub struct Stripped(\n    /// The value.\n    pub ::serde_json::Value,"), "{rust}");
}

#[test]
fn a_choice_inside_a_type_is_a_type_of_its_own_and_a_rust_enum() {
    // A property's, an item's or a map value's whole schema that is an `anyOf`, `oneOf` or `type` list is hoisted
    // like an inline object and named from its place (or by `x-name`); as a part of an `allOf` (`part`'s `anyOf`
    // beside its properties) it stays a check. Verdicts and round trips: `tests/jsts/wiregen-cases.json`.
    let dir = schema_dir(
        "choice-inside",
        &[(
            "t.schema.json",
            json!({
                "type": "object",
                "properties": {
                    "id": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0, "maximum": 9}]},
                    "maybe": {"type": ["string", "null"]},
                    "kinds": {"type": ["string", "integer", "null"]},
                    "tags": {"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": "boolean"}]}},
                    "scores": {"type": "object", "additionalProperties": {"anyOf": [{"type": "boolean"}, {"type": "null"}, {"type": "string"}]}},
                    "either": {"anyOf": [{"type": "string"}, {"type": "boolean"}], "x-name": "Either"},
                    "part": {"type": "object", "properties": {"x": {"type": "integer"}}, "anyOf": [{"required": ["x"]}, {"maxProperties": 0}]}
                },
                "required": ["id"]
            }),
        )],
    );
    let model = wiregen::load::load(&dir.join("t.schema.json")).expect("loads");
    let names: BTreeSet<&str> = model.types.iter().map(|t| t.names.rust.as_str()).collect();
    for name in ["RootId", "RootKinds", "RootTagsItem", "RootScoresValue", "Either"] {
        assert!(names.contains(name), "{name} in {names:?}");
    }
    // Not a choice the schema writes: `{"required": ["x"]}` holds every kind, the object among them its own type.
    assert!(!names.contains("RootPartOption0") && names.contains("RootPartOption0Object"), "{names:?}");
    let rust = rust_module(&dir, "t.schema.json");
    let body = |start: &str| item_lines(&rust, start);
    assert_eq!(
        body("pub struct Root {"),
        [
            "pub id: RootId,",
            "pub maybe: ::std::option::Option<::std::option::Option<::std::string::String>>,",
            "pub kinds: ::std::option::Option<RootKinds>,",
            "pub tags: ::std::option::Option<::std::vec::Vec<RootTagsItem>>,",
            "pub scores: ::std::option::Option<RootScores>,",
            "pub either: ::std::option::Option<Either>,",
            "pub part: ::std::option::Option<RootPart>,",
            "pub extra: Extra<::serde_json::Value>,",
        ]
    );
    assert_eq!(body("pub enum RootId {"), ["String(::std::string::String),", "Integer(u64),"]);
    assert_eq!(body("pub enum RootKinds {"), ["Null,", "Integer(f64),", "String(::std::string::String),"]);
    assert_eq!(body("pub enum RootTagsItem {"), ["String(::std::string::String),", "Boolean(bool),"]);
    assert_eq!(body("pub enum Either {"), ["String(::std::string::String),", "Boolean(bool),"]);
    assert_eq!(body("pub enum RootScoresValue {"), ["Boolean(bool),", "Null,", "String(::std::string::String),"]);
    assert_eq!(body("pub struct RootScores {"), ["pub extra: Extra<RootScoresValue>,"]);
    assert_eq!(
        body("pub struct RootPart {"),
        ["pub x: ::std::option::Option<f64>,", "pub extra: Extra<::serde_json::Value>,"]
    );
}

/// A named schema with `properties` and a tagged `oneOf` beside them (a flat message: its base fields and its
/// kinds) is one type of that name; the union the loader makes of the `oneOf` is a part of it, named apart, and
/// every output is written (the union took the whole's `x-name` and `x-ts-name` too, which clashed with
/// themselves: helper 104). At a file's root, in `$defs` and at a property.
#[test]
fn a_named_object_with_a_tagged_one_of_beside_its_properties_is_one_type_of_that_name() {
    let kinds = json!([
        {"type": "object", "properties": {"type": {"const": "a"}, "x": {"type": "integer"}}, "required": ["type"]},
        {"type": "object", "properties": {"type": {"const": "b"}}, "required": ["type"]}
    ]);
    let flat = |name: Value| {
        let mut v = json!({"type": "object", "properties": {"type": {"type": "string"}}, "oneOf": kinds.clone()});
        if let Value::Object(o) = name {
            v.as_object_mut().expect("object").extend(o);
        }
        v
    };
    let mut root = flat(json!({"x-name": "Message"}));
    root["$defs"] = json!({"inner": flat(json!({"x-ts-name": "Inner", "x-name": "Inner"}))});
    root["properties"]["nested"] = flat(json!({"x-name": "Nested"}));
    root["properties"]["ref"] = json!({"$ref": "#/$defs/inner"});
    let dir = schema_dir("flat-named", &[("m.schema.json", root)]);
    let model = wiregen::load::load(&dir.join("m.schema.json")).unwrap_or_else(|e| panic!("loads:\n{e}"));
    let names: BTreeSet<&str> = model.types.iter().map(|t| t.names.ts.as_str()).collect();
    for name in ["Message", "Inner", "Nested"] {
        assert!(names.contains(name), "{name} in {names:?}");
    }
    // Each whole is the `allOf` of its properties and its union; its name is the `x-name`'s.
    let whole = |name: &str| model.types.iter().find(|t| t.names.ts == name).expect("the type");
    for name in ["Message", "Inner", "Nested"] {
        assert!(matches!(whole(name).node.shape, wiregen::ir::Shape::AllOf(_)), "{name}: {:?}", whole(name).node.shape);
    }
    let engine = Engine::new(model, EngineOptions::default()).expect("engine");
    assert_eq!(first(&engine, json!({"type": "a", "x": 1, "ref": {"type": "b"}, "nested": {"type": "a"}})), None);
    assert_eq!(first(&engine, json!({"type": "c"})).map(|(r, _)| r), Some("unknown-variant".into()));
    assert_eq!(
        first(&engine, json!({"type": "a", "nested": {"type": "a", "x": "no"}})),
        Some(("type".into(), "/nested/x".into()))
    );
    let out = wiregen(&dir, &["generate", "--schema", "m.schema.json", "--out", "out"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A type is found by its aliases' names too (`x-aliases`), as every output prints them: `validate --type
/// ServiceMessage` said the schema had no such type (helper 106).
#[test]
fn a_type_is_found_by_the_names_of_its_aliases() {
    let model = wiregen::load::load(&repo().join("schema")).expect("schema/ loads");
    for (alias, name) in [
        ("ServiceMessage", "SessionServiceEvent"),
        ("sessionServiceMessageEventSchema", "sessionServiceEventSchema"),
        ("TurnEndStatus", "TurnStatus"),
        ("SessionTurnEndStatus", "TurnStatus"),
    ] {
        let by_alias = model.type_named(alias);
        assert!(by_alias.is_some() && by_alias == model.type_named(name), "{alias} names {name}");
    }
    let dir = schema_dir("alias-type", &[]);
    std::fs::create_dir_all(&*dir).expect("mkdir");
    std::fs::write(dir.join("svc.jsonl"), "{\"t\":\"service\",\"text\":\"hi\"}\n").expect("write");
    let out = wiregen(
        &dir,
        &[
            "validate",
            "--schema",
            repo().join("schema").to_str().expect("utf-8"),
            "--type",
            "ServiceMessage",
            "svc.jsonl",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // An unknown name is told the names it could be, aliases among them.
    let out = wiregen(
        &dir,
        &["validate", "--schema", repo().join("schema").to_str().expect("utf-8"), "--type", "Nope", "svc.jsonl"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2) && err.contains("`ServiceMessage`") && err.contains("`TurnEndStatus`"),
        "{err}"
    );
}

#[test]
fn an_enum_of_numbers_or_booleans_is_typed_as_their_kind_in_rust() {
    // The value must be one of the values (the `enum` error first), then it is read as their kind: whole numbers
    // within ±(2^53-1) as `u64` or `i64`, others as `f64`, booleans as `bool`; a mix of kinds stays a `Value`.
    // Verdicts and round trips: `tests/jsts/wiregen-cases.json`.
    let dir = schema_dir(
        "enum-kinds",
        &[(
            "t.schema.json",
            json!({
                "type": "object",
                "properties": {
                    "version": {"enum": [1, 2, 3]},
                    "offset": {"enum": [-1, 0, 1]},
                    "ratio": {"enum": [0.5, 1]},
                    "huge": {"enum": [1, 1e300]},
                    "flag": {"enum": [true]},
                    "levels": {"type": "array", "items": {"enum": [10, 20]}},
                    "mixed": {"enum": [1, "one", null]}
                },
                "required": ["version"]
            }),
        )],
    );
    let rust = rust_module(&dir, "t.schema.json");
    assert_eq!(
        item_lines(&rust, "pub struct Root {"),
        [
            "pub version: u64,",
            "pub offset: ::std::option::Option<i64>,",
            "pub ratio: ::std::option::Option<f64>,",
            "pub huge: ::std::option::Option<f64>,",
            "pub flag: ::std::option::Option<bool>,",
            "pub levels: ::std::option::Option<::std::vec::Vec<u64>>,",
            "pub mixed: ::std::option::Option<::serde_json::Value>,",
            "pub extra: Extra<::serde_json::Value>,",
        ]
    );
}

#[test]
fn an_array_of_exactly_its_prefix_items_is_a_rust_tuple() {
    // `minItems` at least the number of `prefixItems` and nothing after them: a tuple, checked whole first. An
    // array that may be shorter or longer stays a checked `Value`.
    let dir = schema_dir(
        "tuples",
        &[(
            "t.schema.json",
            json!({
                "type": "object",
                "properties": {
                    "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false, "minItems": 2},
                    "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"enum": [1, 2]}], "minItems": 2, "maxItems": 2},
                    "path": {"type": "array", "items": {"type": "array", "prefixItems": [{"type": ["string", "null"]}], "items": false, "minItems": 1}},
                    "short": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "string"}], "items": false},
                    "open": {"type": "array", "prefixItems": [{"type": "string"}], "minItems": 1}
                }
            }),
        )],
    );
    let rust = rust_module(&dir, "t.schema.json");
    assert_eq!(
        item_lines(&rust, "pub struct Root {"),
        [
            "pub point: ::std::option::Option<(f64, f64)>,",
            "pub pair: ::std::option::Option<(::std::string::String, u64)>,",
            // (A one-element tuple keeps its comma; the formatter breaks the long line.)
            "pub path: ::std::option::Option<",
            "::std::vec::Vec<(::std::option::Option<::std::string::String>,)>,",
            ">,",
            "pub short: ::std::option::Option<::serde_json::Value>,",
            "pub open: ::std::option::Option<::serde_json::Value>,",
            "pub extra: Extra<::serde_json::Value>,",
        ]
    );
    // The bundled schema ends a tuple with `items: false`, the one spelling ajv's strictTuples takes for a full
    // tuple (it was `{"not": {}}`, which means the same and fails ajv strict; helper 80).
    let bundled = bundled_schema(&dir, &["--schema", "t.schema.json"]);
    let bundled: serde_json::Value = serde_json::from_str(&bundled).expect("json");
    let props =
        bundled.pointer("/$defs/Root/properties").or(bundled.pointer("/properties")).expect("Root's properties");
    assert_eq!(props.pointer("/point/items"), Some(&json!(false)), "{props}");
    assert_eq!(props.pointer("/path/items/items"), Some(&json!(false)), "{props}");
    assert_eq!(props.pointer("/short/items"), Some(&json!(false)), "{props}");
}

#[test]
fn an_all_of_inside_a_type_is_a_struct_of_its_object_parts() {
    // Inheritance written inline (a property's `allOf`, the members of an item's `oneOf`, as OpenAPI documents
    // write them) is a struct like a named `allOf`; an untyped part's `properties` count once another part makes
    // the value an object. Another `allOf` has the type of its first typed part. Verdicts and round trips:
    // `tests/jsts/wiregen-cases.json`.
    let dir = schema_dir(
        "all-of-inside",
        &[(
            "t.schema.json",
            json!({
                "$defs": {"base": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
                "type": "object",
                "properties": {
                    "circle": {"allOf": [{"$ref": "#/$defs/base"}, {"properties": {"r": {"type": "number"}}, "required": ["r"]}]},
                    "shapes": {"type": "array", "items": {"oneOf": [
                        {"allOf": [{"$ref": "#/$defs/base"}, {"properties": {"kind": {"const": "c"}, "r": {"type": "number"}}, "required": ["kind", "r"]}]},
                        {"allOf": [{"$ref": "#/$defs/base"}, {"properties": {"kind": {"const": "s"}, "side": {"type": "number"}}, "required": ["kind", "side"]}]}
                    ]}},
                    "short": {"type": "string", "not": {"const": "x"}},
                    "named": {"$ref": "#/$defs/base", "minProperties": 2},
                    "free": {"not": {"type": "null"}, "minProperties": 1},
                    "object": {"type": "object", "$ref": "#/$defs/base"},
                    "never_null": {"type": ["object", "null"], "$ref": "#/$defs/base"},
                    "both_null": {"type": ["string", "null"], "allOf": [{"type": ["string", "null"], "maxLength": 3}]}
                }
            }),
        )],
    );
    let rust = rust_module(&dir, "t.schema.json");
    let body = |start: &str| item_lines(&rust, start);
    assert_eq!(
        body("pub struct Root {"),
        [
            "pub circle: ::std::option::Option<RootCircle>,",
            "pub shapes: ::std::option::Option<::std::vec::Vec<RootShapesItem>>,",
            // A refinement takes the type of its first typed part: a string with a `not` beside it, a reference
            // with a keyword beside it. With no typed part it stays the checked value.
            "pub short: ::std::option::Option<::std::string::String>,",
            "pub named: ::std::option::Option<Base>,",
            "pub free: ::std::option::Option<::serde_json::Value>,",
            // A part that says more wins over a bare map; `null` is left out where another part refuses it (it
            // was an `Option<Option<Map>>`, whose `Some(None)` no checker accepts); kept where every part admits it.
            "pub object: ::std::option::Option<Base>,",
            "pub never_null: ::std::option::Option<Base>,",
            "pub both_null: ::std::option::Option<::std::option::Option<::std::string::String>>,",
            "pub extra: Extra<::serde_json::Value>,",
        ]
    );
    assert_eq!(
        body("pub struct RootCircle {"),
        ["pub id: ::std::string::String,", "pub r: f64,", "pub extra: Extra<::serde_json::Value>,"]
    );
    assert_eq!(
        body("pub enum RootShapesItem {"),
        ["RootShapesItemOption0(RootShapesItemOption0),", "RootShapesItemOption1(RootShapesItemOption1),"]
    );
    assert_eq!(
        body("pub struct RootShapesItemOption1 {"),
        ["pub id: ::std::string::String,", "pub side: f64,", "pub extra: Extra<::serde_json::Value>,"]
    );
}

#[test]
fn a_byte_order_mark_is_not_part_of_a_schema_file() {
    // Some editors save JSON with a UTF-8 byte order mark; RFC 8259 lets a parser ignore it. The model is the same
    // as without it, and positions are counted without it (as those editors show them).
    let plain =
        schema_dir("bom", &[("t.schema.json", json!({"type": "object", "properties": {"n": {"type": "integer"}}}))]);
    let file = plain.join("t.schema.json");
    let text = std::fs::read_to_string(&file).expect("read");
    let without = wiregen::load::load(&file).expect("loads");
    std::fs::write(&file, format!("\u{feff}{text}")).expect("write");
    let with = wiregen::load::load(&file).expect("loads with a byte order mark");
    assert_eq!(with, without);
    let broken = format!("\u{feff}{}", text.replacen("\"integer\"", "\"integer\" \"number\"", 1));
    std::fs::write(&file, &broken).expect("write");
    let errs = wiregen::load::load(&file).expect_err("not JSON");
    let e = &errs.0[0];
    let line = broken.trim_start_matches('\u{feff}').lines().nth(e.line - 1).expect("the line");
    assert!(line[e.col - 1..].starts_with("\"number\""), "{}:{} in {line:?}", e.line, e.col);
}

#[cfg(unix)]
#[test]
fn a_directory_reached_again_through_a_symbolic_link_is_read_once() {
    let dir = schema_dir("symlink", &[("a.schema.json", json!({"type": "object", "x-root": true}))]);
    // A cycle (`sub/back` is the schema directory again) and a second way into it (`here`).
    std::fs::create_dir(dir.join("sub")).expect("mkdir");
    std::os::unix::fs::symlink("..", dir.join("sub/back")).expect("symlink");
    std::os::unix::fs::symlink(".", dir.join("here")).expect("symlink");
    let (_, sources) = wiregen::load::load_with_sources(&dir).expect("loads");
    assert_eq!(sources.files.keys().collect::<Vec<_>>(), ["a.schema.json"]);
}

/// What the loader cannot read as a schema file is refused with its path, never skipped or read without end: a
/// schema file whose name is not UTF-8 (it would silently lose its types), a device behind a schema file's name
/// (`/dev/zero` was read until the process ran out of memory) and a FIFO (read forever).
#[cfg(unix)]
#[test]
fn unreadable_schema_files_are_refused_with_their_path() {
    use std::os::unix::ffi::OsStrExt;
    type Make = dyn Fn(&Path);
    let cases: [(&str, &Make); 3] = [
        ("not-utf8", &|d| {
            let name = std::ffi::OsStr::from_bytes(b"b-\xff.schema.json");
            std::fs::write(d.join(name), r#"{"type": "string"}"#).expect("write");
        }),
        ("device", &|d| std::os::unix::fs::symlink("/dev/zero", d.join("b.schema.json")).expect("symlink")),
        ("fifo", &|d| {
            let ok = std::process::Command::new("mkfifo").arg(d.join("b.schema.json")).status().expect("mkfifo");
            assert!(ok.success());
        }),
    ];
    for (name, make) in cases {
        let dir = schema_dir(&format!("unreadable-{name}"), &[("a.schema.json", json!({"type": "object"}))]);
        make(&dir);
        let errs = wiregen::load::load(&dir).expect_err(name);
        assert_eq!(errs.0.len(), 1, "{name}: {errs}");
        let e = &errs.0[0];
        assert!(e.file.file_name().unwrap().as_bytes().starts_with(b"b"), "{name}: {e}");
        let want = if name == "not-utf8" { "not UTF-8" } else { "not a regular file" };
        assert!(e.message.contains(want), "{name}: {e}");
    }
    // A name that is not UTF-8 and no schema file's is none of the loader's business.
    let dir = schema_dir("unreadable-other", &[("a.schema.json", json!({"type": "object"}))]);
    std::fs::write(dir.join(std::ffi::OsStr::from_bytes(b"notes-\xff.txt")), "x").expect("write");
    wiregen::load::load(&dir).expect("loads");
}

/// Repeated `enum` values are dropped, once each by JSON equality (`1` and `1.0`, objects whatever their key order),
/// in their first order.
#[test]
fn repeated_enum_values_are_kept_once_in_first_order() {
    let dir = schema_dir(
        "enum-repeats",
        &[("a.schema.json", json!({"enum": ["b", 1, "a", {"x": 1, "y": 2}, "b", 1.0, {"y": 2, "x": 1}, "a", null]}))],
    );
    let m = wiregen::load::load(&dir.join("a.schema.json")).expect("loads");
    let e = Engine::new(m, EngineOptions::default()).expect("root");
    let errs = e.check_value(&json!("zzz"));
    // Not only strings: each string as JSON, so the string "1" and the number 1 are told apart (both were `1`).
    assert_eq!(errs[0].message, "`\"zzz\"` is not one of `\"b\"`, `1`, `\"a\"`, `{\"x\":1,\"y\":2}`, `null`");
    let errs = e.check_value(&json!("1"));
    assert_eq!(errs[0].message, "`\"1\"` is not one of `\"b\"`, `1`, `\"a\"`, `{\"x\":1,\"y\":2}`, `null`");
    // The schema's numbers as JavaScript writes them, as an instance's are (`2.0` and `-0.0` were shown so).
    let dir = schema_dir("enum-numbers", &[("a.schema.json", json!({"enum": [2.0, "x", [-0.0, 1e21]]}))]);
    let m = wiregen::load::load(&dir.join("a.schema.json")).expect("loads");
    let e = Engine::new(m, EngineOptions::default()).expect("root");
    assert_eq!(e.check_value(&json!(3))[0].message, "`3` is not one of `2`, `\"x\"`, `[0,1e+21]`");
}

/// Long lists cost time in proportion, not squared: an `enum` of 200,000 numbers, a `required` list and
/// `properties` of 200,000 names load, check a value and become a standalone validator; 50,000 mistakes are each
/// located; `diff` pairs 64,000 properties and locates their 64,000 changes. Each step that compared every pair
/// (dropping repeated `enum` values and `required` names, matching fields to `required` and old fields to new,
/// the standalone emitter's search for unused locals, which scanned the whole function once per local) or scanned
/// the file once per diagnostic took a minute or more here. The watchdog is no speed claim: the work takes
/// seconds, the limit is a minute.
#[test]
fn long_lists_load_emit_locate_and_diff_without_a_quadratic_step() {
    let names: Vec<String> = (0..200_000).map(|i| format!("p{i}")).collect();
    let dir = schema_dir(
        "long-lists",
        &[
            ("enum.schema.json", json!({"enum": (0..200_000).chain([7]).collect::<Vec<u32>>()})),
            (
                "object.schema.json",
                json!({"type": "object", "required": names,
                       "properties": names.iter().map(|n| (n.clone(), json!({}))).collect::<serde_json::Map<_, _>>()}),
            ),
            ("broken.schema.json", properties(50_000, json!({"type": "strin"}))),
            ("old.schema.json", properties(64_000, json!({"type": "string"}))),
            ("new.schema.json", properties(64_000, json!({"type": "string", "maxLength": 5}))),
        ],
    );
    std::fs::write(dir.join("value.json"), "{\"p1\": 1}").expect("write");
    let run = |args: &[&str]| -> std::process::Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wiregen"))
            .current_dir(&*dir)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run wiregen");
        // Both drained while it runs, so a full pipe cannot stall it.
        let out = child.stdout.take().expect("stdout");
        let err = child.stderr.take().expect("stderr");
        let reader = std::thread::spawn(move || std::io::read_to_string(out).expect("read"));
        let err_reader = std::thread::spawn(move || std::io::read_to_string(err).expect("read"));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while child.try_wait().expect("wait").is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("wiregen {args:?} did not finish within a minute");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let stdout = reader.join().expect("reader").into_bytes();
        let stderr = err_reader.join().expect("reader").into_bytes();
        std::process::Output { status: child.wait().expect("wait"), stdout, stderr }
    };
    let o = run(&["validate", "--schema", "enum.schema.json", "--format", "json", "value.json"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("is not one of `0`, `1`"), "{out}");
    let o = run(&["validate", "--schema", "object.schema.json", "--format", "json", "value.json"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("missing required property `p0`") && !out.contains("`p1`"), "{out}");
    let o = run(&["types", "--lang", "ts-standalone", "object.schema.json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"p199999\""));
    let o = run(&["validate", "--schema", "broken.schema.json", "value.json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("error[schema.invalid-value]").count(), 50_000, "{}", &err[..err.len().min(2000)]);
    let last = err.lines().find(|l| l.contains("/properties/p49999/type")).expect("the last mistake");
    let text = std::fs::read_to_string(dir.join("broken.schema.json")).expect("read");
    let at = text.rfind("\"strin\"").expect("the last `strin`");
    let (line, col) = (text[..at].matches('\n').count() + 1, at - text[..at].rfind('\n').map_or(0, |n| n + 1) + 1);
    assert!(last.starts_with(&format!("broken.schema.json:{line}:{col}: ")), "{last} (want {line}:{col})");
    let o = run(&["diff", "old.schema.json", "new.schema.json"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("64000 changes"), "{}", String::from_utf8_lossy(&o.stdout));
}

/// An OpenAPI-style package: 100 object types, each referring to three others through its properties (one through
/// an array's items), no applicator anywhere. Written out in place its references stand for ~27 million subschemas,
/// which the expansion bound refused (`schema.too-complex`) while it counted every property's schema into its
/// object's; but each place in a value gets one schema, so it loads, checks values and becomes every output. An
/// `if`/`then` chain that doubles at one place is still refused (golden `expansion-too-large`).
#[test]
fn object_types_that_refer_to_each_other_through_properties_are_not_too_complex() {
    let to = |i: usize, j: usize| format!("#/$defs/T{}", (i * 7 + j * 13 + 1) % 100);
    let defs: serde_json::Map<String, Value> = (0..100)
        .map(|i| {
            let t = json!({"type": "object", "properties": {
                "id": {"type": "string"},
                "r0": {"$ref": to(i, 0)},
                "r1": {"type": "array", "items": {"$ref": to(i, 1)}},
                "r2": {"$ref": to(i, 2)},
            }});
            (format!("T{i}"), t)
        })
        .collect();
    let dir = schema_dir("openapi-style", &[("a.schema.json", json!({"$defs": defs, "$ref": "#/$defs/T0"}))]);
    let m = wiregen::load::load(&dir.join("a.schema.json")).expect("loads");
    let e = Engine::new(m, EngineOptions::default()).expect("root");
    assert_eq!(first(&e, json!({"id": "a", "r0": {"id": "b", "r1": [{"id": "c"}, {}], "r2": {}}})), None);
    assert_eq!(first(&e, json!({"r0": {"r1": [{}, {"id": 5}]}})), Some(("type".into(), "/r0/r1/1/id".into())));
    assert_eq!(first(&e, json!({"r2": {"r0": {"r1": {}}}})), Some(("type".into(), "/r2/r0/r1".into())));
    for lang in ["rust", "zod", "ts-standalone"] {
        let o = wiregen(&dir, &["types", "--lang", lang, "a.schema.json"]);
        assert!(o.status.success(), "{lang}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

/// An object schema of `n` properties `p0`, `p1`, ... each of schema `each`.
fn properties(n: usize, each: Value) -> Value {
    json!({"type": "object", "properties": (0..n).map(|i| (format!("p{i}"), each.clone())).collect::<serde_json::Map<_, _>>()})
}

#[test]
fn contains_counts_matching_items_after_the_items_counts_and_uniqueness() {
    let dir = schema_dir(
        "contains",
        &[(
            "a.schema.json",
            json!({"type": "array", "items": {"type": "integer"}, "uniqueItems": true, "maxItems": 5,
                   "contains": {"minimum": 10}, "minContains": 2, "maxContains": 3}),
        )],
    );
    let m = wiregen::load::load(&dir.join("a.schema.json")).expect("loads");
    let e = Engine::new(m, EngineOptions::default()).expect("root");
    let all = |v: Value| -> Vec<String> {
        e.check_value(&v).into_iter().map(|i| format!("{} {} {}", i.rule, i.pointer, i.message)).collect()
    };
    assert_eq!(all(json!([10, 11, 1])), Vec::<String>::new());
    assert_eq!(all(json!([10, 1])), ["contains  must contain at least 2 items matching `contains` (1 found)"]);
    assert_eq!(all(json!([10, 11, 12, 13])), ["contains  must contain at most 3 items matching `contains` (4 found)"]);
    // An item's error comes first; the count is still checked (a string meets `minimum`, so it matches). A count
    // or a duplicate is the array's one error.
    assert_eq!(
        all(json!(["x", 1])),
        [
            "type /0 expected an integer, got a string",
            "contains  must contain at least 2 items matching `contains` (1 found)"
        ]
    );
    assert_eq!(all(json!([1, 1])), ["unique-items  items 0 and 1 are equal"]);
    assert_eq!(all(json!([1, 2, 3, 4, 5, 6])), ["max-items  must have at most 5 items"]);
    // Not an array: `contains` says nothing of it (the type does).
    assert_eq!(all(json!("x")), ["type  expected an array, got a string"]);
}

#[test]
fn dependent_schemas_apply_to_the_whole_object_after_its_own_keywords() {
    let dir = schema_dir(
        "dependent-schemas",
        &[(
            "a.schema.json",
            json!({"type": "object", "properties": {"card": {"type": "string"}, "billing": {"type": "string"}},
                   "additionalProperties": false,
                   "dependentSchemas": {"card": {"required": ["billing"], "properties": {"billing": {"minLength": 3}}},
                                        "billing": false}}),
        )],
    );
    let m = wiregen::load::load(&dir.join("a.schema.json")).expect("loads");
    let e = Engine::new(m, EngineOptions::default()).expect("root");
    let all = |v: Value| -> Vec<String> {
        e.check_value(&v).into_iter().map(|i| format!("{} {} {}", i.rule, i.pointer, i.message)).collect()
    };
    assert_eq!(all(json!({})), Vec::<String>::new());
    assert_eq!(all(json!({"card": "c"})), ["required /billing missing required property `billing`"]);
    // The object's own errors first, then each dependent schema's, in schema order.
    assert_eq!(
        all(json!({"card": 1, "billing": "ab", "x": 0})),
        [
            "type /card expected a string, got an integer",
            "additional-property /x unknown property `x`",
            "min-length /billing must be at least 3 characters long",
            "never  no value is allowed here"
        ]
    );
}

#[test]
fn unevaluated_properties_see_what_the_applicators_beside_them_evaluate() {
    let dir = schema_dir(
        "unevaluated",
        &[(
            "a.schema.json",
            json!({"type": "object", "properties": {"id": {"type": "string"}},
                   "anyOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                             {"properties": {"b": {"type": "integer"}}, "required": ["b"]}],
                   "unevaluatedProperties": false}),
        )],
    );
    let m = wiregen::load::load(&dir.join("a.schema.json")).expect("loads");
    let e = Engine::new(m, EngineOptions::default()).expect("root");
    let all = |v: Value| -> Vec<String> {
        e.check_value(&v).into_iter().map(|i| format!("{} {} {}", i.rule, i.pointer, i.message)).collect()
    };
    assert_eq!(all(json!({"id": "x", "a": 1})), Vec::<String>::new());
    // Only a branch the value passes evaluates: `b` is a string here, so the second branch fails and `b` is
    // unevaluated; `c` never is. The schema's own errors first, then the unevaluated properties in input order.
    assert_eq!(
        all(json!({"a": 1, "b": "s", "c": 0})),
        ["additional-property /b unknown property `b`", "additional-property /c unknown property `c`"]
    );
    assert_eq!(
        all(json!({"id": 1, "z": 0})),
        [
            "type /id expected a string, got an integer",
            "any-of  matches none of the 2 alternatives",
            "additional-property /z unknown property `z`"
        ]
    );
    assert!(all(json!([1])).iter().all(|m| m.starts_with("type ")), "a non-object is only the type's business");
}

#[test]
fn unevaluated_items_see_the_prefix_items_and_contains_beside_and_inside() {
    let dir = schema_dir(
        "unevaluated-items",
        &[(
            "a.schema.json",
            json!({"allOf": [{"prefixItems": [{"type": "string"}]}], "contains": {"type": "integer"},
                   "minContains": 0, "unevaluatedItems": {"type": "boolean"}}),
        )],
    );
    let m = wiregen::load::load(&dir.join("a.schema.json")).expect("loads");
    let e = Engine::new(m, EngineOptions::default()).expect("root");
    let all = |v: Value| -> Vec<String> {
        e.check_value(&v).into_iter().map(|i| format!("{} {} {}", i.rule, i.pointer, i.message)).collect()
    };
    assert_eq!(all(json!(["a", 1, true, 2])), Vec::<String>::new());
    // The prefix's own error first; then each item neither the prefix nor `contains` evaluated, in order.
    assert_eq!(
        all(json!([1, "b", null])),
        [
            "type /0 expected a string, got an integer",
            "type /1 expected a boolean, got a string",
            "type /2 expected a boolean, got null"
        ]
    );
    assert_eq!(all(json!({"0": "x"})), Vec::<String>::new(), "not an array: nothing to say");
}

#[test]
fn a_remote_reference_resolves_to_a_copy_in_the_directory_with_that_id() {
    // No fetching: a vendored copy of the remote document, its URI as `$id`, is what the reference names.
    let remote = "https://schemas.example.com/common.json";
    let dir = schema_dir(
        "vendored-remote",
        &[
            (
                "a.schema.json",
                json!({"x-root": true, "type": "object", "required": ["x"],
                       "properties": {"x": {"$ref": format!("{remote}#/$defs/pos")}}}),
            ),
            ("vendor/common.schema.json", json!({"$id": remote, "$defs": {"pos": {"type": "integer", "minimum": 1}}})),
        ],
    );
    let m = wiregen::load::load(&dir).expect("loads");
    let e = Engine::new(m, EngineOptions::default()).expect("root");
    assert_eq!(first(&e, json!({"x": 1})), None);
    assert_eq!(first(&e, json!({"x": 0})), Some(("minimum".into(), "/x".into())));
    // Without the copy it is refused, naming the reference.
    std::fs::remove_file(dir.join("vendor/common.schema.json")).expect("remove");
    let errors = wiregen::load::load(&dir).expect_err("refused");
    let e = &errors.0[0];
    assert_eq!((e.kind.code(), e.pointer.as_str()), ("schema.unresolvable-ref", "/properties/x/$ref"));
    assert!(e.message.contains("remote references are not fetched"), "{}", e.message);
}

#[test]
fn definitions_and_dependencies_mean_defs_and_the_dependent_keywords() {
    // Draft 2020-12's meta-schema still defines `definitions` and `dependencies` (deprecated): a file of only
    // `definitions` is a container of named types like one of `$defs`, and the model holds a `dependencies` entry
    // as the `dependentRequired` or `dependentSchemas` entry it means. The bundled schema, printed from the model,
    // says so in 2020-12's words. Verdicts in every output: `tests/jsts/wiregen-cases.json` and the suite's
    // optional `dependencies-compatibility.json`.
    let dir = schema_dir(
        "definitions-dependencies",
        &[
            ("schema/defs.schema.json", json!({"definitions": {"label": {"type": "string", "minLength": 1}}})),
            (
                "schema/item.schema.json",
                json!({
                    "type": "object",
                    "properties": {"name": {"$ref": "defs.schema.json#/definitions/label"}, "unit": {"type": "string"}},
                    "dependentRequired": {"unit": ["name"]},
                    "dependencies": {"unit": ["scale", "name"], "scale": {"required": ["unit"]}}
                }),
            ),
        ],
    );
    let model = wiregen::load::load(&dir.join("schema")).expect("loads");
    let names: BTreeSet<&str> = model.types.iter().map(|t| t.names.rust.as_str()).collect();
    assert!(names.contains("Label") && names.contains("Item"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("Defs")), "the definitions file is a container: {names:?}");
    let engine = Engine::for_type_named(model, "Item", EngineOptions::default()).expect("Item");
    assert_eq!(first(&engine, json!({"unit": "m", "name": "n"})), Some(("dependent-required".into(), "/scale".into())));
    assert_eq!(first(&engine, json!({"unit": "m", "scale": 1})), Some(("dependent-required".into(), "/name".into())));
    assert_eq!(first(&engine, json!({"scale": 1})), Some(("required".into(), "/unit".into())));
    assert_eq!(first(&engine, json!({"name": ""})), Some(("min-length".into(), "/name".into())));
    assert_eq!(first(&engine, json!({"unit": "m", "name": "n", "scale": 1})), None);
    let bundled = bundled_schema(&dir, &[]);
    assert!(!bundled.contains("\"dependencies\"") && !bundled.contains("\"definitions\""), "{bundled}");
    assert!(bundled.contains("\"dependentRequired\"") && bundled.contains("\"dependentSchemas\""), "{bundled}");
}

#[test]
fn a_type_named_like_a_global_of_typescript_is_refused_by_the_typescript_outputs() {
    // `export type Record = ...` would hide the global `Record<K, V>` from the module's own runtime, which then does
    // not type-check (it did not, before this refusal). Rust has no such global; `x-ts-name` renames the type for
    // TypeScript (the wiregen case of `tests/jsts/wiregen-cases.json` type-checks that one with `tsc`).
    let dir = schema_dir(
        "ts-globals",
        &[(
            "t.schema.json",
            json!({"$defs": {"Record": {"type": "object", "additionalProperties": {"type": "integer"}}},
                   "type": "object", "properties": {"r": {"$ref": "#/$defs/Record"}}}),
        )],
    );
    for lang in ["zod", "ts-standalone"] {
        let o = wiregen(&dir, &["types", "--lang", lang, "t.schema.json"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{lang}: {err}");
        assert!(
            err.contains("t.schema.json:") && err.contains("/$defs/Record") && err.contains("global type"),
            "{err}"
        );
    }
    assert!(rust_module(&dir, "t.schema.json").contains("pub struct Record"), "Rust keeps the name");
    let renamed = schema_dir(
        "ts-globals-renamed",
        &[(
            "t.schema.json",
            json!({"$defs": {"Record": {"type": "object", "additionalProperties": {"type": "integer"}, "x-ts-name": "Tally"}},
                   "type": "object", "properties": {"r": {"$ref": "#/$defs/Record"}}}),
        )],
    );
    for lang in ["zod", "ts-standalone"] {
        let o = wiregen(&renamed, &["types", "--lang", lang, "t.schema.json"]);
        assert!(o.status.success(), "{lang}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stdout).contains("Tally"), "{lang}");
    }
}

/// A `oneOf` with `x-discriminator` whose members do not fit is refused with the member that does not, and why;
/// the same member in a second union on the same property is that mistake again, not a second error; and a member
/// whose `type` is refused does not make its union refused too.
#[test]
fn a_union_that_does_not_fit_its_discriminator_names_the_member_once() {
    let member = |t: &str| json!({"type": "object", "required": ["k"], "properties": {"k": {"const": t}, "v": {"type": "string"}}});
    let union = |refs: &[&str]| json!({"oneOf": refs.iter().map(|r| json!({"$ref": format!("#/$defs/{r}")})).collect::<Vec<_>>(), "x-discriminator": "k"});
    // Each case: member B, and the one error expected (pointer, part of the message).
    let cases: [(&str, Value, &str, &str); 4] = [
        (
            "untagged",
            json!({"type": "object", "properties": {"k": {"type": "string"}}}),
            "/$defs/U1/x-discriminator",
            "the member at one.schema.json#/$defs/B does not have `k` required and fixed by a `const`",
        ),
        (
            "not-an-object",
            json!({"type": "string"}),
            "/$defs/U1/x-discriminator",
            "the member at one.schema.json#/$defs/B is not an object type",
        ),
        (
            "same-tag",
            member("a"),
            "/$defs/U1/x-discriminator",
            "the members at one.schema.json#/$defs/A and one.schema.json#/$defs/B have the same `k`, \"a\"",
        ),
        ("type-refused", json!({"type": "objekt"}), "/$defs/B/type", "`objekt` is not a JSON Schema type"),
    ];
    for (name, b, want_pointer, want) in cases {
        let schema = json!({
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/U1"}, "y": {"$ref": "#/$defs/U2"}},
            "$defs": {"A": member("a"), "B": b, "C": member("c"), "U1": union(&["A", "B"]), "U2": union(&["C", "B"])}
        });
        let dir = schema_dir(&format!("union-misfit-{name}"), &[("one.schema.json", schema)]);
        let errors = match wiregen::load::load(&dir.join("one.schema.json")) {
            Ok(_) => panic!("{name}: the schema is refused"),
            Err(e) => e.0,
        };
        let got: Vec<(&str, &str)> = errors.iter().map(|e| (e.pointer.as_str(), e.message.as_str())).collect();
        assert_eq!(got.len(), 1, "{name}: {got:#?}");
        assert_eq!(got[0].0, want_pointer, "{name}: {got:#?}");
        assert!(got[0].1.contains(want), "{name}: {}", got[0].1);
    }
}

/// Two files that declare the same `$id` are one mistake: the second `$id` is refused, and the anchors inside that
/// resource (the same names, since it is the same resource twice) are not refused again one by one.
#[test]
fn a_resource_declared_twice_is_one_error_not_one_per_anchor() {
    let list = json!({
        "type": "object",
        "properties": {"l": {"$ref": "https://example.com/list"}},
        "$defs": {"L": {
            "$id": "https://example.com/list",
            "type": "array",
            "items": {"$dynamicRef": "#item"},
            "$defs": {"item": {"$dynamicAnchor": "item", "type": "string"}, "named": {"$anchor": "named"}}
        }}
    });
    let dir = schema_dir("resource-twice", &[("a.schema.json", list.clone()), ("b.schema.json", list)]);
    let errors = match wiregen::load::load(&dir) {
        Ok(_) => panic!("the second `$id` is refused"),
        Err(e) => e.0,
    };
    let got: Vec<(&str, &str)> = errors.iter().map(|e| (e.pointer.as_str(), e.message.as_str())).collect();
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0].0, "/$defs/L/$id");
    assert!(got[0].1.contains("is already the `$id` of a.schema.json#/$defs/L"), "{}", got[0].1);
}

#[test]
fn one_file_given_alone_says_its_neighbours_are_not_loaded() {
    // An event file of the session protocol refers to `../defs.schema.json`, which is on disk but not loaded: the
    // error says to give the directory (it said "no schema file `defs.schema.json`" beside that very file).
    let o = wiregen(&repo(), &["types", "--lang", "zod", "schema/events/file.schema.json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`../defs.schema.json#/$defs/id`: only `file.schema.json` was loaded, not the files beside it"),
        "{err}"
    );
    // A reference to a file that is nowhere is still named as missing.
    let dir = schema_dir("alone-missing", &[("a.schema.json", json!({"$ref": "nowhere.schema.json"}))]);
    let o = wiregen(&dir, &["types", "--lang", "zod", "a.schema.json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no schema file `nowhere.schema.json`"), "{err}");
}

#[test]
fn sequence_declarations_a_user_writes_load() {
    // What a stricter loader must still take (a probe found them refused): a scope's `open` entry named like a
    // rollup part (they sit apart: parts at the top, entries under `open`), a rule with a `description` and a
    // `$comment`, and a rule whose `on` events all hold its pointer.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("seq-legit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_tree(&repo().join("schema"), &dir);
    let env_path = dir.join("envelope.schema.json");
    let mut env: Value = serde_json::from_str(&std::fs::read_to_string(&env_path).expect("envelope")).expect("json");
    env["x-sequence"]["scopes"]["call"]["rollup"] = json!("control");
    env["x-sequence"]["rules"][0]["description"] = json!("Ids are unique in a stream.");
    env["x-sequence"]["rules"][0]["$comment"] = json!("The seed's envelope table.");
    std::fs::write(&env_path, serde_json::to_string_pretty(&env).expect("text")).expect("write");
    let loaded = wiregen::load::load(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = loaded {
        panic!("{e:?}");
    }
}

/// A `close-requires` value compares as JSON Schema compares it (`1.0` is `1`), a value a message shows has its
/// numbers written as JavaScript writes them, a recorded value in the rollup holds the doubles JavaScript reads, and
/// a placeholder may hold `_` (helper 134: the Rust checker refused `1.0` for `equals: 1`, wrote `100.0` for `1e2`,
/// and `{run_id}` was printed as it is and never refused; the TypeScript checker did as this test says).
#[test]
fn stream_values_compare_and_show_as_json_numbers() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("seq-numbers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_tree(&repo().join("schema"), &dir);
    let env_path = dir.join("envelope.schema.json");
    let mut env: Value = serde_json::from_str(&std::fs::read_to_string(&env_path).expect("envelope")).expect("json");
    let rules = env["x-sequence"]["rules"].as_array_mut().expect("rules");
    let rule = rules.iter_mut().find(|r| r["id"] == "turn.abort-not-cancelled").expect("the abort rule");
    rule["field"] = json!("/ev/usage");
    rule["equals"] = json!({"inputTokens": 1, "outputTokens": 2, "cost": 0.5});
    rule["message"] = json!("turn `{turn}` used `{usage}`");
    env["x-sequence"]["scopes"]["call"]["record"]["args"] = json!("/ev/args");
    // The seed's flows end an aborted turn without `usage`, which this rule now refuses.
    env.as_object_mut().expect("an object").remove("x-flows");
    let write = |env: &Value| {
        std::fs::write(&env_path, serde_json::to_string_pretty(env).expect("text")).expect("write");
    };
    write(&env);
    let lines = [
        r#"{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-start"}}"#,
        r#"{"id":"m2","time":2,"role":"user","ev":{"t":"abort"}}"#,
        r#"{"id":"m3","time":3,"role":"agent","turn":"t1","ev":{"t":"turn-end","status":"cancelled","usage":{"inputTokens":1.0,"outputTokens":2e0,"cost":0.5}}}"#,
        r#"{"id":"m4","time":4,"role":"agent","turn":"t2","ev":{"t":"turn-start"}}"#,
        r#"{"id":"m5","time":5,"role":"user","ev":{"t":"abort"}}"#,
        r#"{"id":"m6","time":6,"role":"agent","turn":"t2","ev":{"t":"turn-end","status":"cancelled","usage":{"inputTokens":1e2,"outputTokens":-0,"cost":0.5}}}"#,
        r#"{"id":"m7","time":7,"role":"agent","turn":"t2","ev":{"t":"tool-call-start","call":"c1","name":"x","title":"x","description":"x","args":{"n":1.0,"z":-0,"big":9007199254740993}}}"#,
    ];
    let stream = dir.join("s.jsonl");
    std::fs::write(&stream, lines.join("\n") + "\n").expect("stream");
    let schema = dir.to_str().expect("utf-8");
    let o = wiregen(&dir, &["validate", "--stream", "--summary", "--format", "json", "--schema", schema, "s.jsonl"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let summary: Value = serde_json::from_str(&out).expect("one summary");
    assert_eq!((summary["invalid"].as_u64(), summary["firstError"]["line"].as_u64()), (Some(1), Some(6)), "{out}");
    let message = summary["firstError"]["message"].as_str().expect("a message");
    assert_eq!(message, r#"turn `t2` used `{"inputTokens":100,"outputTokens":0,"cost":0.5}`"#);
    assert!(
        out.contains(r#""args":{"n":1,"z":0,"big":9007199254740992}"#),
        "the open call's recorded args as doubles: {out}"
    );
    // A placeholder with `_` the rule does not fill is refused, not printed as it is.
    let rules = env["x-sequence"]["rules"].as_array_mut().expect("rules");
    let rule = rules.iter_mut().find(|r| r["id"] == "turn.abort-not-cancelled").expect("the abort rule");
    rule["message"] = json!("turn `{turn}` in `{run_id}`");
    write(&env);
    let loaded = wiregen::load::load(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let err = format!("{:?}", loaded.expect_err("an unfilled placeholder"));
    assert!(err.contains("{run_id}"), "{err}");
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let p = e.path();
        if p.is_dir() {
            copy_tree(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).expect("copy");
        }
    }
}

/// A type below an inline schema that gives an `x-name` is named after it, the nearest named ancestor (it was
/// named after the file's root, past the `x-name`: `RootCustomerOption1Tier` for `MemberTier`), in every
/// language; a property that happens to be called `x-name` names nothing.
#[test]
fn types_below_an_x_name_take_its_name() {
    let dir = schema_dir(
        "x-name-ancestor",
        &[(
            "order.schema.json",
            json!({
                "type": "object",
                "properties": {
                    "customer": {"oneOf": [
                        {"type": "object", "x-name": "Guest", "properties": {"email": {"type": "string"}}},
                        {"type": "object", "x-name": "Member",
                         "properties": {"tier": {"enum": ["silver", "gold"]},
                                        "card": {"type": "object", "properties": {"no": {"type": "string"}}}}}
                    ]},
                    "plain": {"type": "object", "x-name": "Plain", "properties": {"level": {"enum": ["a", "b"]}}},
                    "odd": {"type": "object", "properties": {
                        "x-name": {"type": "string"},
                        "kind": {"enum": ["x", "y"]}
                    }}
                }
            }),
        )],
    );
    let m = wiregen::load::load(&dir.join("order.schema.json")).expect("loads");
    let mut bases: Vec<&str> = m.types.iter().map(|t| t.names.base.as_str()).collect();
    bases.sort_unstable();
    assert_eq!(
        bases,
        [
            "Guest",
            "Member",
            "MemberCard",
            "MemberTier",
            "Plain",
            "PlainLevel",
            "Root",
            "RootCustomer",
            "RootOdd",
            "RootOddKind"
        ]
    );
    let zod = wiregen(&dir, &["types", "--lang", "zod", "order.schema.json"]);
    let zod = String::from_utf8(zod.stdout).expect("utf-8");
    assert!(zod.contains("export const memberTierSchema") && zod.contains("export const plainLevelSchema"), "{zod}");
}

/// A file can be named by its path whatever `$id` it carries, for its anchors as for its JSON Pointers: a reference
/// by path to an `$anchor` of a file whose root has an `$id` was refused ("no `$anchor` named `A`"), though the
/// anchor is there and the JSON Pointer form to the same place loaded. An anchor of a resource embedded in the file
/// (its own `$id` below the root) is that resource's, not the file's.
#[test]
fn an_anchor_is_found_by_its_files_path_when_the_file_has_an_id() {
    let main = json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "defs.schema.json#A"},
            "b": {"$ref": "defs.schema.json#/$defs/X"},
            "c": {"$ref": "https://example.test/defs.schema.json#A"}
        }
    });
    let defs = json!({
        "$id": "https://example.test/defs.schema.json",
        "$defs": {
            "X": {"$anchor": "A", "const": "y"},
            "E": {"$id": "https://example.test/inner", "$defs": {"I": {"$anchor": "B", "const": "z"}}}
        }
    });
    let dir = schema_dir("anchor-by-path", &[("main.schema.json", main.clone()), ("defs.schema.json", defs.clone())]);
    let model = wiregen::load::load(&dir).unwrap_or_else(|e| panic!("loads: {:?}", e.0));
    let engine = Engine::for_type_named(model, "Main", EngineOptions::default()).expect("a type named Main");
    assert_eq!(first(&engine, json!({"a": "y", "b": "y", "c": "y"})), None);
    assert_eq!(first(&engine, json!({"a": "z"})), Some(("const".into(), "/a".into())));

    // `B` is an anchor of the embedded resource `inner`: by the file's path it is not there.
    let mut main = main;
    main["properties"]["d"] = json!({"$ref": "defs.schema.json#B"});
    let dir = schema_dir("anchor-by-path-embedded", &[("main.schema.json", main), ("defs.schema.json", defs)]);
    let errors = match wiregen::load::load(&dir) {
        Ok(_) => panic!("`B` is not an anchor of the file's own resource"),
        Err(e) => e.0,
    };
    assert_eq!(errors.len(), 1, "{:?}", errors.iter().map(|e| &e.message).collect::<Vec<_>>());
    assert_eq!(errors[0].pointer, "/properties/d/$ref");
    assert!(errors[0].message.contains("no `$anchor` named `B` in `defs.schema.json`"), "{}", errors[0].message);
}

/// A schema's title reaches the `wiregen types --lang rust` module's doc as doc text: a carriage return or a
/// bidirectional override in it was written raw, and rustc refused the module ("bare CR not allowed in
/// doc-comment", `text_direction_codepoint_in_literal`).
#[test]
fn a_title_with_control_characters_leaves_the_rust_module_compilable() {
    let dir = schema_dir("title-doc", &[("t.schema.json", json!({"title": "a\rb`\u{202E}c", "type": "string"}))]);
    let rust = rust_module(&dir, "t.schema.json");
    assert!(!rust.contains('\r') && !rust.contains('\u{202E}'), "{rust}");
    assert!(
        rust.contains(r"Types for ``a b`\u{202E}c``, generated"),
        "{}",
        rust.lines().take(3).collect::<Vec<_>>().join("\n")
    );
}

/// `x-unknown-keys: strip` drops every key `properties` does not declare, so on an object that needs such a key
/// it would accept a value and give back one that fails it: a required `c` only in `required` (the Rust type was
/// an empty struct and wrote `{}`), keys `patternProperties` keeps (Rust dropped them), keys `minProperties`
/// counts. The loader refuses that at the keyword; stripping beside declared properties is as before.
#[test]
fn strip_on_an_object_that_needs_undeclared_keys_is_refused_at_the_keyword() {
    let strip = |extra: Value| {
        let mut o = json!({"type": "object", "properties": {"a": {"type": "integer"}}, "x-unknown-keys": "strip"});
        for (k, v) in extra.as_object().expect("object") {
            o[k] = v.clone();
        }
        o
    };
    let cases = [
        (json!({"required": ["c"]}), "it needs `c`, which `properties` does not declare"),
        (json!({"dependentRequired": {"a": ["z"]}}), "it needs `z`, which `properties` does not declare"),
        (json!({"patternProperties": {"^x": {"type": "integer"}}}), "`patternProperties` may keep keys"),
        (json!({"minProperties": 1}), "`minProperties` counts keys"),
    ];
    for (i, (extra, want)) in cases.into_iter().enumerate() {
        let dir = schema_dir(&format!("strip-needs-{i}"), &[("m.schema.json", strip(extra))]);
        let errors = match wiregen::load::load(&dir) {
            Ok(_) => panic!("case {i} is refused"),
            Err(e) => e.0,
        };
        assert_eq!(errors.len(), 1, "{:?}", errors.iter().map(|e| &e.message).collect::<Vec<_>>());
        assert_eq!(errors[0].pointer, "/x-unknown-keys");
        assert!(errors[0].message.contains(want), "case {i}: {}", errors[0].message);
    }
    // `minProperties` that the required declared properties meet counts no dropped key (helper 119: refused).
    // Nor a `dependentRequired` trigger it drops, which only switches the rule off (helper 121: refused).
    let fine = strip(json!({"required": ["a"], "dependentRequired": {"a": ["a"], "x": ["a"]}, "minProperties": 1}));
    let dir = schema_dir("strip-fine", &[("m.schema.json", fine)]);
    wiregen::load::load(&dir).unwrap_or_else(|e| panic!("loads: {:?}", e.0));
}

#[test]
fn annotations_are_carried_by_the_bundle_and_stated_by_every_doc_output() {
    // `title`, `default`, `examples`, `deprecated`, `readOnly` and `writeOnly` change no verdict; the bundled
    // schema dropped them (but a type's examples), and no doc comment said them, though the README said so.
    let dir = schema_dir(
        "annotations",
        &[(
            "thing.schema.json",
            json!({
                "title": "Thing",
                "type": "object",
                "properties": {
                    "a": {
                        "type": "string",
                        "title": "Alpha",
                        "description": "The a.",
                        "default": "x|y",
                        "examples": ["hello"],
                        "deprecated": true,
                        "readOnly": true
                    },
                    "b": { "type": "integer", "writeOnly": true, "examples": [1, 2] },
                    "c": { "type": "string", "default": "a\u{2028}b\u{7f}", "description": "Says @deprecated, is not." }
                },
                "$defs": { "Old": { "title": "An old thing", "deprecated": true, "type": "string", "default": "z" } }
            }),
        )],
    );
    let out = dir.with_extension("out");
    let o = wiregen(&dir, &["generate", "--schema", ".", "--out", out.to_str().expect("utf-8")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |p: &str| std::fs::read_to_string(out.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    let bundle: Value = serde_json::from_str(&read("schema/wire-types.schema.json")).expect("json");
    assert_eq!(
        bundle["$defs"]["Thing"]["properties"]["a"],
        json!({
            "title": "Alpha", "type": "string", "description": "The a.", "default": "x|y", "deprecated": true,
            "readOnly": true, "examples": ["hello"]
        })
    );
    assert_eq!(
        bundle["$defs"]["Thing"]["properties"]["b"],
        json!({"type": "integer", "writeOnly": true, "examples": [1, 2]})
    );
    assert_eq!(
        bundle["$defs"]["Old"],
        json!({"title": "An old thing", "type": "string", "default": "z", "deprecated": true})
    );
    let rust = read("rust/src/lib.rs");
    assert!(
        rust.contains(
            "/// Alpha\n    ///\n    /// The a.\n    ///\n    /// Deprecated. Read-only. Default: `\"x|y\"`. Example: `\"hello\"`.\n    pub a:"
        ),
        "{rust}"
    );
    assert!(rust.contains("/// Write-only. Examples: `1`, `2`.\n    pub b:"), "{rust}");
    assert!(rust.contains("/// An old thing\n///\n/// `Old`, defined at"), "{rust}");
    let zod = read("ts/src/schemas.ts");
    assert!(zod.contains("* Deprecated. Read-only. Default: `\"x|y\"`. Example: `\"hello\"`.\n     *\n     * @deprecated\n     */\n    a: z.string("), "{zod}");
    assert!(zod.contains("* Deprecated. Default: `\"z\"`.\n *\n * @deprecated\n */"), "{zod}");
    // A default is quoted as JSON (a line separator was written `\u{2028}`, which no JSON parser reads), and an
    // `@` in the text is no tag.
    assert!(rust.contains("/// Default: `\"a\\u2028b\\u007f\"`.\n    pub c:"), "{rust}");
    assert!(
        zod.contains(
            "* Says \\@deprecated, is not.\n     *\n     * Default: `\"a\\u2028b\\u007f\"`.\n     */\n    c: z.string("
        ),
        "{zod}"
    );
    let docs = read("docs/wire-types.md");
    assert!(
        docs.contains(
            "| `a` | string? | Alpha — The a. Deprecated. Read-only. Default: `\"x\\|y\"`. Example: `\"hello\"`. |"
        ),
        "{docs}"
    );
    assert!(docs.contains("An old thing\n\nDeprecated. Default: `\"z\"`."), "{docs}");
}

/// A property name may hold any character, control characters included; no generated text file holds one raw
/// (the Zod module's doc comment wrote `The \`a<NUL>b\` property.` raw, and BEL and ESC; helper 92), while the
/// checkers still know the key by its real name.
#[test]
fn control_characters_in_a_property_name_reach_no_generated_file_raw() {
    let dir = schema_dir(
        "control-names",
        &[(
            "t.schema.json",
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "T", "type": "object", "x-root": true,
                "additionalProperties": false,
                "properties": {"a\u{0}b": {"type": "string"}, "d\u{7}": {"type": "integer"}, "e\u{1b}[31m": {},
                    "c\rd": {"type": "string"}}}),
        )],
    );
    let model = wiregen::load::load(&dir).expect("loads");
    for output in wiregen::emit::Output::ALL {
        for f in output.emit(&model, &Default::default()).expect("emits") {
            let raw = f.contents.chars().find(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'));
            assert!(raw.is_none(), "{}: holds {raw:?}", f.path);
            // A line break in a name does not split a doc comment (the Rust setter's `Sets` line did; helper 95).
            if f.path.ends_with("lib.rs") {
                assert!(f.contents.contains("/// Sets `c\\u{000D}d`."), "{}", f.contents);
            }
        }
    }
    let engine = Engine::new(model, EngineOptions::default()).expect("engine");
    assert_eq!(first(&engine, json!({"a\u{0}b": "x", "d\u{7}": 1})), None);
    assert_eq!(first(&engine, json!({"d\u{7}": "x"})).map(|e| e.1), Some("/d\u{7}".to_string()));
}

/// An `x-name` where the schema is no type of its own but makes one part (a nullable object's object, an untyped
/// schema's object) names that part. It was silently dropped: the part kept its derived name (`RootNObject`;
/// helper 113).
#[test]
fn an_x_name_on_a_schema_of_one_part_names_the_part() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "n": {"type": ["object", "null"], "x-name": "MaybeObj", "properties": {"z": {"type": "integer"}}},
            "u": {"x-name": "Loose", "properties": {"a": {"type": "string"}}},
            "o": {"type": ["object", "null"], "properties": {"z": {"type": "integer"}}}
        }
    });
    let dir = schema_dir("x-name-part", &[("one.schema.json", schema)]);
    let model = wiregen::load::load(&dir.join("one.schema.json")).expect("the schema loads");
    let bases: Vec<&str> = model.types.iter().map(|t| t.names.base.as_str()).collect();
    for name in ["MaybeObj", "Loose", "RootOObject"] {
        assert!(bases.contains(&name), "{name} in {bases:?}");
    }
    assert!(!bases.contains(&"RootNObject") && !bases.contains(&"RootUObject"), "{bases:?}");
    // The TypeScript output names it too.
    let out = wiregen(&dir, &["types", "--lang", "ts-standalone", "one.schema.json"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("n?: (MaybeObj) | null | undefined"));
}

#[test]
fn a_name_given_by_a_language_keyword_is_avoided_by_derived_names() {
    // `Foo` is `Bar` in TypeScript; the type at `$defs/Bar`, named by where it is, takes a number in every language
    // (as it does beside an `x-name` of `Bar`), rather than making an error at a schema without a name keyword
    // (helper 113).
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"f": {"$ref": "#/$defs/Foo"}, "b": {"$ref": "#/$defs/Bar"}},
        "$defs": {
            "Foo": {"type": "object", "x-ts-name": "Bar"},
            "Bar": {"type": "object"}
        }
    });
    let dir = schema_dir("ts-name-taken", &[("one.schema.json", schema)]);
    let model = wiregen::load::load(&dir.join("one.schema.json")).expect("the schema loads");
    let names: Vec<(&str, &str)> = model.types.iter().map(|t| (t.names.rust.as_str(), t.names.ts.as_str())).collect();
    assert!(names.contains(&("Foo", "Bar")), "{names:?}");
    assert!(names.contains(&("Bar2", "Bar2")), "{names:?}");
}

#[test]
fn name_keywords_on_a_schema_of_several_parts_are_refused() {
    // A schema that makes a named type for each of two kinds of value (a string enum, an object) is no one type: a
    // name keyword there names neither (it was dropped without an error; helper 113).
    for key in ["x-name", "x-rust-name", "x-ts-name"] {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "k": {"enum": ["a", "b"], "minProperties": 1, key: "Several"}
            }
        });
        let dir = schema_dir(&format!("several-parts-{key}"), &[("one.schema.json", schema)]);
        let err = wiregen::load::load(&dir.join("one.schema.json")).expect_err("refused");
        let text = err.to_string();
        assert!(text.contains(&format!("/properties/k/{key}")) && text.contains("it makes 2 here"), "{key}: {text}");
    }
}

#[test]
fn derived_names_equal_in_one_language_take_a_number() {
    // `HTTPServer` and `HttpServer` differ in Rust and TypeScript but are both `httpServerSchema` in Zod: the second
    // takes a number in every language, as a repeated base does (it was a name-collision error at a schema with no
    // name keyword; helper 118).
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"HTTPServer": {"type": "object"}, "HttpServer": {"type": "string"}}
    });
    let dir = schema_dir("casing-folded", &[("one.schema.json", schema)]);
    let model = wiregen::load::load(&dir.join("one.schema.json")).expect("the schema loads");
    let names: Vec<(&str, &str, &str)> =
        model.types.iter().map(|t| (t.names.rust.as_str(), t.names.ts.as_str(), t.names.zod.as_str())).collect();
    assert!(names.contains(&("HTTPServer", "HTTPServer", "httpServerSchema")), "{names:?}");
    assert!(names.contains(&("HttpServer2", "HttpServer2", "httpServer2Schema")), "{names:?}");
}

#[test]
fn the_draft_2020_12_uri_with_an_empty_fragment_is_that_draft() {
    // `...schema#` names the same meta-schema (ajv takes it); another draft is still refused (helper 118).
    let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema#", "type": "string"});
    let dir = schema_dir("draft-fragment", &[("one.schema.json", schema)]);
    wiregen::load::load(&dir.join("one.schema.json")).expect("the schema loads");
    let other = json!({"$schema": "https://json-schema.org/draft/2019-09/schema#", "type": "string"});
    let dir = schema_dir("draft-other", &[("one.schema.json", other)]);
    let err = wiregen::load::load(&dir.join("one.schema.json")).expect_err("another draft");
    assert!(err.to_string().contains("only draft 2020-12"), "{err}");
}

/// A union's `tag()` is typed by what every member's tag is. Tags of several kinds gave `TAGS` and a `&str`
/// `tag()` with `""` for the boolean and integer members (the first member's kind chose the type; helper 118).
#[test]
fn a_union_tag_is_typed_by_every_members_tag() {
    let union = |tags: Value| {
        let members: Vec<Value> = tags
            .as_array()
            .expect("tags")
            .iter()
            .map(|t| json!({"type": "object", "properties": {"k": {"const": t}}, "required": ["k"]}))
            .collect();
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "U", "x-root": true, "oneOf": members})
    };
    // A tag of no member's kind is expected to be one of the tags' kinds (it was the first member's: "expected a
    // string"); every checker says it so (the conformance case on tags of several kinds).
    let dir = schema_dir("tags-mixed-check", &[("u.schema.json", union(json!(["a", true, 7])))]);
    let engine = Engine::new(wiregen::load::load(&dir).expect("loads"), EngineOptions::default()).expect("engine");
    let issues = engine.check_value(&json!({"k": [1]}));
    assert_eq!(issues[0].message, "expected a string, a boolean or an integer, got an array");
    let lib = |name: &str, tags: Value| {
        let dir = schema_dir(name, &[("u.schema.json", union(tags))]);
        let model = wiregen::load::load(&dir).expect("loads");
        let files = wiregen::emit::Output::Rust.emit(&model, &Default::default()).expect("emits");
        files.into_iter().find(|f| f.path.ends_with("lib.rs")).expect("lib.rs").contents
    };
    let mixed = lib("tags-mixed", json!(["a", true, 7, -2]));
    assert!(mixed.contains("pub fn tag(&self) -> ::serde_json::Value"), "{mixed}");
    for v in ["::serde_json::Value::from(\"a\")", "::serde_json::Value::Bool(true)", "::serde_json::Value::from(7i64)"]
    {
        assert!(mixed.contains(v), "{v}");
    }
    assert!(mixed.contains("::serde_json::Value::from(-2i64)"), "{mixed}");
    assert!(!mixed.contains("pub const TAGS") && !mixed.contains("=> \"\""), "{mixed}");
    let ints = lib("tags-ints", json!([1, 2]));
    assert!(ints.contains("pub fn tag(&self) -> i64") && ints.contains("=> 2i64"), "{ints}");
    let strings = lib("tags-strings", json!(["a", "b"]));
    assert!(strings.contains("pub const TAGS: &'static [&'static str] = &[\"a\", \"b\"]"), "{strings}");
    assert!(lib("tags-bools", json!([true, false])).contains("pub fn tag(&self) -> bool"));
}

/// A `const` or `enum` over a recursive type: the check that nothing needs what a strip object drops follows the
/// values down, and stops where they do. It followed the type instead, with a longer path at each level, until
/// the loader ran out of memory or stack (helper 120), with or without a strip object.
#[test]
fn a_const_over_a_recursive_type_loads() {
    let schemas = [
        json!({"type": "object", "properties": {"next": {"$ref": "#"}}, "not": {"const": {}}}),
        json!({"type": "array", "items": {"$ref": "#"}, "not": {"const": []}}),
        json!({"allOf": [{"$ref": "#/$defs/N"}, {"const": 1}], "$defs": {"N": {"type": "object",
            "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/N"}}}}}}),
        json!({"allOf": [{"$ref": "#/$defs/N"}, {"enum": [{"kids": [{"kids": []}]}, 1]}], "$defs": {"N": {"type": "object",
            "x-unknown-keys": "strip", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/N"}}}}}}),
    ];
    for (i, mut s) in schemas.into_iter().enumerate() {
        s["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
        s["x-root"] = json!(true);
        let dir = schema_dir(&format!("const-recursive-{i}"), &[("t.schema.json", s)]);
        // The last one's `enum` names only keys the strip object declares.
        if let Err(e) = wiregen::load::load(&dir) {
            panic!("case {i}: {:?}", e.0.iter().map(|e| &e.message).collect::<Vec<_>>());
        }
    }
}

/// An alias that would hide a global type in a module is renamed with `x-aliases`: the hint said to rename the
/// type with `x-ts-name`, which does not change the alias (helper 118).
#[test]
fn an_alias_that_hides_a_global_type_is_renamed_as_an_alias() {
    let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Q", "type": "object",
        "x-aliases": ["Map"], "properties": {"a": {"type": "string"}}});
    let dir = schema_dir("alias-global-type", &[("q.schema.json", schema)]);
    let out = wiregen(&dir, &["types", "--lang", "zod", "q.schema.json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/x-aliases/0: cannot emit: `Map` is a global type of TypeScript"), "{stderr}");
    assert!(stderr.contains("; rename the alias (`x-aliases`)"), "{stderr}");
}

/// `oneOf` of a `$defs` object and `null` is a nullable object, as the same `anyOf` is: the entry is built after
/// the root that refers to it, and was then taken as one that might accept `null`, so the `oneOf` stayed one
/// (Zod gave back its input, so a strip object in it dropped nothing; helper 120).
#[test]
fn a_one_of_of_a_later_definition_and_null_is_nullable() {
    let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "T", "type": "object",
        "properties": {"c": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}]},
            "d": {"oneOf": [{"$ref": "#/$defs/S"}, {"type": "null"}]},
            "e": {"oneOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]}},
        "$defs": {"S": {"type": "object", "properties": {"p": {"type": "integer"}}},
            "N": {"type": ["object", "null"], "properties": {"p": {"type": "integer"}}}}});
    let dir = schema_dir("one-of-null", &[("t.schema.json", schema)]);
    let model = wiregen::load::load(&dir).expect("loads");
    let root = model.types.iter().find(|t| t.origin.pointer.is_empty()).expect("root");
    use wiregen::ir::Shape;
    let Shape::Object(o) = &root.node.shape else { panic!("an object: {:?}", root.node.shape) };
    // A property's nullable or `oneOf` is a type of its own, named from its place.
    let shape = |name: &str| {
        let mut s = &o.fields.iter().find(|f| f.name == name).expect("field").node.shape;
        while let Shape::Ref(id) = s {
            s = &model.ty(*id).node.shape;
        }
        s
    };
    assert!(matches!(shape("c"), Shape::Nullable(_)), "{:?}", shape("c"));
    assert!(matches!(shape("d"), Shape::Nullable(_)), "{:?}", shape("d"));
    // One that takes `null` itself stays a `oneOf`: `null` passes both alternatives.
    assert!(matches!(shape("e"), Shape::OneOf(_)), "{:?}", shape("e"));
}
