//! Errors chain without repeating themselves: every level's `Display` says what failed there and leaves its cause
//! to `source()`, so a report that walks the chain (anyhow's `{:#}`, eyre, the `wiregen` binary) shows every
//! line, and every schema diagnostic, exactly once.

use std::error::Error;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("errors-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
        }
    }
}

/// The `Display` of every level of the chain, outermost first.
fn levels(e: &dyn Error) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push(c.to_string());
        cause = c.source();
    }
    out
}

/// Renders the whole chain, one level after the other, and checks that no level prints its cause and no line
/// appears twice. Returns the rendered report.
fn assert_no_repeats(e: &dyn Error) -> String {
    let levels = levels(e);
    for pair in levels.windows(2) {
        assert!(!pair[0].contains(&pair[1]), "a level prints its cause too:\n  {:?}\n  {:?}", pair[0], pair[1]);
    }
    let lines: Vec<&str> = levels.iter().flat_map(|l| l.lines()).collect();
    for (i, l) in lines.iter().enumerate() {
        assert!(!lines[..i].contains(l), "line repeated in the chain: {l:?}\n{}", levels.join("\ncaused by: "));
    }
    levels.join("\ncaused by: ")
}

#[test]
fn a_broken_schema_lists_each_diagnostic_once() {
    let schema = tmp("schema");
    copy_dir(&root().join("schema"), &schema);
    for (file, from, to) in [
        ("events/file.schema.json", "#/$defs/uint53", "#/$defs/no-such-def"),
        ("events/turn-end.schema.json", "#/$defs/usage", "#/$defs/nope"),
    ] {
        let f = schema.join(file);
        let text = std::fs::read_to_string(&f).expect("read");
        assert!(text.contains(from), "{file} holds {from}");
        std::fs::write(&f, text.replacen(from, to, 1)).expect("write");
    }
    let err = wiregen::generate(&wiregen::Options::new(&schema, tmp("schema-out"))).expect_err("broken schema");
    let report = assert_no_repeats(&err);
    let wiregen::Error::Schema(diags) = &err else { panic!("expected a schema error, got {report}") };
    assert_eq!(diags.0.len(), 2, "{report}");
    for d in &diags.0 {
        assert_eq!(report.matches(&d.to_string()).count(), 1, "{d} is not shown exactly once:\n{report}");
    }
    assert!(report.starts_with("the schema has 2 errors\ncaused by: "), "{report}");
    let _ = std::fs::remove_dir_all(&schema);
}

#[test]
fn a_schema_file_named_in_upper_case_is_refused_not_skipped() {
    // `service.schema.JSON` was not read: its event was missing from every output without a word (helper 74).
    let schema = tmp("upper-case");
    copy_dir(&root().join("schema"), &schema);
    let from = schema.join("events/service.schema.json");
    let to = schema.join("events/service.schema.JSON");
    std::fs::rename(&from, &to).expect("rename");
    let errors = wiregen::load::load(&schema).expect_err("refused");
    assert_eq!(errors.0.len(), 1, "{errors}");
    let e = &errors.0[0];
    assert_eq!(e.file, to, "{errors}");
    assert!(e.message.contains("ends in `.json`, in lower case"), "{errors}");
    let _ = std::fs::remove_dir_all(&schema);
}

#[test]
fn an_io_error_names_the_file_once_and_its_cause_once() {
    // The output root is a file, so the first directory cannot be created.
    let out = tmp("io-out");
    std::fs::write(&out, "not a directory").expect("write");
    let err = wiregen::generate(&wiregen::Options::new(root().join("schema"), &out)).expect_err("blocked output");
    let report = assert_no_repeats(&err);
    assert!(matches!(err, wiregen::Error::Io { .. }), "{report}");
    assert_eq!(levels(&err).len(), 2, "the Io error and its std::io::Error:\n{report}");
    let _ = std::fs::remove_file(&out);
}

