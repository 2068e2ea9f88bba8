//! Validation throughput, measured side by side against named peers in one run.
//!
//! `cargo bench -p wiregen --bench validate` (options after `--`: `--mb N` corpus size, default 100; `--rounds N`,
//! default 5; `--no-node` skips the node contenders). It writes a deterministic corpus (mostly text and tool calls, ~5% invalid lines spread over the
//! rules) to `target/bench/`, then measures, interleaved round by round:
//! - `serde_json -> IgnoredAny`: the parse floor every serde-based validator pays, on one thread pinned to one CPU;
//! - `simd-json` tape: a second floor, a SIMD parser's skip-only mode (structural index and a flat tape of values,
//!   no tree; the SIMD level picked at run time), pinned to the same CPU; it must reject the lines serde_json does;
//! - `jsonschema` crate: parse to `Value` + `is_valid` with the bundled schema;
//! - `wiregen` engine in-process, one thread pinned to the same CPU as the floor, and all threads; and, for
//!   information, its fast verdict alone (what it costs before the invalid lines are explained);
//! - `wiregen validate` as a whole process, and the floor as a whole process, on the 1k-line and large corpus;
//! - ajv 8 (compiled bundled schema, `JSON.parse` + validate) and the generated Zod package, in node;
//! - stream mode against message mode on whole sessions: whole process, and in-process with the checker built
//!   from the declarations whole and from reduced copies of them (`validate/stream.rs`), which shows where
//!   `--stream`'s time goes.
//!
//! Every validator must report the same invalid lines; the run fails otherwise. Medians and ratios are printed
//! and written to `target/bench/report.md`.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::de::IgnoredAny;
use serde_json::Value;
use wiregen::engine::{Engine, EngineOptions};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_path_buf()
}

#[path = "validate/files.rs"]
mod files;
#[path = "validate/stream.rs"]
mod stream;

#[path = "../tests/support/rng.rs"]
#[allow(dead_code)]
mod rng;
use rng::Rng;

/// A word of realistic message text.
fn word(rng: &mut Rng) -> &'static str {
    const W: &[&str] = &[
        "the",
        "payment",
        "module",
        "retry",
        "handler",
        "TODO",
        "fix",
        "auth",
        "src/",
        "checkout.ts",
        "tests",
        "run",
        "search",
        "for",
        "`handleClick`",
        "**bold**",
        "and",
        "a",
        "failing",
        "case",
        "in",
        "config",
        "é",
        "→",
    ];
    rng.pick::<&str>(W)
}

/// A sentence of 3 to `words + 2` words.
fn sentence(rng: &mut Rng, words: u64) -> String {
    let n = 3 + rng.below(words);
    (0..n).map(|_| word(rng)).collect::<Vec<_>>().join(" ")
}

