//! Soundness of `wiregen diff`, shared by its test (`diff.rs`: the suite's cases and the session protocol) and the
//! suite harness (`tests/jsts`: its random schemas): edits of meaning to a schema, small changes to instances, and
//! the check that every instance one side accepts and the other refuses is answered by a change that breaks the
//! parties it should (old producers when only OLD accepts it; stored history when OLD accepts it and NEW refuses
//! it after the upgrade `wiregen migrate` takes; old consumers when only NEW accepts it).

use std::path::Path;

use serde_json::Value;

use crate::rng;

/// The bounds a schema mutation nudges, adds or drops.
const BOUNDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
];

/// Every object in `v` (schemas, and the maps of schemas they hold), by JSON Pointer.
fn objects(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            out.push(at.clone());
            for (k, c) in o {
                objects(c, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                objects(c, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// One change of meaning to a schema, of the kinds `wiregen diff` has rules for: a bound nudged, added or
/// dropped; `required`, `enum`, `const`, `type`, `additionalProperties`, `pattern`, `uniqueItems`, `items`, an
/// applicator or `x-unknown-keys` changed; any keyword deleted; in a protocol, a sequence rule or `x-roles`.
///
/// With `schemas_only`, the edit is to an object below the root that holds a schema keyword, outside `examples` and
/// `x-` annotations (a protocol's files hold much that is not a schema), and not to an event's tag `t`.
fn change_schema(rng: &mut rng::Rng, doc: &mut Value, schemas_only: bool) {
    if schemas_only && doc.get("x-sequence").is_some() && rng.below(3) == 0 {
        return change_sequence(rng, doc);
    }
    if schemas_only && doc.get("x-roles").is_some() && rng.below(3) == 0 {
        return change_roles(rng, doc);
    }
    let mut all = Vec::new();
    objects(doc, String::new(), &mut all);
    if schemas_only {
        let schema = |p: &String| {
            !p.is_empty()
                && !p.ends_with("/properties/t")
                && !p.contains("/examples")
                && !p.contains("/x-")
                && doc.pointer(p).and_then(Value::as_object).is_some_and(|o| {
                    ["type", "$ref", "enum", "const", "anyOf", "oneOf", "allOf"].iter().any(|k| o.contains_key(*k))
                })
        };
        all.retain(schema);
        if all.is_empty() {
            return;
        }
    }
    let at = rng.pick(&all).clone();
    let Some(o) = doc.pointer_mut(&at).and_then(Value::as_object_mut) else { return };
    let small = |rng: &mut rng::Rng| serde_json::json!(rng.below(4));
    let (key, values): (&str, Vec<Value>) = match rng.below(24) {
        11 => ("not", vec![serde_json::json!({"type": "string"}), serde_json::json!({"required": ["foo"]})]),
        12 => ("propertyNames", vec![serde_json::json!({"maxLength": 2}), serde_json::json!({"pattern": "^f"})]),
        13 => {
            ("patternProperties", vec![serde_json::json!({"^f": {"type": "integer"}}), serde_json::json!({"a": false})])
        }
        14 => ("dependentRequired", vec![serde_json::json!({"foo": ["bar"]}), serde_json::json!({"bar": ["foo"]})]),
        15 => ("contains", vec![serde_json::json!({"type": "integer"}), serde_json::json!({"const": 1})]),
        16 => ("if", vec![serde_json::json!({"required": ["foo"]}), serde_json::json!({"type": "string"})]),
        17 => ("then", vec![serde_json::json!({"minProperties": 2}), serde_json::json!({"maxLength": 1})]),
        18 => ("else", vec![serde_json::json!(false), serde_json::json!({"type": "array"})]),
        19 => ("unevaluatedProperties", vec![serde_json::json!(false), serde_json::json!({"type": "string"})]),
        20 => ("unevaluatedItems", vec![serde_json::json!(false), serde_json::json!({"type": "integer"})]),
        21 if rng.below(2) == 0 => ("x-unknown-keys", vec![serde_json::json!("strip")]),
        21 => ("dependentSchemas", vec![serde_json::json!({"foo": {"required": ["bar"]}})]),
        22 => {
            // A member of `allOf`, `anyOf`, `oneOf` or `prefixItems` dropped or added, or a property added.
            let lists: Vec<String> = ["allOf", "anyOf", "oneOf", "prefixItems"]
                .iter()
                .filter(|k| o.get(**k).and_then(Value::as_array).is_some())
                .map(|k| k.to_string())
                .collect();
            match lists.first() {
                Some(k) => {
                    let l = o.get_mut(k).and_then(Value::as_array_mut).expect("a list");
                    if l.len() > 1 && rng.below(2) == 0 {
                        l.remove(rng.below(l.len() as u64) as usize);
                    } else {
                        l.push(serde_json::json!({"type": "integer"}));
                    }
                }
                None => {
                    let p = o.entry("properties").or_insert_with(|| serde_json::json!({}));
                    if let Some(p) = p.as_object_mut() {
                        p.insert("foo".into(), serde_json::json!({"type": "integer"}));
                    }
                }
            }
            return;
        }
        23 => {
            // The whole schema replaced by a boolean one, or wrapped in an `anyOf` with `null`.
            let whole = Value::Object(o.clone());
            let new = match rng.below(3) {
                0 => Value::Bool(true),
                1 => Value::Bool(false),
                _ => serde_json::json!({"anyOf": [whole, {"type": "null"}]}),
            };
            if at.is_empty() {
                // (The root keeps its `x-root` mark.)
                return;
            }
            if let Some(t) = doc.pointer_mut(&at) {
                *t = new;
            }
            return;
        }
        k => ("", vec![serde_json::json!(k)]),
    };
    if !key.is_empty() {
        if o.contains_key(key) && rng.below(3) == 0 {
            o.shift_remove(key);
        } else {
            o.insert(key.into(), rng.pick(&values).clone());
        }
        return;
    }
    match values[0].as_u64().unwrap_or(0) {
        0 => {
            let present: Vec<String> = o.keys().filter(|k| BOUNDS.contains(&k.as_str())).cloned().collect();
            if present.is_empty() {
                return;
            }
            let k = rng.pick(&present).clone();
            let n = o[&k].as_f64().unwrap_or(0.0);
            match rng.below(3) {
                0 => o[&k] = serde_json::json!(n + 1.0),
                1 if k == "multipleOf" => o[&k] = serde_json::json!(n * 2.0),
                1 if n >= 1.0 => o[&k] = serde_json::json!(n - 1.0),
                _ => drop(o.shift_remove(&k)),
            }
        }
        1 => {
            let k = rng.pick(BOUNDS).to_string();
            let v = if k == "multipleOf" { serde_json::json!(2) } else { small(rng) };
            o.insert(k, v);
        }
        2 => {
            let names: Vec<String> =
                o.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect()).unwrap_or_default();
            let mut req: Vec<Value> = o.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
            if !req.is_empty() && rng.below(2) == 0 {
                req.remove(rng.below(req.len() as u64) as usize);
            } else {
                let name =
                    if names.is_empty() || rng.below(3) == 0 { "foo".to_string() } else { rng.pick(&names).clone() };
                if !req.contains(&Value::from(name.as_str())) {
                    req.push(Value::from(name));
                }
            }
            o.insert("required".into(), Value::Array(req));
        }
        3 => {
            let values =
                [serde_json::json!(1), serde_json::json!("a"), serde_json::json!(null), serde_json::json!(2.5)];
            match o.get_mut("enum").and_then(Value::as_array_mut) {
                Some(e) if e.len() > 1 && rng.below(2) == 0 => drop(e.remove(rng.below(e.len() as u64) as usize)),
                Some(e) => {
                    let v = rng.pick(&values).clone();
                    if !e.contains(&v) {
                        e.push(v);
                    }
                }
                None => {
                    o.insert("enum".into(), serde_json::json!([1, "a"]));
                }
            }
        }
        4 => {
            let values = [serde_json::json!(1), serde_json::json!("a"), serde_json::json!(null), serde_json::json!({})];
            o.insert("const".into(), rng.pick(&values).clone());
        }
        5 => {
            let types = ["string", "integer", "number", "object", "array", "boolean", "null"];
            let v = match rng.below(3) {
                0 => serde_json::json!(rng.pick(&types)),
                1 => serde_json::json!([rng.pick(&types), "null"]),
                _ => {
                    o.shift_remove("type");
                    return;
                }
            };
            o.insert("type".into(), v);
        }
        6 => {
            let v = [serde_json::json!(false), serde_json::json!(true), serde_json::json!({"type": "string"})];
            if rng.below(4) == 0 {
                o.shift_remove("additionalProperties");
            } else {
                o.insert("additionalProperties".into(), rng.pick(&v).clone());
            }
        }
        7 => {
            if let Some(k) = o.keys().nth(rng.below(o.len().max(1) as u64) as usize).cloned() {
                o.shift_remove(&k);
            }
        }
        8 => {
            if rng.below(3) == 0 {
                o.shift_remove("pattern");
            } else {
                o.insert("pattern".into(), serde_json::json!(rng.pick(&["^a", "b", "^[a-z]*$"])));
            }
        }
        9 => {
            let on = o.get("uniqueItems") == Some(&Value::Bool(true));
            o.insert("uniqueItems".into(), Value::Bool(!on));
        }
        _ => {
            let v = [serde_json::json!(false), serde_json::json!({"type": "integer"}), serde_json::json!(true)];
            if rng.below(4) == 0 {
                o.shift_remove("items");
            } else {
                o.insert("items".into(), rng.pick(&v).clone());
            }
        }
    }
}

/// One change to a protocol's sequence rules (`x-sequence`): a rule dropped; a rule's filter dropped (`role`, `on`,
/// `when`, `unless`) or its `role` swapped; a scope made single or not, or its `marks` or `within` dropped.
fn change_sequence(rng: &mut rng::Rng, doc: &mut Value) {
    let Some(seq) = doc.get_mut("x-sequence") else { return };
    if rng.below(3) != 0 {
        let Some(rules) = seq.get_mut("rules").and_then(Value::as_array_mut) else { return };
        if rules.is_empty() {
            return;
        }
        let i = rng.below(rules.len() as u64) as usize;
        let Some(r) = rules[i].as_object_mut() else { return };
        match rng.below(4) {
            0 => drop(rules.remove(i)),
            1 => {
                let role = match r.get("role").and_then(Value::as_str) {
                    Some("user") => "agent",
                    _ => "user",
                };
                r.insert("role".into(), Value::from(role));
            }
            _ => {
                let filters: Vec<String> =
                    r.keys().filter(|k| ["role", "on", "when", "unless"].contains(&k.as_str())).cloned().collect();
                if !filters.is_empty() {
                    let k = rng.pick(&filters).clone();
                    r.shift_remove(&k);
                }
            }
        }
    } else {
        let Some(scopes) = seq.get_mut("scopes").and_then(Value::as_object_mut) else { return };
        let names: Vec<String> = scopes.keys().cloned().collect();
        if names.is_empty() {
            return;
        }
        let name = rng.pick(&names).clone();
        let Some(sc) = scopes.get_mut(&name).and_then(Value::as_object_mut) else { return };
        match rng.below(3) {
            0 => {
                let single = sc.get("single") == Some(&Value::Bool(true));
                sc.insert("single".into(), Value::Bool(!single));
            }
            1 => drop(sc.shift_remove("marks")),
            _ => drop(sc.shift_remove("within")),
        }
    }
}

/// One change to who may send an event or one of its fields (`x-roles`): a role dropped from a list of several, or
/// one the file names elsewhere added.
fn change_roles(rng: &mut rng::Rng, doc: &mut Value) {
    let mut lists = Vec::new();
    let mut roles = Vec::new();
    objects(doc, String::new(), &mut lists);
    lists.retain(|p| doc.pointer(p).and_then(|o| o.get("x-roles")).and_then(Value::as_array).is_some());
    for p in &lists {
        for r in doc.pointer(p).and_then(|o| o.get("x-roles")).and_then(Value::as_array).into_iter().flatten() {
            if !roles.contains(r) {
                roles.push(r.clone());
            }
        }
    }
    if lists.is_empty() {
        return;
    }
    let at = rng.pick(&lists).clone();
    let Some(list) = doc.pointer_mut(&at).and_then(|o| o.get_mut("x-roles")).and_then(Value::as_array_mut) else {
        return;
    };
    if list.len() > 1 {
        list.remove(rng.below(list.len() as u64) as usize);
    } else if let Some(r) = roles.iter().find(|r| !list.contains(r)) {
        list.push(r.clone());
    }
}

/// A declared rename in a protocol whose events are files below `events/`: a property of an event (one no
/// sequence rule reads) gets a new name and `x-renamed-from` its old one, in its file's `properties`, `required`
/// and `examples`, and in the envelope's `x-flows`. The index of the event's file, or `None` where there is no such
/// property.
fn rename_property(rng: &mut rng::Rng, files: &mut [(String, Value)]) -> Option<usize> {
    let envelope = files.iter().position(|(_, v)| v.get("x-sequence").is_some())?;
    let sequence = files[envelope].1["x-sequence"].to_string();
    let events: Vec<usize> = (0..files.len()).filter(|i| files[*i].0.starts_with("events/")).collect();
    if events.is_empty() {
        return None;
    }
    let fi = *rng.pick(&events);
    let doc = &mut files[fi].1;
    let tag = doc.pointer("/properties/t/const")?.as_str()?.to_string();
    let names: Vec<String> = (doc.get("properties")?.as_object()?.keys())
        .filter(|k| *k != "t" && !sequence.contains(&format!("\"/ev/{k}\"")))
        .cloned()
        .collect();
    if names.is_empty() {
        return None;
    }
    let old = rng.pick(&names).clone();
    let new = format!("{old}Renamed");
    let rename = |o: &mut serde_json::Map<String, Value>| {
        if o.contains_key(&old) {
            let entries: Vec<(String, Value)> = std::mem::take(o).into_iter().collect();
            for (k, x) in entries {
                o.insert(if k == old { new.clone() } else { k }, x);
            }
        }
    };
    let props = doc.get_mut("properties")?.as_object_mut()?;
    rename(props);
    props.get_mut(&new)?.as_object_mut()?.insert("x-renamed-from".into(), Value::from(old.as_str()));
    for r in doc.get_mut("required").and_then(Value::as_array_mut).into_iter().flatten() {
        if r.as_str() == Some(old.as_str()) {
            *r = Value::from(new.as_str());
        }
    }
    for e in doc.get_mut("examples").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(o) = e.as_object_mut() {
            rename(o);
        }
    }
    let flows = files[envelope].1.get_mut("x-flows").and_then(Value::as_array_mut);
    for f in flows.into_iter().flatten() {
        for m in f.get_mut("messages").and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(ev) = m.pointer_mut("/message/ev").and_then(Value::as_object_mut) {
                if ev.get("t").and_then(Value::as_str) == Some(tag.as_str()) {
                    rename(ev);
                }
            }
        }
    }
    Some(fi)
}

/// A small change to an instance: a number nudged, a string or array grown or cut, a key added or removed, a
/// value replaced by `null`.
fn change_instance(rng: &mut rng::Rng, v: &Value) -> Value {
    let mut v = v.clone();
    let mut all = vec![String::new()];
    fn places(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                for (k, c) in o {
                    let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    out.push(p.clone());
                    places(c, p, out);
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    let p = format!("{at}/{i}");
                    out.push(p.clone());
                    places(c, p, out);
                }
            }
            _ => {}
        }
    }
    places(&v, String::new(), &mut all);
    let at = rng.pick(&all).clone();
    let Some(t) = v.pointer_mut(&at) else { return v };
    let op = rng.below(4);
    match t {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            *t = match op {
                0 => serde_json::json!(x + 1.0),
                1 => serde_json::json!(x - 1.0),
                2 => serde_json::json!(x + 0.5),
                _ => serde_json::json!(-x),
            };
        }
        Value::String(s) => match op {
            0 => s.push('a'),
            1 => drop(s.pop()),
            2 => s.insert(0, 'b'),
            _ => *t = Value::Null,
        },
        Value::Array(a) => match op {
            0 => a.push(a.first().cloned().unwrap_or(Value::Null)),
            1 => drop(a.pop()),
            2 => a.push(serde_json::json!(1)),
            _ => a.reverse(),
        },
        Value::Object(o) => match op {
            0 => drop(o.insert("foo".into(), serde_json::json!(1))),
            1 => {
                if let Some(k) = o.keys().next().cloned() {
                    o.shift_remove(&k);
                }
            }
            2 => drop(o.insert("bar".into(), serde_json::json!("x"))),
            _ => *t = serde_json::json!([]),
        },
        _ => {
            *t = match op {
                0 => serde_json::json!(0),
                1 => serde_json::json!(""),
                2 => serde_json::json!({}),
                _ => serde_json::json!(true),
            }
        }
    }
    v
}

