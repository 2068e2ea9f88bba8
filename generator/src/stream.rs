//! Stream validation: the protocol's sequence rules ([`rules::StreamRule`]) and the session rollup.
//!
//! Feed records in order to a [`StreamChecker`]; each call returns that record's verdict (its message-level
//! errors, or the first stream rule it breaks); at any point [`StreamChecker::rollup`] gives the session state
//! folded from the messages accepted so far. Memory is bounded by the open state (turn, tool calls, running
//! subagents) plus the set of seen message ids and ended turn ids; [`check_reader`] streams a file line by line.
//!
//! The rules, their order and pointers are documented in [`rules`]; the emitted TypeScript checker
//! (`checkSessionStream` / `rollupSession` in `src/stream.ts`) follows the same definition.
//!
//! # Example
//! ```
//! # let proto = wiregen::load::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../schema"))).unwrap();
//! use wiregen::engine::{Engine, EngineOptions};
//! use wiregen::stream::StreamChecker;
//! let engine = Engine::new(proto, EngineOptions::default()).unwrap();
//! let mut checker = StreamChecker::new(&engine);
//! let rec = checker.check(1, br#"{"id":"m1","time":1,"role":"agent","ev":{"t":"turn-end","status":"completed"}}"#);
//! assert_eq!(rec.errors[0].rule, "turn.end-without-turn");
//! assert_eq!(checker.rollup().messages.rejected, 1);
//! ```
//!
//! # Errors
//! Problems with the data are [`Record`]s, never errors; [`check_reader`] fails only on I/O.

pub mod rules;

use std::collections::{BTreeMap, HashSet};
use std::io::{self, BufRead};
use std::ops::ControlFlow;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::engine::{Engine, Issue};
use crate::ir::{Model, Protocol, Shape as Node};
use crate::validate::{read_line, Record, RecordSink, Summary};
use rules::{format_message, vocab as V, StreamRule};

/// Checks the protocol's ordering rules over a stream of messages.
pub struct StreamChecker<'e> {
    engine: &'e Engine,
    /// The protocol (none for a package without a protocol layer: no stream rules apply).
    proto: Option<&'e Protocol>,
    /// The events' discriminator.
    tag: &'e str,
    shape: Shape,
    /// Sequence number of the next accepted message (orders open things by when they started).
    seq: u64,
    seen: HashSet<String>,
    ended: HashSet<String>,
    turn: Option<OpenTurn>,
    calls: BTreeMap<String, OpenCall>,
    subagents: BTreeMap<String, Running>,
    accepted: u64,
    rejected: u64,
    control: Option<Map<String, Value>>,
    config: Vec<Option<Value>>,
    turns: Vec<u64>,
    usage: Vec<f64>,
}

/// What the rollup reads from the schema: which fields roll up, in schema order. The TypeScript emitter
/// embeds the same shape, so both rollups have the same keys in the same order.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub(crate) struct Shape {
    /// Fields of `session-control-changed` (the controlling client and token).
    pub control_fields: Vec<String>,
    /// Fields of `agent-configuration-changed` (the configuration, as last changed).
    pub config_fields: Vec<String>,
    /// Values of `turn-end`'s `status` (turns by status).
    pub statuses: Vec<String>,
    /// The numeric fields of `turn-end`'s `usage` object (summed).
    pub usage_fields: Vec<String>,
}

