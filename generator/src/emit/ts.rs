//! The npm package (`generated/ts/` for the v2 protocol): Zod 4 schemas and TypeScript types for every type of the
//! model, a dependency-free standalone validator, and, when the model has a session-protocol layer, the role
//! rules, `createEnvelope` and the line checkers; plus the one-file modules of `wiregen types --lang
//! zod|ts-standalone`.
//!
//! The package is an ESM module built with `tsc` (`npm run build` to `dist/` with declarations); `zod` 4 is a peer
//! dependency. Its files:
//!
//! - `package.json`, `tsconfig.json`: built as JSON values here;
//! - `src/runtime.ts`: model-independent helpers (`zod-support.ts`: the error map that puts rule ids into
//!   messages, the checks that keep JSON Schema's meaning, closed objects that report unknown keys at the key, the
//!   applicators; then the serde_json-exact line parser and `newId`);
//! - `src/schemas.ts`: one schema and one type per model type ([`zod`]), then the protocol's tables and per-role
//!   types;
//! - `src/standalone.ts`: a validator per type, straight-line code ([`standalone`]);
//! - `src/index.ts`: re-exports; with a protocol, `checkEnvelope`, `validateSessionLine`, `createEnvelope`; it
//!   also re-exports `src/stream.ts`, which the stream emitter ([`super::ts_stream`]) writes.
//!
//! The module outlines are minijinja templates (`generator/templates/ts/`) with strict undefined behaviour. The
//! templates never see raw schema text as code: the formatter writes every value as a JavaScript literal (JSON,
//! with U+2028/U+2029 escaped) unless it is a [`js::Code`] piece, which only [`js`] (escaped literals, checked
//! identifiers, doc comments that cannot be closed early) and the emitters build from those.
//!
//! The package lockfile (`package-lock.json`) is committed beside the generated files but not produced here: the
//! output's manifest lists only emitted files, so regeneration keeps it (and `node_modules/`, `dist/`).

use minijinja::value::Value;
use minijinja::{Environment, UndefinedBehavior};
use serde_json::json;

use super::{EmitError, EmitOptions, OutFile};
use crate::engine::{too_deep_message, BOM_MESSAGE, MAX_DEPTH, REPEATED_KEY_WHY, TOO_DEEP_WORDS};
use crate::ir::*;
use crate::rules::Rule;

pub(crate) mod evaluation;
pub(crate) mod js;
pub(crate) mod names;
pub(crate) mod package;
pub(crate) mod standalone;
pub(crate) mod types;
pub(crate) mod zod;

use js::{ident, jsdoc, json_lit, prop_key, string_lit, Code};

/// The Zod versions the package supports: a peer dependency. The package tests install the packed package next to
/// the lowest (4.1.0), the happy monorepo's (4.4.3) and the newest 4.x, type-check and run a consumer against each,
/// and hold every message to the same text. (Zod 4.0.x runs the package alike, but its `ZodDiscriminatedUnion`
/// takes one type parameter, not the two the declarations name.)
pub(crate) const ZOD_PEER_RANGE: &str = "^4.1.0";

/// The Zod the package is built and its tests run with (a dev dependency, pinned by the lockfile).
pub(crate) const ZOD_DEV_RANGE: &str = "^4.6.7";

const RUNTIME: &str = include_str!("../../templates/ts/runtime.ts.j2");
const ZOD_SUPPORT: &str = include_str!("../../templates/ts/zod-support.ts.j2");
const STANDALONE_SUPPORT: &str = include_str!("../../templates/ts/standalone-support.ts");
const EVALUATION: &str = include_str!("../../templates/ts/evaluation.ts.j2");
const VALUES: &str = include_str!("../../templates/ts/values.ts.j2");
const MATCHER: &str = include_str!("../../templates/ts/matcher.ts.j2");
const SCHEMAS: &str = include_str!("../../templates/ts/schemas.ts.j2");
const INDEX: &str = include_str!("../../templates/ts/index.ts.j2");
const ENVELOPE: &str = include_str!("../../templates/ts/envelope.ts.j2");
const STANDALONE: &str = include_str!("../../templates/ts/standalone.ts.j2");
const ZOD_MODULE: &str = include_str!("../../templates/ts/zod-module.ts.j2");
const STANDALONE_MODULE: &str = include_str!("../../templates/ts/standalone-module.ts.j2");
const UPGRADE: &str = include_str!("../../templates/ts/upgrade.ts.j2");

/// Names the package's `runtime.ts` exports besides the Zod support.
const PACKAGE_RUNTIME_NAMES: &[&str] =
    &["MAX_DEPTH", "newId", "depthError", "surrogateError", "scanJson", "parseLine", "readRejected"];

