//! The JSON-Schema-Test-Suite (draft 2020-12, the keywords a protocol uses, and the optional files that are not
//! about `format` or other drafts; copied in `tests/jsts/suite/` with the suite's remote documents) through the
//! engine and through every generated output. A case that refers to remote documents is a schema directory with
//! vendored copies of them ([`with_remotes`]).
//!
//! Each case (one schema and its test instances) is run by every checker. A checker either refuses the schema
//! (a located refusal from the loader or from `wiregen types`) or gives a verdict on every instance. Per keyword
//! and checker the harness counts `passed`, `refused` and `wrong` (the schema was accepted, then an instance got
//! the wrong verdict), writes `target/jsts/report.json` and fails on any `wrong`, or when a checker passes fewer
//! than its floor.
//!
//! The bundled schema (the `schema` output) is checked by the `jsonschema` crate, a standard validator.
//!
//! Outputs are compiled once for all cases: one Rust crate with a module per case, one node process for the Zod
//! schemas and the standalone validators.

mod bundled;
mod engine;
#[path = "../../generator/tests/support/files.rs"]
mod files;
#[path = "../../generator/tests/support/node.rs"]
mod node;
mod random;
#[path = "../../generator/tests/support/rng.rs"]
mod rng;
mod rust;
#[path = "../../generator/tests/support/soundness.rs"]
mod soundness;
mod ts;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use wiregen::engine::{Engine, EngineOptions};

/// One schema of the suite with its instances.
pub struct Case {
    /// The keyword file it comes from (`minLength`).
    pub keyword: String,
    /// A stable identifier (`minLength-1`), also the name of its schema file.
    pub id: String,
    /// The suite's description of the schema.
    pub description: String,
    /// The schema file written for this case.
    pub file: PathBuf,
    /// The instances: description, data, expected verdict.
    pub tests: Vec<(String, Value, bool)>,
    /// TypeScript appended to the case's Zod module, which must type-check with it (`"zod-types"` in
    /// [`WIREGEN_CASES`]: statements that hold the inferred types to what the schema says).
    pub zod_types: Option<String>,
}

/// What a checker made of one case.
pub enum Outcome {
    /// The schema was refused, with the reason.
    Refused(String),
    /// One verdict (valid or not) per instance, in order.
    Verdicts(Vec<bool>),
}

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("generator/ has a parent").to_path_buf()
}

/// The working directory of the harness (`target/jsts/`).
pub fn work_dir() -> PathBuf {
    let d = root().join("target").join("jsts");
    std::fs::create_dir_all(&d).expect("create target/jsts");
    d
}

