//! `wiregen migrate`: rewrites a JSONL stream of messages of one protocol version (OLD) as messages of the next
//! (NEW), line by line (framed as `validate` frames its input: a file of one pretty-printed envelope is one
//! message, written as one line).
//!
//! Each line is parsed and checked against OLD (a line OLD rejects is not migrated: it is reported with OLD's
//! rule ids), read as OLD's readers saw it (the keys OLD's stripping objects drop are dropped, each with a
//! warning: [`stripped`]), upgraded with NEW's declared renames and moves ([`crate::upgrade::Plan`]), then checked
//! against NEW. What NEW rejects is never patched with invented values:
//! - a property NEW does not have (`additional-property`, `removed-property`) is dropped with a warning under
//!   [`OnLoss::Drop`], and the line refused under [`OnLoss::Refuse`];
//! - anything else (a required value the upgrade could not carry, `field-moved`; a value NEW constrains more
//!   tightly; a role NEW no longer allows) refuses the line.
//!
//! - with `stream` (the input is one session), a line that breaks one of NEW's sequence rules (`x-sequence`)
//!   among the lines written before it (a rule NEW added, or a line that needed one refused before it) is refused
//!   with that rule's id.
//!
//! Every warning and refusal is a [`Note`]: line number, rule id and JSON Pointer. A refused line is not
//! written, so the output passes `wiregen validate` against NEW, and with `stream` `wiregen validate --stream`.
//!
//! # Example
//!
//! ```
//! use wiregen::migrate::{migrate_reader, OnLoss};
//! use wiregen::upgrade::Plan;
//!
//! let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
//! let v1 = wiregen::load::load(&root.join("examples/happy-wire/schema/sessionProtocol.schema.json")).expect("v1");
//! let v2 = wiregen::load::load(&root.join("schema")).expect("v2");
//! let input = br#"{"id":"m1","time":1,"role":"agent","subagent":"sa1","ev":{"t":"stop"},"usage":{"input_tokens":3,"output_tokens":1}}"#;
//! let mut out = Vec::new();
//! let r = migrate_reader(&v1, &v2, &input[..], &mut out, OnLoss::Refuse, false).expect("no I/O error");
//! assert_eq!((r.lines, r.written, r.refused), (1, 1, 0));
//! assert_eq!(
//!     String::from_utf8(out).unwrap(),
//!     "{\"id\":\"m1\",\"time\":1,\"role\":\"agent\",\"ev\":{\"t\":\"subagent-stop\",\"agentId\":\"sa1\"},\"usage\":{\"inputTokens\":3,\"outputTokens\":1}}\n"
//! );
//! ```
//!
//! # Errors
//! Only reading the input and writing the output fail ([`std::io::Error`]); what is wrong with a line is a note.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::engine::{parse_line, Engine, EngineOptions, Issue};
use crate::ir::{Additional, Model, Node, Shape, TypeId};
use crate::rules::Rule;
use crate::upgrade::Plan;

/// What to do with a property NEW does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnLoss {
    /// Drop it and warn; the line is migrated.
    Drop,
    /// Refuse the line.
    Refuse,
}

/// What happened to a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Outcome {
    /// Migrated as is (after the declared upgrades).
    Migrated,
    /// Migrated after dropping what NEW does not have (each dropped value is a warning note).
    MigratedWithLoss,
    /// Not written: OLD rejects it, or NEW rejects it after the upgrade and dropping is not allowed or not enough.
    Refused,
}

/// One warning or reason for refusal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    /// 1-based input line.
    pub line: usize,
    /// Whether the line was written (with this value dropped) or refused.
    pub outcome: Outcome,
    /// Which side's rule: `old` (the input is not a valid OLD message), `upgrade` (a declared move found nothing
    /// to move) or `new` (NEW rejects the upgraded message).
    pub side: &'static str,
    /// The rule id (a validation rule such as `additional-property`, or `field-moved`).
    pub rule: &'static str,
    /// JSON Pointer into the message (OLD's for `old`, the upgraded message's otherwise).
    pub pointer: String,
    /// What happened.
    pub message: String,
    /// For a sequence rule: the earlier line the violation relates to (as `wiregen validate --stream` records it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related: Option<usize>,
    /// For a sequence rule: the earlier refused line this violation only follows from.
    #[serde(rename = "causedBy", skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<usize>,
}

