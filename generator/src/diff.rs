//! `wiregen diff`: what changed between two versions of a schema, and who each change breaks.
//!
//! Both versions are loaded with the loader into the [`Model`](crate::ir::Model) and the models are compared,
//! never the raw JSON: a `$ref` moved into a shared definition, a reordered file or a reworded description is no
//! change; a field that became an integer is one. Every change is a [`Change`] record with a stable rule id
//! ([`ChangeRule`]), where it is in OLD and in NEW (file, line, column and JSON Pointer, from the model's
//! [`Origin`](crate::ir::Origin)s), and [`Breaks`]: which of old producers, old consumers and stored history it
//! breaks. A [`Policy`] (the schema-registry modes) turns that into a verdict.
//!
//! How the two models are matched:
//! - a session protocol (both sides have one): the envelope with the envelope, events by their discriminator
//!   value (an event declared renamed with `x-renamed-from` by its old value), role rules as
//!   [`Protocol::role_rules`](crate::ir::Protocol::role_rules) states them, and the `x-removed` rows;
//! - a plain type package: named types (file roots, `$defs` entries, `x-name`) by name, or by the old name a type
//!   declares with `x-renamed-from`;
//! - inside: object fields by name (or by the declared old name), union members by tag, array items, map values
//!   and nullable values in place; a pair of named types is compared once, where it is first met, and its changes
//!   are reported again at the first place in every other scope (envelope, event, type) that refers to it: a
//!   shared `id` definition made stricter breaks each event that uses it. (Once per scope, not per path: the
//!   paths to a type through shared definitions can be exponentially many.)
//!
//! # Example
//!
//! ```
//! use wiregen::diff::{diff, Policy, Side};
//!
//! let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
//! let v1 = Side::load(&root.join("examples/happy-wire/schema/sessionProtocol.schema.json").to_string_lossy())?;
//! let v2 = Side::load(&root.join("schema").to_string_lossy())?;
//! let report = diff(&v1, &v2);
//! let steer = report.changes.iter().find(|c| c.subject() == "text.steer").expect("steer was added");
//! assert_eq!(steer.rule.id(), "field-added-optional");
//! assert!(report.violates(Policy::Backward));
//! # Ok::<(), wiregen::diff::DiffError>(())
//! ```
//!
//! # Errors
//!
//! Reading a side ([`Side::load`]) fails with a [`DiffError`]: a path that does not exist, a `REV:PATH` git cannot
//! read, or a schema the loader refuses (its located diagnostics are the error's source). Comparing never fails.

mod compare;
mod render;
mod source;

use serde::Serialize;

use crate::catalogue::catalogue;

pub use render::{render, Format, RenderError};
pub use source::{DiffError, Side};

catalogue! {
    /// A kind of schema change; its id is stable and printed in every output format.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum ChangeRule {
        /// Every change rule, in catalogue order.
        const ALL;
        /// The stable id.
        fn id;
        /// The rule with this id.
        fn from_id;
        /// NEW has an event OLD does not know.
        EventAdded = "event-added",
        /// An event of OLD is gone from NEW.
        EventRemoved = "event-removed",
        /// NEW declares (`x-renamed-from`) that an event is OLD's event under a new discriminator value.
        EventRenamed = "event-renamed",
        /// A discriminated union (not the protocol's events) or an `anyOf` has a new member.
        VariantAdded = "variant-added",
        /// A discriminated union (not the protocol's events) or an `anyOf` lost a member.
        VariantRemoved = "variant-removed",
        /// A plain type package has a new named type.
        TypeAdded = "type-added",
        /// A named type of a plain type package is gone.
        TypeRemoved = "type-removed",
        /// NEW declares (`x-renamed-from`) that a named type is OLD's type under a new name.
        TypeRenamed = "type-renamed",
        /// An object has a new optional property.
        FieldAddedOptional = "field-added-optional",
        /// An object has a new required property.
        FieldAddedRequired = "field-added-required",
        /// A property of OLD is gone.
        FieldRemoved = "field-removed",
        /// NEW declares (`x-renamed-from`) that a property is OLD's property under a new name.
        FieldRenamed = "field-renamed",
        /// NEW declares (`x-moved-from`) that a property holds a value OLD's messages carried elsewhere.
        FieldMoved = "field-moved",
        /// An optional property became required.
        FieldMadeRequired = "field-made-required",
        /// A required property became optional.
        FieldMadeOptional = "field-made-optional",
        /// An enum accepts new values.
        EnumValueAdded = "enum-value-added",
        /// An enum lost values.
        EnumValueRemoved = "enum-value-removed",
        /// A `const` holds another value.
        ConstChanged = "const-changed",
        /// A value has another kind (a string became a number, an object a string, ...).
        TypeChanged = "type-changed",
        /// Bounds accept less: a higher minimum, a lower maximum, a new pattern, integers only, ...
        BoundTightened = "bound-tightened",
        /// Bounds accept more: a minimum or pattern dropped, numbers instead of integers, ...
        BoundLoosened = "bound-loosened",
        /// A constraint changed in a way that is neither tighter nor looser (another pattern, another divisor).
        ConstraintChanged = "constraint-changed",
        /// A role may now send an event or a field.
        RoleAdded = "role-added",
        /// A role may no longer send an event or a field.
        RoleRemoved = "role-removed",
        /// An object now accepts properties it does not declare.
        ObjectOpened = "object-opened",
        /// An object now rejects properties it does not declare (closed world).
        ObjectClosed = "object-closed",
        /// A value may now be `null`.
        NullableAdded = "nullable-added",
        /// A value may no longer be `null`.
        NullableRemoved = "nullable-removed",
        /// NEW's `x-removed` names something OLD does not have either (the hint only changes the error message).
        RemovalDeclared = "removal-declared",
        /// An `x-removed` entry of OLD is gone from NEW (the removed-event or removed-property hint is lost).
        RemovalDropped = "removal-dropped",
        /// NEW declares a sequence rule (`x-sequence`) OLD does not have.
        SequenceRuleAdded = "sequence-rule-added",
        /// A sequence rule of OLD is gone from NEW.
        SequenceRuleRemoved = "sequence-rule-removed",
        /// A sequence rule with the same id checks something else, or reports at another pointer or with another
        /// message.
        SequenceRuleChanged = "sequence-rule-changed",
        /// A part of the rollup (`x-sequence.rollup`) or an open list (a scope's `rollup`) was added, removed or
        /// folds something else.
        RollupChanged = "rollup-changed",
    }
}

