//! The sequence layer of a protocol (`x-sequence` on the envelope): scopes that messages open and close, the
//! ordered rules over them, and the session rollup. Lowered once by the loader
//! (`generator/src/load/sequence.rs`); the Rust stream checker ([`crate::stream`]), the TypeScript checker and the
//! reference all read this model, never the raw annotation.

use serde::Serialize;
use serde_json::Value;

/// Where a value of a message is: an envelope property or a property of the event body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "in", content = "property", rename_all = "kebab-case")]
pub enum FieldRef {
    /// An envelope property.
    Envelope(String),
    /// A property of the event body (under the envelope's union property).
    Event(String),
}

impl FieldRef {
    /// The property name (the pointer's last token).
    pub fn name(&self) -> &str {
        match self {
            FieldRef::Envelope(n) | FieldRef::Event(n) => n,
        }
    }
}

/// The sequence declarations of a protocol.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Sequence {
    /// The scopes, in declaration order (the rollup's `open` lists them in this order).
    pub scopes: Vec<Scope>,
    /// The rules, in check order: a message is reported with the first rule it breaks.
    pub rules: Vec<SeqRule>,
    /// The rollup's parts between `messages` and `open`, in declaration order.
    pub rollup: Vec<RollupPart>,
}

/// Something a message opens and another closes, keyed by a value of the messages.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// The scope's name (rules refer to it).
    #[serde(rename = "scope")]
    pub name: String,
    /// What it is (markdown, for the reference).
    pub description: String,
    /// Where the opening and closing messages carry the key.
    pub key: FieldRef,
    /// The event that opens one.
    pub opened_by: Option<String>,
    /// The event that closes one.
    pub closed_by: Option<String>,
    /// At most one is open at a time (a turn): rules and records may speak of "the open one".
    pub single: bool,
    /// Index of the scope this one lives in by the same key (a permission in its call): it opens only while that
    /// key is open there, closes with it, and is listed in its order.
    pub within: Option<usize>,
    /// Marks an open one can get (`aborted`), and the message that sets each.
    pub marks: Vec<Mark>,
    /// What an open one records when it opens, in order.
    pub record: Vec<Attr>,
    /// The key of the rollup's `open` object listing the open ones, if any.
    pub rollup: Option<String>,
    /// Whether the keys of closed ones are remembered (a rule forbids reopening them).
    pub remember_closed: bool,
    /// The scopes that live within this one, directly or through another, in order: they close with it (a scope
    /// within one within a third stayed open when the third closed; helper 91). Every checker reads it from here.
    pub inner: Vec<usize>,
}

/// A mark an open scope can get.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mark {
    /// Its name (a boolean in the rollup).
    #[serde(rename = "mark")]
    pub name: String,
    /// The event that sets it on the open one.
    pub by: String,
    /// Only when sent by this role.
    #[serde(rename = "sender")]
    pub role: Option<String>,
}

/// One value an open scope records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attr {
    /// The name in the rollup.
    #[serde(rename = "attr")]
    pub name: String,
    /// Where the value comes from.
    pub from: AttrSource,
}

/// Where a recorded value comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "source", content = "of", rename_all = "kebab-case")]
pub enum AttrSource {
    /// A value of the opening message (`null` when absent).
    Field(FieldRef),
    /// The key of the open one of a single scope (by index), `null` when none is open.
    OpenKey(usize),
}

/// One sequence rule: its id, text, and what it checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeqRule {
    /// The stable rule id every checker prints.
    #[serde(rename = "rule")]
    pub id: &'static str,
    /// What it checks.
    #[serde(flatten)]
    pub kind: RuleKind,
    /// Only messages from this role.
    #[serde(rename = "sender")]
    pub role: Option<String>,
    /// Only these events (all when empty).
    pub on: Vec<String>,
    /// Only messages holding these values.
    pub when: Vec<(FieldRef, Value)>,
    /// The JSON Pointer every checker reports the violation at.
    pub pointer: String,
    /// The message template (`{name}` placeholders).
    #[serde(rename = "template")]
    pub message: String,
    /// One sentence on what the rule forbids.
    pub summary: String,
    /// The sentence of the protocol document the rule comes from.
    pub seed: String,
    /// Where the rule is declared.
    #[serde(skip)]
    pub origin: crate::ir::Origin,
}