/// Writes a schema package's files below `dir` (emptied first) and loads it as a diff side.
fn side_of(dir: &Path, files: &[(String, Value)]) -> Option<wiregen::diff::Side> {
    let _ = std::fs::remove_dir_all(dir);
    for (rel, v) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&p, serde_json::to_string_pretty(v).expect("json")).expect("write");
    }
    wiregen::diff::Side::load(&dir.to_string_lossy()).ok()
}

/// The engine of a side for a type (by name), else for its root type or the protocol's envelope.
fn engine_of(side: &wiregen::diff::Side, ty: Option<&str>) -> Option<wiregen::engine::Engine> {
    use wiregen::engine::{Engine, EngineOptions};
    match (ty, side.model.root) {
        (Some(name), _) => Engine::for_type_named(side.model.clone(), name, EngineOptions::default()).ok(),
        (None, Some(r)) => Some(Engine::for_type(side.model.clone(), r, EngineOptions::default())),
        (None, None) => Engine::new(side.model.clone(), EngineOptions::default()).ok(),
    }
}

/// What the soundness check has seen.
#[derive(Default)]
pub struct Soundness {
    /// Schema pairs both of which loaded.
    pub pairs: usize,
    /// Instances checked by both engines.
    pub compared: usize,
    /// Of those, the ones the two sides disagree on.
    pub differing: usize,
    /// Of the streams, the ones the two sides disagree on.
    pub streams_differing: usize,
    /// One line per pair whose diff missed a break.
    pub missed: Vec<String>,
}

