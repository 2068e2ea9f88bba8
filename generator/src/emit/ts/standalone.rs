//! `src/standalone.ts`: a dependency-free validator of the envelope, in the spirit of ajv's standalone code.
//!
//! Straight-line code from the [`Protocol`] model, nothing interpreted at run time: one function per closed object
//! (shared object, event, envelope) with direct property reads and `typeof` checks, integer and bound checks, a
//! `switch` on the discriminator, a `for ... in` over the keys with a `switch` of the known ones (closed objects),
//! and the role rules as a `switch` on the event plus per-field conditions. It follows the engine's order
//! ([`crate::engine`], [`crate::rules`]): fields in schema order, each in depth, then unknown keys in the object's
//! key order, role rules only once the shape is valid, so its errors (rule id and pointer) are the engine's.
//!
//! The module imports only types, so it runs without Zod. Strict ids (`x-strict-pattern`) are not checked, like
//! the Zod schemas. Every name and literal goes through [`super::js`]: property names, tags and enum values are
//! string literals, pointers are escaped at generation time ([`crate::diag::push_ptr`]).

use super::js::{ident, int_lit, number_lit, string_lit, Code};
use super::{EmitError, Names};
use crate::diag::push_ptr;
use crate::legacy::ir::{Field, Protocol, Ty};
use crate::rules::Rule;

/// Properties of `Object.prototype`: reading one of these names from a plain object finds the inherited value,
/// so the generated code reads them only when they are own properties.
const INHERITED: &[&str] = &[
    "__proto__",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    "constructor",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
    "toString",
    "valueOf",
];

/// The public names of the standalone module.
pub(crate) struct StandaloneNames {
    /// `validate<Envelope>`: the list of errors.
    pub validate: Code,
    /// `is<Envelope>`: the type guard.
    pub guard: Code,
}

/// The names `validateSessionEnvelope` and `isSessionEnvelope`, from the envelope's type name.
pub(super) fn names(n: &Names) -> Result<StandaloneNames, EmitError> {
    let ty = n.envelope.1.as_str();
    Ok(StandaloneNames { validate: ident(&format!("validate{ty}"))?, guard: ident(&format!("is{ty}"))? })
}

/// Lines of code with indentation.
#[derive(Default)]
struct W {
    out: String,
    depth: usize,
}

impl W {
    fn line(&mut self, code: impl AsRef<str>) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(code.as_ref());
        self.out.push('\n');
    }
    fn open(&mut self, code: impl AsRef<str>) {
        self.line(code);
        self.depth += 1;
    }
    fn close(&mut self, code: impl AsRef<str>) {
        self.depth -= 1;
        self.line(code);
    }
}

/// A pointer expression: the function's `p` parameter plus an escaped suffix, or a constant.
#[derive(Clone)]
enum Ptr {
    /// `p + "/a/b"` (just `p` when the suffix is empty).
    Param(String),
    /// A constant pointer.
    Const(String),
}

impl Ptr {
    fn key(&self, name: &str) -> Ptr {
        match self {
            Ptr::Param(s) => Ptr::Param(push_ptr(s, name)),
            Ptr::Const(s) => Ptr::Const(push_ptr(s, name)),
        }
    }
    fn expr(&self) -> Code {
        match self {
            Ptr::Param(s) if s.is_empty() => Code::from_pieces("p".into()),
            Ptr::Param(s) => Code::from_pieces(format!("p + {}", string_lit(s))),
            Ptr::Const(s) => string_lit(s),
        }
    }
    /// The pointer of an unknown key held in `k`.
    fn dynamic_key(&self) -> Code {
        match self {
            Ptr::Param(s) => Code::from_pieces(format!("p + {} + $esc(k)", string_lit(&format!("{s}/")))),
            Ptr::Const(s) => Code::from_pieces(format!("{} + $esc(k)", string_lit(&format!("{s}/")))),
        }
    }
}

/// Reads property `name` of the object in `obj`: `o.name`, `o["a-b"]`, or an own-property read for a name
/// `Object.prototype` has.
fn read(obj: &str, name: &str) -> Code {
    if INHERITED.contains(&name) {
        return Code::from_pieces(format!("$own({obj}, {})", string_lit(name)));
    }
    match ident(name) {
        Ok(id) => Code::from_pieces(format!("{obj}.{id}")),
        Err(_) => Code::from_pieces(format!("{obj}[{}]", string_lit(name))),
    }
}

fn rule(r: Rule) -> Code {
    string_lit(r.id())
}

/// `$e(out, pointer, rule, message)`.
fn push(ptr: &Code, r: Rule, message: &Code) -> String {
    format!("$e(out, {ptr}, {}, {message});", rule(r))
}

