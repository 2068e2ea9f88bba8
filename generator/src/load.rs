//! The loader: reads `schema/`, resolves `$ref`s, rejects what it does not support, and builds the [`Protocol`].
//!
//! The supported JSON Schema subset is small on purpose: every keyword below maps to something each emitter
//! can express exactly. Anything else is an error with a file, line, column and JSON Pointer, never silently
//! dropped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::diag::{locate, push_ptr, SchemaError, SchemaErrorKind as K, SchemaErrors};
use crate::ir::*;

/// The envelope schema's file name inside the schema directory.
pub(crate) const ENVELOPE_FILE: &str = "envelope.schema.json";

/// Keywords accepted on a schema node; `x-` annotations are accepted too and interpreted where known.
const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "$comment",
    "title",
    "description",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "const",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "examples",
];

/// The annotations the loader understands; any other `x-` key is rejected so a typo cannot pass silently.
const ANNOTATIONS: &[&str] = &[
    "x-name",
    "x-roles",
    "x-role-property",
    "x-categories",
    "x-removed",
    "x-union",
    "x-category",
    "x-order",
    "x-status",
    "x-status-note",
    "x-strict-pattern",
];

/// One parsed schema file.
#[derive(Debug, Clone)]
struct SourceFile {
    /// The file's text.
    text: String,
    /// The parsed JSON (shared: the loader hands it around without copying).
    value: std::sync::Arc<Value>,
}

/// Loads and checks the schema directory, returning the protocol model.
///
/// # Errors
/// Every problem found, each located by file, line, column and JSON Pointer.
pub fn load(dir: &Path) -> Result<Protocol, SchemaErrors> {
    let mut cx = Cx { dir: dir.to_path_buf(), files: BTreeMap::new(), errors: Vec::new(), patterns: BTreeSet::new() };
    cx.read_dir(dir, "");
    if !cx.files.contains_key(ENVELOPE_FILE) && cx.errors.is_empty() {
        cx.errors.push(SchemaError {
            kind: K::Io,
            file: dir.join(ENVELOPE_FILE),
            line: 0,
            col: 0,
            pointer: String::new(),
            message: "the schema directory has no envelope schema".into(),
        });
    }
    if !cx.errors.is_empty() {
        return Err(SchemaErrors(cx.errors));
    }
    let rels: Vec<String> = cx.files.keys().cloned().collect();
    for rel in &rels {
        let v = cx.files[rel].value.clone();
        cx.check_keywords(rel, "", &v);
    }
    let proto = cx.build();
    if !cx.errors.is_empty() {
        // One problem can be seen from two places (a field and its type); report it once.
        let mut seen = BTreeSet::new();
        cx.errors.retain(|e| seen.insert((e.file.clone(), e.pointer.clone(), e.kind.code())));
        return Err(SchemaErrors(cx.errors));
    }
    proto.ok_or_else(|| {
        // The builder reports every reason it gives up; this only guards that promise.
        SchemaErrors(vec![SchemaError {
            kind: K::Missing,
            file: dir.join(ENVELOPE_FILE),
            line: 0,
            col: 0,
            pointer: String::new(),
            message: "the schema does not describe a protocol".into(),
        }])
    })
}

struct Cx {
    dir: PathBuf,
    files: BTreeMap<String, SourceFile>,
    errors: Vec<SchemaError>,
    /// Strict-id patterns already checked.
    patterns: BTreeSet<String>,
}

/// Where a schema node lives.
#[derive(Clone)]
struct At {
    file: String,
    ptr: String,
}

impl At {
    fn join(&self, tok: &str) -> At {
        At { file: self.file.clone(), ptr: push_ptr(&self.ptr, tok) }
    }
}

impl Cx {
    fn err(&mut self, at: &At, kind: K, message: impl Into<String>) {
        let (line, col) = self.files.get(&at.file).map_or((0, 0), |f| locate(&f.text, &at.ptr));
        self.errors.push(SchemaError {
            kind,
            file: self.dir.join(&at.file),
            line,
            col,
            pointer: at.ptr.clone(),
            message: message.into(),
        });
    }

