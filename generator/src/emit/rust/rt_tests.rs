//! Unit tests of the runtime (`rt.rs`, `rt_regex.rs`): what each check reports, and where.

use super::rt::*;
use super::rt_regex::Pattern;
use super::Rule;

fn json(text: &str) -> Json {
    serde_json::from_str(text).expect("JSON")
}

fn err(r: Result<impl Sized, Error>) -> (Rule, String) {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => (e.rule(), e.pointer().to_string()),
    }
}

#[test]
fn the_tree_keeps_input_order() {
    let v = json(r#"{"b":1,"a":2,"c":3}"#);
    let o = v.as_object().expect("object");
    let keys: Vec<&str> = o.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["b", "a", "c"]);
    assert_eq!(value(o.get("c").expect("c")), serde_json::json!(3));
}

/// A text that repeats a key is refused as the engine refuses it (rule, message, place), through `from_str` and
/// through serde (a generated type's `Deserialize`), wherever the repetition is and however the key is spelled;
/// what comes first in the text (a syntax error, a repetition inside an earlier member) is told first.
#[test]
fn a_repeated_key_is_told_as_the_engine_tells_it() {
    for text in [
        r#"{"b":1,"a":2,"b":3}"#,
        r#"{"a":{"x":[1,{"y":0,"z":{},"y":1}]}}"#,
        r#"[0,[1,2],{"k/~":1,"k\/~":2}]"#,
        "{\n  \"a\": 1,\n  \"é\": 2,\n  \"é\" : 3\n}",
        r#"{"a":{"x":1,"x":2},"a":3}"#,
        r#"{"a":1,"a":tru}"#,
        r#"{"a":tru,"a":1}"#,
        r#"{"s":"\"a\":","\"a\":":1,"s":2}"#,
        // A repeated key with no colon after it: refused at the key, before the colon is looked for.
        r#"{"a":1,"a"}"#,
        r#"{"a":1,"b":2,"a" 2}"#,
        "{\n  \"id\": \"m1\",\n  \"id\"\n}",
    ] {
        let want = crate::engine::parse_json(text.as_bytes()).expect_err(text);
        let got = from_str::<AnyValue>(text).map(drop).expect_err(text);
        assert_eq!((got.rule().id(), got.pointer(), got.message()), (want.rule, "", want.message.as_str()), "{text}");
    }
    assert!(from_str::<AnyValue>(r#"{"a":{"k":1},"b":[{"k":1},{"k":1}],"k":0}"#).is_ok());
    let e = serde_json::from_str::<Json>(r#"{"a":1,"a":2}"#).expect_err("repeated");
    assert!(e.to_string().starts_with(&format!("{REPEATED_KEY} \"a\" {REPEATED_KEY_WHY}")), "{e}");
}

#[test]
fn pointers_escape_and_count_items() {
    let root = Ptr::ROOT;
    let a = root.key("a/b");
    let b = a.index(3);
    let c = b.key("~x");
    assert_eq!(c.render(), "/a~1b/3/~0x");
    assert_eq!(Ptr::ROOT.render(), "");
}

#[test]
fn numbers_compare_as_doubles_in_the_engines_order() {
    let int = Num {
        integer: true,
        minimum: Some(0.0),
        exclusive_minimum: None,
        maximum: Some(10.0),
        exclusive_maximum: None,
        multiple_of: Some(2.0),
    };
    assert_eq!(uint(&json("4.0"), Ptr::ROOT, &int).ok(), Some(4));
    assert_eq!(uint(&json("1e1"), Ptr::ROOT, &int).ok(), Some(10));
    assert_eq!(err(uint(&json("1.5"), Ptr::ROOT, &int)).0, Rule::Type);
    assert_eq!(err(uint(&json("-2"), Ptr::ROOT, &int)).0, Rule::Minimum);
    assert_eq!(err(uint(&json("12"), Ptr::ROOT, &int)).0, Rule::Maximum);
    assert_eq!(err(uint(&json("3"), Ptr::ROOT, &int)).0, Rule::MultipleOf);
    assert_eq!(err(uint(&json("\"3\""), Ptr::ROOT, &int)).0, Rule::Type);
    let ex = Num {
        integer: false,
        minimum: None,
        exclusive_minimum: Some(0.0),
        maximum: None,
        exclusive_maximum: Some(1.0),
        multiple_of: Some(0.0001),
    };
    assert_eq!(err(number(&json("0"), Ptr::ROOT, &ex)).0, Rule::ExclusiveMinimum);
    assert_eq!(err(number(&json("1"), Ptr::ROOT, &ex)).0, Rule::ExclusiveMaximum);
    // 0.0075 / 0.0001 is 75 in doubles; 0.00751 / 0.0001 is not whole.
    assert!(number(&json("0.0075"), Ptr::ROOT, &ex).is_ok());
    assert_eq!(err(number(&json("0.00751"), Ptr::ROOT, &ex)).0, Rule::MultipleOf);
}

static DIGITS: Pattern = Pattern::new("^[0-9]+$", "^[0-9]+$");

#[test]
fn strings_count_code_points_then_match_their_pattern() {
    let s = Str { min_length: Some(2), max_length: Some(3), pattern: Some(&DIGITS) };
    assert_eq!(string(&json("\"12\""), Ptr::ROOT, &s).ok().as_deref(), Some("12"));
    assert_eq!(err(string(&json("\"1\""), Ptr::ROOT, &s)).0, Rule::MinLength);
    assert_eq!(err(string(&json("\"1234\""), Ptr::ROOT, &s)).0, Rule::MaxLength);
    assert_eq!(err(string(&json("\"1a\""), Ptr::ROOT, &s)).0, Rule::Pattern);
    let emoji = Str { min_length: None, max_length: Some(1), pattern: None };
    assert!(string(&json("\"\u{1F600}\""), Ptr::ROOT, &emoji).is_ok());
}

static ONE: Lit = Lit::new("1");
static OBJ: Lit = Lit::new(r#"{"a":[1,2]}"#);

#[test]
fn literals_compare_structurally() {
    assert!(constant(&json("1.0"), Ptr::ROOT, &ONE).is_ok());
    assert!(constant(&json(r#"{"a":[1.0,2]}"#), Ptr::ROOT, &OBJ).is_ok());
    assert_eq!(err(constant(&json(r#"{"a":[2,1]}"#), Ptr::ROOT, &OBJ)).0, Rule::Const);
    assert!(one_of_values(&json("1"), Ptr::ROOT, &[&OBJ, &ONE], false).is_ok());
    assert_eq!(err(one_of_values(&json("true"), Ptr::ROOT, &[&OBJ, &ONE], false)).0, Rule::Enum);
    assert_eq!(serde_json::to_string(&OBJ).ok().as_deref(), Some(r#"{"a":[1,2]}"#));
}

/// A long `enum` is listed as the engine lists it (`engine::value_list`): its first `LISTED_VALUES` values, then how
/// many more there are; strings bare among strings only.
#[test]
fn a_long_enum_lists_its_first_values_as_the_engine_does() {
    assert_eq!(LISTED_VALUES, crate::engine::LISTED_VALUES);
    for (n, strings) in [(3, true), (20, true), (21, true), (25, false), (20_000, true)] {
        let texts: Vec<&'static str> = (0..n)
            .map(|i| {
                let t = if strings || i % 2 == 0 { format!("\"s{i}\"") } else { i.to_string() };
                &*Box::leak(t.into_boxed_str())
            })
            .collect();
        let lits: Vec<&'static Lit> = texts.iter().map(|&t| &*Box::leak(Box::new(Lit::new(t)))).collect();
        let values: Vec<serde_json::Value> = texts.iter().map(|t| serde_json::from_str(t).expect("JSON")).collect();
        let (input, shown) = if strings { (r#""x""#, "`x`") } else { ("null", "`null`") };
        let e = one_of_values(&json(input), Ptr::ROOT, &lits, strings).expect_err("not one of them");
        assert_eq!(e.message(), format!("{shown} is not one of {}", crate::engine::value_list(&values)), "{n}");
        assert_eq!(e.message().contains("more"), n > LISTED_VALUES, "{n}: {}", e.message());
    }
}

fn ints(v: &Json, at: Ptr<'_>) -> Result<u64, Error> {
    let rule = Num {
        integer: true,
        minimum: Some(0.0),
        exclusive_minimum: None,
        maximum: Some(9.0),
        exclusive_maximum: None,
        multiple_of: None,
    };
    uint(v, at, &rule)
}

#[test]
fn arrays_check_items_first_then_counts_then_uniqueness() {
    let rule = Arr { min_items: Some(3), max_items: None, unique: true, contains: None };
    let at = Ptr::ROOT;
    assert_eq!(err(vec(&json("[1, \"x\"]"), at, &rule, boolean)), (Rule::Type, "/0".into()));
    assert_eq!(err(vec(&json("[1, 1]"), at, &rule, ints)).0, Rule::MinItems);
    assert_eq!(err(vec(&json("[1, 2, 1.0]"), at, &rule, ints)).0, Rule::UniqueItems);
    assert_eq!(vec(&json("[1, 2, 3]"), at, &rule, ints).ok(), Some(vec![1, 2, 3]));
    let prefix: [Check; 1] = [|v, at| boolean(v, at).map(drop)];
    assert!(tuple(
        &json("[true, 1, 2, 3]"),
        at,
        &Arr { min_items: None, max_items: None, unique: false, contains: None },
        &prefix,
        None
    )
    .is_ok());
    assert_eq!(
        err(tuple(
            &json("[true, 1, \"x\"]"),
            at,
            &Arr { min_items: None, max_items: None, unique: false, contains: None },
            &prefix,
            Some(|v, at| ints(v, at).map(drop))
        )),
        (Rule::Type, "/2".into())
    );
}

#[test]
fn combinators_report_at_the_value() {
    let at = Ptr::ROOT;
    let b: Check = |v, at| boolean(v, at).map(drop);
    assert!(any_of(&json("true"), at, &[null, b]).is_ok());
    assert_eq!(err(any_of(&json("1"), at, &[null, b])).0, Rule::AnyOf);
    assert_eq!(err(one_of(&json("true"), at, &[any, b])).0, Rule::OneOf);
    assert!(one_of(&json("1"), at, &[any, b]).is_ok());
    assert_eq!(err(not(&json("true"), at, b)).0, Rule::Not);
    assert!(cond(&json("1"), at, b, Some(never), None).is_ok());
    assert_eq!(err(cond(&json("true"), at, b, Some(never), None)).0, Rule::Never);
    assert_eq!(
        err(kinds(&json("\"x\""), at, &[(Kind::Null, null), (Kind::Boolean, b)], "null or a boolean")).0,
        Rule::Type
    );
    assert!(all_of(&json("null"), at, &[null, any]).is_ok());
}

#[test]
fn objects_check_other_keys_in_input_order() {
    let at = Ptr::ROOT;
    let v = json(r#"{"a":1,"zz":2,"b":3}"#);
    let o = v.as_object().expect("object");
    assert_eq!(
        err(others(o, at, &["a"], &[], &Rest::Closed { removed: &[("b", "c", "T")] })),
        (Rule::AdditionalProperty, "/zz".into())
    );
    let v2 = json(r#"{"a":1,"b":3}"#);
    let o2 = v2.as_object().expect("object");
    assert_eq!(
        err(others(o2, at, &["a"], &[], &Rest::Closed { removed: &[("b", "c", "T")] })),
        (Rule::RemovedProperty, "/b".into())
    );
    let kept = others(o, at, &["a"], &[], &Rest::Open).expect("open");
    assert_eq!(kept.iter().map(|(k, _)| *k).collect::<Vec<_>>(), ["zz", "b"]);
    assert!(others(o, at, &["a"], &[], &Rest::Strip).expect("strip").is_empty());
    let b: Check = |v, at| boolean(v, at).map(drop);
    assert_eq!(err(others(o, at, &[], &[], &Rest::Schema(b))), (Rule::Type, "/a".into()));
    assert_eq!(err(require(o, at, &["q"])), (Rule::Required, "/q".into()));
    assert_eq!(err(dependent(o, at, &[("a", &["q"])])), (Rule::DependentRequired, "/q".into()));
    assert_eq!(err(property_counts(o, at, None, Some(2))).0, Rule::MaxProperties);
    let short: Check = |v, at| check_string(v, at, &Str { min_length: None, max_length: Some(1), pattern: None });
    assert_eq!(err(property_names(o, at, short)), (Rule::PropertyNames, "/zz".into()));
    let mut extra = extra_values(&kept);
    assert_eq!(extra.insert("zz", serde_json::json!(0)), Some(serde_json::json!(2)));
    assert_eq!(extra.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["zz", "b"]);
}

#[test]
fn union_tags_say_what_is_wrong() {
    let tags = [Tag::Str("a"), Tag::Str("b")];
    let at = Ptr::ROOT;
    assert_eq!(which(&json("\"b\""), &tags), Some(1));
    let e = bad_tag(at, "t", &json("1"), &tags, "a string", &[], false);
    assert_eq!((e.rule(), e.pointer()), (Rule::Type, "/t"));
    let e = bad_tag(at, "t", &json("\"old\""), &tags, "a string", &[("old", "a")], true);
    assert_eq!(e.rule(), Rule::RemovedEvent);
    let e = bad_tag(at, "t", &json("\"c\""), &tags, "a string", &[], true);
    assert_eq!(e.rule(), Rule::UnknownEvent);
    let e = bad_tag(at, "t", &json("\"c\""), &tags, "a string", &[], false);
    assert_eq!(e.rule(), Rule::UnknownVariant);
    assert_eq!(which(&json("1.0"), &[Tag::Bool(true), Tag::Int(1)]), Some(1));
}

#[test]
fn lines_are_json_values() {
    assert_eq!(err(from_str::<Flag>("  ")).0, Rule::BlankLine);
    assert_eq!(err(from_str::<Flag>("{")).0, Rule::MalformedJson);
    assert_eq!(err(from_str::<Flag>(&"[".repeat(200))).0, Rule::TooDeep);
    assert_eq!(err(from_bytes::<Flag>(b"\"\xff\"")).0, Rule::InvalidUtf8);
    let bom = from_str::<Flag>("\u{feff}true").err().expect("a byte order mark is refused");
    assert_eq!((bom.rule(), bom.message()), (Rule::MalformedJson, crate::engine::BOM_MESSAGE));
    assert_eq!(from_str::<Flag>("true").ok().map(|f| f.0), Some(true));
}

struct Flag(bool);

impl Decode for Flag {
    fn decode(v: &Json, at: Ptr<'_>) -> Result<Self, Error> {
        boolean(v, at).map(Flag)
    }
}

#[test]
fn roles_are_checked_at_their_property() {
    let v = json(r#"{"role":"user","ev":{"x":1}}"#);
    let o = v.as_object().expect("object");
    let e = role_event(Ptr::ROOT, "role", "user", "turn", &["agent"]).expect_err("role");
    assert_eq!((e.rule(), e.pointer()), (Rule::RoleEvent, "/role"));
    assert!(role_field(o, Ptr::ROOT, "missing", "user", &["agent"]).is_ok());
    let e = role_field(o, Ptr::ROOT, "ev", "user", &["agent"]).expect_err("field");
    assert_eq!((e.rule(), e.pointer()), (Rule::RoleField, "/ev"));
}

/// `depth` nested containers, alternating arrays and objects (`{"k":[{"k":[...]}]}`), `leaf` innermost; built
/// without recursion.
fn nested(depth: usize, leaf: serde_json::Value) -> serde_json::Value {
    let mut v = leaf;
    for i in 0..depth {
        v = if i % 2 == 0 {
            serde_json::Value::Array(vec![v])
        } else {
            // Not `json!`, which would copy `v` through `to_value` at every level.
            serde_json::Value::Object(std::iter::once(("k".to_string(), v)).collect())
        };
    }
    v
}

/// The same nesting as text.
fn nested_text(depth: usize) -> String {
    let (mut open, mut close) = (String::new(), String::new());
    for i in (0..depth).rev() {
        if i % 2 == 0 {
            open.push('[');
            close.insert(0, ']');
        } else {
            open.push_str("{\"k\":");
            close.insert(0, '}');
        }
    }
    format!("{open}true{close}")
}

/// Any value (what an open type keeps): the entry points differ only in depth handling here.
struct AnyValue;

impl Decode for AnyValue {
    fn decode(v: &Json, at: Ptr<'_>) -> Result<Self, Error> {
        any_value(v, at).map(|_| AnyValue)
    }
}

#[test]
fn a_value_nests_as_deep_as_text_may_and_no_deeper() {
    for depth in [0, 1, 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2, 300] {
        let v = nested(depth, serde_json::Value::Bool(true));
        let text = nested_text(depth);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).ok().as_ref(), (depth <= MAX_DEPTH).then_some(&v));
        assert_eq!(too_deep(&v), depth > MAX_DEPTH, "depth {depth}");
        let from_text = from_str::<AnyValue>(&text).map(drop).map_err(|e| (e.rule(), e.pointer().to_string()));
        let from_value = from_value::<AnyValue>(&v).map(drop).map_err(|e| (e.rule(), e.pointer().to_string()));
        assert_eq!(from_value, from_text, "depth {depth}");
        if depth > MAX_DEPTH {
            assert_eq!(from_value, Err((Rule::TooDeep, String::new())), "depth {depth}");
        }
        // Through `Deserialize` from a value (no parser limit there): the same limit.
        let via_serde = <Json as serde::Deserialize>::deserialize(&v);
        assert_eq!(via_serde.is_ok(), depth <= MAX_DEPTH, "depth {depth}");
    }
    // A wide value is not deep: many containers side by side at one level.
    let wide = serde_json::Value::Array(vec![nested(MAX_DEPTH - 1, serde_json::Value::Null); 1000]);
    assert!(!too_deep(&wide));
}

#[test]
fn a_value_fifty_thousand_levels_deep_is_refused_without_recursion() {
    // Building and dropping such a `serde_json::Value` recurses (serde_json's own code), so that happens on a
    // thread with a large stack; the checks run on a thread with a small one (256 KiB), which must be enough.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(|| {
            let v = nested(50_000, serde_json::Value::Null);
            std::thread::scope(|s| {
                let small = std::thread::Builder::new().stack_size(256 << 10);
                let r = small
                    .spawn_scoped(s, || {
                        let e = from_value::<AnyValue>(&v).map(drop).expect_err("too deep");
                        let serde_refused = <Json as serde::Deserialize>::deserialize(&v).is_err();
                        ((e.rule(), e.pointer().to_string()), serde_refused)
                    })
                    .expect("spawn")
                    .join()
                    .expect("no stack overflow");
                assert_eq!(r, ((Rule::TooDeep, String::new()), true));
            });
        })
        .expect("spawn")
        .join()
        .expect("the big-stack thread");
}

#[test]
fn too_deep_says_what_the_engine_says() {
    assert_eq!(MAX_DEPTH, crate::engine::MAX_DEPTH);
    assert_eq!(too_deep_message(), crate::engine::too_deep_message());
}

#[test]
fn parse_errors_are_located_as_the_engine_locates_them() {
    for text in [
        "[1,",
        "{\"a\":\n[1,\n",
        "[\n[\n",
        "{\n\"a\": x}",
        "{\"a\":01}",
        "[\"\\udc00\"]",
        "[\"\\ud800\"]",
        "[\"\\ud800\\u0041\"]",
    ] {
        let e = serde_json::from_str::<serde_json::Value>(text).expect_err("not JSON");
        assert_eq!(parse_error_at(&e), crate::engine::parse_error_at(&e), "{text:?}");
        assert_eq!(parse_error_what(&e), crate::engine::parse_error_what(&e), "{text:?}");
        assert!(!parse_error_what(&e).contains(" at line "), "{text:?}");
        // Half a surrogate pair is named as such (serde_json said `unexpected end of hex escape`; helper 98).
        if text.contains("\\ud") {
            assert_eq!(parse_error_what(&e), "an unpaired surrogate escape (UTF-8 cannot encode half a pair)");
        }
    }
    // A one-line text is located by its column alone, whatever the error (it said `at line 1 column 7` where the
    // end of input said `at column 5`).
    let e = from_str::<Flag>("{\"a\":01}").err().expect("not JSON");
    assert_eq!(e.message(), "malformed JSON: invalid number at column 7");
    // The end of a text that ends with a line break is column 1 of the line after it (serde_json says 0; helper 114).
    let e = serde_json::from_str::<serde_json::Value>("{\"a\":\n[1,\n").expect_err("not JSON");
    assert_eq!((e.column(), parse_error_at(&e)), (0, "line 3 column 1".to_string()));
}

#[test]
fn numbers_given_as_text_read_as_the_default_features_read_them() {
    // What serde_json's `arbitrary_precision` (which any crate of a build may turn on) hands over as text.
    let n = |t: &str| number_from_text(t).map(|n| n.to_string());
    for (text, want) in [
        ("0", "0"),
        ("-5", "-5"),
        ("18446744073709551615", "18446744073709551615"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("1.5", "1.5"),
        ("1e3", "1000.0"),
        ("1000.0", "1000.0"),
        ("18446744073709551616", "1.8446744073709552e+19"),
        ("-0", "-0.0"),
    ] {
        assert_eq!(n(text).as_deref(), Some(want), "{text}");
        assert_eq!(serde_json::from_str::<serde_json::Number>(text).map(|n| n.to_string()).ok().as_deref(), Some(want));
    }
    assert_eq!(n("1e400"), None);
    // In this build numbers come as numbers, so an object under that key is an object a message may hold.
    assert!(!numbers_as_maps());
    let v = json(&format!(r#"{{"{NUMBER_TOKEN}":"5"}}"#));
    assert!(matches!(v, Json::Object(_)), "{v:?}");
}

#[test]
fn an_f64_is_written_as_javascript_writes_it_when_whole_and_within_64_bits() {
    let written = |x: f64| serde_json::to_string(&W(&x)).expect("serializes");
    let two63 = 9_223_372_036_854_775_808.0;
    assert_eq!(written(7.0), "7");
    assert_eq!(written(-7.0), "-7");
    assert_eq!(written(-0.0), "0");
    assert_eq!(written(0.5), "0.5");
    assert_eq!(written(9_007_199_254_740_992.0), "9007199254740992");
    assert_eq!(written(-two63), "-9223372036854775808");
    assert_eq!(written(two63), "9223372036854775808");
    assert_eq!(written(2.0 * two63), "1.8446744073709552e+19");
    assert_eq!(written(1e300), "1e+300");
    // The stream machine writes rollup sums by the same rule (its own copy, as it runs without this runtime).
    for x in [7.0, -0.0, 0.5, 9_007_199_254_740_992.0, -two63, two63, 2.0 * two63, 1e300] {
        let sum = serde_json::to_string(&crate::stream::machine::number(x)).expect("serializes");
        assert_eq!(sum, written(x), "{x}");
    }
    // Inside the containers the types use, too.
    let parts = (vec![Some(1.0), None], 2.5, Box::new(3.0));
    assert_eq!(serde_json::to_string(&W(&parts)).expect("serializes"), "[[1,null],2.5,3]");
    let mut extra = Extra::new();
    extra.insert("a".to_string(), 4.0);
    assert_eq!(serde_json::to_string(&W(&extra)).expect("serializes"), r#"{"a":4}"#);
    assert_eq!(serde_json::to_string(&extra).expect("serializes"), r#"{"a":4}"#);
    // No JSON number is NaN or infinite: writing one fails (serde_json wrote `null`, which no number field takes).
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = serde_json::to_string(&W(&Some(x))).expect_err("not a JSON number");
        assert!(e.to_string().contains("is not a JSON number"), "{e}");
    }
    // A literal (`const`, `enum`) the same way: `1.0` is `1`, inside arrays and objects too.
    static WHOLE: Lit = Lit::new(r#"[1.0, {"a": 5.0, "b": 0.5}, "1.0", 7]"#);
    assert_eq!(serde_json::to_string(&WHOLE).expect("serializes"), r#"[1,{"a":5,"b":0.5},"1.0",7]"#);
}

/// The runtime shows numbers and schema values as the engine does (a copy: the generated crate does not link the
/// generator), on doubles across the range, and on the values of a schema.
#[test]
fn numbers_and_values_are_shown_as_the_engine_shows_them() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut doubles = vec![0.0, -0.0, 1.0, 100.0, 1e21, 1e-7, 1e-6, 0.1, 5e-324, f64::MAX, -1e300, 123.456];
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let f = f64::from_bits(x);
        if f.is_finite() {
            doubles.push(f);
        }
    }
    for f in doubles {
        assert_eq!(num(f), crate::engine::number_text(f), "{f:e}");
    }
    for v in [serde_json::json!([2.0, -0.0, {"k": 1e21, "s": "x"}, 3, null]), serde_json::json!(1.5e-9)] {
        assert_eq!(shown_value(&v), crate::engine::shown_value(&v), "{v}");
    }
}