fn quoted_list(vals: &[String]) -> String {
    vals.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
}

fn check_fn(type_name: &Code) -> Result<Code, EmitError> {
    ident(&format!("check${type_name}"))
}

/// The checks of one value `v` of type `ty` at `ptr` (statements).
fn value(w: &mut W, ty: &Ty, ptr: &Ptr, p: &Protocol, names: &Names) -> Result<(), EmitError> {
    let pe = ptr.expr();
    let type_err = |expected: &str| format!("$type(out, {pe}, {}, v);", string_lit(expected));
    match ty {
        Ty::String(s) => {
            w.line(format!("if (typeof v !== \"string\") {}", type_err("a string")));
            let min = s.min_length.unwrap_or(0);
            if min > 0 {
                // UTF-16 length >= code points >= length / 2: count code points only when it can matter.
                let cond = if min == 1 {
                    "v.length === 0".to_string()
                } else {
                    format!("v.length < {} && $chars(v) < {}", int_lit(2 * min as i64), int_lit(min as i64))
                };
                let msg = string_lit(&format!("must be at least {min} character(s) long"));
                w.line(format!("else if ({cond}) {}", push(&pe, Rule::MinLength, &msg)));
            }
        }
        Ty::Integer { minimum, maximum } => {
            w.line(format!("if (typeof v !== \"number\" || !Number.isInteger(v)) {}", type_err("an integer")));
            let min_msg = string_lit(&format!("must be at least {minimum}"));
            let max_msg = string_lit(&format!("must be at most {maximum}"));
            w.line(format!("else if (v < {}) {}", int_lit(*minimum), push(&pe, Rule::Minimum, &min_msg)));
            w.line(format!("else if (v > {}) {}", int_lit(*maximum), push(&pe, Rule::Maximum, &max_msg)));
        }
        Ty::Number { minimum } => {
            w.line(format!("if (typeof v !== \"number\" || !Number.isFinite(v)) {}", type_err("a number")));
            if let Some(min) = minimum {
                let msg = string_lit(&format!("must be at least {min}"));
                w.line(format!("else if (v < {}) {}", number_lit(*min)?, push(&pe, Rule::Minimum, &msg)));
            }
        }
        Ty::Boolean => w.line(format!("if (typeof v !== \"boolean\") {}", type_err("a boolean"))),
        Ty::Enum(name) => {
            let e = p
                .enums
                .get(name)
                .ok_or_else(|| EmitError::Unsupported(format!("enum `{name}` is not in the model")))?;
            w.line(format!("if (typeof v !== \"string\") {}", type_err("a string")));
            if e.values.is_empty() {
                w.line("else {");
            } else {
                let conds: Vec<String> = e.values.iter().map(|x| format!("v !== {}", string_lit(x))).collect();
                w.line(format!("else if ({}) {{", conds.join(" && ")));
            }
            let msg = Code::from_pieces(format!(
                "{} + v + {}",
                string_lit("`"),
                string_lit(&format!("` is not one of {}", quoted_list(&e.values)))
            ));
            w.line(format!("  {}", push(&pe, Rule::Enum, &msg)));
            w.line("}");
        }
        Ty::Object(name) => {
            let (_, ty_name) = names
                .objects
                .get(name)
                .ok_or_else(|| EmitError::Unsupported(format!("object `{name}` is not in the model")))?;
            w.line(format!("if (!$isObject(v)) {}", type_err("an object")));
            w.line(format!("else {}(v, {pe}, out);", check_fn(ty_name)?));
        }
        Ty::AnyObject => w.line(format!("if (!$isObject(v)) {}", type_err("an object"))),
        Ty::Union => {
            w.line(format!("if (!$isObject(v)) {}", type_err("an object")));
            w.line(format!("else {}(v, {pe}, out);", check_fn(&names.union.1)?));
        }
    }
    Ok(())
}

