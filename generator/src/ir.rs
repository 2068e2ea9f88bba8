//! The typed model of a schema package (the IR).
//!
//! The loader ([`crate::load`]) builds one [`Model`] from a schema directory or a single schema file; every
//! emitter and the validation engine read only this model, never raw JSON Schema.
//!
//! The model has two layers:
//! - **types**: named [`TypeDef`]s whose bodies are [`Node`]s: objects, discriminated unions, enums, arrays,
//!   scalars with their constraints, nullable values, and the general combinators (`allOf`, `anyOf`, `oneOf`,
//!   `not`, `if`/`then`/`else`) for what is not a plain type. Every node knows where it came from ([`Origin`]).
//! - **protocol** (optional): the session-protocol annotations (`x-roles`, `x-removed`, `x-categories`, ...)
//!   lowered onto the types: which object is the envelope, which union carries the events, and the role rules
//!   in canonical check order ([`Protocol::role_rules`]). A directory without them is a plain type package.
//!
//! Semantics (shared by every checker; the engine is their reference implementation):
//! - numbers are IEEE doubles (the correctly rounded value of the JSON text, as in JavaScript); an integer is a
//!   number whose fractional part is zero; bounds compare doubles; `multipleOf` holds when `value / m` is a finite
//!   integer;
//! - string lengths count Unicode code points; patterns are ECMA-262 regular expressions in Unicode mode,
//!   unanchored;
//! - `const`, `enum` and `uniqueItems` compare JSON values structurally (numbers by value, object keys unordered);
//! - optional means "may be absent"; `null` is a value, allowed only where the schema says so ([`Shape::Nullable`]).

pub mod evaluation;
pub mod kinds;
pub mod sequence;
pub use evaluation::Evaluation;
pub use sequence::Sequence;

use serde_json::Value;

/// Where a model node comes from: a schema file (relative to the schema root, `/`-separated) and a JSON Pointer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Origin {
    /// The schema file, relative to the schema directory.
    pub file: String,
    /// JSON Pointer into that file.
    pub pointer: String,
}

impl Origin {
    /// No place (the origin of what stands for a missing type).
    pub const NONE: Origin = Origin { file: String::new(), pointer: String::new() };

    /// Whether `other` is this place or below it (in the same file, a pointer of whole tokens under this one).
    pub fn holds(&self, other: &Origin) -> bool {
        self.file == other.file
            && other.pointer.strip_prefix(&self.pointer).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }
}

/// Index of a [`TypeDef`] in [`Model::types`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TypeId(pub usize);

/// A whole schema package.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Human title (the root schema's `title`, else the npm package name).
    pub title: String,
    /// Description of the package (the root schema's `description`).
    pub description: String,
    /// Base URI of the schema files (the root's `$id` without the file name), for the bundled schema.
    pub base_uri: String,
    /// Names of the generated packages.
    pub package: Package,
    /// Every named type, in a deterministic order (files in path order; in a file, the root, then `$defs` in
    /// document order, then inline types in the order they are met).
    pub types: Vec<TypeDef>,
    /// The type `validate` and `serve` check by default (`x-root`, the protocol's envelope, or a single file's
    /// root).
    pub root: Option<TypeId>,
    /// The session-protocol layer, when the schema declares one.
    pub protocol: Option<Protocol>,
}

/// Names of the generated packages (`x-package` on the root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// The Rust crate name (e.g. `session-wire`).
    pub crate_name: String,
    /// The npm package name.
    pub npm_name: String,
    /// The version both packages carry (`x-package`'s `version`, `0.1.0` when it gives none): SemVer, as Cargo
    /// and npm read it.
    pub version: String,
    /// The licence both packages carry, an SPDX expression (`x-package`'s `license`, [`Package::DEFAULT_LICENSE`]
    /// when it gives none; only that one comes with its texts in a `LICENSE` file).
    pub license: String,
}

impl Package {
    /// The licence of a package whose schema names none: wiregen's own.
    pub const DEFAULT_LICENSE: &'static str = "MIT OR Apache-2.0";

    /// Whether the generated packages carry the default licence, whose texts wiregen writes (`LICENSE`).
    #[must_use]
    pub fn default_license(&self) -> bool {
        self.license == Self::DEFAULT_LICENSE
    }
}