impl Note {
    /// A note of no sequence rule (no `related` or `causedBy` line).
    fn new(
        line: usize,
        outcome: Outcome,
        side: &'static str,
        rule: &'static str,
        pointer: String,
        message: String,
    ) -> Note {
        Note { line, outcome, side, rule, pointer, message, related: None, caused_by: None }
    }
}

/// The result of a migration (`--format json` prints it; keys in camelCase like every JSON record).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Input lines.
    pub lines: usize,
    /// Lines written.
    pub written: usize,
    /// Lines written after dropping values.
    pub with_loss: usize,
    /// Lines refused.
    pub refused: usize,
    /// Every warning and refusal, by line.
    pub notes: Vec<Note>,
}

/// Migrates one message: the upgraded value when NEW accepts it (possibly after drops), and the notes.
pub fn migrate_value(
    old: &Engine,
    new: &Engine,
    plan: &Plan,
    line: usize,
    v: &Value,
    on_loss: OnLoss,
) -> (Option<Value>, Vec<Note>) {
    let old_issues = old.check_value(v);
    if !old_issues.is_empty() {
        return (None, refused_by_old(line, &old_issues));
    }
    let (upgraded, notes) = upgrade_accepted(old, new, plan, line, v, on_loss);
    (upgraded.ok(), notes)
}

/// [`migrate_value`] of a value OLD accepts (the caller checked it); the upgraded value as far as it got when NEW
/// refuses it.
fn upgrade_accepted(
    old: &Engine,
    new: &Engine,
    plan: &Plan,
    line: usize,
    v: &Value,
    on_loss: OnLoss,
) -> (Result<Value, Value>, Vec<Note>) {
    let note = |side, issue: &Issue, outcome| issue_note(line, side, issue, outcome);
    let mut v = v.clone();
    // What OLD's readers saw is what is upgraded: a key OLD strips never reached them.
    let stripped = stripped(old.model(), old.root(), &mut v);
    let mut notes: Vec<Note> = stripped
        .into_iter()
        .map(|pointer| {
            Note::new(
                line,
                Outcome::MigratedWithLoss,
                "old",
                Rule::AdditionalProperty.id(),
                pointer,
                "OLD's readers drop it (`x-unknown-keys: strip`): it never reached them, so it is not carried over"
                    .into(),
            )
        })
        .collect();
    let losses = plan.apply(&mut v);
    notes.extend(
        losses
            .iter()
            .map(|l| Note::new(line, Outcome::Refused, "upgrade", l.rule, l.pointer.clone(), l.message.clone())),
    );
    // Each round drops what NEW does not have (every such issue of the round), until NEW accepts or something
    // else is wrong. A value is removed each round, so this ends.
    loop {
        let issues = new.check_value(&v);
        if issues.is_empty() && notes.iter().all(|n| n.outcome != Outcome::Refused) {
            return (Ok(v), capped(notes));
        }
        let droppable = |i: &Issue| {
            on_loss == OnLoss::Drop
                && (i.rule == Rule::AdditionalProperty.id() || i.rule == Rule::RemovedProperty.id())
                && !i.pointer.is_empty()
        };
        if !issues.is_empty() && issues.iter().all(droppable) && notes.iter().all(|n| n.outcome != Outcome::Refused) {
            let removed = remove_all(&mut v, issues.iter().map(|i| i.pointer.as_str()));
            let dropped = issues.iter().zip(&removed).filter(|(_, r)| **r).map(|(i, _)| i);
            let before = notes.len();
            notes.extend(dropped.map(|i| note("new", i, Outcome::MigratedWithLoss)));
            if notes.len() > before {
                continue;
            }
        }
        // Refused: the upgrade's losses and NEW's issues, without repeating a loss NEW reports as missing.
        let lost: HashSet<&str> = notes.iter().filter(|n| n.side == "upgrade").map(|n| n.pointer.as_str()).collect();
        let refused: Vec<Note> = issues
            .iter()
            .filter(|i| !lost.contains(i.pointer.as_str()))
            .map(|i| note("new", i, Outcome::Refused))
            .collect();
        notes.extend(refused);
        for n in &mut notes {
            n.outcome = Outcome::Refused;
        }
        return (Err(v), capped(notes));
    }
}

