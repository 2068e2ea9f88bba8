//! The `session-wire` npm package (`generated/ts/`): Zod 4 schemas and TypeScript types, checkers that report
//! the engine's first error, and `createEnvelope`.
//!
//! The package is an ESM module built with `tsc` (`npm run build` to `dist/` with declarations); `zod` 4 is a peer
//! dependency. Its files:
//!
//! - `package.json`, `tsconfig.json`: built as JSON values here;
//! - `src/runtime.ts`: protocol-independent helpers (the error map that puts rule ids into messages, closed objects
//!   that report unknown keys at the key, the role check, the serde_json-exact line parser, `newId`);
//! - `src/schemas.ts`: one schema and one type per enum, shared object and event, the union, the envelope, and the
//!   role tables, all from the [`Protocol`] model;
//! - `src/index.ts`: re-exports, `checkEnvelope`, `validateSessionLine`, `createEnvelope`; it also re-exports
//!   `src/stream.ts`, which the stream emitter ([`super::ts_stream`]) writes;
//! - `src/standalone.ts`: a dependency-free validator, straight-line code from the model ([`standalone`]).
//!
//! The module outlines are minijinja templates (`generator/templates/ts/`) with strict undefined behaviour. The
//! templates never see raw schema text as code: the formatter writes every value as a JavaScript literal (JSON,
//! with U+2028/U+2029 escaped) unless it is a [`js::Code`] piece, which only [`js`] (escaped literals, checked
//! identifiers, doc comments that cannot be closed early) and [`zod::Zod::render`] build. So a description holding
//! `*/`, a backtick, `${` or U+2028 still gives valid code, and names and rules come only from the model.
//!
//! The package lockfile (`package-lock.json`) is committed beside the generated files but not produced here: the
//! output's manifest lists only emitted files, so regeneration keeps it (and `node_modules/`, `dist/`).

use std::collections::{BTreeMap, BTreeSet};

use minijinja::value::Value;
use minijinja::{Environment, UndefinedBehavior};
use serde_json::json;

use super::{EmitError, OutFile, REGENERATE};
use crate::engine::MAX_DEPTH;
use crate::legacy::ir::{pascal_case, Field, Object, Protocol, Ty};
use crate::rules::Rule;

pub(crate) mod js;
pub(crate) mod standalone;
pub(crate) mod zod;

use js::{ident, jsdoc, json_lit, prop_key, string_lit, Code};
use zod::Zod;

/// The npm package name.
pub(crate) const PACKAGE: &str = "session-wire";

/// The Zod versions the generated code is written and tested against (a peer dependency of the package).
pub(crate) const ZOD_RANGE: &str = "^4.6.7";

/// The TypeScript compiler used to build and type-check the package.
pub(crate) const TYPESCRIPT_RANGE: &str = "~5.9.3";

/// Type name of the event union (`SessionEvent`, `sessionEventSchema`).
const UNION_NAME: &str = "Event";

const RUNTIME: &str = include_str!("../../templates/ts/runtime.ts.j2");
const SCHEMAS: &str = include_str!("../../templates/ts/schemas.ts.j2");
const INDEX: &str = include_str!("../../templates/ts/index.ts.j2");
const STANDALONE: &str = include_str!("../../templates/ts/standalone.ts.j2");

/// Emits the package's files (paths relative to `generated/ts/`).
///
/// # Errors
/// [`EmitError::Unsupported`] when the model holds what the package cannot express exactly (a name that is not an
/// identifier, two types with one name, integer bounds beyond ±(2^53-1), an envelope without `id` and `time`);
/// [`EmitError::Template`] for a template bug.
/// Emits the TypeScript package for a model (through the legacy view until this emitter reads the model itself).
///
/// # Errors
/// When the model holds something this output cannot express.
pub(crate) fn emit_model(m: &crate::ir::Model) -> Result<Vec<OutFile>, EmitError> {
    let p = crate::legacy::protocol(m)?;
    let mut files = emit(&p)?;
    files.extend(super::ts_stream::emit(&p)?);
    Ok(files)
}

