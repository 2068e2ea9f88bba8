//! The generated Rust crate (`generated/rust`, `session-wire`) in the conformance test.
//!
//! Three checkers run the whole corpus: `rust-serde` (the verdict of `serde_json::from_str::<Envelope>`),
//! `rust-parse` (`parse_envelope`, held to the engine's rule id and pointer) and `rust-schemars` (the JSON Schema
//! that schemars derives from the Rust types, through the `jsonschema` crate: the types say what the schema
//! says). Strict-id fixtures are skipped: the Rust types check ids as non-empty strings, like the default mode.
//! The tests below check the round trip and the constructor against the same corpus.

use serde_json::Value;
use session_wire::{parse_envelope, validate_value, Envelope, EnvelopeOptions, Event, Image, Rule};

use crate::checkers::{Checker, Verdict};
use crate::fixtures::{self, Expect, Fixture};

/// The Rust checkers, for `output_checkers()`.
pub fn checkers() -> Vec<Checker> {
    vec![
        Checker { name: "rust-serde", precise: false, run: serde_verdicts },
        Checker { name: "rust-parse", precise: true, run: parse_verdicts },
        Checker { name: "rust-schemars", precise: false, run: schemars_verdicts },
    ]
}

fn serde_verdicts(fx: &[Fixture]) -> Vec<Verdict> {
    fx.iter()
        .map(|f| {
            if f.strict_ids {
                return Verdict::Skipped;
            }
            match serde_json::from_str::<Envelope>(&f.line) {
                Ok(_) => Verdict::Valid,
                Err(e) => Verdict::Invalid { rule: "serde".into(), pointer: e.to_string() },
            }
        })
        .collect()
}

fn parse_verdicts(fx: &[Fixture]) -> Vec<Verdict> {
    fx.iter()
        .map(|f| {
            if f.strict_ids {
                return Verdict::Skipped;
            }
            match parse_envelope(&f.line) {
                Ok(_) => Verdict::Valid,
                Err(e) => Verdict::Invalid { rule: e.rule().id().into(), pointer: e.pointer().into() },
            }
        })
        .collect()
}

/// The schema schemars derives from `Envelope` (Rust types plus the role rules the envelope attaches).
fn derived_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Envelope)).expect("derived schema is JSON")
}

fn schemars_verdicts(fx: &[Fixture]) -> Vec<Verdict> {
    let schema = derived_schema();
    let v = jsonschema::draft202012::new(&schema).expect("derived schema compiles");
    fx.iter()
        .map(|f| match (&f.message, f.strict_ids) {
            (_, true) => Verdict::Skipped,
            (None, _) => Verdict::Invalid { rule: "not JSON".into(), pointer: String::new() },
            (Some(m), _) => match v.iter_errors(m).next() {
                None => Verdict::Valid,
                Some(e) => Verdict::Invalid {
                    rule: format!("{:?}", e.kind()).chars().take(40).collect(),
                    pointer: e.instance_path().to_string(),
                },
            },
        })
        .collect()
}

/// A value as JavaScript writes it back after reading it: a whole number that fits 64 bits as an integer
/// (`1000.0` as `1000`), everything else as it is.
fn as_javascript_writes(v: &Value) -> Value {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.2e18 => Value::from(f as i64),
            _ => v.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(as_javascript_writes).collect()),
        Value::Object(members) => {
            Value::Object(members.iter().map(|(k, v)| (k.clone(), as_javascript_writes(v))).collect())
        }
        _ => v.clone(),
    }
}

fn valid_fixtures() -> Vec<Fixture> {
    fixtures::messages().into_iter().filter(|f| f.expect == Expect::Valid).collect()
}