/// A named type.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeDef {
    /// Export names per language, derived once by the naming rule ([`crate::load`] documents it).
    pub names: Names,
    /// Other names the type is also exported under (`x-aliases`: names an earlier version of the package used),
    /// each named per language like a base name.
    pub aliases: Vec<Names>,
    /// Whether the schema named the type (`x-name`), rather than the loader deriving a name from its location.
    pub explicit_name: bool,
    /// Whether the type is a part of another type at its location, named after it (`UEnum`, the `enum` of a
    /// `$defs` entry `U` with a `minLength` beside it): no type the schema declares.
    pub part: bool,
    /// Description from the schema.
    pub description: Option<String>,
    /// Examples from the schema.
    pub examples: Vec<Value>,
    /// The schema's other annotations (`title`, `default`, `deprecated`, `readOnly`, `writeOnly`).
    pub annotations: Annotations,
    /// Where the type is defined.
    pub origin: Origin,
    /// The name this type had in the previous version (`x-renamed-from` on a file root or `$defs` entry that is
    /// not an event; an event's old discriminator value is [`Event::renamed_from`]).
    pub renamed_from: Option<String>,
    /// The type's body.
    pub node: Node,
}

/// Export names of one type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// The model name in PascalCase (`x-name`, or derived from the file, `$defs` key or path).
    pub base: String,
    /// Rust type name.
    pub rust: String,
    /// TypeScript type name.
    pub ts: String,
    /// Zod schema constant name.
    pub zod: String,
    /// Where each name was given, for the errors about it.
    pub at: NameOrigins,
}

/// Where a type's names were given: the keyword that gave each (`x-rust-name`, `x-ts-name`, `x-zod-name`; `x-name`
/// for a name made from the base name it gave; `x-aliases/N` for an alias), or the type's schema for a derived name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameOrigins {
    /// Of the Rust name.
    pub rust: Origin,
    /// Of the TypeScript name (and of the names made from it, such as a validator's).
    pub ts: Origin,
    /// Of the Zod name.
    pub zod: Origin,
}

impl Names {
    /// The names of a type before naming gives them (and of the type that stands for a missing one).
    pub const UNSET: Names = Names {
        base: String::new(),
        rust: String::new(),
        ts: String::new(),
        zod: String::new(),
        at: NameOrigins { rust: Origin::NONE, ts: Origin::NONE, zod: Origin::NONE },
    };
}

impl NameOrigins {
    /// Every name given at `at`.
    pub fn all(at: &Origin) -> NameOrigins {
        NameOrigins { rust: at.clone(), ts: at.clone(), zod: at.clone() }
    }
}

/// One schema node: a shape with its origin and description.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Where the node is.
    pub origin: Origin,
    /// Description from the schema, when the node has one of its own.
    pub description: Option<String>,
    /// What the node accepts.
    pub shape: Shape,
}

/// The kind of a JSON value, as a member of [`Shape::Kinds`] takes it ([`Model::kind_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum JsonKind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A number (an integer member is a number member).
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonKind {
    /// JavaScript's `typeof` word for it, with `null` and `array` apart (as the TypeScript runtime names kinds).
    pub fn name(self) -> &'static str {
        match self {
            JsonKind::Null => "null",
            JsonKind::Boolean => "boolean",
            JsonKind::Number => "number",
            JsonKind::String => "string",
            JsonKind::Array => "array",
            JsonKind::Object => "object",
        }
    }
}