/// The suite's cases, then [`WIREGEN_CASES`]'s (keyword `wiregen`), their schemas written to `target/jsts/cases/`.
fn cases() -> Vec<Case> {
    let dir = root().join("tests/jsts/suite/draft2020-12");
    let cases_dir = work_dir().join("cases");
    let _ = std::fs::remove_dir_all(&cases_dir);
    std::fs::create_dir_all(&cases_dir).expect("create the cases directory");
    // The keyword files, then the optional ones the harness holds (keyword `optional-<name>`).
    let mut files = files::json_in(&dir);
    files.extend(files::json_in(&dir.join("optional")));
    files.push(root().join(WIREGEN_CASES));
    let mut out = Vec::new();
    for f in files {
        let keyword = if f.ends_with(WIREGEN_CASES) {
            WIREGEN.to_string()
        } else {
            let stem = f.file_stem().and_then(|s| s.to_str()).expect("utf-8 name");
            match f.parent().is_some_and(|p| p.ends_with("optional")) {
                true => format!("optional-{stem}"),
                false => stem.to_string(),
            }
        };
        let text = std::fs::read_to_string(&f).expect("read");
        let groups: Vec<Value> = serde_json::from_str(&text).expect("JSON");
        let written = schema_texts(&text);
        assert_eq!(written.len(), groups.len(), "{}: a schema text per group", f.display());
        for (i, (g, schema_text)) in groups.into_iter().zip(written).enumerate() {
            let id = format!("{keyword}-{i}");
            let parsed: Value = serde_json::from_str(schema_text).expect("a schema text is JSON");
            assert_eq!(parsed, g["schema"], "{id}: the schema's text is the group's schema");
            let file = match with_remotes(&cases_dir.join(&id), &g["schema"]) {
                Some(dir) => dir,
                None => {
                    let file = cases_dir.join(format!("{id}.json"));
                    std::fs::write(&file, schema_text).expect("write");
                    file
                }
            };
            let tests = g["tests"]
                .as_array()
                .expect("tests")
                .iter()
                .map(|t| {
                    (
                        t["description"].as_str().unwrap_or_default().to_string(),
                        t["data"].clone(),
                        t["valid"].as_bool().expect("valid"),
                    )
                })
                .collect();
            let description = g["description"].as_str().unwrap_or_default().to_string();
            let zod_types = g["zod-types"].as_array().map(|lines| {
                lines.iter().map(|l| l.as_str().expect("zod-types: lines of text")).collect::<Vec<_>>().join("\n")
            });
            out.push(Case { keyword: keyword.clone(), id, description, file, tests, zod_types });
        }
    }
    // Random schemas, expected to get the engine's verdicts (a schema the loader refuses, every checker refuses).
    for mut c in random::cases(&cases_dir, random_cases(), random_seed()) {
        if let Ok(e) = wiregen::load::load(&c.file).map(|m| Engine::new(m, EngineOptions::default())) {
            let e = e.expect("a single schema file has a root");
            for t in &mut c.tests {
                t.2 = e.check_value(&t.1).is_empty();
            }
        }
        out.push(c);
    }
    out
}

/// The text of each group's `schema` in a suite file, as the file writes it: a `Value` holds a number past 64 bits
/// as the nearest double, and written back from one, `minimum: -18446744073709551615` (`optional-bignum-5`) became
/// `-1.8446744073709552e19`, a bound a double holds, which the loader took where `wiregen validate --schema` refuses
/// the number as written.
fn schema_texts(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let space = |mut i: usize| {
        while b.get(i).is_some_and(|c| c.is_ascii_whitespace() || *c == b',') {
            i += 1;
        }
        i
    };
    let mut out = Vec::new();
    let mut i = space(0);
    assert_eq!(b[i], b'[', "a suite file is an array of groups");
    i = space(i + 1);
    while b[i] != b']' {
        assert_eq!(b[i], b'{', "a group is an object");
        i = space(i + 1);
        let mut schema = None;
        while b[i] != b'}' {
            let key_end = value_end(b, i);
            let key: String = serde_json::from_str(&text[i..key_end]).expect("a key");
            i = space(key_end);
            assert_eq!(b[i], b':', "a member's colon");
            i = space(i + 1);
            let end = value_end(b, i);
            if key == "schema" {
                schema = Some(&text[i..end]);
            }
            i = space(end);
        }
        out.push(schema.expect("a group has a schema"));
        i = space(i + 1);
    }
    out
}

/// Where the JSON value that starts at `i` of `b` (a valid JSON text) ends.
fn value_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    loop {
        match b[i] {
            b'"' => {
                i += 1;
                while b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth -= 1;
                i += 1;
            }
            _ => {
                while i < b.len() && !matches!(b[i], b',' | b':' | b'}' | b']') && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
            }
        }
        if depth == 0 {
            return i;
        }
        while matches!(b[i], b',' | b':') || b[i].is_ascii_whitespace() {
            i += 1;
        }
    }
}

/// The URI the suite serves its remote documents under (`tests/jsts/suite/remotes/`).
const REMOTES: &str = "http://localhost:1234/";