/// Removes from `v`, a value of type `ty` that the model accepts, the keys its stripping objects
/// (`x-unknown-keys: strip`) drop, so `v` becomes what a reader of the model sees; the removed keys' pointers, in
/// document order. Followed through properties, maps, arrays, nullables and tagged unions; an object with
/// `patternProperties` keeps its undeclared keys (which of them a pattern holds is not decided here), and the
/// branches of `allOf`, `anyOf` and the like are not entered.
pub fn stripped(m: &Model, ty: TypeId, v: &mut Value) -> Vec<String> {
    let mut out = Vec::new();
    strip(m, &m.ty(ty).node, v, &mut String::new(), &mut out);
    out
}

fn strip(m: &Model, node: &Node, v: &mut Value, ptr: &mut String, out: &mut Vec<String>) {
    let len = ptr.len();
    match &node.shape {
        Shape::Ref(id) => strip(m, &m.ty(*id).node, v, ptr, out),
        Shape::Nullable(n) if !v.is_null() => strip(m, n, v, ptr, out),
        Shape::Object(o) => {
            let Value::Object(map) = v else { return };
            let drop = matches!(o.additional, Additional::Strip) && o.pattern_properties.is_empty();
            let mut gone = Vec::new();
            for (k, x) in map.iter_mut() {
                ptr.push('/');
                ptr.push_str(&crate::diag::escape_token(k));
                match o.fields.iter().find(|f| &f.name == k) {
                    Some(f) => strip(m, &f.node, x, ptr, out),
                    None if drop => {
                        out.push(ptr.clone());
                        gone.push(k.clone());
                    }
                    None => {
                        if let (Additional::Schema(n), true) = (&o.additional, o.pattern_properties.is_empty()) {
                            strip(m, n, x, ptr, out);
                        }
                    }
                }
                ptr.truncate(len);
            }
            // In one pass: a `shift_remove` each moved every later key, quadratic in a line of thousands of
            // unknown keys (helper 105: 100,000 of them took 19.9 s).
            if !gone.is_empty() {
                let gone: std::collections::HashSet<String> = gone.into_iter().collect();
                map.retain(|k, _| !gone.contains(k));
            }
        }
        Shape::Array(a) => {
            let Value::Array(items) = v else { return };
            for (i, x) in items.iter_mut().enumerate() {
                let Some(n) = a.prefix.get(i).or(a.items.as_deref()) else { continue };
                ptr.push_str(&format!("/{i}"));
                strip(m, n, x, ptr, out);
                ptr.truncate(len);
            }
        }
        Shape::Union(u) => {
            let tag = v.get(&u.discriminator).cloned();
            if let Some(mem) = u.members.iter().find(|mem| Some(&mem.tag) == tag.as_ref()) {
                strip(m, &m.ty(mem.ty).node, v, ptr, out);
            }
        }
        _ => {}
    }
}

/// Why [`migrate_reader`] or [`migrate_file`] failed: the input or the output, so a message names the right one.
#[derive(Debug)]
pub enum FileError {
    /// Reading the input failed, or a line is longer than [`crate::validate::MAX_LINE`].
    Input(std::io::Error),
    /// Writing the output failed: the file [`migrate_file`] writes, or `None` for [`migrate_reader`]'s writer.
    Output(Option<PathBuf>, std::io::Error),
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Input(e) => write!(f, "{e}"),
            FileError::Output(Some(p), e) => write!(f, "writing {}: {e}", p.display()),
            FileError::Output(None, e) => write!(f, "writing the output: {e}"),
        }
    }
}

impl std::error::Error for FileError {}

/// Whether `p` is a path under `/dev` or `/proc`, which names a device or an open descriptor (`/dev/stdout`,
/// `/dev/fd/1`): written to as it is, and read as the file behind it.
#[must_use]
pub fn names_a_descriptor(p: &Path) -> bool {
    p.starts_with("/dev") || p.starts_with("/proc")
}