/// Names `runtime.ts` exports for the package's own modules only: `index.ts` does not re-export them, so they are
/// not part of the package's API.
const RUNTIME_INTERNAL: &[&str] = &["roleIssue", "depthError", "surrogateError", "depthWithin", "readRejected"];

/// The type-only names among the runtime's exports (`index.ts` re-exports them with `type`).
const RUNTIME_TYPES: &[&str] =
    &["Matcher", "RuleId", "WireError", "WireResult", "ObjectRest", "UnionTags", "RoleParams"];

/// Names `envelope.ts` exports (a package with a protocol layer).
const ENVELOPE_EXPORTS: &[&str] =
    &["checkEnvelope", "validateSessionLine", "validateSessionLineStandalone", "SessionWireError", "createEnvelope"];

/// Names `envelope.ts` holds of its own besides those it exports: what it declares and what it imports from the
/// runtime.
const ENVELOPE_OWN: &[&str] =
    &["checkParsed", "depthError", "surrogateError", "newId", "parseLine", "toWireErrors", "WireError", "WireResult"];

/// Names `upgrade.ts` exports (a package whose schema declares renames or moves).
const UPGRADE_EXPORTS: &[&str] = &["UpgradeLoss", "UpgradePlan", "UPGRADE_PLAN", "applyUpgradePlan", "upgrade"];

/// Names `upgrade.ts` declares for itself.
const UPGRADE_OWN: &[&str] =
    &["$Obj", "$isObj", "$has", "$rekey", "$esc", "$place", "$take", "$renameAt", "$renameAll"];

/// The runtime names `index.ts` re-exports, values and types, in the runtime's order: everything `runtime.ts`
/// exports except [`RUNTIME_INTERNAL`].
fn public_runtime() -> (Vec<&'static str>, Vec<&'static str>) {
    let exported =
        zod::RUNTIME_EXPORTS.iter().chain(PACKAGE_RUNTIME_NAMES).copied().filter(|n| !RUNTIME_INTERNAL.contains(n));
    exported.partition(|n| !RUNTIME_TYPES.contains(n))
}

/// Emits the package's files (paths relative to the output's directory).
///
/// # Errors
/// [`EmitError::UnsupportedAt`] when the model holds what the package cannot express exactly (see the README's
/// TypeScript section); [`EmitError::Template`] for a template bug.
pub(crate) fn emit_model(m: &Model, opts: &EmitOptions) -> Result<Vec<OutFile>, EmitError> {
    let plan = crate::upgrade::Plan::of(m).filter(|p| !p.is_empty());
    let stream_types = match &m.protocol {
        Some(p) => super::ts_stream::imported_types(m, p)?,
        None => Vec::new(),
    };
    names::check(m, &names::package(m, &stream_types, plan.is_some()))?;
    let env = environment()?;
    let header = Value::from(Code::from_pieces(format!("// {}", opts.generated_by())));
    let body = zod_declarations(m)?;
    let protocol = match &m.protocol {
        Some(p) => Some(protocol_view(m, p)?),
        None => None,
    };
    let code = without_comments_and_strings(&body);
    let imports: Vec<&str> = zod::RUNTIME_EXPORTS.iter().copied().filter(|n| uses(&code, n)).collect();
    let imports = if imports.is_empty() { vec!["$T"] } else { imports };
    let title = if m.title.is_empty() { m.package.npm_name.clone() } else { m.title.clone() };
    let schemas = env.get_template("schemas.ts")?.render(minijinja::context! {
        header => header.clone(),
        title_doc => Value::from(jsdoc_inline(&title)),
        imports => Value::from(Code::from_pieces(imports.join(", "))),
        body => Value::from(Code::from_pieces(body.trim_end().to_string())),
        protocol => protocol.clone(),
    })?;
    let runtime = env.get_template("runtime.ts")?.render(minijinja::context! {
        header => header.clone(),
        support => Value::from(zod_support(&env)?),
        max_depth => MAX_DEPTH,
        too_deep_before => TOO_DEEP_WORDS.0,
        too_deep_after => TOO_DEEP_WORDS.1,
        bom_message => BOM_MESSAGE,
        repeated_key_why => REPEATED_KEY_WHY,
    })?;
    let mut sa = standalone::Standalone::new(m);
    let sa_body = sa.body()?;
    let type_names: Vec<String> = m.types.iter().map(|t| t.names.ts.clone()).collect();
    let support = standalone_support(&env)?;
    let standalone = env.get_template("standalone.ts")?.render(minijinja::context! {
        header => header.clone(),
        protocol => m.protocol.is_some(),
        type_names => Value::from(Code::from_pieces(type_names.join(", "))),
        support => Value::from(support.clone()),
        body => Value::from(sa_body),
        types => standalone_types(m)?,
    })?;
    let standalone = only_used_support(&standalone, support.as_str());
    let mut files = package::files(m, opts, &Code::from_pieces(format!("// {}", opts.generated_by())))?;
    files.extend([
        OutFile::new("src/runtime.ts", runtime),
        OutFile::new("src/schemas.ts", schemas),
        OutFile::new("src/standalone.ts", standalone),
    ]);
    // The stream checker, for a model with a protocol layer.
    if let Some(p) = &m.protocol {
        files.extend(super::ts_stream::emit(m, p, opts)?);
    }
    // The upcaster, when the schema declares renames or moves.
    if let Some(plan) = &plan {
        let upgrade = env.get_template("upgrade.ts")?.render(minijinja::context! {
            header => header.clone(),
            plan => Value::from_safe_string(js::js_safe(
                serde_json::to_string_pretty(&upgrade_plan_json(plan)).unwrap_or_else(|_| String::from("null")),
            )),
        })?;
        files.push(OutFile::new("src/upgrade.ts", upgrade));
    }
    let view = index_view(m, &header, m.protocol.is_some())?;
    if m.protocol.is_some() {
        files.push(OutFile::new("src/envelope.ts", env.get_template("envelope.ts")?.render(&view)?));
    }
    let index_view = minijinja::context! { upgrade => plan.is_some(), ..view };
    files.push(OutFile::new("src/index.ts", env.get_template("index.ts")?.render(&index_view)?));
    Ok(files)
}

