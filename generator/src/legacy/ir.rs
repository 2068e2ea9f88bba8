//! The typed model of a protocol (the IR).
//!
//! The loader ([`crate::load`]) builds one [`Protocol`] from `schema/`; every emitter and the validation engine
//! read only this model, never raw JSON Schema. The model speaks of schema constructs (objects, a union tagged
//! on a discriminator, enums, integer bounds, role rules), not of this protocol's event names, so adding an event
//! or a field needs no emitter change.

use std::collections::BTreeMap;

/// A whole protocol: an envelope object carrying one member of a tagged union.
#[derive(Debug, Clone, PartialEq)]
pub struct Protocol {
    /// Human title (`title` of the envelope schema).
    pub title: String,
    /// Description of the envelope.
    pub description: String,
    /// Base URI of the schema files (the envelope's `$id` without the file name).
    pub base_uri: String,
    /// The envelope object. Exactly one of its fields has type [`Ty::Union`] and one is the role field.
    pub envelope: Object,
    /// Name of the envelope field that says who sent the message (`x-role-property`).
    pub role_field: String,
    /// Name of the named enum that lists the roles.
    pub role_enum: String,
    /// Name of the envelope field carrying the union (e.g. `ev`).
    pub union_field: String,
    /// The tagged union of events.
    pub union: Union,
    /// Categories in document order (`x-categories`).
    pub categories: Vec<Category>,
    /// What earlier versions had and this one removed (`x-removed`), in document order.
    pub removed: Vec<Removed>,
    /// Named enums, by type name.
    pub enums: BTreeMap<String, EnumDef>,
    /// Named objects (other than the envelope and the union members), by type name.
    pub objects: BTreeMap<String, Object>,
}

/// An object type: an ordered list of fields, closed (unknown properties are rejected).
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// Type name in PascalCase (e.g. `Usage`).
    pub name: String,
    /// Description from the schema.
    pub description: String,
    /// Fields in the order the schema lists them.
    pub fields: Vec<Field>,
}

/// One property of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The JSON property name (e.g. `toolName`).
    pub name: String,
    /// Description from the schema.
    pub description: String,
    /// Whether the property must be present. Optional properties may be absent; `null` is never accepted.
    pub required: bool,
    /// The value type.
    pub ty: Ty,
    /// Roles that may send this field (`x-roles`); `None` means every role that may send the object.
    pub roles: Option<Vec<String>>,
}

/// A value type.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// A string.
    String(StringTy),
    /// An integer within bounds (JSON Schema `integer`, so `1.0` counts).
    Integer {
        /// Smallest allowed value.
        minimum: i64,
        /// Largest allowed value.
        maximum: i64,
    },
    /// A number (finite JSON number).
    Number {
        /// Smallest allowed value, if any.
        minimum: Option<f64>,
    },
    /// `true` or `false`.
    Boolean,
    /// A named enum of strings ([`Protocol::enums`]).
    Enum(String),
    /// A named object ([`Protocol::objects`]).
    Object(String),
    /// Any JSON object, not inspected.
    AnyObject,
    /// The protocol's tagged union ([`Protocol::union`]).
    Union,
}

/// A string type with its constraints.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StringTy {
    /// Minimum length in characters, if any.
    pub min_length: Option<u64>,
    /// A pattern checked only in strict-id mode (`x-strict-pattern`), with what it describes.
    pub strict_pattern: Option<String>,
}

/// A named enum of string values.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumDef {
    /// Type name in PascalCase.
    pub name: String,
    /// Description from the schema.
    pub description: String,
    /// The allowed values, in schema order.
    pub values: Vec<String>,
}

/// A union of objects discriminated by a string property.
#[derive(Debug, Clone, PartialEq)]
pub struct Union {
    /// The discriminator property (e.g. `t`).
    pub tag: String,
    /// Description of the union field.
    pub description: String,
    /// The members, in `x-order`.
    pub variants: Vec<Variant>,
}

impl Union {
    /// The member whose tag value is `tag`.
    pub fn variant(&self, tag: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.tag == tag)
    }
}

/// One member of the union: an event type.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// The discriminator value (e.g. `tool-call-start`).
    pub tag: String,
    /// Type name in PascalCase (e.g. `ToolCallStart`).
    pub name: String,
    /// Description from the schema.
    pub description: String,
    /// Category name (`x-category`), one of [`Protocol::categories`].
    pub category: String,
    /// Change status against the previous version (`x-status`: existing, modified, renamed, new).
    pub status: String,
    /// What changed (`x-status-note`), e.g. "added `steer`".
    pub status_note: Option<String>,
    /// Roles that may send this event (`x-roles`).
    pub roles: Vec<String>,
    /// The fields other than the discriminator.
    pub fields: Vec<Field>,
    /// Examples from the schema (whole event bodies, discriminator included).
    pub examples: Vec<serde_json::Value>,
    /// Schema file the variant comes from, relative to the schema directory.
    pub file: String,
}

/// A category of events, for documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct Category {
    /// Short name used by `x-category` and the summary table.
    pub name: String,
    /// Section title.
    pub title: String,
}

/// Something the previous version had that this one removed.
#[derive(Debug, Clone, PartialEq)]
pub struct Removed {
    /// What was removed (markdown).
    pub what: String,
    /// Why (markdown).
    pub why: String,
    /// What is rejected now, with its replacement.
    pub kind: RemovedKind,
}

/// The shape of a removal.
#[derive(Debug, Clone, PartialEq)]
pub enum RemovedKind {
    /// Discriminator values no longer valid, each with its replacement.
    Events(Vec<(String, String)>),
    /// A property no longer valid on one event, with its replacement.
    Property {
        /// Tag of the event.
        event: String,
        /// The removed property.
        name: String,
        /// The property that replaces it.
        replacement: String,
    },
}

impl Protocol {
    /// All role names, in enum order (none when the role enum is not defined).
    pub fn roles(&self) -> &[String] {
        self.enums.get(&self.role_enum).map_or(&[], |e| &e.values)
    }

    /// Removed discriminator values that replace into `tag` (e.g. `start` for `subagent-start`).
    pub fn replaces(&self, tag: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for r in &self.removed {
            if let RemovedKind::Events(evs) = &r.kind {
                for (old, rep) in evs {
                    if rep == tag || rep.split('.').next() == Some(tag) {
                        out.push(old.as_str());
                    }
                }
            }
        }
        out
    }

    /// Whether `role` may send a field with the given role restriction inside an event `v`.
    pub fn field_allowed(field: &Field, role: &str) -> bool {
        field.roles.as_ref().is_none_or(|r| r.iter().any(|x| x == role))
    }
}

/// Converts `tool-call-start` or `inputTokens` to `ToolCallStart` / `InputTokens`.
pub(crate) fn pascal_case(s: &str) -> String {
    let mut out = String::new();
    let mut up = true;
    for c in s.chars() {
        if c == '-' || c == '_' || c == ' ' || c == '.' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Converts `toolName` or `tool-call` to `tool_name` / `tool_call`.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn snake_case(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c == '-' || c == ' ' || c == '.' {
            out.push('_');
        } else if c.is_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casing() {
        assert_eq!(pascal_case("tool-call-start"), "ToolCallStart");
        assert_eq!(snake_case("toolName"), "tool_name");
        assert_eq!(snake_case("agent-configuration-changed"), "agent_configuration_changed");
    }
}