impl Shape {
    /// What the rollup reads from the schema ([`Shape`]), from the model: the fields of `session-control-changed`
    /// and `agent-configuration-changed` (without the discriminator), the values of `turn-end`'s `status` enum and the
    /// numeric fields of its `usage` object, each in schema order (empty when the protocol has no such event).
    pub(crate) fn of(m: &Model, p: &Protocol) -> Shape {
        let disc = p.discriminator(m);
        let fields = |tag: &str| -> Vec<&crate::ir::Field> {
            match p.event(tag).map(|e| &m.ty(e.ty).node.shape) {
                Some(Node::Object(o)) => o.fields.iter().filter(|f| f.name != disc).collect(),
                _ => Vec::new(),
            }
        };
        let names = |tag: &str| fields(tag).iter().map(|f| f.name.clone()).collect::<Vec<_>>();
        let field =
            |name: &str| fields(V::TURN_END).into_iter().find(|f| f.name == name).map(|f| m.resolve(&f.node.shape));
        let statuses = match field(V::STATUS) {
            Some(Node::Enum(values)) => values.iter().filter_map(|v| v.as_str().map(String::from)).collect(),
            _ => Vec::new(),
        };
        let usage_fields = match field(V::USAGE) {
            Some(Node::Object(o)) => o
                .fields
                .iter()
                .filter(|f| matches!(m.resolve(&f.node.shape), Node::Number(_)))
                .map(|f| f.name.clone())
                .collect(),
            _ => Vec::new(),
        };
        Shape {
            control_fields: names(V::SESSION_CONTROL_CHANGED),
            config_fields: names(V::AGENT_CONFIGURATION_CHANGED),
            statuses,
            usage_fields,
        }
    }
}

#[derive(Debug, Clone)]
struct OpenTurn {
    id: String,
    aborted: bool,
}

#[derive(Debug, Clone)]
struct OpenCall {
    seq: u64,
    name: String,
    turn: Option<String>,
    subagent: Option<String>,
    /// The `toolName` of an unanswered permission request.
    pending: Option<String>,
}

#[derive(Debug, Clone)]
struct Running {
    seq: u64,
    title: Option<String>,
    parent: Option<String>,
}

/// The session state folded from the accepted messages of a stream: what the seed says is mirrored into
/// session metadata. Serializes with a fixed key order (schema order for the data-driven maps).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rollup {
    /// How many messages were accepted and rejected.
    pub messages: MessageCounts,
    /// The last `session-control-changed` (every field; `null` where it was absent), or `null`.
    pub control: Option<Map<String, Value>>,
    /// Every `agent-configuration-changed` field as last changed, `null` where never set.
    pub config: Map<String, Value>,
    /// Ended turns by status, in the status enum's order.
    pub turns: Map<String, Value>,
    /// Usage of the ended turns, summed field by field.
    pub usage: Map<String, Value>,
    /// What is still open.
    pub open: OpenState,
}

/// Message counts of a [`Rollup`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MessageCounts {
    /// Messages accepted (valid and breaking no stream rule).
    pub accepted: u64,
    /// Messages rejected.
    pub rejected: u64,
}

/// What is open at the end of a (possibly live) stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenState {
    /// The open turn, if any.
    pub turn: Option<OpenTurnInfo>,
    /// Open tool calls, in the order they started.
    pub tool_calls: Vec<OpenCallInfo>,
    /// Unanswered permission requests, in the order their calls started.
    pub pending_permissions: Vec<PendingPermission>,
    /// Running subagents, in the order they started.
    pub subagents: Vec<RunningSubagent>,
}

/// An open turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpenTurnInfo {
    /// Its id.
    pub turn: String,
    /// Whether the user aborted it.
    pub aborted: bool,
}

/// An open tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpenCallInfo {
    /// The call id.
    pub call: String,
    /// The tool name.
    pub name: String,
    /// The turn it started in, if any.
    pub turn: Option<String>,
    /// The subagent that started it, if any.
    pub subagent: Option<String>,
}

/// An unanswered permission request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingPermission {
    /// The call id.
    pub call: String,
    /// The tool asking.
    pub tool_name: String,
}

/// A running subagent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunningSubagent {
    /// Its id.
    pub agent_id: String,
    /// Its label, if any.
    pub title: Option<String>,
    /// The subagent that started it (nested subagents), if any.
    pub parent: Option<String>,
}

/// A message that passed the message-level rules, with the fields the stream rules read.
struct Msg<'v> {
    id: &'v str,
    agent: bool,
    user: bool,
    turn: Option<&'v str>,
    subagent: Option<&'v str>,
    t: &'v str,
    ev: &'v Map<String, Value>,
}

