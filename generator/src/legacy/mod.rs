//! The protocol-shaped view the emitters were first written against, derived from the general [`Model`].
//!
//! Transitional: emitters not yet ported to [`crate::ir`] read this view. It exists only for a model that has a
//! session-protocol layer whose types fit the first protocol's shapes; anything else is an
//! [`EmitError::Unsupported`] from those emitters.

pub(crate) mod ir;

use std::collections::BTreeMap;

use crate::emit::EmitError;
use crate::ir::{Additional, Model, Shape, TypeId};
use ir as old;

/// The legacy protocol of a model.
///
/// # Errors
/// When the model has no protocol layer, or a shape the legacy emitters do not know.
pub(crate) fn protocol(m: &Model) -> Result<old::Protocol, EmitError> {
    let p = m.protocol.as_ref().ok_or_else(|| unsupported("this output needs a session protocol (x-role-property)"))?;
    let mut cx = Cx { m, enums: BTreeMap::new(), objects: BTreeMap::new() };
    let env = m.ty(p.envelope);
    let Shape::Object(env_obj) = &env.node.shape else { return Err(unsupported("the envelope is not an object")) };
    let env_roles: BTreeMap<&str, &Vec<String>> = p.envelope_field_roles.iter().map(|(n, r)| (n.as_str(), r)).collect();
    let mut fields = Vec::new();
    for f in &env_obj.fields {
        let ty = if f.name == p.union_field { old::Ty::Union } else { cx.ty(&f.node.shape)? };
        fields.push(old::Field {
            name: f.name.clone(),
            description: f.description.clone().unwrap_or_default(),
            required: f.required,
            ty,
            roles: env_roles.get(f.name.as_str()).map(|r| (*r).clone()),
        });
    }
    let envelope =
        old::Object { name: env.names.rust.clone(), description: env.description.clone().unwrap_or_default(), fields };
    let union_def = m.ty(p.union);
    let Shape::Union(u) = &union_def.node.shape else { return Err(unsupported("the event union is not a union")) };
    let mut variants = Vec::new();
    for e in &p.events {
        let t = m.ty(e.ty);
        let Shape::Object(o) = &t.node.shape else { return Err(unsupported("an event is not an object")) };
        let roles: BTreeMap<&str, &Vec<String>> = e.field_roles.iter().map(|(n, r)| (n.as_str(), r)).collect();
        let mut fields = Vec::new();
        for f in o.fields.iter().filter(|f| f.name != u.discriminator) {
            fields.push(old::Field {
                name: f.name.clone(),
                description: f.description.clone().unwrap_or_default(),
                required: f.required,
                ty: cx.ty(&f.node.shape)?,
                roles: roles.get(f.name.as_str()).map(|r| (*r).clone()),
            });
        }
        variants.push(old::Variant {
            tag: e.tag.clone(),
            name: t.names.rust.clone(),
            description: t.description.clone().unwrap_or_default(),
            category: e.category.clone(),
            status: e.status.clone(),
            status_note: e.status_note.clone(),
            roles: e.roles.clone(),
            fields,
            examples: t.examples.clone(),
            file: t.origin.file.clone(),
        });
    }
    let removed = p
        .removed
        .iter()
        .map(|r| old::Removed {
            what: r.what.clone(),
            why: r.why.clone(),
            kind: match &r.kind {
                crate::ir::RemovedKind::Events(e) => old::RemovedKind::Events(e.clone()),
                crate::ir::RemovedKind::Property { event, name, replacement } => old::RemovedKind::Property {
                    event: event.clone(),
                    name: name.clone(),
                    replacement: replacement.clone(),
                },
            },
        })
        .collect();
    let role_enum = m.ty(p.role_enum).names.rust.clone();
    let categories =
        p.categories.iter().map(|c| old::Category { name: c.name.clone(), title: c.title.clone() }).collect();
    Ok(old::Protocol {
        title: m.title.clone(),
        description: m.description.clone(),
        base_uri: m.base_uri.clone(),
        envelope,
        role_field: p.role_field.clone(),
        role_enum,
        union_field: p.union_field.clone(),
        union: old::Union {
            tag: u.discriminator.clone(),
            description: union_def.description.clone().unwrap_or_default(),
            variants,
        },
        categories,
        removed,
        enums: cx.enums,
        objects: cx.objects,
    })
}

fn unsupported(s: &str) -> EmitError {
    EmitError::Unsupported(s.to_string())
}

struct Cx<'m> {
    m: &'m Model,
    enums: BTreeMap<String, old::EnumDef>,
    objects: BTreeMap<String, old::Object>,
}

impl Cx<'_> {
    fn ty(&mut self, s: &Shape) -> Result<old::Ty, EmitError> {
        match s {
            Shape::Ref(id) => self.named(*id),
            Shape::String(st) => Ok(old::Ty::String(old::StringTy {
                min_length: st.min_length,
                strict_pattern: st.strict_pattern.as_ref().map(|p| p.source.clone()),
            })),
            Shape::Number(n) if n.integer => Ok(old::Ty::Integer {
                minimum: n.minimum.map_or(i64::MIN, |x| x as i64),
                maximum: n.maximum.map_or(i64::MAX, |x| x as i64),
            }),
            Shape::Number(n) => Ok(old::Ty::Number { minimum: n.minimum }),
            Shape::Boolean => Ok(old::Ty::Boolean),
            _ => Err(unsupported("a shape the first protocol did not have")),
        }
    }

    fn named(&mut self, id: TypeId) -> Result<old::Ty, EmitError> {
        let t = self.m.ty(id);
        match &t.node.shape {
            Shape::Enum(values) => {
                let name = t.names.rust.clone();
                let values = values.iter().filter_map(|v| v.as_str().map(String::from)).collect();
                self.enums.insert(
                    name.clone(),
                    old::EnumDef { name: name.clone(), description: t.description.clone().unwrap_or_default(), values },
                );
                Ok(old::Ty::Enum(name))
            }
            Shape::Object(o) if o.fields.is_empty() && o.additional == Additional::Open => Ok(old::Ty::AnyObject),
            Shape::Object(o) => {
                let name = t.names.rust.clone();
                if !self.objects.contains_key(&name) {
                    let mut fields = Vec::new();
                    for f in &o.fields {
                        fields.push(old::Field {
                            name: f.name.clone(),
                            description: f.description.clone().unwrap_or_default(),
                            required: f.required,
                            ty: self.ty(&f.node.shape)?,
                            roles: None,
                        });
                    }
                    let description = t.description.clone().unwrap_or_default();
                    self.objects.insert(name.clone(), old::Object { name: name.clone(), description, fields });
                }
                Ok(old::Ty::Object(name))
            }
            other => self.ty(other),
        }
    }
}
