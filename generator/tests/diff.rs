//! `wiregen diff`: one case per change rule (`tests/fixtures/diff/cases.json`: a base schema, changed on the OLD
//! and NEW side by small edits), each held to its rule, subject and breaks, and to a golden of all three output
//! formats with their exit statuses; reading sides from git; the errors.
//!
//! Update the goldens with `WIREGEN_UPDATE_GOLDEN=1 cargo test -p wiregen --test diff` (ignored when `CI` is set).

#[path = "support/golden.rs"]
mod golden;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
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

/// A chain of `anyOf` lists, each holding the next (named, and written in place), is compared once a level: each
/// pairing of members was probed with a full walk, and then walked again, twice the work a level (forty levels
/// did not finish; twenty took minutes in place). The change at the bottom is reported, once.
#[test]
fn a_chain_of_compositions_is_compared_once_a_level() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("diff-chain-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bottom) in [("old.json", "string"), ("new.json", "boolean")] {
        let mut defs = serde_json::Map::new();
        for i in 0..40 {
            let next = match i {
                39 => json!({ "type": bottom }),
                _ => json!({ "$ref": format!("#/$defs/T{}", i + 1) }),
            };
            defs.insert(format!("T{i}"), json!({ "anyOf": [{ "type": "integer" }, next] }));
        }
        let mut inline = json!({ "type": bottom });
        for _ in 0..40 {
            inline = json!({ "anyOf": [{ "type": "integer" }, inline] });
        }
        defs.insert("Inline".into(), inline);
        let schema = json!({ "$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs });
        std::fs::write(dir.join(name), serde_json::to_string(&schema).unwrap()).unwrap();
    }
    let (code, out, err) = wiregen(&dir, &["diff", "--format", "json", "old.json", "new.json"]);
    assert_eq!(code, 1, "{out}{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let changes = v["changes"].as_array().expect("changes");
    // The bottom of each chain changed kind: reported once for each type that holds it (41).
    assert_eq!(changes.len(), 41, "{out}");
    for subject in ["T0", "T39", "Inline"] {
        assert!(
            changes.iter().any(|c| c["subject"] == subject && c["message"] == "a string is now a boolean"),
            "{out}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
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
    // From a directory below the repository's root the path is still read from the root, as `git show` reads it
    // (the listing of a directory was limited to the working directory: "no schema files were given").
    let (code, out, err) = wiregen(
        &root().join("generator"),
        &["diff", "--format", "json", "HEAD:tests/fixtures/diff/base/protocol", "../tests/fixtures/diff/base/protocol"],
    );
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["changes"], Value::Array(Vec::new()));
}

#[test]
fn a_schema_file_named_in_upper_case_is_refused_in_a_git_side_too() {
    // `x.JSON` in a committed tree was skipped without a word, as the loader had skipped it on disk (helper 77).
    let dir = std::env::temp_dir().join(format!("wiregen-diff-git-case-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    copy_dir(&fixtures().join("base/protocol"), &dir.join("s"));
    std::fs::copy(dir.join("s/events/ping.schema.json"), dir.join("s/events/x.JSON")).expect("copy");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "x"]);
    // Only the committed side holds it.
    std::fs::remove_file(dir.join("s/events/x.JSON")).expect("remove");
    let (code, out, err) = wiregen(&dir, &["diff", "HEAD:s", "s"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("events/x.JSON") && err.contains("ends in `.json`, in lower case"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unreadable_side_exits_2_and_names_it() {
    let dir = fixtures().join("base");
    for (old, why) in [
        ("no-such-dir", "no-such-dir"),
        ("HEAD:no/such/path", "no/such/path"),
        // A revision that git would read as an option (`git cat-file -t -p:protocol`) is not passed to it.
        ("-p:protocol", "git cannot read `-p:protocol`: a revision cannot start with `-`"),
        ("--output=x:protocol", "a revision cannot start with `-`"),
    ] {
        let (code, out, err) = wiregen(&dir, &["diff", "--", old, "protocol"]);
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
    // A move the upcasters could not apply (not on a property of an event) is refused, not ignored.
    let nested = serde_json::json!({"op": "set", "file": "events/note.schema.json", "pointer": "/properties/meta/properties/x", "value": {"type": "string", "description": "x", "x-moved-from": "/subagent"}});
    apply(&tmp, &nested);
    let (code, _, err) = wiregen(&dir, &["diff", "protocol", &tmp.to_string_lossy()]);
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/properties/t/x-moved-from"), "located: {err}");
    assert!(err.contains("/properties/meta/properties/x/x-moved-from: `x-moved-from` has no meaning here"), "{err}");
}

/// The v1 session protocol (happy-wire's) and this repository's v2.
const V1: &str = "examples/happy-wire/schema";
const V2: &str = "schema";

/// The rows of the markdown table under `## {heading}` (or the file's only table when `heading` is empty), cells
/// trimmed, header and rule dropped.
fn md_rows(text: &str, heading: &str) -> Vec<Vec<String>> {
    let body = if heading.is_empty() {
        text
    } else {
        let start = text.find(&format!("## {heading}\n")).unwrap_or_else(|| panic!("no `## {heading}`"));
        &text[start..]
    };
    body.lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| l.trim().trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect())
        .collect()
}

fn v1_v2_json() -> Value {
    let (code, out, err) = wiregen(&root(), &["diff", "--format", "json", "--policy", "none", V1, V2]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("json")
}

#[test]
fn the_v1_to_v2_diff_reproduces_the_seeds_summary_and_removed_table() {
    let v = v1_v2_json();
    let rows = v["rows"].as_array().expect("rows");
    let seed = std::fs::read_to_string(root().join("tests/fixtures/seed-tables.md")).expect("seed tables");
    let summary = md_rows(&seed, "Event Type Summary");
    assert_eq!(summary.len(), 14);
    let mut failures = Vec::new();
    for r in &summary {
        let (category, tag, roles, new) = (&r[0], r[1].trim_matches('`'), &r[2], &r[3]);
        let Some(row) = rows.iter().find(|x| x["t"] == tag) else {
            failures.push(format!("{tag}: no row"));
            continue;
        };
        // "renamed, added `agentId`" -> the word and the note.
        let (word, note) = new.split_once([',', ' ']).map_or((new.as_str(), ""), |(w, n)| (w, n.trim()));
        let note = note.trim_start_matches('(').trim_end_matches(')');
        let got_note = row["note"].as_str().unwrap_or_default();
        if row["status"] != word || got_note != note {
            failures.push(format!("{tag}: seed `{new}`, diff `{}` `{got_note}`", row["status"]));
        }
        if row["category"] != category.as_str()
            || row["roles"].as_array().map(|a| a.iter().map(|r| r.as_str().unwrap_or("")).collect::<Vec<_>>().join("/"))
                != Some(roles.clone())
        {
            failures.push(format!("{tag}: category or roles differ: {row}"));
        }
    }
    // Nothing in v2 is left out of the seed's table, and nothing of v1 is gone without a rename.
    let events: Vec<&Value> = rows.iter().filter(|r| !r["t"].is_null()).collect();
    assert_eq!(events.len(), summary.len(), "{rows:?}");
    let removed = md_rows(&std::fs::read_to_string(fixtures().join("v1-v2/seed-removed.md")).expect("removed"), "");
    assert_eq!(removed.len(), 4);
    let got = v["removed"].as_array().expect("removed");
    assert_eq!(got.len(), removed.len());
    for (r, g) in removed.iter().zip(got) {
        if g["what"] != r[0].as_str() || g["why"] != r[1].as_str() {
            failures.push(format!("removed: seed {r:?}, diff {} / {}", g["what"], g["why"]));
        }
    }
    // What the seed's tables say of v1, checked against v1: only `start`/`stop` exist there, renamed.
    let in_v1: Vec<(&str, bool)> = got
        .iter()
        .flat_map(|g| g["items"].as_array().into_iter().flatten())
        .map(|i| (i["thing"].as_str().unwrap_or(""), !i["in_old"].is_null() && i["renamed"] == true))
        .collect();
    assert_eq!(
        in_v1,
        [
            ("event `ready`", false),
            ("event `start`", true),
            ("event `stop`", true),
            ("`machineId` on `session-control-changed`", false),
            ("event `usage-report`", false)
        ]
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_v2_x_status_is_the_diff_against_v1() {
    let v = v1_v2_json();
    let mut checked = 0;
    for e in std::fs::read_dir(root().join("schema/events")).expect("events") {
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(e.expect("entry").path()).expect("read")).expect("json");
        let tag = s["properties"]["t"]["const"].as_str().expect("tag");
        let row = v["rows"].as_array().expect("rows").iter().find(|r| r["t"] == tag).expect("a row per event");
        assert_eq!(s["x-status"], row["status"], "{tag}: x-status against the diff from v1");
        assert_eq!(s["x-status-note"], row["note"], "{tag}: x-status-note against the diff from v1");
        checked += 1;
    }
    assert_eq!(checked, 14);
}

#[test]
fn the_v1_to_v2_diff_golden() {
    let mut text = String::from("# the v1 session protocol (examples/happy-wire) -> v2 (schema/)\n");
    for format in ["text", "markdown"] {
        let (code, out, err) = wiregen(&root(), &["diff", "--format", format, "--policy", "backward", V1, V2]);
        assert!(err.is_empty(), "{err}");
        text.push_str(&format!("$ wiregen diff --format {format} --policy backward {V1} {V2}\n{out}(exit {code})\n"));
    }
    golden::check_golden(&fixtures().join("v1-v2/diff.golden"), &text).unwrap_or_else(|e| panic!("{e}"));
    // The README quotes the totals.
    let (_, out, _) = wiregen(&root(), &["diff", "--format", "json", "--policy", "backward", V1, V2]);
    let json: Value = serde_json::from_str(&out).expect("json");
    let changes = json["changes"].as_array().expect("changes");
    let fails = changes.iter().filter(|c| c["fails_policy"] == true).count();
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let said = format!("In all, {} changes, {fails} of them fail `backward`", changes.len());
    assert!(readme.contains(&said), "the README's v1 -> v2 totals: `{said}`");
    let removed = changes.iter().filter(|c| c["rule"] == "type-removed").count();
    let said = format!("{removed} of them are\n`type-removed`");
    assert!(readme.contains(&said), "the README's count of removed types: `{said}`");
    // Without the types beside the protocol: the protocol's own file against v2.
    let v1_file = format!("{V1}/sessionProtocol.schema.json");
    let (_, out, _) = wiregen(&root(), &["diff", "--format", "json", "--policy", "backward", &v1_file, V2]);
    let json: Value = serde_json::from_str(&out).expect("json");
    let changes = json["changes"].as_array().expect("changes");
    let fails = changes.iter().filter(|c| c["fails_policy"] == true).count();
    let said = format!("without them, {} changes, {fails} failing", changes.len());
    assert!(readme.contains(&said), "the README's v1 -> v2 totals without the other types: `{said}`");
}

#[test]
fn the_readme_gives_every_rule_an_example() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let start = readme.find("## Evolving the protocol").expect("the section");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let missing: Vec<&str> =
        ChangeRule::ALL.iter().map(|r| r.id()).filter(|id| !section.contains(&format!("| `{id}` |"))).collect();
    assert!(missing.is_empty(), "rules without a row in the README's rule table: {missing:?}");
}

#[path = "support/files.rs"]
mod files;
#[path = "support/rng.rs"]
mod rng;
#[path = "support/soundness.rs"]
mod soundness;

/// The diff's breaks are sound: for a schema and a changed copy of it (one to three edits of meaning to one
/// file: each JSON-Schema-Test-Suite case several times, and the session protocol), every instance the old
/// schema accepts and the new one refuses (the suite's instances, the protocol's stream lines, and small changes
/// of them, checked by the engine) is answered by a change that breaks old producers, and every instance only the
/// new one accepts by one that breaks old consumers.
///
/// `WIREGEN_DIFF_SOUNDNESS_ROUNDS` (default 3 per suite case, forty times that for the protocol) and
/// `WIREGEN_DIFF_SOUNDNESS_SEED` run a longer or another soak.
#[test]
fn the_diff_names_who_breaks_for_every_instance_one_side_accepts_and_the_other_refuses() {
    let rounds = rng::env_number("WIREGEN_DIFF_SOUNDNESS_ROUNDS", 3);
    let seed = rng::env_number("WIREGEN_DIFF_SOUNDNESS_SEED", 0xD1FF);
    let mut rng = rng::Rng(seed << 1 | 1);
    let tmp = std::env::temp_dir().join(format!("wiregen-diff-soundness-{}", std::process::id()));
    let mut s = soundness::Soundness::default();
    let suite = root().join("tests/jsts/suite/draft2020-12");
    for p in files::json_in(&suite) {
        let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&p).expect("suite file")).expect("json");
        for (ci, c) in cases.iter().enumerate() {
            let mut schema = c["schema"].clone();
            let Some(top) = schema.as_object_mut() else { continue };
            top.insert("x-root".into(), Value::Bool(true));
            let instances: Vec<(Option<String>, Value)> =
                c["tests"].as_array().into_iter().flatten().map(|t| (None, t["data"].clone())).collect();
            let what = format!("{} case {ci}", p.file_name().expect("name").to_string_lossy());
            for _ in 0..rounds {
                s.try_pair(&mut rng, &what, &tmp, &[("root.json".into(), schema.clone())], &instances, &[]);
            }
        }
    }
    let suite_pairs = s.pairs;
    // The session protocol, with its stream lines that are valid messages.
    let dir = root().join("schema");
    let protocol: Vec<(String, Value)> = files_below(&dir)
        .into_iter()
        .map(|(rel, text)| (rel, serde_json::from_str(&text).expect("a schema file")))
        .collect();
    let (mut lines, mut streams) = (Vec::new(), Vec::new());
    for p in files_below(&root().join("tests/fixtures/streams")).into_iter().filter(|(r, _)| r.ends_with(".jsonl")) {
        lines.extend(p.1.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).map(|v| (None, v)));
        streams.push((p.0.clone(), p.1.lines().map(String::from).collect::<Vec<_>>()));
    }
    for _ in 0..rounds * 40 {
        s.try_pair(&mut rng, "schema", &tmp, &protocol, &lines, &streams);
    }
    // The happy-wire package: types without a root, each fixture checked against the type it names.
    let protocol_pairs = s.pairs - suite_pairs;
    let happy: Vec<(String, Value)> = files_below(&root().join("examples/happy-wire/schema"))
        .into_iter()
        .map(|(rel, text)| (rel, serde_json::from_str(&text).expect("a schema file")))
        .collect();
    let mut typed = Vec::new();
    for (_, text) in files_below(&root().join("examples/happy-wire/fixtures")) {
        let f: Value = serde_json::from_str(&text).expect("a fixture");
        if let (Some(ty), Some(v)) = (f["type"].as_str(), f.get("value")) {
            typed.push((Some(ty.to_string()), v.clone()));
        }
    }
    assert!(typed.len() > 50, "the happy-wire fixtures name their types");
    for _ in 0..rounds * 40 {
        s.try_pair(&mut rng, "happy-wire", &tmp, &happy, &typed, &[]);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    println!(
        "{} schema pairs ({suite_pairs} of suite cases, {protocol_pairs} of the protocol), {} instances and streams compared, {} on which the two sides \
         differ ({} streams)",
        s.pairs, s.compared, s.differing, s.streams_differing
    );
    assert!(
        s.pairs > 300 && s.differing > 300,
        "the edits must change meaning: {} pairs, {} differing",
        s.pairs,
        s.differing
    );
    assert!(protocol_pairs > rounds as usize && s.streams_differing > 0, "the protocol must be changed too");
    assert!(s.pairs > suite_pairs + protocol_pairs + rounds as usize, "happy-wire must be changed too");
    assert!(s.missed.is_empty(), "{} schema pair(s) with a missed break:\n{}", s.missed.len(), s.missed.join("\n\n"));
}

/// The files below `dir` (relative path with `/`, text), sorted.
fn files_below(dir: &Path) -> Vec<(String, String)> {
    files::relative(dir).into_iter().map(|(rel, p)| (rel, std::fs::read_to_string(p).expect("text"))).collect()
}