/// The Zod module of `wiregen types --lang zod`.
///
/// # Errors
/// Not yet supported.
pub(crate) fn zod_module(_m: &crate::ir::Model) -> Result<String, EmitError> {
    Err(EmitError::Unsupported("`wiregen types --lang zod` is not implemented yet".into()))
}

/// The standalone module of `wiregen types --lang ts-standalone`.
///
/// # Errors
/// Not yet supported.
pub(crate) fn standalone_module(_m: &crate::ir::Model) -> Result<String, EmitError> {
    Err(EmitError::Unsupported("`wiregen types --lang ts-standalone` is not implemented yet".into()))
}

pub(crate) fn emit(p: &Protocol) -> Result<Vec<OutFile>, EmitError> {
    let env = environment()?;
    let names = Names::new(p)?;
    let header = header();
    let runtime = env.get_template("runtime.ts")?.render(minijinja::context! {
        header => header.clone(),
        rule_ids => Rule::ALL.iter().map(|r| r.id()).collect::<Vec<_>>(),
        max_depth => MAX_DEPTH,
    })?;
    let schemas = env.get_template("schemas.ts")?.render(schemas_view(p, &names, &header)?)?;
    let index = env.get_template("index.ts")?.render(index_view(p, &names, &header)?)?;
    let sa_names = standalone::names(&names)?;
    let standalone = env.get_template("standalone.ts")?.render(minijinja::context! {
        header => header.clone(),
        envelope_type => Value::from(names.envelope.1.clone()),
        validate => Value::from(sa_names.validate),
        guard => Value::from(sa_names.guard),
        envelope_check => Value::from(standalone::envelope_check(&names)?),
        body => Value::from(standalone::body(p, &names)?),
    })?;
    Ok(vec![
        OutFile::new("package.json", package_json(p)),
        OutFile::new("tsconfig.json", tsconfig_json()),
        OutFile::new("src/runtime.ts", runtime),
        OutFile::new("src/schemas.ts", schemas),
        OutFile::new("src/index.ts", index),
        OutFile::new("src/standalone.ts", standalone),
    ])
}

fn header() -> Value {
    Value::from(Code::from_pieces(format!(
        "// @generated by `{REGENERATE}` from schema/. Do not edit: change the schema or the emitter and regenerate."
    )))
}

/// The template environment: strict undefined behaviour, and a formatter that writes every value as a JavaScript
/// literal unless it is a safe [`Code`] piece.
fn environment() -> Result<Environment<'static>, EmitError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    env.set_formatter(|out, _state, value| {
        if value.is_safe() {
            if let Some(s) = value.as_str() {
                out.write_str(s).map_err(minijinja::Error::from)?;
                return Ok(());
            }
        }
        let json = serde_json::to_value(value).map_err(|e| {
            minijinja::Error::new(minijinja::ErrorKind::BadSerialization, "value is not JSON").with_source(e)
        })?;
        out.write_str(json_lit(&json).as_str()).map_err(minijinja::Error::from)
    });
    env.add_template("runtime.ts", RUNTIME)?;
    env.add_template("schemas.ts", SCHEMAS)?;
    env.add_template("index.ts", INDEX)?;
    env.add_template("standalone.ts", STANDALONE)?;
    Ok(env)
}

/// The generated names: `session<Name>Schema` and `Session<Name>` for enums, objects and the envelope,
/// `session<Name>EventSchema` / `Session<Name>Event` for events. All checked to be identifiers and distinct.
struct Names {
    enums: BTreeMap<String, (Code, Code)>,
    objects: BTreeMap<String, (Code, Code)>,
    events: BTreeMap<String, (Code, Code)>,
    union: (Code, Code),
    envelope: (Code, Code),
    tags: Code,
    removed: Code,
    roles: Code,
    for_role: Code,
    options: Code,
}

