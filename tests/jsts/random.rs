//! Random schemas: a seeded generator of schemas from the keywords wiregen supports, nested and combined as no
//! test suite writes them, each with instances made to fit it and then mutated. The engine's verdict is the
//! expectation; every other checker (the byte scanner, the bundled schema under the `jsonschema` crate, the Rust
//! types, Zod, the standalone validator) must give the same verdict or refuse the schema.

use serde_json::{json, Map, Value};

use crate::rng::Rng;
use crate::Case;

/// The keyword of the random cases.
pub const RANDOM: &str = "random";

/// Property names: plain ones, ones every output must quote or escape, and ones the generated Rust must rename or
/// keep apart from its own names (keywords, the decoder's locals), and members of `Object.prototype`, which Zod's own
/// object cannot read (`ownObject`).
const NAMES: &[&str] = &[
    "a",
    "b",
    "id",
    "kind",
    "a-b",
    "a b",
    "x/y",
    "m~n",
    "",
    "é",
    "1",
    "__x",
    "type",
    "self",
    "at",
    "v",
    "obj",
    "kept",
    "constructor",
    "toString",
    "__proto__",
    "valueOf",
    "hasOwnProperty",
    "$ref",
    "q\"uote",
    "back\\slash",
    "${x}",
    "\u{2028}",
    "💩",
];

/// Names given to types (`x-name`, `x-rust-name`, `x-ts-name`, `x-aliases`): among them names the Zod runtime
/// declares for itself (`RawIssue`, `Evaluation`), which the Zod module refuses and the standalone module takes.
const TYPE_NAMES: &[&str] =
    &["Item", "RootA", "RootAItem", "Option", "Vec", "Object", "String", "Value", "Root", "RawIssue", "Evaluation"];

/// Names given to Zod schemas (`x-zod-name`): a derived one, a global value, one of the Zod runtime (`rule`), and
/// names the standalone code has (`isRoot`, `$ok`), which only its module holds.
const ZOD_NAMES: &[&str] = &["itemSchema", "rootSchema", "rootASchema", "Object", "value", "rule", "isRoot", "$ok"];

/// Annotation texts: ones that end or open a comment, a doc attribute or a code fence, or hold characters a
/// source file must escape (line and paragraph separators, a NUL, a lone backslash, template syntax).
const TEXTS: &[&str] = &[
    "plain words",
    "ends */ here",
    "/* opens",
    "*/",
    "line one\nline two\r\n\ttabbed",
    "```\nan unclosed fence",
    "\\ a backslash, \"quotes\", `ticks`, ${x} and #{y}",
    "#[doc = \"x\"] ]] \u{2028} \u{2029} \u{0} <script>",
    "# a heading\n- a list\n|a|table|",
    "💩 é \u{301}",
];

/// Patterns that mean the same in ECMA-262 and in Rust's `regex`.
const PATTERNS: &[&str] = &["^a", "b$", "^[a-c]*$", "\\d", "^.{2}$", "é|💩"];

