//! Names: the one rule that gives every type its name in every language.
//!
//! **Base name** (PascalCase): `x-name` if given; else, for a file's root, its file name (`tool-call-start.schema.json`
//! gives `ToolCallStart`; a single schema file's root is `Root`); for a `$defs` entry, its key; for anything else,
//! the nearest named ancestor's base name followed by the path to it: a property's name (`FileImage` for the
//! `image` property of `File`), `Item` for array items (`Item0` for the first of `prefixItems`), `Value` for
//! `additionalProperties`, `Key` for `propertyNames`, `Match` for `patternProperties`, `Option0` for the first
//! member of `anyOf`/`oneOf`, `Part0` for `allOf`, `Not`, `If`, `Then`, `Else`. A derived name that would clash
//! with another type's gets a number (`Item2`); names given by `x-name` never change, and two of them that clash
//! are an error.
//!
//! **Per language**, with `x-naming` (on a file's root: for the types of that file; on the package root: the
//! default for all files) holding `prefix` (TypeScript and Zod only), `member-suffix` (added to the names of
//! union members in TypeScript and Zod) and `zod` (`"camel"`: `sessionTextEventSchema`; `"pascal"`:
//! `UserMessageSchema`):
//! - Rust: `x-rust-name`, else the base name;
//! - TypeScript: `x-ts-name`, else prefix + base + member suffix;
//! - Zod: `x-zod-name`, else the TypeScript name in the chosen case + `Schema`.
//!
//! **Aliases**: `x-aliases` on a named type lists other base names (PascalCase) the type is also exported under, each
//! named per language like a base name (the file's `x-naming`; the `x-*-name` overrides do not apply), for names
//! an earlier version of a package used. Every name, aliases included, is distinct per language.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::build::Types;
use super::Cx;
use crate::diag::SchemaErrorKind as K;
pub(crate) use crate::ir::pascal_case;
use crate::ir::*;

/// Whether `s` can be a type name in every target language (ASCII, PascalCase; not `Self`, Rust's one capitalized
/// keyword, which the Rust output could only write as another name).
pub(crate) fn is_type_name(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && s.chars().all(|c| c.is_ascii_alphanumeric())
        && s != "Self"
}

