//! The catalogue of stream rules: the one place their ids, meanings, pointers, messages and seed sentences are
//! written.
//!
//! The Rust checker ([`super::StreamChecker`]) and the emitted TypeScript checker (`src/stream.ts`, from
//! the TypeScript output's stream emitter) both take every id, pointer and message template from here; the markdown
//! reference lists [`StreamRule::ALL`] with [`StreamRule::seed`], the sentence of the protocol spec each rule
//! comes from.
//!
//! # Semantics (shared by every checker)
//! Messages are checked one by one in stream order. A message that breaks a message-level rule
//! ([`crate::rules`]) is reported with those errors; otherwise the first stream rule it breaks is reported, as a
//! single error. Any rejected message (either kind) leaves the stream state unchanged, as if it had not been
//! sent: its `id` is not remembered and it does not count in the rollup.
//!
//! Order of checks on one message: the envelope fields in schema order (`id`, then `turn`, then `subagent`),
//! then the event. The `turn` step is, for agent messages only: on `turn-start`, a missing `turn`, then an open
//! turn, then a reused id; on any other agent message while a turn is open, a missing `turn`, then a different
//! one; while no turn is open, `turn-end` itself, then any `turn`. User messages are never checked for `turn`.
//!
//! Pointer convention: a rule about a value points at that value (`/ev/call`, `/ev/agentId`, `/subagent`,
//! `/id`, `/ev/status`; a missing `turn` at `/turn`, where it would be); a rule about the event being out of
//! place points at its discriminator (`/ev/t`).
//!
//! Messages are templates: `{name}` is replaced by the parameter `name` (see [`StreamRule::params`]) in one pass
//! over the template, so a value holding braces is printed as it is.

use crate::catalogue::catalogue;

catalogue! {
    /// A stream rule: a sequence rule of the protocol, checked across messages.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum StreamRule {
        /// Every stream rule, in catalogue (and check) order.
        const ALL;
        /// The stable id printed by every checker.
        fn id;
        /// The rule with this id.
        fn from_id;
        /// An `id` seen earlier in the stream.
        IdDuplicate = "id.duplicate",
        /// `turn-start` without `turn`.
        TurnStartWithoutId = "turn.start-without-id",
        /// `turn-start` while a turn is open.
        TurnAlreadyOpen = "turn.already-open",
        /// `turn-start` with the id of a turn that has ended.
        TurnReused = "turn.reused",
        /// An agent message without `turn` while a turn is open.
        TurnMissingId = "turn.missing-id",
        /// An agent message with another turn's id while a turn is open.
        TurnWrongId = "turn.wrong-id",
        /// An agent message with `turn` while no turn is open.
        TurnNotOpen = "turn.not-open",
        /// `turn-end` while no turn is open.
        TurnEndWithoutTurn = "turn.end-without-turn",
        /// `turn-end` while a tool call of the turn is open.
        TurnEndOpenCall = "turn.end-open-call",
        /// `turn-end` of an aborted turn that is not `cancelled`.
        TurnAbortNotCancelled = "turn.abort-not-cancelled",
        /// `tool-call-start` reusing an open `call`.
        CallAlreadyOpen = "call.already-open",
        /// `tool-call-end` of a `call` that is not open.
        CallNotOpen = "call.not-open",
        /// `tool-call-end` while the call's `permission-request` is unanswered.
        CallPermissionPending = "call.permission-pending",
        /// `permission-request` while no turn is open.
        PermissionOutsideTurn = "permission.outside-turn",
        /// `permission-request` for a `call` that is not open.
        PermissionCallNotOpen = "permission.call-not-open",
        /// `permission-response` for a `call` with no unanswered request.
        PermissionNoRequest = "permission.no-request",
        /// The envelope `subagent` names no running subagent.
        SubagentNotRunning = "subagent.not-running",
        /// `subagent-start` of an id that is running.
        SubagentAlreadyRunning = "subagent.already-running",
        /// `subagent-stop` of an id that is not running.
        SubagentStopNotRunning = "subagent.stop-not-running",
    }
}