impl<'v> Msg<'v> {
    fn ev_str(&self, key: &str) -> Option<&'v str> {
        self.ev.get(key).and_then(Value::as_str)
    }
}

fn violation(rule: StreamRule, params: &[(&str, &str)]) -> Issue {
    Issue { pointer: rule.pointer().to_string(), rule: rule.id(), message: format_message(rule.template(), params) }
}

impl<'e> StreamChecker<'e> {
    /// A checker at the start of a stream.
    pub fn new(engine: &'e Engine) -> Self {
        let m: &'e Model = engine.model();
        let proto = m.protocol.as_ref();
        let shape = proto.map(|p| Shape::of(m, p)).unwrap_or_default();
        StreamChecker {
            engine,
            proto,
            tag: proto.map_or("", |p| p.discriminator(m)),
            seq: 0,
            seen: HashSet::new(),
            ended: HashSet::new(),
            turn: None,
            calls: BTreeMap::new(),
            subagents: BTreeMap::new(),
            accepted: 0,
            rejected: 0,
            control: None,
            config: vec![None; shape.config_fields.len()],
            turns: vec![0; shape.statuses.len()],
            usage: vec![0.0; shape.usage_fields.len()],
            shape,
        }
    }

    /// Checks the next record (`line` is 1-based; `bytes` is the line without its newline).
    pub fn check(&mut self, line: usize, bytes: &[u8]) -> Record {
        // The fast path vouches for the message; the value is still needed for the stream state.
        if self.engine.is_valid_fast(bytes) {
            if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
                return self.check_valid(line, &v);
            }
        }
        let (value, errors) = self.engine.check_line(bytes);
        match value {
            Some(v) if errors.is_empty() => self.check_valid(line, &v),
            _ => self.reject(line, errors),
        }
    }

    /// Checks the next message, already parsed (`line` is its 1-based position).
    pub fn check_value(&mut self, line: usize, value: &Value) -> Record {
        let errors = self.engine.check_value(value);
        if errors.is_empty() {
            self.check_valid(line, value)
        } else {
            self.reject(line, errors)
        }
    }

    fn reject(&mut self, line: usize, errors: Vec<Issue>) -> Record {
        self.rejected += 1;
        Record::new(line, errors)
    }

    fn check_valid(&mut self, line: usize, v: &Value) -> Record {
        let Some(p) = self.proto else {
            self.accepted += 1;
            return Record::new(line, Vec::new());
        };
        let (Some(env), Some(ev)) = (v.as_object(), v.get(&p.union_field).and_then(Value::as_object)) else {
            // Unreachable for a message the engine accepted; reported rather than trusted.
            return self.reject(line, vec![Issue::new(crate::rules::Rule::Type, "", "expected an envelope")]);
        };
        let s = |k: &str| env.get(k).and_then(Value::as_str);
        let role = s(&p.role_field).unwrap_or_default();
        let m = Msg {
            id: s(V::ID).unwrap_or_default(),
            agent: role == V::AGENT,
            user: role == V::USER,
            turn: s(V::TURN),
            subagent: s(V::SUBAGENT),
            t: ev.get(self.tag).and_then(Value::as_str).unwrap_or_default(),
            ev,
        };
        if let Some(issue) = self.first_violation(&m) {
            return self.reject(line, vec![issue]);
        }
        self.apply(&m);
        self.accepted += 1;
        Record::new(line, Vec::new())
    }

    /// The first stream rule `m` breaks, in the documented order.
    fn first_violation(&self, m: &Msg<'_>) -> Option<Issue> {
        use StreamRule as R;
        if self.seen.contains(m.id) {
            return Some(violation(R::IdDuplicate, &[("id", m.id)]));
        }
        if m.agent {
            if m.t == V::TURN_START {
                let Some(turn) = m.turn else { return Some(violation(R::TurnStartWithoutId, &[])) };
                if let Some(open) = &self.turn {
                    return Some(violation(R::TurnAlreadyOpen, &[("open", &open.id)]));
                }
                if self.ended.contains(turn) {
                    return Some(violation(R::TurnReused, &[("turn", turn)]));
                }
            } else if let Some(open) = &self.turn {
                match m.turn {
                    None => return Some(violation(R::TurnMissingId, &[("open", &open.id)])),
                    Some(t) if t != open.id => {
                        return Some(violation(R::TurnWrongId, &[("turn", t), ("open", &open.id)]))
                    }
                    Some(_) => {}
                }
            } else if m.t == V::TURN_END {
                return Some(violation(R::TurnEndWithoutTurn, &[]));
            } else if let Some(t) = m.turn {
                return Some(violation(R::TurnNotOpen, &[("turn", t)]));
            }
        }
        if let Some(sa) = m.subagent {
            if !self.subagents.contains_key(sa) {
                return Some(violation(R::SubagentNotRunning, &[("agentId", sa)]));
            }
        }
        let call = m.ev_str(V::CALL).unwrap_or_default();
        let agent_id = m.ev_str(V::AGENT_ID).unwrap_or_default();
        match m.t {
            t if t == V::TURN_END => {
                let open = self.turn.as_ref()?;
                if let Some((c, _)) =
                    self.calls_in_order().into_iter().find(|(_, c)| c.turn.as_deref() == Some(open.id.as_str()))
                {
                    return Some(violation(R::TurnEndOpenCall, &[("turn", &open.id), ("call", c)]));
                }
                let status = m.ev_str(V::STATUS).unwrap_or_default();
                if open.aborted && status != V::CANCELLED {
                    return Some(violation(R::TurnAbortNotCancelled, &[("turn", &open.id), ("status", status)]));
                }
            }
            t if t == V::TOOL_CALL_START && self.calls.contains_key(call) => {
                return Some(violation(R::CallAlreadyOpen, &[("call", call)]));
            }
            t if t == V::TOOL_CALL_END => {
                let Some(c) = self.calls.get(call) else { return Some(violation(R::CallNotOpen, &[("call", call)])) };
                let aborted = self.turn.as_ref().is_some_and(|t| t.aborted);
                if c.pending.is_some() && !aborted {
                    return Some(violation(R::CallPermissionPending, &[("call", call)]));
                }
            }
            t if t == V::PERMISSION_REQUEST => {
                if self.turn.is_none() {
                    return Some(violation(R::PermissionOutsideTurn, &[]));
                }
                if !self.calls.contains_key(call) {
                    return Some(violation(R::PermissionCallNotOpen, &[("call", call)]));
                }
            }
            t if t == V::PERMISSION_RESPONSE && self.calls.get(call).is_none_or(|c| c.pending.is_none()) => {
                return Some(violation(R::PermissionNoRequest, &[("call", call)]));
            }
            t if t == V::SUBAGENT_START && self.subagents.contains_key(agent_id) => {
                return Some(violation(R::SubagentAlreadyRunning, &[("agentId", agent_id)]));
            }
            t if t == V::SUBAGENT_STOP && !self.subagents.contains_key(agent_id) => {
                return Some(violation(R::SubagentStopNotRunning, &[("agentId", agent_id)]));
            }
            _ => {}
        }
        None
    }

    /// Folds an accepted message into the state.
    fn apply(&mut self, m: &Msg<'_>) {
        let seq = self.seq;
        self.seq += 1;
        self.seen.insert(m.id.to_string());
        let owned = |s: Option<&str>| s.map(str::to_string);
        let call = m.ev_str(V::CALL).unwrap_or_default().to_string();
        let agent_id = m.ev_str(V::AGENT_ID).unwrap_or_default().to_string();
        match m.t {
            t if t == V::TURN_START => {
                self.turn = Some(OpenTurn { id: m.turn.unwrap_or_default().to_string(), aborted: false });
            }
            t if t == V::TURN_END => {
                if let Some(open) = self.turn.take() {
                    self.ended.insert(open.id);
                }
                let status = m.ev_str(V::STATUS).unwrap_or_default();
                if let Some(i) = self.shape.statuses.iter().position(|s| s == status) {
                    self.turns[i] += 1;
                }
                if let Some(u) = m.ev.get(V::USAGE).and_then(Value::as_object) {
                    for (i, name) in self.shape.usage_fields.iter().enumerate() {
                        self.usage[i] += u.get(name).and_then(Value::as_f64).unwrap_or(0.0);
                    }
                }
            }
            t if t == V::ABORT => {
                if let Some(open) = self.turn.as_mut().filter(|_| m.user) {
                    open.aborted = true;
                }
            }
            t if t == V::TOOL_CALL_START => {
                let c = OpenCall {
                    seq,
                    name: m.ev_str(V::NAME).unwrap_or_default().to_string(),
                    turn: self.turn.as_ref().map(|t| t.id.clone()),
                    subagent: owned(m.subagent),
                    pending: None,
                };
                self.calls.insert(call, c);
            }
            t if t == V::TOOL_CALL_END => {
                self.calls.remove(&call);
            }
            t if t == V::PERMISSION_REQUEST => {
                if let Some(c) = self.calls.get_mut(&call) {
                    c.pending = Some(m.ev_str(V::TOOL_NAME).unwrap_or_default().to_string());
                }
            }
            t if t == V::PERMISSION_RESPONSE => {
                if let Some(c) = self.calls.get_mut(&call) {
                    c.pending = None;
                }
            }
            t if t == V::SUBAGENT_START => {
                let r = Running { seq, title: owned(m.ev_str(V::TITLE)), parent: owned(m.subagent) };
                self.subagents.insert(agent_id, r);
            }
            t if t == V::SUBAGENT_STOP => {
                self.subagents.remove(&agent_id);
            }
            t if t == V::SESSION_CONTROL_CHANGED => {
                let ctl = self
                    .shape
                    .control_fields
                    .iter()
                    .map(|f| (f.clone(), m.ev.get(f).cloned().unwrap_or(Value::Null)))
                    .collect();
                self.control = Some(ctl);
            }
            t if t == V::AGENT_CONFIGURATION_CHANGED => {
                for (i, f) in self.shape.config_fields.iter().enumerate() {
                    if let Some(v) = m.ev.get(f) {
                        self.config[i] = Some(v.clone());
                    }
                }
            }
            _ => {}
        }
    }

    fn calls_in_order(&self) -> Vec<(&String, &OpenCall)> {
        let mut v: Vec<_> = self.calls.iter().collect();
        v.sort_by_key(|(_, c)| c.seq);
        v
    }

    /// The rollup of everything checked so far.
    pub fn rollup(&self) -> Rollup {
        let config = self
            .shape
            .config_fields
            .iter()
            .zip(&self.config)
            .map(|(f, v)| (f.clone(), v.clone().unwrap_or(Value::Null)))
            .collect();
        let turns = self.shape.statuses.iter().zip(&self.turns).map(|(s, n)| (s.clone(), Value::from(*n))).collect();
        let usage = self.shape.usage_fields.iter().zip(&self.usage).map(|(f, sum)| (f.clone(), number(*sum))).collect();
        let calls = self.calls_in_order();
        let mut subagents: Vec<_> = self.subagents.iter().collect();
        subagents.sort_by_key(|(_, r)| r.seq);
        Rollup {
            messages: MessageCounts { accepted: self.accepted, rejected: self.rejected },
            control: self.control.clone(),
            config,
            turns,
            usage,
            open: OpenState {
                turn: self.turn.as_ref().map(|t| OpenTurnInfo { turn: t.id.clone(), aborted: t.aborted }),
                tool_calls: calls
                    .iter()
                    .map(|(id, c)| OpenCallInfo {
                        call: (*id).clone(),
                        name: c.name.clone(),
                        turn: c.turn.clone(),
                        subagent: c.subagent.clone(),
                    })
                    .collect(),
                pending_permissions: calls
                    .iter()
                    .filter_map(|(id, c)| {
                        c.pending.as_ref().map(|t| PendingPermission { call: (*id).clone(), tool_name: t.clone() })
                    })
                    .collect(),
                subagents: subagents
                    .into_iter()
                    .map(|(id, r)| RunningSubagent {
                        agent_id: id.clone(),
                        title: r.title.clone(),
                        parent: r.parent.clone(),
                    })
                    .collect(),
            },
        }
    }
}

