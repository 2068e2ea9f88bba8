//! `wiregen validate` as a user runs it: the real binary on files and stdin, hostile lines, exit codes, formats.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_path_buf()
}

fn wiregen(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(root())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run wiregen");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let w = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait");
    w.join().expect("writer");
    out
}

fn records(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record per line"))
        .collect()
}

const GOOD: &str = r#"{"id":"m1","time":1000,"role":"user","ev":{"t":"text","text":"hi"}}"#;

#[test]
fn hostile_lines_get_one_clear_error_each_and_the_rest_is_still_checked() {
    let mut input = Vec::new();
    input.extend_from_slice(GOOD.as_bytes());
    input.push(b'\n');
    input.extend_from_slice(
        b"{\"id\":\"m2\",\"time\":1,\"role\":\"user\",\"ev\":{\"t\":\"text\",\"text\":\"\xff\xfe\"}}\n",
    );
    input.extend_from_slice(b"\n");
    input.extend_from_slice("[".repeat(100_000).as_bytes());
    input.extend_from_slice("]".repeat(100_000).as_bytes());
    input.push(b'\n');
    input.extend_from_slice(b"42\n");
    input.extend_from_slice(b"{\"id\":\"m3\",\"time\":1,\"role\":\"agent\",\"ev\":{\"t\":\"abort\"}}\r\n");
    input.extend_from_slice(GOOD.as_bytes());
    input.push(b'\n');
    input.extend_from_slice(b"{\"id\":\"m4\",\"time\":1,\"ro");
    let out = wiregen(&["validate", "--format", "json", "-"], &input);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    let recs = records(&out);
    let got: Vec<(u64, bool, String, String)> = recs
        .iter()
        .map(|r| {
            let e = &r["errors"][0];
            (
                r["line"].as_u64().expect("line"),
                r["valid"].as_bool().expect("valid"),
                e["rule"].as_str().unwrap_or("").to_string(),
                e["pointer"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let want: Vec<(u64, bool, &str, &str)> = vec![
        (1, true, "", ""),
        (2, false, "invalid-utf8", ""),
        (3, false, "blank-line", ""),
        (4, false, "too-deep", ""),
        (5, false, "type", ""),
        (6, false, "role-event", "/role"),
        (7, true, "", ""),
        (8, false, "malformed-json", ""),
    ];
    let got_ref: Vec<(u64, bool, &str, &str)> =
        got.iter().map(|(l, v, r, p)| (*l, *v, r.as_str(), p.as_str())).collect();
    assert_eq!(got_ref, want);
    for r in &recs {
        assert_eq!(r["valid"].as_bool(), Some(r["errors"].as_array().expect("errors").is_empty()));
    }
}

#[test]
fn text_format_names_path_line_pointer_and_rule() {
    let dir = std::env::temp_dir().join(format!("wiregen-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let f = dir.join("s.jsonl");
    std::fs::write(
        &f,
        format!(
            "{GOOD}\n{}\n",
            r#"{"id":"m2","time":1,"role":"agent","turn":"t","ev":{"t":"turn-end","status":"done"}}"#
        ),
    )
    .expect("write");
    let out = wiregen(&["validate", f.to_str().expect("utf-8 path")], b"");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(
        text,
        format!("{}:2: /ev/status: `done` is not one of `completed`, `failed`, `cancelled` [enum]\n", f.display())
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 records, 1 invalid"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exit_codes_zero_valid_two_for_usage_and_io() {
    let ok = wiregen(&["validate", "--format", "json"], format!("{GOOD}\n{GOOD}\n").as_bytes());
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(records(&ok).len(), 2);
    let missing = wiregen(&["validate", "no/such/file.jsonl"], b"");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no/such/file.jsonl"));
    let usage = wiregen(&["validate", "--no-such-flag"], b"");
    assert_eq!(usage.status.code(), Some(2));
    let empty = wiregen(&["validate", "--format", "json"], b"");
    assert_eq!(empty.status.code(), Some(0));
    assert!(records(&empty).is_empty());
}

#[test]
fn a_pretty_printed_envelope_is_one_record() {
    let pretty = serde_json::to_string_pretty(&serde_json::from_str::<Value>(GOOD).expect("json")).expect("pretty");
    assert!(pretty.lines().count() > 3);
    let out = wiregen(&["validate", "--format", "json"], pretty.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let recs = records(&out);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["line"], 1);
    // A pretty-printed invalid one is one invalid record too, with its pointer.
    let bad = pretty.replace("\"user\"", "\"robot\"");
    let out = wiregen(&["validate", "--format", "json"], bad.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let recs = records(&out);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["errors"][0]["pointer"], "/role");
    // Its error says where in the document the value is (the record's line is where the document starts).
    let role_line = bad.lines().position(|l| l.contains("\"robot\"")).expect("the role's line") + 1;
    let message = recs[0]["errors"][0]["message"].as_str().expect("message");
    assert!(message.ends_with(&format!(" (line {role_line}, column 11 of the document)")), "{message}");
    // Past text that is not ASCII the column counts bytes, and lines end at `\n` only, as a syntax error's place in
    // the same document counts them (the column counted characters and a lone `\r` ended a line; helper 114).
    let doc = "{\n\"id\": \"m1\",\r\"time\": 1, \"role\": \"agent\", \"turn\": \"t1\",\n\"ev\": {\"t\": \"text\", \"text\": \"\u{e9}\u{1f600}\", \"bogus\": 1}\n}\n";
    let out = wiregen(&["validate", "--format", "json"], doc.as_bytes());
    let recs = records(&out);
    let message = recs[0]["errors"][0]["message"].as_str().expect("message");
    let line3 = doc.split('\n').nth(2).expect("line 3");
    let col = line3.find("\"bogus\": 1").expect("bogus") + "\"bogus\": ".len() + 1;
    assert_eq!(col, line3.chars().position(|c| c == '1').expect("the value") + 1 + 4, "{line3}");
    assert!(message.ends_with(&format!(" (line 3, column {col} of the document)")), "{message}");
    let broken = doc.replace("\"bogus\": 1", "\"bogus\": 1,,");
    let out = wiregen(&["validate", "--format", "json"], broken.as_bytes());
    let message = records(&out)[0]["errors"][0]["message"].as_str().expect("message").to_string();
    assert!(message.contains(&format!("at line 3 column {}", col + 2)), "{message}");
    // A pretty-printed one that is not JSON (a second comma on its 2nd line) is read line by line, as JSONL, but
    // the first record says where the document breaks.
    let broken = pretty.replacen("\"m1\",", "\"m1\",,", 1);
    assert_eq!(broken.lines().nth(1).map(|l| l.trim()), Some("\"id\": \"m1\",,"));
    let out = wiregen(&["validate", "--format", "json"], broken.as_bytes());
    let recs = records(&out);
    assert_eq!(recs.len(), broken.lines().count());
    let first = recs[0]["errors"][0]["message"].as_str().expect("message");
    assert!(first.contains("read as one multi-line document: ") && first.contains(" at line 2 column 14"), "{first}");
    assert!(recs[1..].iter().all(|r| !r["errors"][0]["message"].as_str().unwrap().contains("document")));
    // A key repeated before that break is the first problem, as every checker reads the text: the hint says so
    // (it named the later comma: the framing's own check took the repeated key).
    let mut repeated = pretty.replacen("\"time\"", "\"id\"", 1);
    repeated.insert(repeated.rfind("\n}").expect("the closing brace"), ',');
    let recs = records(&wiregen(&["validate", "--format", "json"], repeated.as_bytes()));
    let first = recs[0]["errors"][0]["message"].as_str().expect("message");
    let ids: Vec<usize> =
        (repeated.lines().enumerate()).filter(|(_, l)| l.contains("\"id\"")).map(|(i, _)| i + 1).collect();
    let id_line = ids[1];
    assert!(
        first.ends_with(&format!(
            "(read as one multi-line document: repeated key /id (JSON parsers differ on which of its members counts) \
             at line {id_line} column 3)"
        )),
        "{first}"
    );
    // A JSONL line cut short is no such document: its error is its own.
    let cut = format!("{{\"id\":\"m1\",\"time\":1,\n{GOOD}\n");
    let recs = records(&wiregen(&["validate", "--format", "json"], cut.as_bytes()));
    assert_eq!(recs[0]["errors"][0]["message"], "malformed JSON: unexpected end of input at column 20");
    assert_eq!(recs[1]["valid"], true);
    // A stream is framed alike: the pretty-printed envelope is a stream of one message, the invalid one is one
    // invalid record with the same error.
    let out = wiregen(&["validate", "--stream", "--format", "json"], pretty.as_bytes());
    assert_eq!((out.status.code(), records(&out).len()), (Some(0), 1), "{}", String::from_utf8_lossy(&out.stdout));
    let recs = records(&wiregen(&["validate", "--stream", "--format", "json"], bad.as_bytes()));
    assert_eq!((recs.len(), &recs[0]["errors"][0]["pointer"]), (1, &Value::from("/role")));
    let recs = records(&wiregen(&["validate", "--stream", "--format", "json"], broken.as_bytes()));
    let first = recs[0]["errors"][0]["message"].as_str().expect("message");
    assert!(first.contains("read as one multi-line document: ") && first.contains(" at line 2 column 14"), "{first}");
    // Saved with a byte order mark, it is still one record, refused once for the mark (it was read line by line:
    // ten errors, nine of them for lines that were fine).
    for args in [&["validate", "--format", "json"][..], &["validate", "--stream", "--format", "json"]] {
        let recs = records(&wiregen(args, format!("\u{feff}{pretty}").as_bytes()));
        assert_eq!(recs.len(), 1, "{args:?}: {recs:?}");
        let message = recs[0]["errors"][0]["message"].as_str().expect("message");
        assert!(message.contains("byte order mark"), "{message}");
    }
    // A UTF-16 input (what Windows PowerShell 5's `>` writes) is refused line by line as before, and its first
    // record names the encoding (each said only "invalid UTF-8" or "malformed JSON"; helper 74).
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(format!("{GOOD}\r\n{GOOD}\r\n").encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    for args in [&["validate", "--format", "json"][..], &["validate", "--stream", "--format", "json"]] {
        let recs = records(&wiregen(args, &utf16));
        assert!(recs.len() >= 2 && recs.iter().all(|r| r["valid"] == false), "{args:?}: {recs:?}");
        let message = recs[0]["errors"][0]["message"].as_str().expect("message");
        assert!(
            message.contains("the input looks like UTF-16 or UTF-32, not UTF-8: it starts with FF FE"),
            "{message}"
        );
        assert!(recs[1..].iter().all(|r| !r["errors"][0]["message"].as_str().unwrap().contains("UTF-16")));
    }
    // A byte that is not UTF-8 on the document's 4th line, and nesting too deep on its 6th, are located there.
    let lines: Vec<&str> = pretty.lines().collect();
    let mut utf = lines.iter().map(|l| l.as_bytes().to_vec()).collect::<Vec<_>>();
    utf[3] = lines[3].replace("\"user\"", "\"us\u{1}r\"").into_bytes();
    let at = utf[3].iter().position(|b| *b == 1).expect("marker");
    utf[3][at] = 0xff;
    let recs = records(&wiregen(&["validate", "--format", "json"], &utf.join(&b'\n')));
    let first = recs[0]["errors"][0]["message"].as_str().expect("message");
    assert!(
        first.ends_with(&format!("(read as one multi-line document: invalid UTF-8 at line 4 column {})", at + 1)),
        "{first}"
    );
    let deep = pretty.replacen("\"hi\"", &format!("{}0{}", "[\n".repeat(130), "]".repeat(130)), 1);
    let recs = records(&wiregen(&["validate", "--format", "json"], deep.as_bytes()));
    assert_eq!(recs.len(), 1);
    // The envelope and `ev` are two levels, so the 126th `[` is the 128th level: the first on line 7, it on 132.
    let depth_line = 132;
    assert_eq!(
        recs[0]["errors"][0]["message"],
        format!("JSON nests deeper than 127 levels (at line {depth_line} column 1)")
    );
}

/// A pretty-printed document as large as a line may be (64 MiB) is one record (up to stop 53 one of 16 MiB was
/// read line by line, as hundreds of thousands of malformed lines); a larger one is read line by line and its first
/// line says why.
#[test]
fn a_pretty_printed_document_may_be_as_large_as_a_line() {
    let doc = |items: usize| {
        let mut d = String::from("{\n \"id\": \"m1\",\n \"time\": 1,\n \"role\": \"agent\",\n \"ev\": {\n  \"t\": \"tool-call-start\", \"call\": \"c\", \"name\": \"n\", \"title\": \"t\", \"description\": \"d\",\n  \"args\": {\"a\": [\n");
        for _ in 0..items {
            d.push_str("   \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\",\n");
        }
        d.push_str("   0\n  ]}\n }\n}\n");
        d
    };
    let big = doc(400_000);
    assert!(big.len() > 20 << 20);
    let out = wiregen(&["validate", "--format", "json"], big.as_bytes());
    assert_eq!((out.status.code(), records(&out).len()), (Some(0), 1));
    let huge = doc(1_300_000);
    assert!(huge.len() > 64 << 20);
    let out = wiregen(&["validate", "--format", "json"], huge.as_bytes());
    let recs = records(&out);
    assert!(recs.len() > 1_000_000);
    assert_eq!(
        recs[0]["errors"][0]["message"],
        "malformed JSON: unexpected end of input at column 1 (read as one multi-line document: longer than 64 MiB, \
         the most wiregen reads as one document)"
    );
}

/// Peak resident memory of a process, from /proc (Linux), sampled until it exits.
fn peak_rss_kib(pid: u32, done: &std::sync::atomic::AtomicBool) -> u64 {
    let mut peak = 0;
    while !done.load(std::sync::atomic::Ordering::Relaxed) {
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            for l in s.lines() {
                if let Some(v) = l.strip_prefix("VmHWM:") {
                    peak = peak.max(v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0));
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    peak
}

#[test]
fn large_input_streams_with_flat_memory() {
    if !Path::new("/proc/self/status").exists() {
        return;
    }
    let line = format!(
        "{}\n",
        r#"{"id":"m1","time":1000,"role":"agent","turn":"t1","ev":{"t":"tool-call-start","call":"c1","name":"grep","title":"Searching","description":"Searching for `x`","args":{"pattern":"TODO","path":"src/","context":"................................................................................................................................"}}}"#
    );
    let n = 40_000_000 / line.len();
    let mut child = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(root())
        .args(["validate", "--format", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run");
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d2 = done.clone();
    let sampler = std::thread::spawn(move || peak_rss_kib(pid, &d2));
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        for _ in 0..n {
            stdin.write_all(line.as_bytes()).expect("write");
        }
    });
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut count = 0usize;
        let mut buf = [0u8; 1 << 16];
        loop {
            match std::io::Read::read(&mut stdout, &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(k) => count += buf[..k].iter().filter(|&&b| b == b'\n').count(),
            }
        }
        count
    });
    writer.join().expect("writer");
    let status = child.wait().expect("wait");
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak = sampler.join().expect("sampler");
    let count = reader.join().expect("reader");
    assert!(status.success());
    assert_eq!(count, n, "one record per line");
    assert!(peak > 0, "the memory of the running process was sampled");
    assert!(peak < 64 * 1024, "peak RSS {peak} KiB for 40 MB of input: memory must stay flat");
}

#[test]
fn records_keep_their_line_numbers_across_batches_and_threads() {
    // ~13 MB: several batches, so the reader thread and the workers all take part.
    let pad = "x".repeat(400);
    let good = format!(r#"{{"id":"m","time":1,"role":"user","ev":{{"t":"text","text":"{pad}"}}}}"#);
    let bad = r#"{"id":"m","time":1,"role":"user","ev":{"t":"turn-start"}}"#;
    let n = 30_000;
    let bad_at = [1usize, 9_999, 10_000, 17_001, 29_999, n];
    let mut input = String::new();
    for i in 1..=n {
        input.push_str(if bad_at.contains(&i) { bad } else { &good });
        input.push_str(if i % 7 == 0 { "\r\n" } else { "\n" });
    }
    input.pop(); // the last line has no newline
    let out = wiregen(&["validate", "--format", "json", "-"], input.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let recs = records(&out);
    assert_eq!(recs.len(), n);
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r["line"], i + 1, "records in input order");
    }
    let invalid: Vec<usize> =
        recs.iter().filter(|r| r["valid"] == false).map(|r| r["line"].as_u64().expect("line") as usize).collect();
    assert_eq!(invalid, bad_at);
    // Text records are written on the threads that check them too: the same lines, in order.
    let out = wiregen(&["validate", "--format", "text", "-"], input.as_bytes());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let lines: Vec<usize> = text
        .lines()
        .map(|l| l.strip_prefix("<stdin>:").and_then(|r| r.split(':').next()).expect(l).parse().expect(l))
        .collect();
    assert_eq!(lines, bad_at, "{text}");
}

/// A broken schema: exit 2 with located diagnostics, as JSON objects on stdout with `--format json`, exactly the
/// lines `wiregen generate --format json` prints for the same schema.
#[test]
fn a_broken_schema_gives_the_same_diagnostics_as_generate_in_both_formats() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("validate-broken-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut stack = vec![(root().join("schema"), dir.join("schema"))];
    while let Some((from, to)) = stack.pop() {
        std::fs::create_dir_all(&to).expect("mkdir");
        for e in std::fs::read_dir(&from).expect("read_dir").flatten() {
            if e.file_type().expect("type").is_dir() {
                stack.push((e.path(), to.join(e.file_name())));
            } else {
                std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
            }
        }
    }
    let f = dir.join("schema/events/turn-end.schema.json");
    let t = std::fs::read_to_string(&f).expect("read");
    std::fs::write(&f, t.replacen("#/$defs/usage", "#/$defs/nope", 1)).expect("write");
    let schema = dir.join("schema");
    let schema = schema.to_str().expect("utf-8 path");

    let out = wiregen(&["validate", "--schema", schema, "--format", "json"], GOOD.as_bytes());
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let diags = records(&out);
    assert!(!diags.is_empty());
    let d = diags.iter().find(|d| d["pointer"] == "/properties/usage/$ref").expect("the broken ref");
    assert_eq!(d["code"], "schema.unresolvable-ref");
    assert!(d["file"].as_str().expect("file").ends_with("events/turn-end.schema.json"), "{d}");
    let gen_out = dir.join("out");
    let gen =
        wiregen(&["generate", "--schema", schema, "--out", gen_out.to_str().expect("utf-8"), "--format", "json"], b"");
    assert_eq!(gen.status.code(), Some(2));
    assert_eq!(out.stdout, gen.stdout, "validate and generate print the same JSON diagnostics");

    let text = wiregen(&["validate", "--schema", schema], GOOD.as_bytes());
    assert_eq!(text.status.code(), Some(2));
    assert!(text.stdout.is_empty());
    let err = String::from_utf8_lossy(&text.stderr);
    assert!(err.contains("turn-end.schema.json:") && err.contains("error[schema.unresolvable-ref]"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `wiregen validate` on `input` through stdin and returns its peak resident memory in KiB (0 where /proc is
/// missing) and its output.
fn peak_of_run(args: &[&str], input: Vec<u8>) -> (u64, Output) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(root())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d2 = done.clone();
    let sampler = std::thread::spawn(move || peak_rss_kib(pid, &d2));
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    (sampler.join().expect("sampler"), out)
}

#[test]
fn a_line_longer_than_64_mib_stops_with_an_error_not_unbounded_memory() {
    // Input that never ends its line (`/dev/zero`, a log whose newlines were lost) grew until memory ran out.
    let mut input = b"{}\n".to_vec();
    input.resize(input.len() + (200 << 20), b'a');
    let (peak, out) = peak_of_run(&["validate", "--format", "json", "-"], input);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("<stdin>: a line is longer than 64 MiB"), "{err}");
    // The line before it is checked; then the error, in its place on stdout too (`--format json`).
    let recs = records(&out);
    assert_eq!(recs.len(), 2, "{recs:?}");
    assert_eq!(recs[1]["code"], "error", "{recs:?}");
    assert!(recs[1]["message"].as_str().is_some_and(|m| m.contains("a line is longer than 64 MiB")), "{recs:?}");
    if Path::new("/proc/self/status").exists() {
        assert!(peak < 320 * 1024, "peak RSS {peak} KiB: reading stops at the bound");
    }
    // A file is read in reads larger than the line: the line is measured all the same, in each mode.
    let dir = std::env::temp_dir().join(format!("wiregen-long-line-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("long.jsonl");
    let mut data = b"{}\n".to_vec();
    data.resize(data.len() + (65 << 20), b' ');
    data.extend_from_slice(b"\n{}\n");
    std::fs::write(&file, &data).expect("write");
    let path = file.to_str().expect("utf-8 path");
    for args in [&["validate", path][..], &["validate", "--stream", path], &["validate", path, path]] {
        let out = wiregen(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("longer than 64 MiB"), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn many_tiny_invalid_lines_keep_memory_flat() {
    // Half a million blank lines, each an invalid record (~200 bytes of results each): the records a batch holds
    // are bounded by its line count, not only by its bytes.
    let n = 512 << 10;
    let (peak, out) = peak_of_run(&["validate", "--format", "json", "-"], vec![b'\n'; n]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), n, "one record per line");
    if Path::new("/proc/self/status").exists() {
        assert!(peak < 48 * 1024, "peak RSS {peak} KiB for 512 KiB of blank lines: memory must stay flat");
    }
}

#[test]
fn records_reach_a_live_pipe_as_their_lines_arrive() {
    for args in [&["validate", "--format", "json", "-"][..], &["validate", "--stream", "--format", "json", "-"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wiregen"))
            .current_dir(root())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run");
        let mut stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
            while let Some(Ok(l)) = lines.next() {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        // Two lines, the input left open, as `tail -f session.jsonl | wiregen validate -` does.
        writeln!(stdin, "{GOOD}").expect("write");
        writeln!(stdin, "{{}}").expect("write");
        stdin.flush().expect("flush");
        for n in 1..=2 {
            let rec = rx.recv_timeout(std::time::Duration::from_secs(20)).unwrap_or_else(|_| {
                let _ = child.kill();
                panic!("{args:?}: record {n} did not arrive while the input stayed open")
            });
            assert!(rec.starts_with(&format!("{{\"line\":{n},")), "{rec}");
        }
        drop(stdin);
        child.wait().expect("wait");
    }
}

#[test]
fn a_reader_that_goes_away_stops_the_validation() {
    // An endless input: `wiregen validate - | head -1` must end once `head` has its line.
    let mut child = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(root())
        .args(["validate", "--format", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let chunk = format!("{GOOD}\n").repeat(1000);
        while stdin.write_all(chunk.as_bytes()).is_ok() {}
    });
    let mut first = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    std::io::BufRead::read_line(&mut out, &mut first).expect("a first record");
    assert!(first.starts_with("{\"line\":1,"), "{first}");
    drop(out);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert_eq!(status.code(), Some(0), "a reader that went away is not an error");
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("wiregen kept validating after its output was closed");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    writer.join().expect("the writer stops once wiregen is gone");
}

/// A reader that went away before the first record (`wiregen validate bad.jsonl | true`) does not turn the invalid
/// lines checked by then into exit 0: one input or several, message or stream mode, exit 1.
#[test]
fn a_reader_that_goes_away_does_not_hide_invalid_lines() {
    let dir = std::env::temp_dir().join(format!("wiregen-gone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, "{\"id\":\"m1\",\"time\":-1,\"role\":\"user\",\"ev\":{\"t\":\"abort\"}}\n".repeat(3))
        .expect("write");
    let bad = bad.to_str().expect("utf-8 path");
    for args in [&["validate", bad][..], &["validate", "--format", "json", "--stream", bad, bad][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wiregen"))
            .current_dir(root())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run");
        // Closed before wiregen has loaded its schema, so its first write finds no reader.
        drop(child.stdout.take());
        assert_eq!(child.wait().expect("wait").code(), Some(1), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_output_that_cannot_be_written_is_an_error() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else { return };
    let out = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(root())
        .args(["validate", "--format", "json", "tests/fixtures/streams/seed-realistic-flow.jsonl"])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "I/O errors exit 2");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("writing the output"), "{err}");
}

#[test]
fn text_output_cannot_be_forged_by_input() {
    let line =
        "{\"id\":\"m1\",\"time\":1,\"role\":\"agent\",\"ev\":{\"t\":\"turn-start\",\"a\\nb\\u001b[31m\\u2028\":1}}\n";
    let out = wiregen(&["validate", "-"], line.as_bytes());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(text.lines().count(), 1, "one error, one line: {text:?}");
    assert!(!text.contains(['\u{1b}', '\u{2028}']), "{text:?}");
    assert!(text.contains(r"a\u{000A}b\u{001B}[31m\u{2028}"), "{text:?}");
}

/// The protocol is compiled in: from a folder outside the repository, on a copied session file, `wiregen
/// validate` needs no `--schema`; with several files, JSON records name their file.
#[test]
fn validate_works_from_any_folder_and_json_records_name_their_file() {
    let dir = std::env::temp_dir().join(format!("wiregen-anywhere-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    assert!(!dir.join("schema").exists());
    std::fs::copy(root().join("tests/fixtures/streams/seed-realistic-flow.jsonl"), dir.join("session.jsonl"))
        .expect("copy a session");
    std::fs::write(dir.join("bad.jsonl"), "{\"id\":\"m1\",\"time\":1,\"role\":\"agent\",\"ev\":{\"t\":\"ready\"}}\n")
        .expect("write");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_wiregen")).current_dir(&dir).args(args).output().expect("run wiregen")
    };
    let one = run(&["validate", "session.jsonl"]);
    assert_eq!(one.status.code(), Some(0), "{}", String::from_utf8_lossy(&one.stderr));
    assert!(String::from_utf8_lossy(&one.stderr).contains("28 records, 0 invalid"));
    let stream = run(&["validate", "--stream", "session.jsonl"]);
    assert_eq!(stream.status.code(), Some(0), "{}", String::from_utf8_lossy(&stream.stderr));

    let two = run(&["validate", "--format", "json", "session.jsonl", "bad.jsonl"]);
    assert_eq!(two.status.code(), Some(1));
    let recs = records(&two);
    assert_eq!(recs.len(), 29);
    assert!(recs[..28].iter().all(|r| r["file"] == "session.jsonl" && r["valid"] == true));
    assert_eq!(recs[28]["file"], "bad.jsonl");
    assert_eq!(recs[28]["line"], 1);
    assert_eq!(recs[28]["errors"][0]["rule"], "removed-event");
    // One file: the record format as before, without `file`.
    let single = run(&["validate", "--format", "json", "bad.jsonl"]);
    assert!(records(&single)[0].get("file").is_none());
    // `--schema` still overrides the compiled-in protocol; a missing one is named.
    let missing = run(&["validate", "--schema", "nowhere", "session.jsonl"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--schema"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Several files, and directories (every `*.jsonl` below them, sorted), are checked side by side, one per core,
/// and the output is byte for byte what checking them one after another gives: in argument order, in both formats,
/// in message and stream mode, whatever their sizes (some span several batches, so their output comes in chunks
/// while the next files are already being checked).
#[test]
fn several_files_and_directories_give_the_sequential_output_in_argument_order() {
    let dir = std::env::temp_dir().join(format!("wiregen-many-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("logs/b")).expect("mkdir");
    std::fs::create_dir_all(dir.join("logs/a")).expect("mkdir");
    let flow = std::fs::read(root().join("tests/fixtures/streams/seed-realistic-flow.jsonl")).expect("flow");
    let bad = "{\"id\":\"m1\",\"time\":1,\"role\":\"agent\",\"ev\":{\"t\":\"ready\"}}\n";
    // A file of ~3 MiB with an invalid line every 7th line: several batches, ~1 MiB of records.
    let mut big = Vec::new();
    for i in 0..40_000 {
        if i % 7 == 3 {
            big.extend_from_slice(
                format!("{{\"id\":\"m{i}\",\"time\":-1,\"role\":\"user\",\"ev\":{{\"t\":\"abort\"}}}}\n").as_bytes(),
            );
        } else {
            big.extend_from_slice(GOOD.as_bytes());
            big.push(b'\n');
        }
    }
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("one.jsonl", big.clone()),
        ("logs/b/z.jsonl", bad.as_bytes().to_vec()),
        ("logs/a/y.jsonl", flow.clone()),
        ("logs/a/x.jsonl", big[..big.len() / 3].to_vec()),
        ("logs/b/readme.txt", b"not a log".to_vec()),
        ("two.jsonl", flow.clone()),
    ];
    for (name, data) in &files {
        std::fs::write(dir.join(name), data).expect("write");
    }
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_wiregen")).current_dir(&dir).args(args).output().expect("run wiregen")
    };
    // The directory expands to its *.jsonl files in path order, readme.txt left out.
    let inputs = ["one.jsonl", "logs/a/x.jsonl", "logs/a/y.jsonl", "logs/b/z.jsonl", "two.jsonl"];
    for mode in [&["validate"][..], &["validate", "--stream"][..]] {
        for format in ["text", "json"] {
            let mut args = mode.to_vec();
            args.extend(["--format", format, "one.jsonl", "logs", "two.jsonl"]);
            let together = run(&args);
            // One after another: each alone, its records given the `file` a run of several files names.
            let mut want = Vec::new();
            let mut records = 0;
            for f in inputs {
                let mut args = mode.to_vec();
                args.extend(["--format", format, f]);
                let alone = run(&args);
                if format == "json" {
                    for l in alone.stdout.split_inclusive(|b| *b == b'\n') {
                        want.extend_from_slice(format!("{{\"file\":{},", Value::from(f)).as_bytes());
                        want.extend_from_slice(&l[1..]);
                        records += 1;
                    }
                } else {
                    want.extend_from_slice(&alone.stdout);
                }
            }
            assert!(want.len() > 100_000, "the runs produce output: {} bytes", want.len());
            assert!(together.stdout == want, "{mode:?} {format}: not the sequential output");
            assert_eq!(together.status.code(), Some(1), "{}", String::from_utf8_lossy(&together.stderr));
            if format == "json" {
                assert_eq!(together.stdout.iter().filter(|b| **b == b'\n').count(), records);
            }
        }
    }
    // A file that cannot be opened: the output of those before it, then the error, exit 2.
    let missing = run(&["validate", "--format", "json", "logs/b/z.jsonl", "nowhere.jsonl", "one.jsonl"]);
    assert_eq!(missing.status.code(), Some(2));
    // Only z.jsonl's record, then the error as a JSON object in its place (a script reading stdout saw nothing of
    // it; helper 82), and on stderr.
    let recs = records(&missing);
    assert_eq!(recs.len(), 2, "{recs:?}");
    assert!(recs[0]["line"].is_u64() && recs[1]["code"] == "error", "{recs:?}");
    assert!(recs[1]["message"].as_str().is_some_and(|m| m.starts_with("nowhere.jsonl: ")), "{recs:?}");
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nowhere.jsonl"));
    // So is an unknown --type, before any record.
    let unknown = run(&["validate", "--format", "json", "--type", "Nope", "one.jsonl"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(records(&unknown)[0]["code"], "error", "{}", String::from_utf8_lossy(&unknown.stdout));
    // A line break in its name is escaped, not a line of its own on stderr.
    let forged = run(&["validate", "no\nwiregen: forged.jsonl"]);
    assert_eq!(forged.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&forged.stderr);
    assert!(stderr.contains("wiregen: no\\u{000A}wiregen: forged.jsonl: No such file"), "{stderr}");
    assert!(!stderr.lines().any(|l| l.starts_with("wiregen: forged")), "{stderr}");
    // A directory stands for several files however many it holds: its one file's records name it too.
    let one = run(&["validate", "--format", "json", "logs/b"]);
    assert_eq!(one.status.code(), Some(1));
    assert_eq!(records(&one)[0]["file"], "logs/b/z.jsonl", "{}", String::from_utf8_lossy(&one.stdout));
    // Stdin given twice is refused (the second read nothing, silently).
    let twice = run(&["validate", "-", "-"]);
    assert_eq!(twice.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&twice.stderr).contains("`-` (stdin) is given more than once"));
    // A directory without logs is named, not passed as "nothing invalid".
    std::fs::create_dir_all(dir.join("empty")).expect("mkdir");
    let empty = run(&["validate", "empty"]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&empty.stderr).contains("no *.jsonl"),
        "{}",
        String::from_utf8_lossy(&empty.stderr)
    );
    // It is told in its place, as a file that cannot be opened is: after the output of the inputs before it (that
    // output was lost, the run stopped before reading anything), with what the run leaves out.
    let empty = run(&["validate", "--format", "json", "logs/b/z.jsonl", "empty", "one.jsonl"]);
    assert_eq!(empty.status.code(), Some(2));
    assert_eq!(records(&empty).len(), 2, "z.jsonl's record, then the error");
    let stderr = String::from_utf8_lossy(&empty.stderr);
    assert!(stderr.contains("empty: a directory with no *.jsonl"), "{stderr}");
    assert!(stderr.contains("the run stops there: 1 input after it not checked; 1 record before it, 1 invalid"));
    // The last input failing still tells what was checked before it (helper 82: exit 2 hid the invalid record).
    let last = run(&["validate", "--format", "json", "logs/b/z.jsonl", "empty"]);
    assert_eq!(last.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&last.stderr);
    assert!(stderr.contains("wiregen validate: the run stops there; 1 record before it, 1 invalid"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An input that is the run's own output (`validate logs/ > logs/report.jsonl`, `migrate v1.jsonl >> v1.jsonl`) is
/// refused before anything is read: the run read the records it wrote and wrote more, until the disk was full.
#[test]
fn an_input_that_is_the_output_is_refused_not_read_without_end() {
    let dir = std::env::temp_dir().join(format!("wiregen-self-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("logs")).expect("mkdir");
    // Enough records to be read back before the run ends: ~2 MiB of invalid lines.
    let bad = "{\"id\":\"m1\",\"time\":-1,\"role\":\"user\",\"ev\":{\"t\":\"abort\"}}\n".repeat(20_000);
    std::fs::write(dir.join("logs/a.jsonl"), &bad).expect("write");
    let v1 = std::fs::read(root().join("tests/fixtures/migrate/v1-realistic-flow.jsonl")).expect("v1 flow");
    std::fs::write(dir.join("v1.jsonl"), v1.repeat(50)).expect("write");
    let sh = |script: &str| {
        let mut c = Command::new("sh");
        c.current_dir(&dir).env("W", env!("CARGO_BIN_EXE_wiregen")).env("R", root()).args(["-c", script]);
        // A run that does loop stops at 64 MiB of output instead of filling the disk.
        c.arg("sh");
        c.output().expect("run sh")
    };
    for (script, says) in [
        ("ulimit -f 131072; \"$W\" validate --format json logs > logs/report.jsonl", "logs/report.jsonl is this run's output"),
        ("ulimit -f 131072; \"$W\" validate --stream logs >> logs/a.jsonl", "logs/a.jsonl is this run's output"),
        // With `--format json` the refusal is not written as a JSON error into the input it spares (helper 94).
        ("ulimit -f 131072; \"$W\" validate --format json logs >> logs/a.jsonl", "logs/a.jsonl is this run's output"),
        ("ulimit -f 131072; \"$W\" validate < logs/a.jsonl >> logs/a.jsonl", "stdin is this run's output"),
        // Its own output pipe, named (it read it without end; helper 95).
        (
            "{ timeout 30 \"$W\" validate logs/a.jsonl /dev/stdout; echo $? > rc; } | cat > /dev/null; exit $(cat rc)",
            "/dev/stdout is this run's output",
        ),
        (
            "ulimit -f 131072; \"$W\" migrate --from \"$R/examples/happy-wire/schema\" --to \"$R/schema\" v1.jsonl >> v1.jsonl",
            "v1.jsonl is this run's output",
        ),
        (
            "ulimit -f 131072; \"$W\" migrate --from \"$R/examples/happy-wire/schema\" --to \"$R/schema\" --out /dev/stdout v1.jsonl >> v1.jsonl",
            "v1.jsonl is this run's output",
        ),
    ] {
        let out = sh(script);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{script}: {stderr}");
        assert!(stderr.contains(says), "{script}: {stderr}");
    }
    assert_eq!(std::fs::read(dir.join("logs/a.jsonl")).expect("read"), bad.as_bytes(), "the input is as it was");
    // Written elsewhere, the same runs go on.
    let out = sh("\"$W\" validate --format json logs > report.jsonl");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A type name that is not there is answered with the names that are; `--stream` on a schema without sequence
/// rules says that it checks each line on its own (it used to do so without a word).
#[test]
fn a_wrong_type_lists_the_types_and_a_stream_without_rules_says_so() {
    let dir = std::env::temp_dir().join(format!("wiregen-types-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("two")).expect("mkdir");
    std::fs::write(dir.join("two/a.json"), r#"{"type": "object"}"#).expect("write");
    std::fs::write(dir.join("two/b.json"), r#"{"type": "string"}"#).expect("write");
    std::fs::write(dir.join("plain.json"), r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#)
        .expect("write");
    std::fs::write(dir.join("in.jsonl"), "{\"a\": 1}\n{\"a\": \"x\"}\n").expect("write");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_wiregen")).current_dir(&dir).args(args).output().expect("run wiregen")
    };
    let stderr = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let wrong = run(&["validate", "--schema", "two", "--type", "Nope", "in.jsonl"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        stderr(&wrong).contains("no type named `Nope`; --type NAME takes one of its types: `A`, `B`"),
        "{}",
        stderr(&wrong)
    );
    let no_root = run(&["validate", "--schema", "two", "in.jsonl"]);
    assert_eq!(no_root.status.code(), Some(2));
    assert!(stderr(&no_root).contains("`A`, `B`"), "{}", stderr(&no_root));
    let named = run(&["validate", "--schema", "two", "--type", "A", "in.jsonl"]);
    assert_eq!(named.status.code(), Some(0), "{}", stderr(&named));
    // --type picks the type of each record; a stream's records are envelopes: the two are refused together (every
    // line failed one check or the other).
    let both = run(&["validate", "--schema", "two", "--type", "A", "--stream", "in.jsonl"]);
    assert_eq!(both.status.code(), Some(2));
    assert!(stderr(&both).contains("cannot be used with"), "{}", stderr(&both));
    // A --schema that is not there: the error, and what --schema takes (it said "name the schema with --schema").
    let nowhere = run(&["validate", "--schema", "nowhere", "in.jsonl"]);
    assert_eq!(nowhere.status.code(), Some(2));
    assert!(
        stderr(&nowhere).ends_with("--schema takes the schema directory, or one schema file\n"),
        "{}",
        stderr(&nowhere)
    );
    let stream = run(&["validate", "--schema", "plain.json", "--stream", "in.jsonl"]);
    assert_eq!(stream.status.code(), Some(1));
    assert!(stderr(&stream).contains("declares no sequence rules"), "{}", stderr(&stream));
    assert!(String::from_utf8_lossy(&stream.stdout).contains("in.jsonl:2: /a:"));
    // Its rollup counts the valid line as accepted (it counted only the rejected one).
    let summary = run(&["validate", "--schema", "plain.json", "--stream", "--summary", "--format", "json", "in.jsonl"]);
    let summary: Value = serde_json::from_slice(&summary.stdout).expect("one JSON summary");
    assert_eq!(summary["rollup"]["messages"], serde_json::json!({"accepted": 1, "rejected": 1}));
    // An event body by the name the bundled schema gives it (`$defs/TextEvent`), as by its type's own names.
    std::fs::write(dir.join("text.jsonl"), "{\"t\": \"text\", \"text\": \"hi\"}\n{\"t\": \"text\"}\n").expect("write");
    for name in ["TextEvent", "Text", "SessionTextEvent", "sessionTextEventSchema"] {
        let by_name = run(&["validate", "--type", name, "text.jsonl"]);
        assert_eq!(by_name.status.code(), Some(1), "{name}: {}", stderr(&by_name));
        let out = String::from_utf8_lossy(&by_name.stdout).into_owned();
        assert!(out.contains("text.jsonl:2: /text:") && !out.contains("text.jsonl:1"), "{name}: {out}");
    }
    // The protocol compiled in has rules: no such note.
    std::fs::copy(root().join("tests/fixtures/streams/seed-realistic-flow.jsonl"), dir.join("s.jsonl")).expect("copy");
    let proto = run(&["validate", "--stream", "s.jsonl"]);
    assert_eq!(proto.status.code(), Some(0), "{}", stderr(&proto));
    assert!(!stderr(&proto).contains("sequence rules"));
    // --strict-ids with a schema that has no strict id pattern says it checks nothing more (it was silent), and
    // not with the protocol compiled in, which has one.
    let strict = run(&["validate", "--schema", "plain.json", "--strict-ids", "in.jsonl"]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(stderr(&strict).contains("--strict-ids: the schema declares no strict id pattern"), "{}", stderr(&strict));
    // (The seed's flow uses readable ids such as `sa_research`, which the strict pattern refuses.)
    let strict = run(&["validate", "--strict-ids", "--stream", "s.jsonl"]);
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    assert!(!stderr(&strict).contains("strict id pattern"), "{}", stderr(&strict));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A new sequence rule of an existing kind is a schema edit and nothing else: a copy of `schema/` with one more
/// `x-sequence` rule (a steer message needs an open turn, which the seed leaves to the clients and the v2
/// protocol therefore does not require) refuses a stream the shipped protocol accepts, with the new rule's id,
/// pointer and message, and the message mode of the copy is unchanged.
#[test]
fn a_sequence_rule_added_by_a_schema_edit_alone_is_enforced() {
    let dir = std::env::temp_dir().join(format!("wiregen-rule-by-edit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let mut todo = vec![root().join("schema")];
    while let Some(d) = todo.pop() {
        for f in std::fs::read_dir(&d).expect("schema/") {
            let f = f.expect("entry").path();
            let to = dir.join(f.strip_prefix(root().join("schema")).expect("below schema/"));
            if f.is_dir() {
                std::fs::create_dir_all(&to).expect("mkdir");
                todo.push(f);
            } else {
                std::fs::copy(&f, to).expect("copy");
            }
        }
    }
    let envelope = dir.join("envelope.schema.json");
    let text = std::fs::read_to_string(&envelope).expect("envelope schema");
    let mut schema: Value = serde_json::from_str(&text).expect("JSON");
    schema["x-sequence"]["rules"].as_array_mut().expect("rules").push(serde_json::json!({
        "id": "steer.outside-turn", "kind": "needs-open", "scope": "turn", "on": ["text"], "role": "user",
        "when": {"/ev/steer": true}, "pointer": "/ev/steer",
        "message": "a steer message is injected into the open turn, but no turn is open",
        "summary": "A user `text` with `steer: true` only while a turn is open.",
        "seed": "Mid-turn injection — picked up between LLM calls"
    }));
    std::fs::write(&envelope, serde_json::to_string_pretty(&schema).expect("JSON")).expect("write");

    let stream = root().join("tests/fixtures/streams/valid-steer-after-turn-end.jsonl");
    let stream = stream.to_str().expect("UTF-8 path");
    let shipped = wiregen(&["validate", "--stream", "--format", "json", stream], b"");
    assert_eq!(shipped.status.code(), Some(0), "{}", String::from_utf8_lossy(&shipped.stdout));
    let edited = dir.to_str().expect("UTF-8 path");
    let out = wiregen(&["validate", "--stream", "--schema", edited, "--format", "json", stream], b"");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let broken: Vec<Value> = records(&out).into_iter().filter(|r| r["valid"] == false).collect();
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert_eq!(broken[0]["line"], 4);
    assert_eq!(
        broken[0]["errors"],
        serde_json::json!([{"pointer": "/ev/steer", "rule": "steer.outside-turn",
            "message": "a steer message is injected into the open turn, but no turn is open"}])
    );
    let messages = wiregen(&["validate", "--schema", edited, "--format", "json", stream], b"");
    assert_eq!(messages.status.code(), Some(0), "{}", String::from_utf8_lossy(&messages.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `wiregen types … | head -1`: a reader that goes away is not an error of ours (it printed "Broken pipe" and
/// exited 2), as for `validate`.
#[test]
fn types_into_a_reader_that_goes_away_exits_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(root())
        .args(["types", "--lang", "zod", "schema"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run wiregen");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// `migrate` refuses a line OLD refuses from the engine's compact tree, as `validate` reads it: a line of
/// 10,000,000 small values took about three times the memory of `validate` (a `serde_json::Value` each) before.
#[test]
fn migrate_refuses_a_huge_line_in_the_memory_validate_takes() {
    if !Path::new("/proc/self/status").exists() {
        return;
    }
    let mut input = b"[0".to_vec();
    input.extend(std::iter::repeat_n(b",0".as_slice(), 10_000_000).flatten());
    input.extend_from_slice(b"]\n");
    let (validate, out) = peak_of_run(&["validate", "--format", "json", "-"], input.clone());
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let (migrate, out) =
        peak_of_run(&["migrate", "--from", "examples/happy-wire/schema", "--to", "schema", "-"], input);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected an object, got an array"));
    assert!(migrate < validate * 3 / 2, "migrate peaked at {migrate} KiB, validate at {validate} KiB");
}

/// Two files whose names differ only in a byte that is not UTF-8 are told apart in the records: the byte is shown
/// as `\xFF` (both were `s\u{FFFD}.jsonl`, so a reader could not say which one was invalid). A UTF-8 name is
/// written as it is in JSON, so one that spells such an escape reads like the other (the text form doubles its
/// backslash; JSON did too until stop 65, which named a file that does not exist; `json_output_names_...`).
#[test]
fn file_names_that_are_not_utf8_are_shown_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt;
    let dir = std::env::temp_dir().join(format!("wiregen-nonutf8-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let name = |b: u8| dir.join(std::ffi::OsStr::from_bytes(&[b's', b, b'.', b'j', b's', b'o', b'n', b'l']));
    std::fs::write(name(0xFF), "{}\n").unwrap();
    std::fs::write(name(0xFE), "{\"id\":\"m1\",\"time\":1,\"role\":\"user\",\"ev\":{\"t\":\"text\",\"text\":\"x\"}}\n")
        .unwrap();
    // A name that spells the escape itself: as it is in JSON, its backslash doubled in text.
    std::fs::write(dir.join("s\\xFE.jsonl"), "{}\n").unwrap();
    let out = wiregen(&["validate", "--format", "json", dir.to_str().unwrap()], b"");
    let files: Vec<String> = records(&out).iter().map(|r| r["file"].as_str().unwrap().to_string()).collect();
    let base = dir.display().to_string();
    let want = [format!("{base}/s\\xFE.jsonl"), format!("{base}/s\\xFE.jsonl"), format!("{base}/s\\xFF.jsonl")];
    assert_eq!(files, want);
    let text = wiregen(&["validate", dir.to_str().unwrap()], b"");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains(&format!("{base}/s\\\\xFE.jsonl:1:")), "{text}");
    let valid: Vec<bool> = records(&out).iter().map(|r| r["valid"].as_bool().unwrap()).collect();
    assert_eq!(valid, [false, true, false]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// JSON output names a file as it is: a backslash in the name was doubled (the text form's escape), so the `file`
/// of a record, a `--summary` and `migrate`'s report named a file that does not exist (helper 82).
#[test]
fn json_output_names_a_file_with_a_backslash_as_it_is() {
    let dir = std::env::temp_dir().join(format!("wiregen-backslash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let file = dir.join("a\\b.jsonl");
    std::fs::write(&file, format!("{GOOD}\n")).expect("write");
    let name = file.to_str().expect("utf-8").to_string();
    let d = dir.to_str().expect("utf-8");
    let out = wiregen(&["validate", "--format", "json", d], b"");
    assert_eq!(records(&out)[0]["file"], name.as_str(), "{}", String::from_utf8_lossy(&out.stdout));
    let out = wiregen(&["validate", "--stream", "--summary", "--format", "json", d], b"");
    assert_eq!(records(&out)[0]["file"], name.as_str(), "{}", String::from_utf8_lossy(&out.stdout));
    let out = wiregen(
        &["migrate", "--from", "examples/happy-wire/schema", "--to", "schema", "--format", "json", "--out", "-", &name],
        b"",
    );
    let report: Value = serde_json::from_slice(&out.stderr).expect("one JSON report on stderr");
    assert_eq!(report["file"], name.as_str(), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `validate` and `types` on a broken schema end with the count, as `generate`, `check`, `diff`, `migrate` and
/// `serve` do (they printed only the diagnostics; helper 83).
#[test]
fn validate_and_types_count_a_broken_schemas_errors() {
    let dir = std::env::temp_dir().join(format!("wiregen-broken-count-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let file = dir.join("b.schema.json");
    std::fs::write(&file, r#"{"type": "object", "properties": {"a": {"type": "strin"}}}"#).expect("write");
    let f = file.to_str().expect("utf-8");
    let v = wiregen(&["validate", "--schema", f, "-"], b"{}\n");
    assert_eq!(v.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&v.stderr).contains("wiregen validate: the schema has 1 error\n"), "{v:?}");
    let t = wiregen(&["types", "--lang", "zod", f], b"");
    assert_eq!(t.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&t.stderr).contains("wiregen types: the schema has 1 error\n"), "{t:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A pipe is read once: stdin beside another name of it (`/dev/stdin`), or one FIFO given twice, is refused (two
/// readers split its lines between them). An input that may keep the run waiting (a FIFO with no writer yet) gets
/// the output of the inputs before it written out first, on one core too, where it was held back until the FIFO
/// was read (helper 94). Under `taskset -c 0` where there is one, to take the one-core path.
#[cfg(unix)]
#[test]
fn a_pipe_is_read_once_and_waiting_for_one_holds_nothing_back() {
    use std::io::BufRead;
    let out = wiregen(&["validate", "/dev/stdin", "-"], format!("{GOOD}\n").as_bytes());
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("are one pipe, socket or terminal"));
    let dir = std::env::temp_dir().join(format!("wiregen-fifo-wait-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("a.jsonl"), format!("{GOOD}\n")).expect("write");
    let fifo = dir.join("p.jsonl");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    let twice = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(&dir)
        .args(["validate", "p.jsonl", "a.jsonl", "p.jsonl"])
        .output()
        .expect("run wiregen");
    assert_eq!(twice.status.code(), Some(2), "{}", String::from_utf8_lossy(&twice.stderr));
    let one_core = Command::new("taskset").args(["-c", "0", "true"]).status().is_ok_and(|s| s.success());
    let mut cmd = if one_core { Command::new("taskset") } else { Command::new(env!("CARGO_BIN_EXE_wiregen")) };
    if one_core {
        cmd.args(["-c", "0", env!("CARGO_BIN_EXE_wiregen")]);
    }
    let mut child = cmd
        .current_dir(&dir)
        .args(["validate", "--stream", "--summary", "--format", "json", "a.jsonl", "p.jsonl"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("run wiregen");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let first = rx.recv_timeout(std::time::Duration::from_secs(20));
    // The FIFO's writer comes only now (it also lets a run that held the output back end).
    std::fs::write(&fifo, format!("{GOOD}\n")).expect("write the FIFO");
    let first = first.expect("a.jsonl's summary before anything was written to the FIFO");
    assert!(first.contains("\"file\":\"a.jsonl\""), "{first}");
    assert!(child.wait().expect("wait").success());
    let second = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("the FIFO's summary");
    assert!(second.contains("\"file\":\"p.jsonl\""), "{second}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn where_a_document_breaks_is_where_the_engine_stops_reading_it() {
    // 200 unclosed `[` on lines of their own: the engine's reading stops at the depth limit, on line 128, not at
    // the end of the input (skipping the value, serde_json has no depth limit); the end of a text that ends with a
    // line break is column 1 of the next line, in the engine's words (it said `EOF while parsing ... column 0`;
    // helper 114).
    let deep = "[\n".repeat(200);
    let out = wiregen(&["validate", "--format", "json"], deep.as_bytes());
    let first = records(&out)[0]["errors"][0]["message"].as_str().expect("message").to_string();
    assert!(
        first.ends_with("(read as one multi-line document: JSON nests deeper than 127 levels (at line 128 column 1))"),
        "{first}"
    );
    let cut = "{\n  \"id\": \"m1\",\n  \"time\": 1\n";
    let out = wiregen(&["validate", "--format", "json"], cut.as_bytes());
    let first = records(&out)[0]["errors"][0]["message"].as_str().expect("message").to_string();
    assert!(
        first.ends_with("(read as one multi-line document: unexpected end of input at line 4 column 1)"),
        "{first}"
    );
}

/// A file root that holds only `$defs` and annotations is their container, no type: checking the file as one
/// schema says so, and names the types there are (helper 122: it said only that no root was named).
#[test]
fn a_file_of_defs_alone_says_it_is_their_container() {
    let dir = std::env::temp_dir().join(format!("wiregen-container-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("thing.schema.json");
    let schema =
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"Thing","$defs":{"d":{"type":"string"}}}"#;
    std::fs::write(&file, schema).expect("write");
    let out = wiregen(&["validate", "--schema", file.to_str().expect("path"), "-"], b"\"x\"\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a file root that holds only `$defs` and annotations is their container, no type"), "{err}");
    assert!(err.contains("--type NAME takes one of its types: `D`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