impl ChangeRule {
    /// One sentence on what the rule means and whom it breaks, for the README and `--help`.
    pub fn summary(self) -> &'static str {
        match self {
            ChangeRule::EventAdded => "NEW has an event OLD does not know: old consumers reject it.",
            ChangeRule::EventRemoved => {
                "An event of OLD is gone: old producers still send it, stored history holds it, NEW rejects both."
            }
            ChangeRule::EventRenamed => {
                "An event declared renamed: old producers and old consumers disagree on the tag; stored history upgrades by the declaration."
            }
            ChangeRule::VariantAdded => "A union has a new member: old consumers reject it.",
            ChangeRule::VariantRemoved => "A union lost a member: old producers and stored history are rejected.",
            ChangeRule::TypeAdded => "A new named type: no existing message is affected.",
            ChangeRule::TypeRemoved => "A named type is gone: values of it can no longer be checked.",
            ChangeRule::TypeRenamed => "A named type declared renamed: messages are unaffected, code that names it is.",
            ChangeRule::FieldAddedOptional => {
                "A new optional property: old consumers reject it when their object is closed."
            }
            ChangeRule::FieldAddedRequired => {
                "A new required property: old producers and stored history lack it (old consumers reject it too when closed)."
            }
            ChangeRule::FieldRemoved => {
                "A property is gone: NEW rejects it when closed (old producers, stored history); old consumers miss it when it was required."
            }
            ChangeRule::FieldRenamed => {
                "A property declared renamed: old producers and consumers use the other name; stored history upgrades by the declaration."
            }
            ChangeRule::FieldMoved => {
                "A value declared moved: old producers and consumers use the other place; stored history upgrades by the declaration where the old place holds a value."
            }
            ChangeRule::FieldMadeRequired => "An optional property became required: old producers may omit it.",
            ChangeRule::FieldMadeOptional => "A required property became optional: old consumers expect it.",
            ChangeRule::EnumValueAdded => "An enum accepts new values: old consumers reject them.",
            ChangeRule::EnumValueRemoved => "An enum lost values: old producers and stored history use them.",
            ChangeRule::ConstChanged => "A const holds another value: every old message and reader disagrees.",
            ChangeRule::TypeChanged => "A value has another kind: breaks whoever the new kind does not cover.",
            ChangeRule::BoundTightened => "Bounds accept less: old producers and stored history may fall outside.",
            ChangeRule::BoundLoosened => "Bounds accept more: old consumers reject the new values.",
            ChangeRule::ConstraintChanged => "A constraint changed both ways: breaks producers and consumers.",
            ChangeRule::RoleAdded => "A role may now send it: old consumers reject that role's messages.",
            ChangeRule::RoleRemoved => "A role may no longer send it: old producers and stored history are rejected.",
            ChangeRule::ObjectOpened => "An object accepts unknown properties: old (closed) consumers reject them.",
            ChangeRule::ObjectClosed => {
                "An object rejects unknown properties: old producers and stored history that carry extra keys are rejected."
            }
            ChangeRule::NullableAdded => "`null` is now accepted: old consumers reject it.",
            ChangeRule::NullableRemoved => "`null` is no longer accepted: old producers and stored history use it.",
            ChangeRule::RemovalDeclared => {
                "NEW declares a removal OLD never had: only the error message for it changes."
            }
            ChangeRule::RemovalDropped => "An x-removed entry is gone: the value is rejected with a plainer message.",
            ChangeRule::SequenceRuleAdded => {
                "A new sequence rule: streams old producers send and stored sessions may break it."
            }
            ChangeRule::SequenceRuleRemoved => {
                "A sequence rule is gone: old stream checkers reject what new producers may now send."
            }
            ChangeRule::SequenceRuleChanged => {
                "A sequence rule checks something else: breaks both ways (only its text or pointer changed: nobody)."
            }
            ChangeRule::RollupChanged => {
                "The stream rollup lost or changed a part or open list: readers of the old rollup miss it (an added one breaks nobody)."
            }
        }
    }
}

