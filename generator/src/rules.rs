//! The catalogue of message-level rule ids: the one place their names and meanings are written.
//!
//! Every checker (the engine behind `wiregen validate`, the generated Rust types, the generated Zod schemas)
//! reports these ids; the emitters take them from here, and the markdown reference lists them from here.
//!
//! Pointer conventions, shared by every checker:
//! - a missing required property is reported at the pointer the property would have (`/ev/status`);
//! - an unknown property is reported at the property itself (`/ev/machineId`);
//! - a bad discriminator (missing, not a string, unknown, removed) at the discriminator (`/ev/t`);
//! - an event the sender's role may not send at the role field (`/role`);
//! - a field the sender's role may not send at that field (`/ev/thinking`, `/subagent`);
//! - problems with the line itself (malformed JSON, blank line, ...) at the root (`""`).
//!
//! Order of checks (the first error is the one every checker agrees on): the envelope's properties in schema
//! order, each one checked in depth (the union field picks its member by the discriminator first, then that
//! member's properties in schema order), then unknown properties in input order; role rules only once the
//! shape is valid: the event's roles, then envelope fields, then event fields.

use crate::catalogue::catalogue;

catalogue! {
    /// A message-level rule.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Rule {
        /// Every message-level rule, in catalogue order.
        const ALL;
        /// The stable id printed by every checker.
        fn id;
        /// The rule with this id.
        fn from_id;
        /// The line is not valid JSON (including a truncated last line).
        MalformedJson = "malformed-json",
        /// The line is not valid UTF-8.
        InvalidUtf8 = "invalid-utf8",
        /// The line is empty.
        BlankLine = "blank-line",
        /// The JSON nests deeper than the parser allows.
        TooDeep = "too-deep",
        /// A value has the wrong JSON type (`null` included, and a non-integer where an integer is required).
        Type = "type",
        /// A required property is missing.
        Required = "required",
        /// A property the schema does not define (closed world).
        AdditionalProperty = "additional-property",
        /// A string is not one of the enum's values.
        Enum = "enum",
        /// A string is shorter than allowed (empty ids).
        MinLength = "min-length",
        /// A number is below the minimum.
        Minimum = "minimum",
        /// A number is above the maximum.
        Maximum = "maximum",
        /// The discriminator names no known event.
        UnknownEvent = "unknown-event",
        /// The discriminator names an event removed in this version.
        RemovedEvent = "removed-event",
        /// A property removed in this version.
        RemovedProperty = "removed-property",
        /// The sender's role may not send this event.
        RoleEvent = "role-event",
        /// The sender's role may not send this field.
        RoleField = "role-field",
        /// An id does not have the cuid2 shape (only with strict ids).
        StrictId = "strict-id",
    }
}

impl Rule {
    /// One sentence on what the rule means, for the reference.
    pub fn summary(self) -> &'static str {
        match self {
            Rule::MalformedJson => "The line is not valid JSON (a truncated last line included).",
            Rule::InvalidUtf8 => "The line is not valid UTF-8.",
            Rule::BlankLine => "The line is empty.",
            Rule::TooDeep => "The JSON nests deeper than 127 levels (arrays and objects, the envelope included).",
            Rule::Type => {
                "A value has the wrong JSON type; `null` is never accepted, and integers must be whole numbers."
            }
            Rule::Required => "A required property is missing.",
            Rule::AdditionalProperty => "A property the schema does not define (objects are closed).",
            Rule::Enum => "A string is not one of the allowed values.",
            Rule::MinLength => "A string is shorter than allowed (ids are non-empty).",
            Rule::Minimum => "A number is below its minimum.",
            Rule::Maximum => "A number is above its maximum (integers stop at 2^53-1).",
            Rule::UnknownEvent => "`ev.t` names no event of this protocol.",
            Rule::RemovedEvent => "`ev.t` names an event this version removed; the message names its replacement.",
            Rule::RemovedProperty => "A property this version removed; the message names its replacement.",
            Rule::RoleEvent => "The sender's `role` may not send this event.",
            Rule::RoleField => "The sender's `role` may not send this field.",
            Rule::StrictId => "With strict ids: an id is not cuid2-shaped.",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_round_trip() {
        let mut ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
        for r in Rule::ALL {
            assert_eq!(Rule::from_id(r.id()), Some(*r));
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), Rule::ALL.len());
    }
}
