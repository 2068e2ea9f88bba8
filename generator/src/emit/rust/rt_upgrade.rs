//! Upgrading a message of the previous protocol version to this one: the declared event renames
//! (`x-renamed-from` on an event), value moves (`x-moved-from`) and property renames (`x-renamed-from` on a
//! property), applied in that order to a JSON value. `wiregen migrate` and the generated crates' `upgrade`
//! module run this same code; what is renamed and moved is data (a [`Plan`]).
//!
//! Nothing is invented: a required value whose old place is empty is reported as a [`Loss`] (rule id and JSON
//! Pointer) and left out, so the message then fails validation there instead of carrying a made-up value.
#![allow(dead_code)]

use serde_json::{Map, Value};

/// What an upgrade does.
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    /// The envelope property holding the event (`ev`).
    pub union_field: &'a str,
    /// The event property holding its type (`t`).
    pub discriminator: &'a str,
    /// Events renamed: `(previous discriminator value, current one)`.
    pub events: &'a [(&'a str, &'a str)],
    /// Values moved into an event property.
    pub moves: &'a [Move<'a>],
    /// Properties renamed, parents before children.
    pub renames: &'a [Rename<'a>],
}

/// A value that moved from somewhere in the previous version's message into a property of an event.
#[derive(Debug, Clone, Copy)]
pub struct Move<'a> {
    /// The event (current discriminator value).
    pub event: &'a str,
    /// JSON Pointer into the previous version's message, from the envelope's root (`/subagent`).
    pub from: &'a str,
    /// The event's property that receives it.
    pub to: &'a str,
    /// Whether the property is required: an empty old place is then a [`Loss`].
    pub required: bool,
}

/// A property renamed.
#[derive(Debug, Clone, Copy)]
pub struct Rename<'a> {
    /// `None` for a property under the envelope, else the event (current discriminator value) it is under.
    pub event: Option<&'a str>,
    /// The path of the object holding the property, from the envelope (or the event): property names (current
    /// ones), `[]` for every array item, `*` for every map value, `[k=v]` for a union member whose `k` is `v`.
    pub at: &'a [&'a str],
    /// The previous name.
    pub from: &'a str,
    /// The current name.
    pub to: &'a str,
}

/// A value the upgrade could not carry over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loss {
    /// The diff rule behind it (`field-moved`, `field-renamed`).
    pub rule: &'static str,
    /// Where the value is missing in the upgraded message.
    pub pointer: String,
    /// What happened.
    pub message: String,
}

/// Upgrades `v` in place; the values that could not be carried over.
pub fn apply(plan: &Plan<'_>, v: &mut Value) -> Vec<Loss> {
    let mut losses = Vec::new();
    let Some(env) = v.as_object_mut() else { return losses };
    let tag = match env.get_mut(plan.union_field).and_then(|ev| ev.get_mut(plan.discriminator)) {
        Some(Value::String(t)) => {
            if let Some((_, to)) = plan.events.iter().find(|(from, _)| from == t) {
                *t = (*to).to_string();
            }
            Some(t.clone())
        }
        _ => None,
    };
    let Some(tag) = tag else {
        // No event to upgrade: only the envelope's own renames apply.
        rename_all(plan, v, None, &mut losses);
        return losses;
    };
    for m in plan.moves.iter().filter(|m| m.event == tag) {
        let target = format!("/{}/{}", escape(plan.union_field), escape(m.to));
        if env.get(plan.union_field).is_some_and(|ev| ev.get(m.to).is_some()) {
            // Both places hold a value: which one the message means is not the upgrade's to decide.
            if has(env, m.from) {
                losses.push(Loss {
                    rule: "field-moved",
                    pointer: target,
                    message: format!(
                        "the message has both `{}` and `{}`; the value is not moved over the one already there",
                        m.from, m.to
                    ),
                });
            }
            continue;
        }
        match take(env, m.from) {
            Some(x) => {
                if let Some(Value::Object(ev)) = env.get_mut(plan.union_field) {
                    ev.insert(m.to.to_string(), x);
                }
            }
            None if m.required => losses.push(Loss {
                rule: "field-moved",
                pointer: target,
                message: format!("the message has no `{}` to move into `{}`; no value is invented", m.from, m.to),
            }),
            None => {}
        }
    }
    rename_all(plan, v, Some(&tag), &mut losses);
    losses
}