/// The kinds of sequence rule (scopes by index into [`Sequence::scopes`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "check", rename_all = "kebab-case")]
pub enum RuleKind {
    /// A value may appear only once (on accepted messages).
    Unique {
        /// The value.
        key: FieldRef,
    },
    /// The opening event must carry the key.
    OpenWithoutKey {
        /// The scope.
        scope: usize,
    },
    /// The opening event may not come while one is open (single scope: any; else that key).
    OpenWhileOpen {
        /// The scope.
        scope: usize,
    },
    /// The opening event may not reuse the key of a closed one.
    OpenReused {
        /// The scope.
        scope: usize,
    },
    /// While one is open (single scope), a message other than the opening event must carry its key.
    KeyMissing {
        /// The scope.
        scope: usize,
    },
    /// While one is open (single scope), a message may not carry another key.
    KeyMismatch {
        /// The scope.
        scope: usize,
    },
    /// The closing event needs an open one (single scope: any; else that key).
    CloseNotOpen {
        /// The scope.
        scope: usize,
    },
    /// A value, when present, must name an open one.
    NamesOpen {
        /// The scope.
        scope: usize,
        /// The value.
        at: FieldRef,
    },
    /// The message needs one open (single scope).
    NeedsOpen {
        /// The scope.
        scope: usize,
    },
    /// The closing event may not come while something opened in the closing one is open.
    CloseBlocked {
        /// The scope.
        scope: usize,
        /// The scope whose open ones block (within `scope` by key, or recording `scope`'s open key).
        by: usize,
        /// Unless the open one of this single scope has this mark (scope index, mark index).
        unless: Option<(usize, usize)>,
    },
    /// The closing event of a marked one must hold a value.
    CloseRequires {
        /// The scope.
        scope: usize,
        /// The mark (index into the scope's marks).
        mark: usize,
        /// The value the closing event must hold.
        field: FieldRef,
        /// What it must be.
        equals: Value,
    },
}

impl RuleKind {
    /// The kind's name as written in `x-sequence`.
    pub fn name(&self) -> &'static str {
        match self {
            RuleKind::Unique { .. } => "unique",
            RuleKind::OpenWithoutKey { .. } => "open-without-key",
            RuleKind::OpenWhileOpen { .. } => "open-while-open",
            RuleKind::OpenReused { .. } => "open-reused",
            RuleKind::KeyMissing { .. } => "key-missing",
            RuleKind::KeyMismatch { .. } => "key-mismatch",
            RuleKind::CloseNotOpen { .. } => "close-not-open",
            RuleKind::NamesOpen { .. } => "names-open",
            RuleKind::NeedsOpen { .. } => "needs-open",
            RuleKind::CloseBlocked { .. } => "close-blocked",
            RuleKind::CloseRequires { .. } => "close-requires",
        }
    }

    /// Every kind name, in the order the README documents them.
    pub const NAMES: &'static [&'static str] = &[
        "unique",
        "open-without-key",
        "open-while-open",
        "open-reused",
        "key-missing",
        "key-mismatch",
        "close-not-open",
        "names-open",
        "needs-open",
        "close-blocked",
        "close-requires",
    ];

    /// The one event that can break a rule of this kind, with the scope member that names it: the scope's
    /// `opened-by` for the `open-*` kinds, its `closed-by` for the `close-*` ones; `None` for the other kinds.
    pub fn own_event<'s>(&self, scopes: &'s [Scope]) -> Option<(&'s str, &'static str)> {
        let sc = scopes.get(self.scope()?)?;
        match self {
            RuleKind::OpenWithoutKey { .. } | RuleKind::OpenWhileOpen { .. } | RuleKind::OpenReused { .. } => {
                sc.opened_by.as_deref().map(|e| (e, "opened-by"))
            }
            RuleKind::CloseNotOpen { .. } | RuleKind::CloseBlocked { .. } | RuleKind::CloseRequires { .. } => {
                sc.closed_by.as_deref().map(|e| (e, "closed-by"))
            }
            _ => None,
        }
    }

    /// Whether a rule of this kind never reads its scope's opening event (every checker skips it): `key-missing`,
    /// `key-mismatch`, `needs-open`, and `names-open` at the scope's own key (the opening event names what it
    /// opens, not something open).
    pub fn skips_opener(&self, scopes: &[Scope]) -> bool {
        match self {
            RuleKind::KeyMissing { .. } | RuleKind::KeyMismatch { .. } | RuleKind::NeedsOpen { .. } => true,
            RuleKind::NamesOpen { scope, at } => scopes.get(*scope).is_some_and(|s| s.key == *at),
            _ => false,
        }
    }

    /// The scope the rule is about, if any.
    pub fn scope(&self) -> Option<usize> {
        match *self {
            RuleKind::Unique { .. } => None,
            RuleKind::OpenWithoutKey { scope }
            | RuleKind::OpenWhileOpen { scope }
            | RuleKind::OpenReused { scope }
            | RuleKind::KeyMissing { scope }
            | RuleKind::KeyMismatch { scope }
            | RuleKind::CloseNotOpen { scope }
            | RuleKind::NamesOpen { scope, .. }
            | RuleKind::NeedsOpen { scope }
            | RuleKind::CloseBlocked { scope, .. }
            | RuleKind::CloseRequires { scope, .. } => Some(scope),
        }
    }
}