/// A case whose schema refers to the suite's remote documents becomes a schema directory, as a package vendors
/// what it refers to: `dir/root.json` (marked `x-root`) and a copy of each remote document it may refer to (by file
/// name, transitively) under `dir/remotes/`, carrying its URI as `$id` when it has none. `None` for the others.
fn with_remotes(dir: &Path, schema: &Value) -> Option<PathBuf> {
    let text = schema.to_string();
    let mut top = schema.as_object().filter(|_| text.contains("localhost:1234"))?.clone();
    top.insert("x-root".into(), json!(true));
    let all = remotes();
    // The documents whose file name the schema, or a document taken, mentions.
    let mut taken: Vec<(String, Value)> = Vec::new();
    let mut seen_text = vec![text];
    while let Some(t) = seen_text.pop() {
        for (rel, doc) in all {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            if t.contains(name) && !taken.iter().any(|(r, _)| r == rel) {
                taken.push((rel.clone(), doc.clone()));
                seen_text.push(doc.to_string());
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    for (rel, mut doc) in taken {
        if let Some(o) = doc.as_object_mut() {
            o.entry("$id").or_insert_with(|| json!(format!("{REMOTES}{rel}")));
        }
        let path = dir.join("remotes").join(&rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("JSON")).expect("write");
    }
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join("root.json"), serde_json::to_string_pretty(&Value::Object(top)).expect("JSON"))
        .expect("write");
    Some(dir.to_path_buf())
}

/// The suite's remote documents, read once: (path below `remotes/`, document), by path.
fn remotes() -> &'static [(String, Value)] {
    static DOCS: std::sync::OnceLock<Vec<(String, Value)>> = std::sync::OnceLock::new();
    DOCS.get_or_init(|| {
        let dir = root().join("tests/jsts/suite/remotes");
        files::relative(&dir)
            .into_iter()
            .map(|(rel, p)| {
                let doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).expect("read")).expect("JSON");
                (rel, doc)
            })
            .collect()
    })
}

/// The schema text of a case: its file, or the root file of its directory ([`with_remotes`]).
pub fn schema_text(c: &Case) -> String {
    let file = if c.file.is_dir() { c.file.join("root.json") } else { c.file.clone() };
    std::fs::read_to_string(file).expect("read the case's schema")
}

/// How many random schemas the harness makes ([`random`]): 150, or `WIREGEN_RANDOM_CASES` for a soak.
fn random_cases() -> usize {
    rng::env_number("WIREGEN_RANDOM_CASES", 150) as usize
}

/// The random generator's seed: fixed, or `WIREGEN_RANDOM_SEED` for a soak.
fn random_seed() -> u64 {
    Some(rng::env_number("WIREGEN_RANDOM_SEED", 0)).filter(|n| *n != 0).unwrap_or(0x0005_C4E3_A5ED)
}

