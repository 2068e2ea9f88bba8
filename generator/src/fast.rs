//! The fast path: decides whether a line is valid without building a `serde_json::Value`.
//!
//! A `DeserializeSeed` driven by the [`Protocol`] model walks the JSON once: keys are matched against the
//! object's fields without allocating, `args` is skipped without being built, the event member is picked by the
//! discriminator when it comes first, and role rules are checked from bit masks at the end. It answers only
//! "certainly valid"; anything else (an error, or a shape it does not handle fast, such as a discriminator that
//! is not the first key of `ev`, escaped keys it cannot match, duplicate keys) sends the line to the precise
//! path in [`crate::engine`], which explains the error. So the fast path can make validation quicker but never
//! changes a verdict; the conformance test and a property test check that the two agree.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use crate::ir::{Field, Protocol, Ty};

/// The model compiled for the fast path: objects by index, enums and nested objects resolved, bit masks for
/// required fields and role rules, so checking a line does no lookups by name.
#[derive(Debug, Clone)]
pub(crate) struct FastPlan {
    /// Object plans; index 0 is the envelope.
    objects: Vec<ObjPlan>,
    role_field: usize,
    union_field: usize,
    tag: String,
    tags: Vec<String>,
    variants: Vec<VariantPlan>,
    /// Per role: envelope fields that role may not send.
    env_forbidden: Vec<u64>,
}

#[derive(Debug, Clone)]
struct ObjPlan {
    names: Vec<String>,
    kinds: Vec<Kind>,
    required: u64,
}

#[derive(Debug, Clone)]
enum Kind {
    Str { min: Option<u64>, strict: Option<String> },
    Int { min: f64, max: f64 },
    Num { min: Option<f64> },
    Bool,
    Enum(Vec<String>),
    Obj(usize),
    Any,
    Union,
}

#[derive(Debug, Clone)]
struct VariantPlan {
    obj: usize,
    /// Per role: whether the role may send the event, and the event fields it may not send.
    allowed: Vec<(bool, u64)>,
}

fn mask(fields: &[Field], pick: impl Fn(&Field) -> bool) -> u64 {
    fields.iter().enumerate().filter(|(_, f)| pick(f)).fold(0, |m, (i, _)| m | (1 << i))
}

impl FastPlan {
    /// Compiles the plan, or `None` when the model has a shape the fast path does not cover (more than 64 fields
    /// in one object); then every line takes the precise path.
    pub fn new(p: &Protocol) -> Option<FastPlan> {
        let mut plan = FastPlan {
            objects: Vec::new(),
            role_field: p.envelope.fields.iter().position(|f| f.name == p.role_field)?,
            union_field: p.envelope.fields.iter().position(|f| f.name == p.union_field)?,
            tag: p.union.tag.clone(),
            tags: p.union.variants.iter().map(|v| v.tag.clone()).collect(),
            variants: Vec::new(),
            env_forbidden: p
                .roles()
                .iter()
                .map(|r| mask(&p.envelope.fields, |f| !Protocol::field_allowed(f, r)))
                .collect(),
        };
        let mut named = std::collections::BTreeMap::new();
        plan.object(p, &p.envelope.fields, &mut named)?;
        for v in &p.union.variants {
            let obj = plan.object(p, &v.fields, &mut named)?;
            let allowed = p
                .roles()
                .iter()
                .map(|r| (v.roles.contains(r), mask(&v.fields, |f| !Protocol::field_allowed(f, r))))
                .collect();
            plan.variants.push(VariantPlan { obj, allowed });
        }
        Some(plan)
    }