/// [`migrate_reader`] into the file `out`, which is replaced only once the whole input is migrated: the output is
/// staged beside it and renamed over it at the end, so `out` may be the input file itself (a file migrated in
/// place is read whole before it is replaced), and a failure leaves it as it was. A symbolic link at `out` is
/// followed (its target is replaced; one that leads nowhere is refused), and a file that is replaced keeps its
/// permissions. What is neither a file nor a directory at `out` (a device such as `/dev/null`, a FIFO), and any
/// path under `/dev` or `/proc` (`/dev/stdout`, `/dev/fd/1`: a file behind one is appended to, as the shell's
/// descriptor writes), is written to as it is, never replaced. Migrations into one directory take turns.
///
/// # Errors
/// [`FileError::Input`] as [`migrate_reader`]; [`FileError::Output`] when `out` is a directory or a link to
/// nothing or cannot be written, or the staged file cannot be created or renamed.
pub fn migrate_file(
    old: &Model,
    new: &Model,
    input: impl BufRead,
    out: &Path,
    on_loss: OnLoss,
    stream: bool,
) -> Result<Summary, FileError> {
    let output = |e| FileError::Output(Some(out.to_path_buf()), e);
    let at_out = |e: FileError| match e {
        FileError::Output(None, e) => output(e),
        e => e,
    };
    // A path under `/dev` or `/proc` names a device or an open descriptor (`/dev/stdout`, `/dev/fd/1`): written
    // to as it is. Replaced by path, `/dev/stdout` on a file lost what the shell wrote around it, and on a deleted
    // file (whose name cannot be resolved) it put a regular file in `/dev`.
    let system = names_a_descriptor(out);
    let target = std::fs::canonicalize(out);
    match std::fs::metadata(out) {
        Ok(m) if m.is_dir() => {
            let e = std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory, not a file");
            return Err(output(e));
        }
        // A device or a FIFO, or what cannot be named to be replaced, is written to as a shell's `>` would:
        // staging and renaming would put a regular file in its place (as root, `/dev/null` became one).
        Ok(m) if !m.is_file() || system || target.is_err() => {
            let mut open = std::fs::OpenOptions::new();
            if system && m.is_file() {
                // The file behind a descriptor (`/dev/stdout` on `>` or `>>`) is written after what is in it, as
                // the shell's own descriptor would write it.
                open.append(true);
            } else {
                open.write(true).truncate(m.is_file());
            }
            let file = open.open(out).map_err(output)?;
            return migrate_reader(old, new, input, std::io::BufWriter::new(file), on_loss, stream).map_err(at_out);
        }
        // A link that leads nowhere or round in a loop: replacing it put a file in the link's place.
        Err(e) if std::fs::symlink_metadata(out).is_ok() => {
            let e = std::io::Error::new(e.kind(), format!("a symbolic link that leads to no file ({e})"));
            return Err(output(e));
        }
        _ => {}
    }
    let target = target.unwrap_or_else(|_| out.to_path_buf());
    // One migration at a time into one directory: two shared the staged name, and one renamed the other's
    // half-written file over `out` and said it succeeded.
    let _lock = target
        .parent()
        .and_then(|d| crate::generate::lock_dir(if d.as_os_str().is_empty() { Path::new(".") } else { d }, true));
    let staged = crate::generate::staged_name(&target);
    let file = crate::generate::create_staged(&staged).map_err(output)?;
    if let Ok(meta) = std::fs::metadata(&target) {
        let _ = std::fs::set_permissions(&staged, meta.permissions());
    }
    let put = migrate_reader(old, new, input, std::io::BufWriter::new(file), on_loss, stream)
        .map_err(at_out)
        .and_then(|s| std::fs::rename(&staged, &target).map(|()| s).map_err(output));
    if put.is_err() {
        let _ = std::fs::remove_file(&staged);
    }
    put
}

/// A writer that remembers whether writing failed, so an error is put down to the output and not the input.
struct Noting<W> {
    w: W,
    failed: bool,
}

impl<W: Write> Write for Noting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.write(buf).inspect_err(|_| self.failed = true)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush().inspect_err(|_| self.failed = true)
    }
}