/// What a node accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Any JSON value (`true`, `{}`).
    Any,
    /// No value (`false`).
    Never,
    /// The named type.
    Ref(TypeId),
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A string.
    String(StringShape),
    /// A number (or an integer).
    Number(NumberShape),
    /// Exactly this JSON value.
    Const(Value),
    /// One of these JSON values.
    Enum(Vec<Value>),
    /// An array.
    Array(ArrayShape),
    /// An object.
    Object(ObjectShape),
    /// A union of objects discriminated by one property.
    Union(UnionShape),
    /// `null`, or a value of the inner node.
    Nullable(Box<Node>),
    /// Values of several JSON kinds, each with its own constraints (`type: [...]`, or no `type` at all): each
    /// member accepts one kind (null, boolean, number, string, array, object), and no two share a kind.
    Kinds(Vec<Node>),
    /// Every member holds.
    AllOf(Vec<Node>),
    /// At least one member holds.
    AnyOf(Vec<Node>),
    /// Exactly one member holds.
    OneOf(Vec<Node>),
    /// The member does not hold.
    Not(Box<Node>),
    /// `if`/`then`/`else`: when `cond` holds, `then` must; otherwise `otherwise` must.
    Cond {
        /// The condition.
        cond: Box<Node>,
        /// Checked when the condition holds.
        then: Option<Box<Node>>,
        /// Checked when it does not.
        otherwise: Option<Box<Node>>,
    },
    /// One entry of `dependentSchemas`: when the value is an object holding `property`, `then` must hold (of the
    /// whole object).
    Dependent {
        /// The property whose presence applies `then`.
        property: String,
        /// Checked when the property is present.
        then: Box<Node>,
    },
    /// `unevaluatedProperties` (or, with `items`, `unevaluatedItems`) beside applicators: `inner` holds, and every
    /// property of an object (item of an array) that `inner` does not evaluate ([`Model::evaluation`]) meets
    /// `rest` (`Never` for `false`).
    Unevaluated {
        /// The rest of the schema object.
        inner: Box<Node>,
        /// The schema of the properties (items) `inner` does not evaluate.
        rest: Box<Node>,
        /// Whether this is `unevaluatedItems`.
        items: bool,
    },
}

/// The keyword of a [`Shape::Unevaluated`]: `unevaluatedItems` with `items`, else `unevaluatedProperties`.
pub fn unevaluated_keyword(items: bool) -> &'static str {
    if items {
        "unevaluatedItems"
    } else {
        "unevaluatedProperties"
    }
}

/// A string and its constraints.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StringShape {
    /// Minimum length in code points.
    pub min_length: Option<u64>,
    /// Maximum length in code points.
    pub max_length: Option<u64>,
    /// A pattern the string must match (somewhere; patterns are not anchored).
    pub pattern: Option<Pattern>,
    /// A pattern checked only with strict ids (`x-strict-pattern`).
    pub strict_pattern: Option<Pattern>,
}

/// A regular expression, checked by the loader to mean the same in JavaScript and in Rust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// The ECMA-262 source, as written in the schema (JavaScript uses it with the `u` flag).
    pub source: String,
    /// The same expression in the syntax of Rust's `regex` crate.
    pub rust: String,
    /// The same expression for JavaScript (`u` flag), its `\p{..}` classes spelled out from the `regex` crate's
    /// Unicode tables (`pattern::translate`).
    pub js: String,
    /// The program the JavaScript outputs match it with, in time linear in the string
    /// (`pattern::linear`).
    pub linear: crate::pattern::linear::Program,
}

impl Pattern {
    /// Whether every string matches it (`""`, `^`, `a*`: it matches the empty text at the start of any string):
    /// such a pattern says what none says.
    pub fn matches_every_string(&self) -> bool {
        crate::pattern::matches_every_string(&self.rust)
    }
}

/// A number and its constraints (all compared as doubles).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NumberShape {
    /// Only whole numbers (`type: integer`).
    pub integer: bool,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: Option<f64>,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: Option<f64>,
    /// `multipleOf` (positive).
    pub multiple_of: Option<f64>,
}

/// An array and its constraints.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayShape {
    /// Schemas of the first elements, by position (`prefixItems`).
    pub prefix: Vec<Node>,
    /// Schema of the other elements (`items`); `None` accepts any.
    pub items: Option<Box<Node>>,
    /// `minItems`.
    pub min_items: Option<u64>,
    /// `maxItems`.
    pub max_items: Option<u64>,
    /// `uniqueItems: true`.
    pub unique: bool,
    /// Whether `items` is written (`true` included): it then *evaluates* the items after the prefix, for an
    /// `unevaluatedItems` around the array ([`Model::evaluation`]).
    pub items_written: bool,
    /// `contains`, with `minContains` and `maxContains`.
    pub contains: Option<Contains>,
}

/// `contains`: how many of an array's items must match a schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Contains {
    /// The schema the items are counted against.
    pub node: Box<Node>,
    /// `minContains`: at least this many items match (1 when not given; 0 leaves only `max`).
    pub min: u64,
    /// `maxContains`: at most this many items match.
    pub max: Option<u64>,
}