impl Soundness {
    /// Changes `old` (one to three edits to one of its files) and holds the diff of the two to what the engines
    /// of both say of `instances` (each of the type it names, else of the root or the envelope) and of small
    /// changes to them, and to what their stream checkers say of
    /// `streams` (named; a stream is accepted when every line is).
    pub fn try_pair(
        &mut self,
        rng: &mut rng::Rng,
        what: &str,
        tmp: &Path,
        old: &[(String, Value)],
        instances: &[(Option<String>, Value)],
        streams: &[(String, Vec<String>)],
    ) {
        let (Some(old_side), mut new) = (side_of(&tmp.join("old"), old), old.to_vec()) else { return };
        // A third of the time the file with the sequence rules, where there is one.
        let sequence = new.iter().position(|(_, v)| v.get("x-sequence").is_some());
        let fi = match sequence {
            Some(i) if rng.below(3) == 0 => i,
            _ => rng.below(new.len() as u64) as usize,
        };
        // A quarter of the time in a protocol with event files, a declared rename instead.
        let renamed = sequence.is_some() && rng.below(4) == 0;
        let fi = match renamed {
            true => match rename_property(rng, &mut new) {
                Some(i) => i,
                None => return,
            },
            false => {
                for _ in 0..=rng.below(3) {
                    change_schema(rng, &mut new[fi].1, old.len() > 1);
                }
                fi
            }
        };
        if new == old {
            return;
        }
        let Some(new_side) = side_of(&tmp.join("new"), &new) else { return };
        let report = wiregen::diff::diff(&old_side, &new_side);
        let producers = report.changes.iter().any(|c| c.breaks.old_producers);
        let history = report.changes.iter().any(|c| c.breaks.stored_history);
        let consumers = report.changes.iter().any(|c| c.breaks.old_consumers);
        self.pairs += 1;
        let mut tried = instances.to_vec();
        for (ty, x) in instances {
            for _ in 0..4 {
                tried.push((ty.clone(), change_instance(rng, x)));
            }
        }
        // Both sides' engines, per type the instances name (a type NEW no longer has: `type-removed` says so).
        let mut engines = std::collections::BTreeMap::new();
        let plan = wiregen::upgrade::Plan::between(&old_side.model, &new_side.model);
        let mut verdicts = Vec::new();
        for (ty, x) in &tried {
            let pair = engines
                .entry(ty.clone())
                .or_insert_with(|| (engine_of(&old_side, ty.as_deref()), engine_of(&new_side, ty.as_deref())));
            if let (Some(was), Some(is)) = pair {
                // Stored history is read after the upgrade `wiregen migrate` takes from OLD to NEW.
                let mut up = x.clone();
                if let Some(p) = &plan {
                    let _ = p.apply(&mut up);
                }
                let b = is.check_value(x).is_empty();
                verdicts.push((x.to_string(), was.check_value(x).is_empty(), b, is.check_value(&up).is_empty()));
            }
        }
        let accepts = |e: &wiregen::engine::Engine, lines: &[String]| {
            let mut checker = wiregen::stream::StreamChecker::new(e);
            lines.iter().enumerate().all(|(n, l)| checker.check(n + 1, l.as_bytes()).valid)
        };
        if let (Some(was), Some(is)) = (engine_of(&old_side, None), engine_of(&new_side, None)) {
            for (name, s) in streams {
                let up: Vec<String> = (s.iter())
                    .map(|l| match (serde_json::from_str::<Value>(l), &plan) {
                        (Ok(mut v), Some(p)) => {
                            let _ = p.apply(&mut v);
                            v.to_string()
                        }
                        _ => l.clone(),
                    })
                    .collect();
                verdicts.push((format!("the stream {name}"), accepts(&was, s), accepts(&is, s), accepts(&is, &up)));
            }
        }
        for (x, a, b, upgraded) in verdicts {
            self.compared += 1;
            if a == b && a == upgraded {
                continue;
            }
            self.differing += 1;
            self.streams_differing += usize::from(x.starts_with("the stream "));
            let missed = if a && !b && !producers {
                Some("old producers")
            } else if a && !upgraded && !history {
                Some("stored history (NEW refuses it upgraded)")
            } else if !a && b && !consumers {
                Some("old consumers")
            } else {
                None
            };
            if let Some(who) = missed {
                self.missed.push(format!(
                    "{what}: {x} is {} by OLD and {} by NEW, but no change breaks {who}; changes: {:?}\nOLD {}: {}\nNEW {}",
                    if a { "accepted" } else { "refused" },
                    if b { "accepted" } else { "refused" },
                    report.changes.iter().map(|c| (c.rule, c.breaks)).collect::<Vec<_>>(),
                    old[fi].0,
                    old[fi].1,
                    new[fi].1,
                ));
                return;
            }
        }
    }
}