/// One corpus line: a realistic envelope, or (about 5%) an invalid one of a rotating kind.
fn line(rng: &mut Rng, i: u64) -> String {
    let id = format!("m{i:x}k{}", rng.below(1 << 30));
    let time = 1_739_347_200_000u64 + i * 7;
    let invalid = rng.below(100) < 5;
    let kind = rng.below(100);
    let (role, ev, agent) = match kind {
        0..=29 => {
            let agent = rng.below(3) > 0;
            let t = sentence(rng, 40);
            let ev = if agent && rng.below(4) == 0 {
                serde_json::json!({"t": "text", "text": t, "thinking": true})
            } else {
                serde_json::json!({"t": "text", "text": t})
            };
            (if agent { "agent" } else { "user" }, ev, agent)
        }
        30..=54 => {
            let call = format!("call_{}", rng.below(1 << 20));
            let tool = ["grep", "edit", "bash", "read"][rng.below(4) as usize];
            let ev = serde_json::json!({"t": "tool-call-start", "call": call, "name": tool,
                "title": sentence(rng, 5), "description": sentence(rng, 12),
                "args": {"pattern": word(rng), "path": "src/payment/", "flags": ["-n", "-i"], "limit": rng.below(500), "context": {"before": 2, "after": 2}}});
            ("agent", ev, true)
        }
        55..=74 => {
            ("agent", serde_json::json!({"t": "tool-call-end", "call": format!("call_{}", rng.below(1 << 20))}), true)
        }
        75..=78 => (
            "user",
            serde_json::json!({"t": "file", "ref": format!("upload_{}", rng.below(1000)), "name": "report.pdf", "size": rng.below(1 << 24),
            "image": {"width": 800, "height": 600, "thumbhash": "1QcSHQRnh493V4dIh4eXh1h4kJUI"}}),
            false,
        ),
        79..=82 => ("agent", serde_json::json!({"t": "turn-start"}), true),
        83..=86 => (
            "agent",
            serde_json::json!({"t": "turn-end", "status": "completed", "usage": {"inputTokens": rng.below(100_000), "outputTokens": rng.below(5000), "cost": 0.012}}),
            true,
        ),
        87..=89 => (
            "agent",
            serde_json::json!({"t": "permission-request", "call": "c2", "toolName": "bash", "title": "Run `npm test`", "description": sentence(rng, 8), "args": {"command": "npm test"}}),
            true,
        ),
        90..=91 => {
            ("user", serde_json::json!({"t": "permission-response", "call": "c2", "decision": "allow-once"}), false)
        }
        92..=93 => {
            ("agent", serde_json::json!({"t": "subagent-start", "agentId": "sa_research", "title": "Research"}), true)
        }
        94 => ("agent", serde_json::json!({"t": "subagent-stop", "agentId": "sa_research"}), true),
        95..=96 => (
            "user",
            serde_json::json!({"t": "session-control-changed", "clientType": "phone", "tokenId": "tok_abc"}),
            false,
        ),
        97..=98 => (
            "user",
            serde_json::json!({"t": "agent-configuration-changed", "model": "claude-sonnet-4-6", "thinkingLevel": "high"}),
            false,
        ),
        _ => ("user", serde_json::json!({"t": "abort"}), false),
    };
    let mut env = serde_json::json!({"id": id, "time": time, "role": role});
    if agent {
        env["turn"] = Value::from(format!("turn{}", i / 50));
    }
    env["ev"] = ev;
    if invalid {
        match rng.below(8) {
            0 => env["time"] = Value::from("yesterday"),
            1 => env["role"] = Value::from(if role == "user" { "agent" } else { "user" }),
            2 => env["ev"]["t"] = Value::from("start"),
            3 => {
                env.as_object_mut().expect("object").remove("id");
            }
            4 => env["ev"]["extra"] = Value::from(1),
            5 => env["turn"] = Value::Null,
            6 => env["id"] = Value::from(""),
            _ => {
                let mut s = serde_json::to_string(&env).expect("json");
                let mut cut = s.len() / 2;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                s.truncate(cut);
                return s;
            }
        }
    }
    serde_json::to_string(&env).expect("json")
}

fn corpus(path: &Path, target_bytes: u64) -> (u64, u64) {
    let mut rng = Rng(0x5EED_CAFE_F00D_0001);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create corpus"));
    let (mut bytes, mut n) = (0u64, 0u64);
    while bytes < target_bytes {
        let l = line(&mut rng, n);
        bytes += l.len() as u64 + 1;
        n += 1;
        writeln!(out, "{l}").expect("write");
    }
    out.flush().expect("flush");
    (n, bytes)
}

