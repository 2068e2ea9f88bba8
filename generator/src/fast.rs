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

/// Precomputed masks for the fast path.
#[derive(Debug, Clone)]
pub struct FastPlan {
    role_field: usize,
    union_field: usize,
    env_required: u64,
    /// Per role: envelope fields that role may not send.
    env_forbidden: Vec<u64>,
    variants: Vec<VariantPlan>,
}

#[derive(Debug, Clone)]
struct VariantPlan {
    required: u64,
    /// Per role: whether the role may send the event, and the event fields it may not send.
    allowed: Vec<(bool, u64)>,
}

fn mask(fields: &[Field], pick: impl Fn(&Field) -> bool) -> u64 {
    fields
        .iter()
        .enumerate()
        .filter(|(_, f)| pick(f))
        .fold(0, |m, (i, _)| m | (1 << i))
}

impl FastPlan {
    /// Builds the plan, or `None` when the model has a shape the fast path does not cover (more than 64 fields
    /// in one object); then every line takes the precise path.
    pub fn new(p: &Protocol) -> Option<FastPlan> {
        let too_wide = |fs: &[Field]| fs.len() > 64;
        if too_wide(&p.envelope.fields)
            || p.union.variants.iter().any(|v| too_wide(&v.fields))
            || p.objects.values().any(|o| too_wide(&o.fields))
        {
            return None;
        }
        let roles = p.roles().to_vec();
        let env = &p.envelope.fields;
        Some(FastPlan {
            role_field: env.iter().position(|f| f.name == p.role_field)?,
            union_field: env.iter().position(|f| f.name == p.union_field)?,
            env_required: mask(env, |f| f.required),
            env_forbidden: roles
                .iter()
                .map(|r| mask(env, |f| !Protocol::field_allowed(f, r)))
                .collect(),
            variants: p
                .union
                .variants
                .iter()
                .map(|v| VariantPlan {
                    required: mask(&v.fields, |f| f.required),
                    allowed: roles
                        .iter()
                        .map(|r| {
                            (
                                v.roles.contains(r),
                                mask(&v.fields, |f| !Protocol::field_allowed(f, r)),
                            )
                        })
                        .collect(),
                })
                .collect(),
        })
    }
}

/// The fast verdict: `true` only when the line is certainly valid.
pub fn is_valid(
    p: &Protocol,
    plan: &FastPlan,
    strict: &dyn Fn(&str, &str) -> bool,
    text: &str,
) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut st = State::default();
    let cx = Cx { p, plan, strict };
    let seed = ObjSeed {
        cx: &cx,
        fields: &p.envelope.fields,
        st: &mut st,
        envelope: true,
    };
    if seed.deserialize(&mut de).is_err() || de.end().is_err() {
        return false;
    }
    let (Some(role), Some(var)) = (st.role, st.variant) else {
        return false;
    };
    if st.env_present & plan.env_required != plan.env_required {
        return false;
    }
    let (allowed, ev_forbidden) = plan.variants[var].allowed[role];
    allowed && st.env_present & plan.env_forbidden[role] == 0 && st.ev_present & ev_forbidden == 0
}

struct Cx<'a> {
    p: &'a Protocol,
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
struct KeySeed<'a>(&'a [Field]);

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
        Ok(self
            .0
            .iter()
            .position(|f| f.name == v)
            .unwrap_or(usize::MAX))
    }
}

/// An object whose fields are `fields` (closed, with required fields); for the envelope it also records the
/// role and reads the union field.
struct ObjSeed<'a, 'c> {
    cx: &'a Cx<'c>,
    fields: &'a [Field],
    st: &'a mut State,
    envelope: bool,
}

