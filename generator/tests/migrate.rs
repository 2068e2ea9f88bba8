//! `wiregen migrate` from the v1 session protocol (happy-wire's) to v2 (`schema/`): the seed's Realistic Flow
//! written the v1 way, a stream of lossy v1 lines, and every valid v1 envelope fixture of the example; each
//! migrated stream is a golden and passes `wiregen validate` (`--stream` for the session).
//!
//! Update the goldens with `WIREGEN_UPDATE_GOLDEN=1 cargo test -p wiregen --test migrate` (ignored when `CI` is set).

#[path = "support/golden.rs"]
mod golden;
#[path = "support/v1_fixtures.rs"]
mod v1_fixtures;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_path_buf()
}

fn fixtures() -> PathBuf {
    root().join("tests/fixtures/migrate")
}

const V1: &str = "examples/happy-wire/schema";
const V2: &str = "schema";

fn wiregen(args: &[&str], stdin: Option<&[u8]>) -> (i32, String, String) {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wiregen"));
    cmd.current_dir(root()).args(args);
    cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("run wiregen");
    let input = stdin.unwrap_or_default().to_vec();
    let mut w = child.stdin.take().expect("stdin");
    let t = std::thread::spawn(move || w.write_all(&input));
    let out = child.wait_with_output().expect("wait");
    t.join().expect("writer").expect("write");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

/// Migrates `input` (a path relative to the repo root, or `-` with `stdin`) in one mode; the golden section and
/// the migrated stream, which must pass `wiregen validate` (with `stream` also `--stream`).
fn migrate(input: &str, stdin: Option<&[u8]>, on_loss: &str, stream: bool) -> (String, i32, String) {
    let mut args = vec!["migrate", "--from", V1, "--to", V2, "--on-loss", on_loss];
    if stream {
        args.push("--stream");
    }
    args.push(input);
    let (code, out, err) = wiregen(&args, stdin);
    assert!(code == 0 || code == 1, "{input} {on_loss}: exit {code}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let mut check = vec!["validate"];
    if stream {
        check.push("--stream");
    }
    let (vcode, vout, verr) = wiregen(&check, Some(out.as_bytes()));
    assert_eq!(vcode, 0, "{input} {on_loss}: the migrated stream validates:\n{vout}{verr}\n{out}");
    let section = format!(
        "$ {}\n# exit {code}; stderr:\n{err}# stdout:\n{out}",
        args.join(" ").replacen("migrate", "wiregen migrate", 1)
    );
    (section, code, out)
}

fn lines(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

#[test]
fn the_realistic_flow_written_the_v1_way_migrates_without_loss_and_checks_as_a_v2_stream() {
    let input = "tests/fixtures/migrate/v1-realistic-flow.jsonl";
    let v1 = lines(&std::fs::read_to_string(root().join(input)).expect("flow"));
    let (section, code, out) = migrate(input, None, "refuse", true);
    assert_eq!(code, 0, "{section}");
    let v2 = lines(&out);
    assert_eq!(v1.len(), v2.len(), "every line migrated");
    for (a, b) in v1.iter().zip(&v2) {
        let id = &a["id"];
        assert_eq!(&b["id"], id);
        // The v1 envelope fields the app uses survive; usage in v2's names, with the same numbers.
        for k in ["claudeUuid", "codexItemId"] {
            assert_eq!(a[k], b[k], "{id}: {k}");
        }
        assert_eq!(a["ev"]["mimeType"], b["ev"]["mimeType"], "{id}: mimeType");
        if let Some(u) = a["usage"].as_object() {
            for (k, x) in u {
                let camel: String = k
                    .split('_')
                    .enumerate()
                    .map(|(i, w)| if i == 0 { w.to_string() } else { w[..1].to_uppercase() + &w[1..] })
                    .collect();
                assert_eq!(&b["usage"][&camel], x, "{id}: usage.{k} -> usage.{camel}");
            }
        }
        // start/stop: renamed, the envelope's subagent moved into agentId.
        if matches!(a["ev"]["t"].as_str(), Some("start" | "stop")) {
            assert_eq!(b["ev"]["t"], format!("subagent-{}", a["ev"]["t"].as_str().unwrap_or_default()));
            assert_eq!(b["ev"]["agentId"], a["subagent"], "{id}");
            assert!(b.get("subagent").is_none(), "{id}: moved, not copied");
        }
    }
    let counts = |k: &str, v: &[Value]| v.iter().filter(|m| !m[k].is_null() || !m["ev"][k].is_null()).count();
    for k in ["claudeUuid", "codexItemId", "usage", "mimeType"] {
        assert!(counts(k, &v1) > 0 && counts(k, &v1) == counts(k, &v2), "{k} survives on every line");
    }
    golden::check_golden(&fixtures().join("v1-realistic-flow.golden"), &section).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn lossy_lines_are_reported_with_rule_and_pointer_and_never_invented() {
    let input = "tests/fixtures/migrate/v1-lossy.jsonl";
    let mut text = String::new();
    for mode in ["refuse", "drop"] {
        let (section, code, out) = migrate(input, None, mode, false);
        assert_eq!(code, 1, "some line is refused in either mode");
        // l1 (a start without the subagent to move) is refused in both modes: agentId is never made up.
        assert!(section.contains(":1: refused: /ev/agentId [field-moved]"), "{section}");
        assert!(!out.contains("\"l1\""), "{out}");
        // l6's event holds an `agentId` v1 strips (its readers saw "sa1 started"): it is dropped with a warning,
        // and the envelope's `subagent` moves in. l7 has both names of a rename in an object v1 keeps open: the
        // line is refused, neither value written over the other.
        assert!(section.contains(":6: warning: dropped: /ev/agentId [additional-property] (old)"), "{section}");
        let l6 = lines(&out).into_iter().find(|v| v["id"] == "l6").expect("l6 is written");
        assert_eq!(l6["ev"]["agentId"], "sa1", "{l6}");
        assert!(section.contains(":7: refused: /usage/inputTokens [field-renamed]"), "{section}");
        assert!(!out.contains("\"l7\""), "{out}");
        let written = lines(&out).len();
        // l3 (only keys v1 strips) and l6 in both modes; l2 (a key v2 does not have) only when dropping.
        assert_eq!(written, if mode == "drop" { 3 } else { 2 }, "{section}");
        text.push_str(&section);
    }
    golden::check_golden(&fixtures().join("v1-lossy.golden"), &text).unwrap_or_else(|e| panic!("{e}"));
}

fn v1_envelope_fixtures() -> Vec<(String, Value)> {
    v1_fixtures::v1_envelope_fixtures(&root())
}

#[test]
fn every_valid_v1_envelope_fixture_migrates_or_is_refused_with_its_reasons() {
    let fx = v1_envelope_fixtures();
    assert!(fx.len() >= 15, "{}", fx.len());
    let input: String = fx.iter().map(|(_, v)| format!("{v}\n")).collect();
    let mut text = String::from("# the valid sessionEnvelopeSchema fixtures of examples/happy-wire, one per line:\n");
    for (i, (n, _)) in fx.iter().enumerate() {
        text.push_str(&format!("#   line {}: {n}\n", i + 1));
    }
    for mode in ["refuse", "drop"] {
        let (section, _, out) = migrate("-", Some(input.as_bytes()), mode, false);
        let summary = section.lines().find(|l| l.starts_with("wiregen migrate:")).expect("a summary");
        assert!(summary.contains(&format!("{} lines", fx.len())), "{summary}");
        // Every line is accounted for: written, or refused with at least one located note.
        let written = lines(&out).len();
        let refused_lines: std::collections::BTreeSet<&str> =
            section.lines().filter(|l| l.contains(": refused: ")).filter_map(|l| l.split(':').nth(1)).collect();
        assert_eq!(written + refused_lines.len(), fx.len(), "{section}");
        text.push_str(&section);
    }
    golden::check_golden(&fixtures().join("v1-example-fixtures.golden"), &text).unwrap_or_else(|e| panic!("{e}"));
}

/// `--out` is replaced only once the whole input is migrated, so a file can be migrated in place (it used to be
/// truncated before it was read: zero lines, exit 0, the history gone), a link is written through, and an output
/// that cannot be written leaves nothing behind.
#[test]
fn out_may_be_the_input_and_is_replaced_only_at_the_end() {
    let dir = std::env::temp_dir().join(format!("wiregen-migrate-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let flow = root().join("tests/fixtures/migrate/v1-realistic-flow.jsonl");
    let (code, expected, err) = wiregen(&["migrate", "--from", V1, "--to", V2, flow.to_str().expect("path")], None);
    assert_eq!(code, 0, "{err}");
    let in_place = dir.join("session.jsonl");
    std::fs::copy(&flow, &in_place).expect("copy");
    let p = in_place.to_str().expect("path");
    let (code, _, err) = wiregen(&["migrate", "--from", V1, "--to", V2, "--out", p, p], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&in_place).expect("read"), expected);
    #[cfg(unix)]
    {
        let target = dir.join("target.jsonl");
        std::fs::copy(&flow, &target).expect("copy");
        let link = dir.join("link.jsonl");
        std::os::unix::fs::symlink("target.jsonl", &link).expect("symlink");
        let (code, _, err) = wiregen(
            &[
                "migrate",
                "--from",
                V1,
                "--to",
                V2,
                "--out",
                link.to_str().expect("path"),
                target.to_str().expect("path"),
            ],
            None,
        );
        assert_eq!(code, 0, "{err}");
        assert!(std::fs::symlink_metadata(&link).expect("link").file_type().is_symlink(), "the link stays a link");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), expected);
    }
    let nowhere = dir.join("no-such-dir/out.jsonl");
    let (code, _, err) =
        wiregen(&["migrate", "--from", V1, "--to", V2, "--out", nowhere.to_str().expect("path"), p], None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no-such-dir/out.jsonl"), "{err}");
    let (code, _, err) = wiregen(&["migrate", "--from", V1, "--to", V2, "--out", dir.to_str().expect("path"), p], None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is a directory"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dir).expect("list").filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().contains("wiregen-tmp")), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--out` naming what is not a file (a FIFO here, `/dev/null` or `/dev/stdout` on a pipe for a user) is written
/// to as a shell's `>` would: migrate staged a file beside it and renamed it over it, which as root replaced
/// `/dev/null` with a regular file holding the stream (and `--out /dev/stdout` into a pipe printed nothing). An
/// output that cannot be written is named as the output, not the input.
#[test]
#[cfg(unix)]
fn out_to_a_fifo_is_written_through_and_an_output_error_names_the_output() {
    let dir = std::env::temp_dir().join(format!("wiregen-migrate-fifo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let flow = root().join("tests/fixtures/migrate/v1-realistic-flow.jsonl");
    let flow = flow.to_str().expect("path");
    let (code, expected, err) = wiregen(&["migrate", "--from", V1, "--to", V2, flow], None);
    assert_eq!(code, 0, "{err}");
    let fifo = dir.join("out.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).expect("read the FIFO"))
    };
    let (code, out, err) =
        wiregen(&["migrate", "--from", V1, "--to", V2, "--out", fifo.to_str().expect("path"), flow], None);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert_eq!(reader.join().expect("reader"), expected);
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&std::fs::metadata(&fifo).expect("meta").file_type()));
    let left: Vec<_> = std::fs::read_dir(&dir).expect("list").filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert_eq!(left.len(), 1, "{left:?}");
    let _ = std::fs::remove_file(&fifo);
    // A link to nothing is refused and stays a link (it was replaced by a file, and a loop too).
    let dangling = dir.join("dangling.jsonl");
    std::os::unix::fs::symlink(dir.join("nowhere/v2.jsonl"), &dangling).expect("link");
    let (code, _, err) =
        wiregen(&["migrate", "--from", V1, "--to", V2, "--out", dangling.to_str().expect("path"), flow], None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a symbolic link that leads to no file"), "{err}");
    assert!(std::fs::symlink_metadata(&dangling).expect("link").file_type().is_symlink());
    // `--out /dev/stdout` on a file the shell opened: written after what is there, as the shell's descriptor
    // writes (replaced by path, the file lost what came before; on a deleted file, /dev got a regular file).
    let shell = dir.join("shell.out");
    std::fs::write(&shell, "HEADER\n").expect("write");
    let stdout = std::fs::OpenOptions::new().append(true).open(&shell).expect("open");
    let o = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(root())
        .args(["migrate", "--from", V1, "--to", V2, "--out", "/dev/stdout", flow])
        .stdout(stdout)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&shell).expect("read"), format!("HEADER\n{expected}"));
    // Two migrations into one file at once take turns: each succeeds, and the file is whole.
    let both = dir.join("both.jsonl");
    let runs: Vec<_> = (0..2)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_wiregen"))
                .current_dir(root())
                .args(["migrate", "--from", V1, "--to", V2, "--out", both.to_str().expect("path"), flow])
                .spawn()
                .expect("spawn")
        })
        .collect();
    for mut r in runs {
        assert!(r.wait().expect("wait").success());
    }
    assert_eq!(std::fs::read_to_string(&both).expect("read"), expected);
    // stdout on a full disk: the output, not the input, could not be written.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    let o = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(root())
        .args(["migrate", "--from", V1, "--to", V2, flow])
        .stdout(full)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("wiregen migrate: writing the output: No space left on device"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_line_longer_than_64_mib_is_an_error_and_the_output_is_left_as_it_was() {
    let dir = std::env::temp_dir().join(format!("wiregen-migrate-long-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let flow = std::fs::read(root().join("tests/fixtures/migrate/v1-realistic-flow.jsonl")).expect("read");
    let mut input = flow.clone();
    input.resize(input.len() + (65 << 20), b' ');
    let (src, out) = (dir.join("long.jsonl"), dir.join("out.jsonl"));
    std::fs::write(&src, &input).expect("write");
    std::fs::write(&out, b"kept\n").expect("write");
    let (s, o) = (src.to_str().expect("path"), out.to_str().expect("path"));
    let (code, _, err) = wiregen(&["migrate", "--from", V1, "--to", V2, "--out", o, s], None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a line is longer than 64 MiB"), "{err}");
    assert_eq!(std::fs::read(&out).expect("read"), b"kept\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The text report is safe to print: a key holding control characters (a terminal escape, a newline) is written
/// escaped, so input cannot forge report lines; an error about the whole message is at `(root)`, as `validate`
/// says it.
#[test]
fn the_text_report_escapes_pointers_and_names_the_root() {
    // (In `usage`, which v1 keeps open and v2 closes: v1 strips unknown keys elsewhere.)
    let input = b"{\"id\":\"m1\",\"time\":1,\"role\":\"agent\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1,\"\\u001b[31mx\\n\":1},\"ev\":{\"t\":\"text\",\"text\":\"hi\"}}\n[1]\n";
    let (code, out, err) = wiregen(&["migrate", "--from", V1, "--to", V2, "-"], Some(input));
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty());
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(lines[0].starts_with("<stdin>:1: refused: /usage/\\u{001B}[31mx\\u{000A} [additional-property]"), "{err}");
    assert!(!err.contains('\u{1b}'), "no raw escape reaches the terminal");
    assert!(lines[1].starts_with("<stdin>:2: refused: (root) [type]"), "{err}");
}

/// A line with thousands of properties NEW does not have: with `--on-loss drop` every one is dropped (in one pass
/// over the object, the others in their order) and the line gets 101 notes, the last counting the ones not listed;
/// refused, the same cap holds.
#[test]
fn a_line_with_many_lost_properties_gets_a_bounded_report() {
    let mut usage = serde_json::Map::new();
    usage.insert("input_tokens".into(), 1.into());
    for i in 0..5_000 {
        usage.insert(format!("k{i}"), i.into());
    }
    usage.insert("output_tokens".into(), 2.into());
    let line = serde_json::json!({"id": "abcdefghij", "time": 1, "role": "agent",
        "ev": {"t": "text", "text": "hi"}, "usage": usage});
    let input = format!("{line}\n");
    for on_loss in ["drop", "refuse"] {
        let (code, out, err) = wiregen(
            &["migrate", "--from", V1, "--to", V2, "--on-loss", on_loss, "--format", "json", "-"],
            Some(input.as_bytes()),
        );
        let report: Value = serde_json::from_str(&err).unwrap_or_else(|e| panic!("{on_loss}: {e}: {err}"));
        assert_eq!(code, if on_loss == "drop" { 0 } else { 1 }, "{on_loss}");
        let notes = report["summary"]["notes"].as_array().expect("notes");
        assert_eq!(notes.len(), 101, "{on_loss}");
        let (written, with_loss) = if on_loss == "drop" { (1, 1) } else { (0, 0) };
        assert_eq!(report["summary"]["written"], written, "{on_loss}");
        assert_eq!(report["summary"]["withLoss"], with_loss, "{on_loss}: the key is camelCase like every JSON record");
        assert!(notes[100]["message"].as_str().unwrap().ends_with("; and 4899 more notes on this line, not listed"));
        if on_loss == "drop" {
            assert_eq!(
                lines(&out),
                [serde_json::json!({"id": "abcdefghij", "time": 1, "role": "agent",
                "ev": {"t": "text", "text": "hi"}, "usage": {"inputTokens": 1, "outputTokens": 2}})]
            );
        } else {
            assert_eq!(out, "");
        }
    }
}

/// A line with thousands of unknown keys where the old side strips them (happy-wire's envelope and events): all
/// dropped in one pass over each object, the known keys in their order. Each was removed on its own, moving every
/// later key, so the time grew with the square of their number (helper 105: 100,000 keys took 19.9 s; measured
/// after the change in the closing note of stop 69).
#[test]
fn thousands_of_keys_the_old_side_strips_are_dropped_in_one_pass() {
    let mut env = serde_json::Map::new();
    env.insert("id".into(), "m1".into());
    env.insert("time".into(), 1.into());
    env.insert("role".into(), "agent".into());
    let mut ev = serde_json::Map::new();
    ev.insert("t".into(), "text".into());
    for i in 0..20_000 {
        env.insert(format!("k{i}"), i.into());
        ev.insert(format!("e{i}"), i.into());
    }
    ev.insert("text".into(), "x".into());
    env.insert("ev".into(), Value::Object(ev));
    let input = format!("{}\n", Value::Object(env));
    let (code, out, err) = wiregen(&["migrate", "--from", V1, "--to", V2, "-"], Some(input.as_bytes()));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&out),
        [serde_json::json!({"id": "m1", "time": 1, "role": "agent", "ev": {"t": "text", "text": "x"}})]
    );
}

#[test]
fn what_migrate_strips_is_what_happy_wires_own_parser_returns() {
    // Every valid fixture of the v1 example carries happy-wire's own parsed value (`parsed`, what its Zod returns):
    // the keys `stripped` removes must leave exactly that.
    let m = wiregen::load::load(&root().join("examples/happy-wire/schema")).expect("v1");
    let dir = root().join("examples/happy-wire/fixtures");
    let (mut checked, mut with_keys) = (0, 0);
    let mut failures = Vec::new();
    for e in std::fs::read_dir(&dir).expect("fixtures") {
        let path = e.expect("entry").path();
        let f: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        if f["valid"] != true {
            continue;
        }
        let ty = m.type_named(f["type"].as_str().expect("type")).expect("a type of the model");
        let mut v = f["value"].clone();
        let gone = wiregen::migrate::stripped(&m, ty, &mut v);
        if v != f["parsed"] {
            failures.push(format!("{}: stripped {gone:?} to {v}, happy-wire parses {}", path.display(), f["parsed"]));
        }
        checked += 1;
        with_keys += usize::from(!gone.is_empty());
    }
    assert!(checked >= 150 && with_keys >= 5, "{checked} fixtures, {with_keys} with stripped keys");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A schema keeps its declarations from one version to the next: v2 still says that `subagent-start.agentId`
/// moved from v1's envelope `subagent`. Migrating from a version that already has `agentId` (here v2 itself, as
/// a v3 that changed nothing else would see it) must not take that step again: in v2 the envelope's `subagent`
/// of a `subagent-start` is the parent subagent, and both are present in a nested start. Every valid stream
/// fixture migrates to itself.
#[test]
fn a_move_declared_for_an_older_version_is_not_taken_again() {
    let dir = root().join("tests/fixtures/streams");
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).expect("streams") {
        let p = e.expect("entry").path();
        let name = p.file_name().expect("name").to_string_lossy().into_owned();
        if !(name.starts_with("valid-") && name.ends_with(".jsonl")) {
            continue;
        }
        let input = format!("tests/fixtures/streams/{name}");
        let (code, out, err) = wiregen(&["migrate", "--from", V2, "--to", V2, &input], None);
        assert_eq!(code, 0, "{name}: {err}");
        let text = std::fs::read_to_string(&p).expect("stream");
        assert_eq!(lines(&out), lines(&text), "{name}: migrated to itself");
        checked += 1;
    }
    assert!(checked >= 10, "the valid stream fixtures: {checked}");
    // The nested start is among them.
    let nested = std::fs::read_to_string(dir.join("valid-nested-subagents.jsonl")).expect("nested");
    assert!(lines(&nested).iter().any(|v| v["ev"]["t"] == "subagent-start" && v.get("subagent").is_some()));
}

#[test]
fn a_side_that_does_not_load_is_reported_on_stderr_never_into_the_stream() {
    // stdout is the migrated stream: the located diagnostics of a broken side go to stderr, in either format.
    let broken = std::env::temp_dir().join(format!("wiregen-migrate-broken-{}", std::process::id()));
    std::fs::create_dir_all(&broken).expect("mkdir");
    std::fs::write(broken.join("envelope.schema.json"), "{ \"type\": ").expect("write");
    let to = broken.to_string_lossy().to_string();
    for format in ["text", "json"] {
        let (code, out, err) = wiregen(&["migrate", "--from", V1, "--to", &to, "--format", format, "-"], Some(b""));
        assert_eq!((code, out.as_str()), (2, ""), "{format}: {err}");
        assert!(err.contains("schema.invalid-json") || err.contains("invalid-json"), "{format}: {err}");
    }
    let _ = std::fs::remove_dir_all(&broken);
}

/// With `--format json` stderr holds JSON only, whatever stops the run: a side's diagnostics (one object a line,
/// as `validate` prints them, without the text closing line it once added), a side that is not a session
/// protocol, an input that cannot be read (each one `{"code": "error", "message"}`, helper 96).
#[test]
fn with_format_json_what_stops_the_run_is_json_on_stderr() {
    let broken = std::env::temp_dir().join(format!("wiregen-migrate-json-{}", std::process::id()));
    std::fs::create_dir_all(&broken).expect("mkdir");
    std::fs::write(broken.join("envelope.schema.json"), "{ \"type\": ").expect("write");
    let broken_side = broken.to_string_lossy().to_string();
    let cases: [(&[&str], &str); 3] = [
        (&["--to", &broken_side, "-"], "invalid-json"),
        (&["--to", "tests/fixtures/diff/base/types", "-"], "both sides must be session protocols"),
        (&["--to", V2, "tests/fixtures/migrate/no-such-file.jsonl"], "no-such-file.jsonl"),
    ];
    for (args, says) in cases {
        let mut all = vec!["migrate", "--from", V1];
        all.extend_from_slice(args);
        let (code, out, err) = wiregen(&[all.as_slice(), &["--format", "json"]].concat(), Some(b""));
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.trim().is_empty(), "{args:?}");
        for line in err.lines() {
            let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{args:?}: {e}: {line}"));
            assert!(v["code"].is_string() && v["message"].is_string(), "{args:?}: {line}");
        }
        // The text format says the same in text, the closing line included.
        all.extend_from_slice(&["--format", "text"]);
        let (code, _, text) = wiregen(&all, Some(b""));
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(text.contains("wiregen migrate: ") && text.contains(says), "{args:?}: {text}");
    }
    let _ = std::fs::remove_dir_all(&broken);
}

#[test]
fn with_stream_a_line_that_breaks_a_sequence_rule_of_new_is_refused_so_the_output_passes_the_stream_check() {
    // Every line of this stream passes the message rules; eight break v2's sequence rules, two as echoes of an
    // earlier one. Migrated to v2 itself, those are refused with the rule ids and lines `validate --stream` gives
    // (the lines were all written, and the output failed `--stream`), and what is written holds together.
    let input = "tests/fixtures/streams/invalid-echoes-point-to-their-cause.jsonl";
    let (code, out, err) = wiregen(&["migrate", "--stream", "--from", V2, "--to", V2, input], None);
    assert_eq!(code, 1, "{err}");
    // Without `--stream` each line is a message of its own: all ten are written.
    let (lcode, lout, lerr) = wiregen(&["migrate", "--from", V2, "--to", V2, input], None);
    assert_eq!((lcode, lines(&lout).len()), (0, 10), "{lerr}");
    let (vcode, vout, verr) = wiregen(&["validate", "--stream", "--format", "json", input], None);
    assert_eq!(vcode, 1, "{verr}");
    for rec in lines(&vout).iter().filter(|r| r["valid"] == false) {
        let (line, rule) = (rec["line"].as_u64().expect("line"), rec["errors"][0]["rule"].as_str().expect("rule"));
        let note = format!(
            "{input}:{line}: refused: {} [{rule}] (new): ",
            rec["errors"][0]["pointer"].as_str().expect("pointer")
        );
        assert!(err.contains(&note), "{note}\nin:\n{err}");
    }
    assert!(err.contains("(see line 1; follows from refused line 2)"), "{err}");
    assert_eq!(lines(&out).len(), 2);
    let (scode, sout, serr) = wiregen(&["validate", "--stream"], Some(out.as_bytes()));
    assert_eq!(scode, 0, "{sout}{serr}");
}

#[test]
fn with_stream_a_line_refused_for_any_reason_is_the_cause_of_the_lines_that_need_it() {
    // A line refused by OLD's rules (an unknown property, a repeated key) or one the upgrade cannot write (two
    // numbers that read as one double) is not in the output: the lines that need what it opened are refused as
    // following from it, as `validate --stream` says. The number-text one was taken by the sequence rules before
    // it was refused, so the `tool-call-end` after it was written and the output failed `validate --stream`.
    let start = r#"{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-start","bogus":1}}"#;
    let text = r#"{"id":"m2","time":2,"role":"agent","turn":"t1","ev":{"t":"text","text":"hi"}}"#;
    let (code, out, err) =
        wiregen(&["migrate", "--stream", "--from", V2, "--to", V2, "-"], Some(format!("{start}\n{text}\n").as_bytes()));
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("<stdin>:2: refused: /turn [turn.not-open] (new): agent message carries turn `t1`, but no turn is open (follows from refused line 1)"), "{err}");
    // `--format json` gives the cause as a field, as `validate --stream` does (it was only in the message).
    let (_, _, out) = wiregen(
        &["migrate", "--stream", "--format", "json", "--from", V2, "--to", V2, "-"],
        Some(format!("{start}\n{text}\n").as_bytes()),
    );
    let report: Value = serde_json::from_str(&out).expect("the report on stderr");
    let notes = report["summary"]["notes"].as_array().expect("notes");
    assert_eq!((notes[1]["rule"].as_str(), notes[1]["causedBy"].as_u64()), (Some("turn.not-open"), Some(1)), "{out}");
    assert!(notes[0].get("causedBy").is_none() && notes[0].get("related").is_none(), "{out}");
    let repeated = start.replace(r#","bogus":1}"#, r#"},"id":"m1""#);
    let (code, _, err) = wiregen(
        &["migrate", "--stream", "--from", V2, "--to", V2, "-"],
        Some(format!("{repeated}\n{text}\n").as_bytes()),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("(follows from refused line 1)"), "{err}");
    let turn = r#"{"id":"m0","time":0,"role":"agent","turn":"t1","ev":{"t":"turn-start"}}"#;
    let args = r#"{"a":12345678901234567890123,"b":12345678901234567890124}"#;
    let call = format!(
        r#"{{"id":"m1","time":1,"role":"agent","turn":"t1","usage":{{"input_tokens":3,"output_tokens":1}},"ev":{{"t":"tool-call-start","call":"c1","name":"n","title":"t","description":"d","args":{args}}}}}"#
    );
    let end = r#"{"id":"m2","time":2,"role":"agent","turn":"t1","ev":{"t":"tool-call-end","call":"c1"}}"#;
    let (code, out, err) = wiregen(
        &["migrate", "--stream", "--from", V1, "--to", V2, "-"],
        Some(format!("{turn}\n{call}\n{end}\n").as_bytes()),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("<stdin>:2: refused: /ev/args/a [number-text] (upgrade)"), "{err}");
    assert!(err.contains("<stdin>:3: refused: /ev/call [call.not-open] (new): tool call `c1` is not open (follows from refused line 2)"), "{err}");
    assert_eq!(lines(&out).len(), 1, "{out}");
    let (scode, sout, serr) = wiregen(&["validate", "--stream"], Some(out.as_bytes()));
    assert_eq!(scode, 0, "{sout}{serr}");
    // A v1 `start` refused for a repeated key, a byte order mark or its nesting is read in v2's names once
    // upgraded (a `subagent-start` of `agentId` `sa1`): the subagent's messages follow from it (they named no cause).
    let start = r#"{"id":"m2","time":2,"role":"agent","turn":"t1","subagent":"sa1","ev":{"t":"start","title":"x"}"#;
    let deep = format!(r#","deep":{}{}"#, "[".repeat(130), "]".repeat(130));
    for refused in [format!(r#"{start},"id":"m2"}}"#), format!("\u{feff}{start}}}"), format!("{start}{deep}}}")] {
        let inner = r#"{"id":"m3","time":3,"role":"agent","turn":"t1","subagent":"sa1","ev":{"t":"text","text":"in"}}"#;
        let stop = r#"{"id":"m4","time":4,"role":"agent","turn":"t1","subagent":"sa1","ev":{"t":"stop"}}"#;
        let input = format!("{turn}\n{refused}\n{inner}\n{stop}\n");
        let (code, _, err) = wiregen(&["migrate", "--stream", "--from", V1, "--to", V2, "-"], Some(input.as_bytes()));
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("<stdin>:3: refused: /subagent [subagent.not-running] (new): subagent `sa1` is not running (follows from refused line 2)"), "{err}");
        assert!(err.contains("<stdin>:4: refused: /ev/agentId [subagent.stop-not-running] (new): subagent `sa1` is not running (follows from refused line 2)"), "{err}");
    }
}

#[test]
fn numbers_are_written_as_the_line_wrote_them_and_an_unchanged_line_as_it_was_read() {
    // serde_json reads an integer past 64 bits, or a decimal with more digits than a double keeps, as the nearest
    // double: written from the parsed value, stored data changed without a note.
    let args = r#"{"big":12345678901234567890123,"over":18446744073709551616,"e":1e3,"pad":0.10,"neg":-0,"x":1.5E+2,"same":[1,1.0,1e0,10e-1,-0.0]}"#;
    let call = format!(
        r#"{{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{{"t":"tool-call-start","call":"c1","name":"n","title":"t","description":"d","args":{args}}}}}"#
    );
    // v1 -> v2 renames the snake_case usage keys: the line changes, its numbers do not.
    let renamed = call.replacen(r#""turn":"t1","#, r#""turn":"t1","usage":{"input_tokens":3,"output_tokens":1},"#, 1);
    let (_, code, out) = migrate("-", Some(format!("{renamed}\n").as_bytes()), "refuse", false);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(r#""usage":{"inputTokens":3,"outputTokens":1}"#), "{out}");
    assert!(out.contains(&format!(r#""args":{args}"#)), "{out}");
    // A line the upgrade leaves as it was is written byte for byte, its spaces included.
    let spaced = call.replace(r#""time":1"#, r#""time": 1"#);
    let (code, out, err) = wiregen(&["migrate", "--from", V2, "--to", V2, "-"], Some(format!("{spaced}\n").as_bytes()));
    assert_eq!((code, out), (0, format!("{spaced}\n")), "{err}");
}

#[test]
fn two_numbers_one_double_reads_as_are_refused_in_a_changed_line_never_merged() {
    let args = r#"{"a":12345678901234567890123,"b":12345678901234567890124,"c":1e3,"d":1000.0}"#;
    let line = format!(
        r#"{{"id":"m1","time":1,"role":"agent","turn":"t1","usage":{{"input_tokens":3,"output_tokens":1}},"ev":{{"t":"tool-call-start","call":"c1","name":"n","title":"t","description":"d","args":{args}}}}}"#
    );
    let (code, out, err) =
        wiregen(&["migrate", "--from", V1, "--to", V2, "--format", "json", "-"], Some(format!("{line}\n").as_bytes()));
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    let report: Value = serde_json::from_str(&err).expect("a JSON report");
    let notes = &report["summary"]["notes"];
    assert_eq!(notes.as_array().map(Vec::len), Some(1), "{err}");
    assert_eq!(notes[0]["rule"], "number-text", "{err}");
    assert_eq!(notes[0]["pointer"], "/ev/args/a", "{err}");
    assert!(notes[0]["message"]
        .as_str()
        .is_some_and(|m| m.contains("`12345678901234567890123` and `12345678901234567890124`")));
    // `1e3` and `1000.0` are one number written two ways: each keeps its own text.
    let alike = line.replace(r#""a":12345678901234567890123,"b":12345678901234567890124,"#, "");
    let (code, out, err) = wiregen(&["migrate", "--from", V1, "--to", V2, "-"], Some(format!("{alike}\n").as_bytes()));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(r#""args":{"c":1e3,"d":1000.0}"#), "{out}");
    // The two named are two numbers: not `1.5` and `1.50`, one number, before the one that differs (helper 124).
    let spelled = line.replace(
        r#""a":12345678901234567890123,"b":12345678901234567890124,"#,
        r#""a":1.5,"b":1.50,"e":1.500000000000000000001,"#,
    );
    let (code, _, err) = wiregen(&["migrate", "--from", V1, "--to", V2, "-"], Some(format!("{spelled}\n").as_bytes()));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("the numbers `1.5` and `1.500000000000000000001` of this line"), "{err}");
}

#[test]
fn out_dash_is_stdout_not_a_file_named_dash() {
    let flow = root().join("tests/fixtures/migrate/v1-realistic-flow.jsonl");
    let flow = flow.to_str().expect("path");
    let (code, expected, err) = wiregen(&["migrate", "--from", V1, "--to", V2, flow], None);
    assert_eq!(code, 0, "{err}");
    let dir = std::env::temp_dir().join(format!("wiregen-migrate-dash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let out = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(&dir)
        .args(["migrate", "--from"])
        .arg(root().join(V1))
        .arg("--to")
        .arg(root().join(V2))
        .args(["--out", "-", flow])
        .output()
        .expect("run wiregen");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).expect("utf-8"), expected);
    assert!(!dir.join("-").exists(), "a file named `-` was written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_pretty_printed_envelope_is_one_message_as_validate_reads_it_and_comes_out_as_one_line() {
    let pretty = "{\n  \"id\": \"m1\",\n  \"time\": 1,\n  \"role\": \"agent\",\n  \"turn\": \"t1\",\n  \"usage\": {\"input_tokens\": 3, \"output_tokens\": 1},\n  \"ev\": {\"t\": \"text\", \"text\": \"hi\"}\n}\n";
    let (code, out, err) = wiregen(&["migrate", "--from", V1, "--to", V2, "-"], Some(pretty.as_bytes()));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "{\"id\":\"m1\",\"time\":1,\"role\":\"agent\",\"turn\":\"t1\",\"usage\":{\"inputTokens\":3,\"outputTokens\":1},\"ev\":{\"t\":\"text\",\"text\":\"hi\"}}\n"
    );
    // Unchanged by the upgrade, it is still written as one line.
    let v2 = "{\n  \"id\": \"m1\",\n  \"time\": 1,\n  \"role\": \"user\",\n  \"ev\": {\"t\": \"text\", \"text\": \"hi\"}\n}\n";
    let (code, out, err) = wiregen(&["migrate", "--from", V2, "--to", V2, "-"], Some(v2.as_bytes()));
    assert_eq!(
        (code, out.as_str()),
        (0, "{\"id\":\"m1\",\"time\":1,\"role\":\"user\",\"ev\":{\"t\":\"text\",\"text\":\"hi\"}}\n"),
        "{err}"
    );
    // A stray comma: where the document breaks is said on the first line's note, as validate says it.
    let broken = v2.replace("\"hi\"}\n", "\"hi\"},\n");
    let (code, _, err) = wiregen(&["migrate", "--from", V2, "--to", V2, "-"], Some(broken.as_bytes()));
    assert_eq!(code, 1, "{err}");
    // In the engine's words, as it says it of that text on one line (serde_json skipping it said `key must be a
    // string`).
    assert!(err.contains("(read as one multi-line document: trailing comma at line 6 column 1)"), "{err}");
}