/// An object and its constraints.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectShape {
    /// Declared properties, in schema order.
    pub fields: Vec<Field>,
    /// Properties `required` names without declaring them: they must be present, with any value.
    pub required_only: Vec<String>,
    /// What other properties may be.
    pub additional: Additional,
    /// Whether `additionalProperties` (or an `unevaluatedProperties` that means it) is written: an open object
    /// then *evaluates* its other properties, for an `unevaluatedProperties` around it ([`Model::evaluation`]).
    pub additional_written: bool,
    /// `patternProperties`: a property whose name matches is checked against the node (and is not additional).
    pub pattern_properties: Vec<(Pattern, Node)>,
    /// `propertyNames`: every property name must be a string this node accepts.
    pub property_names: Option<Box<Node>>,
    /// `minProperties`.
    pub min_properties: Option<u64>,
    /// `maxProperties`.
    pub max_properties: Option<u64>,
    /// `dependentRequired`: when the first property is present, each of the others must be.
    pub dependent_required: Vec<(String, Vec<String>)>,
    /// Properties an earlier version had (reported as `removed-property`).
    pub removed: Vec<RemovedProperty>,
}

impl ObjectShape {
    /// An open object with these fields and no other constraint.
    pub fn open(fields: Vec<Field>) -> Self {
        ObjectShape {
            fields,
            required_only: Vec::new(),
            additional: Additional::Open,
            additional_written: false,
            pattern_properties: Vec::new(),
            property_names: None,
            min_properties: None,
            max_properties: None,
            dependent_required: Vec::new(),
            removed: Vec::new(),
        }
    }
}

/// A property an earlier version of an object had.
#[derive(Debug, Clone, PartialEq)]
pub struct RemovedProperty {
    /// The property name.
    pub name: String,
    /// What replaces it.
    pub replacement: String,
    /// What the object is called in messages (the event's discriminator value).
    pub owner: String,
}

/// The annotations of a schema object besides `description` and `examples`: no output's verdict depends on them
/// (JSON Schema collects them, it does not check them); the bundled schema carries them where they were, and the
/// Rust and TypeScript doc comments and the reference state them ([`Annotations::notes`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Annotations {
    /// `title`.
    pub title: Option<String>,
    /// `default`: the value a reader may assume when the property is absent. No output fills it in, as no JSON
    /// Schema validator does.
    pub default: Option<Value>,
    /// `deprecated: true`.
    pub deprecated: bool,
    /// `readOnly: true`.
    pub read_only: bool,
    /// `writeOnly: true`.
    pub write_only: bool,
}

impl Annotations {
    /// No annotation (a `const`, for the type [`Model::ty`] gives for an id it does not hold).
    pub const NONE: Annotations =
        Annotations { title: None, default: None, deprecated: false, read_only: false, write_only: false };

    /// What the annotations say, one markdown sentence each, in the order the doc comments and the reference
    /// print them: `Deprecated.`, `Read-only.`, `Write-only.`, ``Default: `"x"`.`` (the title is a heading,
    /// not a note).
    pub fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.deprecated {
            out.push("Deprecated.".to_string());
        }
        if self.read_only {
            out.push("Read-only.".to_string());
        }
        if self.write_only {
            out.push("Write-only.".to_string());
        }
        if let Some(d) = &self.default {
            out.push(format!("Default: {}.", crate::diag::code_span(&crate::diag::json_text(d))));
        }
        out
    }
}

/// One declared property.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The JSON property name.
    pub name: String,
    /// Description (the property's own, else its type's).
    pub description: Option<String>,
    /// The property schema's own `examples`.
    pub examples: Vec<Value>,
    /// The property schema's own other annotations.
    pub annotations: Annotations,
    /// Whether the property must be present. An optional property may be absent; `null` only where the node
    /// accepts it.
    pub required: bool,
    /// The name this property had in the previous version (`x-renamed-from`).
    pub renamed_from: Option<String>,
    /// Where the value was in a message of the previous version (`x-moved-from`): a JSON Pointer from the old
    /// envelope's root, e.g. `/subagent` for an event property whose value the old envelope carried.
    pub moved_from: Option<String>,
    /// The value's node.
    pub node: Node,
}

impl Field {
    /// What the property's annotations say ([`Annotations::notes`]), then its examples (`Example: `1`.`,
    /// `Examples: `1`, `2`.`), one markdown sentence each.
    pub fn notes(&self) -> Vec<String> {
        let mut out = self.annotations.notes();
        if !self.examples.is_empty() {
            let shown: Vec<String> =
                self.examples.iter().map(|x| crate::diag::code_span(&crate::diag::json_text(x))).collect();
            let label = if shown.len() == 1 { "Example" } else { "Examples" };
            out.push(format!("{label}: {}.", shown.join(", ")));
        }
        out
    }
}