catalogue! {
    /// Who a change can break.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Party {
        /// Every party, in catalogue order.
        const ALL;
        /// The stable id.
        fn id;
        /// The party with this id.
        fn from_id;
        /// Code built against OLD that still sends messages: broken when NEW rejects a message OLD accepted.
        OldProducers = "old-producers",
        /// Code built against OLD that receives what NEW producers send: broken when OLD rejects (or misreads) a
        /// message NEW accepts.
        OldConsumers = "old-consumers",
        /// Messages stored under OLD, read by NEW code after the declared upgrades (renames): broken when such a
        /// message has no NEW equivalent.
        StoredHistory = "stored-history",
    }
}

/// Who one change breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Breaks {
    /// A message OLD accepted (from an old producer) is rejected by NEW.
    pub old_producers: bool,
    /// A message NEW accepts is rejected or misread by an old consumer.
    pub old_consumers: bool,
    /// A stored OLD message cannot be read by NEW, even after the declared renames are applied.
    pub stored_history: bool,
}

impl Breaks {
    /// Breaks nobody.
    pub const NONE: Breaks = Breaks { old_producers: false, old_consumers: false, stored_history: false };
    /// NEW accepts more than OLD: old consumers.
    pub const WIDER: Breaks = Breaks { old_producers: false, old_consumers: true, stored_history: false };
    /// NEW accepts less than OLD: old producers and stored history.
    pub const NARROWER: Breaks = Breaks { old_producers: true, old_consumers: false, stored_history: true };
    /// Both ways.
    pub const BOTH: Breaks = Breaks { old_producers: true, old_consumers: true, stored_history: true };

    /// The parties broken, in catalogue order.
    pub fn parties(self) -> Vec<Party> {
        let mut out = Vec::new();
        if self.old_producers {
            out.push(Party::OldProducers);
        }
        if self.old_consumers {
            out.push(Party::OldConsumers);
        }
        if self.stored_history {
            out.push(Party::StoredHistory);
        }
        out
    }
}

catalogue! {
    /// A compatibility policy, with the schema-registry meanings (Confluent's BACKWARD, FORWARD, FULL, NONE).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Policy {
        /// Every policy, in catalogue order.
        const ALL;
        /// The stable id (the `--policy` value).
        fn id;
        /// The policy with this id.
        fn from_id;
        /// NEW must read everything OLD wrote: no change may break old producers or stored history.
        Backward = "backward",
        /// OLD must read everything NEW writes: no change may break old consumers.
        Forward = "forward",
        /// Both.
        Full = "full",
        /// Report only; nothing fails.
        None = "none",
    }
}

impl Policy {
    /// Whether a change with these breaks violates the policy.
    pub fn violated_by(self, b: Breaks) -> bool {
        match self {
            Policy::Backward => b.old_producers || b.stored_history,
            Policy::Forward => b.old_consumers,
            Policy::Full => b.old_producers || b.old_consumers || b.stored_history,
            Policy::None => false,
        }
    }
}

/// What part of the protocol or package a change is in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The protocol's envelope.
    Envelope,
    /// One event of the protocol, by its discriminator value (NEW's, or OLD's when it was removed).
    Event(String),
    /// A named type of a plain type package, or of a protocol package outside its messages (NEW's name, or OLD's
    /// when it was removed).
    Type(String),
}

/// A place in a schema file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The file, as the side was named (`schema/events/text.schema.json`, `main:schema/defs.schema.json`).
    pub file: String,
    /// 1-based line of the pointer's value (0 when unknown).
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// JSON Pointer into the file.
    pub pointer: String,
}