/// A sum as JSON, printed as JavaScript prints numbers: whole sums as integers.
fn number(sum: f64) -> Value {
    if sum.fract() == 0.0 && sum.abs() < 9_007_199_254_740_992.0 {
        Value::from(sum as i64)
    } else {
        serde_json::Number::from_f64(sum).map_or(Value::Null, Value::Number)
    }
}

/// What `wiregen validate --stream --summary` prints for one stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamSummary {
    /// The file as named on the command line (`<stdin>` for standard input).
    pub file: String,
    /// Lines checked.
    pub records: usize,
    /// Lines rejected.
    pub invalid: usize,
    /// The first rejected line, with its first error.
    pub first_error: Option<FirstError>,
    /// The session rollup of the accepted messages.
    pub rollup: Rollup,
}

/// The first rejected line of a stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FirstError {
    /// 1-based line.
    pub line: usize,
    /// Its first error.
    #[serde(flatten)]
    pub issue: Issue,
}

impl StreamSummary {
    /// Checks every line of `reader` as one stream ([`check_reader`]) and summarizes it, passing each record on.
    ///
    /// # Errors
    /// Only I/O errors while reading.
    pub fn of_reader<R: BufRead>(
        engine: &Engine,
        file: &str,
        reader: R,
        sink: impl RecordSink,
    ) -> io::Result<StreamSummary> {
        struct First<'a, S> {
            sink: S,
            first_error: &'a mut Option<FirstError>,
        }
        impl<S: RecordSink> RecordSink for First<'_, S> {
            fn record(&mut self, rec: Record) -> ControlFlow<()> {
                if self.first_error.is_none() {
                    *self.first_error = rec.errors.first().map(|e| FirstError { line: rec.line, issue: e.clone() });
                }
                self.sink.record(rec)
            }
            fn idle(&mut self) {
                self.sink.idle();
            }
        }
        let mut first_error = None;
        let (s, rollup) = check_reader(engine, reader, First { sink, first_error: &mut first_error })?;
        Ok(StreamSummary { file: file.to_string(), records: s.records, invalid: s.invalid, first_error, rollup })
    }

    /// The counts as a [`Summary`].
    pub fn counts(&self) -> Summary {
        Summary { records: self.records, invalid: self.invalid }
    }
}

