//! Scaling of `wiregen validate` as a user runs it (whole process): pinned to one core (`taskset -c 0`) against
//! all cores, on one big file and on many files (a directory of 1,000 files of ~100 KB), interleaved round by
//! round. Both runs of an input must print the same bytes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

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

/// One measured input: seconds per round pinned and on all cores.
pub struct Scaling {
    pub name: String,
    pub bytes: u64,
    pub one: Vec<f64>,
    pub all: Vec<f64>,
}

/// Whether `taskset` can pin a process here.
pub fn can_pin() -> bool {
    Command::new("taskset").args(["-c", "0", "true"]).status().is_ok_and(|s| s.success())
}

/// Runs one round of `wiregen validate --format json INPUT`, pinned and on all cores (alternating which goes
/// first), adding the times to `s`; panics when the two outputs differ.
pub fn round(wiregen: &str, root: &Path, input: &Path, s: &mut Scaling, pinned_first: bool) {
    let run = |pinned: bool| {
        let mut c = if pinned {
            let mut c = Command::new("taskset");
            c.args(["-c", "0", wiregen]);
            c
        } else {
            Command::new(wiregen)
        };
        c.current_dir(root).args(["validate", "--format", "json"]).arg(input);
        let t = Instant::now();
        let o = c.output().expect("run wiregen");
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
        (t.elapsed().as_secs_f64(), o.stdout)
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
}

/// Total size of a file or of the `*.jsonl` files in a directory.
pub fn size(p: &Path) -> u64 {
    if p.is_dir() {
        std::fs::read_dir(p).expect("read dir").flatten().map(|e| e.metadata().map_or(0, |m| m.len())).sum()
    } else {
        std::fs::metadata(p).map_or(0, |m| m.len())
    }
}