impl Names {
    fn new(p: &Protocol) -> Result<Names, EmitError> {
        let mut seen = BTreeSet::new();
        let mut pair = |name: &str| -> Result<(Code, Code), EmitError> {
            let schema = ident(&format!("session{name}Schema"))?;
            let ty = ident(&format!("Session{name}"))?;
            for n in [&schema, &ty] {
                if !seen.insert(n.to_string()) {
                    return Err(EmitError::Unsupported(format!("two generated TypeScript names are `{n}`")));
                }
            }
            Ok((schema, ty))
        };
        let mut enums = BTreeMap::new();
        for (k, e) in &p.enums {
            enums.insert(k.clone(), pair(&pascal_case(&e.name))?);
        }
        let mut objects = BTreeMap::new();
        for (k, o) in &p.objects {
            objects.insert(k.clone(), pair(&pascal_case(&o.name))?);
        }
        let mut events = BTreeMap::new();
        for v in &p.union.variants {
            events.insert(v.tag.clone(), pair(&format!("{}{UNION_NAME}", pascal_case(&v.name)))?);
        }
        let union = pair(UNION_NAME)?;
        let envelope = pair(&pascal_case(&p.envelope.name))?;
        let mut single = |n: String| -> Result<Code, EmitError> {
            let c = ident(&n)?;
            if !seen.insert(n.clone()) {
                return Err(EmitError::Unsupported(format!("two generated TypeScript names are `{n}`")));
            }
            Ok(c)
        };
        let env_name = pascal_case(&p.envelope.name);
        Ok(Names {
            tags: single(format!("session{UNION_NAME}Tags"))?,
            removed: single(format!("sessionRemoved{UNION_NAME}s"))?,
            roles: single(format!("session{UNION_NAME}Roles"))?,
            for_role: single(format!("Session{UNION_NAME}ForRole"))?,
            options: single(format!("Session{env_name}Options"))?,
            enums,
            objects,
            events,
            union,
            envelope,
        })
    }
}

/// The Zod expression of a value type.
fn zod_of(ty: &Ty, names: &Names) -> Result<Zod, EmitError> {
    let missing = |what: &str, n: &str| EmitError::Unsupported(format!("{what} `{n}` is not in the model"));
    Ok(match ty {
        Ty::String(s) => Zod::String { min_len: s.min_length.unwrap_or(0) },
        Ty::Integer { minimum, maximum } => Zod::Int { min: *minimum, max: *maximum },
        Ty::Number { minimum } => Zod::Number { min: *minimum },
        Ty::Boolean => Zod::Boolean,
        Ty::Enum(n) => Zod::Ref(names.enums.get(n).ok_or_else(|| missing("enum", n))?.0.clone()),
        Ty::Object(n) => Zod::Ref(names.objects.get(n).ok_or_else(|| missing("object", n))?.0.clone()),
        Ty::AnyObject => Zod::AnyObject,
        Ty::Union => Zod::Ref(names.union.0.clone()),
    })
}

fn doc_or(description: &str, fallback: String) -> String {
    if description.trim().is_empty() {
        fallback
    } else {
        description.to_string()
    }
}

/// The primitive schemas fields share (see [`Zod::shared_name`]), in first-use order.
#[derive(Default)]
struct Shared {
    by_code: BTreeMap<String, Code>,
    order: Vec<(Code, Code)>,
    min_chars: bool,
}

impl Shared {
    /// The identifier of the shared instance of `z` (declared on first use), or `z` itself when not shared.
    fn of(&mut self, z: Zod) -> Result<Zod, EmitError> {
        let Some(base) = z.shared_name() else { return Ok(z) };
        self.min_chars |= z.uses_min_chars();
        let code = z.render()?;
        if let Some(name) = self.by_code.get(code.as_str()) {
            return Ok(Zod::Ref(name.clone()));
        }
        let mut name = base.clone();
        let mut n = 1;
        while self.order.iter().any(|(existing, _)| existing.as_str() == name) {
            n += 1;
            name = format!("{base}{n}");
        }
        let name = ident(&name)?;
        self.by_code.insert(code.to_string(), name.clone());
        self.order.push((name.clone(), code));
        Ok(Zod::Ref(name))
    }
}