/// Checks every line of `reader` as one stream (each line one message; no pretty-printed documents), handing
/// each record to `sink` in order (a closure, or a [`RecordSink`] that can stop the run and flush while the input
/// is idle). Reads one line at a time: memory stays bounded by the stream state.
///
/// # Errors
/// Only I/O errors while reading; every problem with the data is a [`Record`].
pub fn check_reader<R: BufRead>(
    engine: &Engine,
    reader: R,
    mut sink: impl RecordSink,
) -> io::Result<(Summary, Rollup)> {
    // Our own buffer, to see when the input has nothing more to give right now (then the sink may flush).
    let mut reader = io::BufReader::with_capacity(64 << 10, reader);
    let mut checker = StreamChecker::new(engine);
    let mut summary = Summary::default();
    let mut buf = Vec::new();
    let mut line = 0;
    loop {
        if reader.buffer().is_empty() {
            sink.idle();
        }
        if read_line(&mut reader, &mut buf)? == 0 {
            break;
        }
        line += 1;
        let rec = checker.check(line, &buf);
        summary.records += 1;
        if !rec.valid {
            summary.invalid += 1;
        }
        if sink.record(rec).is_break() {
            break;
        }
    }
    Ok((summary, checker.rollup()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineOptions;

    fn model() -> crate::ir::Model {
        crate::load::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema")).expect("schema loads")
    }

    /// Names in the model: event tags, envelope and event fields, role and other enum values.
    fn schema_names(m: &Model) -> Vec<String> {
        let mut names = Vec::new();
        for t in &m.types {
            match &t.node.shape {
                Node::Object(o) => names.extend(o.fields.iter().map(|f| f.name.clone())),
                Node::Enum(vs) => names.extend(vs.iter().filter_map(|v| v.as_str().map(String::from))),
                Node::Union(u) => names.extend(u.members.iter().filter_map(|x| x.tag.as_str().map(String::from))),
                _ => {}
            }
        }
        names
    }

    /// Every vocabulary name is an event tag, a field, a role or another enum value of the schema.
    #[test]
    fn vocabulary_names_exist_in_the_schema() {
        let m = model();
        let names = schema_names(&m);
        for (k, name) in V::ALL {
            assert!(names.iter().any(|n| n == name), "vocab::{k} = {name:?} is not in the schema");
        }
    }

    /// Each rule's pointer names an envelope field or a field of some event under the union field.
    #[test]
    fn pointers_name_schema_fields() {
        let m = model();
        let p = m.protocol.as_ref().expect("a protocol");
        let fields_of = |id: crate::ir::TypeId| match &m.ty(id).node.shape {
            Node::Object(o) => o.fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
            _ => Vec::new(),
        };
        let envelope = fields_of(p.envelope);
        let events: Vec<String> = p.events.iter().flat_map(|e| fields_of(e.ty)).collect();
        for r in StreamRule::ALL {
            let toks: Vec<&str> = r.pointer().split('/').skip(1).collect();
            let ok = match toks.as_slice() {
                [f] => envelope.iter().any(|x| x == f),
                [u, f] => *u == p.union_field && events.iter().any(|x| x == f),
                _ => false,
            };
            assert!(ok, "{}: pointer {} names no schema field", r.id(), r.pointer());
        }
    }

    /// The rollup's shape, read from the v2 schema.
    #[test]
    fn the_rollup_shape_comes_from_the_schema() {
        let m = model();
        let s = Shape::of(&m, m.protocol.as_ref().expect("a protocol"));
        assert_eq!(s.control_fields, ["clientType", "tokenId"]);
        assert_eq!(s.config_fields, ["permissionMode", "model", "thinkingLevel", "sandbox"]);
        assert_eq!(s.statuses, ["completed", "failed", "cancelled"]);
        assert_eq!(s.usage_fields, ["inputTokens", "outputTokens", "cost"]);
    }

    #[test]
    fn a_rejected_message_leaves_the_state_unchanged() {
        let e = Engine::new(model(), EngineOptions::default()).expect("a root type");
        let mut c = StreamChecker::new(&e);
        let ok = |r: &Record| assert!(r.valid, "{r:?}");
        ok(&c.check(1, br#"{"id":"a","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-start"}}"#));
        // Stream violation: a second turn-start; the id `b` is not remembered.
        let r = c.check(2, br#"{"id":"b","time":1,"role":"agent","turn":"t2","ev":{"t":"turn-start"}}"#);
        assert_eq!((r.errors[0].rule, r.errors[0].pointer.as_str()), ("turn.already-open", "/ev/t"));
        // Message-level violation: not applied either.
        let r = c.check(3, br#"{"id":"c","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-end","status":"done"}}"#);
        assert_eq!(r.errors[0].rule, "enum");
        ok(&c
            .check(4, br#"{"id":"b","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-end","status":"completed"}}"#));
        let roll = c.rollup();
        assert_eq!(roll.messages, MessageCounts { accepted: 2, rejected: 2 });
        assert_eq!(roll.turns["completed"], Value::from(1));
        assert!(roll.open.turn.is_none());
    }
}