fn corpus_lines(path: &Path) -> Vec<Vec<u8>> {
    std::fs::read(path)
        .expect("read corpus")
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

struct Contender {
    name: &'static str,
    secs: Vec<f64>,
    invalid: BTreeSet<u64>,
    note: &'static str,
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// Per-round speed ratios of `other` against `base`, measured back to back in each round (so a host that slows
/// down between rounds slows both): "median Mx (min-max A-Bx)".
fn paired(base: &[f64], other: &[f64]) -> String {
    let mut r: Vec<f64> = base.iter().zip(other).map(|(b, o)| b / o).collect();
    r.sort_by(f64::total_cmp);
    format!("median {:.2}x (min-max {:.2}-{:.2}x)", r[r.len() / 2], r[0], r[r.len() - 1])
}

/// The CPU the single-core figures are pinned to: 0 when this process may run there, else the first it may use;
/// `None` where pinning is not available.
#[cfg(target_os = "linux")]
fn pin_cpu() -> Option<usize> {
    // SAFETY: `set` is a plain bit set owned by this frame; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &set))
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_cpu() -> Option<usize> {
    None
}

/// Runs `f` on a new thread pinned to `cpu` (on the calling thread unpinned when `cpu` is `None`). The calling
/// thread keeps its affinity, so threads started later (rayon's pool, child processes) use every core.
fn pinned<R: Send>(cpu: Option<usize>, f: impl FnOnce() -> R + Send) -> R {
    let Some(cpu) = cpu else { return f() };
    std::thread::scope(|s| {
        s.spawn(move || {
            #[cfg(target_os = "linux")]
            // SAFETY: as in pin_cpu; the set names one CPU this process may use, and 0 means this thread.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                assert_eq!(
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
                    0,
                    "pin to CPU {cpu}"
                );
            }
            f()
        })
        .join()
        .expect("pinned measurement")
    })
}

fn invalid_from_records(text: &str) -> BTreeSet<u64> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["valid"] == false)
        .filter_map(|r| r["line"].as_u64())
        .collect()
}