/// One property of a closed object, for the template. Its description goes to the doc comment; the schema is a
/// shared primitive or a named schema, so fields add no instances of their own beyond `.optional()`.
fn field_view(f: &Field, names: &Names, shared: &mut Shared) -> Result<Value, EmitError> {
    let z = shared.of(zod_of(&f.ty, names)?)?.optional_unless(f.required);
    let mut doc = doc_or(&f.description, format!("The `{}` property.", f.name));
    if let Some(roles) = &f.roles {
        doc.push_str(&format!("\n\nOnly {} may send this field.", roles.join(" or ")));
    }
    Ok(minijinja::context! {
        doc => Value::from(jsdoc(&doc, 4)),
        key => Value::from(prop_key(&f.name)?),
        expr => Value::from(z.render()?),
    })
}

/// A closed object (shared object, event or envelope), for the template.
fn object_view(
    (schema, type_name): &(Code, Code),
    description: &str,
    tag: Option<(&str, &str)>,
    fields: &[Field],
    p: &Protocol,
    names: &Names,
    shared: &mut Shared,
) -> Result<Value, EmitError> {
    let mut views = Vec::new();
    let mut removed = serde_json::Map::new();
    if let Some((tag_name, tag_value)) = tag {
        views.push(minijinja::context! {
            doc => Value::from(jsdoc(&format!("The `{tag_name}` discriminator: always `{tag_value}`."), 4)),
            key => Value::from(prop_key(tag_name)?),
            expr => Value::from(Zod::Literal(tag_value.to_string()).render()?),
        });
        for r in &p.removed {
            if let crate::legacy::ir::RemovedKind::Property { event, name, replacement } = &r.kind {
                if event == tag_value {
                    removed.insert(name.clone(), json!(replacement));
                }
            }
        }
    }
    for f in fields {
        views.push(field_view(f, names, shared)?);
    }
    let owner = tag.map(|(_, v)| v.to_string()).unwrap_or_else(|| type_name.to_string());
    let unknown = Code::from_pieces(format!(
        "unknownKeys({}, {})",
        string_lit(&owner),
        json_lit(&serde_json::Value::Object(removed))
    ));
    Ok(minijinja::context! {
        doc => Value::from(jsdoc(&doc_or(description, format!("The `{type_name}` object.")), 0)),
        schema => Value::from(schema.clone()),
        type_name => Value::from(type_name.clone()),
        description => description,
        fields => views,
        unknown => Value::from(unknown),
    })
}

/// Shared objects in dependency order (an object after the objects it holds).
fn objects_in_order(p: &Protocol) -> Result<Vec<(&str, &Object)>, EmitError> {
    fn visit<'a>(
        name: &str,
        p: &'a Protocol,
        done: &mut BTreeSet<String>,
        active: &mut BTreeSet<String>,
        out: &mut Vec<(&'a str, &'a Object)>,
    ) -> Result<(), EmitError> {
        if done.contains(name) {
            return Ok(());
        }
        if !active.insert(name.to_string()) {
            return Err(EmitError::Unsupported(format!("object `{name}` contains itself")));
        }
        let (key, o) = p
            .objects
            .get_key_value(name)
            .ok_or_else(|| EmitError::Unsupported(format!("object `{name}` is not in the model")))?;
        for f in &o.fields {
            if let Ty::Object(inner) = &f.ty {
                visit(inner, p, done, active, out)?;
            }
        }
        active.remove(name);
        done.insert(name.to_string());
        out.push((key.as_str(), o));
        Ok(())
    }
    let mut out = Vec::new();
    let (mut done, mut active) = (BTreeSet::new(), BTreeSet::new());
    for name in p.objects.keys() {
        visit(name, p, &mut done, &mut active, &mut out)?;
    }
    Ok(out)
}

fn roles_json(roles: &[String]) -> Code {
    json_lit(&json!(roles))
}

