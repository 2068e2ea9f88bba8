//! The stream checker: the protocol's sequence rules (its `x-sequence` declarations) over a session, one message
//! at a time, and the session rollup — the same declarations, interpreted by the same code (`stream_machine.rs`),
//! as `wiregen validate --stream`, with the same records.
//!
//! A message that breaks a message-level rule gets that error (the first one, as [`super::parse_envelope_bytes`]
//! reports it); otherwise the first sequence rule it breaks, with the earlier line it relates to and the rejected
//! line it follows from where there are such. A rejected message leaves the state alone.
//!
//! # Example
//! ```
//! # fn main() {
//! # let lines: Vec<&[u8]> = Vec::new();
//! let mut checker = session_wire::stream::StreamChecker::new();
//! for line in lines {
//!     let record = checker.check_line(line);
//!     if !record.valid {
//!         eprintln!("{}: {} [{}]", record.line, record.errors[0].message, record.errors[0].rule);
//!     }
//! }
//! let rollup = checker.rollup(); // {"messages": {...}, <declared parts>, "open": {...}}
//! # let _ = rollup;
//! # }
//! ```

use super::stream_machine::{Machine, State};

/// One error of a [`StreamRecord`]: a message-level error, or the sequence rule the message breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamError {
    /// JSON Pointer into the message (`""` for the whole line).
    pub pointer: String,
    /// The rule id (a [`super::Rule`] id or a sequence rule id).
    pub rule: String,
    /// Human explanation.
    pub message: String,
    /// For a sequence rule: the earlier line the violation relates to.
    pub related: Option<usize>,
    /// For a sequence rule: the earlier rejected line the violation only follows from.
    pub caused_by: Option<usize>,
}

impl StreamError {
    fn of(e: &super::Error) -> StreamError {
        StreamError {
            pointer: e.pointer().to_string(),
            rule: e.rule().id().to_string(),
            message: e.message().to_string(),
            related: None,
            caused_by: None,
        }
    }
}

/// The verdict on one message of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamRecord {
    /// 1-based position in the stream.
    pub line: usize,
    /// Whether the message was accepted.
    pub valid: bool,
    /// The error, when it was not.
    pub errors: Vec<StreamError>,
}

/// Checks the sequence rules over a stream and folds the accepted messages into the rollup.
#[derive(Debug, Clone)]
pub struct StreamChecker {
    machine: Machine,
    state: State,
    line: usize,
}

impl Default for StreamChecker {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamChecker {
    /// A checker at the start of a stream.
    pub fn new() -> Self {
        // The declarations below are written by wiregen from the schema and always read back.
        let machine =
            serde_json::from_str(DECLARATIONS).ok().and_then(|v| Machine::from_json(&v)).unwrap_or_default();
        let state = State::new(&machine);
        StreamChecker { machine, state, line: 0 }
    }

    /// Checks the next line of a JSONL session log (without its newline).
    pub fn check_line(&mut self, line: &[u8]) -> StreamRecord {
        self.line += 1;
        let n = self.line;
        let value = serde_json::from_slice::<serde_json::Value>(line).ok();
        match (super::parse_envelope_bytes(line), value) {
            (Ok(_), Some(v)) => self.check_valid(n, &v),
            (Err(e), value) => {
                // A line too deep for a `Value` is JSON still, and so is one after a byte order mark: what it would
                // have opened or closed is read at any depth (a line that is not JSON every checker reads, as one
                // with an unpaired surrogate escape or a number beyond the double range, reads as nothing).
                let readable = e.rule() == super::Rule::TooDeep || e.message() == super::rt::BOM_MESSAGE;
                let value =
                    value.or_else(|| readable.then(|| super::stream_machine::read_of_value(&self.machine, line)).flatten());
                self.state.reject(&self.machine, n, value.as_ref());
                StreamRecord { line: n, valid: false, errors: vec![StreamError::of(&e)] }
            }
            (Ok(_), None) => {
                // The line decoded but is not a JSON value serde_json reads back: reported, never trusted.
                self.state.reject(&self.machine, n, None);
                let e = StreamError {
                    pointer: String::new(),
                    rule: super::Rule::MalformedJson.id().to_string(),
                    message: "malformed JSON".to_string(),
                    related: None,
                    caused_by: None,
                };
                StreamRecord { line: n, valid: false, errors: vec![e] }
            }
        }
    }

    /// Checks the next message, already parsed.
    pub fn check_value(&mut self, value: &serde_json::Value) -> StreamRecord {
        self.line += 1;
        let n = self.line;
        match super::validate_value(value) {
            Ok(()) => self.check_valid(n, value),
            Err(e) => {
                self.state.reject(&self.machine, n, Some(value));
                StreamRecord { line: n, valid: false, errors: vec![StreamError::of(&e)] }
            }
        }
    }

    fn check_valid(&mut self, n: usize, v: &serde_json::Value) -> StreamRecord {
        match self.state.check(&self.machine, n, v) {
            None => StreamRecord { line: n, valid: true, errors: Vec::new() },
            Some(x) => {
                let e = StreamError {
                    pointer: x.pointer,
                    rule: self.machine.rule_id(x.rule).to_string(),
                    message: x.message,
                    related: x.related,
                    caused_by: x.caused_by,
                };
                StreamRecord { line: n, valid: false, errors: vec![e] }
            }
        }
    }

    /// The rollup of the messages accepted so far: `messages` (accepted and rejected), the declared rollup parts,
    /// and `open` — the same JSON as `wiregen validate --stream --summary` prints.
    pub fn rollup(&self) -> serde_json::Value {
        let (accepted, rejected) = self.state.counts();
        let (parts, open) = self.state.rollup(&self.machine);
        let mut out = serde_json::Map::new();
        out.insert("messages".into(), serde_json::json!({ "accepted": accepted, "rejected": rejected }));
        out.extend(parts);
        out.insert("open".into(), serde_json::Value::Object(open));
        serde_json::Value::Object(out)
    }
}