#[test]
fn every_valid_fixture_round_trips_to_the_same_json() {
    let fx = valid_fixtures();
    assert!(fx.len() >= 40, "valid fixtures: {}", fx.len());
    for f in &fx {
        let original = f.message.as_ref().unwrap_or_else(|| panic!("{}: valid fixtures are JSON", f.name));
        let env = parse_envelope(&f.line).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        // The same value with each number written as JavaScript writes it (an `f64` field read from `0` is
        // written `0`, not `0.0`); `Value`'s equality tells `0` from `0.0`, and keys are compared as sets.
        let back = serde_json::to_value(&env).expect("serializes");
        assert_eq!(back, as_javascript_writes(original), "{}", f.name);
        let text = serde_json::to_string(&env).expect("text");
        assert_eq!(serde_json::from_str::<Value>(&text).expect("JSON"), back, "{}: {text}", f.name);
        // The serde path gives the same value, and so does a second trip through the text.
        let via_serde: Envelope = serde_json::from_str(&f.line).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        assert_eq!(via_serde, env, "{}", f.name);
        let again = parse_envelope(&serde_json::to_string(&env).expect("text")).expect("re-parses");
        assert_eq!(again, env, "{}", f.name);
    }
}

#[test]
fn the_same_json_gives_the_same_first_error_as_a_value() {
    // `from_value`/`validate_value` walk a `serde_json::Value`; in this workspace `preserve_order` is on, so
    // unknown properties come in input order and every answer must equal `parse_envelope`'s.
    let mut checked = 0;
    for f in fixtures::messages() {
        let Some(m) = &f.message else { continue };
        let from_text = parse_envelope(&f.line).map(|_| ()).map_err(|e| (e.rule(), e.pointer().to_string()));
        let from_value = validate_value(m).map_err(|e| (e.rule(), e.pointer().to_string()));
        assert_eq!(from_text, from_value, "{}", f.name);
        assert_eq!(Envelope::from_value(m).ok(), parse_envelope(&f.line).ok(), "{}", f.name);
        checked += 1;
    }
    assert!(checked > 100, "{checked}");
}

/// Splits a message into what the constructor takes: role, event, options.
fn parts(m: &Value) -> Option<(session_wire::Role, Event, EnvelopeOptions)> {
    let role = serde_json::from_value(m.get("role")?.clone()).ok()?;
    let ev: Event = serde_json::from_value(m.get("ev")?.clone()).ok()?;
    let s = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
    let opts = EnvelopeOptions {
        id: s("id"),
        time: m.get("time").and_then(Value::as_u64),
        turn: s("turn"),
        subagent: s("subagent"),
        claude_uuid: s("claudeUuid"),
        codex_item_id: s("codexItemId"),
        usage: m.get("usage").map(|u| serde_json::from_value(u.clone())).transpose().ok()?,
    };
    Some((role, ev, opts))
}

#[test]
fn the_constructor_rebuilds_every_valid_fixture_and_refuses_every_role_violation() {
    let mut rebuilt = 0;
    let mut refused = 0;
    for f in fixtures::messages() {
        let Some(m) = &f.message else { continue };
        match &f.expect {
            Expect::Valid => {
                let Some((role, ev, mut opts)) = parts(m) else { continue };
                if opts.time.is_none() {
                    // `1000.0` / `1e3`: whole numbers written as floats.
                    opts.time = m["time"].as_f64().map(|t| t as u64);
                }
                let built = Envelope::create(role, ev, opts).unwrap_or_else(|e| panic!("{}: {e}", f.name));
                assert_eq!(Some(built), parse_envelope(&f.line).ok(), "{}", f.name);
                rebuilt += 1;
            }
            Expect::Invalid { rule, pointer } if rule == "role-event" || rule == "role-field" => {
                let (role, ev, opts) =
                    parts(m).unwrap_or_else(|| panic!("{}: role fixtures have a valid shape", f.name));
                let err = Envelope::create(role, ev, opts).expect_err(&f.name);
                assert_eq!((err.rule().id(), err.pointer()), (rule.as_str(), pointer.as_str()), "{}", f.name);
                refused += 1;
            }
            Expect::Invalid { .. } => {}
        }
    }
    assert!(rebuilt >= 40 && refused >= 10, "rebuilt {rebuilt}, refused {refused}");
}

