//! `wiregen diff`: one case per change rule (`tests/fixtures/diff/cases.json`: a base schema, changed on the OLD
//! and NEW side by small edits), each held to its rule, subject and breaks, and to a golden of all three output
//! formats with their exit statuses; reading sides from git; the errors.
//!
//! Update the goldens with `WIREGEN_UPDATE_GOLDEN=1 cargo test -p wiregen --test diff` (ignored when `CI` is set).

#[path = "support/golden.rs"]
mod golden;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use wiregen::diff::ChangeRule;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_path_buf()
}

fn fixtures() -> PathBuf {
    root().join("tests/fixtures/diff")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
        }
    }
}

/// The parent of the value at `pointer` and the last token.
fn parent<'a>(v: &'a mut Value, pointer: &str) -> (&'a mut Value, String) {
    let (head, last) = pointer.rsplit_once('/').expect("a pointer");
    let last = last.replace("~1", "/").replace("~0", "~");
    (v.pointer_mut(head).unwrap_or_else(|| panic!("nothing at {head}")), last)
}

/// Applies one edit (`set`, `remove`, `rename`, `delete` a file, `copy` a file) to a schema directory.
fn apply(dir: &Path, op: &Value) {
    let file = dir.join(op["file"].as_str().expect("file"));
    match op["op"].as_str().expect("op") {
        "delete" => return std::fs::remove_file(&file).expect("delete"),
        "copy" => {
            std::fs::copy(dir.join(op["from"].as_str().expect("from")), &file).expect("copy");
            return;
        }
        _ => {}
    }
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("json");
    let pointer = op["pointer"].as_str().expect("pointer");
    let (p, last) = parent(&mut v, pointer);
    match (op["op"].as_str().expect("op"), p) {
        ("set", Value::Object(m)) => {
            m.insert(last, op["value"].clone());
        }
        ("set", Value::Array(a)) => {
            let i: usize = last.parse().expect("index");
            if i == a.len() {
                a.push(op["value"].clone());
            } else {
                a[i] = op["value"].clone();
            }
        }
        ("remove", Value::Object(m)) => {
            m.shift_remove(&last).unwrap_or_else(|| panic!("nothing to remove at {pointer}"));
        }
        ("remove", Value::Array(a)) => {
            a.remove(last.parse().expect("index"));
        }
        ("rename", Value::Object(m)) => {
            // Keeps the member's place.
            let to = op["value"].as_str().expect("new name");
            let entries: Vec<(String, Value)> = std::mem::take(m).into_iter().collect();
            for (k, x) in entries {
                m.insert(if k == last { to.to_string() } else { k }, x);
            }
        }
        (o, _) => panic!("cannot {o} at {pointer}"),
    }
    std::fs::write(&file, serde_json::to_string_pretty(&v).expect("json") + "\n").expect("write");
}