impl<'de> DeserializeSeed<'de> for ObjSeed<'_, '_> {
    type Value = u64;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ObjSeed<'_, '_> {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        let mut present = 0u64;
        while let Some(i) = map.next_key_seed(KeySeed(self.fields))? {
            if i == usize::MAX || present & (1 << i) != 0 {
                return Err(fail());
            }
            present |= 1 << i;
            let f = &self.fields[i];
            if self.envelope && i == self.cx.plan.union_field {
                map.next_value_seed(UnionSeed {
                    cx: self.cx,
                    st: &mut *self.st,
                })?;
            } else if self.envelope && i == self.cx.plan.role_field {
                let Ty::Enum(name) = &f.ty else {
                    return Err(fail());
                };
                // The plan's roles are this enum's values, in order.
                self.st.role = Some(map.next_value_seed(EnumSeed(&self.cx.p.enums[name].values))?);
            } else {
                map.next_value_seed(TySeed {
                    cx: self.cx,
                    ty: &f.ty,
                    field: f,
                })?;
            }
        }
        let required = mask(self.fields, |f| f.required);
        if present & required != required {
            return Err(fail());
        }
        if self.envelope {
            self.st.env_present = present;
        }
        Ok(present)
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
        let u = &self.cx.p.union;
        if map.next_key_seed(NameSeed(&u.tag))? != Some(true) {
            return Err(fail());
        }
        let var = map.next_value_seed(TagSeed(u))?;
        let fields = &u.variants[var].fields;
        let mut present = 0u64;
        while let Some(i) = map.next_key_seed(KeySeed(fields))? {
            if i == usize::MAX || present & (1 << i) != 0 {
                return Err(fail());
            }
            present |= 1 << i;
            map.next_value_seed(TySeed {
                cx: self.cx,
                ty: &fields[i].ty,
                field: &fields[i],
            })?;
        }
        if present & self.cx.plan.variants[var].required != self.cx.plan.variants[var].required {
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

struct TagSeed<'a>(&'a crate::ir::Union);

impl<'de> DeserializeSeed<'de> for TagSeed<'_> {
    type Value = usize;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for TagSeed<'_> {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event type")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        self.0
            .variants
            .iter()
            .position(|x| x.tag == v)
            .ok_or_else(fail)
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

/// Any value type of the model.
struct TySeed<'a, 'c> {
    cx: &'a Cx<'c>,
    ty: &'a Ty,
    field: &'a Field,
}

impl<'de> DeserializeSeed<'de> for TySeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.ty {
            Ty::String(_) => d.deserialize_str(self),
            Ty::Integer { .. } | Ty::Number { .. } => d.deserialize_any(self),
            Ty::Boolean => d.deserialize_bool(self),
            Ty::Enum(name) => EnumSeed(&self.cx.p.enums[name].values)
                .deserialize(d)
                .map(|_| ()),
            Ty::Object(name) => {
                let mut st = State::default();
                let fields = &self.cx.p.objects[name].fields;
                ObjSeed {
                    cx: self.cx,
                    fields,
                    st: &mut st,
                    envelope: false,
                }
                .deserialize(d)
                .map(|_| ())
            }
            Ty::AnyObject => d.deserialize_map(self),
            Ty::Union => Err(fail()),
        }
    }
}

impl<'de> Visitor<'de> for TySeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a value for `{}`", self.field.name)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        let Ty::String(s) = self.ty else {
            return Err(fail());
        };
        if let Some(min) = s.min_length {
            // Byte length bounds the character count from above: only count characters when it matters.
            if (v.len() as u64) < min
                || (v.len() as u64 / 4 < min && (v.chars().count() as u64) < min)
            {
                return Err(fail());
            }
        }
        if let Some(p) = &s.strict_pattern {
            if !(self.cx.strict)(p, v) {
                return Err(fail());
            }
        }
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        match self.ty {
            Ty::Boolean => Ok(()),
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
        match self.ty {
            Ty::AnyObject => {
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
        match self.ty {
            Ty::Integer { minimum, maximum }
                if whole && v >= *minimum as f64 && v <= *maximum as f64 =>
            {
                Ok(())
            }
            Ty::Number { minimum } if v.is_finite() && minimum.is_none_or(|m| v >= m) => Ok(()),
            _ => Err(fail()),
        }
    }
}
