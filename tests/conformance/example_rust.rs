//! The happy-wire example's generated Rust crate (`examples/happy-wire/generated/rust`, `happy-wire`) on the
//! example's fixtures.
//!
//! - `rust-serde` (precise): the verdict of `serde_json::from_str::<T>` on the fixture's text, and the first
//!   error of `T::from_value`, which must be the engine's rule and pointer (the two must agree on the verdict);
//! - `rust-schemars`: the schema `schemars` derives for `T` (the type's exact JSON Schema) through the
//!   `jsonschema` crate, held to the verdict;
//! - the round trip: every valid fixture parses, and serializes back to what happy-wire's own parse returns
//!   (`parsed`: strip objects drop unknown keys, open objects keep them), numbers written alike (a whole `f64`
//!   is `5`, as JavaScript writes it, not `5.0`) and keys as sets (the crate writes declared keys in schema order, then the kept unknown keys in input order;
//!   happy-wire's Zod keeps the input's order).
//!
//! Each fixture names its type by its exported Zod schema name; the model gives its Rust name.

use serde_json::Value;

use crate::checkers::Verdict;
use crate::example::{fixtures, schema_dir, ExampleChecker, ExampleFixture};

/// The example's Rust checkers, for `example::checkers()`.
pub fn checkers() -> Vec<ExampleChecker> {
    vec![
        ExampleChecker { name: "rust-serde", precise: true, run: serde_verdicts },
        ExampleChecker { name: "rust-schemars", precise: false, run: schemars_verdicts },
    ]
}

/// What the crate makes of one value.
struct Answer {
    /// `serde_json::from_str::<T>` accepted the text.
    serde: bool,
    /// `T::from_value`: the value serialized back, or the first error's rule and pointer.
    typed: Result<Value, (String, String)>,
    /// The derived schema of `T`.
    schema: Value,
}

/// Runs `$f` with the Rust type named `$name`, among every type the fixtures name.
macro_rules! with_type {
    ($name:expr, $v:expr, [$($t:ident),* $(,)?]) => {
        match $name {
            $(stringify!($t) => Some(answer::<happy_wire::$t>($v, happy_wire::$t::from_value)),)*
            _ => None,
        }
    };
}

fn answer<T>(v: &Value, from_value: fn(&Value) -> Result<T, happy_wire::Error>) -> Answer
where
    T: serde::de::DeserializeOwned + serde::Serialize + schemars::JsonSchema,
{
    let text = serde_json::to_string(v).expect("JSON");
    let serde = serde_json::from_str::<T>(&text).is_ok();
    let typed = from_value(v)
        .map(|x| serde_json::to_value(&x).expect("serializes"))
        .map_err(|e| (e.rule().id().to_string(), e.pointer().to_string()));
    let schema = serde_json::to_value(schemars::schema_for!(T)).expect("schema");
    Answer { serde, typed, schema }
}

/// The Rust name of a fixture's type.
fn rust_name(model: &wiregen::ir::Model, zod: &str) -> String {
    let id = model.type_named(zod).unwrap_or_else(|| panic!("no type `{zod}` in the example"));
    model.ty(id).names.rust.clone()
}

fn answers(fx: &[ExampleFixture]) -> Vec<Answer> {
    let model = wiregen::load::load(&schema_dir()).expect("the example's schema loads");
    fx.iter()
        .map(|f| {
            let name = rust_name(&model, &f.ty);
            with_type!(
                name.as_str(),
                &f.value,
                [
                    AgentMessage,
                    ApiMessage,
                    ApiUpdateMachineState,
                    ApiUpdateNewMessage,
                    ApiUpdateSessionState,
                    CoreUpdateBody,
                    CoreUpdateContainer,
                    LegacyMessageContent,
                    MessageContent,
                    MessageMeta,
                    RigActivity,
                    RigCapabilities,
                    RigMetadataV1,
                    RigModel,
                    RigOperatingModeKind,
                    RigOperatingMode,
                    RigProvider,
                    SessionMessageContent,
                    SessionMessage,
                    SessionProtocolMessage,
                    UpdateBody,
                    UpdateMachineBody,
                    UpdateNewMessageBody,
                    Update,
                    UpdateSessionBody,
                    UserMessage,
                    VersionedEncryptedValue,
                    VersionedMachineEncryptedValue,
                    VersionedNullableEncryptedValue,
                    VoiceConversationDenied,
                    VoiceConversationGranted,
                    VoiceConversationResponse,
                    VoiceUsageResponse,
                    Envelope,
                    Event,
                    File,
                    Role,
                    ServiceMessage,
                    Start,
                    Stop,
                    Text,
                    ToolCallEnd,
                    ToolCallStart,
                    TurnEnd,
                    TurnEndStatus,
                    TurnStart,
                    Usage,
                ]
            )
            .unwrap_or_else(|| panic!("{}: the Rust type `{name}` is not in the checker's list", f.name))
        })
        .collect()
}

fn serde_verdicts(fx: &[ExampleFixture]) -> Vec<Verdict> {
    answers(fx)
        .into_iter()
        .map(|a| match (a.serde, a.typed) {
            (true, Ok(_)) => Verdict::Valid,
            (false, Err((rule, pointer))) => Verdict::Invalid { rule, pointer },
            (serde, typed) => Verdict::Invalid {
                rule: "serde and from_value disagree".into(),
                pointer: format!("serde {serde}, from_value {typed:?}"),
            },
        })
        .collect()
}

fn schemars_verdicts(fx: &[ExampleFixture]) -> Vec<Verdict> {
    answers(fx)
        .into_iter()
        .zip(fx)
        .map(|(a, f)| {
            let v = jsonschema::draft202012::new(&a.schema).expect("derived schema compiles");
            let verdict = match v.iter_errors(&f.value).next() {
                None => Verdict::Valid,
                Some(e) => Verdict::Invalid {
                    rule: format!("{:?}", e.kind()).chars().take(40).collect(),
                    pointer: e.instance_path().to_string(),
                },
            };
            verdict
        })
        .collect()
}

#[test]
fn every_valid_example_fixture_round_trips_to_happy_wires_parsed_value() {
    let fx = fixtures();
    let all = answers(&fx);
    let mut checked = 0;
    let mut failures = Vec::new();
    for (f, a) in fx.iter().zip(all) {
        let Some(parsed) = &f.parsed else { continue };
        match a.typed {
            // `Value`'s equality tells `5` from `5.0` (happy-wire's value is written by JavaScript, which writes
            // `5`); keys are compared as sets.
            Ok(back) if back == *parsed => checked += 1,
            Ok(back) => failures.push(format!("{}: serialized as {back}, happy-wire parses {parsed}", f.name)),
            Err(e) => failures.push(format!("{}: refused {e:?}", f.name)),
        }
    }
    assert!(failures.is_empty(), "{} round trip(s) differ:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 150, "valid fixtures: {checked}");
}
