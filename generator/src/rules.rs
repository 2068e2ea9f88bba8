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
//! Order of checks (the first error is the one every checker agrees on; [`crate::engine`] is the reference): an
//! object's declared properties in schema order, each one checked in depth (a union picks its member by the
//! discriminator first, then checks that member), then the other keys in input order; array items in order,
//! then the item counts. In a session protocol the role rules run only once the envelope's shape is valid: the
//! event's roles, then envelope fields, then event fields.

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
        /// The line is not JSON every checker reads alike (a syntax error, a truncated last line, an unpaired surrogate
        /// escape, a number beyond the double range).
        MalformedJson = "malformed-json",
        /// The line is not valid UTF-8.
        InvalidUtf8 = "invalid-utf8",
        /// The line is empty or holds only whitespace (Unicode `White_Space`: spaces, tabs, U+00A0, ...).
        BlankLine = "blank-line",
        /// The JSON nests deeper than the parser allows.
        TooDeep = "too-deep",
        /// A value has the wrong JSON type (`null` included, and a non-integer where an integer is required).
        Type = "type",
        /// A required property is missing.
        Required = "required",
        /// A property the schema does not define (closed world).
        AdditionalProperty = "additional-property",
        /// A value is not one of the enum's values.
        Enum = "enum",
        /// A string is shorter than allowed.
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
        /// A string is longer than allowed.
        MaxLength = "max-length",
        /// A string does not match its pattern.
        Pattern = "pattern",
        /// A number is not above its exclusive minimum.
        ExclusiveMinimum = "exclusive-minimum",
        /// A number is not below its exclusive maximum.
        ExclusiveMaximum = "exclusive-maximum",
        /// A number is not a multiple of its divisor.
        MultipleOf = "multiple-of",
        /// A value is not the one value allowed.
        Const = "const",
        /// An array has too few items.
        MinItems = "min-items",
        /// An array has too many items.
        MaxItems = "max-items",
        /// An array holds two equal items.
        UniqueItems = "unique-items",
        /// An array has too few or too many items matching its `contains` schema.
        Contains = "contains",
        /// An object has too few properties.
        MinProperties = "min-properties",
        /// An object has too many properties.
        MaxProperties = "max-properties",
        /// A property name is not allowed.
        PropertyNames = "property-names",
        /// A property required by another one is missing.
        DependentRequired = "dependent-required",
        /// A value matches none of the alternatives.
        AnyOf = "any-of",
        /// A value matches none or several of the alternatives.
        OneOf = "one-of",
        /// A value matches a schema it must not match.
        Not = "not",
        /// No value is allowed here.
        Never = "never",
        /// The discriminator names no member of the union.
        UnknownVariant = "unknown-variant",
    }
}

impl Rule {
    /// One sentence on what the rule means, for the reference.
    pub fn summary(self) -> &'static str {
        match self {
            Rule::MalformedJson => "The line is not JSON every checker reads alike: a syntax error (a truncated last line included), a `\\u` escape of an unpaired surrogate, a number beyond the double range, or a key repeated in one object (parsers differ on which member counts).",
            Rule::InvalidUtf8 => "The line is not valid UTF-8.",
            Rule::BlankLine => "The line is empty or holds only whitespace.",
            Rule::TooDeep => "The JSON nests deeper than 127 levels (arrays and objects, the outermost value included).",
            Rule::Type => {
                "A value has the wrong JSON type (`null` only where the schema allows it; an integer has no fractional part)."
            }
            Rule::Required => "A required property is missing.",
            Rule::AdditionalProperty => "A property a closed object does not define (`additionalProperties: false`).",
            Rule::Enum => "A value is not one of the `enum` values (compared as JSON values).",
            Rule::MinLength => "A string is shorter than its `minLength` (in code points).",
            Rule::Minimum => "A number is below its minimum.",
            Rule::Maximum => "A number is above its maximum.",
            Rule::UnknownEvent => "The event union's discriminator (`ev.t` in the session protocol) names no event of the protocol.",
            Rule::RemovedEvent => "The event union's discriminator names an event this version removed; the message names its replacement.",
            Rule::RemovedProperty => "A property this version removed; the message names its replacement.",
            Rule::RoleEvent => "The sender's `role` may not send this event.",
            Rule::RoleField => "The sender's `role` may not send this field.",
            Rule::StrictId => "With strict ids: an id does not match its `x-strict-pattern` (cuid2 in the session protocol).",
            Rule::MaxLength => "A string is longer than allowed (`maxLength`, in code points).",
            Rule::Pattern => "A string does not match its `pattern` (ECMA-262, Unicode mode, unanchored).",
            Rule::ExclusiveMinimum => "A number is not greater than its `exclusiveMinimum`.",
            Rule::ExclusiveMaximum => "A number is not less than its `exclusiveMaximum`.",
            Rule::MultipleOf => {
                "A number divided by `multipleOf` is not a whole number (IEEE double division); where the quotient \
                 says nothing, because it overflows or `multipleOf` is an integer and the quotient is 2^53 or more, \
                 the remainder of the division is not 0."
            }
            Rule::Const => {
                "A value is not the `const` value (numbers compared by value, objects whatever their key order)."
            }
            Rule::MinItems => "An array has fewer items than `minItems`.",
            Rule::MaxItems => "An array has more items than `maxItems`.",
            Rule::UniqueItems => "Two items of an array with `uniqueItems` are equal.",
            Rule::Contains => {
                "An array has fewer items matching `contains` than `minContains` (1 by default), or more than `maxContains`."
            }
            Rule::MinProperties => "An object has fewer properties than `minProperties`.",
            Rule::MaxProperties => "An object has more properties than `maxProperties`.",
            Rule::PropertyNames => "A property name does not meet `propertyNames` (reported at the property).",
            Rule::DependentRequired => {
                "A property that `dependentRequired` asks for, because another one is present, is missing."
            }
            Rule::AnyOf => "A value matches none of the `anyOf` alternatives.",
            Rule::OneOf => "A value matches none, or more than one, of the `oneOf` alternatives.",
            Rule::Not => "A value matches the schema of `not`.",
            Rule::Never => "No value is allowed here (the schema is `false`).",
            Rule::UnknownVariant => "A union's discriminator names none of its members.",
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