/// The upgrade plan as the TypeScript module's `UPGRADE_PLAN` object.
fn upgrade_plan_json(p: &crate::upgrade::Plan) -> serde_json::Value {
    json!({
        "unionField": p.union_field,
        "discriminator": p.discriminator,
        "events": p.events.iter().map(|(a, b)| json!([a, b])).collect::<Vec<_>>(),
        "moves": p.moves.iter().map(|m| json!({"event": m.event, "from": m.from, "to": m.to, "required": m.required})).collect::<Vec<_>>(),
        "renames": p.renames.iter().map(|r| json!({"event": r.event, "at": r.at, "from": r.from, "to": r.to})).collect::<Vec<_>>(),
    })
}

/// Generated TypeScript with its comments and string literals blanked out (each byte a space, so nothing else
/// moves): a description that says "present" or "not" does not make the module import `present` or `not`.
fn without_comments_and_strings(code: &str) -> String {
    let b = code.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        let end = match (b[i], b.get(i + 1)) {
            (b'/', Some(b'/')) => b[i..].iter().position(|c| *c == b'\n').map_or(b.len(), |n| i + n),
            (b'/', Some(b'*')) => code[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2),
            (q @ (b'"' | b'\''), _) => {
                let mut j = i + 1;
                while j < b.len() && b[j] != q {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                (j + 1).min(b.len())
            }
            _ => {
                i += 1;
                continue;
            }
        };
        blank(&mut out, i, end);
        i = end;
    }
    // Every blanked byte (a multi-byte character's too) became an ASCII space: the text is still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// Whether `code` mentions the identifier `name` (as a whole word).
fn uses(code: &str, name: &str) -> bool {
    let bytes = code.as_bytes();
    let is_id = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let mut from = 0;
    while let Some(i) = code[from..].find(name) {
        let s = from + i;
        let e = s + name.len();
        let before = s == 0 || !is_id(bytes[s - 1]);
        let after = e >= bytes.len() || !is_id(bytes[e]);
        // `x.name` is a property, not the binding; so is the key of `{ name: ... }` or `, name: ...`.
        let member = s > 0 && bytes[s - 1] == b'.';
        let next = code[e..].trim_start().as_bytes();
        let prev = code[..s].trim_end().as_bytes().last();
        let key = next.first() == Some(&b':') && matches!(prev, Some(b'{' | b','));
        if before && after && !member && !key {
            return true;
        }
        from = e;
    }
    false
}

fn standalone_types(m: &Model) -> Result<Vec<Value>, EmitError> {
    let mut out = Vec::new();
    let unbounded = standalone::unbounded(m);
    let too_deep = json!({"pointer": "", "rule": Rule::TooDeep.id(), "message": too_deep_message()});
    for (i, t) in m.types.iter().enumerate() {
        let (validate, guard) = standalone::names(&t.names)?;
        out.push(minijinja::context! {
            name => Value::from(ident(&t.names.ts).map_err(|e| e.or_at(&t.names.at.ts))?),
            validate => Value::from(validate),
            guard => Value::from(guard),
            check => Value::from(Code::from_pieces(format!("check${}", m.ty(TypeId(i)).names.ts))),
            depth_guard => unbounded[i].then(|| Value::from(Code::from_pieces(format!(
                "if (!$depthWithin(value, {MAX_DEPTH})) return [{}];",
                json_lit(&too_deep)
            )))),
            doc => Value::from(jsdoc(t.description.as_deref().unwrap_or(&format!("The `{}` type.", t.names.ts)), 0)),
        });
    }
    Ok(out)
}

/// The Zod module of `wiregen types --lang zod`: every type's schema and type (a single file's root is
/// `rootSchema`/`Root`), with the runtime it needs inlined; it imports only `zod`.
///
/// # Errors
/// When the model holds what the Zod schemas cannot express exactly.
pub(crate) fn zod_module(m: &Model) -> Result<String, EmitError> {
    names::check(m, &names::zod_module(m))?;
    let env = environment()?;
    let body = zod_declarations(m)?;
    Ok(env.get_template("zod-module.ts")?.render(minijinja::context! {
        header => header("wiregen types --lang zod"),
        support => Value::from(zod_support(&env)?),
        body => Value::from(Code::from_pieces(body.trim_end().to_string())),
    })?)
}

/// Every type's Zod declaration (schema and type), in dependency order, the envelope's with the role check.
fn zod_declarations(m: &Model) -> Result<String, EmitError> {
    let mut zod = zod::ZodEmit::new(m);
    let roles = match &m.protocol {
        Some(p) => Some((p.envelope, zod::role_check(m, p)?)),
        None => None,
    };
    let mut body = Vec::new();
    for id in zod.order().ids.clone() {
        let r = roles.as_ref().filter(|(e, _)| *e == id).map(|(_, c)| c);
        body.push(zod.decl(id, r)?.code.to_string());
    }
    Ok(body.join("\n"))
}

/// The standalone module of `wiregen types --lang ts-standalone`: `validate<Type>(value)` and `is<Type>(value)`
/// for every type (a single file's root gives `validateRoot`), with the types and helpers inlined; it imports
/// nothing.
///
/// # Errors
/// When the model holds what the validator cannot express exactly.
pub(crate) fn standalone_module(m: &Model) -> Result<String, EmitError> {
    let env = environment()?;
    names::check(m, &names::standalone_module(m))?;
    let mut sa = standalone::Standalone::new(m);
    let body = sa.body()?;
    let mut types_view = standalone_types(m)?;
    let facts = types::TypeFacts::of(m);
    let name = |id: TypeId| Code::from_pieces(m.ty(id).names.ts.clone());
    let writer = types::TsTypes::new(m, &facts, &name);
    for (i, t) in m.types.iter().enumerate() {
        let ty = writer.ty(&t.node)?;
        let mut map: std::collections::BTreeMap<String, Value> = std::collections::BTreeMap::new();
        for key in ["name", "validate", "guard", "check", "doc", "depth_guard"] {
            map.insert(key.into(), types_view[i].get_attr(key)?);
        }
        map.insert("ty".into(), Value::from(ty));
        let aliases: Result<Vec<Value>, EmitError> =
            t.aliases.iter().map(|a| ident(&a.ts).map(Value::from).map_err(|e| e.or_at(&a.at.ts))).collect();
        map.insert("aliases".into(), Value::from(aliases?));
        types_view[i] = Value::from(map);
    }
    let support = standalone_support(&env)?;
    let module = env.get_template("standalone-module.ts")?.render(minijinja::context! {
        header => header("wiregen types --lang ts-standalone"),
        support => Value::from(support.clone()),
        body => Value::from(body),
        types => types_view,
    })?;
    Ok(only_used_support(&module, support.as_str()))
}

/// `module` with its copy of the standalone runtime (`support`) cut to the declarations it uses: each top-level
/// declaration of the runtime (with the doc comment above it) stays when the rest of the module or a declaration
/// that stays names it. A module that holds the validators of a schema without patterns or `unevaluated*` keeps no
/// helper it never calls, which TypeScript's `noUnusedLocals` would refuse.
fn only_used_support(module: &str, support: &str) -> String {
    let rest = without_comments_and_strings(&module.replacen(support, "", 1));
    // (name, text) per declaration, in order; a comment at the margin belongs to the declaration below it.
    let mut decls: Vec<(String, String)> = Vec::new();
    let mut comment = String::new();
    let mut in_comment = false;
    for line in support.lines() {
        let starts_comment = line.starts_with("/**") || line.starts_with("//");
        if in_comment || starts_comment {
            in_comment =
                if starts_comment { line.starts_with("/**") && !line.contains("*/") } else { !line.contains("*/") };
            comment.push_str(line);
            comment.push('\n');
            continue;
        }
        let name = ["function ", "type ", "const ", "let ", "interface "]
            .iter()
            .find_map(|k| line.strip_prefix(k))
            .and_then(|r| r.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$')).next())
            .filter(|n| !n.is_empty());
        match (name, decls.last_mut()) {
            (Some(name), _) => decls.push((name.to_string(), std::mem::take(&mut comment))),
            (None, None) => {
                comment.push_str(line);
                comment.push('\n');
                continue;
            }
            (None, Some(_)) => {}
        }
        if let Some((_, text)) = decls.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    let code: Vec<String> = decls.iter().map(|(_, t)| without_comments_and_strings(t)).collect();
    let mut keep: Vec<bool> = decls.iter().map(|(n, _)| uses(&rest, n)).collect();
    loop {
        let before = keep.clone();
        for (i, (name, _)) in decls.iter().enumerate() {
            keep[i] = keep[i] || (0..decls.len()).any(|j| j != i && before[j] && uses(&code[j], name));
        }
        if keep == before {
            break;
        }
    }
    let kept: Vec<&str> = decls.iter().zip(&keep).filter(|(_, k)| **k).map(|((_, t), _)| t.trim_end()).collect();
    module.replacen(support, &kept.join("\n\n"), 1)
}

/// The Zod runtime (`zod-support.ts`), with the rule catalogue.
fn zod_support(env: &Environment<'static>) -> Result<Code, EmitError> {
    let s = env.get_template("zod-support.ts")?.render(minijinja::context! {
        rule_ids => Rule::ALL.iter().map(|r| r.id()).collect::<Vec<_>>(),
        listed_values => crate::engine::LISTED_VALUES,
        values => Value::from(support_part(env, "values.ts", "", true)?),
        matcher => Value::from(support_part(env, "matcher.ts", "", true)?),
        evaluation => Value::from(evaluation_support(env, "", "isPlainObject")?),
    })?;
    Ok(Code::from_pieces(s.trim_end().to_string()))
}

/// The standalone validator's runtime (`standalone-support.ts`), with the evaluation plan's interpreter.
fn standalone_support(env: &Environment<'static>) -> Result<Code, EmitError> {
    let values = support_part(env, "values.ts", "$", false)?;
    let matcher = support_part(env, "matcher.ts", "$", false)?;
    let evaluation = evaluation_support(env, "$", "$isObject")?;
    Ok(Code::from_pieces(format!(
        "{}\n\n{}\n\n{}\n\n{}",
        STANDALONE_SUPPORT.trim_end(),
        values.as_str(),
        matcher.as_str(),
        evaluation.as_str()
    )))
}

/// A part both runtimes share (`values.ts`: code points, a value's kind for messages, JSON equality; `matcher.ts`:
/// the patterns' linear-time matcher), its names prefixed with `prefix`, exported from the Zod runtime (`export`).
fn support_part(env: &Environment<'static>, template: &str, prefix: &str, export: bool) -> Result<Code, EmitError> {
    let s = env.get_template(template)?.render(minijinja::context! {
        p => Value::from(Code::from_pieces(prefix.to_string())),
        export => Value::from(Code::from_pieces(if export { "export " } else { "" }.to_string())),
    })?;
    Ok(Code::from_pieces(s.trim_end().to_string()))
}

/// The interpreter of the evaluation plan literal ([`evaluation`]) that both runtimes run (`evaluation.ts`): its
/// names prefixed with `prefix`, objects told by the runtime's `object` test.
fn evaluation_support(env: &Environment<'static>, prefix: &str, object: &str) -> Result<Code, EmitError> {
    let s = env.get_template("evaluation.ts")?.render(minijinja::context! {
        p => Value::from(Code::from_pieces(prefix.to_string())),
        object => Value::from(Code::from_pieces(object.to_string())),
    })?;
    Ok(Code::from_pieces(s.trim_end().to_string()))
}

/// The `@generated` comment of a module printed by `command`.
fn header(command: &str) -> Value {
    let opts = EmitOptions { regenerate: command.to_string() };
    Value::from(Code::from_pieces(format!("// {}", opts.generated_by())))
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
    env.add_template("upgrade.ts", UPGRADE)?;
    env.add_template("zod-support.ts", ZOD_SUPPORT)?;
    env.add_template("evaluation.ts", EVALUATION)?;
    env.add_template("values.ts", VALUES)?;
    env.add_template("matcher.ts", MATCHER)?;
    env.add_template("schemas.ts", SCHEMAS)?;
    env.add_template("index.ts", INDEX)?;
    env.add_template("envelope.ts", ENVELOPE)?;
    env.add_template("standalone.ts", STANDALONE)?;
    env.add_template("zod-module.ts", ZOD_MODULE)?;
    env.add_template("standalone-module.ts", STANDALONE_MODULE)?;
    Ok(env)
}

/// A union of string literal types (`"a" | "b"`).
fn literal_union(names: &[&str]) -> Code {
    let lits: Vec<Code> = names.iter().map(|n| string_lit(n)).collect();
    Code::join(&lits, " | ")
}

/// Lower-cases the first letter (`SessionEvent` -> `sessionEvent`).
fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The names of the protocol's tables and types, from the union's and the envelope's TypeScript names:
/// `<union>Tags`, `<union>Roles`, `<prefix>Removed<base>s`, `<Union>ForRole`, `<Envelope>Options` (for the v2
/// protocol: `sessionEventTags`, `sessionEventRoles`, `sessionRemovedEvents`, `SessionEventForRole`,
/// `SessionEnvelopeOptions`).
pub(crate) struct ProtocolNames<T = Code> {
    pub(crate) tags: T,
    pub(crate) roles: T,
    pub(crate) removed: T,
    pub(crate) for_role: T,
    pub(crate) options: T,
}

/// The names as code: [`names::check`] has checked them (with every other name the package declares) before any
/// module is written.
pub(crate) fn protocol_names(m: &Model, p: &Protocol) -> ProtocolNames {
    let n = protocol_name_strings(m, p);
    ProtocolNames {
        tags: Code::from_pieces(n.tags),
        roles: Code::from_pieces(n.roles),
        removed: Code::from_pieces(n.removed),
        for_role: Code::from_pieces(n.for_role),
        options: Code::from_pieces(n.options),
    }
}

/// [`ProtocolNames`] as they are made, unchecked ([`names::check`] checks them).
pub(crate) fn protocol_name_strings(m: &Model, p: &Protocol) -> ProtocolNames<String> {
    let u = m.ty(p.union);
    let ts = &u.names.ts;
    let removed = match ts.strip_suffix(&u.names.base) {
        Some(prefix) => lower_first(&format!("{prefix}Removed{}s", u.names.base)),
        None => format!("{}Removed", lower_first(ts)),
    };
    ProtocolNames {
        tags: format!("{}Tags", lower_first(ts)),
        roles: format!("{}Roles", lower_first(ts)),
        removed,
        for_role: format!("{ts}ForRole"),
        options: format!("{}Options", m.ty(p.envelope).names.ts),
    }
}

/// The envelope's object shape.
fn envelope_object<'a>(m: &'a Model, p: &Protocol) -> Result<&'a ObjectShape, EmitError> {
    let env = m.ty(p.envelope);
    match &env.node.shape {
        Shape::Object(o) => Ok(o),
        _ => Err(EmitError::at(&env.origin, "`createEnvelope` needs the envelope to be a plain object")),
    }
}

fn protocol_view(m: &Model, p: &Protocol) -> Result<Value, EmitError> {
    let names = protocol_names(m, p);
    let u = m.ty(p.union);
    let disc = p.discriminator(m);
    let role_type = Code::from_pieces(m.ty(p.role_enum).names.ts.clone());
    let tags: Vec<&str> = p.events.iter().map(|e| e.tag.as_str()).collect();
    let mut removed = serde_json::Map::new();
    for r in &p.removed {
        if let RemovedKind::Events(evs) = &r.kind {
            for (old, rep) in evs {
                removed.insert(old.clone(), json!(rep));
            }
        }
    }
    let mut events = Vec::new();
    for e in &p.events {
        events.push(minijinja::context! {
            key => Value::from(prop_key(&e.tag).map_err(|x| x.or_at(&u.origin))?),
            roles => Value::from(json_lit(&json!(e.roles))),
        });
    }
    let env = envelope_object(m, p)?;
    let env_ts = &m.ty(p.envelope).names.ts;
    let allowed = |list: &[(String, Vec<String>)], name: &str, role: &str| {
        list.iter().find(|(n, _)| n == name).is_none_or(|(_, r)| r.iter().any(|x| x == role))
    };
    let mut per_role = Vec::new();
    for role in &p.roles {
        let mut members = Vec::new();
        for e in p.events.iter().filter(|e| e.roles.iter().any(|r| r == role)) {
            let ty = &m.ty(e.ty).names.ts;
            let forbidden: Vec<&str> =
                e.field_roles.iter().filter(|(_, r)| !r.iter().any(|x| x == role)).map(|(n, _)| n.as_str()).collect();
            members.push(if forbidden.is_empty() {
                Code::from_pieces(ty.clone())
            } else {
                // The event's type without the forbidden fields, as `Omit` would write it but keeping an index
                // signature: `Omit` kept nothing of an open event but its index signature (`{ [key: string]:
                // unknown }` took any object as the event). A type with the fields (a `SessionEvent` of no
                // particular role) is still assignable to it, as happy-wire's callers rely on.
                Code::from_pieces(format!(
                    "{{ [P in keyof {ty} as P extends {} ? never : P]: {ty}[P] }}",
                    literal_union(&forbidden)
                ))
            });
        }
        let events_ty =
            if members.is_empty() { Code::from_pieces("never".into()) } else { Code::join(&members, " | ") };
        let others: Vec<&Field> = env
            .fields
            .iter()
            .filter(|f| f.name != p.role_field && f.name != p.union_field)
            .filter(|f| allowed(&p.envelope_field_roles, &f.name, role))
            .collect();
        let auto = |f: &Field| p.auto.iter().any(|(n, _)| n == &f.name);
        let optional: Vec<&str> = others.iter().filter(|f| !f.required || auto(f)).map(|f| f.name.as_str()).collect();
        let required: Vec<&str> = others.iter().filter(|f| f.required && !auto(f)).map(|f| f.name.as_str()).collect();
        let mut parts = Vec::new();
        if !optional.is_empty() {
            // Each `?: T | undefined`, as every optional property of the package is: `createEnvelope` takes an
            // option set to `undefined` for absent, and `Partial<Pick<..>>` of a required `x-auto` property (`id`)
            // refused that under `exactOptionalPropertyTypes` (helper 116).
            parts.push(Code::from_pieces(format!(
                "{{ [P in {}]?: {env_ts}[P] | undefined }}",
                literal_union(&optional)
            )));
        }
        if !required.is_empty() {
            parts.push(Code::from_pieces(format!("Pick<{env_ts}, {}>", literal_union(&required))));
        }
        let options_ty = if parts.is_empty() {
            Code::from_pieces("Record<string, never>".into())
        } else {
            Code::join(&parts, " & ")
        };
        per_role.push(minijinja::context! {
            key => Value::from(prop_key(role).map_err(|x| x.or_at(&m.ty(p.role_enum).origin))?),
            events => Value::from(events_ty),
            options => Value::from(options_ty),
        });
    }
    Ok(minijinja::context! {
        tag => disc.to_string(),
        tag_plain => Value::from(jsdoc_inline(disc)),
        tags_name => Value::from(names.tags),
        tags => tags,
        removed_name => Value::from(names.removed),
        removed => Value::from(json_lit(&serde_json::Value::Object(removed))),
        roles_name => Value::from(names.roles),
        events => events,
        union_type => Value::from(Code::from_pieces(u.names.ts.clone())),
        role_type => Value::from(role_type),
        for_role_name => Value::from(names.for_role),
        options_name => Value::from(names.options),
        per_role => per_role,
    })
}

/// Text for the middle of a doc comment line: no line breaks, no `*/`, no `@` that could start a tag.
fn jsdoc_inline(s: &str) -> Code {
    Code::from_pieces(s.replace(['\n', '\r', '\u{2028}', '\u{2029}'], " ").replace("*/", "*\\/").replace('@', "\\@"))
}

fn index_view(m: &Model, header: &Value, stream: bool) -> Result<Value, EmitError> {
    let title = if m.title.is_empty() { m.package.npm_name.clone() } else { m.title.clone() };
    let protocol = match &m.protocol {
        None => None,
        Some(p) => {
            let names = protocol_names(m, p);
            let env = m.ty(p.envelope);
            let obj = envelope_object(m, p)?;
            let mut auto = Vec::new();
            for (name, what) in &p.auto {
                let f = obj.fields.iter().find(|f| &f.name == name).ok_or_else(|| {
                    EmitError::at(&env.origin, format!("`x-auto` names `{name}`, which the envelope does not declare"))
                })?;
                let fits = matches!(
                    (what, m.resolve(&f.node.shape)),
                    (AutoValue::Id, Shape::String(_)) | (AutoValue::Now, Shape::Number(_))
                );
                if !fits {
                    return Err(EmitError::at(
                        &f.node.origin,
                        "`x-auto` fills an id into a string and the time into a number; this property is neither",
                    ));
                }
                auto.push(minijinja::context! {
                    key => name.clone(),
                    doc => Value::from(jsdoc_inline(name)),
                    value => Value::from(Code::from_pieces(match what {
                        AutoValue::Id => "newId()".into(),
                        AutoValue::Now => "Date.now()".into(),
                    })),
                    what => Value::from(Code::from_pieces(match what {
                        AutoValue::Id => "a fresh cuid2-shaped id ({@link newId})".to_string(),
                        AutoValue::Now => "`Date.now()`".to_string(),
                    })),
                });
            }
            let (validate, _) = standalone::names(&env.names)?;
            Some(minijinja::context! {
                envelope_schema => Value::from(Code::from_pieces(env.names.zod.clone())),
                envelope_type => Value::from(Code::from_pieces(env.names.ts.clone())),
                options_type => Value::from(names.options),
                for_role_type => Value::from(names.for_role),
                role_type => Value::from(Code::from_pieces(m.ty(p.role_enum).names.ts.clone())),
                standalone_validate => Value::from(validate),
                role_key => p.role_field.clone(),
                union_key => p.union_field.clone(),
                auto => auto,
            })
        }
    };
    let (runtime_values, runtime_types) = public_runtime();
    let codes = |names: Vec<&str>| -> Vec<Value> {
        names.into_iter().map(|n| Value::from(Code::from_pieces(n.to_string()))).collect()
    };
    Ok(minijinja::context! {
        header => header.clone(),
        package => Value::from(jsdoc_inline(&m.package.npm_name)),
        title_doc => Value::from(jsdoc_inline(&title)),
        stream => stream,
        protocol => protocol,
        runtime_values => codes(runtime_values),
        runtime_types => codes(runtime_types),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `src` declares `name` (a function, constant, type or interface).
    fn declares(src: &str, name: &str) -> bool {
        [
            "function {}(",
            "function {}<",
            "const {} ",
            "const {}:",
            "type {} ",
            "type {}<",
            "interface {} ",
            "interface {}<",
        ]
        .iter()
        .any(|form| src.contains(&form.replace("{}", name)))
    }

    #[test]
    fn the_runtime_names_are_the_runtimes() {
        let env = environment().unwrap();
        let runtime = zod_support(&env).unwrap();
        for n in zod::runtime_names().filter(|n| *n != "z") {
            assert!(declares(runtime.as_str(), n), "{n} is declared by the Zod runtime");
        }
        let standalone = standalone_support(&env).unwrap();
        for n in standalone::RUNTIME_NAMES {
            assert!(declares(standalone.as_str(), n), "{n} is declared by the standalone runtime");
        }
    }

    /// The names a runtime declares at its top level (`function`, `const`, `let`, `type`, `interface`, exported or
    /// not).
    fn top_level_names(src: &str) -> Vec<&str> {
        src.lines()
            .filter_map(|l| {
                let l = l.strip_prefix("export ").unwrap_or(l);
                let rest =
                    ["function ", "const ", "let ", "type ", "interface "].iter().find_map(|k| l.strip_prefix(k))?;
                let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).unwrap_or(rest.len());
                Some(&rest[..end])
            })
            .collect()
    }

    /// The other way round: a name a runtime declares that the lists lack is no reserved name, so a type of that
    /// name made a module that declares it twice (a `$defs` type `Evaluation` beside `unevaluatedProperties`).
    #[test]
    fn the_runtimes_names_are_listed() {
        let env = environment().unwrap();
        let runtime = zod_support(&env).unwrap();
        let names = top_level_names(runtime.as_str());
        assert!(names.contains(&"objectWith") && names.contains(&"Evaluation"), "{names:?}");
        for n in names {
            assert!(
                zod::runtime_names().any(|x| x == n),
                "the Zod runtime declares `{n}`: add it to RUNTIME_EXPORTS or RUNTIME_PRIVATE"
            );
        }
        let standalone = standalone_support(&env).unwrap();
        for n in top_level_names(standalone.as_str()) {
            assert!(
                standalone::RUNTIME_NAMES.contains(&n),
                "the standalone runtime declares `{n}`: add it to RUNTIME_NAMES"
            );
        }
    }

    /// A runtime name in a comment or a string is not a use of it; in code it is.
    #[test]
    fn names_in_comments_and_strings_are_not_uses() {
        let code = "/** Present when `not` set. */\nconst a = z.string().describe(\"not \\\"present\\\" é\"); // present\nconst b = not(a);";
        let blanked = without_comments_and_strings(code);
        assert_eq!(blanked.len(), code.len());
        assert!(!uses(&blanked, "present"), "{blanked}");
        assert!(uses(&blanked, "not"), "{blanked}");
        assert!(blanked.contains("const b = not(a);"));
        assert!(uses(&blanked, "z") && !uses(&blanked, "describe"));
    }

    #[test]
    fn whole_word_uses() {
        assert!(uses("closed({}, unknownKeys(\"x\", {}))", "closed"));
        assert!(!uses("notclosed(1)", "closed"));
        assert!(!uses("z.number(T).check(isInt)", "number"));
        assert!(uses("z.number(T).check(isInt)", "isInt"));
        // A key of an object literal is not a use (the record `{ declared: [], dependent: [] }` of a
        // `dependentRequired` made the module import `dependent`); a value, a shorthand key or a ternary's is.
        assert!(!uses("f({ declared: [], dependent: [[\"a\", [\"b\"]]] })", "dependent"));
        assert!(!uses("f({ dependent : 1 })", "dependent"));
        assert!(uses("f({ d: dependent })", "dependent"));
        assert!(uses("f({ dependent })", "dependent"));
        assert!(uses("f(a ? dependent : b)", "dependent"));
    }
}