/// Migrates a JSONL stream from OLD to NEW (both loaded protocols), writing the migrated lines to `out`.
///
/// # Errors
/// [`FileError::Input`]: reading `input` failed, or a line is longer than [`crate::validate::MAX_LINE`];
/// [`FileError::Output`] (`None`): writing `out` failed.
pub fn migrate_reader(
    old: &Model,
    new: &Model,
    input: impl BufRead,
    out: impl Write,
    on_loss: OnLoss,
    stream: bool,
) -> Result<Summary, FileError> {
    let mut out = Noting { w: out, failed: false };
    migrate_into(old, new, input, &mut out, on_loss, stream).map_err(|e| {
        if out.failed {
            FileError::Output(None, e)
        } else {
            FileError::Input(e)
        }
    })
}

/// The work of [`migrate_reader`], every failure an `io::Error` (which side it was, the writer tells).
fn migrate_into(
    old: &Model,
    new: &Model,
    input: impl BufRead,
    out: impl Write,
    on_loss: OnLoss,
    stream: bool,
) -> std::io::Result<Summary> {
    let opts = EngineOptions::default();
    let engine = |m: &Model| Engine::new(Arc::new(m.clone()), opts).map_err(std::io::Error::other);
    let (oe, ne) = (engine(old)?, engine(new)?);
    let plan = Plan::between(old, new).unwrap_or_default();
    // With `stream`, NEW's sequence rules over the lines written so far (a refused line is not in the output, so
    // it does not count): the output passes `wiregen validate --stream` against NEW.
    let sequence = stream.then(|| crate::stream::StreamChecker::new(&ne));
    let mut m = Migration { oe: &oe, ne: &ne, plan: &plan, on_loss, sequence, s: Summary::default(), out };
    // Records as `validate` reads them: JSONL lines without `\n` or `\r\n`, at most `validate::MAX_LINE` bytes,
    // or one pretty-printed envelope (written back as one line).
    let mut input = input;
    let mut failed = None;
    let first = crate::validate::start_records(&mut input, &mut |record, hint| match m.record(&record, hint) {
        Ok(()) => std::ops::ControlFlow::Continue(()),
        Err(e) => {
            failed = Some(e);
            std::ops::ControlFlow::Break(())
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    if let Some(first) = first {
        m.record(&first, None)?;
        let mut line = Vec::new();
        while crate::validate::read_line(&mut input, &mut line)? > 0 {
            m.record(&line, None)?;
        }
    }
    m.out.flush()?;
    Ok(m.s)
}

/// One migration under way: the engines, the plan, the sequence check, the summary so far and the output.
struct Migration<'e, W> {
    oe: &'e Engine,
    ne: &'e Engine,
    plan: &'e Plan,
    on_loss: OnLoss,
    /// With `stream`, NEW's sequence rules over the lines written so far (a refused line is not in the output, so
    /// it does not count): the output passes `wiregen validate --stream` against NEW.
    sequence: Option<crate::stream::StreamChecker<'e>>,
    s: Summary,
    out: W,
}

impl<W: Write> Migration<'_, W> {
    /// Counts a line refused before NEW's sequence rules saw it as rejected for them (with `--stream`): what it
    /// would have opened or closed, read in NEW's names once upgraded (a v1 `start` is a v2 `subagent-start`), is
    /// remembered, so the lines that need it name it as their cause, as `validate --stream` names one.
    fn reject_in_sequence(&mut self, n: usize, line: &[u8]) {
        let Some(sequence) = &mut self.sequence else { return };
        let upgraded = crate::stream::rejected_value(self.oe, line).map(|mut v| {
            let _ = self.plan.apply(&mut v);
            v
        });
        sequence.reject(n, upgraded.as_ref());
    }

    /// Migrates the next record (a line, or the one pretty-printed document), `hint` added to the first note of a
    /// record OLD refuses (where a document that is no document breaks).
    fn record(&mut self, line: &[u8], hint: Option<String>) -> std::io::Result<()> {
        let (oe, ne, plan, on_loss) = (self.oe, self.ne, self.plan, self.on_loss);
        let s = &mut self.s;
        s.lines += 1;
        let n = s.lines;
        // A line OLD refuses is refused as `validate` reads it (the engine's compact tree, not a `Value`: a 64 MiB
        // line of small values took three times the memory of `validate` before); only the others are parsed.
        let issues = oe.check_line_fast(line);
        if !issues.is_empty() {
            s.refused += 1;
            self.reject_in_sequence(n, line);
            let s = &mut self.s;
            let mut notes = refused_by_old(n, &issues);
            if let (Some(first), Some(h)) = (notes.first_mut(), hint) {
                first.message.push_str(&h);
            }
            s.notes.extend(notes);
            return Ok(());
        }
        let v = match parse_line(line) {
            Ok(v) => v,
            Err(issue) => {
                s.refused += 1;
                s.notes.extend(refused_by_old(n, &[issue]));
                self.reject_in_sequence(n, line);
                return Ok(());
            }
        };
        // OLD accepted the line above: checking the parsed value again would be the same work twice.
        let (upgraded, mut notes) = upgrade_accepted(oe, ne, plan, n, &v, on_loss);
        // The text to write, before the sequence rules see the line: a line that is not written is rejected for
        // them too, and the lines that need it name it as their cause.
        let text = match &upgraded {
            // A line the upgrade left as it was is written as it was read (a pretty-printed document as one line).
            Ok(u) if *u == v && notes.is_empty() && !line.contains(&b'\n') => Ok(Cow::Borrowed(line)),
            Ok(u) => exact_text(line, u)
                .map(Cow::Owned)
                .map_err(|lost| Some(Note { line: n, outcome: Outcome::Refused, side: "upgrade", ..*lost })),
            Err(_) => Err(None),
        };
        let refuse = |s: &mut Summary, notes: &mut Vec<Note>| {
            s.refused += 1;
            for x in notes.iter_mut() {
                x.outcome = Outcome::Refused;
            }
        };
        match text {
            Ok(text) => {
                // Only a sequence rule is left to break: the value passed NEW's message rules.
                let broken = match (&upgraded, &mut self.sequence) {
                    (Ok(u), Some(sequence)) => sequence.check_value(n, u).errors,
                    _ => Vec::new(),
                };
                if broken.is_empty() {
                    self.out.write_all(&text)?;
                    self.out.write_all(b"\n")?;
                    s.written += 1;
                    if !notes.is_empty() {
                        s.with_loss += 1;
                    }
                } else {
                    refuse(s, &mut notes);
                    notes.extend(broken.iter().map(|i| Note {
                        message: format!("{}{}", i.message, i.links("refused")),
                        ..issue_note(n, "new", i, Outcome::Refused)
                    }));
                }
            }
            Err(lost) => {
                refuse(s, &mut notes);
                notes.extend(lost);
                if let Some(sequence) = &mut self.sequence {
                    let (Ok(u) | Err(u)) = &upgraded;
                    sequence.reject(n, Some(u));
                }
            }
        }
        s.notes.extend(notes);
        Ok(())
    }
}

/// A number as serde_json holds it (a `Value` has no other): an integer that fits 64 bits, else the nearest double.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum NumberKey {
    Unsigned(u64),
    Signed(i64),
    Double(u64),
}