/// A random JSON value of depth at most `depth`.
fn any_value(rng: &mut Rng, depth: u32) -> Value {
    match rng.below(if depth == 0 { 6 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(rng.below(7) as i64 - 3),
        3 => json!([0.5, -1.5, 1e3, 2.0, 9007199254740993.0][rng.below(5) as usize]),
        4 => json!(["", "a", "ab", "abc", "💩", "é", "\"'`", "\\", "${a}", "\u{2028}\u{0}"][rng.below(10) as usize]),
        5 => json!(*rng.pick(NAMES)),
        6 => Value::Array((0..rng.below(3)).map(|_| any_value(rng, depth - 1)).collect()),
        _ => {
            let mut o = Map::new();
            for _ in 0..rng.below(3) {
                o.insert(rng.pick(NAMES).to_string(), any_value(rng, depth - 1));
            }
            Value::Object(o)
        }
    }
}

/// Generates schemas and values that fit them (when it can).
struct Gen {
    rng: Rng,
    /// `$defs` of the schema being built.
    defs: Map<String, Value>,
}

impl Gen {
    fn chance(&mut self, one_in: u64) -> bool {
        self.rng.below(one_in) == 0
    }

    fn count(&mut self) -> u64 {
        self.rng.below(4)
    }

    /// A schema of depth at most `depth`, sometimes with annotations (which every output prints, carries or
    /// ignores, but none may check).
    fn schema(&mut self, depth: u32) -> Value {
        let mut s = self.bare_schema(depth);
        if let (true, Some(o)) = (self.chance(8), s.as_object_mut()) {
            o.insert("description".into(), json!(*self.rng.pick(TEXTS)));
            if self.rng.below(3) == 0 {
                o.insert("title".into(), json!(*self.rng.pick(TEXTS)));
            }
            if self.rng.below(4) == 0 {
                o.insert("$comment".into(), json!(*self.rng.pick(TEXTS)));
            }
            if self.rng.below(4) == 0 {
                o.insert("deprecated".into(), json!(true));
            }
            if self.rng.below(3) == 0 {
                o.insert("examples".into(), json!([*self.rng.pick(TEXTS), any_value(&mut self.rng, 2)]));
            }
            if self.rng.below(4) == 0 {
                o.insert("default".into(), any_value(&mut self.rng, 2));
            }
            if self.rng.below(5) == 0 {
                o.insert(if self.chance(2) { "readOnly" } else { "writeOnly" }.into(), json!(self.chance(2)));
            }
        }
        s
    }

    /// A schema of depth at most `depth`, without annotations.
    fn bare_schema(&mut self, depth: u32) -> Value {
        let kind = self.rng.below(if depth == 0 { 7 } else { 16 });
        match kind {
            0 => {
                let mut s = json!({"type": "string"});
                if self.chance(2) {
                    s["minLength"] = json!(self.count());
                }
                if self.chance(3) {
                    s["maxLength"] = json!(self.count() + 1);
                }
                if self.chance(3) {
                    s["pattern"] = json!(*self.rng.pick(PATTERNS));
                }
                s
            }
            1 => {
                let mut s = json!({"type": if self.chance(2) { "integer" } else { "number" }});
                if self.chance(2) {
                    s["minimum"] = json!(self.rng.below(5) as i64 - 2);
                }
                if self.chance(3) {
                    s["exclusiveMaximum"] = json!(self.rng.below(20) as f64 / 2.0);
                }
                if self.chance(5) {
                    s["maximum"] = json!(self.rng.below(9) as i64 - 1);
                }
                if self.chance(5) {
                    s["exclusiveMinimum"] = json!(self.rng.below(7) as f64 / 2.0 - 2.0);
                }
                if self.chance(4) {
                    // Binary fractions, and decimal ones whose quotients round (`0.3 / 0.1` is not 3 in IEEE).
                    s["multipleOf"] = json!(*self.rng.pick(&[0.5, 2.0, 3.0, 0.25, 0.1, 0.01, 1.5]));
                }
                s
            }
            2 if self.chance(3) => {
                // Several kinds in one `type`, each with a keyword of its own (which the others ignore).
                let mut kinds = vec!["string", "integer", "number", "array", "object", "boolean", "null"];
                let mut pick = Vec::new();
                for _ in 0..2 + self.rng.below(2) {
                    let k = kinds.remove(self.rng.below(kinds.len() as u64) as usize);
                    pick.push(k);
                }
                let mut s = json!({"type": pick.clone()});
                for k in pick {
                    match k {
                        "string" => s["minLength"] = json!(1 + self.count()),
                        "integer" | "number" => s["minimum"] = json!(self.rng.below(5) as i64 - 1),
                        "array" => s["maxItems"] = json!(self.count()),
                        "object" => s["required"] = json!([*self.rng.pick(NAMES)]),
                        _ => {}
                    }
                }
                s
            }
            2 => json!({"type": if self.chance(2) { "boolean" } else { "null" }}),
            3 => json!({"const": any_value(&mut self.rng, 2)}),
            4 => {
                let n = 1 + self.rng.below(4);
                let mut values: Vec<Value> = Vec::new();
                for _ in 0..n {
                    let v = any_value(&mut self.rng, 1);
                    if !values.contains(&v) {
                        values.push(v);
                    }
                }
                json!({"enum": values})
            }
            5 => json!(*self.rng.pick(&[json!({}), json!(true), json!({"type": "string", "minLength": 1})])),
            6 => {
                // A named type: a bounded integer, or any schema (an object, a union, ...) one level down; sometimes
                // a reference back to the root, which makes the schema recursive.
                if depth > 1 && self.chance(5) {
                    return json!({"$ref": "#"});
                }
                let name = format!("D{}", self.defs.len());
                self.defs.insert(name.clone(), Value::Null);
                let mut body = if self.chance(2) {
                    json!({"type": "integer", "maximum": self.rng.below(9)})
                } else {
                    self.schema(depth.saturating_sub(1))
                };
                // Sometimes reached by a plain-name fragment (`$anchor`) instead of its pointer.
                if let (true, Some(o)) = (self.chance(4), body.as_object_mut()) {
                    o.insert("$anchor".into(), json!(format!("anchor{name}")));
                    self.defs.insert(name.clone(), body);
                    return json!({"$ref": format!("#anchor{name}")});
                }
                self.defs.insert(name.clone(), body);
                json!({"$ref": format!("#/$defs/{name}")})
            }
            7 | 8 if depth >= 2 && self.chance(4) => {
                // `unevaluatedProperties` around an object in `allOf` (and a property of its own).
                let inner = self.object(depth - 1);
                let own = self.rng.pick(NAMES).to_string();
                let rest = if self.chance(2) { json!(false) } else { self.schema(0) };
                json!({"type": "object", "properties": {own: self.schema(depth - 1)}, "allOf": [inner],
                       "unevaluatedProperties": rest})
            }
            7..=9 if depth >= 2 && self.chance(6) => self.generic_list(),
            7..=9 => self.object(depth),
            10 | 11 => {
                let mut s = json!({"type": "array"});
                if self.chance(3) {
                    let n = 1 + self.rng.below(2);
                    s["prefixItems"] = Value::Array((0..n).map(|_| self.schema(depth - 1)).collect());
                    if self.chance(3) {
                        // Exactly its positions: a tuple in Rust (a union member; sometimes a recursion through it).
                        if depth > 1 && self.chance(3) {
                            s["prefixItems"][0] = json!({"$ref": "#"});
                        }
                        s["items"] = json!(false);
                        s["minItems"] = json!(n);
                        return s;
                    }
                }
                if !self.chance(4) {
                    s["items"] = if self.chance(6) { json!(false) } else { self.schema(depth - 1) };
                }
                if self.chance(3) {
                    s["minItems"] = json!(self.count());
                }
                if self.chance(3) {
                    s["maxItems"] = json!(self.count() + 1);
                }
                if self.chance(3) {
                    s["uniqueItems"] = json!(true);
                }
                if self.chance(4) {
                    s["contains"] = self.schema(depth - 1);
                    if self.chance(3) {
                        s["minContains"] = json!(self.count());
                    }
                    if self.chance(3) {
                        s["maxContains"] = json!(self.count() + 1);
                    }
                }
                if self.chance(5) {
                    // Beside `contains` it reads what `contains` evaluates; alone, it is `items`.
                    s["unevaluatedItems"] = if self.chance(2) { json!(false) } else { self.schema(0) };
                }
                s
            }
            12 => {
                // Nullable: `type: [T, "null"]` or `anyOf` with null.
                let inner = self.schema(depth - 1);
                match inner.get("type").and_then(Value::as_str) {
                    Some(t) if self.chance(2) => {
                        let mut s = inner.clone();
                        s["type"] = json!([t, "null"]);
                        s
                    }
                    _ => json!({"anyOf": [inner, {"type": "null"}]}),
                }
            }
            13 if self.chance(4) => {
                // Alternatives that are all scalar constants (an enum with a description per value), equal ones
                // (`1` and `1.0`, `0` and `-0.0`) among them.
                let word = *self.rng.pick(&["anyOf", "oneOf"]);
                let n = 2 + self.rng.below(3);
                let scalars =
                    [json!(0), json!(-0.0), json!(1), json!(1.0), json!("a"), json!("1"), json!(true), json!(null)];
                json!({ word: (0..n).map(|_| json!({"const": self.rng.pick(&scalars).clone()})).collect::<Vec<_>>() })
            }
            13 => {
                let word = *self.rng.pick(&["allOf", "anyOf", "oneOf"]);
                let n = 1 + self.rng.below(3);
                json!({ word: (0..n).map(|_| self.schema(depth - 1)).collect::<Vec<_>>() })
            }
            14 => {
                if self.chance(2) {
                    json!({"not": self.schema(depth - 1)})
                } else {
                    let mut s = json!({"if": self.schema(depth - 1)});
                    if !self.chance(3) {
                        s["then"] = self.schema(depth - 1);
                    }
                    if !self.chance(3) {
                        s["else"] = self.schema(depth - 1);
                    }
                    s
                }
            }
            _ => self.union(depth),
        }
    }

    /// A list resource whose items are a `$dynamicRef` with its own default item, reached directly or through a
    /// resource that binds the anchor to another item schema (the same list is then a type in two scopes).
    fn generic_list(&mut self) -> Value {
        // Leaves only: a `$ref` inside these resources would resolve against their own `$id`.
        const LEAVES: &[&str] = &[
            r#"{"type": "string"}"#,
            r#"{"type": "integer", "minimum": 0}"#,
            r#"{"type": "boolean"}"#,
            r#"{"type": "string", "minLength": 2}"#,
            r#"{"not": {"type": "null"}}"#,
            r#"true"#,
        ];
        let item = |g: &mut Gen| match serde_json::from_str::<Value>(g.rng.pick::<&str>(LEAVES)).expect("leaf") {
            Value::Object(mut o) => {
                o.insert("$dynamicAnchor".into(), json!("item"));
                Value::Object(o)
            }
            _ => json!({"$dynamicAnchor": "item"}),
        };
        let n = self.defs.len();
        let list = json!({"$id": format!("list{n}"), "type": "array", "items": {"$dynamicRef": "#item"},
                          "$defs": {"item": item(self)}});
        let bound = json!({"$id": format!("bound{n}"), "$ref": format!("list{n}"), "$defs": {"item": item(self)}});
        self.defs.insert(format!("L{n}"), list);
        self.defs.insert(format!("B{n}"), bound);
        if self.chance(3) {
            json!({"$ref": format!("#/$defs/L{n}")})
        } else {
            json!({"$ref": format!("#/$defs/B{n}")})
        }
    }

    fn object(&mut self, depth: u32) -> Value {
        let mut props = Map::new();
        // Sometimes none: the object's type is then its index signature alone.
        let declared = if self.chance(10) { 0 } else { 1 + self.rng.below(4) };
        for _ in 0..declared {
            props.insert(self.rng.pick(NAMES).to_string(), self.schema(depth - 1));
        }
        let names: Vec<String> = props.keys().cloned().collect();
        let mut s = json!({"type": "object", "properties": props});
        let mut required: Vec<&str> = names.iter().map(String::as_str).filter(|_| self.chance(2)).collect();
        // Sometimes a name it does not declare, which its other properties' schemas govern.
        let other = self.rng.pick(NAMES);
        if self.chance(6) && !props.contains_key(*other) {
            required.push(*other);
        }
        if !required.is_empty() {
            s["required"] = json!(required);
        }
        match self.rng.below(5) {
            0 => s["additionalProperties"] = json!(false),
            1 => s["additionalProperties"] = self.schema(depth - 1),
            2 => s["x-unknown-keys"] = json!("strip"),
            _ => {}
        }
        if self.chance(5) {
            s["patternProperties"] = json!({ *self.rng.pick(PATTERNS): self.schema(depth - 1) });
        }
        // Sometimes a name of its own (or another one, `x-aliases`): one a derived name takes too (`RootA`), one of
        // Rust's prelude or a global value of JavaScript, or the name of another language given to one language only.
        if self.chance(12) {
            let key = *self.rng.pick(&["x-name", "x-name", "x-rust-name", "x-ts-name", "x-zod-name", "x-aliases"]);
            s[key] = match key {
                "x-zod-name" => json!(*self.rng.pick(ZOD_NAMES)),
                "x-aliases" => json!([*self.rng.pick(TYPE_NAMES)]),
                _ => json!(*self.rng.pick(TYPE_NAMES)),
            };
        }
        if self.chance(6) {
            s["propertyNames"] = match self.rng.below(4) {
                0 => json!({"pattern": *self.rng.pick(PATTERNS)}),
                1 => json!({"enum": names.iter().chain([&other.to_string()]).collect::<Vec<_>>()}),
                _ => json!({"maxLength": 1 + self.rng.below(3)}),
            };
        }
        if self.chance(5) {
            s["minProperties"] = json!(self.count());
        }
        if self.chance(6) {
            s["maxProperties"] = json!(self.count() + 1);
        }
        // Either keyword, or `dependencies` (which holds both kinds of entry) in its place.
        if self.chance(6) && names.len() >= 2 {
            let key = if self.chance(2) { "dependencies" } else { "dependentRequired" };
            s[key] = json!({ names[0].clone(): [names[1].clone()] });
        }
        if depth >= 2 && self.chance(6) && !names.is_empty() {
            // The dependent schema applies to the whole object: another object schema, or any schema.
            let then = if self.chance(2) { self.object(depth - 1) } else { self.schema(depth - 1) };
            let key = if self.chance(2) { "dependencies" } else { "dependentSchemas" };
            let property = names[self.rng.below(names.len() as u64) as usize].clone();
            match s.get_mut(key).and_then(Value::as_object_mut) {
                Some(entries) => {
                    entries.insert(property, then);
                }
                None => s[key] = json!({ property: then }),
            }
        }
        s
    }

    /// A discriminated union: objects that fix `kind` (a string, a boolean or an integer each).
    fn union(&mut self, depth: u32) -> Value {
        let tags: Vec<Value> = match self.rng.below(3) {
            0 => vec![json!("x"), json!("y"), json!("z")],
            1 => vec![json!(true), json!(false)],
            _ => vec![json!(1), json!(-2), json!(30)],
        };
        let n = 2 + self.rng.below(tags.len() as u64 - 1) as usize;
        let members: Vec<Value> = tags[..n]
            .iter()
            .map(|t| {
                let mut o = self.object(depth.max(1));
                o["properties"]["kind"] = json!({"const": t});
                let mut req: Vec<Value> = o["required"].as_array().cloned().unwrap_or_default();
                if !req.contains(&json!("kind")) {
                    req.push(json!("kind"));
                }
                o["required"] = Value::Array(req);
                o
            })
            .collect();
        json!({ *self.rng.pick(&["oneOf", "anyOf"]): members })
    }

    /// A value made to fit `s` where the generator knows how (else any value), of depth at most `depth`.
    fn value(&mut self, s: &Value, root: &Value, depth: u32) -> Value {
        if depth == 0 {
            return any_value(&mut self.rng, 0);
        }
        let Some(o) = s.as_object() else { return any_value(&mut self.rng, 1) };
        if let Some(r) = o.get("$ref").and_then(Value::as_str) {
            // A pointer from the root, or the `$id` (the generic lists) or `$anchor` of one of its `$defs`.
            let by_id = || {
                let defs = root.get("$defs")?.as_object()?;
                let anchor = json!(r.trim_start_matches('#'));
                defs.values().find(|d| d.get("$id") == Some(&json!(r)) || d.get("$anchor") == Some(&anchor)).cloned()
            };
            let target = root.pointer(r.trim_start_matches('#')).cloned().or_else(by_id).unwrap_or(Value::Null);
            return self.value(&target, root, depth - 1);
        }
        if let Some(c) = o.get("const") {
            return c.clone();
        }
        if let Some(Value::Array(e)) = o.get("enum") {
            if !e.is_empty() {
                return self.rng.pick(e).clone();
            }
        }
        for w in ["oneOf", "anyOf", "allOf"] {
            if let Some(Value::Array(ms)) = o.get(w) {
                if !ms.is_empty() {
                    let m = self.rng.pick(ms).clone();
                    return self.value(&m, root, depth - 1);
                }
            }
        }
        let t = match o.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(ts)) if !ts.is_empty() => self.rng.pick(ts).as_str().unwrap_or("null").to_string(),
            _ => return any_value(&mut self.rng, 2),
        };
        match t.as_str() {
            "string" => json!(*self.rng.pick(&["a", "ab", "abc", "b", "💩", "é", "1"])),
            "integer" => json!(self.rng.below(8) as i64 - 2),
            "number" if self.chance(4) => {
                json!(*self.rng.pick(&[0.3, 0.7, 1.1, 0.30000000000000004, 4.35, 1e-7, -2.5]))
            }
            "number" => json!(self.rng.below(12) as f64 / 2.0 - 1.0),
            "boolean" => json!(self.chance(2)),
            "null" => Value::Null,
            "array" => {
                let mut items = Vec::new();
                if let Some(Value::Array(p)) = o.get("prefixItems") {
                    for x in p {
                        items.push(self.value(x, root, depth - 1));
                    }
                }
                if let Some(rest) = o.get("items").filter(|i| **i != json!(false)) {
                    for _ in 0..self.rng.below(3) {
                        items.push(self.value(rest, root, depth - 1));
                    }
                }
                if let Some(c) = o.get("contains") {
                    for _ in 0..self.rng.below(3) {
                        items.push(self.value(c, root, depth - 1));
                    }
                }
                Value::Array(items)
            }
            _ => {
                let mut m = Map::new();
                // Its properties and those of the objects in its `allOf`.
                let inner = o.get("allOf").and_then(Value::as_array).into_iter().flatten();
                let all: Vec<Map<String, Value>> =
                    std::iter::once(s).chain(inner).filter_map(|x| x.get("properties")?.as_object().cloned()).collect();
                for props in &all {
                    for (k, ps) in props {
                        if !self.chance(4) {
                            m.insert(k.clone(), self.value(ps, root, depth - 1));
                        }
                    }
                }
                // The names it requires without declaring them, from `additionalProperties` where it says.
                let others = o.get("additionalProperties").cloned().unwrap_or(json!({}));
                for k in o.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
                    if !m.contains_key(k) && !self.chance(5) {
                        let v = self.value(&others, root, depth - 1);
                        m.insert(k.to_string(), v);
                    }
                }
                // Sometimes in the other order: the checkers go by the input's order where the engine does.
                if self.chance(3) {
                    m = m.into_iter().rev().collect();
                }
                Value::Object(m)
            }
        }
    }
}