/// Properties an object does not declare.
#[derive(Debug, Clone, PartialEq)]
pub enum Additional {
    /// Rejected (`additionalProperties: false`).
    Closed,
    /// Accepted and kept (absent or `true`).
    Open,
    /// Accepted, and dropped from typed values (`x-unknown-keys: strip`; Zod's default `z.object`).
    Strip,
    /// Accepted when the value matches (`additionalProperties: {schema}`): a map.
    Schema(Box<Node>),
}

/// A union of object types discriminated by one property, each member fixing it with a `const`.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionShape {
    /// The discriminator property.
    pub discriminator: String,
    /// The members, in order.
    pub members: Vec<Member>,
    /// Discriminator values an earlier version had, with their replacements (reported as `removed-event`).
    pub removed: Vec<(String, String)>,
    /// Whether this is the protocol's event union (its bad discriminators are `unknown-event`, else
    /// `unknown-variant`).
    pub events: bool,
}

impl UnionShape {
    /// What a discriminator of no member's kind is expected to be, as every checker says it: the kinds of the
    /// members' tags, in member order (`a string`, `a string or a boolean`).
    pub fn expected_tag(&self) -> String {
        let mut words: Vec<&str> = Vec::new();
        for m in &self.members {
            let word = match &m.tag {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "an integer",
                _ => "a string",
            };
            if !words.contains(&word) {
                words.push(word);
            }
        }
        match words.split_last() {
            None => "a string".to_string(),
            Some((last, [])) => last.to_string(),
            Some((last, init)) => format!("{} or {last}", init.join(", ")),
        }
    }
}

/// One member of a union.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// The discriminator value (a string, a boolean or an integer).
    pub tag: Value,
    /// The member's object type.
    pub ty: TypeId,
}

/// The session-protocol layer: which types play which part, and the rules across them.
#[derive(Debug, Clone, PartialEq)]
pub struct Protocol {
    /// The envelope object type.
    pub envelope: TypeId,
    /// The envelope property saying who sent the message (`x-role-property`).
    pub role_field: String,
    /// The role enum type and its values.
    pub role_enum: TypeId,
    /// The role names, in enum order.
    pub roles: Vec<String>,
    /// The envelope property carrying the event union.
    pub union_field: String,
    /// The event union type.
    pub union: TypeId,
    /// One entry per union member, in member order.
    pub events: Vec<Event>,
    /// Roles allowed per envelope field (only restricted fields).
    pub envelope_field_roles: Vec<(String, Vec<String>)>,
    /// Envelope properties a constructor fills when the caller leaves them out (`x-auto`).
    pub auto: Vec<(String, AutoValue)>,
    /// Categories in document order.
    pub categories: Vec<Category>,
    /// What earlier versions had and this one removed, in document order.
    pub removed: Vec<Removed>,
    /// Whole example sessions for the reference (`x-flows`), in document order.
    pub flows: Vec<Flow>,
    /// What stays outside the stream, and why (`x-side-channels`).
    pub side_channels: Vec<SideChannel>,
    /// Open questions of the protocol and what this package decided for each (`x-open-questions`).
    pub open_questions: Vec<OpenQuestion>,
    /// The sequence rules and the rollup (`x-sequence`); empty when the protocol declares none.
    pub sequence: Sequence,
}

/// An example session (`x-flows`): messages in order, each with an optional comment.
#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    /// Section title.
    pub title: String,
    /// What the session shows (markdown).
    pub description: String,
    /// The messages.
    pub steps: Vec<FlowStep>,
}

/// One message of a [`Flow`].
#[derive(Debug, Clone, PartialEq)]
pub struct FlowStep {
    /// A comment printed before the message (what happens here).
    pub note: Option<String>,
    /// The envelope.
    pub message: Value,
}

/// Something that does not travel in the stream (`x-side-channels`).
#[derive(Debug, Clone, PartialEq)]
pub struct SideChannel {
    /// What it is (markdown).
    pub thing: String,
    /// How it travels instead (markdown).
    pub mechanism: String,
    /// Why it is not in the stream (markdown).
    pub why: String,
}