impl StreamRule {
    /// One sentence on what the rule forbids, for the reference.
    pub fn summary(self) -> &'static str {
        self.def().0
    }

    /// The sentence of the protocol spec (the seed) the rule comes from, quoted verbatim.
    pub fn seed(self) -> &'static str {
        self.def().1
    }

    /// The JSON Pointer every checker reports the violation at.
    pub fn pointer(self) -> &'static str {
        self.def().2
    }

    /// The message template; `{name}` stands for the parameter `name`.
    pub fn template(self) -> &'static str {
        self.def().3
    }

    /// The parameters the template uses, in the order they appear.
    pub fn params(self) -> Vec<&'static str> {
        placeholders(self.template())
    }

    /// (summary, seed sentence, pointer, message template); the id is in the catalogue above.
    fn def(self) -> (&'static str, &'static str, &'static str, &'static str) {
        use StreamRule as R;
        match self {
            R::IdDuplicate => (
                "A message `id` may appear only once in a stream.",
                "Globally unique message identifier",
                "/id",
                "message id `{id}` was already used in this stream",
            ),
            R::TurnStartWithoutId => (
                "`turn-start` must carry the `turn` id it establishes.",
                "Establishes the `turn` id on the envelope.",
                "/turn",
                "`turn-start` must carry the new turn's id in `turn`",
            ),
            R::TurnAlreadyOpen => (
                "`turn-start` may not come while another turn is open.",
                "Turn id established by `turn-start`. Required on all agent messages during a turn",
                "/ev/t",
                "turn `{open}` is still open: it must end before another `turn-start`",
            ),
            R::TurnReused => (
                "`turn-start` may not reuse the id of a turn that has ended.",
                "Establishes the `turn` id on the envelope.",
                "/turn",
                "turn `{turn}` has already ended; a new turn needs a new id",
            ),
            R::TurnMissingId => (
                "While a turn is open, every agent message (subagent messages and `turn-end` included) carries its id.",
                "Required on all agent messages during a turn",
                "/turn",
                "agent message during turn `{open}` must carry `turn: \"{open}\"`",
            ),
            R::TurnWrongId => (
                "While a turn is open, an agent message may not carry another turn's id.",
                "Required on all agent messages during a turn",
                "/turn",
                "agent message carries turn `{turn}`, but the open turn is `{open}`",
            ),
            R::TurnNotOpen => (
                "An agent message may carry `turn` only while that turn is open.",
                "Turn id established by `turn-start`.",
                "/turn",
                "agent message carries turn `{turn}`, but no turn is open",
            ),
            R::TurnEndWithoutTurn => (
                "`turn-end` needs an open turn.",
                "Final turn outcome",
                "/ev/t",
                "`turn-end` while no turn is open",
            ),
            R::TurnEndOpenCall => (
                "`turn-end` may not come while a tool call started in that turn is still open.",
                "Tool call identifier, matched by `tool-call-end`",
                "/ev/t",
                "turn `{turn}` cannot end while its tool call `{call}` is open",
            ),
            R::TurnAbortNotCancelled => (
                "After a user `abort` during a turn, that turn's `turn-end` must have status `cancelled`.",
                "Agent responds with `turn-end { status: \"cancelled\" }`.",
                "/ev/status",
                "turn `{turn}` was aborted, so it must end `cancelled`, not `{status}`",
            ),
            R::CallAlreadyOpen => (
                "`tool-call-start` may not reuse a `call` that is still open.",
                "Tool call identifier, matched by `tool-call-end`",
                "/ev/call",
                "tool call `{call}` is already open",
            ),
            R::CallNotOpen => (
                "`tool-call-end` needs an open `call`.",
                "Tool call identifier, matched by `tool-call-end`",
                "/ev/call",
                "tool call `{call}` is not open",
            ),
            R::CallPermissionPending => (
                "`tool-call-end` may not end a call whose `permission-request` is unanswered, unless the user aborted the turn.",
                "The tool does not execute until the user responds.",
                "/ev/call",
                "tool call `{call}` is waiting for a `permission-response`",
            ),
            R::PermissionOutsideTurn => (
                "`permission-request` only during a turn.",
                "Always during a turn.",
                "/ev/t",
                "`permission-request` while no turn is open",
            ),
            R::PermissionCallNotOpen => (
                "`permission-request` only for an open tool call.",
                "Appears between `tool-call-start` and `tool-call-end`.",
                "/ev/call",
                "`permission-request` for tool call `{call}`, which is not open",
            ),
            R::PermissionNoRequest => (
                "`permission-response` only for a call with an unanswered `permission-request`.",
                "Matches the `call` from the request.",
                "/ev/call",
                "tool call `{call}` has no unanswered `permission-request`",
            ),
            R::SubagentNotRunning => (
                "The envelope `subagent` must name a running subagent (started and not stopped).",
                "Subagent identifier — matches `agentId` from `subagent-start`",
                "/subagent",
                "subagent `{agentId}` is not running",
            ),
            R::SubagentAlreadyRunning => (
                "`subagent-start` may not start an id that is running.",
                "Subagent identifier — same value used in envelope `subagent` field on all messages this subagent produces",
                "/ev/agentId",
                "subagent `{agentId}` is already running",
            ),
            R::SubagentStopNotRunning => (
                "`subagent-stop` needs a running id.",
                "Subagent identifier — same value used in envelope `subagent` field on all messages this subagent produces",
                "/ev/agentId",
                "subagent `{agentId}` is not running",
            ),
        }
    }
}