    fn object(
        &mut self,
        p: &Protocol,
        fields: &[Field],
        named: &mut std::collections::BTreeMap<String, usize>,
    ) -> Option<usize> {
        if fields.len() > 64 {
            return None;
        }
        let idx = self.objects.len();
        self.objects.push(ObjPlan { names: Vec::new(), kinds: Vec::new(), required: mask(fields, |f| f.required) });
        let mut kinds = Vec::new();
        for f in fields {
            kinds.push(match &f.ty {
                Ty::String(s) => Kind::Str { min: s.min_length, strict: s.strict_pattern.clone() },
                Ty::Integer { minimum, maximum } => Kind::Int { min: *minimum as f64, max: *maximum as f64 },
                Ty::Number { minimum } => Kind::Num { min: *minimum },
                Ty::Boolean => Kind::Bool,
                Ty::Enum(n) => Kind::Enum(p.enums.get(n)?.values.clone()),
                Ty::Object(n) => match named.get(n) {
                    Some(&i) => Kind::Obj(i),
                    None => {
                        let i = self.object(p, &p.objects.get(n)?.fields, named)?;
                        named.insert(n.clone(), i);
                        Kind::Obj(i)
                    }
                },
                Ty::AnyObject => Kind::Any,
                Ty::Union => Kind::Union,
            });
        }
        self.objects[idx].names = fields.iter().map(|f| f.name.clone()).collect();
        self.objects[idx].kinds = kinds;
        Some(idx)
    }
}

/// The fast verdict: `true` only when the line is certainly valid.
pub(crate) fn is_valid(plan: &FastPlan, strict: &dyn Fn(&str, &str) -> bool, text: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut st = State::default();
    let cx = Cx { plan, strict };
    let seed = ObjSeed { cx: &cx, obj: 0, st: &mut st };
    if seed.deserialize(&mut de).is_err() || de.end().is_err() {
        return false;
    }
    let (Some(role), Some(var)) = (st.role, st.variant) else { return false };
    let (allowed, ev_forbidden) = plan.variants[var].allowed[role];
    allowed && st.env_present & plan.env_forbidden[role] == 0 && st.ev_present & ev_forbidden == 0
}

struct Cx<'a> {
    plan: &'a FastPlan,
    /// Checks a string against a strict-id pattern (`pattern`, `value`); always true without strict ids.
    strict: &'a dyn Fn(&str, &str) -> bool,
}

#[derive(Default)]
struct State {
    role: Option<usize>,
    variant: Option<usize>,
    env_present: u64,
    ev_present: u64,
}

/// A quiet failure: the precise path will explain it, so no message is built here.
fn fail<E: de::Error>() -> E {
    E::custom("")
}

/// Matches a key against field names without allocating; yields the index, or `usize::MAX` when unknown.
struct KeySeed<'a>(&'a [String]);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = usize;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed<'_> {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a property name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        Ok(self.0.iter().position(|f| f == v).unwrap_or(usize::MAX))
    }
}

/// An object of the plan (closed, with required fields). The envelope (object 0) also records the role and
/// reads the union field.
struct ObjSeed<'a, 'c> {
    cx: &'a Cx<'c>,
    obj: usize,
    st: &'a mut State,
}

impl<'de> DeserializeSeed<'de> for ObjSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ObjSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let plan = &self.cx.plan;
        let o = &plan.objects[self.obj];
        let envelope = self.obj == 0;
        let mut present = 0u64;
        while let Some(i) = map.next_key_seed(KeySeed(&o.names))? {
            if i == usize::MAX || present & (1 << i) != 0 {
                return Err(fail());
            }
            present |= 1 << i;
            match &o.kinds[i] {
                Kind::Union if envelope && i == plan.union_field => {
                    map.next_value_seed(UnionSeed { cx: self.cx, st: &mut *self.st })?;
                }
                Kind::Enum(values) if envelope && i == plan.role_field => {
                    // The role enum's values are the plan's roles, in order.
                    self.st.role = Some(map.next_value_seed(EnumSeed(values))?);
                }
                kind => map.next_value_seed(TySeed { cx: self.cx, kind })?,
            }
        }
        if present & o.required != o.required {
            return Err(fail());
        }
        if envelope {
            self.st.env_present = present;
        }
        Ok(())
    }
}