/// An open question and the decision this package applies (`x-open-questions`).
#[derive(Debug, Clone, PartialEq)]
pub struct OpenQuestion {
    /// The question (markdown).
    pub question: String,
    /// What this package does about it (markdown).
    pub decision: String,
}

/// Protocol facts about one event (union member).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The discriminator value.
    pub tag: String,
    /// The member type.
    pub ty: TypeId,
    /// Roles that may send it.
    pub roles: Vec<String>,
    /// Roles allowed per field (only restricted fields), in field order.
    pub field_roles: Vec<(String, Vec<String>)>,
    /// Category name.
    pub category: String,
    /// Change status against the previous version.
    pub status: String,
    /// What changed.
    pub status_note: Option<String>,
    /// The discriminator value this event had in the previous version (`x-renamed-from` on the event).
    pub renamed_from: Option<String>,
}

/// A category of events, for documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct Category {
    /// Short name used by `x-category`.
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
    /// Where the entry is (in the envelope's `x-removed`).
    pub origin: Origin,
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

/// What a constructor fills in (`x-auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoValue {
    /// A fresh cuid2-shaped id.
    Id,
    /// The current time in milliseconds since the Unix epoch.
    Now,
}

/// A role rule of the protocol, as every checker applies it (see [`Protocol::role_rules`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleRule<'a> {
    /// Only these roles may send the event (`role-event`, at the role property).
    Event {
        /// The roles that may.
        allowed: &'a [String],
    },
    /// Only these roles may send this envelope property (`role-field`, at the property).
    EnvelopeField {
        /// The property.
        name: &'a str,
        /// The roles that may.
        allowed: &'a [String],
    },
    /// Only these roles may send this property of the event (`role-field`, at the property).
    EventField {
        /// The property.
        name: &'a str,
        /// The roles that may.
        allowed: &'a [String],
    },
}

/// What an id outside [`Model::types`] stands for: a nameless type that accepts nothing.
static MISSING_TYPE: TypeDef = TypeDef {
    names: Names::UNSET,
    aliases: Vec::new(),
    explicit_name: false,
    part: false,
    description: None,
    examples: Vec::new(),
    annotations: Annotations::NONE,
    origin: Origin::NONE,
    renamed_from: None,
    node: Node { origin: Origin::NONE, description: None, shape: Shape::Never },
};

impl Model {
    /// The type with this id. An id the model does not have (a hand-built model can hold one) is a type that
    /// accepts nothing, never a panic.
    pub fn ty(&self, id: TypeId) -> &TypeDef {
        self.types.get(id.0).unwrap_or(&MISSING_TYPE)
    }

    /// A type's `title` where it says something its heading does not already: not an event's tag nor the
    /// package's title (the protocol's event files and root are titled so).
    pub fn own_title(&self, id: TypeId) -> Option<&str> {
        let title = self.ty(id).annotations.title.as_deref().filter(|t| !t.trim().is_empty())?;
        let tag = self.protocol.as_ref().and_then(|p| p.events.iter().find(|e| e.ty == id)).map(|e| e.tag.as_str());
        (Some(title) != tag && title != self.title).then_some(title)
    }