    fn read_dir(&mut self, dir: &Path, prefix: &str) {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                self.errors.push(SchemaError {
                    kind: K::Io,
                    file: dir.to_path_buf(),
                    line: 0,
                    col: 0,
                    pointer: String::new(),
                    message: format!("cannot read the schema directory: {e}"),
                });
                return;
            }
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            let rel = format!("{prefix}{name}");
            if p.is_dir() {
                self.read_dir(&p, &format!("{rel}/"));
            } else if name.ends_with(".json") {
                match std::fs::read_to_string(&p) {
                    Err(e) => self.errors.push(SchemaError {
                        kind: K::Io,
                        file: p.clone(),
                        line: 0,
                        col: 0,
                        pointer: String::new(),
                        message: format!("cannot read: {e}"),
                    }),
                    Ok(text) => match serde_json::from_str::<Value>(&text) {
                        Ok(value) => {
                            self.files.insert(rel.clone(), SourceFile { text, value: std::sync::Arc::new(value) });
                        }
                        Err(e) => self.errors.push(SchemaError {
                            kind: K::InvalidJson,
                            file: p.clone(),
                            line: e.line(),
                            col: e.column(),
                            pointer: String::new(),
                            message: format!("not valid JSON: {e}"),
                        }),
                    },
                }
            }
        }
    }

    /// Rejects unknown keywords anywhere a schema node can stand.
    fn check_keywords(&mut self, file: &str, ptr: &str, v: &Value) {
        let at = At { file: file.to_string(), ptr: ptr.to_string() };
        let Some(obj) = v.as_object() else {
            self.err(&at, K::InvalidValue, "a schema must be a JSON object");
            return;
        };
        for (k, sub) in obj {
            if k.starts_with("x-") {
                if !ANNOTATIONS.contains(&k.as_str()) {
                    self.err(&at.join(k), K::UnsupportedKeyword, format!("unknown annotation `{k}`"));
                }
                continue;
            }
            if !KEYWORDS.contains(&k.as_str()) {
                self.err(
                    &at.join(k),
                    K::UnsupportedKeyword,
                    format!("keyword `{k}` is not supported by wiregen (it would be silently dropped by some outputs)"),
                );
                continue;
            }
            if k == "properties" || k == "$defs" {
                match sub.as_object() {
                    Some(m) => {
                        for (name, s) in m {
                            let p = push_ptr(&push_ptr(ptr, k), name);
                            self.check_keywords(file, &p, s);
                        }
                    }
                    None => self.err(&at.join(k), K::InvalidValue, format!("`{k}` must be an object")),
                }
            }
        }
    }

    fn build(&mut self) -> Option<Protocol> {
        let env_at = At { file: ENVELOPE_FILE.into(), ptr: String::new() };
        let env = self.files[ENVELOPE_FILE].value.clone();
        let title = self.str_of(&env_at, &env, "title").unwrap_or_default();
        let description = self.description(&env_at, &env);
        let id = self.str_of(&env_at, &env, "$id").unwrap_or_default();
        let base_uri = id.rsplit_once('/').map(|(b, _)| format!("{b}/")).unwrap_or_default();
        let categories = self.categories(&env_at, &env);
        let role_field = self.str_of(&env_at, &env, "x-role-property").unwrap_or_default();
        let mut types = Types::default();

        // Envelope fields, the union field among them.
        let mut union_field = None;
        let mut union_desc = String::new();
        let mut union_members = None;
        let fields = self.object_fields(&env_at, &env, &mut types, &mut |cx, name, at, s| {
            let u = s.get("x-union")?;
            let tag = u.get("discriminator").and_then(Value::as_str);
            let members = u.get("members").and_then(Value::as_str);
            match (tag, members) {
                (Some(t), Some(m)) => {
                    union_field = Some(name.to_string());
                    union_desc = cx.description(at, s);
                    union_members = Some((t.to_string(), m.to_string(), at.join("x-union")));
                }
                _ => cx.err(
                    &at.join("x-union"),
                    K::InvalidValue,
                    "`x-union` needs string `discriminator` and `members` (a directory of member schemas)",
                ),
            }
            Some(Ty::Union)
        });
        let envelope = Object {
            name: self.x_name(&env_at, &env).unwrap_or_else(|| "Envelope".into()),
            description: description.clone(),
            fields,
        };

        let role_enum = match envelope.fields.iter().find(|f| f.name == role_field) {
            Some(Field { ty: Ty::Enum(e), .. }) => e.clone(),
            _ => {
                self.err(
                    &env_at.join("x-role-property"),
                    K::InvalidValue,
                    "`x-role-property` must name an envelope property whose type is a named enum",
                );
                String::new()
            }
        };
        let roles: Vec<String> = types.enums.get(&role_enum).map(|e| e.values.clone()).unwrap_or_default();
        for f in &envelope.fields {
            if let Some(r) = f.roles.iter().flatten().find(|r| !roles.contains(r)) {
                let fat = env_at.join("properties").join(&f.name).join("x-roles");
                self.err(&fat, K::InvalidValue, format!("`{r}` is not a role (roles: {})", roles.join(", ")));
            }
        }

        let Some((tag, members_dir, union_at)) = union_members else {
            self.err(
                &env_at.join("properties"),
                K::Missing,
                "the envelope needs one property with an `x-union` annotation",
            );
            return None;
        };
        let union_field = union_field.unwrap_or_default();

        // Union members: every schema file in the members directory.
        let prefix = format!("{}/", members_dir.trim_end_matches('/'));
        let member_files: Vec<String> =
            self.files.keys().filter(|k| k.starts_with(&prefix) && k.ends_with(".schema.json")).cloned().collect();
        if member_files.is_empty() {
            self.err(&union_at.join("members"), K::Missing, format!("no member schemas found in `{members_dir}/`"));
        }
        let mut variants: Vec<(i64, Variant)> = Vec::new();
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for rel in member_files {
            let at = At { file: rel.clone(), ptr: String::new() };
            let v = self.files[&rel].value.clone();
            if let Some(var) = self.variant(&at, &v, &tag, &categories, &roles, &mut types) {
                if let Some(prev) = seen.get(&var.0.tag) {
                    self.err(
                        &at.join("properties").join(&tag).join("const"),
                        K::DuplicateTag,
                        format!("discriminator value `{}` is already used by `{prev}`", var.0.tag),
                    );
                    continue;
                }
                seen.insert(var.0.tag.clone(), rel.clone());
                variants.push((var.1, var.0));
            }
        }
        variants.sort_by(|a, b| (a.0, &a.1.tag).cmp(&(b.0, &b.1.tag)));
        let variants: Vec<Variant> = variants.into_iter().map(|(_, v)| v).collect();

        let removed = self.removed(&env_at, &env, &variants);
        for (name, at) in types.pending_names {
            if types.enums.contains_key(&name) && types.objects.contains_key(&name) {
                self.err(&at, K::InvalidValue, format!("type name `{name}` is used for both an enum and an object"));
            }
        }
        Some(Protocol {
            title,
            description,
            base_uri,
            envelope,
            role_field,
            role_enum,
            union_field,
            union: Union { tag, description: union_desc, variants },
            categories,
            removed,
            enums: types.enums,
            objects: types.objects,
        })
    }

    fn str_of(&mut self, at: &At, v: &Value, key: &str) -> Option<String> {
        match v.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                self.err(&at.join(key), K::InvalidValue, format!("`{key}` must be a string"));
                None
            }
            None => {
                self.err(at, K::Missing, format!("`{key}` is required here"));
                None
            }
        }
    }

    fn x_name(&mut self, at: &At, v: &Value) -> Option<String> {
        match v.get("x-name") {
            Some(Value::String(s)) if is_type_name(s) => Some(s.clone()),
            Some(_) => {
                self.err(&at.join("x-name"), K::InvalidValue, "`x-name` must be a PascalCase identifier");
                None
            }
            None => None,
        }
    }

    fn description(&mut self, at: &At, v: &Value) -> String {
        match v.get("description") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) | None => {
                self.err(at, K::MissingDescription, "every type, field and event needs a non-empty `description`");
                String::new()
            }
            Some(_) => {
                self.err(&at.join("description"), K::InvalidValue, "`description` must be a string");
                String::new()
            }
        }
    }

    fn categories(&mut self, at: &At, env: &Value) -> Vec<Category> {
        let mut out = Vec::new();
        match env.get("x-categories").and_then(Value::as_array) {
            Some(list) => {
                for (i, c) in list.iter().enumerate() {
                    match (c.get("name").and_then(Value::as_str), c.get("title").and_then(Value::as_str)) {
                        (Some(n), Some(t)) => out.push(Category { name: n.into(), title: t.into() }),
                        _ => self.err(
                            &at.join("x-categories").join(&i.to_string()),
                            K::InvalidValue,
                            "a category needs string `name` and `title`",
                        ),
                    }
                }
            }
            None => self.err(at, K::Missing, "`x-categories` (a list of {name, title}) is required on the envelope"),
        }
        out
    }

    fn removed(&mut self, at: &At, env: &Value, variants: &[Variant]) -> Vec<Removed> {
        let mut out = Vec::new();
        let Some(list) = env.get("x-removed") else { return out };
        let Some(list) = list.as_array() else {
            self.err(&at.join("x-removed"), K::InvalidValue, "`x-removed` must be an array");
            return out;
        };
        for (i, r) in list.iter().enumerate() {
            let rat = at.join("x-removed").join(&i.to_string());
            let what = r.get("what").and_then(Value::as_str);
            let why = r.get("why").and_then(Value::as_str);
            let kind = if let Some(evs) = r.get("events").and_then(Value::as_object) {
                let mut pairs = Vec::new();
                for (old, rep) in evs {
                    if variants.iter().any(|v| &v.tag == old) {
                        self.err(
                            &rat.join("events").join(old),
                            K::InvalidValue,
                            format!("`{old}` is removed but is still an event"),
                        );
                    }
                    match rep.as_str() {
                        Some(rep) => pairs.push((old.clone(), rep.to_string())),
                        None => {
                            self.err(&rat.join("events").join(old), K::InvalidValue, "the replacement must be a string")
                        }
                    }
                }
                Some(RemovedKind::Events(pairs))
            } else if let Some(p) = r.get("property") {
                match (
                    p.get("event").and_then(Value::as_str),
                    p.get("name").and_then(Value::as_str),
                    p.get("replacement").and_then(Value::as_str),
                ) {
                    (Some(e), Some(n), Some(rep)) => {
                        match variants.iter().find(|v| v.tag == e) {
                            None => self.err(
                                &rat.join("property").join("event"),
                                K::InvalidValue,
                                format!("no event `{e}`"),
                            ),
                            Some(v) if v.fields.iter().any(|f| f.name == n) => self.err(
                                &rat.join("property").join("name"),
                                K::InvalidValue,
                                format!("`{n}` is removed but `{e}` still has it"),
                            ),
                            Some(_) => {}
                        }
                        Some(RemovedKind::Property { event: e.into(), name: n.into(), replacement: rep.into() })
                    }
                    _ => {
                        self.err(
                            &rat.join("property"),
                            K::InvalidValue,
                            "`property` needs string `event`, `name` and `replacement`",
                        );
                        None
                    }
                }
            } else {
                self.err(&rat, K::InvalidValue, "a removal needs `events` (old tag -> replacement) or `property`");
                None
            };
            match (what, why, kind) {
                (Some(what), Some(why), Some(kind)) => out.push(Removed { what: what.into(), why: why.into(), kind }),
                (None, _, _) | (_, None, _) => {
                    self.err(&rat, K::InvalidValue, "a removal needs string `what` and `why`")
                }
                _ => {}
            }
        }
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn variant(
        &mut self,
        at: &At,
        v: &Value,
        tag: &str,
        categories: &[Category],
        roles: &[String],
        types: &mut Types,
    ) -> Option<(Variant, i64)> {
        if v.get("type").and_then(Value::as_str) != Some("object") {
            self.err(at, K::InvalidValue, "a union member must be `\"type\": \"object\"`");
            return None;
        }
        let tag_at = at.join("properties").join(tag);
        let tag_value = match v.get("properties").and_then(|p| p.get(tag)).and_then(|t| t.get("const")) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                self.err(
                    &tag_at,
                    K::Missing,
                    format!("a union member needs `properties.{tag}.const`, a non-empty string"),
                );
                return None;
            }
        };
        let required_tag = v.get("required").and_then(Value::as_array).is_some_and(|r| r.iter().any(|x| x == tag));
        if !required_tag {
            self.err(&at.join("required"), K::Missing, format!("`{tag}` must be listed in `required`"));
        }
        let description = self.description(at, v);
        let category = self.str_of(at, v, "x-category").unwrap_or_default();
        if !category.is_empty() && !categories.iter().any(|c| c.name == category) {
            self.err(
                &at.join("x-category"),
                K::InvalidValue,
                format!("category `{category}` is not in the envelope's `x-categories`"),
            );
        }
        let order = match v.get("x-order") {
            Some(o) => o.as_i64().unwrap_or_else(|| {
                self.err(&at.join("x-order"), K::InvalidValue, "`x-order` must be an integer");
                0
            }),
            None => i64::MAX,
        };
        let status = self.str_of(at, v, "x-status").unwrap_or_default();
        if !status.is_empty() && !["existing", "modified", "renamed", "new"].contains(&status.as_str()) {
            self.err(&at.join("x-status"), K::InvalidValue, "`x-status` must be existing, modified, renamed or new");
        }
        let status_note = v.get("x-status-note").and_then(Value::as_str).map(String::from);
        let var_roles = self.roles(at, v, Some(roles)).unwrap_or_else(|| {
            self.err(at, K::Missing, "`x-roles` (who may send this event) is required on a union member");
            Vec::new()
        });
        let mut fields = self.object_fields(at, v, types, &mut |_, _, _, _| None);
        fields.retain(|f| f.name != tag);
        let examples = match v.get("examples") {
            Some(Value::Array(a)) if !a.is_empty() => a.clone(),
            _ => {
                self.err(at, K::Missing, "every event needs `examples` (at least one example body)");
                Vec::new()
            }
        };
        for (i, ex) in examples.iter().enumerate() {
            if ex.get(tag).and_then(Value::as_str) != Some(&tag_value) {
                self.err(
                    &at.join("examples").join(&i.to_string()),
                    K::InvalidValue,
                    format!("the example's `{tag}` must be `{tag_value}`"),
                );
            }
        }
        for f in &fields {
            if let Some(fr) = &f.roles {
                if let Some(r) = fr.iter().find(|r| !var_roles.contains(r)) {
                    let fat = at.join("properties").join(&f.name).join("x-roles");
                    self.err(&fat, K::InvalidValue, format!("role `{r}` may not send this event at all"));
                }
            }
        }
        Some((
            Variant {
                name: pascal_case(&tag_value),
                tag: tag_value,
                description,
                category,
                status,
                status_note,
                roles: var_roles,
                fields,
                examples,
                file: at.file.clone(),
            },
            order,
        ))
    }

    fn roles(&mut self, at: &At, v: &Value, roles: Option<&[String]>) -> Option<Vec<String>> {
        let r = v.get("x-roles")?;
        let list: Option<Vec<String>> =
            r.as_array().and_then(|a| a.iter().map(|x| x.as_str().map(String::from)).collect());
        match list {
            Some(l) if !l.is_empty() => {
                for x in &l {
                    if roles.is_some_and(|roles| !roles.contains(x)) {
                        self.err(
                            &at.join("x-roles"),
                            K::InvalidValue,
                            format!("`{x}` is not a role (roles: {})", roles.unwrap_or_default().join(", ")),
                        );
                    }
                }
                Some(l)
            }
            _ => {
                self.err(&at.join("x-roles"), K::InvalidValue, "`x-roles` must be a non-empty array of role names");
                None
            }
        }
    }

    /// Fields of an object schema, in property order. `special` may claim a property (the union field).
    fn object_fields(
        &mut self,
        at: &At,
        v: &Value,
        types: &mut Types,
        special: &mut dyn FnMut(&mut Cx, &str, &At, &Value) -> Option<Ty>,
    ) -> Vec<Field> {
        let empty = Map::new();
        let props = v.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        if v.get("additionalProperties") != Some(&Value::Bool(false)) {
            self.err(
                at,
                K::UnsupportedKeyword,
                "objects with properties must be closed: add `\"additionalProperties\": false`",
            );
        }
        let required: BTreeSet<String> = match v.get("required") {
            None => BTreeSet::new(),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .filter_map(|(i, x)| match x.as_str() {
                    Some(s) => Some(s.to_string()),
                    None => {
                        self.err(
                            &at.join("required").join(&i.to_string()),
                            K::InvalidValue,
                            "`required` lists property names",
                        );
                        None
                    }
                })
                .collect(),
            Some(_) => {
                self.err(&at.join("required"), K::InvalidValue, "`required` must be an array");
                BTreeSet::new()
            }
        };
        for (i, r) in required.iter().enumerate() {
            if !props.contains_key(r) {
                self.err(
                    &at.join("required").join(&i.to_string()),
                    K::InvalidValue,
                    format!("`{r}` is required but not in `properties`"),
                );
            }
        }
        let mut fields = Vec::new();
        for (name, s) in props {
            let fat = at.join("properties").join(name);
            let ty = match special(self, name, &fat, s) {
                Some(t) => t,
                None => {
                    if s.get("const").is_some() {
                        // Only the discriminator may be a const; the caller drops it.
                        Ty::Boolean
                    } else {
                        match self.ty(&fat, s, types) {
                            Some(t) => t,
                            None => continue,
                        }
                    }
                }
            };
            let description = self.field_description(&fat, s);
            let roles = if s.get("x-roles").is_some() { self.roles(&fat, s, None) } else { None };
            fields.push(Field { name: name.clone(), description, required: required.contains(name), ty, roles });
        }
        fields
    }

    fn field_description(&mut self, at: &At, s: &Value) -> String {
        if let Some(Value::String(d)) = s.get("description") {
            if !d.trim().is_empty() {
                return d.clone();
            }
        }
        if let Some((tat, target)) = self.resolve_ref(at, s) {
            if let Some(Value::String(d)) = target.get("description") {
                let _ = tat;
                return d.clone();
            }
        }
        self.description(at, s)
    }

    /// Resolves `$ref` on `s` (if any) to the target's location and value.
    fn resolve_ref(&mut self, at: &At, s: &Value) -> Option<(At, Value)> {
        let r = s.get("$ref")?;
        let Some(r) = r.as_str() else {
            self.err(&at.join("$ref"), K::InvalidValue, "`$ref` must be a string");
            return None;
        };
        let (file_part, frag) = r.split_once('#').unwrap_or((r, ""));
        let file = if file_part.is_empty() {
            at.file.clone()
        } else {
            let base = at.file.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
            normalize(&format!("{base}/{file_part}"))
        };
        let Some(f) = self.files.get(&file) else {
            self.err(&at.join("$ref"), K::UnresolvableRef, format!("`{r}`: no schema file `{file}`"));
            return None;
        };
        let target = if frag.is_empty() { Some(&*f.value) } else { f.value.pointer(frag) };
        match target {
            Some(t) => Some((At { file, ptr: frag.to_string() }, t.clone())),
            None => {
                self.err(&at.join("$ref"), K::UnresolvableRef, format!("`{r}`: `{file}` has nothing at `{frag}`"));
                None
            }
        }
    }

    fn ty(&mut self, at: &At, s: &Value, types: &mut Types) -> Option<Ty> {
        if s.get("$ref").is_some() {
            for k in ["type", "enum", "properties", "minimum", "maximum", "minLength"] {
                if s.get(k).is_some() {
                    self.err(
                        &at.join(k),
                        K::UnsupportedKeyword,
                        format!("`{k}` beside `$ref` is not supported: put it in the referenced schema"),
                    );
                }
            }
            let (tat, target) = self.resolve_ref(at, s)?;
            if target.get("$ref").is_some() {
                // One level of indirection is enough for this subset; follow chains too.
                return self.ty(&tat, &target, types);
            }
            return self.ty(&tat, &target, types);
        }
        if let Some(e) = s.get("enum") {
            let vals: Option<Vec<String>> =
                e.as_array().and_then(|a| a.iter().map(|x| x.as_str().map(String::from)).collect());
            let Some(vals) = vals.filter(|v| !v.is_empty()) else {
                self.err(&at.join("enum"), K::InvalidValue, "`enum` must be a non-empty array of strings");
                return None;
            };
            if let Some(t) = s.get("type") {
                if t != "string" {
                    self.err(&at.join("type"), K::InvalidValue, "an `enum` of strings has type `string`");
                }
            }
            let Some(name) = self.x_name(at, s) else {
                self.err(at, K::Missing, "an `enum` needs an `x-name` (its type name in the generated code)");
                return None;
            };
            let description = self.description(at, s);
            let def = EnumDef { name: name.clone(), description, values: vals };
            self.register(types, at, name.clone(), Named::Enum(def));
            return Some(Ty::Enum(name));
        }
        if s.get("const").is_some() {
            self.err(&at.join("const"), K::UnsupportedKeyword, "`const` is supported only on the union discriminator");
            return None;
        }
        let t = match s.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(_) => {
                self.err(
                    &at.join("type"),
                    K::UnsupportedKeyword,
                    "`type` must be a single type name (type unions are not supported)",
                );
                return None;
            }
            None => {
                self.err(at, K::Missing, "a schema needs `type`, `enum` or `$ref`");
                return None;
            }
        };
        let allowed: &[&str] = match t.as_str() {
            "string" => &["minLength", "x-strict-pattern"],
            "integer" => &["minimum", "maximum"],
            "number" => &["minimum"],
            "boolean" => &[],
            "object" => &["properties", "required", "additionalProperties", "x-name"],
            _ => {
                self.err(&at.join("type"), K::UnsupportedKeyword, format!("type `{t}` is not supported"));
                return None;
            }
        };
        for k in
            ["minLength", "x-strict-pattern", "minimum", "maximum", "properties", "required", "additionalProperties"]
        {
            if s.get(k).is_some() && !allowed.contains(&k) {
                self.err(&at.join(k), K::UnsupportedKeyword, format!("`{k}` does not apply to type `{t}`"));
            }
        }
        match t.as_str() {
            "string" => {
                let min_length = match s.get("minLength") {
                    None => None,
                    Some(v) => match v.as_u64() {
                        Some(n) => Some(n),
                        None => {
                            self.err(
                                &at.join("minLength"),
                                K::InvalidValue,
                                "`minLength` must be a non-negative integer",
                            );
                            None
                        }
                    },
                };
                let strict_pattern = s.get("x-strict-pattern").and_then(Value::as_str).map(String::from);
                // Each distinct pattern is compiled once (a shared id type is referenced from many fields).
                if let Some(p) = strict_pattern.as_ref().filter(|p| self.patterns.insert((*p).clone())) {
                    if let Err(e) = regex::Regex::new(p) {
                        self.err(&at.join("x-strict-pattern"), K::InvalidValue, format!("not a valid pattern: {e}"));
                    }
                }
                Some(Ty::String(StringTy { min_length, strict_pattern }))
            }
            "integer" => {
                let minimum = self.int_bound(at, s, "minimum").unwrap_or(i64::MIN);
                let maximum = self.int_bound(at, s, "maximum").unwrap_or(i64::MAX);
                if minimum < -(1 << 53) || maximum > (1 << 53) - 1 {
                    self.err(
                        at,
                        K::InvalidValue,
                        "integers need `minimum` and `maximum` within ±(2^53-1) so every language agrees",
                    );
                }
                Some(Ty::Integer { minimum, maximum })
            }
            "number" => Some(Ty::Number { minimum: s.get("minimum").and_then(Value::as_f64) }),
            "boolean" => Some(Ty::Boolean),
            "object" => {
                if s.get("properties").is_none() && s.get("additionalProperties").is_none() {
                    return Some(Ty::AnyObject);
                }
                let Some(name) = self.x_name(at, s) else {
                    self.err(at, K::Missing, "an object type needs an `x-name` (its type name in the generated code)");
                    return None;
                };
                let description = self.description(at, s);
                let fields = self.object_fields(at, s, types, &mut |_, _, _, _| None);
                self.register(
                    types,
                    at,
                    name.clone(),
                    Named::Object(Object { name: name.clone(), description, fields }),
                );
                Some(Ty::Object(name))
            }
            _ => None,
        }
    }

    fn int_bound(&mut self, at: &At, s: &Value, k: &str) -> Option<i64> {
        let v = s.get(k)?;
        match v.as_i64() {
            Some(n) => Some(n),
            None => {
                self.err(&at.join(k), K::InvalidValue, format!("`{k}` must be an integer"));
                None
            }
        }
    }

    fn register(&mut self, types: &mut Types, at: &At, name: String, def: Named) {
        types.pending_names.push((name.clone(), at.clone()));
        match def {
            Named::Enum(e) => {
                if let Some(prev) = types.enums.get(&name) {
                    if prev.values != e.values {
                        self.err(at, K::InvalidValue, format!("two different enums are named `{name}`"));
                    }
                    return;
                }
                types.enums.insert(name, e);
            }
            Named::Object(o) => {
                if let Some(prev) = types.objects.get(&name) {
                    if prev.fields != o.fields {
                        self.err(at, K::InvalidValue, format!("two different objects are named `{name}`"));
                    }
                    return;
                }
                types.objects.insert(name, o);
            }
        }
    }
}

enum Named {
    Enum(EnumDef),
    Object(Object),
}

#[derive(Default)]
struct Types {
    enums: BTreeMap<String, EnumDef>,
    objects: BTreeMap<String, Object>,
    pending_names: Vec<(String, At)>,
}

fn is_type_name(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}

fn normalize(p: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    out.join("/")
}