/// `n` random cases (schema files written into `dir`), each with a few fitted instances and their mutations; the
/// expected verdicts are left to the caller (the engine's).
pub fn cases(dir: &std::path::Path, n: usize, seed: u64) -> Vec<Case> {
    let mut g = Gen { rng: Rng(seed), defs: Map::new() };
    let probes = crate::ts::probe_values();
    (0..n)
        .map(|i| {
            g.defs = Map::new();
            let mut schema = g.schema(3);
            if !g.defs.is_empty() {
                if let Some(o) = schema.as_object_mut() {
                    o.insert("$defs".into(), Value::Object(g.defs.clone()));
                } else {
                    schema = json!({"allOf": [schema], "$defs": g.defs.clone()});
                }
            }
            let id = format!("{RANDOM}-{i}");
            let file = dir.join(format!("{id}.json"));
            let mut text = serde_json::to_string_pretty(&schema).expect("JSON");
            if i % 3 == 1 {
                // Every third schema spells its definitions `definitions`, as earlier drafts did.
                text = text.replace("\"$defs\"", "\"definitions\"").replace("/$defs/", "/definitions/");
            }
            std::fs::write(&file, text).expect("write");
            let mut values = Vec::new();
            for _ in 0..3 {
                let v = g.value(&schema, &schema, 5);
                if !values.contains(&v) {
                    values.push(v);
                }
            }
            let mut all = values.clone();
            for v in &values {
                let mut m = Vec::new();
                crate::ts::mutations(v, &probes, &mut m);
                for x in m {
                    if g.chance(4) && !all.contains(&x) {
                        all.push(x);
                    }
                }
            }
            let tests = all.into_iter().enumerate().map(|(k, v)| (format!("instance {k}"), v, false)).collect();
            Case { keyword: RANDOM.into(), id, description: schema.to_string(), file, tests, zod_types: None }
        })
        .collect()
}