#[test]
fn an_emitter_error_has_no_hidden_cause() {
    let mut p = wiregen::load::load(&root().join("schema")).expect("schema loads");
    let first = p.protocol.as_ref().expect("a protocol").events[0].ty;
    p.types[first.0].names.rust = "not an identifier".into();
    let err = wiregen::emit::Output::Rust.emit(&p, &Default::default()).expect_err("the name is no Rust identifier");
    let report = assert_no_repeats(&err);
    assert!(report.contains("`not an identifier` is not a Rust identifier"), "{report}");
}

/// What the loader accepts but an output cannot express is refused like a broken schema: the file, line, column
/// and JSON Pointer of the place (code `emit.unsupported`), and nothing written.
#[test]
fn an_output_refusal_is_located_like_a_schema_error() {
    let text = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "x-package": { "crate": "big", "npm": "big" },
  "type": "object",
  "properties": {
    "name": { "type": "string", "maxLength": 9007199254740994 }
  }
}
"#;
    let (schema, out, r) = ts_package("unexpressible", text);
    let (d, report) = first_refusal(r, "JavaScript does not count that far");
    assert_eq!(
        (d.kind.code(), d.file.as_path(), d.line, d.col, d.pointer.as_str()),
        ("emit.unsupported", schema.join("root.json").as_path(), 6, 46, "/properties/name/maxLength"),
        "{report}"
    );
    assert!(d.message.contains("`maxLength` is 9007199254740994"), "{report}");
    assert!(!out.exists(), "nothing is written");
    // The outputs that can express it still do.
    let mut opts = wiregen::Options::new(&schema, &out);
    opts.outputs = vec![wiregen::emit::Output::Rust, wiregen::emit::Output::Schema];
    wiregen::generate(&opts).unwrap_or_else(|e| panic!("{}", assert_no_repeats(&e)));
    let _ = std::fs::remove_dir_all(&schema);
    let _ = std::fs::remove_dir_all(&out);
}

/// The TypeScript package of a schema directory whose root is an object with one property `a`, written on line 5
/// as `"a": { <members> }`: its text, the directory, the output directory, and what `generate` gave.
fn ts_package_of_property(
    name: &str,
    members: &str,
) -> (String, PathBuf, PathBuf, Result<wiregen::GenerateReport, wiregen::Error>) {
    let text = format!(
        "{{\n  \"x-package\": {{ \"crate\": \"one\", \"npm\": \"one\" }},\n  \"type\": \"object\",\n  \"properties\": {{\n    \"a\": {{ {members} }}\n  }}\n}}\n"
    );
    let (schema, out, r) = ts_package(name, &text);
    (text, schema, out, r)
}

/// The TypeScript package of a schema directory holding `text` as `root.json`: the directory, the output directory,
/// and what `generate` gave.
fn ts_package(name: &str, text: &str) -> (PathBuf, PathBuf, Result<wiregen::GenerateReport, wiregen::Error>) {
    let schema = tmp(name);
    std::fs::create_dir_all(&schema).expect("mkdir");
    std::fs::write(schema.join("root.json"), text).expect("write");
    let out = tmp(&format!("{name}-out"));
    let mut opts = wiregen::Options::new(&schema, &out);
    opts.outputs = vec![wiregen::emit::Output::Ts];
    let r = wiregen::generate(&opts);
    (schema, out, r)
}

/// The diagnostics of a located refusal, and the whole report (`what` names the case when it is not one).
fn refusals(
    r: Result<wiregen::GenerateReport, wiregen::Error>,
    what: &str,
) -> (Vec<wiregen::diag::SchemaError>, String) {
    let Err(err) = r else { panic!("{what}: refused") };
    let report = assert_no_repeats(&err);
    match err {
        wiregen::Error::Schema(diags) if !diags.0.is_empty() => (diags.0, report),
        _ => panic!("{what}: expected a located refusal, got {report}"),
    }
}

