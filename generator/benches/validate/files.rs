//! Scaling of `wiregen validate` as a user runs it (whole process): pinned to one core (`taskset -c 0`) against
//! all cores, on one big file and on many files (a directory of 1,000 files of ~100 KB), interleaved round by
//! round. Both runs of an input must print the same bytes. Beside them, the machine's own ceiling for the same
//! work: two pinned processes started together, one per core, each checking the whole input (nothing shared
//! between them, no reader thread, no ordered writer): two inputs' worth in the time they take, against one
//! pinned process alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use super::median;

/// The many-files corpus: `files` files of about `each` bytes, cut from the big corpus at line ends.
pub fn many_files(big: &Path, dir: &Path, files: usize, each: usize) -> PathBuf {
    let out = dir.join(format!("many-{files}x{}k", each >> 10));
    if out.join(format!("{:04}.jsonl", files - 1)).exists() {
        return out;
    }
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("mkdir");
    let data = std::fs::read(big).expect("read the big corpus");
    let mut at = 0;
    for i in 0..files {
        let mut end = (at + each).min(data.len());
        while end < data.len() && data[end - 1] != b'\n' {
            end += 1;
        }
        if at >= data.len() {
            at = 0;
            end = each.min(data.len());
        }
        std::fs::write(out.join(format!("{i:04}.jsonl")), &data[at..end]).expect("write");
        at = end;
    }
    out
}

/// One measured input: seconds per round pinned, on all cores, and for two pinned processes at once (one per core,
/// each checking the whole input; empty when there is no second core to pin to).
pub struct Scaling {
    pub name: String,
    pub bytes: u64,
    pub one: Vec<f64>,
    pub all: Vec<f64>,
    pub pair: Vec<f64>,
}

impl Scaling {
    /// From the paired runs (`None` without them): what two unrelated pinned processes did as a multiple of one
    /// pinned process, and the all-core run's throughput against theirs (medians of the rounds).
    pub fn pair_ratios(&self) -> Option<(f64, f64)> {
        if self.pair.is_empty() {
            return None;
        }
        let (one, all, pair) = (median(&self.one), median(&self.all), median(&self.pair));
        Some((2.0 * one / pair, pair / (2.0 * all)))
    }
}

/// Whether `taskset` can pin a process to CPU `cpu` here.
pub fn can_pin_to(cpu: usize) -> bool {
    Command::new("taskset").args(["-c", &cpu.to_string(), "true"]).status().is_ok_and(|s| s.success())
}

/// Whether `taskset` can pin a process here.
pub fn can_pin() -> bool {
    can_pin_to(0)
}

/// `wiregen validate --format json INPUT > dir/NAME`, pinned to `cpu` (with `taskset`) or on all cores: the command
/// and the output file's path.
fn validate_command(
    wiregen: &str,
    root: &Path,
    dir: &Path,
    input: &Path,
    cpu: Option<usize>,
    name: &str,
) -> (Command, PathBuf) {
    let mut c = match cpu {
        Some(cpu) => {
            let mut c = Command::new("taskset");
            c.args(["-c", &cpu.to_string(), wiregen]);
            c
        }
        None => Command::new(wiregen),
    };
    let path = dir.join(name);
    let out = std::fs::File::create(&path).expect("create the output file");
    c.current_dir(root).args(["validate", "--format", "json"]).arg(input).stdout(out);
    (c, path)
}

/// The machine's ceiling for this input: two pinned processes started together on CPUs 0 and 1, each checking the
/// whole input; the seconds until both are done, added to `s`. Panics unless both print what the pinned run of
/// [`round`] printed (`expect`).
pub fn pair(wiregen: &str, root: &Path, dir: &Path, input: &Path, s: &mut Scaling, expect: &[u8]) {
    let t = Instant::now();
    let runs = [0, 1].map(|cpu| {
        let (mut c, path) =
            validate_command(wiregen, root, dir, input, Some(cpu), &format!("scaling-out-cpu{cpu}.jsonl"));
        (c.spawn().expect("run wiregen"), path)
    });
    for (mut child, path) in runs {
        let status = child.wait().expect("wait for wiregen");
        assert!(matches!(status.code(), Some(0 | 1)), "{}: a paired run failed", s.name);
        assert!(std::fs::read(&path).expect("read the output file") == expect, "{}: a paired run differs", s.name);
    }
    s.pair.push(t.elapsed().as_secs_f64());
}