/// The body of a closed object's check: fields in schema order, then unknown keys (`tag` is the discriminator
/// name and value of an event).
fn object_body(
    w: &mut W,
    fields: &[Field],
    ptr: &Ptr,
    tag: Option<(&str, &str)>,
    p: &Protocol,
    names: &Names,
) -> Result<(), EmitError> {
    for f in fields {
        let fp = ptr.key(&f.name);
        w.open("{");
        w.line(format!("const v = {};", read("o", &f.name)));
        if f.required {
            let msg = string_lit(&format!("missing required property `{}`", f.name));
            w.line(format!("if (v === undefined) {}", push(&fp.expr(), Rule::Required, &msg)));
            w.open("else {");
        } else {
            w.open("if (v !== undefined) {");
        }
        value(w, &f.ty, &fp, p, names)?;
        w.close("}");
        w.close("}");
    }
    // Unknown keys, in the object's key order: known keys end the case at once.
    w.open("for (const k in o) {");
    w.open("switch (k) {");
    let mut known: Vec<&str> = Vec::new();
    if let Some((t, _)) = tag {
        known.push(t);
    }
    known.extend(fields.iter().map(|f| f.name.as_str()));
    for k in &known {
        w.line(format!("case {}:", string_lit(k)));
    }
    if !known.is_empty() {
        w.line("  continue;");
    }
    if let Some((_, tag_value)) = tag {
        for r in &p.removed {
            if let crate::legacy::ir::RemovedKind::Property { event, name, replacement } = &r.kind {
                if event == tag_value && !known.contains(&name.as_str()) {
                    let msg = string_lit(&format!(
                        "`{name}` was removed from `{tag_value}` in this version: use `{replacement}` instead"
                    ));
                    w.line(format!("case {}:", string_lit(name)));
                    w.line(format!(
                        "  if (Object.hasOwn(o, k)) {}",
                        push(&ptr.key(name).expr(), Rule::RemovedProperty, &msg)
                    ));
                    w.line("  continue;");
                }
            }
        }
    }
    let msg = Code::from_pieces(format!("{} + k + {}", string_lit("unknown property `"), string_lit("`")));
    w.line("default:");
    w.line(format!("  if (Object.hasOwn(o, k)) {}", push(&ptr.dynamic_key(), Rule::AdditionalProperty, &msg)));
    w.close("}");
    w.close("}");
    Ok(())
}

fn function(
    w: &mut W,
    doc: &str,
    name: &Code,
    body: impl FnOnce(&mut W) -> Result<(), EmitError>,
) -> Result<(), EmitError> {
    w.line(format!("/** {doc} */"));
    w.open(format!("function {name}(o: $Object, p: string, out: WireError[]): void {{"));
    body(w)?;
    w.close("}");
    w.line("");
    Ok(())
}

/// The condition "`role` is none of `allowed`".
fn forbidden(all_roles: &[String], allowed: &[String]) -> String {
    let conds: Vec<String> =
        all_roles.iter().filter(|r| allowed.contains(r)).map(|r| format!("role !== {}", string_lit(r))).collect();
    if conds.is_empty() {
        "true".into()
    } else {
        conds.join(" && ")
    }
}

/// The role rules: the event's roles at the role field, role-restricted envelope fields, role-restricted event
/// fields. Runs on an envelope whose shape is valid.
fn roles(w: &mut W, p: &Protocol) {
    let all = p.roles();
    let role_ptr = string_lit(&push_ptr("", &p.role_field));
    w.line("/** The role rules (`x-roles`), on an envelope whose shape is valid (as the engine runs them). */");
    w.open("function $roles(o: $Object, out: WireError[]): void {");
    w.line(format!("const role = {} as string;", read("o", &p.role_field)));
    w.line(format!("const ev = {} as $Object;", read("o", &p.union_field)));
    w.line(format!("const t = {} as string;", read("ev", &p.union.tag)));
    // Events grouped by the roles that may send them; events every role may send need no case.
    let mut groups: Vec<(&[String], Vec<&str>)> = Vec::new();
    for v in &p.union.variants {
        if all.iter().all(|r| v.roles.contains(r)) {
            continue;
        }
        match groups.iter_mut().find(|(roles, _)| *roles == v.roles.as_slice()) {
            Some((_, tags)) => tags.push(&v.tag),
            None => groups.push((&v.roles, vec![&v.tag])),
        }
    }
    if !groups.is_empty() {
        w.open("switch (t) {");
        for (allowed, tags) in &groups {
            for t in tags {
                w.line(format!("case {}:", string_lit(t)));
            }
            let msg = Code::from_pieces(format!(
                "{} + t + {} + role",
                string_lit("`"),
                string_lit(&format!("` may be sent only by {}, not by ", allowed.join(" or ")))
            ));
            w.line(format!("  if ({}) {}", forbidden(all, allowed), push(&role_ptr, Rule::RoleEvent, &msg)));
            w.line("  break;");
        }
        w.close("}");
    }
    let field_rule = |w: &mut W, obj: &str, base: &str, f: &Field| {
        let Some(allowed) = f.roles.as_ref().filter(|r| !all.iter().all(|x| r.contains(x))) else {
            return;
        };
        let msg = Code::from_pieces(format!(
            "{} + role",
            string_lit(&format!("`{}` may be sent only by {}, not by ", f.name, allowed.join(" or ")))
        ));
        let ptr = string_lit(&push_ptr(base, &f.name));
        w.line(format!(
            "if ({} && {} !== undefined) {}",
            forbidden(all, allowed),
            read(obj, &f.name),
            push(&ptr, Rule::RoleField, &msg)
        ));
    };
    for f in &p.envelope.fields {
        field_rule(w, "o", "", f);
    }
    let evp = push_ptr("", &p.union_field);
    let restricted: Vec<_> = p
        .union
        .variants
        .iter()
        .filter(|v| v.fields.iter().any(|f| f.roles.as_ref().is_some_and(|r| !all.iter().all(|x| r.contains(x)))))
        .collect();
    if !restricted.is_empty() {
        w.open("switch (t) {");
        for v in restricted {
            w.line(format!("case {}:", string_lit(&v.tag)));
            w.depth += 1;
            for f in &v.fields {
                field_rule(w, "ev", &evp, f);
            }
            w.line("break;");
            w.depth -= 1;
        }
        w.close("}");
    }
    w.close("}");
    w.line("");
}