/// A union of string literal types (`"a" | "b"`).
fn literal_union(names: &[&str]) -> Code {
    let lits: Vec<Code> = names.iter().map(|n| string_lit(n)).collect();
    Code::join(&lits, " | ")
}

fn schemas_view(p: &Protocol, names: &Names, header: &Value) -> Result<Value, EmitError> {
    let mut shared = Shared::default();
    let mut enums = Vec::new();
    for (k, e) in &p.enums {
        let (schema, type_name) = &names.enums[k];
        let z = Zod::Enum(e.values.clone()).described(&e.description);
        enums.push(minijinja::context! {
            doc => Value::from(jsdoc(&doc_or(&e.description, format!("The `{type_name}` enum.")), 0)),
            schema => Value::from(schema.clone()),
            type_name => Value::from(type_name.clone()),
            expr => Value::from(z.render()?),
        });
    }
    let mut objects = Vec::new();
    for (key, o) in objects_in_order(p)? {
        objects.push(object_view(&names.objects[key], &o.description, None, &o.fields, p, names, &mut shared)?);
    }
    let mut events = Vec::new();
    for v in &p.union.variants {
        let schema = &names.events[&v.tag].0;
        let mut doc = doc_or(&v.description, format!("The `{}` event.", v.tag));
        doc.push_str(&format!("\n\nSent by: {}.", v.roles.join(", ")));
        let view = object_view(
            &names.events[&v.tag],
            &v.description,
            Some((&p.union.tag, &v.tag)),
            &v.fields,
            p,
            names,
            &mut shared,
        )?;
        // The event's doc names who may send it; its `.describe()` keeps the schema's description.
        let mut map: BTreeMap<String, Value> = BTreeMap::new();
        for key in ["schema", "type_name", "description", "fields", "unknown"] {
            map.insert(key.into(), view.get_attr(key)?);
        }
        map.insert("doc".into(), Value::from(jsdoc(&doc, 0)));
        objects.push(Value::from(map));
        events.push(minijinja::context! { schema => Value::from(schema.clone()) });
    }
    let mut removed_events = serde_json::Map::new();
    for r in &p.removed {
        if let crate::legacy::ir::RemovedKind::Events(evs) = &r.kind {
            for (old, rep) in evs {
                removed_events.insert(old.clone(), json!(rep));
            }
        }
    }
    let tags: Vec<&str> = p.union.variants.iter().map(|v| v.tag.as_str()).collect();
    let union = minijinja::context! {
        doc => Value::from(jsdoc(&doc_or(&p.union.description, "The event union.".into()), 0)),
        schema => Value::from(names.union.0.clone()),
        type_name => Value::from(names.union.1.clone()),
        tag => p.union.tag.clone(),
        tag_plain => Value::from(jsdoc_inline(&p.union.tag)),
        description => p.union.description.clone(),
        removed => Value::from(json_lit(&serde_json::Value::Object(removed_events))),
        removed_name => Value::from(names.removed.clone()),
        tags => tags.clone(),
        tags_name => Value::from(names.tags.clone()),
    };

    // Role tables and per-role types.
    let (_, role_type) =
        names.enums.get(&p.role_enum).ok_or_else(|| EmitError::Unsupported("the role enum is missing".into()))?;
    let mut role_events = Vec::new();
    for v in &p.union.variants {
        role_events.push(
            minijinja::context! { key => Value::from(prop_key(&v.tag)?), roles => Value::from(roles_json(&v.roles)) },
        );
    }
    // The role check as code: events grouped by the roles that may send them (groups every role may send need
    // no case), then role-restricted envelope fields, then role-restricted fields per event.
    let all_roles = p.roles();
    let forbidden = |allowed: &[String]| -> Code {
        let conds: Vec<Code> = all_roles
            .iter()
            .filter(|r| allowed.contains(r))
            .map(|r| Code::from_pieces(format!("role !== {}", string_lit(r))))
            .collect();
        if conds.is_empty() {
            Code::from_pieces("true".into())
        } else {
            Code::join(&conds, " && ")
        }
    };
    let mut groups: Vec<(Vec<String>, Vec<Value>)> = Vec::new();
    for v in &p.union.variants {
        if all_roles.iter().all(|r| v.roles.contains(r)) {
            continue;
        }
        let tag = Value::from(string_lit(&v.tag));
        match groups.iter_mut().find(|(roles, _)| *roles == v.roles) {
            Some((_, tags)) => tags.push(tag),
            None => groups.push((v.roles.clone(), vec![tag])),
        }
    }
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(roles, tags)| {
            minijinja::context! { tags => tags, forbidden => Value::from(forbidden(&roles)), allowed => roles.join(" or ") }
        })
        .collect();
    let restricted = |fields: &[Field]| -> Vec<Value> {
        fields
            .iter()
            .filter_map(|f| {
                f.roles.as_ref().filter(|r| !all_roles.iter().all(|x| r.contains(x))).map(|r| {
                    minijinja::context! { name => f.name.clone(), forbidden => Value::from(forbidden(r)), allowed => r.join(" or ") }
                })
            })
            .collect()
    };
    let envelope_fields = restricted(&p.envelope.fields);
    let mut event_fields = Vec::new();
    for v in &p.union.variants {
        let fields = restricted(&v.fields);
        if !fields.is_empty() {
            event_fields.push(minijinja::context! { tag => v.tag.clone(), fields => fields });
        }
    }
    let env_type = &names.envelope.1;
    let others: Vec<&Field> =
        p.envelope.fields.iter().filter(|f| f.name != p.role_field && f.name != p.union_field).collect();
    let mut per_role = Vec::new();
    for role in p.roles() {
        let mut members = Vec::new();
        for v in p.union.variants.iter().filter(|v| v.roles.iter().any(|r| r == role)) {
            let ty = &names.events[&v.tag].1;
            let forbidden: Vec<&str> =
                v.fields.iter().filter(|f| !Protocol::field_allowed(f, role)).map(|f| f.name.as_str()).collect();
            members.push(if forbidden.is_empty() {
                ty.clone()
            } else {
                Code::from_pieces(format!("Omit<{ty}, {}>", literal_union(&forbidden)))
            });
        }
        let events_ty =
            if members.is_empty() { Code::from_pieces("never".into()) } else { Code::join(&members, " | ") };
        let optional: Vec<&str> = others
            .iter()
            .filter(|f| (!f.required || f.name == "id" || f.name == "time") && Protocol::field_allowed(f, role))
            .map(|f| f.name.as_str())
            .collect();
        let required: Vec<&str> = others
            .iter()
            .filter(|f| f.required && f.name != "id" && f.name != "time" && Protocol::field_allowed(f, role))
            .map(|f| f.name.as_str())
            .collect();
        let mut parts = Vec::new();
        if !optional.is_empty() {
            parts.push(Code::from_pieces(format!("Partial<Pick<{env_type}, {}>>", literal_union(&optional))));
        }
        if !required.is_empty() {
            parts.push(Code::from_pieces(format!("Pick<{env_type}, {}>", literal_union(&required))));
        }
        let options_ty = if parts.is_empty() {
            Code::from_pieces("Record<string, never>".into())
        } else {
            Code::join(&parts, " & ")
        };
        per_role.push(minijinja::context! {
            key => Value::from(prop_key(role)?),
            events => Value::from(events_ty),
            options => Value::from(options_ty),
        });
    }
    let roles = minijinja::context! {
        events_name => Value::from(names.roles.clone()),
        role_type => Value::from(role_type.clone()),
        role_field => p.role_field.clone(),
        union_field => p.union_field.clone(),
        events => role_events,
        groups => groups,
        envelope_fields => envelope_fields,
        event_fields => event_fields,
        per_role => per_role,
        for_role_name => Value::from(names.for_role.clone()),
        options_name => Value::from(names.options.clone()),
    };
    let envelope =
        object_view(&names.envelope, &p.envelope.description, None, &p.envelope.fields, p, names, &mut shared)?;
    Ok(minijinja::context! {
        header => header.clone(),
        title_doc => Value::from(jsdoc_inline(&p.title)),
        uses_min_chars => shared.min_chars,
        shared => shared
            .order
            .iter()
            .map(|(name, expr)| minijinja::context! { name => Value::from(name.clone()), expr => Value::from(expr.clone()) })
            .collect::<Vec<_>>(),
        enums => enums,
        objects => objects,
        events => events,
        union => union,
        roles => roles,
        envelope => envelope,
    })
}

