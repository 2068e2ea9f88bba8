//! Where stream mode's time goes, in-process on one pinned thread: message mode against the stream checker built
//! from the protocol's declarations whole and from reduced copies of them (the `unique` rules left out; every rule
//! left out; rules, scopes and rollup left out), all on the same whole-session lines in memory. The last is what
//! the checker costs before it checks anything (the capturing scan, reading the captured values, the record), so
//! its ratio bounds what this design can reach however fast the rules get.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use wiregen::engine::{Engine, EngineOptions};
use wiregen::ir::sequence::RuleKind;
use wiregen::ir::Model;
use wiregen::stream::StreamChecker;

/// One way of checking the lines, and its seconds per round.
pub struct Variant {
    pub name: &'static str,
    /// The stream checker's engine (`None`: message mode) and what its declarations keep.
    engine: Option<(Engine, Keep)>,
    pub secs: Vec<f64>,
    /// The lines it reported (1-based), from the last round.
    pub invalid: BTreeSet<usize>,
}

/// What a reduced copy of the declarations keeps.
#[derive(Clone, Copy, PartialEq)]
enum Keep {
    All,
    AllButUnique,
    NoRules,
    Nothing,
}

fn engine_with(model: &Model, keep: Keep) -> Engine {
    let mut m = model.clone();
    let seq = &mut m.protocol.as_mut().expect("the protocol has a protocol layer").sequence;
    match keep {
        Keep::All => {}
        Keep::AllButUnique => seq.rules.retain(|r| !matches!(r.kind, RuleKind::Unique { .. })),
        Keep::NoRules => seq.rules.clear(),
        Keep::Nothing => {
            seq.rules.clear();
            seq.scopes.clear();
            seq.rollup.clear();
        }
    }
    Engine::new(Arc::new(m), EngineOptions::default()).expect("the schema has a root type")
}

/// The variants, message mode first (the report's ratios are to it).
pub fn variants(model: &Model) -> Vec<Variant> {
    let v = |name, keep: Option<Keep>| Variant {
        name,
        engine: keep.map(|k| (engine_with(model, k), k)),
        secs: Vec::new(),
        invalid: BTreeSet::new(),
    };
    vec![
        v("message mode (the engine, no sequence rules)", None),
        v("--stream, the protocol's declarations", Some(Keep::All)),
        v("--stream, without the `unique` rules", Some(Keep::AllButUnique)),
        v("--stream, no rules (scopes and rollup kept)", Some(Keep::NoRules)),
        v("--stream, no rules, scopes or rollup", Some(Keep::Nothing)),
    ]
}

/// Runs of a variant per round, the fastest kept: a run is short (tens of milliseconds), and on a shared VM one
/// slowed run would otherwise move the median of a few rounds.
const RUNS: usize = 3;

/// One round: every variant [`RUNS`] times over `lines`, each run on a thread pinned by `pinned`.
pub fn round<P>(message: &Engine, vs: &mut [Variant], lines: &[Vec<u8>], pinned: P)
where
    P: Fn(&mut (dyn FnMut() -> (f64, BTreeSet<usize>) + Send)) -> (f64, BTreeSet<usize>),
{
    for v in vs.iter_mut() {
        let engine = v.engine.as_ref().map(|(e, _)| e);
        let mut best = f64::MAX;
        for _ in 0..RUNS {
            let (secs, bad) = run(message, engine, lines, &pinned);
            best = best.min(secs);
            v.invalid = bad;
        }
        v.secs.push(best);
    }
}

/// One run of message mode (`engine` is `None`) or of the stream checker of `engine`.
fn run<P>(message: &Engine, engine: Option<&Engine>, lines: &[Vec<u8>], pinned: &P) -> (f64, BTreeSet<usize>)
where
    P: Fn(&mut (dyn FnMut() -> (f64, BTreeSet<usize>) + Send)) -> (f64, BTreeSet<usize>),
{
    pinned(&mut || {
        let t = Instant::now();
        let mut bad = BTreeSet::new();
        match engine {
            None => {
                for (i, l) in lines.iter().enumerate() {
                    if !message.check_line_fast(l).is_empty() {
                        bad.insert(i + 1);
                    }
                }
            }
            Some(e) => {
                let mut c = StreamChecker::new(e);
                for (i, l) in lines.iter().enumerate() {
                    if !c.check(i + 1, l).valid {
                        bad.insert(i + 1);
                    }
                }
                std::hint::black_box(c.rollup());
            }
        }
        (t.elapsed().as_secs_f64(), bad)
    })
}

/// Holds the variants to what they must report: the checkers with rules the message errors and one sequence
/// violation more per broken session (none of those breaks a `unique` rule); the checkers without rules exactly
/// the message errors (so a reduced copy that did not build, and checked nothing, would fail here rather than
/// measure nothing).
pub fn check(vs: &[Variant], broken_sessions: usize) {
    let message = &vs[0].invalid;
    assert!(!message.is_empty(), "the session corpus has message errors");
    for v in vs {
        match v.engine.as_ref().map(|(_, k)| *k) {
            Some(Keep::All | Keep::AllButUnique) => {
                assert!(message.is_subset(&v.invalid), "the stream checker reports every message error");
                assert_eq!(
                    v.invalid.len(),
                    message.len() + broken_sessions,
                    "one sequence violation per broken session"
                );
            }
            Some(Keep::NoRules | Keep::Nothing) => {
                assert_eq!(&v.invalid, message, "{}: without rules, only the message errors", v.name);
            }
            None => {}
        }
    }
}

/// The report's section: median over the rounds of each variant's fastest run, in ms and ns a line, and its
/// ratio to message mode.
pub fn report(vs: &[Variant], lines: usize, median: impl Fn(&[f64]) -> f64) -> String {
    let base = median(&vs[0].secs);
    let mut s = format!(
        "\nStream mode in-process, one thread pinned, on the same {lines} session lines in memory (fastest of \
         {RUNS} runs a round, median of the rounds; ratio = message mode's time / this one's, issue 13's target \
         >= 0.8x):\n\n| checker | ms | ns a line | speed vs message mode |\n|---|---:|---:|---:|\n"
    );
    for v in vs {
        let m = median(&v.secs);
        s.push_str(&format!("| {} | {:.1} | {:.0} | {:.2}x |\n", v.name, m * 1e3, m * 1e9 / lines as f64, base / m));
    }
    s
}