/// The module's generated part: the check functions and `$roles` (the template adds helpers and exports).
pub(super) fn body(p: &Protocol, names: &Names) -> Result<Code, EmitError> {
    let mut w = W::default();
    for (key, o) in &p.objects {
        let (_, ty) = &names.objects[key];
        function(&mut w, &format!("Checks a `{ty}` object."), &check_fn(ty)?, |w| {
            object_body(w, &o.fields, &Ptr::Param(String::new()), None, p, names)
        })?;
    }
    for v in &p.union.variants {
        let (_, ty) = &names.events[&v.tag];
        function(
            &mut w,
            &format!("Checks a `{ty}` body (its discriminator is already known)."),
            &check_fn(ty)?,
            |w| object_body(w, &v.fields, &Ptr::Param(String::new()), Some((&p.union.tag, &v.tag)), p, names),
        )?;
    }
    // The union: the discriminator first, then the member.
    let u = &p.union;
    function(
        &mut w,
        &format!("Checks an event: the `{}` discriminator picks the member.", u.tag),
        &check_fn(&names.union.1)?,
        |w| {
            let tp = Ptr::Param(String::new()).key(&u.tag);
            let tpe = tp.expr();
            w.line(format!("const t = {};", read("o", &u.tag)));
            let msg = string_lit(&format!("missing required property `{}`", u.tag));
            w.line(format!("if (t === undefined) return {}", push(&tpe, Rule::Required, &msg)));
            w.line(format!("if (typeof t !== \"string\") return $type(out, {tpe}, \"a string\", t);"));
            w.open("switch (t) {");
            for v in &u.variants {
                w.line(format!("case {}:", string_lit(&v.tag)));
                w.line(format!("  return {}(o, p, out);", check_fn(&names.events[&v.tag].1)?));
            }
            for r in &p.removed {
                if let crate::legacy::ir::RemovedKind::Events(evs) = &r.kind {
                    for (old, rep) in evs {
                        if u.variant(old).is_some() {
                            continue;
                        }
                        let msg = string_lit(&format!("`{old}` was removed in this version: use `{rep}` instead"));
                        w.line(format!("case {}:", string_lit(old)));
                        w.line(format!("  return {}", push(&tpe, Rule::RemovedEvent, &msg)));
                    }
                }
            }
            let tags: Vec<String> = u.variants.iter().map(|v| v.tag.clone()).collect();
            let msg = Code::from_pieces(format!(
                "{} + t + {}",
                string_lit("`"),
                string_lit(&format!("` is not an event; expected one of {}", quoted_list(&tags)))
            ));
            w.line("default:");
            w.line(format!("  return {}", push(&tpe, Rule::UnknownEvent, &msg)));
            w.close("}");
            Ok(())
        },
    )?;
    let env_ty = &names.envelope.1;
    w.line(format!("/** Checks the `{env_ty}` object's shape (the root: its pointers are constants). */"));
    w.open(format!("function {}(o: $Object, out: WireError[]): void {{", check_fn(env_ty)?));
    object_body(&mut w, &p.envelope.fields, &Ptr::Const(String::new()), None, p, names)?;
    w.close("}");
    w.line("");
    roles(&mut w, p);
    Ok(Code::from_pieces(w.out.trim_end().to_string()))
}

/// The name of the envelope's check function, for the template.
pub(super) fn envelope_check(names: &Names) -> Result<Code, EmitError> {
    check_fn(&names.envelope.1)
}