fn rename_all(plan: &Plan<'_>, v: &mut Value, tag: Option<&str>, losses: &mut Vec<Loss>) {
    for r in plan.renames {
        match r.event {
            None => rename_at(v, r.at, r.from, r.to, &mut String::new(), losses),
            Some(e) if Some(e) == tag => {
                if let Some(ev) = v.get_mut(plan.union_field) {
                    let mut at = format!("/{}", escape(plan.union_field));
                    rename_at(ev, r.at, r.from, r.to, &mut at, losses);
                }
            }
            Some(_) => {}
        }
    }
}

/// Renames `from` to `to` in the objects at path `at` below `v` (whose JSON Pointer is `ptr`).
fn rename_at(v: &mut Value, at: &[&str], from: &str, to: &str, ptr: &mut String, losses: &mut Vec<Loss>) {
    let len = ptr.len();
    match at.split_first() {
        None => {
            if let Value::Object(o) = v {
                match (o.contains_key(from), o.contains_key(to)) {
                    (true, false) => rename_key(o, from, to),
                    // Both names hold a value: which one the message means is not the upgrade's to decide.
                    (true, true) => losses.push(Loss {
                        rule: "field-renamed",
                        pointer: format!("{ptr}/{}", escape(to)),
                        message: format!("the object has both `{from}` and `{to}`; `{from}` is not renamed over it"),
                    }),
                    _ => {}
                }
            }
        }
        Some((&"[]", rest)) => {
            if let Value::Array(items) = v {
                for (i, x) in items.iter_mut().enumerate() {
                    ptr.push_str(&format!("/{i}"));
                    rename_at(x, rest, from, to, ptr, losses);
                    ptr.truncate(len);
                }
            }
        }
        Some((&"*", rest)) => {
            if let Value::Object(o) = v {
                for (k, x) in o.iter_mut() {
                    ptr.push_str(&format!("/{}", escape(k)));
                    rename_at(x, rest, from, to, ptr, losses);
                    ptr.truncate(len);
                }
            }
        }
        Some((seg, rest)) => {
            if let Some((k, want)) =
                seg.strip_prefix('[').and_then(|s| s.strip_suffix(']')).and_then(|s| s.split_once('='))
            {
                if v.get(k).and_then(Value::as_str) == Some(want) {
                    rename_at(v, rest, from, to, ptr, losses);
                }
            } else if let Some(x) = v.get_mut(*seg) {
                ptr.push_str(&format!("/{}", escape(seg)));
                rename_at(x, rest, from, to, ptr, losses);
                ptr.truncate(len);
            }
        }
    }
}

/// Renames a key where it stands.
fn rename_key(o: &mut Map<String, Value>, from: &str, to: &str) {
    let entries = std::mem::take(o);
    for (k, x) in entries {
        o.insert(if k == from { to.to_string() } else { k }, x);
    }
}

/// The reference tokens of a JSON Pointer, unescaped.
fn tokens(pointer: &str) -> Vec<String> {
    pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect()
}

/// Whether there is a value at `pointer` (through objects only).
fn has(o: &Map<String, Value>, pointer: &str) -> bool {
    let tokens = tokens(pointer);
    let Some((last, head)) = tokens.split_last() else { return false };
    let mut o = o;
    for t in head {
        let Some(next) = o.get(t).and_then(Value::as_object) else { return false };
        o = next;
    }
    o.contains_key(last)
}

/// Removes and returns the value at `pointer` (through objects only).
fn take(o: &mut Map<String, Value>, pointer: &str) -> Option<Value> {
    let tokens = tokens(pointer);
    let (last, head) = tokens.split_last()?;
    let mut o = o;
    for t in head {
        o = o.get_mut(t)?.as_object_mut()?;
    }
    let entries = std::mem::take(o);
    let mut found = None;
    for (k, x) in entries {
        if &k == last {
            found = Some(x);
        } else {
            o.insert(k, x);
        }
    }
    found
}

fn escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}
