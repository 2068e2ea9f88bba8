//! Error goldens for broken schemas: each case in `tests/fixtures/broken-schemas/cases.json` breaks a copy of
//! `schema/` one way; `wiregen generate` on it must fail with exit 2, print exactly the golden diagnostics (file,
//! line, column, code, JSON Pointer) and leave the output directory byte-for-byte as it was.
//!
//! Update the goldens with `WIREGEN_UPDATE_GOLDEN=1 cargo test -p wiregen --test schema_errors` (ignored under CI).

#[path = "support/files.rs"]
mod files;
#[path = "support/golden.rs"]
mod golden;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let p = e.expect("entry").path();
        let dest = to.join(p.file_name().expect("name"));
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).expect("copy");
        }
    }
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files::below(dir).into_iter().map(|p| (p.clone(), std::fs::read(&p).expect("read"))).collect()
}

fn break_schema(case: &Value, schema: &Path) {
    let file = schema.join(case["file"].as_str().expect("file"));
    let op = case["op"].as_str().expect("op");
    if op == "copy" {
        std::fs::copy(schema.join(case["from"].as_str().expect("from")), &file).expect("copy");
        return;
    }
    if op == "replace-bytes" {
        // Raw bytes (possibly not UTF-8) in place of the first occurrence of `from`.
        let bytes = std::fs::read(&file).expect("read schema file");
        let from = case["from"].as_str().expect("from").as_bytes();
        let at = bytes.windows(from.len()).position(|w| w == from).expect("`from` occurs");
        let new: Vec<u8> =
            case["value"].as_array().expect("bytes").iter().map(|b| b.as_u64().expect("byte") as u8).collect();
        std::fs::write(&file, [&bytes[..at], &new[..], &bytes[at + from.len()..]].concat()).expect("write");
        return;
    }
    let text = std::fs::read_to_string(&file).expect("read schema file");
    if op == "replace" {
        // A text edit that no `Value` can express (a repeated key).
        let from = case["from"].as_str().expect("from");
        assert!(text.contains(from), "`from` occurs in {}", file.display());
        std::fs::write(&file, text.replacen(from, case["value"].as_str().expect("value"), 1)).expect("write");
        return;
    }
    if op == "truncate" {
        let n = case["value"].as_u64().expect("length") as usize;
        std::fs::write(&file, &text[..n]).expect("write");
        return;
    }
    let mut v: Value = serde_json::from_str(&text).expect("schema file is JSON");
    let ptr = case["pointer"].as_str().expect("pointer");
    let (parent, last) = ptr.rsplit_once('/').expect("pointer has a parent");
    // An item of an array is set in place.
    if let (Some(items), "set") = (v.pointer_mut(parent).and_then(Value::as_array_mut), op) {
        let i: usize = last.parse().expect("an array index");
        items[i] = case["value"].clone();
        std::fs::write(&file, serde_json::to_string_pretty(&v).expect("json") + "\n").expect("write");
        return;
    }
    let obj = v.pointer_mut(parent).and_then(Value::as_object_mut).expect("parent is an object");
    match op {
        "set" => {
            obj.insert(last.to_string(), case["value"].clone());
        }
        "remove" => {
            obj.shift_remove(last).expect("removed key exists");
        }
        "rename" => {
            let val = obj.shift_remove(last).expect("renamed key exists");
            obj.insert(case["value"].as_str().expect("new name").to_string(), val);
        }
        other => panic!("unknown op {other}"),
    }
    std::fs::write(&file, serde_json::to_string_pretty(&v).expect("json") + "\n").expect("write");
}

#[test]
fn broken_schemas_fail_with_located_golden_errors_and_write_nothing() {
    let root = root();
    let cases: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(root.join("tests/fixtures/broken-schemas/cases.json")).expect("cases"),
    )
    .expect("cases.json");
    assert!(cases.len() >= 10);
    let base = std::env::temp_dir().join(format!("wiregen-broken-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().expect("name");
        let dir = base.join(name);
        let schema = dir.join("schema");
        let out = dir.join("out");
        copy_dir(&root.join("schema"), &schema);
        // A good generation first, so there is something that must survive the failing one.
        let ok = Command::new(env!("CARGO_BIN_EXE_wiregen"))
            .current_dir(&dir)
            .args(["generate", "--only", "schema,docs", "--schema", "schema", "--out", "out"])
            .output()
            .expect("run wiregen");
        assert!(ok.status.success(), "{name}: the unbroken copy generates: {}", String::from_utf8_lossy(&ok.stderr));
        let before = snapshot(&out);
        assert!(!before.is_empty());
        break_schema(case, &schema);
        let mut texts = Vec::new();
        for format in ["text", "json"] {
            let r = Command::new(env!("CARGO_BIN_EXE_wiregen"))
                .current_dir(&dir)
                .args(["generate", "--format", format, "--schema", "schema", "--out", "out"])
                .output()
                .expect("run wiregen");
            assert_eq!(r.status.code(), Some(2), "{name}: a broken schema exits 2");
            let shown = if format == "text" { r.stderr } else { r.stdout };
            texts.push(String::from_utf8(shown).expect("utf-8"));
        }
        assert_eq!(snapshot(&out), before, "{name}: a failing generate must leave the output as it was");
        let actual = format!(
            "# {}\n$ wiregen generate --schema schema --out out\n{}$ wiregen generate --format json --schema schema --out out\n{}",
            case["about"].as_str().unwrap_or_default(),
            texts[0],
            texts[1]
        );
        assert!(!actual.contains("panicked"), "{name}: no panics");
        if let Err(e) = golden::check_golden(&root.join(format!("tests/fixtures/broken-schemas/{name}.txt")), &actual) {
            failures.push(format!("{name}: {e}"));
        }
    }
    let _ = std::fs::remove_dir_all(&base);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