/// Whether `v` holds a number beyond 2^53 in magnitude (where doubles and exact integers part).
pub fn has_big_number(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.as_f64().is_some_and(|x| x.abs() > 9_007_199_254_740_992.0),
        Value::Array(a) => a.iter().any(has_big_number),
        Value::Object(o) => o.values().any(has_big_number),
        _ => false,
    }
}

/// Whether an object in `v` has a key that looks like an array index (`"1"`): JavaScript lists such keys first, so
/// Zod checks such a property before the others (the README's known limits).
pub fn has_index_like_key(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.iter().any(has_index_like_key),
        Value::Object(o) => o.iter().any(|(k, x)| {
            (k == "0" || (!k.starts_with('0') && !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())))
                || has_index_like_key(x)
        }),
        _ => false,
    }
}

/// Whether a value holds an integer beyond ±2^53 written as digits: the engine shows it as written, JavaScript as
/// the double it read (`12345678901234567890` as `12345678901234567000`). (A whole number written with a fraction
/// or an exponent, `1.0`, `-0`, `1e308`, is worded alike everywhere since stop 63: an integer, as JavaScript
/// writes it.)
pub fn has_big_integer(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.iter().any(has_big_integer),
        Value::Object(o) => o.values().any(has_big_integer),
        Value::Number(n) => !n.is_f64() && n.as_f64().is_some_and(|f| f.abs() > 9_007_199_254_740_992.0),
        _ => false,
    }
}