/// The tagged union: the discriminator must be the first key (else the precise path decides).
struct UnionSeed<'a, 'c> {
    cx: &'a Cx<'c>,
    st: &'a mut State,
}

impl<'de> DeserializeSeed<'de> for UnionSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for UnionSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let plan = &self.cx.plan;
        if map.next_key_seed(NameSeed(&plan.tag))? != Some(true) {
            return Err(fail());
        }
        let var = map.next_value_seed(EnumSeed(&plan.tags))?;
        let o = &plan.objects[plan.variants[var].obj];
        let mut present = 0u64;
        while let Some(i) = map.next_key_seed(KeySeed(&o.names))? {
            if i == usize::MAX || present & (1 << i) != 0 {
                return Err(fail());
            }
            present |= 1 << i;
            map.next_value_seed(TySeed { cx: self.cx, kind: &o.kinds[i] })?;
        }
        if present & o.required != o.required {
            return Err(fail());
        }
        self.st.variant = Some(var);
        self.st.ev_present = present;
        Ok(())
    }
}

/// Whether a key is exactly `name`.
struct NameSeed<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for NameSeed<'_> {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for NameSeed<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a property name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        Ok(v == self.0)
    }
}

struct EnumSeed<'a>(&'a [String]);

impl<'de> DeserializeSeed<'de> for EnumSeed<'_> {
    type Value = usize;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for EnumSeed<'_> {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an enum value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        self.0.iter().position(|x| x == v).ok_or_else(fail)
    }
}

/// Any value type of the plan.
struct TySeed<'a, 'c> {
    cx: &'a Cx<'c>,
    kind: &'a Kind,
}

impl<'de> DeserializeSeed<'de> for TySeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.kind {
            Kind::Str { .. } => d.deserialize_str(self),
            Kind::Int { .. } | Kind::Num { .. } => d.deserialize_any(self),
            Kind::Bool => d.deserialize_bool(self),
            Kind::Enum(values) => EnumSeed(values).deserialize(d).map(|_| ()),
            Kind::Obj(obj) => {
                let mut st = State::default();
                ObjSeed { cx: self.cx, obj: *obj, st: &mut st }.deserialize(d)
            }
            Kind::Any => d.deserialize_map(self),
            Kind::Union => Err(fail()),
        }
    }
}

impl<'de> Visitor<'de> for TySeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        let Kind::Str { min, strict } = self.kind else { return Err(fail()) };
        if let Some(min) = *min {
            // Byte length bounds the character count from above: only count characters when it matters.
            if (v.len() as u64) < min || (v.len() as u64 / 4 < min && (v.chars().count() as u64) < min) {
                return Err(fail());
            }
        }
        if let Some(p) = strict {
            if !(self.cx.strict)(p, v) {
                return Err(fail());
            }
        }
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        match self.kind {
            Kind::Bool => Ok(()),
            _ => Err(fail()),
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.number(v as f64, true)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.number(v as f64, true)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.number(v, v.is_finite() && v.fract() == 0.0)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        match self.kind {
            Kind::Any => {
                while map.next_key::<IgnoredAny>()?.is_some() {
                    map.next_value_seed(Skip)?;
                }
                Ok(())
            }
            _ => Err(fail()),
        }
    }
}

/// Skips any value through `deserialize_any`, so that serde_json's nesting limit applies exactly as when the
/// precise path parses the line into a `Value` (`IgnoredAny` would skip arbitrarily deep input).
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }
}

impl TySeed<'_, '_> {
    fn number<E: de::Error>(&self, v: f64, whole: bool) -> Result<(), E> {
        match self.kind {
            Kind::Int { min, max } if whole && v >= *min && v <= *max => Ok(()),
            Kind::Num { min } if v.is_finite() && min.is_none_or(|m| v >= m) => Ok(()),
            _ => Err(fail()),
        }
    }
}