impl NumberKey {
    fn of(n: &serde_json::Number) -> NumberKey {
        match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => NumberKey::Unsigned(u),
            (None, Some(i)) => NumberKey::Signed(i),
            (None, None) => NumberKey::Double(n.as_f64().unwrap_or(f64::NAN).to_bits()),
        }
    }
}

/// The upgraded value `v` of `line` as JSON text, every number written as `line` wrote it: a `Value` holds an
/// integer past 64 bits, or a decimal with more digits than a double keeps, as the nearest double, and writing
/// that would change stored data without a word (`12345678901234567890123` became `1.2345678901234568e+22`);
/// `1e3` stays `1e3`. Spellings of one number (`1`, `1.0`, `1e0`) are written in the line's order (where the upgrade
/// moved one past another, each is still that number). Two numbers of the line that read as one double but are
/// not the same number cannot be told apart in `v`: writing either is a loss, so that is a refusal note at the
/// first one.
fn exact_text(line: &[u8], v: &Value) -> Result<Vec<u8>, Box<Note>> {
    let mut texts: HashMap<NumberKey, Option<VecDeque<std::ops::Range<usize>>>> = HashMap::new();
    for at in number_tokens(line) {
        let Ok(text) = std::str::from_utf8(&line[at.clone()]) else { continue };
        let Ok(n) = serde_json::from_str::<serde_json::Number>(text) else { continue };
        let seen = texts.entry(NumberKey::of(&n)).or_insert_with(|| Some(VecDeque::new()));
        if let Some(spellings) = seen {
            let same = spellings.front().is_none_or(|first| {
                std::str::from_utf8(&line[first.clone()]).is_ok_and(|t| decimal(t) == decimal(text))
            });
            if same {
                spellings.push_back(at);
            } else {
                *seen = None;
            }
        }
    }
    let mut f = ExactNumbers { line, texts: &mut texts, ambiguous: None };
    let mut out = Vec::with_capacity(line.len() + 16);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, &mut f);
    let refused = |pointer: String, message: String| {
        Box::new(Note::new(0, Outcome::Refused, "upgrade", "number-text", pointer, message))
    };
    v.serialize(&mut ser)
        .map_err(|e| refused(String::new(), format!("the upgraded message could not be written: {e}")))?;
    match f.ambiguous {
        None => Ok(out),
        Some(key) => {
            // The first of them and the first that is another number (`1.5`, `1.50` and `1.500000000000000000001`
            // name the first and the last: the first two are one number; helper 124).
            let mut same = number_tokens(line)
                .filter_map(|r| std::str::from_utf8(&line[r]).ok())
                .filter(|t| serde_json::from_str::<serde_json::Number>(t).is_ok_and(|n| NumberKey::of(&n) == key));
            let first = same.next();
            let other = first.and_then(|f| same.find(|t| decimal(t) != decimal(f)));
            let same: Vec<&str> = first.into_iter().chain(other).collect();
            Err(refused(
                first_number(v, key, &mut String::new()).unwrap_or_default(),
                format!(
                    "the numbers {} of this line read as the same double: migrate writes each number as the line \
                     wrote it, and cannot tell them apart in the upgraded message",
                    same.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(" and ")
                ),
            ))
        }
    }
}