    /// Follows references: the node `n` finally stands for, and the last named type on the way (`None` when `n`
    /// is no reference).
    pub fn resolve_node<'m>(&'m self, mut n: &'m Node) -> (&'m Node, Option<TypeId>) {
        // Reference chains are acyclic (the loader refuses cycles that no object or array breaks).
        let mut last = None;
        for _ in 0..=self.types.len() {
            match n.shape {
                Shape::Ref(id) => {
                    last = Some(id);
                    n = &self.ty(id).node;
                }
                _ => break,
            }
        }
        (n, last)
    }

    /// The type whose base, Rust, TypeScript or Zod name, or one of its aliases' (`x-aliases`), is `name` (the
    /// loader refuses a name two types share). Aliases were not looked up until stop 69, though every output
    /// prints them as the type (helper 106: `--type ServiceMessage`).
    pub fn type_named(&self, name: &str) -> Option<TypeId> {
        let is = |n: &Names| n.base == name || n.rust == name || n.ts == name || n.zod == name;
        self.types.iter().position(|t| is(&t.names) || t.aliases.iter().any(is)).map(TypeId)
    }

    /// Follows references: the shape a node finally stands for.
    pub fn resolve<'a>(&'a self, shape: &'a Shape) -> &'a Shape {
        match shape {
            Shape::Ref(id) => &self.resolve_node(&self.ty(*id).node).0.shape,
            other => other,
        }
    }

    /// The JSON kind a member of [`Shape::Kinds`] takes: the member a value of that kind is checked against
    /// (`None` for a shape no member has).
    pub fn kind_of(&self, member: &Shape) -> Option<JsonKind> {
        Some(match self.resolve(member) {
            Shape::Null => JsonKind::Null,
            Shape::Boolean => JsonKind::Boolean,
            Shape::Number(_) => JsonKind::Number,
            Shape::String(_) => JsonKind::String,
            Shape::Array(_) => JsonKind::Array,
            Shape::Object(_) | Shape::Union(_) => JsonKind::Object,
            _ => return None,
        })
    }

    /// How a member of [`Shape::Kinds`] is named in a `type` error ("an integer", "a string", "null"); every
    /// output's message says it so.
    pub fn kind_word(&self, member: &Shape) -> &'static str {
        match self.resolve(member) {
            Shape::Number(n) if n.integer => "an integer",
            _ => match self.kind_of(member) {
                Some(JsonKind::Null) => "null",
                Some(JsonKind::Boolean) => "a boolean",
                Some(JsonKind::Number) => "a number",
                Some(JsonKind::String) => "a string",
                Some(JsonKind::Array) => "an array",
                Some(JsonKind::Object) | None => "an object",
            },
        }
    }

    /// The types a node leads to through references and union members, at any depth: `true` at their index.
    pub fn reachable_types(&self, from: &Node) -> Vec<bool> {
        let mut seen = vec![false; self.types.len()];
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            n.visit(&mut |x: &Node| {
                let mut follow = |id: TypeId| {
                    if id.0 < seen.len() && !std::mem::replace(&mut seen[id.0], true) {
                        stack.push(&self.ty(id).node);
                    }
                };
                match &x.shape {
                    Shape::Ref(id) => follow(*id),
                    Shape::Union(u) => u.members.iter().for_each(|mb| follow(mb.ty)),
                    _ => {}
                }
            });
        }
        seen
    }

    /// Whether decoding a value through `n` may drop some of its properties: an object in it or in a type it
    /// leads to ([`Self::reachable_types`]) strips what it does not declare (`x-unknown-keys: strip`). Nothing
    /// else a schema says changes a value, so an output whose value is its input where this is `false` may type
    /// it by every schema it passed.
    pub fn may_drop_keys(&self, n: &Node) -> bool {
        let strips = |n: &Node| {
            let mut found = false;
            n.visit(&mut |x: &Node| found |= matches!(&x.shape, Shape::Object(o) if o.additional == Additional::Strip));
            found
        };
        strips(n) || self.reachable_types(n).iter().zip(&self.types).any(|(r, t)| *r && strips(&t.node))
    }

    /// Whether any string of the model has a strict-id pattern (`x-strict-pattern`), which is what
    /// `--strict-ids` checks: without one that option changes nothing.
    pub fn has_strict_patterns(&self) -> bool {
        let mut found = false;
        self.visit_patterns(&mut |_, strict| found |= strict);
        found
    }

    /// Calls `f` with every pattern of the model, and whether it is a strict-id pattern.
    pub fn visit_patterns(&self, f: &mut dyn FnMut(&Pattern, bool)) {
        for t in &self.types {
            t.node.visit(&mut |n: &Node| match &n.shape {
                Shape::String(s) => {
                    if let Some(p) = &s.pattern {
                        f(p, false);
                    }
                    if let Some(p) = &s.strict_pattern {
                        f(p, true);
                    }
                }
                Shape::Object(o) => o.pattern_properties.iter().for_each(|(p, _)| f(p, false)),
                _ => {}
            });
        }
    }
}

impl Node {
    /// Calls `f` on this node and every node inside it (not through references).
    pub fn visit(&self, f: &mut dyn FnMut(&Node)) {
        f(self);
        for c in self.children() {
            c.visit(f);
        }
    }

    /// Calls `f` with every type this node refers to: its references and its unions' members (not through the
    /// references).
    pub fn visit_refs(&self, f: &mut dyn FnMut(TypeId)) {
        self.visit(&mut |n: &Node| match &n.shape {
            Shape::Ref(r) => f(*r),
            Shape::Union(u) => u.members.iter().for_each(|mb| f(mb.ty)),
            _ => {}
        });
    }