/// One part of the rollup.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RollupPart {
    /// Its key in the rollup.
    #[serde(rename = "part")]
    pub name: String,
    /// The event it folds.
    pub event: String,
    /// What it holds (markdown; the declaration's `description`, else empty).
    pub description: String,
    /// How.
    #[serde(flatten)]
    pub kind: RollupKind,
}

/// How a rollup part folds its event (the field lists come from the schema, in schema order).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "fold", rename_all = "kebab-case")]
pub enum RollupKind {
    /// The last such event, every field (`null` where absent); `null` before any.
    Last {
        /// The event's fields.
        fields: Vec<String>,
    },
    /// Every field as last set, `null` where never set.
    Latest {
        /// The event's fields.
        fields: Vec<String>,
    },
    /// How many such events had each value of an enum field.
    Count {
        /// The field.
        field: FieldRef,
        /// Its values, in enum order.
        values: Vec<String>,
    },
    /// Sums of the numeric fields of an object field.
    Sum {
        /// The object field.
        field: FieldRef,
        /// Its numeric fields.
        fields: Vec<String>,
    },
}

impl Sequence {
    /// What a rule checks, independent of its text (message, summary, seed) and of the names and text of the scope
    /// declarations: its kind with what it reads of its scopes spelled out, and its filters. A scope is what it
    /// does (its key, its events, whether it is single, the scope it lives in), not its name; a mark is its event
    /// and sender; what a scope records counts only where a rule reads it (the link of a `close-blocked` rule's
    /// `by` scope). Two rules with equal meanings reject the same messages in the same state, and a renamed scope,
    /// a changed rollup name or a changed recorded value changes no rule.
    pub fn meaning(&self, r: &SeqRule) -> Value {
        let plain = |i: usize| -> Value {
            let Some(s) = self.scopes.get(i) else { return Value::Null };
            serde_json::json!({
                "key": s.key,
                "opened-by": s.opened_by,
                "closed-by": s.closed_by,
                "single": s.single,
            })
        };
        let scope = |i: usize| -> Value {
            let mut v = plain(i);
            if let (Value::Object(o), Some(s)) = (&mut v, self.scopes.get(i)) {
                o.insert("within".into(), s.within.map_or(Value::Null, plain));
            }
            v
        };
        let mark = |s: usize, m: usize| -> Value {
            self.scopes
                .get(s)
                .and_then(|x| x.marks.get(m))
                .map_or(Value::Null, |m| serde_json::json!({"by": m.by, "sender": m.role}))
        };
        let kind = match &r.kind {
            RuleKind::Unique { key } => serde_json::json!({"check": "unique", "key": key}),
            RuleKind::NamesOpen { scope: s, at } => {
                serde_json::json!({"check": "names-open", "scope": scope(*s), "at": at})
            }
            RuleKind::CloseBlocked { scope: s, by, unless } => {
                let linked = self.scopes.get(*by).map(|b| if b.within == Some(*s) { "within" } else { "record" });
                serde_json::json!({
                    "check": "close-blocked",
                    "scope": scope(*s),
                    "by": scope(*by),
                    "linked": linked,
                    "unless": unless.map(|(us, um)| serde_json::json!({"scope": scope(us), "mark": mark(us, um)})),
                })
            }
            RuleKind::CloseRequires { scope: s, mark: m, field, equals } => serde_json::json!({
                "check": "close-requires", "scope": scope(*s), "mark": mark(*s, *m), "field": field, "equals": equals,
            }),
            other => serde_json::json!({"check": other.name(), "scope": other.scope().map_or(Value::Null, scope)}),
        };
        serde_json::json!({"kind": kind, "role": r.role, "on": r.on, "when": r.when})
    }
}