/// Text for the middle of a doc comment line: no line breaks, no `*/`, no `@` that could start a tag.
fn jsdoc_inline(s: &str) -> Code {
    Code::from_pieces(s.replace(['\n', '\r', '\u{2028}', '\u{2029}'], " ").replace("*/", "*\\/").replace('@', "\\@"))
}

fn index_view(p: &Protocol, names: &Names, header: &Value) -> Result<Value, EmitError> {
    let has = |name: &str, want: fn(&Ty) -> bool| {
        p.envelope.fields.iter().any(|f| f.name == name && f.required && want(&f.ty))
    };
    if !has("id", |t| matches!(t, Ty::String(_))) || !has("time", |t| matches!(t, Ty::Integer { .. })) {
        return Err(EmitError::Unsupported(
            "createEnvelope needs a required string `id` and a required integer `time` on the envelope".into(),
        ));
    }
    let (_, role_type) = names
        .enums
        .get(&p.role_enum)
        .ok_or_else(|| EmitError::Unsupported(format!("the role enum `{}` is not defined", p.role_enum)))?;
    let sa_names = standalone::names(names)?;
    Ok(minijinja::context! {
        header => header.clone(),
        standalone_validate => Value::from(sa_names.validate),
        package => Value::from(jsdoc_inline(PACKAGE)),
        title_doc => Value::from(jsdoc_inline(&p.title)),
        envelope_schema => Value::from(names.envelope.0.clone()),
        envelope_type => Value::from(names.envelope.1.clone()),
        options_type => Value::from(names.options.clone()),
        for_role_type => Value::from(names.for_role.clone()),
        role_type => Value::from(role_type.clone()),
        id_name => Value::from(jsdoc_inline("id")),
        time_name => Value::from(jsdoc_inline("time")),
        id_key => "id",
        time_key => "time",
        role_key => p.role_field.clone(),
        union_key => p.union_field.clone(),
    })
}