/// `wiregen diff` is sound on the random schemas ([`random`]): each, changed by one to three edits of meaning
/// several times, against itself as it was; every instance one side accepts and the other refuses (the schema's
/// instances and small changes to them) is answered by a change that breaks the party it should
/// ([`soundness`]; `generator/tests/diff.rs` holds the suite's cases and the session protocol to the same).
#[test]
fn the_diff_names_who_breaks_on_changed_random_schemas() {
    let dir = work_dir().join("diff-random");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the directory");
    let cases = random::cases(&dir, random_cases(), random_seed());
    let mut rng = rng::Rng(random_seed() << 1 | 1);
    let mut s = soundness::Soundness::default();
    for c in &cases {
        let mut schema: Value = serde_json::from_str(&schema_text(c)).expect("a schema");
        let Some(top) = schema.as_object_mut() else { continue };
        top.insert("x-root".into(), Value::Bool(true));
        let instances: Vec<(Option<String>, Value)> = c.tests.iter().map(|t| (None, t.1.clone())).collect();
        for _ in 0..6 {
            s.try_pair(&mut rng, &c.id, &dir.join("pair"), &[("root.json".into(), schema.clone())], &instances, &[]);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("diff of random schemas: {} pairs, {} instances compared, {} differing", s.pairs, s.compared, s.differing);
    assert!(s.pairs > cases.len() && s.differing > cases.len(), "the edits must change meaning");
    assert!(s.missed.is_empty(), "{} schema pair(s) with a missed break:\n{}", s.missed.len(), s.missed.join("\n\n"));
}

/// Cases in the suite's format for what the suite does not exercise: wiregen's own keywords and the shapes its
/// outputs treat specially (a boxed struct; unions holding each other with string, boolean and integer tags;
/// nullable optional properties; constants; maps; strip objects, in arrays with `uniqueItems` too). Every checker
/// must accept each schema and give every instance its expected verdict; they are not counted in the report.
pub const WIREGEN_CASES: &str = "tests/jsts/wiregen-cases.json";

/// The keyword of [`WIREGEN_CASES`]'s cases.
pub const WIREGEN: &str = "wiregen";

#[derive(Default, Clone, Copy)]
struct Counts {
    passed: usize,
    refused: usize,
    wrong: usize,
}

/// The floor of passed instances per checker (of 1297); `None` while an output is not yet generated.
const FLOORS: &[(&str, Option<usize>)] = &[
    ("engine", Some(1279)),
    ("bundled", Some(1279)),
    ("rust", Some(1279)),
    ("zod", Some(1279)),
    ("ts-standalone", Some(1279)),
];

#[test]
fn the_suite_through_every_checker() {
    let all = cases();
    let suite_len = all.iter().filter(|c| c.keyword != WIREGEN && c.keyword != random::RANDOM).count();
    let (cases, own) = all.split_at(suite_len);
    let total: usize = cases.iter().map(|c| c.tests.len()).sum();
    assert_eq!(total, 1297, "the suite copy has 1297 instances");
    assert!(
        own.iter().any(|c| c.keyword == WIREGEN)
            && own.iter().all(|c| c.keyword == WIREGEN || c.keyword == random::RANDOM),
        "wiregen's cases and the random ones come last"
    );
    let mut results: Vec<(&str, Vec<Outcome>)> = vec![("engine", engine::run(&all))];
    results.push(("bundled", bundled::run(&all)));
    results.push(("rust", rust::run(&all)));
    let (zod, standalone, firsts) = ts::run(&all);
    results.push(("zod", zod));
    results.push(("ts-standalone", standalone));
    // wiregen's own cases: every checker takes every schema and gets every instance right. The random ones: every
    // checker that takes a schema gives the engine's verdict on every instance.
    let mut own_wrong = Vec::new();
    let mut random_refused: BTreeMap<&str, usize> = BTreeMap::new();
    for (checker, outcomes) in &mut results {
        assert_eq!(outcomes.len(), all.len(), "{checker} returned one outcome per case");
        for (c, o) in own.iter().zip(outcomes.split_off(suite_len)) {
            match o {
                Outcome::Refused(_) if c.keyword == random::RANDOM => *random_refused.entry(checker).or_default() += 1,
                Outcome::Refused(why) => {
                    own_wrong.push(format!("{checker:<13} {} ({}): refused: {why}", c.id, c.description))
                }
                Outcome::Verdicts(v) => {
                    for ((desc, data, expected), got) in c.tests.iter().zip(v) {
                        // The README's "differ by construction": the `jsonschema` crate decides multipleOf in
                        // exact decimals and compares integers past 2^53 exactly; the engine uses doubles.
                        let by_construction = *checker == "bundled"
                            && c.keyword == random::RANDOM
                            && (c.description.contains("multipleOf") || random::has_big_number(data));
                        if got != *expected && !by_construction {
                            own_wrong.push(format!(
                                "{checker:<13} {} ({}): {desc}: {data} expected valid = {expected}",
                                c.id, c.description
                            ));
                        }
                    }
                }
            }
        }
    }
    // First errors, on every case (the suite's, wiregen's own, the random ones): Zod's first issue and the
    // standalone validator's first error are the engine's (rule id, JSON Pointer and message), as the README
    // promises for any generated schema.
    let engines: Vec<Option<Engine>> = all
        .iter()
        .map(|c| wiregen::load::load(&c.file).ok().and_then(|m| Engine::new(m, EngineOptions::default()).ok()))
        .collect();
    for (c, engine) in all.iter().zip(&engines) {
        let (Some(engine), Some(both)) = (engine, firsts.get(&c.id)) else { continue };
        let schema: Value = serde_json::from_str(&schema_text(c)).expect("JSON");
        for (checker, got) in ["zod", "ts-standalone"].iter().zip(both) {
            for ((desc, data, _), got) in c.tests.iter().zip(got) {
                let want = engine
                    .check_value(data)
                    .first()
                    .map(|e| (e.rule.to_string(), e.pointer.clone(), e.message.clone()));
                // The README's known limit: JavaScript lists index-like keys (`"1"`) first, so an unknown one comes
                // first in the TypeScript outputs, and Zod checks a declared one first.
                let index_like = (random::has_index_like_key(data)
                    || (*checker == "zod" && random::has_index_like_key(&schema)))
                    && got.is_some() == want.is_some();
                // Messages too, but JavaScript shows an integer beyond 2^53 as the double it read.
                let same = match (got, &want) {
                    (Some(g), Some(w)) => g.0 == w.0 && g.1 == w.1 && (g.2 == w.2 || random::has_big_integer(data)),
                    (g, w) => g.is_none() && w.is_none(),
                };
                if !same && !index_like {
                    own_wrong.push(format!(
                        "{checker:<13} {} ({}): {desc}: {data}: first error {got:?}, the engine's {want:?}",
                        c.id, c.description
                    ));
                }
            }
        }
    }
    let random = own.iter().filter(|c| c.keyword == random::RANDOM);
    eprintln!(
        "random schemas: {} with {} instances; refused by: {random_refused:?}",
        random.clone().count(),
        random.map(|c| c.tests.len()).sum::<usize>()
    );
    assert!(
        random_refused.get("engine").copied().unwrap_or(0) * 4 < random_cases(),
        "most random schemas load ({random_refused:?})"
    );
    assert!(
        own_wrong.is_empty(),
        "wiregen's own cases ({WIREGEN_CASES}) and the random ones:\n{}",
        own_wrong.join("\n")
    );

    let mut report: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut totals: BTreeMap<&str, Counts> = BTreeMap::new();
    for (checker, outcomes) in &results {
        assert_eq!(outcomes.len(), cases.len(), "{checker} returned one outcome per case");
        let mut per_kw: BTreeMap<&str, Counts> = BTreeMap::new();
        for (c, o) in cases.iter().zip(outcomes) {
            let k = per_kw.entry(&c.keyword).or_default();
            let t = totals.entry(checker).or_default();
            match o {
                Outcome::Refused(_) => {
                    k.refused += c.tests.len();
                    t.refused += c.tests.len();
                }
                Outcome::Verdicts(v) => {
                    assert_eq!(v.len(), c.tests.len(), "{checker} {}: one verdict per instance", c.id);
                    for ((desc, data, expected), got) in c.tests.iter().zip(v) {
                        if got == expected {
                            k.passed += 1;
                            t.passed += 1;
                        } else {
                            k.wrong += 1;
                            t.wrong += 1;
                            wrong.push(format!(
                                "{checker:<13} {} ({}): {desc}: {data} expected {}",
                                c.id,
                                c.description,
                                if *expected { "valid" } else { "invalid" }
                            ));
                        }
                    }
                }
            }
        }
        for (kw, n) in per_kw {
            report
                .entry(kw.to_string())
                .or_default()
                .insert(checker.to_string(), json!({"passed": n.passed, "refused": n.refused, "wrong": n.wrong}));
        }
    }
    let path = work_dir().join("report.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report).expect("JSON") + "\n").expect("write the report");
    let mut table = String::from("checker        passed  refused  wrong\n");
    for (checker, t) in &totals {
        table.push_str(&format!("{checker:<13} {:>7} {:>8} {:>6}\n", t.passed, t.refused, t.wrong));
    }
    eprintln!("JSON-Schema-Test-Suite, {total} instances ({}):\n{table}", path.display());
    assert!(wrong.is_empty(), "{} silently wrong verdict(s):\n{}", wrong.len(), wrong.join("\n"));
    for (checker, floor) in FLOORS {
        if let Some(floor) = floor {
            let passed = totals.get(checker).map_or(0, |t| t.passed);
            assert!(passed >= *floor, "{checker} passes {passed} of {total}, below its floor of {floor}");
        }
    }
}