/// The byte ranges of the number tokens of a JSON text (outside its strings).
fn number_tokens(line: &[u8]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let (mut i, mut in_string) = (0, false);
    std::iter::from_fn(move || {
        while i < line.len() {
            let b = line[i];
            if in_string {
                match b {
                    b'\\' => i += 2,
                    b'"' => {
                        in_string = false;
                        i += 1;
                    }
                    _ => i += 1,
                }
            } else if b == b'"' {
                in_string = true;
                i += 1;
            } else if b == b'-' || b.is_ascii_digit() {
                let start = i;
                while i < line.len() && matches!(line[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                    i += 1;
                }
                return Some(start..i);
            } else {
                i += 1;
            }
        }
        None
    })
}

/// A JSON number's value as sign, significant digits and exponent (`1e3`, `1000` and `1000.0` are one).
fn decimal(text: &str) -> (bool, String, i128) {
    let (neg, t) = text.strip_prefix('-').map_or((false, text), |r| (true, r));
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].trim_start_matches('+').parse::<i128>().unwrap_or(0)),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let digits = all.trim_start_matches('0');
    let significant = digits.trim_end_matches('0');
    if significant.is_empty() {
        return (neg, String::new(), 0);
    }
    let exp = exp - frac.len() as i128 + (digits.len() - significant.len()) as i128;
    (neg, significant.to_string(), exp)
}

/// The pointer of the first number of `v` that reads as `key`.
fn first_number(v: &Value, key: NumberKey, ptr: &mut String) -> Option<String> {
    let len = ptr.len();
    let found = match v {
        Value::Number(n) if NumberKey::of(n) == key => Some(ptr.clone()),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, x)| {
            ptr.truncate(len);
            ptr.push_str(&format!("/{i}"));
            first_number(x, key, ptr)
        }),
        Value::Object(map) => map.iter().find_map(|(k, x)| {
            ptr.truncate(len);
            ptr.push('/');
            ptr.push_str(&crate::diag::escape_token(k));
            first_number(x, key, ptr)
        }),
        _ => None,
    };
    ptr.truncate(len);
    found
}

/// serde_json's compact output, but a number the line wrote is written with the line's text.
struct ExactNumbers<'a> {
    line: &'a [u8],
    /// Each number's spellings in the line, in order (one number written several ways: `1`, `1.0`); `None` for
    /// two numbers that read as one double.
    texts: &'a mut HashMap<NumberKey, Option<VecDeque<std::ops::Range<usize>>>>,
    /// A number written that two numbers of the line read as.
    ambiguous: Option<NumberKey>,
}