/// The protocol vocabulary the stream rules speak of: event tags and field names. Both checkers take these
/// names from here; a test checks that each one exists in the loaded schema.
pub(crate) mod vocab {
    /// Envelope: message id.
    pub const ID: &str = "id";
    /// Envelope: turn id.
    pub const TURN: &str = "turn";
    /// Envelope: subagent id.
    pub const SUBAGENT: &str = "subagent";
    /// The role whose messages carry the turn.
    pub const AGENT: &str = "agent";
    /// The role that aborts.
    pub const USER: &str = "user";
    /// Event: a turn starts.
    pub const TURN_START: &str = "turn-start";
    /// Event: a turn ends.
    pub const TURN_END: &str = "turn-end";
    /// `turn-end` field: the outcome.
    pub const STATUS: &str = "status";
    /// The outcome required after an abort.
    pub const CANCELLED: &str = "cancelled";
    /// `turn-end` field: token usage (an object of numbers, summed field by field).
    pub const USAGE: &str = "usage";
    /// Event: the user pressed stop.
    pub const ABORT: &str = "abort";
    /// Event: a tool call starts.
    pub const TOOL_CALL_START: &str = "tool-call-start";
    /// Event: a tool call ends.
    pub const TOOL_CALL_END: &str = "tool-call-end";
    /// Tool-call and permission field: the call id.
    pub const CALL: &str = "call";
    /// `tool-call-start` field: the tool name.
    pub const NAME: &str = "name";
    /// Event: the agent asks for permission.
    pub const PERMISSION_REQUEST: &str = "permission-request";
    /// `permission-request` field: the tool asking.
    pub const TOOL_NAME: &str = "toolName";
    /// Event: the user answers a permission request.
    pub const PERMISSION_RESPONSE: &str = "permission-response";
    /// Event: a subagent starts.
    pub const SUBAGENT_START: &str = "subagent-start";
    /// Event: a subagent stops.
    pub const SUBAGENT_STOP: &str = "subagent-stop";
    /// Subagent field: its id.
    pub const AGENT_ID: &str = "agentId";
    /// `subagent-start` field: its label.
    pub const TITLE: &str = "title";
    /// Event: control moved to another client (every field rolls up).
    pub const SESSION_CONTROL_CHANGED: &str = "session-control-changed";
    /// Event: configuration changed (every field rolls up, as last changed).
    pub const AGENT_CONFIGURATION_CHANGED: &str = "agent-configuration-changed";

    /// Every name with its constant's name, for emitters and the vocabulary test.
    pub const ALL: &[(&str, &str)] = &[
        ("ID", ID),
        ("TURN", TURN),
        ("SUBAGENT", SUBAGENT),
        ("AGENT", AGENT),
        ("USER", USER),
        ("TURN_START", TURN_START),
        ("TURN_END", TURN_END),
        ("STATUS", STATUS),
        ("CANCELLED", CANCELLED),
        ("USAGE", USAGE),
        ("ABORT", ABORT),
        ("TOOL_CALL_START", TOOL_CALL_START),
        ("TOOL_CALL_END", TOOL_CALL_END),
        ("CALL", CALL),
        ("NAME", NAME),
        ("PERMISSION_REQUEST", PERMISSION_REQUEST),
        ("TOOL_NAME", TOOL_NAME),
        ("PERMISSION_RESPONSE", PERMISSION_RESPONSE),
        ("SUBAGENT_START", SUBAGENT_START),
        ("SUBAGENT_STOP", SUBAGENT_STOP),
        ("AGENT_ID", AGENT_ID),
        ("TITLE", TITLE),
        ("SESSION_CONTROL_CHANGED", SESSION_CONTROL_CHANGED),
        ("AGENT_CONFIGURATION_CHANGED", AGENT_CONFIGURATION_CHANGED),
    ];
}

/// The `{name}` placeholders of a template, in order of appearance, without repeats.
pub(crate) fn placeholders(template: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if is_param(&after[..close]) => {
                let name = &after[..close];
                if !out.contains(&name) {
                    out.push(name);
                }
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    out
}

fn is_param(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Fills a template in one pass: `{name}` becomes the value of `name` in `params`; anything else (including
/// braces in the values) is copied as it is.
pub(crate) fn format_message(template: &str, params: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let param = after.find('}').filter(|&c| is_param(&after[..c])).and_then(|c| {
            let name = &after[..c];
            params.iter().find(|(k, _)| *k == name).map(|(_, v)| (c, *v))
        });
        match param {
            Some((close, value)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_round_trip_and_do_not_clash_with_message_rules() {
        let mut ids: Vec<&str> = StreamRule::ALL.iter().map(|r| r.id()).collect();
        for r in StreamRule::ALL {
            assert_eq!(StreamRule::from_id(r.id()), Some(*r));
            assert!(crate::rules::Rule::from_id(r.id()).is_none(), "{} clashes with a message-level rule", r.id());
            assert!(r.id().contains('.'), "stream rule ids are `area.name`: {}", r.id());
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), StreamRule::ALL.len());
    }

    #[test]
    fn every_rule_has_text_and_a_pointer() {
        for r in StreamRule::ALL {
            assert!(r.summary().ends_with('.'), "{}", r.id());
            assert!(!r.seed().is_empty(), "{}", r.id());
            assert!(r.pointer().starts_with('/'), "{}", r.id());
        }
    }

    #[test]
    fn templates_fill_in_one_pass() {
        assert_eq!(placeholders("a {x} b {y} {x} {not a param} {}"), vec!["x", "y"]);
        assert_eq!(format_message("call `{call}` {x}", &[("call", "{call}")]), "call `{call}` {x}");
        assert_eq!(format_message("{a}{b}", &[("a", "1"), ("b", "2")]), "12");
        assert_eq!(format_message("{", &[]), "{");
    }
}