#[test]
fn the_constructor_fills_a_cuid2_shaped_id_and_the_time() {
    let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_millis() as u64;
    let ev: Event = serde_json::from_value(serde_json::json!({"t": "abort"})).expect("abort");
    let env = Envelope::new(session_wire::Role::User, ev.clone()).expect("users may abort");
    let after = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_millis() as u64;
    assert!((before..=after).contains(&env.time()), "{} not in {before}..={after}", env.time());
    // The strict-id pattern of the schema, checked with the engine's own regex.
    let strict = regex::Regex::new("^[a-z][a-z0-9]{1,31}$").expect("pattern");
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..20_000 {
        let id = session_wire::new_id();
        assert_eq!(id.len(), 24, "{id}");
        assert!(strict.is_match(&id), "{id}");
        assert!(seen.insert(id.clone()), "duplicate id {id}");
    }
    assert!(strict.is_match(env.id()));
    // Given options are kept; a forbidden one is refused with the engine's rule and pointer.
    let opts = EnvelopeOptions { id: Some("m1".into()), time: Some(5), ..Default::default() };
    let env = Envelope::create(session_wire::Role::User, ev.clone(), opts).expect("valid");
    assert_eq!((env.id(), env.time()), ("m1", 5));
    let opts = EnvelopeOptions { subagent: Some("sa1".into()), ..Default::default() };
    let err = Envelope::create(session_wire::Role::User, ev.clone(), opts).expect_err("users have no subagents");
    assert_eq!((err.rule(), err.pointer()), (Rule::RoleField, "/subagent"));
    let opts = EnvelopeOptions { id: Some(String::new()), ..Default::default() };
    let err = Envelope::create(session_wire::Role::User, ev.clone(), opts).expect_err("empty id");
    assert_eq!((err.rule(), err.pointer()), (Rule::MinLength, "/id"));
    let opts = EnvelopeOptions { time: Some(1 << 53), ..Default::default() };
    let err = Envelope::create(session_wire::Role::User, ev, opts).expect_err("time beyond 2^53-1");
    assert_eq!((err.rule(), err.pointer()), (Rule::Maximum, "/time"));
}