fn wiregen(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wiregen")).current_dir(dir).args(args).output().expect("run wiregen");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

/// The three invocations every case's golden holds: text (backward), json (forward), markdown (full).
const RUNS: [(&str, &str); 3] = [("text", "backward"), ("json", "forward"), ("markdown", "full")];

/// Runs `wiregen diff` in all three formats in `dir` on `old` and `new`; the golden text, and the JSON report.
fn run_formats(dir: &Path, old: &str, new: &str) -> (String, Value) {
    let mut golden = String::new();
    let mut json = Value::Null;
    for (format, policy) in RUNS {
        let (code, out, err) = wiregen(dir, &["diff", "--format", format, "--policy", policy, old, new]);
        assert!(code == 0 || code == 1, "{old} {new} --format {format}: exit {code}: {err}");
        assert!(err.is_empty(), "{old} {new}: nothing on stderr: {err}");
        golden
            .push_str(&format!("$ wiregen diff --format {format} --policy {policy} {old} {new}\n{out}(exit {code})\n"));
        if format == "json" {
            json = serde_json::from_str(&out).expect("one JSON document");
            // The exit status is the policy's verdict over the records.
            let fails = json["changes"].as_array().expect("changes").iter().any(|c| c["fails_policy"] == true);
            assert_eq!(code, i32::from(fails), "{old} {new}: exit status and fails_policy agree");
        }
    }
    (golden, json)
}

#[test]
fn every_rule_has_a_case_and_each_case_its_golden() {
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("cases.json")).expect("cases")).expect("json");
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("diff-cases-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let mut covered = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().expect("name");
        let dir = base.join(name);
        let from = fixtures().join("base").join(case["base"].as_str().expect("base"));
        for side in ["old", "new"] {
            copy_dir(&from, &dir.join(side));
            for op in case[side].as_array().map(Vec::as_slice).unwrap_or_default() {
                apply(&dir.join(side), op);
            }
        }
        let (out, json) = run_formats(&dir, "old", "new");
        let changes = json["changes"].as_array().expect("changes");
        for want in case["expect"].as_array().expect("expect") {
            let rule = want["rule"].as_str().expect("rule");
            assert!(ChangeRule::from_id(rule).is_some(), "{name}: `{rule}` is not a rule");
            covered.insert(rule.to_string());
            let found = changes.iter().find(|c| c["rule"] == want["rule"] && c["subject"] == want["subject"]);
            match found {
                None => failures.push(format!("{name}: no `{rule}` at `{}` in\n{out}", want["subject"])),
                Some(c) if c["breaks"] != want["breaks"] => failures.push(format!(
                    "{name}: `{rule}` at `{}` breaks {}, expected {}",
                    want["subject"], c["breaks"], want["breaks"]
                )),
                Some(_) => {}
            }
        }
        // Only what the case expects: a case changes one thing.
        if changes.len() != case["expect"].as_array().map_or(0, Vec::len) {
            failures.push(format!("{name}: {} change(s), expected {}:\n{out}", changes.len(), case["expect"]));
        }
        let about = case["about"].as_str().unwrap_or_default();
        let text = format!("# {about}\n{out}");
        assert!(!text.contains("panicked"), "{name}: no panics");
        if let Err(e) = golden::check_golden(&fixtures().join(format!("{name}.golden")), &text) {
            failures.push(format!("{name}: {e}"));
        }
    }
    let missing: Vec<&str> = ChangeRule::ALL.iter().map(|r| r.id()).filter(|r| !covered.contains(*r)).collect();
    assert!(missing.is_empty(), "rules without a case in tests/fixtures/diff/cases.json: {missing:?}");
    let _ = std::fs::remove_dir_all(&base);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_schema_compared_with_itself_has_no_change() {
    for b in ["protocol", "types"] {
        let dir = fixtures().join("base");
        for (format, policy) in RUNS {
            let (code, out, _) = wiregen(&dir, &["diff", "--format", format, "--policy", policy, b, b]);
            assert_eq!(code, 0, "{b} {format}: {out}");
            if format == "json" {
                let v: Value = serde_json::from_str(&out).expect("json");
                assert_eq!(v["changes"], Value::Array(Vec::new()), "{b}");
            }
        }
    }
}

#[test]
fn a_side_read_from_git_equals_the_same_directory() {
    // HEAD holds the base fixtures (they are committed); compared with the working copy they are unchanged.
    let (code, out, err) = wiregen(
        &root(),
        &["diff", "--format", "json", "HEAD:tests/fixtures/diff/base/protocol", "tests/fixtures/diff/base/protocol"],
    );
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["old"], "HEAD:tests/fixtures/diff/base/protocol");
    assert_eq!(v["changes"], Value::Array(Vec::new()));
    assert!(v["rows"].as_array().is_some_and(|r| r.len() == 4), "{out}");
}

#[test]
fn an_unreadable_side_exits_2_and_names_it() {
    let dir = fixtures().join("base");
    for (old, why) in [("no-such-dir", "no-such-dir"), ("HEAD:no/such/path", "no/such/path")] {
        let (code, out, err) = wiregen(&dir, &["diff", old, "protocol"]);
        assert_eq!(code, 2, "{old}: {out}{err}");
        assert!(err.contains(why), "{old}: the error names it: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // A side the loader refuses: its located diagnostics.
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("diff-bad-{}", std::process::id()));
    copy_dir(&dir.join("protocol"), &tmp);
    apply(
        &tmp,
        &serde_json::json!({"op": "set", "file": "events/stop.schema.json", "pointer": "/properties/t/x-moved-from", "value": 3}),
    );
    let (code, _, err) = wiregen(&dir, &["diff", "protocol", &tmp.to_string_lossy()]);
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/properties/t/x-moved-from"), "located: {err}");
}