impl ExactNumbers<'_> {
    /// Writes the line's text of the number (its spellings in the line's order, the last one again past them);
    /// `false` when there is none to write.
    fn line_text<W: ?Sized + Write>(&mut self, w: &mut W, key: NumberKey) -> std::io::Result<bool> {
        match self.texts.get_mut(&key) {
            Some(Some(spellings)) => {
                let at = if spellings.len() > 1 { spellings.pop_front() } else { spellings.front().cloned() };
                match at {
                    Some(at) => w.write_all(&self.line[at]).map(|()| true),
                    None => Ok(false),
                }
            }
            Some(None) => {
                self.ambiguous.get_or_insert(key);
                Ok(false)
            }
            None => Ok(false),
        }
    }
}

impl serde_json::ser::Formatter for &mut ExactNumbers<'_> {
    fn write_u64<W: ?Sized + Write>(&mut self, w: &mut W, value: u64) -> std::io::Result<()> {
        if !self.line_text(w, NumberKey::Unsigned(value))? {
            serde_json::ser::CompactFormatter.write_u64(w, value)?;
        }
        Ok(())
    }

    fn write_i64<W: ?Sized + Write>(&mut self, w: &mut W, value: i64) -> std::io::Result<()> {
        if !self.line_text(w, NumberKey::Signed(value))? {
            serde_json::ser::CompactFormatter.write_i64(w, value)?;
        }
        Ok(())
    }

    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, value: f64) -> std::io::Result<()> {
        if !self.line_text(w, NumberKey::Double(value.to_bits()))? {
            serde_json::ser::CompactFormatter.write_f64(w, value)?;
        }
        Ok(())
    }
}

/// The note of one issue.
fn issue_note(line: usize, side: &'static str, i: &Issue, outcome: Outcome) -> Note {
    Note {
        line,
        outcome,
        side,
        rule: i.rule,
        pointer: i.pointer.clone(),
        message: i.message.clone(),
        related: i.related,
        caused_by: i.caused_by,
    }
}

/// The notes of a line OLD refuses: its issues, capped.
fn refused_by_old(line: usize, issues: &[Issue]) -> Vec<Note> {
    capped(issues.iter().map(|i| issue_note(line, "old", i, Outcome::Refused)).collect())
}

/// The most notes one line gets; past it, one more note says how many were left out (a message with a million
/// unknown keys gave a million warnings, found pairwise).
pub const NOTES_PER_LINE: usize = 100;

/// `notes` cut to [`NOTES_PER_LINE`], then the first left-out note, its message counting the others.
fn capped(mut notes: Vec<Note>) -> Vec<Note> {
    if notes.len() > NOTES_PER_LINE {
        let more = notes.len() - NOTES_PER_LINE;
        let first = notes.swap_remove(NOTES_PER_LINE);
        notes.truncate(NOTES_PER_LINE);
        let message = match more - 1 {
            0 => first.message.clone(),
            rest => format!(
                "{}; and {} on this line, not listed",
                first.message,
                crate::engine::counted(rest as u64, "more note", "more notes")
            ),
        };
        notes.push(Note { message, ..first });
    }
    notes
}

/// Removes the values at the JSON Pointers (each object's keys in one pass, keeping the order of the others);
/// whether each was there.
fn remove_all<'p>(v: &mut Value, pointers: impl Iterator<Item = &'p str>) -> Vec<bool> {
    let mut by_object: BTreeMap<&str, HashSet<String>> = BTreeMap::new();
    let mut wanted = Vec::new();
    for p in pointers {
        let Some((head, last)) = p.rsplit_once('/') else {
            wanted.push(None);
            continue;
        };
        let key = crate::diag::unescape_token(last);
        wanted.push(Some((head, key.clone())));
        by_object.entry(head).or_default().insert(key);
    }
    let mut gone: HashSet<(&str, String)> = HashSet::new();
    for (head, keys) in by_object {
        if let Some(Value::Object(o)) = v.pointer_mut(head) {
            o.retain(|k, _| {
                let drop = keys.contains(k);
                if drop {
                    gone.insert((head, k.clone()));
                }
                !drop
            });
        }
    }
    // A key listed twice was there once.
    wanted.into_iter().map(|w| w.is_some_and(|(h, k)| gone.remove(&(h, k)))).collect()
}