    /// The nodes directly below this one, in schema order (a `$ref` names a type; it has no child).
    pub fn children(&self) -> Vec<&Node> {
        match &self.shape {
            Shape::Array(a) => {
                a.prefix.iter().chain(a.items.as_deref()).chain(a.contains.as_ref().map(|c| &*c.node)).collect()
            }
            Shape::Object(o) => {
                let extra = match &o.additional {
                    Additional::Schema(s) => Some(&**s),
                    _ => None,
                };
                o.fields
                    .iter()
                    .map(|f| &f.node)
                    .chain(extra)
                    .chain(o.pattern_properties.iter().map(|(_, p)| p))
                    .chain(o.property_names.as_deref())
                    .collect()
            }
            Shape::Nullable(x) | Shape::Not(x) => vec![x],
            Shape::Kinds(ms) | Shape::AllOf(ms) | Shape::AnyOf(ms) | Shape::OneOf(ms) => ms.iter().collect(),
            Shape::Cond { cond, then, otherwise } => {
                std::iter::once(&**cond).chain(then.as_deref()).chain(otherwise.as_deref()).collect()
            }
            Shape::Dependent { then, .. } => vec![then],
            Shape::Unevaluated { inner, rest, .. } => vec![inner, rest],
            _ => Vec::new(),
        }
    }
}

impl Protocol {
    /// The event with this discriminator value.
    pub fn event(&self, tag: &str) -> Option<&Event> {
        self.events.iter().find(|e| e.tag == tag)
    }

    /// The events' discriminator property (e.g. `t`).
    pub fn discriminator<'a>(&self, model: &'a Model) -> &'a str {
        match &model.ty(self.union).node.shape {
            Shape::Union(u) => &u.discriminator,
            _ => "",
        }
    }

    /// The role rules of one event, in the order every checker applies them: who may send the event, then the
    /// restricted envelope properties in schema order, then the event's restricted properties in schema order.
    pub fn role_rules<'a>(&'a self, event: &'a Event) -> impl Iterator<Item = RoleRule<'a>> + 'a {
        std::iter::once(RoleRule::Event { allowed: &event.roles })
            .chain(self.envelope_field_roles.iter().map(|(n, r)| RoleRule::EnvelopeField { name: n, allowed: r }))
            .chain(event.field_roles.iter().map(|(n, r)| RoleRule::EventField { name: n, allowed: r }))
    }

    /// The replacement of a removed event, if `tag` was one.
    pub fn removed_event(&self, tag: &str) -> Option<(&Removed, &str)> {
        self.removed.iter().find_map(|r| match &r.kind {
            RemovedKind::Events(evs) => evs.iter().find(|(t, _)| t == tag).map(|(_, rep)| (r, rep.as_str())),
            RemovedKind::Property { .. } => None,
        })
    }

    /// Removed discriminator values that are replaced by `tag` (e.g. `start` for `subagent-start`).
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
}

/// Converts `tool-call-start`, `input_tokens` or `inputTokens` to one PascalCase word (`ToolCallStart`,
/// `InputTokens`): characters other than ASCII letters and digits separate words; a leading digit gets an `N`.
pub fn pascal_case(s: &str) -> String {
    let mut out = String::new();
    let mut up = true;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            if up {
                out.push(c.to_ascii_uppercase());
                up = false;
            } else {
                out.push(c);
            }
        } else {
            up = true;
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'N');
    }
    out
}

/// Converts `toolName` or `tool-call` to `tool_name` / `tool_call`.
pub fn snake_case(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '-' || c == ' ' || c == '.' {
            out.push('_');
        } else if c.is_uppercase() {
            // A capital starts a word after a lowercase letter or a digit, and, in a run of capitals (an acronym),
            // where the next letter is lowercase: `HTTPServer` is `http_server`, `userID` `user_id`.
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let starts = prev.is_some_and(|p| {
                p.is_lowercase() || p.is_ascii_digit() || p.is_uppercase() && next.is_some_and(|n| n.is_lowercase())
            });
            if starts && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Converts `tool-call-start` to `toolCallStart`.
pub fn camel_case(s: &str) -> String {
    let p = pascal_case(s);
    let mut c = p.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}