/// Whether `s` is an ASCII JavaScript identifier (letters, digits, `_`, `$`, not starting with a digit).
pub(crate) fn is_identifier(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// The name derived from a location: the nearest named ancestor's base name and the path below it.
pub(crate) fn derived_name(cx: &Cx, types: &Types, at: &Origin) -> String {
    let tokens: Vec<String> = if at.pointer.is_empty() {
        Vec::new()
    } else {
        at.pointer.split('/').skip(1).map(crate::diag::unescape_token).collect()
    };
    // A `$defs` (or `definitions`) entry is named by its key.
    if let [.., defs, key] = tokens.as_slice() {
        if super::DEFS_KEYWORDS.contains(&defs.as_str()) {
            let n = pascal_case(key);
            return if n.is_empty() { "Type".into() } else { n };
        }
    }
    // The nearest ancestor (strictly above) that is named: a named location, or an inline schema that gives an
    // `x-name` (it becomes a type named so, but only once its own node is built, after the nodes below it).
    let mut base = None;
    let mut start = 0;
    for cut in (0..tokens.len()).rev() {
        let ptr: String = tokens[..cut].iter().map(|t| format!("/{}", crate::diag::escape_token(t))).collect();
        if let Some(id) = types.named.get(&Origin { file: at.file.clone(), pointer: ptr }) {
            base = Some(types.slots[id.0].base.clone());
            start = cut;
            break;
        }
    }
    if let Some((cut, name)) = x_named_above(cx, at).filter(|(cut, _)| *cut > start) {
        base = Some(name);
        start = cut;
    }
    let mut name = match base {
        Some(b) => b,
        None if cx.single.as_deref() == Some(at.file.as_str()) => "Root".to_string(),
        None => file_name(&at.file),
    };
    if base_is_root_only(&tokens, start) {
        return name;
    }
    let mut i = start;
    while i < tokens.len() {
        let t = tokens[i].as_str();
        let next = tokens.get(i + 1).map(String::as_str);
        let piece = match (t, next) {
            (t, Some(p)) if t == "properties" || super::DEFS_KEYWORDS.contains(&t) => {
                i += 1;
                pascal_case(p)
            }
            ("patternProperties", Some(_)) => {
                i += 1;
                "Match".into()
            }
            ("prefixItems", Some(n)) => {
                i += 1;
                format!("Item{n}")
            }
            ("anyOf" | "oneOf", Some(n)) => {
                i += 1;
                format!("Option{n}")
            }
            ("allOf", Some(n)) => {
                i += 1;
                format!("Part{n}")
            }
            ("items", _) => "Item".into(),
            ("additionalProperties" | "unevaluatedProperties", _) => "Value".into(),
            ("propertyNames", _) => "Key".into(),
            ("not", _) => "Not".into(),
            ("if", _) => "If".into(),
            ("then", _) => "Then".into(),
            ("else", _) => "Else".into(),
            (other, _) => pascal_case(other),
        };
        name.push_str(&piece);
        i += 1;
    }
    if name.is_empty() {
        name.push_str("Type");
    }
    name
}

/// The nearest schema strictly above `at` in its file that gives a valid `x-name`: how many pointer tokens lead to
/// it, and the name. Only schema positions count (found by walking down the schema's children), so a property
/// that happens to be called `x-name` in a `properties` map names nothing.
fn x_named_above(cx: &Cx, at: &Origin) -> Option<(usize, String)> {
    let doc = cx.doc(at);
    let mut v = doc.get(&Origin { file: at.file.clone(), pointer: String::new() })?;
    let tokens: Vec<String> = at.pointer.split('/').skip(1).map(crate::diag::unescape_token).collect();
    let mut depth = 0;
    let mut found = None;
    loop {
        let (n, child) = super::child_at(v, &tokens[depth..])?;
        depth += n;
        if depth == tokens.len() {
            return found;
        }
        if let Some(n) = child.get("x-name").and_then(Value::as_str).filter(|n| is_type_name(n)) {
            found = Some((depth, n.to_string()));
        }
        v = child;
    }
}

fn base_is_root_only(tokens: &[String], start: usize) -> bool {
    start >= tokens.len()
}

/// `events/tool-call-start.schema.json` -> `ToolCallStart`.
fn file_name(rel: &str) -> String {
    let stem = rel.rsplit('/').next().unwrap_or(rel);
    let stem = stem.strip_suffix(".json").unwrap_or(stem);
    let stem = stem.strip_suffix(".schema").unwrap_or(stem);
    let n = pascal_case(stem);
    if n.is_empty() {
        "Type".into()
    } else {
        n
    }
}

/// The naming policy of one file (`x-naming`).
#[derive(Clone, Default)]
struct Policy {
    prefix: String,
    member_suffix: String,
    zod_pascal: bool,
}

impl Cx {
    fn policy(&mut self, file: &str, default: &Policy) -> Policy {
        let root = Origin { file: file.to_string(), pointer: String::new() };
        let Some(v) = self.value_at(&root).and_then(|v| v.get("x-naming")).cloned() else { return default.clone() };
        let at = root.join("x-naming");
        let mut p = default.clone();
        let Some(o) = v.as_object() else {
            self.err(&at, K::InvalidValue, "`x-naming` must be an object");
            return p;
        };
        for (k, x) in o {
            match (k.as_str(), x) {
                ("prefix", Value::String(s)) if s.is_empty() || is_type_name(s) => p.prefix = s.clone(),
                ("member-suffix", Value::String(s)) if s.is_empty() || is_type_name(s) => p.member_suffix = s.clone(),
                ("zod", Value::String(s)) if s == "camel" || s == "pascal" => p.zod_pascal = s == "pascal",
                _ => self.err(
                    &at.join(k),
                    K::InvalidValue,
                    "`x-naming` takes `prefix` and `member-suffix` (PascalCase words) and `zod` (`camel` or `pascal`)",
                ),
            }
        }
        p
    }

    fn name_override(&mut self, at: &Origin, key: &str, check: fn(&str) -> bool, what: &str) -> Option<String> {
        let v = self.value_at(at)?.get(key)?.clone();
        match v.as_str() {
            Some(s) if check(s) => Some(s.to_string()),
            _ => {
                self.err(&at.join(key), K::InvalidValue, format!("`{key}` must be {what}"));
                None
            }
        }
    }
}

impl Policy {
    /// The names of a base name that no `x-*-name` overrides: Rust the base, TypeScript prefix + base + member
    /// suffix, Zod the TypeScript name in the policy's case + `Schema`.
    /// `at` is where the base name was given.
    fn names(&self, base: &str, member: bool, at: &Origin) -> Names {
        let suffix = if member { self.member_suffix.as_str() } else { "" };
        let ts = format!("{}{base}{suffix}", self.prefix);
        Names { base: base.to_string(), rust: base.to_string(), zod: self.zod(&ts), ts, at: NameOrigins::all(at) }
    }

    fn zod(&self, ts: &str) -> String {
        if self.zod_pascal {
            format!("{ts}Schema")
        } else {
            format!("{}Schema", lower_camel(ts))
        }
    }
}

/// A PascalCase name in camel case: its leading capitals lowered, but for the last of a run that starts the next
/// word (`JSONRPCMessage` -> `jsonrpcMessage`, `ID` -> `id`, `Usage` -> `usage`; it was `jSONRPCMessage`, helper
/// 78 on MCP's names).
fn lower_camel(name: &str) -> String {
    let run = name.chars().take_while(char::is_ascii_uppercase).count();
    let next_is_lower = name[run..].chars().next().is_some_and(|c| c.is_ascii_lowercase());
    let lower = if run > 1 && next_is_lower { run - 1 } else { run.max(1) };
    let mut out: String = name.chars().take(lower).flat_map(char::to_lowercase).collect();
    out.extend(name.chars().skip(lower));
    out
}

impl Cx {
    /// The base names `x-aliases` lists at `at`, each with its index (checked: a non-empty list of distinct PascalCase
    /// names).
    fn alias_bases(&mut self, at: &Origin) -> Vec<(usize, String)> {
        let Some(v) = self.value_at(at).and_then(|v| v.get("x-aliases")).cloned() else { return Vec::new() };
        let kat = at.join("x-aliases");
        let Some(list) = v.as_array().filter(|a| !a.is_empty()) else {
            self.err(&kat, K::InvalidValue, "`x-aliases` must be a non-empty list of PascalCase names");
            return Vec::new();
        };
        let mut out: Vec<(usize, String)> = Vec::new();
        for (i, x) in list.iter().enumerate() {
            match x.as_str() {
                Some(s) if is_type_name(s) && !out.iter().any(|(_, o)| o == s) => out.push((i, s.to_string())),
                Some(s) if is_type_name(s) => {
                    self.err(&kat.join(&i.to_string()), K::InvalidValue, format!("`{s}` is listed twice"))
                }
                Some("Self") => self.err(&kat.join(&i.to_string()), K::InvalidValue, SELF_NAME),
                _ => self.err(
                    &kat.join(&i.to_string()),
                    K::InvalidValue,
                    "an alias must be a PascalCase identifier (a base name, named per language like `x-name`)",
                ),
            }
        }
        out
    }

    /// Reports the name keywords (`x-name`, `x-rust-name`, `x-ts-name`, `x-zod-name`, `x-aliases`) of a schema that
    /// is no named type of its own (no type there, or only parts of one): they would name nothing, and no output
    /// would show them. One error per schema, at its first such keyword, saying why it is no type.
    fn stray_names(&mut self, types: &Types) {
        let named: BTreeSet<Origin> = types.slots.iter().filter(|s| !s.part).map(|s| s.origin.clone()).collect();
        let mut stray: Vec<(Origin, Vec<&'static str>)> = Vec::new();
        self.each_schema(&mut |at, v| {
            let keys: Vec<&'static str> = NAME_KEYWORDS.iter().copied().filter(|k| v.get(*k).is_some()).collect();
            if !keys.is_empty() && !named.contains(at) {
                stray.push((at.clone(), keys));
            }
        });
        // A schema whose `type` or `enum` is refused already may be a named type as meant (a string enum), and
        // what is inside one was not built; so may one refused within (an `x-union` whose members are not found
        // is no union, helper 109): one mistake, one error.
        let refused_kinds: Vec<Origin> = self
            .refused
            .iter()
            .filter_map(|r| {
                let schema = r.pointer.strip_suffix("/type").or_else(|| r.pointer.strip_suffix("/enum"))?;
                Some(Origin { file: r.file.clone(), pointer: schema.to_string() })
            })
            .collect();
        stray.retain(|(at, _)| !self.refused_within(at) && !refused_kinds.iter().any(|s| s.holds(at)));
        for (at, keys) in stray {
            let parts = types.slots.iter().filter(|s| s.part && s.origin == at).count();
            let v = self.value_at(&at);
            let target = v.and_then(|v| v.get("$ref").or_else(|| v.get("$dynamicRef"))).and_then(Value::as_str);
            let listed: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
            let (list, verb) = match listed.as_slice() {
                [one] => (one.clone(), "names"),
                several => (crate::diag::and_list(several), "name"),
            };
            let what =
                if keys == ["x-aliases"] { "gives a type other names".to_string() } else { format!("{verb} a type") };
            let why = match target {
                Some(t) => format!(
                    "but this schema is a reference to `{t}`, and a reference is its target's type, named there (keywords beside it are checked in place): name the target, or move this schema to `$defs` to make it a type of its own"
                ),
                None if parts > 1 => format!(
                    "but this schema is no one type: it makes {parts} here, one per kind of value it takes; give it a `type`, or name each kind's schema in `$defs`"
                ),
                None => "but this schema is no named type (file roots, `$defs` entries, `$ref` targets and inline objects, unions, choices and string enums are; a property's plain string, number or `$ref` stays in place): move it to `$defs` and refer to it".to_string(),
            };
            self.err(&at.join(keys[0]), K::InvalidValue, format!("{list} {what}, {why}"));
        }
    }
}

/// The keywords that name a type.
pub(crate) const NAME_KEYWORDS: [&str; 5] = ["x-name", "x-rust-name", "x-ts-name", "x-zod-name", "x-aliases"];

/// What a name keyword's value must be (a Rust type name, a TypeScript identifier).
type NameCheck = fn(&str) -> bool;

/// The languages a type is named in, in [`Names`]' order: the word errors use, the keyword that overrides the
/// name, and what that keyword's value must be.
const LANGUAGES: [(&str, &str, NameCheck, &str); 3] = [
    ("Rust", "x-rust-name", is_type_name, TYPE_NAME),
    ("TypeScript", "x-ts-name", is_identifier, IDENTIFIER),
    ("Zod", "x-zod-name", is_identifier, IDENTIFIER),
];

/// Why `Self` is no type name, as an error says it.
pub(crate) const SELF_NAME: &str = "`Self` is a Rust keyword, which no Rust type can be named: choose another name";

/// What [`is_type_name`] takes, as an error says it.
const TYPE_NAME: &str =
    "a type name: an ASCII capital letter, then ASCII letters and digits (`SessionEvent`), and not `Self`";
/// What `is_identifier` takes, as an error says it.
const IDENTIFIER: &str =
    "an identifier: ASCII letters, digits, `_` and `$`, not starting with a digit (`sessionEvent`)";

/// Gives every type its names and its aliases' names (in slot order), and reports clashes between names.
pub(crate) fn assign(cx: &mut Cx, types: &Types, package_root: Option<&str>) -> Vec<(Names, Vec<Names>)> {
    let default = match package_root {
        Some(f) => cx.policy(f, &Policy::default()),
        None => Policy::default(),
    };
    let mut policies: BTreeMap<String, Policy> = BTreeMap::new();
    let members: BTreeSet<TypeId> = types
        .slots
        .iter()
        .filter_map(|s| match s.def.as_ref().map(|d| &d.node.shape) {
            Some(Shape::Union(u)) => Some(u.members.iter().map(|m| m.ty).collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .collect();
    // Bases first: derived ones get a number when they clash. Each base taken -> the first slot that took it.
    let mut taken: BTreeMap<String, usize> = BTreeMap::new();
    // The slots whose `x-name` repeats an earlier one's, with that one: the names derived from it clash too, which
    // is the same mistake and is not reported again.
    let mut repeated: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (i, s) in types.slots.iter().enumerate().filter(|(_, s)| s.explicit) {
        if let Some(&j) = taken.get(&s.base) {
            let prev = &types.slots[j].origin;
            cx.err(
                &s.origin.join("x-name"),
                K::NameCollision,
                format!("`{}` already names the type at {}#{}", s.base, prev.file, prev.pointer),
            );
            repeated.insert((i, j));
        } else {
            taken.insert(s.base.clone(), i);
        }
    }
    // Per slot: its file's policy, and the names its keywords give per language (`x-rust-name`, `x-ts-name`,
    // `x-zod-name`). The name keywords at a place name the type first built there in its dynamic scope, as a
    // whole: not the type built there in another scope (it takes its numbered base), nor a part of the schema there.
    let mut slot_policies = Vec::with_capacity(types.slots.len());
    let mut overrides = Vec::with_capacity(types.slots.len());
    for s in &types.slots {
        let file = &s.origin.file;
        let policy = match policies.get(file) {
            Some(p) => p.clone(),
            None => {
                let p = cx.policy(file, &default);
                policies.insert(file.clone(), p.clone());
                p
            }
        };
        slot_policies.push(policy);
        let named_there = !s.part && types.named.get(&s.origin).is_none_or(|f| types.slots[f.0].scope == s.scope);
        overrides.push(LANGUAGES.map(|(_, key, ok, what)| {
            if named_there {
                cx.name_override(&s.origin, key, ok, what).map(|n| (n, s.origin.join(key)))
            } else {
                None
            }
        }));
    }
    // A slot's names in the three languages for base `b`: its keywords' where they give one, else derived.
    let names_of = |i: usize, b: &str| -> [String; 3] {
        let d = slot_policies[i].names(b, members.contains(&TypeId(i)), &types.slots[i].origin);
        let o = &overrides[i];
        let rust = o[0].as_ref().map_or(d.rust, |(n, _)| n.clone());
        let ts = o[1].as_ref().map_or(d.ts, |(n, _)| n.clone());
        let zod = o[2].as_ref().map_or_else(|| slot_policies[i].zod(&ts), |(n, _)| n.clone());
        [rust, ts, zod]
    };
    // The names taken so far per language: every explicit type's (its `x-name` and language keywords), then each
    // derived type's as it is named. A derived name that is already taken in any language takes a number, as its
    // base does beside an `x-name`: a language keyword's name (an `x-ts-name: Bar` beside a `$defs` entry `Bar`,
    // helper 113) and names that differ only in a casing a language folds (`HTTPServer` and `HttpServer` are both
    // `httpServerSchema` in Zod, helper 118) were errors at schemas without a keyword.
    let mut in_use: [BTreeSet<String>; 3] = Default::default();
    for (i, s) in types.slots.iter().enumerate() {
        let [r, t, z] = if s.explicit {
            names_of(i, &s.base)
        } else {
            overrides[i].clone().map(|o| o.map(|(n, _)| n).unwrap_or_default())
        };
        for (l, n) in [r, t, z].into_iter().enumerate().filter(|(_, n)| !n.is_empty()) {
            in_use[l].insert(n);
        }
    }
    let mut bases = Vec::new();
    for (i, s) in types.slots.iter().enumerate() {
        if s.explicit {
            bases.push(s.base.clone());
            continue;
        }
        let clashes = |b: &str, in_use: &[BTreeSet<String>; 3]| {
            names_of(i, b).iter().enumerate().any(|(l, n)| overrides[i][l].is_none() && in_use[l].contains(n))
        };
        let mut b = s.base.clone();
        let mut n = 2;
        while taken.contains_key(&b) || clashes(&b, &in_use) {
            b = format!("{}{n}", s.base);
            n += 1;
        }
        for (l, name) in names_of(i, &b).into_iter().enumerate() {
            if overrides[i][l].is_none() {
                in_use[l].insert(name);
            }
        }
        taken.insert(b.clone(), i);
        bases.push(b);
    }
    let mut out = Vec::new();
    for (i, s) in types.slots.iter().enumerate() {
        let policy = &slot_policies[i];
        let base = bases[i].clone();
        let member = members.contains(&TypeId(i));
        let base_at = if s.explicit { s.origin.join("x-name") } else { s.origin.clone() };
        let derived = policy.names(&base, member, &base_at);
        let named_there = !s.part && types.named.get(&s.origin).is_none_or(|f| types.slots[f.0].scope == s.scope);
        let [rust, ts, zod] = overrides[i].clone();
        let (rust, rust_at) = rust.unwrap_or_else(|| (base.clone(), base_at.clone()));
        let (ts, ts_at) = ts.unwrap_or((derived.ts, base_at));
        let (zod, zod_at) = zod.unwrap_or_else(|| (policy.zod(&ts), ts_at.clone()));
        let aliases = if named_there {
            let list = s.origin.join("x-aliases");
            let bases = cx.alias_bases(&s.origin);
            bases.iter().map(|(k, a)| policy.names(a, member, &list.join(&k.to_string()))).collect()
        } else {
            Vec::new()
        };
        out.push((Names { base, rust, ts, zod, at: NameOrigins { rust: rust_at, ts: ts_at, zod: zod_at } }, aliases));
    }
    cx.stray_names(types);
    // A name (or alias) that is already another type's, in each language where it is: one error per name and other
    // type, which lists the languages, where the first language's name was given.
    struct Clash {
        /// The slot and its name (0) or alias (1 + its index).
        at: (usize, usize),
        /// The slot whose name it already is.
        prev: usize,
        names: Vec<String>,
        given: Origin,
    }
    let mut clashes: Vec<Clash> = Vec::new();
    for (pick, (lang, _, _, _)) in LANGUAGES.iter().enumerate() {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, (names, aliases)) in out.iter().enumerate() {
            for (k, n) in std::iter::once(names).chain(aliases).enumerate() {
                let (name, given) = [(&n.rust, &n.at.rust), (&n.ts, &n.at.ts), (&n.zod, &n.at.zod)][pick];
                let name = name.as_str();
                match seen.get(name) {
                    Some(&j) if k == 0 && repeated.contains(&(i, j)) => {}
                    Some(&j) => {
                        let said = format!("the {lang} name `{name}`");
                        match clashes.iter_mut().find(|c| c.at == (i, k) && c.prev == j) {
                            Some(c) => c.names.push(said),
                            None => {
                                clashes.push(Clash { at: (i, k), prev: j, names: vec![said], given: given.clone() })
                            }
                        }
                    }
                    None => {
                        seen.insert(name, i);
                    }
                }
            }
        }
    }
    clashes.sort_by_key(|c| c.at);
    // A type whose name keyword is refused already has a name it was not meant to have: its clashes are echoes.
    let misnamed = |cx: &Cx, i: usize| {
        let at = &types.slots[i].origin;
        std::iter::once("x-name").chain(LANGUAGES.iter().map(|l| l.1)).any(|k| cx.refused_within(&at.join(k)))
    };
    for Clash { at: (i, _), prev: j, names: list, given: at } in clashes {
        if misnamed(cx, i) || misnamed(cx, j) {
            continue;
        }
        let prev = &types.slots[j].origin;
        let (names, verb) = match list.as_slice() {
            [] => continue,
            [one] => (one.clone(), "is already the name"),
            several => (crate::diag::and_list(several), "are already the names"),
        };
        let message = if j == i {
            // An alias that names the type it is on (no other type is involved).
            format!("the alias gives the type its own name again ({names})")
        } else {
            format!("{names} {verb} of the type at {}#{}", prev.file, prev.pointer)
        };
        cx.err(&at, K::NameCollision, message);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::lower_camel;

    #[test]
    fn leading_capitals_are_lowered_as_a_word() {
        assert_eq!(lower_camel("JSONRPCMessage"), "jsonrpcMessage");
        assert_eq!(lower_camel("SessionEnvelope"), "sessionEnvelope");
        assert_eq!(lower_camel("ID"), "id");
        assert_eq!(lower_camel("A"), "a");
        assert_eq!(lower_camel("URL2Value"), "url2Value");
        assert_eq!(lower_camel("AB"), "ab");
        assert_eq!(lower_camel("ABc"), "aBc");
    }
}