/// The first diagnostic of a located refusal, and the whole report.
fn first_refusal(
    r: Result<wiregen::GenerateReport, wiregen::Error>,
    what: &str,
) -> (wiregen::diag::SchemaError, String) {
    let (mut diags, report) = refusals(r, what);
    (diags.swap_remove(0), report)
}

/// Each count keyword JavaScript cannot count exactly (above 2^53-1) is refused at the keyword itself, by name, in
/// both JavaScript outputs; 2^53-1 itself is still written.
#[test]
fn a_count_beyond_javascript_is_refused_at_its_keyword() {
    let cases = [
        ("minLength", r#""type": "string""#),
        ("maxLength", r#""type": "string""#),
        ("minItems", r#""type": "array""#),
        ("maxItems", r#""type": "array""#),
        ("minContains", r#""type": "array", "contains": { "type": "null" }"#),
        ("maxContains", r#""type": "array", "contains": { "type": "null" }"#),
        ("minProperties", r#""type": "object""#),
        ("maxProperties", r#""type": "object""#),
    ];
    for (keyword, rest) in cases {
        for (n, fits) in [("9007199254740992", false), ("9007199254740991", true)] {
            let (text, schema, out, r) =
                ts_package_of_property(&format!("count-{keyword}-{fits}"), &format!("{rest}, \"{keyword}\": {n}"));
            if fits {
                r.unwrap_or_else(|e| panic!("{keyword}: {n} fits: {}", assert_no_repeats(&e)));
            } else {
                let (d, report) = first_refusal(r, keyword);
                let col = text.lines().nth(4).and_then(|l| l.find(n)).map(|c| c + 1);
                assert_eq!(
                    (d.kind.code(), d.line, Some(d.col), d.pointer.as_str()),
                    ("emit.unsupported", 5, col, format!("/properties/a/{keyword}").as_str()),
                    "{report}"
                );
                assert!(d.message.contains(&format!("`{keyword}` is {n}")), "{report}");
                assert!(!out.exists(), "nothing is written");
            }
            let _ = std::fs::remove_dir_all(&schema);
            let _ = std::fs::remove_dir_all(&out);
        }
    }
}

/// A name the TypeScript outputs cannot declare (it would hide a global of TypeScript or JavaScript from the
/// module's own code, or is the runtime's) is refused at the keyword that gave it: `x-name` for a name made from
/// the base name it gave, `x-ts-name` for the TypeScript name and the validator names made from it, `x-zod-name`,
/// or the alias in `x-aliases`.
#[test]
fn a_name_the_typescript_outputs_cannot_declare_is_refused_where_it_was_given() {
    let cases = [
        (r#""x-name": "Partial""#, "/properties/a/x-name", "`Partial` is a global type"),
        (r#""x-ts-name": "Record""#, "/properties/a/x-ts-name", "`Record` is a global type"),
        (r#""x-zod-name": "Object""#, "/properties/a/x-zod-name", "`Object` is a global value"),
        (r#""x-ts-name": "Finite""#, "/properties/a/x-ts-name", "`isFinite` is a global value"),
        (
            r#""x-ts-name": "WireResult""#,
            "/properties/a/x-ts-name",
            "`WireResult` is already a name of `src/runtime.ts`",
        ),
        (r#""x-aliases": ["Picture", "Readonly"]"#, "/properties/a/x-aliases/1", "`Readonly` is a global type"),
        (r#""x-name": "Picture", "x-zod-name": "fooSchema""#, "", ""),
    ];
    for (i, (keywords, pointer, says)) in cases.into_iter().enumerate() {
        let (text, schema, out, r) =
            ts_package_of_property(&format!("ts-name-{i}"), &format!("\"type\": \"object\", {keywords}"));
        if pointer.is_empty() {
            r.unwrap_or_else(|e| panic!("{keywords}: the names are usable: {}", assert_no_repeats(&e)));
        } else {
            let (d, report) = first_refusal(r, keywords);
            // The name's value, its line and column.
            let name = says.split('`').nth(1).expect("the name in backticks");
            let name = name.strip_prefix("is").filter(|_| name == "isFinite").unwrap_or(name);
            let col = text.lines().nth(4).and_then(|l| l.find(&format!("\"{name}\""))).expect("the name") + 1;
            assert_eq!(
                (d.kind.code(), d.line, d.col, d.pointer.as_str()),
                ("emit.unsupported", 5, col, pointer),
                "{keywords}: {report}"
            );
            assert!(d.message.contains(says), "{keywords}: {report}");
            assert!(!out.exists(), "nothing is written");
        }
        let _ = std::fs::remove_dir_all(&schema);
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// Every name a TypeScript module cannot declare is refused at once, each at its keyword, not only the first.
#[test]
fn every_name_the_typescript_outputs_cannot_declare_is_refused_at_once() {
    let text = r#"{
  "x-package": { "crate": "names", "npm": "names" },
  "type": "object",
  "properties": {
    "a": { "type": "object", "x-ts-name": "Record" },
    "b": { "type": "object", "x-zod-name": "Object" },
    "c": { "type": "object", "x-name": "Partial", "x-aliases": ["Readonly"] }
  }
}
"#;
    let (schema, out, r) = ts_package("ts-names-at-once", text);
    let (diags, report) = refusals(r, "the names");
    let got: Vec<(&str, usize)> = diags.iter().map(|d| (d.pointer.as_str(), d.line)).collect();
    assert_eq!(
        got,
        [
            ("/properties/a/x-ts-name", 5),
            ("/properties/b/x-zod-name", 6),
            ("/properties/c/x-name", 7),
            ("/properties/c/x-aliases/0", 7)
        ],
        "{report}"
    );
    assert!(!out.exists(), "nothing is written");
    let _ = std::fs::remove_dir_all(&schema);
}

/// A name made from the schema that another module of the npm package already holds is refused at its keyword,
/// each once: a protocol type (`SessionEventForRole`), what the stream checker and the upcaster export
/// (`SessionRollup`, `UpgradeLoss`), a type the stream checker imports beside a name of its own (`Item`), the
/// runtime's `WireError` and `isInt` (the guard of a type `Int`), a `$` in a name the standalone code holds, a Zod schema named like another type's
/// validator (the keyword is what to change, not the derived name). Before, each of these was written and the
/// package did not compile.
#[test]
fn a_name_another_module_of_the_package_holds_is_refused_at_its_keyword() {
    let schema = tmp("package-names");
    copy_dir(&root().join("schema"), &schema);
    let defs_file = schema.join("defs.schema.json");
    let mut defs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&defs_file).expect("read")).expect("JSON");
    let added = [
        ("forRole", "x-name", "EventForRole", "`SessionEventForRole` is already a protocol type named after the type at envelope.schema.json#/properties/ev in `src/schemas.ts`"),
        ("rollup", "x-name", "Rollup", "`SessionRollup` is already a name `src/stream.ts` exports, and `src/index.ts` re-exports both"),
        ("loss", "x-ts-name", "UpgradeLoss", "`UpgradeLoss` is already a name `src/upgrade.ts` exports"),
        ("wire", "x-ts-name", "WireError", "`WireError` is already a name of `src/runtime.ts`, which `src/schemas.ts` uses"),
        ("dollar", "x-ts-name", "Foo$", "`Foo$` holds `$`, which marks the names `src/standalone.ts` makes for itself"),
        // The guard of a type named `Int` is `isInt`, a check the runtime exports (helper 102: a package of the
        // JSON-Schema-Test-Suite's `$defs/int`).
        ("int", "x-ts-name", "Int", "`isInt` is already a name `src/runtime.ts` exports, and `src/index.ts` re-exports both"),
        ("guard", "x-zod-name", "isSessionCuid2", "`isSessionCuid2` is already a validator of the type at defs.schema.json#/$defs/cuid2, and `src/index.ts` exports both"),
    ];
    for (key, keyword, name, _) in added {
        defs["$defs"][key] = serde_json::json!({ "type": "string", "description": "A name.", keyword: name });
    }
    // `SessionId` is a type the stream checker's rollup names, so `src/stream.ts` imports it.
    defs["$defs"]["id"]["x-ts-name"] = "Item".into();
    std::fs::write(&defs_file, serde_json::to_string_pretty(&defs).expect("JSON")).expect("write");
    let out = tmp("package-names-out");
    let mut opts = wiregen::Options::new(&schema, &out);
    opts.outputs = vec![wiregen::emit::Output::Ts];
    let (diags, report) = refusals(wiregen::generate(&opts), "the names");
    let mut expected: Vec<(String, &str)> =
        added.iter().map(|(key, keyword, _, says)| (format!("/$defs/{key}/{keyword}"), *says)).collect();
    expected.push(("/$defs/id/x-ts-name".into(), "`Item` is already a name of `src/stream.ts`; rename the type"));
    assert_eq!(diags.len(), expected.len(), "one error each: {report}");
    for (pointer, says) in expected {
        let d = diags.iter().find(|d| d.pointer == pointer).unwrap_or_else(|| panic!("{pointer}: {report}"));
        assert!(d.message.contains(says) && d.file.ends_with("defs.schema.json") && d.line > 0, "{pointer}: {report}");
    }
    assert!(!out.exists(), "nothing is written");
    let _ = std::fs::remove_dir_all(&schema);
}

/// An envelope (`x-role-property`) that is a union at the top, a protocol of flat messages, is told that such a
/// protocol has no envelope and what to drop: it was told to be an object type, and `type: object` beside its
/// `x-union` is refused in turn, a circle (helper 104).
#[test]
fn a_flat_union_marked_as_an_envelope_is_told_to_be_a_plain_type_package() {
    let schema = tmp("flat-envelope");
    std::fs::create_dir_all(schema.join("events")).expect("mkdir");
    let env = serde_json::json!({"description": "A message.", "x-role-property": "role",
        "x-union": {"discriminator": "type", "members": "events"}});
    let event = serde_json::json!({"description": "A.", "type": "object", "required": ["type", "role"], "properties": {
        "type": {"const": "a", "description": "Its kind."}, "role": {"enum": ["user"], "description": "Who."}}});
    std::fs::write(schema.join("envelope.schema.json"), env.to_string()).expect("write");
    std::fs::write(schema.join("events/a.schema.json"), event.to_string()).expect("write");
    let out = tmp("flat-envelope-out");
    let (diags, report) = refusals(wiregen::generate(&wiregen::Options::new(&schema, &out)), "a flat envelope");
    assert_eq!(diags.len(), 1, "one error: {report}");
    assert!(diags[0].message.contains("a union at the top is a protocol of flat messages"), "{report}");
    assert!(diags[0].message.contains("drop `x-role-property`"), "{report}");
    assert!(!out.exists(), "nothing is written");
    let _ = std::fs::remove_dir_all(&schema);
}

/// The model is public, so a tool can hand the engine and the emitters a model that refers to types it does not
/// hold. That is an emitter error or a validation verdict, never a panic.
#[test]
fn a_hand_built_model_with_undefined_types_does_not_panic() {
    let mut p = wiregen::load::load(&root().join("schema")).expect("schema loads");
    // Drop every type after the envelope, the union and the events: the enums hoisted from the events (such
    // as `turn-end`'s status) are then referred to but not held.
    let last = {
        let pr = p.protocol.as_ref().expect("a protocol");
        pr.events.iter().map(|e| e.ty.0).chain([pr.envelope.0, pr.union.0]).max().unwrap_or(0)
    };
    assert!(last + 1 < p.types.len(), "some types come after the events");
    p.types.truncate(last + 1);
    for o in wiregen::emit::Output::ALL {
        if let Err(e) = o.emit(&p, &Default::default()) {
            assert_no_repeats(&e);
        }
    }
    let engine =
        wiregen::engine::Engine::new(p, wiregen::engine::EngineOptions { strict_ids: true, ..Default::default() })
            .expect("the schema has a root type");
    let issues = engine.check_line_fast(
        br#"{"id":"m1","time":1,"role":"agent","ev":{"t":"turn-end","status":"completed","usage":{"inputTokens":1}}}"#,
    );
    assert!(!issues.is_empty(), "an undefined enum allows no value");
}

/// An output root that holds the schema directory (`generate --out .` beside `schema/`) would write the bundled
/// schema into it, and the next load would read that as a schema file (98 name collisions): refused, nothing
/// written, the schema directory as it was.
#[test]
fn outputs_are_never_written_into_the_schema_directory() {
    let base = tmp("into-schema");
    let schema = base.join("schema");
    copy_dir(&root().join("schema"), &schema);
    let files = |d: &Path| {
        let mut v: Vec<PathBuf> =
            std::fs::read_dir(d).expect("list").filter_map(|e| e.ok()).map(|e| e.path()).collect();
        v.sort();
        v
    };
    let before = files(&schema);
    for out in [base.clone(), schema.join(".."), schema.join("inner")] {
        let err = wiregen::generate(&wiregen::Options::new(&schema, &out)).expect_err("refused");
        assert!(matches!(err, wiregen::Error::IntoSchema { .. }), "{}", assert_no_repeats(&err));
        assert!(err.to_string().contains("would be written into the schema directory"), "{err}");
        assert_eq!(files(&schema), before, "{}", out.display());
        assert_eq!(files(&base), std::slice::from_ref(&schema), "nothing written beside it");
    }
    let ok =
        wiregen::generate(&wiregen::Options::new(&schema, base.join("generated"))).expect("an output root beside it");
    assert!(!ok.written.is_empty());
    assert_eq!(files(&schema), before);
    let _ = std::fs::remove_dir_all(&base);
}

/// Every file below `d` with its bytes, directories as `None`.
fn tree(d: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut todo = vec![d.to_path_buf()];
    while let Some(p) = todo.pop() {
        for e in std::fs::read_dir(&p).expect("list").flatten() {
            if e.file_type().expect("type").is_dir() {
                out.push((e.path(), None));
                todo.push(e.path());
            } else {
                out.push((e.path(), Some(std::fs::read(e.path()).expect("read"))));
            }
        }
    }
    out.sort();
    out
}

/// A schema edit that changes several outputs, and a directory where one of the files goes: `generate` fails
/// naming that file, and the output directory is byte for byte as it was (no output replaced, nothing staged
/// left behind). Undoing a failure half-way is `generate/commit.rs`'s unit tests.
#[test]
fn a_failed_write_leaves_the_outputs_as_they_were() {
    let base = tmp("failed-write");
    let (schema, out) = (base.join("schema"), base.join("generated"));
    copy_dir(&root().join("schema"), &schema);
    wiregen::generate(&wiregen::Options::new(&schema, &out)).expect("first generate");
    let file = schema.join("events/turn-end.schema.json");
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.contains("Final turn outcome"));
    std::fs::write(&file, text.replace("Final turn outcome", "The turn's final outcome")).expect("write");
    let blocked = out.join("ts/src/schemas.ts");
    std::fs::remove_file(&blocked).expect("rm");
    std::fs::create_dir(&blocked).expect("mkdir");
    let before = tree(&out);
    let err = wiregen::generate(&wiregen::Options::new(&schema, &out)).expect_err("blocked");
    let report = assert_no_repeats(&err);
    assert!(matches!(&err, wiregen::Error::Io { path, .. } if *path == blocked), "{report}");
    assert!(report.contains("a directory is in the way"), "{report}");
    assert!(tree(&out) == before, "the outputs changed");
    std::fs::remove_dir(&blocked).expect("rmdir");
    let ok = wiregen::generate(&wiregen::Options::new(&schema, &out)).expect("unblocked");
    assert!(ok.written.len() > 3, "the edit reaches several outputs: {:?}", ok.written);
    let _ = std::fs::remove_dir_all(&base);
}