/// One change between OLD and NEW.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// What kind of change.
    pub rule: ChangeRule,
    /// The envelope, event or type it is in.
    pub scope: Scope,
    /// The path inside the scope: property names, `[]` for array items, `*` for map values, `[t=x]` for a union
    /// member.
    pub path: Vec<String>,
    /// What changed, in one sentence (names in backticks).
    pub message: String,
    /// For a declared rename: the previous name (event tag, property or type name).
    pub was: Option<String>,
    /// Where it is in OLD, when OLD has it.
    pub old: Option<Location>,
    /// Where it is in NEW, when NEW has it.
    pub new: Option<Location>,
    /// Who it breaks.
    pub breaks: Breaks,
}

impl Change {
    /// The place in protocol terms: `text.steer`, `envelope.usage.inputTokens`, `turn-end`, `Usage.cost`.
    pub fn subject(&self) -> String {
        let mut s = match &self.scope {
            Scope::Envelope => "envelope".to_string(),
            Scope::Event(t) | Scope::Type(t) => t.clone(),
        };
        for p in &self.path {
            if !p.starts_with('[') {
                s.push('.');
            }
            s.push_str(p);
        }
        s
    }

    /// Whether the change is to the set of direct properties of its event or envelope (added, removed or
    /// renamed): what the seed's "New?" column counts.
    pub fn is_surface(&self) -> bool {
        self.path.len() == 1
            && matches!(
                self.rule,
                ChangeRule::FieldAddedOptional
                    | ChangeRule::FieldAddedRequired
                    | ChangeRule::FieldRemoved
                    | ChangeRule::FieldRenamed
                    | ChangeRule::FieldMoved
            )
    }
}

/// How an event (or the envelope) fares between OLD and NEW, in the terms of a protocol document's summary table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Status {
    /// Only in NEW.
    New,
    /// In both, with the same properties (constraints may differ: see [`Row::also`]).
    Existing,
    /// In both, with properties added, removed or renamed.
    Modified,
    /// Declared renamed (`x-renamed-from`); its properties may have changed too.
    Renamed,
    /// Only in OLD.
    Removed,
}

impl Status {
    /// The word a protocol document uses.
    pub fn word(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Existing => "existing",
            Status::Modified => "modified",
            Status::Renamed => "renamed",
            Status::Removed => "removed",
        }
    }
}

/// One row of the summary: the envelope or one event.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The event's discriminator value (NEW's, or OLD's when removed); `None` for the envelope.
    pub tag: Option<String>,
    /// OLD's discriminator value of a renamed event.
    pub was: Option<String>,
    /// NEW's category of the event.
    pub category: Option<String>,
    /// NEW's roles for the event (OLD's when removed).
    pub roles: Vec<String>,
    /// The status.
    pub status: Status,
    /// The property changes behind the status (`added `steer``), in the form of an `x-status-note`.
    pub note: Option<String>,
    /// Indices into [`Report::changes`] of this row's other changes: what a summary of added properties misses.
    pub also: Vec<usize>,
}

/// One `x-removed` entry of NEW, checked against OLD.
#[derive(Debug, Clone, PartialEq)]
pub struct Removal {
    /// What was removed (markdown, from the entry).
    pub what: String,
    /// Why (markdown).
    pub why: String,
    /// Where the entry is in NEW.
    pub at: Option<Location>,
    /// What it removes, each with what OLD has of it.
    pub items: Vec<RemovalItem>,
}

/// One removed event or property of a [`Removal`].
#[derive(Debug, Clone, PartialEq)]
pub struct RemovalItem {
    /// What is removed: `event `start``, `` `machineId` on `session-control-changed` ``.
    pub thing: String,
    /// Its replacement, as the entry names it.
    pub replacement: String,
    /// Whether the entry is a declared rename (`x-renamed-from`), rather than a removal with a replacement.
    pub renamed: bool,
    /// Where OLD has it; `None` when OLD does not have it.
    pub in_old: Option<Location>,
    /// Whether OLD's `x-removed` declares it removed already.
    pub removed_in_old: bool,
}

/// Everything that changed from OLD to NEW.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// How OLD was named.
    pub old: String,
    /// How NEW was named.
    pub new: String,
    /// Every change, in schema order (the envelope, then events in NEW's order, then removed ones).
    pub changes: Vec<Change>,
    /// For a session protocol: the envelope, then each event of NEW, then each event only OLD has.
    pub rows: Vec<Row>,
    /// For a session protocol: NEW's `x-removed` entries, checked against OLD.
    pub removals: Vec<Removal>,
}

impl Report {
    /// Whether any change violates the policy (the CLI then exits 1).
    pub fn violates(&self, policy: Policy) -> bool {
        self.changes.iter().any(|c| policy.violated_by(c.breaks))
    }

    /// How many changes violate the policy.
    pub fn violations(&self, policy: Policy) -> usize {
        self.changes.iter().filter(|c| policy.violated_by(c.breaks)).count()
    }
}

/// Compares two loaded schemas.
pub fn diff(old: &Side, new: &Side) -> Report {
    compare::run(old, new)
}