fn package_json(p: &Protocol) -> String {
    let v = json!({
        "//": format!("@generated by `{REGENERATE}` from schema/. Do not edit."),
        "name": PACKAGE,
        "version": "0.1.0",
        "description": format!("{}: Zod 4 schemas, TypeScript types and checkers generated from the protocol's JSON Schema", p.title),
        "license": "MIT OR Apache-2.0",
        "type": "module",
        "main": "./dist/index.js",
        "types": "./dist/index.d.ts",
        "exports": {
            ".": { "types": "./dist/index.d.ts", "import": "./dist/index.js" },
            "./package.json": "./package.json"
        },
        "files": ["dist", "src"],
        "sideEffects": false,
        "engines": { "node": ">=20" },
        "scripts": {
            "build": "tsc -p tsconfig.json",
            "typecheck": "tsc -p tsconfig.json --noEmit"
        },
        "peerDependencies": { "zod": ZOD_RANGE },
        "devDependencies": { "typescript": TYPESCRIPT_RANGE, "zod": ZOD_RANGE }
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

fn tsconfig_json() -> String {
    let v = json!({
        "compilerOptions": {
            "target": "ES2022",
            "lib": ["ES2022"],
            "module": "NodeNext",
            "moduleResolution": "NodeNext",
            "strict": true,
            "declaration": true,
            "declarationMap": true,
            "sourceMap": true,
            "rootDir": "src",
            "outDir": "dist",
            "skipLibCheck": true,
            "forceConsistentCasingInFileNames": true
        },
        "include": ["src"]
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}