#[test]
fn nested_types_keep_the_schema_semantics_on_their_own() {
    // A serde derive would take these positionally or as `None`; the generated impls refuse them.
    assert!(serde_json::from_str::<Image>(r#"[800, 600, "x"]"#).is_err());
    assert!(serde_json::from_str::<Image>(r#"{"width": 800, "height": 600, "thumbhash": "x", "extra": 1}"#).is_err());
    assert!(serde_json::from_str::<Image>(r#"{"width": 800, "height": 600.5, "thumbhash": "x"}"#).is_err());
    let img: Image =
        serde_json::from_str(r#"{"width": 8e2, "height": 600.0, "thumbhash": "x"}"#).expect("whole numbers");
    assert_eq!((img.width, img.height), (800, 600));
    assert!(serde_json::from_str::<Event>(r#"{"t": "text", "text": "x", "steer": null}"#).is_err());
    assert!(serde_json::from_str::<Event>(r#"["text", "x"]"#).is_err());
    // Invalid UTF-8 and blank lines are located errors too.
    let err = session_wire::parse_envelope_bytes(b"{\"id\":\"\xff\"}").expect_err("not UTF-8");
    assert_eq!((err.rule(), err.pointer()), (Rule::InvalidUtf8, ""));
    assert_eq!(parse_envelope("  ").expect_err("blank").rule(), Rule::BlankLine);
    // Two unknown properties: the first in input order is reported, whatever serde_json's map order is.
    let err =
        parse_envelope(r#"{"id":"a","time":1,"role":"user","ev":{"t":"abort"},"zz":1,"aa":2}"#).expect_err("unknown");
    assert_eq!(err.pointer(), "/zz");
    // Rule ids are the catalogue's.
    for r in wiregen::rules::Rule::ALL {
        assert_eq!(Rule::from_id(r.id()).map(Rule::id), Some(r.id()));
    }
    assert_eq!(Rule::ALL.len(), wiregen::rules::Rule::ALL.len());
}

#[test]
fn the_derived_schema_has_real_types_not_untagged_enums_or_any_values() {
    let s = derived_schema().to_string();
    assert!(!s.contains("\"anyOf\""), "no untagged unions or nullable options: {s}");
    assert!(s.contains("\"additionalProperties\":false"));
    assert!(s.contains("9007199254740991"));
}

/// The seed's Realistic Flow, built with the crate's constructors (`Type::new` with the required properties,
/// `with_<field>` for optional ones, `Event::<member>` shortcuts, `EnvelopeOptions` builders), is exactly the
/// committed stream fixture, message for message.
#[test]
fn the_seed_realistic_flow_is_short_to_build() {
    use session_wire::{
        AgentConfigurationChanged, ClientType, Decision, PermissionRequest, Role::*, SessionControlChanged,
        SubagentStart, Text, TurnEnd, TurnStatus, Usage,
    };
    let o = |id: &str, time: u64| EnvelopeOptions::default().with_id(id).with_time(time);
    let t1 = |id: &str, time: u64| o(id, time).with_turn("t1");
    let sa = |id: &str, time: u64| t1(id, time).with_subagent("sa_research");
    let t2 = |id: &str, time: u64| o(id, time).with_turn("t2");
    let args = |v: Value| v.as_object().cloned().expect("an object");
    let built: Vec<Result<Envelope, session_wire::Error>> = vec![
        Envelope::create(Agent, SessionControlChanged::new(ClientType::Cli).with_token_id("tok_laptop"), o("m1", 1000)),
        Envelope::create(User, Event::text("Find all TODO comments and fix the critical ones"), o("m2", 2000)),
        Envelope::create(Agent, Event::turn_start(), t1("m3", 2500)),
        Envelope::create(Agent, Event::text("I'll search for TODOs first."), t1("m4", 2501)),
        Envelope::create(
            Agent,
            Event::tool_call_start(
                "c1",
                "grep",
                "Searching for TODO",
                "Searching for `TODO` in **src/**",
                args(serde_json::json!({"pattern": "TODO", "path": "src/"})),
            ),
            t1("m5", 2502),
        ),
        Envelope::create(Agent, Event::tool_call_end("c1"), t1("m6", 2503)),
        Envelope::create(Agent, Event::text("Found 12 TODOs. Starting with the auth module..."), t1("m7", 2504)),
        Envelope::create(
            User,
            Text::new("Skip auth, focus on the payment module instead").with_steer(true),
            o("m8", 2600),
        ),
        Envelope::create(
            Agent,
            Event::tool_call_start(
                "c2",
                "edit",
                "Editing **src/payment/checkout.ts**",
                "Fixing TODO in payment module",
                args(serde_json::json!({"file": "src/payment/checkout.ts"})),
            ),
            t1("m9", 2700),
        ),
        Envelope::create(
            Agent,
            PermissionRequest::new(
                "c2",
                "edit",
                "Editing **src/payment/checkout.ts**",
                "Replacing TODO with retry logic",
                args(serde_json::json!({"file": "src/payment/checkout.ts"})),
            ),
            t1("m10", 2701),
        ),
        Envelope::create(User, Event::permission_response("c2", Decision::AllowOnce), o("m11", 3000)),
        Envelope::create(Agent, Event::tool_call_end("c2"), t1("m12", 3001)),
        Envelope::create(Agent, SubagentStart::new("sa_research").with_title("Payment research"), t1("m13", 3002)),
        Envelope::create(Agent, Event::text("Looking at payment retry patterns..."), sa("m14", 3003)),
        Envelope::create(
            Agent,
            Event::tool_call_start(
                "c3",
                "grep",
                "Searching for retry",
                "Searching for retry patterns",
                args(serde_json::json!({"pattern": "retry"})),
            ),
            sa("m15", 3004),
        ),
        Envelope::create(Agent, Event::tool_call_end("c3"), sa("m16", 3005)),
        Envelope::create(Agent, Event::text("Found existing retry utility."), sa("m17", 3006)),
        Envelope::create(Agent, Event::subagent_stop("sa_research"), t1("m18", 3007)),
        Envelope::create(Agent, Event::text("Fixed 2 TODOs in the payment module."), t1("m19", 3008)),
        Envelope::create(
            Agent,
            TurnEnd::new(TurnStatus::Completed).with_usage(Usage::new(4800, 620, 0.024)),
            t1("m20", 3009),
        ),
        Envelope::create(
            User,
            AgentConfigurationChanged::new().with_model("claude-sonnet-4-6").with_thinking_level("low"),
            o("m21", 5000),
        ),
        Envelope::create(User, Event::text("Now run the tests"), o("m22", 5001)),
        Envelope::create(Agent, Event::turn_start(), t2("m23", 5100)),
        Envelope::create(
            Agent,
            Event::tool_call_start(
                "c4",
                "bash",
                "Run `npm test`",
                "Running test suite",
                args(serde_json::json!({"command": "npm test"})),
            ),
            t2("m24", 5101),
        ),
        Envelope::create(User, Event::abort(), o("m25", 5200)),
        Envelope::create(Agent, Event::tool_call_end("c4"), t2("m26", 5201)),
        Envelope::create(Agent, Event::turn_end(TurnStatus::Cancelled), t2("m27", 5202)),
        Envelope::create(
            User,
            SessionControlChanged::new(ClientType::Browser).with_token_id("tok_browser"),
            o("m28", 8000),
        ),
    ];
    let fixture = std::fs::read_to_string(fixtures::root().join("tests/fixtures/streams/seed-realistic-flow.jsonl"))
        .expect("the Realistic Flow fixture");
    let lines: Vec<Value> = fixture.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    assert_eq!(built.len(), lines.len(), "one envelope per line of the flow");
    for (k, (b, want)) in built.into_iter().zip(&lines).enumerate() {
        let b = b.unwrap_or_else(|e| panic!("message {} is valid: {e}", k + 1));
        assert_eq!(serde_json::to_value(&b).expect("serializes"), *want, "message {}", k + 1);
    }
}
/// `levels` nested arrays around `null`, built without recursion.
fn arrays(levels: usize) -> Value {
    let mut v = Value::Null;
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

/// A valid `tool-call-start` envelope whose nesting is `depth` levels in all (the envelope 1, `ev` 2, `args` 3,
/// then arrays in `args.x`), as text and as a value.
fn deep_envelope(depth: usize) -> (String, Value) {
    assert!(depth >= 3);
    let inner = depth - 3;
    let text = format!(
        r#"{{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{{"x":{}null{}}}}}}}"#,
        "[".repeat(inner),
        "]".repeat(inner)
    );
    let mut value = serde_json::json!({"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{}}});
    value["ev"]["args"]["x"] = arrays(inner);
    (text, value)
}

fn brief(e: session_wire::Error) -> (Rule, String) {
    (e.rule(), e.pointer().to_string())
}

#[test]
fn from_value_takes_exactly_the_depths_the_text_parser_takes_and_round_trips() {
    for depth in 120..=135 {
        let (text, value) = deep_envelope(depth);
        let from_text = parse_envelope(&text).map_err(brief);
        let from_value = Envelope::from_value(&value).map_err(brief);
        assert_eq!(from_text.is_ok(), depth <= 127, "depth {depth}: {from_text:?}");
        assert_eq!(from_value, from_text, "depth {depth}");
        assert_eq!(validate_value(&value).map_err(brief), from_text.clone().map(drop), "depth {depth}");
        assert_eq!(<Envelope as serde::Deserialize>::deserialize(&value).is_ok(), depth <= 127, "depth {depth}");
        if let Ok(env) = from_value {
            // What `from_value` accepts, its own serialization gives back through the text parser.
            let again = serde_json::to_string(&env).expect("serializes");
            assert_eq!(parse_envelope(&again).map_err(brief), Ok(env), "depth {depth}");
        } else {
            assert_eq!(from_text, Err((Rule::TooDeep, String::new())), "depth {depth}");
        }
        // Every type's own `from_value` has the text parser's limit too (here `Event` and `Args`, whose values
        // start one and two levels down).
        for (part, skip) in [(&value["ev"], 1), (&value["ev"]["args"], 2)] {
            let part_text = serde_json::to_string(part).ok();
            let accepts = depth - skip <= 127;
            let by_value = if skip == 1 {
                Event::from_value(part).map(drop).map_err(brief)
            } else {
                session_wire::Args::from_value(part).map(drop).map_err(brief)
            };
            assert_eq!(by_value.is_ok(), accepts, "depth {depth} minus {skip}: {by_value:?}");
            if !accepts {
                assert_eq!(by_value, Err((Rule::TooDeep, String::new())));
            }
            if let Some(t) = part_text.filter(|_| accepts) {
                let back = if skip == 1 {
                    serde_json::from_str::<Event>(&t).is_ok()
                } else {
                    serde_json::from_str::<session_wire::Args>(&t).is_ok()
                };
                assert!(back, "depth {depth} minus {skip}: the text of an accepted value parses");
            }
        }
    }
}

#[test]
fn from_value_measures_a_value_fifty_thousand_levels_deep_without_recursing() {
    // serde_json builds and drops such a value recursively, so that happens on a thread with a large stack; the
    // generated code runs on a thread with a small one (256 KiB).
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(|| {
            let (_, mut value) = deep_envelope(3);
            value["ev"]["args"]["x"] = arrays(50_000);
            let image = arrays(50_000);
            std::thread::scope(|s| {
                let results = std::thread::Builder::new()
                    .stack_size(256 << 10)
                    .spawn_scoped(s, || {
                        [
                            Envelope::from_value(&value).map(drop).map_err(brief),
                            validate_value(&value).map_err(brief),
                            Event::from_value(&value["ev"]).map(drop).map_err(brief),
                            session_wire::Args::from_value(&value["ev"]["args"]).map(drop).map_err(brief),
                            Image::from_value(&image).map(drop).map_err(brief),
                        ]
                    })
                    .expect("spawn")
                    .join()
                    .expect("no stack overflow");
                for r in results {
                    assert_eq!(r, Err((Rule::TooDeep, String::new())));
                }
            });
        })
        .expect("spawn")
        .join()
        .expect("the big-stack thread");
}

/// The crates' values can be shared between threads: a service checks a session under a lock while a reporter
/// reads its rollup through `&self` (`RwLock`), which needs `Sync`. The stream checker was `Send` only (a `Cell`
/// in its id table).
#[test]
fn the_crates_types_are_send_and_sync() {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<session_wire::stream::StreamChecker>();
    shared::<std::sync::RwLock<session_wire::stream::StreamChecker>>();
    shared::<happy_wire::stream::StreamChecker>();
    shared::<Envelope>();
    shared::<session_wire::Error>();
    shared::<wiregen::stream::StreamChecker<'static>>();
}

/// A value built in code takes what the Rust types allow; `validate` checks it as the schema does, with the
/// engine's rule and pointer, and accepts what the checkers accept. (Before, the only way was a round trip
/// through `serde_json::to_value` and `from_value`.)
#[test]
fn validate_checks_a_value_built_in_code() {
    let end = session_wire::ToolCallEnd { call: String::new() };
    let err = end.validate().expect_err("an empty call id");
    assert_eq!((err.rule(), err.pointer()), (Rule::MinLength, "/call"));
    assert!(session_wire::ToolCallEnd { call: "c1".into() }.validate().is_ok());
    let img = Image { width: 1 << 60, height: 600, thumbhash: "x".into() };
    let err = img.validate().expect_err("past 2^53-1");
    assert_eq!((err.rule(), err.pointer()), (Rule::Maximum, "/width"));
    // An envelope has no `validate`: its fields are private and every way to build one checks it.
    let mut event = session_wire::ToolCallStart::new("c1", "grep", "Search", "Searching", Default::default());
    assert!(event.validate().is_ok());
    event.name = String::new();
    assert!(event.validate().is_ok(), "`name` is any string");
    event.call = String::new();
    assert_eq!(event.validate().expect_err("empty call").pointer(), "/call");
}