/// Runs `npm ARGS` in `dir` (skipped for `ci` when `node_modules/` exists); whether it succeeded.
fn npm(dir: &Path, args: &[&str], only_if_missing: bool) -> bool {
    if only_if_missing && dir.join("node_modules").is_dir() {
        return true;
    }
    Command::new("npm").current_dir(dir).args(args).status().is_ok_and(|s| s.success())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // Whole-process floor: this binary re-invoked to parse a file into IgnoredAny line by line.
    if let Some(i) = args.iter().position(|a| a == "--floor-process") {
        let data = std::fs::read(&args[i + 1]).expect("read");
        let bad = data
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .filter(|l| serde_json::from_slice::<IgnoredAny>(l).is_err())
            .count();
        println!("{bad}");
        return;
    }
    let opt = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let mb = opt("--mb", 100);
    let rounds = opt("--rounds", 5) as usize;
    let dir = root().join("target/bench");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let big = dir.join(format!("corpus-{mb}mb.jsonl"));
    let small = dir.join("corpus-1k.jsonl");
    let (n_big, bytes_big) = corpus(&big, mb << 20);
    let mut rng = Rng(0x5EED_CAFE_F00D_0001);
    std::fs::write(&small, (0..1000).map(|i| line(&mut rng, i) + "\n").collect::<String>()).expect("small corpus");
    let bytes_small = std::fs::metadata(&small).expect("small").len();
    eprintln!(
        "corpus: {n_big} lines, {:.1} MB ({}); 1k-line corpus {bytes_small} bytes",
        bytes_big as f64 / 1e6,
        big.display()
    );

    let proto = wiregen::load::load(&root().join("schema")).expect("schema");
    let engine = Engine::new(proto, EngineOptions::default()).expect("the schema has a root type");
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("generated/schema/session-protocol.schema.json")).expect("bundled schema"),
    )
    .expect("json");
    let js = jsonschema::draft202012::new(&schema).expect("compile bundled schema");
    let lines = corpus_lines(&big);
    let node_dir = root().join("tests/node");
    let ts_dir = root().join("generated/ts");
    // Node contenders set themselves up like the tests do: dependencies from the lockfiles, then the package build.
    let have_node = !args.iter().any(|a| a == "--no-node")
        && Command::new("node").arg("--version").output().is_ok()
        && npm(&node_dir, &["ci", "--no-audit", "--no-fund", "--loglevel=error"], true)
        && npm(&ts_dir, &["ci", "--no-audit", "--no-fund", "--loglevel=error"], true)
        && npm(&ts_dir, &["run", "--silent", "build"], false);
    let zod_dist = ts_dir.join("dist/index.js");

    let mut cs: Vec<Contender> = Vec::new();
    let mut add = |name: &'static str, note: &'static str| {
        cs.push(Contender { name, secs: Vec::new(), invalid: BTreeSet::new(), note });
        cs.len() - 1
    };
    let cpu = pin_cpu();
    let floor = add("serde_json -> IgnoredAny (floor)", "in-process, 1 thread, pinned");
    let simd = add(
        "simd-json tape (second floor, SIMD)",
        "in-process, 1 thread, pinned: each line copied into a buffer it may write, parsed into its tape",
    );
    let jsch = add("jsonschema crate (Value + is_valid)", "in-process, 1 thread, bundled schema");
    let w1 = add("wiregen engine", "in-process, 1 thread, pinned");
    let wf = add(
        "wiregen fast verdict alone (not a validator)",
        "in-process, 1 thread, pinned: what the engine costs without explaining the invalid lines",
    );
    let wm = add("wiregen engine", "in-process, all threads, lines in memory");
    let w2 = add("wiregen engine", "in-process, all threads, reading the file");
    let wp = add("wiregen validate (process)", "whole process, all cores");
    let ajv = if have_node { Some(add("ajv 8 (JSON.parse + validate)", "node, bundled schema")) } else { None };
    let zod =
        if have_node && zod_dist.exists() { Some(add("generated Zod (JSON.parse + safeParse)", "node")) } else { None };
    let standalone = if have_node && zod_dist.exists() {
        Some(add("generated standalone TS (JSON.parse + validate)", "node"))
    } else {
        None
    };
    let wps = add("wiregen validate (process), 1k lines", "whole process, start-up included");
    let fps = add("floor (process), 1k lines", "whole process, start-up included");
    let exe = std::env::current_exe().expect("current exe");
    let wiregen = env!("CARGO_BIN_EXE_wiregen");

    for round in 0..rounds {
        eprintln!("round {}/{rounds}", round + 1);
        // Floor, one thread pinned.
        let (secs, bad) = pinned(cpu, || {
            let t = Instant::now();
            let mut bad = BTreeSet::new();
            for (i, l) in lines.iter().enumerate() {
                if serde_json::from_slice::<IgnoredAny>(l).is_err() {
                    bad.insert(i as u64 + 1);
                }
            }
            (t.elapsed().as_secs_f64(), bad)
        });
        cs[floor].secs.push(secs);
        // Syntax errors only: compared with the second floor's, not with the validators'.
        cs[floor].invalid = bad;
        // The second floor: simd-json parses in place, so each line goes into one reused buffer first (as a
        // caller holding the batch read-only would have to), then into the tape; no value is built.
        let (secs, bad) = pinned(cpu, || {
            let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
            let mut buffers = simd_json::Buffers::default();
            let t = Instant::now();
            let mut bad = BTreeSet::new();
            for (i, l) in lines.iter().enumerate() {
                buf.clear();
                buf.extend_from_slice(l);
                if simd_json::Deserializer::from_slice_with_buffers(&mut buf, &mut buffers).is_err() {
                    bad.insert(i as u64 + 1);
                }
            }
            (t.elapsed().as_secs_f64(), bad)
        });
        cs[simd].secs.push(secs);
        cs[simd].invalid = bad;
        // wiregen, one thread pinned to the same CPU, right after the floor.
        let (secs, bad) = pinned(cpu, || {
            let t = Instant::now();
            let mut bad = BTreeSet::new();
            for (i, l) in lines.iter().enumerate() {
                if !engine.check_line_fast(l).is_empty() {
                    bad.insert(i as u64 + 1);
                }
            }
            (t.elapsed().as_secs_f64(), bad)
        });
        cs[w1].secs.push(secs);
        cs[w1].invalid = bad;
        // The fast verdict alone: the same engine without the precise path that explains the invalid lines.
        let (secs, bad) = pinned(cpu, || {
            let t = Instant::now();
            let mut bad = BTreeSet::new();
            for (i, l) in lines.iter().enumerate() {
                if !engine.is_valid_fast(l) {
                    bad.insert(i as u64 + 1);
                }
            }
            (t.elapsed().as_secs_f64(), bad)
        });
        cs[wf].secs.push(secs);
        // Not compared: a line it does not vouch for may still be valid.
        cs[wf].invalid = bad;
        // jsonschema crate.
        let t = Instant::now();
        let mut bad = BTreeSet::new();
        for (i, l) in lines.iter().enumerate() {
            let ok = serde_json::from_slice::<Value>(l).is_ok_and(|v| js.is_valid(&v));
            if !ok {
                bad.insert(i as u64 + 1);
            }
        }
        cs[jsch].secs.push(t.elapsed().as_secs_f64());
        cs[jsch].invalid = bad;
        // wiregen, all threads, on the lines in memory (the compute alone).
        let t = Instant::now();
        let bad: BTreeSet<u64> = {
            use rayon::prelude::*;
            lines
                .par_iter()
                .enumerate()
                .filter(|(_, l)| !engine.check_line_fast(l).is_empty())
                .map(|(i, _)| i as u64 + 1)
                .collect()
        };
        cs[wm].secs.push(t.elapsed().as_secs_f64());
        cs[wm].invalid = bad;
        // wiregen, all threads, reading the file like the CLI does.
        let t = Instant::now();
        let mut bad = BTreeSet::new();
        let f = std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(&big).expect("open"));
        wiregen::validate::validate_reader(&engine, f, |r: wiregen::validate::Record| {
            if !r.valid {
                bad.insert(r.line as u64);
            }
        })
        .expect("read");
        cs[w2].secs.push(t.elapsed().as_secs_f64());
        cs[w2].invalid = bad;
        // Whole process, large corpus.
        let t = Instant::now();
        let out = Command::new(wiregen)
            .current_dir(root())
            .args(["validate", "--format", "json"])
            .arg(&big)
            .output()
            .expect("run wiregen");
        cs[wp].secs.push(t.elapsed().as_secs_f64());
        cs[wp].invalid = invalid_from_records(&String::from_utf8_lossy(&out.stdout));
        // Node contenders.
        for (idx, which) in [(ajv, "ajv"), (zod, "zod"), (standalone, "standalone")] {
            let Some(idx) = idx else { continue };
            let out = Command::new("node")
                .current_dir(&node_dir)
                .args(["bench.mjs", which])
                .arg(&big)
                .stderr(Stdio::inherit())
                .output()
                .expect("run node");
            let r: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|_| panic!("{which}: {}", String::from_utf8_lossy(&out.stdout)));
            cs[idx].secs.push(r["seconds"].as_f64().expect("seconds"));
            cs[idx].invalid = r["invalid"].as_array().expect("invalid").iter().filter_map(Value::as_u64).collect();
        }
        // Whole process on the 1k-line corpus: several runs per round, best of them (start-up noise).
        let best = |cmd: &mut dyn FnMut() -> Command| {
            (0..5)
                .map(|_| {
                    let t = Instant::now();
                    let o = cmd().output().expect("run");
                    assert!(o.status.code().is_some());
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::MAX, f64::min)
        };
        let s = best(&mut || {
            let mut c = Command::new(wiregen);
            c.current_dir(root()).args(["validate", "--format", "json"]).arg(&small);
            c
        });
        cs[wps].secs.push(s);
        let s = best(&mut || {
            let mut c = Command::new(&exe);
            c.arg("--floor-process").arg(&small);
            c
        });
        cs[fps].secs.push(s);
    }
    // generate and check for the whole protocol, whole process (generate into a scratch directory).
    let scratch = dir.join("generate-out");
    let _ = std::fs::remove_dir_all(&scratch);
    let wall = |args: &[&str]| {
        let mut v: Vec<f64> = (0..9)
            .map(|_| {
                let t = Instant::now();
                let o = Command::new(wiregen).current_dir(root()).args(args).output().expect("run wiregen");
                assert!(o.status.success(), "wiregen {args:?}: {}", String::from_utf8_lossy(&o.stderr));
                t.elapsed().as_secs_f64()
            })
            .collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let gen_s = wall(&["generate", "--out", scratch.to_str().expect("utf-8 path")]);
    let check_s = wall(&["check"]);
    let small_invalid = invalid_from_records(&String::from_utf8_lossy(
        &Command::new(wiregen)
            .current_dir(root())
            .args(["validate", "--format", "json"])
            .arg(&small)
            .output()
            .expect("run")
            .stdout,
    ));

    // Scaling as a user runs it: pinned to one core against all cores, one big file and 1,000 files of ~100 KB.
    let mut scaling = Vec::new();
    if files::can_pin() {
        let many = files::many_files(&big, &dir, 1000, 100 << 10);
        for (name, input) in [
            (format!("one file ({mb} MB corpus)"), big.clone()),
            ("1,000 files of ~100 KB (a directory)".to_string(), many),
        ] {
            let mut s =
                files::Scaling { name, bytes: files::size(&input), one: Vec::new(), all: Vec::new(), pair: Vec::new() };
            for r in 0..rounds {
                let out = files::round(wiregen, &root(), &dir, &input, &mut s, r % 2 == 0);
                if files::can_pin_to(1) {
                    files::pair(wiregen, &root(), &dir, &input, &mut s, &out);
                }
            }
            scaling.push(s);
        }
    }
    // Stream mode against message mode on whole sessions, one core.
    let (mut stream_rounds, mut stream_files_rounds) = (Vec::new(), Vec::new());
    let mut in_process = (stream::variants(engine.model()), 0);
    if files::can_pin() {
        const SESSIONS: usize = 4000;
        let one = files::sessions(&root(), &dir, SESSIONS, false);
        let per_file = files::sessions(&root(), &dir, SESSIONS, true);
        let session_lines = corpus_lines(&one);
        in_process.1 = session_lines.len();
        for _ in 0..rounds {
            stream_rounds.push(files::stream_round(wiregen, &root(), &one));
            stream_files_rounds.push(files::stream_round(wiregen, &root(), &per_file));
            stream::round(&engine, &mut in_process.0, &session_lines, |f| pinned(cpu, f));
        }
        stream::check(&in_process.0, SESSIONS / files::BROKEN_EVERY);
    }

    // Agreement: every validator reports the same invalid lines.
    let reference = cs[w1].invalid.clone();
    let mut disagree = Vec::new();
    for (i, c) in cs.iter().enumerate() {
        if i == floor || i == simd || i == wf || i == wps || i == fps {
            continue;
        }
        if c.invalid != reference {
            let only_a: Vec<_> = c.invalid.difference(&reference).take(5).collect();
            let only_b: Vec<_> = reference.difference(&c.invalid).take(5).collect();
            disagree.push(format!("{}: extra {only_a:?}, missing {only_b:?}", c.name));
        }
    }

    // The two floors only parse: they must reject the same (truncated) lines.
    if cs[simd].invalid != cs[floor].invalid {
        let extra: Vec<_> = cs[simd].invalid.difference(&cs[floor].invalid).take(5).collect();
        let missing: Vec<_> = cs[floor].invalid.difference(&cs[simd].invalid).take(5).collect();
        disagree.push(format!(
            "{} against serde_json's syntax errors: extra {extra:?}, missing {missing:?}",
            cs[simd].name
        ));
    }

    let mbs = |c: &Contender, bytes: u64| bytes as f64 / 1e6 / median(&c.secs);
    let w1_mbs = mbs(&cs[w1], bytes_big);
    let mut report = format!(
        "corpus: {n_big} envelopes, {:.1} MB, {} invalid ({:.1}%); {rounds} interleaved rounds, medians; machine: {} cores; {}\n\n",
        bytes_big as f64 / 1e6,
        reference.len(),
        100.0 * reference.len() as f64 / n_big as f64,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        match cpu {
            Some(c) => format!("pinned = one thread on CPU {c} (sched_setaffinity)"),
            None => "pinning unavailable here: the pinned rows ran unpinned".to_string(),
        }
    );
    report.push_str(
        "| contender | how | MB/s | envelopes/s | wiregen 1-thread (pinned) vs it |\n|---|---|---:|---:|---:|\n",
    );
    for (i, c) in cs.iter().enumerate() {
        if i == wps || i == fps {
            continue;
        }
        let m = mbs(c, bytes_big);
        report.push_str(&format!(
            "| {} | {} | {:.0} | {:.0} | {:.2}x |\n",
            c.name,
            c.note,
            m,
            n_big as f64 / median(&c.secs),
            w1_mbs / m
        ));
    }
    let ratio = |a: usize, b: usize| median(&cs[a].secs) / median(&cs[b].secs);
    report.push_str(&format!(
        "\n1k-line corpus ({} invalid), whole process, best of 5 per round, median over rounds: wiregen {:.1} ms, floor {:.1} ms, ratio {:.2}x\n",
        small_invalid.len(),
        median(&cs[wps].secs) * 1e3,
        median(&cs[fps].secs) * 1e3,
        ratio(wps, fps)
    ));
    report.push_str(&format!(
        "\nwiregen generate (all outputs, into an empty-then-current directory): {:.1} ms; wiregen check: {:.1} ms (median of 9, whole process)\n",
        gen_s * 1e3,
        check_s * 1e3
    ));
    if scaling.is_empty() {
        report.push_str("\n(scaling skipped: `taskset -c 0` cannot pin a process here)\n");
    } else {
        report.push_str(
            "\nScaling, whole process (`wiregen validate --format json INPUT > FILE`, pinned with `taskset -c 0` vs all cores; both write the same bytes). What the two cores do for unrelated jobs, in the same rounds: two pinned processes started together (`taskset -c 0` and `-c 1`), each checking the whole input, nothing shared (twice the work in the time both take), against one pinned process, and the all-core run's throughput against theirs:\n\n| input | MB | 1 core (pinned) MB/s | all cores MB/s | all / one | 2 pinned processes at once / one | all cores / 2 pinned processes |\n|---|---:|---:|---:|---:|---:|---:|\n",
        );
        for s in &scaling {
            let (one, all) = (median(&s.one), median(&s.all));
            let (ceiling, share) = match s.pair_ratios() {
                Some((ceiling, share)) => (format!("{ceiling:.2}x"), format!("{share:.2}x")),
                None => ("-".to_string(), "-".to_string()),
            };
            report.push_str(&format!(
                "| {} | {:.1} | {:.0} | {:.0} | {:.2}x | {ceiling} | {share} |\n",
                s.name,
                s.bytes as f64 / 1e6,
                s.bytes as f64 / 1e6 / one,
                s.bytes as f64 / 1e6 / all,
                one / all
            ));
        }
    }
    if !stream_rounds.is_empty() {
        let med = |rs: &[(f64, f64)]| {
            (median(&rs.iter().map(|r| r.0).collect::<Vec<_>>()), median(&rs.iter().map(|r| r.1).collect::<Vec<_>>()))
        };
        let (m, st) = med(&stream_rounds);
        let (mf, sf) = med(&stream_files_rounds);
        report.push_str(&format!(
            "\nStream mode on whole sessions (4,000 sessions of the seed's Realistic Flow with their own ids, 40 with two mistakes; whole process pinned to one core):\n- as one stream in one file: message mode {:.0} ms, `--stream` {:.0} ms, stream / message speed {:.2}x (issue 13's target: >= 0.8x)\n- as a directory of 4,000 files, one session each: message mode {:.0} ms, `--stream` {:.0} ms, stream / message speed {:.2}x (per-file work is most of both)\n",
            m * 1e3,
            st * 1e3,
            m / st,
            mf * 1e3,
            sf * 1e3,
            mf / sf
        ));
        report.push_str(&stream::report(&in_process.0, in_process.1, median));
    }
    report.push_str("\nTargets (issues 8 and 17):\n");
    let target = |name: &str, got: f64, want: f64, more_is_better: bool| {
        let ok = if more_is_better { got >= want } else { got <= want };
        format!(
            "- {name}: {got:.2}x (target {} {want}x) {}\n",
            if more_is_better { ">=" } else { "<=" },
            if ok { "met" } else { "MISSED" }
        )
    };
    report.push_str(&target("wiregen 1 thread vs floor, both pinned", w1_mbs / mbs(&cs[floor], bytes_big), 1.0, true));
    report.push_str(&format!(
        "  (the fast verdict alone, without explaining the {} invalid lines: {:.2}x the floor)\n",
        reference.len(),
        mbs(&cs[wf], bytes_big) / mbs(&cs[floor], bytes_big)
    ));
    report.push_str(&format!(
        "  (round by round, each against the floor run just before it on the same CPU: wiregen 1 thread {}, the fast verdict alone {})\n",
        paired(&cs[floor].secs, &cs[w1].secs),
        paired(&cs[floor].secs, &cs[wf].secs)
    ));
    report.push_str(&format!(
        "  (the second floor, simd-json's tape, pinned, ran at {:.2}x the serde_json floor; wiregen 1 thread {:.2}x it, the fast verdict alone {:.2}x it)\n",
        mbs(&cs[simd], bytes_big) / mbs(&cs[floor], bytes_big),
        w1_mbs / mbs(&cs[simd], bytes_big),
        mbs(&cs[wf], bytes_big) / mbs(&cs[simd], bytes_big)
    ));
    report.push_str(&target("wiregen 1 thread vs jsonschema crate", w1_mbs / mbs(&cs[jsch], bytes_big), 3.0, true));
    if let Some(a) = ajv {
        report.push_str(&target("wiregen 1 thread vs ajv", w1_mbs / mbs(&cs[a], bytes_big), 10.0, true));
    }
    report.push_str(&target("wiregen all threads (reading the file) vs 1 thread pinned", ratio(w1, w2), 1.7, true));
    for sc in &scaling {
        let name = format!("wiregen validate, all cores vs pinned, {}", sc.name);
        report.push_str(&target(&name, median(&sc.one) / median(&sc.all), 1.7, true));
        if let Some((ceiling, share)) = sc.pair_ratios() {
            report.push_str(&format!(
                "  (two unrelated pinned processes at once did {ceiling:.2}x one in this run; the all-core run {share:.2}x their throughput)\n"
            ));
        }
    }
    report.push_str(&target("whole process 1k lines vs floor process", ratio(wps, fps), 2.0, false));
    report.push_str(&format!(
        "- wiregen generate: {:.1} ms (target < 100 ms) {}\n- wiregen check: {:.1} ms (target < 100 ms) {}\n",
        gen_s * 1e3,
        if gen_s < 0.1 { "met" } else { "MISSED" },
        check_s * 1e3,
        if check_s < 0.1 { "met" } else { "MISSED" }
    ));
    if !have_node {
        report.push_str("\n(node contenders skipped: --no-node, or node/npm unavailable)\n");
    }
    if zod.is_none() {
        report.push_str("\n(generated Zod skipped: build it with `npm ci && npm run build` in generated/ts)\n");
    }
    if !disagree.is_empty() {
        report.push_str(&format!("\nDISAGREEMENT on invalid lines:\n{}\n", disagree.join("\n")));
    } else {
        report.push_str(&format!(
            "\nAll {} validators report the same {} invalid lines.\n",
            cs.len() - 5,
            reference.len()
        ));
    }
    print!("{report}");
    std::fs::write(dir.join("report.md"), &report).expect("write report");
    assert!(disagree.is_empty(), "contenders disagree on invalid lines");
}