/// Runs one round of `wiregen validate --format json INPUT > FILE`, pinned and on all cores (alternating which goes
/// first), adding the times to `s`; panics when the two outputs differ. The output goes to a file in `dir`, as a
/// user saving a report would: read through a pipe, this process's own reading would share the cores with the
/// all-core run (it measured ~10% lower there) but not with the pinned one, which has the other core to itself.
pub fn round(wiregen: &str, root: &Path, dir: &Path, input: &Path, s: &mut Scaling, pinned_first: bool) -> Vec<u8> {
    let run = |pinned: bool| {
        let (cpu, name) = if pinned { (Some(0), "scaling-out-pinned.jsonl") } else { (None, "scaling-out-all.jsonl") };
        let (mut c, path) = validate_command(wiregen, root, dir, input, cpu, name);
        let t = Instant::now();
        let o = c.output().expect("run wiregen");
        let secs = t.elapsed().as_secs_f64();
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
        (secs, std::fs::read(&path).expect("read the output file"))
    };
    let (a, b) = if pinned_first {
        let one = run(true);
        (one, run(false))
    } else {
        let all = run(false);
        (run(true), all)
    };
    assert!(a.1 == b.1, "{}: the pinned and the all-cores run printed different output", s.name);
    s.one.push(a.0);
    s.all.push(b.0);
    a.1
}

/// Total size of a file or of the `*.jsonl` files in a directory.
pub fn size(p: &Path) -> u64 {
    if p.is_dir() {
        std::fs::read_dir(p).expect("read dir").flatten().map(|e| e.metadata().map_or(0, |m| m.len())).sum()
    } else {
        std::fs::metadata(p).map_or(0, |m| m.len())
    }
}

/// [`sessions`] puts a sequence mistake and a message mistake in every this many sessions.
pub const BROKEN_EVERY: usize = 100;

/// The session-shaped corpus: the seed's Realistic Flow (`tests/fixtures/streams/seed-realistic-flow.jsonl`: turns,
/// tool calls, a permission, a subagent, control and configuration changes) as `sessions` whole sessions one
/// after another, each with its own ids (message ids, turns, calls and subagents get the session's suffix), and in
/// every [`BROKEN_EVERY`]th session two mistakes: a `tool-call-end` of a call that is not open (a sequence
/// violation) and a `turn-end` with an unknown status (a message error). Deterministic. One stream in one file, or with `per_file`
/// a directory with one file per session (how stored sessions are usually kept: each file one stream).
pub fn sessions(root: &Path, dir: &Path, sessions: usize, per_file: bool) -> PathBuf {
    use serde_json::Value;
    let out = if per_file {
        dir.join(format!("sessions-{sessions}-files"))
    } else {
        dir.join(format!("sessions-{sessions}.jsonl"))
    };
    let last = out.join(format!("{:04}.jsonl", sessions.saturating_sub(1)));
    if (per_file && last.exists()) || (!per_file && out.exists()) {
        return out;
    }
    if per_file {
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).expect("mkdir");
    }
    let flow = std::fs::read_to_string(root.join("tests/fixtures/streams/seed-realistic-flow.jsonl")).expect("flow");
    let messages: Vec<Value> =
        flow.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("json")).collect();
    let mut text = String::new();
    let suffix = |v: &mut Value, r: usize| {
        if let Some(s) = v.as_str() {
            *v = Value::from(format!("{s}s{r}"));
        }
    };
    for r in 0..sessions {
        for (i, m) in messages.iter().enumerate() {
            let mut m = m.clone();
            for k in ["id", "turn", "subagent"] {
                if let Some(v) = m.get_mut(k) {
                    suffix(v, r);
                }
            }
            for k in ["call", "agentId"] {
                if let Some(v) = m.get_mut("ev").and_then(|e| e.get_mut(k)) {
                    suffix(v, r);
                }
            }
            if r % BROKEN_EVERY == BROKEN_EVERY - 1 && i == 5 {
                let mut bad = m.clone();
                bad["id"] = Value::from(format!("x1s{r}"));
                bad["ev"] = serde_json::json!({"t": "tool-call-end", "call": format!("nowhere{r}")});
                text.push_str(&bad.to_string());
                text.push('\n');
                let mut wrong = m.clone();
                wrong["id"] = Value::from(format!("x2s{r}"));
                wrong["ev"] = serde_json::json!({"t": "turn-end", "status": "done"});
                text.push_str(&wrong.to_string());
                text.push('\n');
            }
            text.push_str(&m.to_string());
            text.push('\n');
        }
        if per_file {
            std::fs::write(out.join(format!("{r:04}.jsonl")), std::mem::take(&mut text)).expect("write a session");
        }
    }
    if !per_file {
        std::fs::write(&out, text).expect("write the session corpus");
    }
    out
}

/// One round of message mode against stream mode on one input, whole process, pinned to one core: seconds of
/// `wiregen validate --format json INPUT` and of the same with `--stream`.
pub fn stream_round(wiregen: &str, root: &Path, input: &Path) -> (f64, f64) {
    let run = |stream: bool| {
        let mut c = Command::new("taskset");
        c.args(["-c", "0", wiregen]).current_dir(root).args(["validate", "--format", "json"]);
        if stream {
            c.arg("--stream");
        }
        c.arg(input);
        let t = Instant::now();
        let o = c.output().expect("run wiregen");
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
        t.elapsed().as_secs_f64()
    };
    let message = run(false);
    (message, run(true))
}
