//! The markdown reference (`generated/docs/session-protocol.md`): well-formed tables, stable anchors, every row
//! of the protocol document's tables, and escaping of hostile descriptions. That the committed file is what the
//! emitter produces today is the freshness test's job (`src/freshness.rs`).

use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The reference's path inside the `docs` output.
const FILE: &str = "docs/session-protocol.md";

/// The markdown reference for a schema directory, through the public API (`Output::Docs`).
fn render(schema_dir: &Path) -> String {
    let p = wiregen::load::load(schema_dir).unwrap_or_else(|e| panic!("schema does not load:\n{e}"));
    let files = wiregen::emit::Output::Docs.emit(&p, &Default::default()).expect("docs render");
    files.into_iter().find(|f| f.path == FILE).expect("the docs output holds the reference").contents
}

/// The reference of a plain type package of one schema file, written to a fresh directory under the test target
/// directory (removed after).
fn render_plain(name: &str, schema: &Value) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("plain.schema.json");
    std::fs::write(&file, serde_json::to_string_pretty(schema).unwrap()).unwrap();
    let m = wiregen::load::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let md = wiregen::emit::Output::Docs.emit(&m, &Default::default()).expect("docs render").remove(0).contents;
    let _ = std::fs::remove_dir_all(&dir);
    md
}

fn golden_path() -> PathBuf {
    root().join("generated").join(FILE)
}

/// A table as parsed: the heading it sits under, its header cells, its rows, and its raw source lines.
#[derive(Debug)]
struct Table {
    heading: String,
    columns: usize,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    source: String,
}

/// Parses every GFM table of `md` with pulldown-cmark. Cell text keeps code spans in backticks and `<br>`.
fn tables(md: &str) -> Vec<Table> {
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut in_heading = false;
    let mut cur: Option<Table> = None;
    let mut row: Vec<String> = Vec::new();
    let mut cell: Option<String> = None;
    for (ev, range) in Parser::new_ext(md, Options::ENABLE_TABLES).into_offset_iter() {
        match ev {
            Event::Start(Tag::Heading { .. }) => {
                in_heading = true;
                heading.clear();
            }
            Event::End(TagEnd::Heading(_)) => in_heading = false,
            Event::Start(Tag::Table(align)) => {
                cur = Some(Table {
                    heading: heading.clone(),
                    columns: align.len(),
                    header: Vec::new(),
                    rows: Vec::new(),
                    source: md[range].to_string(),
                })
            }
            Event::End(TagEnd::Table) => out.push(cur.take().unwrap()),
            Event::Start(Tag::TableHead) | Event::Start(Tag::TableRow) => row.clear(),
            Event::End(TagEnd::TableHead) => cur.as_mut().unwrap().header = std::mem::take(&mut row),
            Event::End(TagEnd::TableRow) => cur.as_mut().unwrap().rows.push(std::mem::take(&mut row)),
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::End(TagEnd::TableCell) => row.push(cell.take().unwrap()),
            Event::Text(t) => {
                if let Some(c) = cell.as_mut() {
                    c.push_str(&t);
                } else if in_heading {
                    heading.push_str(&t);
                }
            }
            Event::Code(t) => {
                if let Some(c) = cell.as_mut() {
                    c.push_str(&format!("`{t}`"));
                } else if in_heading {
                    heading.push_str(&format!("`{t}`"));
                }
            }
            Event::InlineHtml(t) | Event::Html(t) => {
                if let Some(c) = cell.as_mut() {
                    c.push_str(&t);
                }
            }
            _ => {}
        }
    }
    out
}

/// Cells of one raw table line, split on unescaped `|` as GFM does before any inline parsing.
fn raw_cells(line: &str) -> usize {
    let line = line.trim();
    let inner = line.strip_prefix('|').unwrap_or(line);
    let inner = inner.strip_suffix('|').filter(|s| !s.ends_with('\\')).unwrap_or(inner);
    let mut n = 1;
    let mut prev = ' ';
    for c in inner.chars() {
        if c == '|' && prev != '\\' {
            n += 1;
        }
        prev = c;
    }
    n
}

/// Every table has as many cells in every source line and every parsed row as in its header.
fn check_tables(md: &str) -> Result<usize, String> {
    let ts = tables(md);
    for t in &ts {
        let lines: Vec<&str> = t.source.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.len() != t.rows.len() + 2 {
            return Err(format!("table under {:?}: {} source lines for {} rows", t.heading, lines.len(), t.rows.len()));
        }
        for l in &lines {
            if raw_cells(l) != t.columns {
                return Err(format!(
                    "table under {:?}: {} cells, header has {}: {l}",
                    t.heading,
                    raw_cells(l),
                    t.columns
                ));
            }
        }
        if t.header.len() != t.columns || t.rows.iter().any(|r| r.len() != t.columns) {
            return Err(format!("table under {:?}: parsed row width differs from header", t.heading));
        }
    }
    Ok(ts.len())
}

#[test]
fn tables_have_consistent_columns() {
    let md = std::fs::read_to_string(golden_path()).unwrap();
    let n = check_tables(&md).unwrap();
    // Envelope, one per event with fields (12 of 14), summary, role matrix, removed, side channels, message
    // rules, and the stream rules' scopes, rules and rollup.
    let p = wiregen::load::load(&root().join("schema")).unwrap();
    let events = &p.protocol.as_ref().expect("a protocol").events;
    // Fields besides the discriminator.
    let with_fields = events
        .iter()
        .filter(|e| matches!(&p.ty(e.ty).node.shape, wiregen::ir::Shape::Object(o) if o.fields.len() > 1))
        .count();
    assert_eq!(n, 1 + with_fields + 8, "table count");
    // The check itself catches a row with a missing cell and a row broken by a newline.
    assert!(check_tables(&md.replacen("| `time` | integer (0 to 2^53-1) |", "| `time` |", 1)).is_err());
    assert!(check_tables(&md.replacen("Unix timestamp in", "Unix\ntimestamp in", 1)).is_err());
}

#[test]
fn anchors_resolve_and_every_event_has_one() {
    let md = std::fs::read_to_string(golden_path()).unwrap();
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, Parser::new_ext(&md, Options::ENABLE_TABLES));
    let p = wiregen::load::load(&root().join("schema")).unwrap();
    let events = &p.protocol.as_ref().expect("a protocol").events;
    for v in events {
        // The documented, stable anchor of an event.
        let a = format!("event-{}", v.tag);
        assert!(html.contains(&format!("<a id=\"{a}\"></a>")), "no anchor for {}", v.tag);
        assert!(html.contains(&format!("href=\"#{a}\"")), "no table-of-contents link to {}", v.tag);
    }
    let mut links = 0;
    for (i, _) in html.match_indices("href=\"#") {
        let target = &html[i + 7..];
        let target = &target[..target.find('"').unwrap()];
        assert!(html.contains(&format!("id=\"{target}\"")), "link to #{target} has no anchor");
        links += 1;
    }
    assert!(links >= 2 * events.len());
    // The rendered HTML has one <table> per markdown table, and no stray pipes at the start of a paragraph.
    assert_eq!(html.matches("<table>").count(), tables(&md).len());
    assert!(!html.contains("<p>|"), "a table row fell out of its table");
    // Kept for looking at in a browser: target/tmp/session-protocol.html.
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("session-protocol.html");
    std::fs::write(out, format!("<!doctype html><meta charset=utf-8><title>session protocol</title>{html}")).unwrap();
}

#[test]
fn rule_catalogues_are_listed_from_their_definitions() {
    let md = std::fs::read_to_string(golden_path()).unwrap();
    let ts = tables(&md);
    let msg = ts.iter().find(|t| t.heading == "Message Rules").expect("message rules table");
    // The rules this package can give rise to, in catalogue order, each with its summary.
    use wiregen::rules::Rule;
    let mut all = Rule::ALL.iter();
    for row in &msg.rows {
        let r = all
            .find(|r| format!("`{}`", r.id()) == row[0])
            .unwrap_or_else(|| panic!("{} is not in the catalogue, or out of its order", row[0]));
        assert_eq!(row[1], r.summary());
    }
    let listed = |r: Rule| msg.rows.iter().any(|row| row[0] == format!("`{}`", r.id()));
    for r in [Rule::MalformedJson, Rule::Type, Rule::Required, Rule::AdditionalProperty, Rule::Enum, Rule::MinLength] {
        assert!(listed(r), "{} is missing", r.id());
    }
    for r in [Rule::UnknownEvent, Rule::RemovedEvent, Rule::RemovedProperty, Rule::RoleEvent, Rule::RoleField] {
        assert!(listed(r), "{} is missing", r.id());
    }
    // The session protocol has no pattern, array, map or combinator.
    for r in [Rule::Pattern, Rule::MinItems, Rule::PropertyNames, Rule::AnyOf, Rule::OneOf, Rule::UnknownVariant] {
        assert!(!listed(r), "{} cannot occur with the session protocol", r.id());
    }
    // The Stream Rules table is the protocol's sequence declarations (`x-sequence`), row by row, in check order.
    let stream = |first: &str| {
        ts.iter()
            .find(|t| t.heading == "Stream Rules" && t.header.first().is_some_and(|h| h == first))
            .unwrap_or_else(|| panic!("the stream rules' {first} table"))
    };
    let st = stream("Rule");
    let model = wiregen::load::load(&root().join("schema")).expect("schema loads");
    let sequence = &model.protocol.as_ref().expect("a protocol").sequence;
    let rules = &sequence.rules;
    assert_eq!(st.rows.len(), rules.len());
    assert!(rules.len() >= 19, "the 19 v2 rules and any added since");
    for (row, r) in st.rows.iter().zip(rules) {
        assert_eq!(row[0], format!("`{}`", r.id));
        assert_eq!(row[2], r.summary);
        assert_eq!(row[3], format!("`{}`", r.pointer));
        assert_eq!(row[4], r.seed);
    }
    // What breaks each rule is written from its declaration, not only its author's summary (helper 79: a changed
    // `equals` left the summary saying the old value), and so are the scopes and the rollup.
    let check = |id: &str| st.rows.iter().find(|r| r[0] == format!("`{id}`")).expect("the rule's row")[1].clone();
    assert_eq!(
        check("turn.abort-not-cancelled"),
        "`turn-end` of a `turn` marked `aborted` (set by `abort` from `user`) whose `/ev/status` is not `\"cancelled\"`"
    );
    assert_eq!(check("permission.outside-turn"), "`permission-request` while no `turn` is open");
    assert_eq!(
        check("turn.missing-id"),
        "a message other than `turn-start` without `/turn` while a `turn` is open; only from `agent`"
    );
    assert_eq!(check("call.not-open"), "`tool-call-end` whose `/ev/call` names no open `call`");
    let scopes = stream("Scope");
    let names: Vec<String> = sequence.scopes.iter().map(|s| format!("`{}`", s.name)).collect();
    assert_eq!(scopes.rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>(), names);
    let perm = scopes.rows.iter().find(|r| r[0] == "`permission`").expect("the permission scope");
    assert_eq!(perm[1..4], ["`/ev/call`", "`permission-request`", "`permission-response`"]);
    assert!(perm[4].starts_with("many, by key, each within the open `call` of the same key"), "{perm:?}");
    // Each scope's name in the rollup's `open` (helper 109: the reference named none of them).
    for (row, sc) in scopes.rows.iter().zip(&sequence.scopes) {
        if let Some(r) = &sc.rollup {
            assert!(
                row[4].contains(&format!(
                    "the rollup's `open` {} `{r}`",
                    if sc.single { "holds it as" } else { "lists them as" }
                )),
                "{row:?}"
            );
        }
    }
    assert!(sequence.scopes.iter().filter(|s| s.rollup.is_some()).count() >= 3);
    let rollup = stream("Part");
    assert_eq!(rollup.rows.len(), sequence.rollup.len());
    let usage = rollup.rows.iter().find(|r| r[0] == "`usage`").expect("the usage part");
    assert!(usage[1].starts_with("the numbers of `/ev/usage` on `turn-end`, summed: `inputTokens`"), "{usage:?}");
}

// ---- every row of the protocol document's tables ---------------------------------------------------------------

/// `"a"` values of an enum cell, in order.
fn enum_values(cell: &str) -> Vec<String> {
    cell.split('`').filter(|s| s.starts_with('"') && s.ends_with('"') && s.len() >= 2).map(String::from).collect()
}

/// Whether the generated type cell means the seed's type (refinements allowed: cuid2 -> non-empty string with
/// the strict-id pattern, number -> integer, string -> enum), with the same optionality.
fn type_compatible(seed: &str, gen: &str) -> Result<(), String> {
    let seed_opt = seed.ends_with('?');
    let base = seed.trim_end_matches('?');
    let first = gen.split_whitespace().next().unwrap_or("");
    let gen_opt = first.trim_end_matches(':').ends_with('?');
    let gen_base = if gen.starts_with("`\"") { "enum" } else { first.trim_end_matches(':').trim_end_matches('?') };
    if seed_opt != gen_opt {
        return Err(format!("optional differs: seed `{seed}`, generated `{gen}`"));
    }
    let ok = match base {
        "cuid2" => gen_base == "string" && gen.contains("with strict ids matches"),
        "number" => gen_base == "number" || gen_base == "integer",
        "string" => gen_base == "string" || gen_base == "enum",
        "object" | "boolean" => gen_base == base,
        _ if base.contains("`\"") => {
            let want = enum_values(base);
            !want.is_empty() && enum_values(gen) == want
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("type differs: seed `{seed}`, generated `{gen}`"))
    }
}

/// Same description, or the seed listed the allowed values in the description and the generated type lists them.
fn description_compatible(seed: &str, gen_desc: &str, gen_type: &str) -> Result<(), String> {
    let values = enum_values(seed);
    let only_values = !values.is_empty()
        && seed.split('`').filter(|s| !s.trim().is_empty() && s.trim() != "|").count() == values.len();
    if seed == gen_desc || (only_values && enum_values(gen_type) == values) {
        Ok(())
    } else {
        Err(format!("description differs: seed `{seed}`, generated `{gen_desc}`"))
    }
}

/// Summary "New?" column: same status word and every code span of the seed cell.
fn status_compatible(seed: &str, gen: &str) -> Result<(), String> {
    let word = |s: &str| s.split([' ', ',']).next().unwrap_or("").to_string();
    let spans: Vec<&str> = seed.split('`').skip(1).step_by(2).collect();
    if word(seed) == word(gen) && spans.iter().all(|s| gen.contains(&format!("`{s}`"))) {
        Ok(())
    } else {
        Err(format!("status differs: seed `{seed}`, generated `{gen}`"))
    }
}

/// Compares every seed row with the generated tables; returns how many rows matched.
fn compare_with_seed(generated: &str) -> Result<usize, Vec<String>> {
    let seed = std::fs::read_to_string(root().join("tests/fixtures/seed-tables.md")).unwrap();
    let gen = tables(generated);
    let mut errors = Vec::new();
    let mut matched = 0;
    // The side-channel table is compared exactly, in its own test.
    for st in tables(&seed).into_iter().filter(|t| t.heading != "What Stays on Side Channels") {
        let Some(gt) = gen.iter().find(|g| g.heading == st.heading && g.header == st.header) else {
            errors.push(format!("no generated table under {:?} with header {:?}", st.heading, st.header));
            continue;
        };
        let summary = st.header.len() == 4;
        let key = usize::from(summary);
        for sr in &st.rows {
            let Some(gr) = gt.rows.iter().find(|g| g[key] == sr[key]) else {
                errors.push(format!("{}: row {} missing", st.heading, sr[key]));
                continue;
            };
            let res = if summary {
                let same = |i: usize| {
                    if sr[i] == gr[i] {
                        Ok(())
                    } else {
                        Err(format!("column {} differs: seed `{}`, generated `{}`", st.header[i], sr[i], gr[i]))
                    }
                };
                same(0).and(same(2)).and(status_compatible(&sr[3], &gr[3]))
            } else {
                type_compatible(&sr[1], &gr[1]).and(description_compatible(&sr[2], &gr[2], &gr[1]))
            };
            match res {
                Ok(()) => matched += 1,
                Err(e) => errors.push(format!("{} {}: {e}", st.heading, sr[key])),
            }
        }
    }
    if errors.is_empty() {
        Ok(matched)
    } else {
        Err(errors)
    }
}

#[test]
fn every_seed_row_appears() {
    let md = std::fs::read_to_string(golden_path()).unwrap();
    let matched = compare_with_seed(&md).unwrap_or_else(|e| panic!("seed rows not reproduced:\n{}", e.join("\n")));
    // 6 envelope rows, 28 event field rows, 14 summary rows.
    assert_eq!(matched, 48);
}

#[test]
fn seed_comparison_catches_drift() {
    let md = std::fs::read_to_string(golden_path()).unwrap();
    let cases = [
        ("| `time` | integer (0 to 2^53-1) |", "| `time` | boolean |"),
        ("| `usage` | object? | Token usage", "| `usage` | object | Token usage"),
        ("`\"completed\"` \\| `\"failed\"`", "`\"completed\"` \\| `\"done\"`"),
        ("| `thinking` | boolean? — agent only | Agent only.", "| `thinking` | boolean? — agent only | Either role."),
        ("| `usage.cost` |", "| `usage.costs` |"),
        ("| Content | [`file`](#event-file) | user/agent |", "| Content | [`file`](#event-file) | agent |"),
        ("| agent | renamed (added `agentId`) |", "| agent | renamed (added `id`) |"),
    ];
    for (from, to) in cases {
        assert!(md.contains(from), "case text not in golden: {from}");
        assert!(compare_with_seed(&md.replacen(from, to, 1)).is_err(), "drift not caught: {from} -> {to}");
    }
}

// ---- escaping ------------------------------------------------------------------------------------------------

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn edit_json(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn hostile_descriptions_do_not_break_the_markdown() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-escape-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&root().join("schema"), &dir);
    let nasty = "pipe | here `code | inside` and a lone ` backtick\nsecond line */ end\u{2028}after LS";
    edit_json(&dir.join("events/text.schema.json"), |v| {
        v["properties"]["text"]["description"] = nasty.into();
        v["description"] = "Event prose with a fence:\n```\nnot code\n```\nand */ and \u{2028}.".into();
        v["examples"][0]["text"] = "```json\nnot the end of the block\n```".into();
    });
    edit_json(&dir.join("events/turn-end.schema.json"), |v| {
        v["properties"]["status"]["enum"].as_array_mut().unwrap().push("odd|`value`".into());
    });
    edit_json(&dir.join("envelope.schema.json"), |v| {
        v["x-removed"][0]["why"] = "Because | reasons\nwith `a|b`".into();
    });
    let md = render(&dir);
    check_tables(&md).unwrap_or_else(|e| panic!("{e}\n{md}"));
    let ts = tables(&md);
    let text = ts.iter().find(|t| t.heading == "`text`").unwrap();
    let row = text.rows.iter().find(|r| r[0] == "`text`").unwrap();
    assert_eq!(row[2], "pipe | here `code | inside` and a lone ` backtick<br>second line */ end<br>after LS");
    let end = ts.iter().find(|t| t.heading == "`turn-end`").unwrap();
    let status = end.rows.iter().find(|r| r[0] == "`status`").unwrap();
    assert!(status[1].ends_with("`\"odd|`value`\"`"), "{}", status[1]);
    let removed = ts.iter().find(|t| t.heading == "Removed").unwrap();
    assert_eq!(removed.rows[0][1], "Because | reasons<br>with `a|b`");
    // The example stays inside one code block, whole.
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for ev in Parser::new_ext(&md, Options::ENABLE_TABLES) {
        match ev {
            Event::Start(Tag::CodeBlock(_)) => cur = Some(String::new()),
            Event::Text(t) if cur.is_some() => cur.as_mut().unwrap().push_str(&t),
            Event::End(TagEnd::CodeBlock) => blocks.push(cur.take().unwrap()),
            _ => {}
        }
    }
    let ex = blocks.iter().find(|b| b.contains("not the end of the block")).expect("example block");
    let parsed: Value = serde_json::from_str(ex).expect("example block is whole JSON");
    assert_eq!(parsed["text"], "```json\nnot the end of the block\n```");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- the happy-wire example: a protocol and many plain types -------------------------------------------------

fn example_path() -> PathBuf {
    root().join("examples/happy-wire/generated/docs/happy-wire.md")
}

/// Every `href="#..."` of the rendered HTML has its anchor; returns the targets.
fn links_resolve(md: &str) -> Vec<String> {
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, Parser::new_ext(md, Options::ENABLE_TABLES));
    let mut targets = Vec::new();
    for (i, _) in html.match_indices("href=\"#") {
        let target = &html[i + 7..];
        let target = &target[..target.find('"').unwrap()];
        assert!(html.contains(&format!("id=\"{target}\"")), "link to #{target} has no anchor");
        targets.push(target.to_string());
    }
    assert_eq!(html.matches("<table>").count(), tables(md).len());
    assert!(!html.contains("<p>|"), "a table row fell out of its table");
    targets
}

#[test]
fn the_examples_reference_covers_its_protocol_and_every_other_type() {
    let md = std::fs::read_to_string(example_path()).unwrap();
    check_tables(&md).unwrap_or_else(|e| panic!("{e}"));
    let targets = links_resolve(&md);
    let m = wiregen::load::load(&root().join("examples/happy-wire/schema")).unwrap();
    let p = m.protocol.as_ref().expect("the example has a protocol layer");
    for e in &p.events {
        assert!(md.contains(&format!("<a id=\"event-{}\"></a>", e.tag)), "no section for event {}", e.tag);
    }
    // The types the envelope's tables show in place: the envelope and everything it reaches.
    let mut shown = std::collections::BTreeSet::new();
    let mut todo = vec![p.envelope];
    while let Some(id) = todo.pop() {
        if shown.insert(id) {
            m.ty(id).node.visit(&mut |n: &wiregen::ir::Node| match &n.shape {
                wiregen::ir::Shape::Ref(r) => todo.push(*r),
                wiregen::ir::Shape::Union(u) => todo.extend(u.members.iter().map(|mb| mb.ty)),
                _ => {}
            });
        }
    }
    let mut sections = 0;
    for (i, t) in m.types.iter().enumerate() {
        let anchor = format!("type-{}", t.names.base.to_lowercase());
        let has = md.contains(&format!("<a id=\"{anchor}\"></a>"));
        if !shown.contains(&wiregen::ir::TypeId(i)) {
            assert!(has, "{} has no section", t.names.base);
            assert!(targets.contains(&anchor), "the Types index does not link {}", t.names.base);
            sections += 1;
        }
    }
    assert!(sections >= 40, "{sections} type sections");
    // The envelope's own examples are in its section, each a JSON block (they were left out; helper 98).
    let envelope =
        &md[md.find("## Envelope").expect("an Envelope section")..md.find("## Event Types").expect("events")];
    let env_examples = &m.ty(p.envelope).examples;
    assert!(!env_examples.is_empty(), "the example's envelope has examples");
    assert_eq!(envelope.matches("```json\n").count(), env_examples.len(), "{envelope}");
    for x in env_examples {
        assert!(envelope.contains(&format!("\"id\": {}", x["id"])), "{x}\n{envelope}");
    }
    let ts = tables(&md);
    let row = |heading: &str, field: &str| -> Vec<String> {
        let t = ts.iter().find(|t| t.heading == heading).unwrap_or_else(|| panic!("no table under {heading}"));
        t.rows.iter().find(|r| r[0] == format!("`{field}`")).unwrap_or_else(|| panic!("no row {field}")).clone()
    };
    // Types as the schema refines them.
    assert_eq!(row("Envelope", "subagent")[1], "string? (2 to 32 characters; matching `^[0-9a-z]+$`)");
    assert_eq!(row("Envelope", "usage.context_window")[1], "integer? (> 0 and ≤ 2^53-1)");
    assert_eq!(row("`MessageMeta`", "model")[1], "string? or null");
    assert_eq!(row("`MessageMeta`", "allowedTools")[1], "array? of string or null");
    assert_eq!(row("`RigMetadataV1`", "rigMetadataVersion")[1], "integer (1 to 2^53-1)");
    assert_eq!(row("`RigMetadataV1`", "providers")[1], "array of `RigProvider`");
    assert_eq!(row("`UpdateSessionBody`", "metadata")[1], "`VersionedEncryptedValue`? or null");
    assert_eq!(row("`SessionProtocolMessage`", "content")[1], "`Envelope`");
    let union = ts.iter().find(|t| t.heading == "`VoiceConversationResponse`").expect("union table");
    assert_eq!(union.header, ["`allowed`", "Type"]);
    assert_eq!(union.rows[0], ["`true`", "`VoiceConversationGranted`"]);
    // Only the rules the package can give rise to: no closed object, no removed event, no role-restricted field.
    let rules = ts.iter().find(|t| t.heading == "Message Rules").expect("message rules table");
    let ids: Vec<&str> = rules.rows.iter().map(|r| r[0].as_str()).collect();
    for id in ["`pattern`", "`max-length`", "`exclusive-minimum`", "`const`", "`unknown-variant`", "`role-event`"] {
        assert!(ids.contains(&id), "{id} is missing");
    }
    for id in ["`additional-property`", "`removed-event`", "`role-field`", "`strict-id`", "`min-items`"] {
        assert!(!ids.contains(&id), "{id} cannot occur with the example");
    }
}

#[test]
fn a_plain_type_package_has_a_reference_too_and_hostile_text_stays_in_place() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-plain-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("plain.schema.json");
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Plain | `types`\nnext",
        "description": "A package\nwithout a protocol.",
        "$defs": {
            "Item": {
                "description": "An item | with `ticks` and\na line break.",
                "type": "object",
                "additionalProperties": false,
                "required": ["na|me", "kind"],
                "properties": {
                    "na|me": { "type": "string", "pattern": "^a|`b`$", "maxLength": 3, "description": "x | y\nz" },
                    "kind": { "enum": ["odd|`value`", "plain"], "description": "Kind." },
                    "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true, "maxItems": 4 },
                    "marks": { "type": "array", "contains": { "type": "string", "minLength": 2 }, "minContains": 2 },
                    "card": { "type": "object", "properties": { "number": { "type": "string" } }, "dependentSchemas": { "number": { "required": ["cvc"] } } },
                    "sealed": { "type": "object", "allOf": [{ "properties": { "x": { "type": "integer" } } }], "unevaluatedProperties": false },
                    "extra": { "type": "object", "additionalProperties": { "type": "integer", "minimum": 1 } }
                },
                "examples": [{ "na|me": "`b`", "kind": "plain" }]
            },
            "Shape": {
                "x-discriminator": "k",
                "oneOf": [
                    { "type": "object", "required": ["k"], "properties": { "k": { "const": 1 } } },
                    { "type": "object", "required": ["k"], "properties": { "k": { "const": 2 }, "next": { "$ref": "#/$defs/Shape" } } }
                ]
            }
        }
    });
    std::fs::write(&file, serde_json::to_string_pretty(&schema).unwrap()).unwrap();
    let m = wiregen::load::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let files = wiregen::emit::Output::Docs.emit(&m, &Default::default()).expect("docs render");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].path, "docs/wire-types.md", "the file is named after the package");
    let md = &files[0].contents;
    check_tables(md).unwrap_or_else(|e| panic!("{e}\n{md}"));
    links_resolve(md);
    assert!(!md.contains("## Envelope") && !md.contains("## Stream Rules"), "no protocol sections:\n{md}");
    // A heading is one line of prose: a line break is a space, and `|` needs no escape outside a table (it was
    // written as a table cell: `# Plain \| ... <br>next`; helper 98).
    assert!(md.contains("\n# Plain | `types` next\n"), "{md}");
    let ts = tables(md);
    let item = ts.iter().find(|t| t.heading == "`Item`").unwrap_or_else(|| panic!("no Item table:\n{md}"));
    let name = item.rows.iter().find(|r| r[0] == "`na|me`").expect("row");
    // (The table parser writes a code span back with single backticks around its exact content.)
    assert_eq!(name[1], "string (at most 3 characters; matching `^a|`b`$`)");
    assert_eq!(name[2], "x | y<br>z");
    let kind = item.rows.iter().find(|r| r[0] == "`kind`").expect("row");
    assert_eq!(kind[1], "`ItemKind`");
    // Outside a table a literal keeps its `|` (a code span would show a backslash).
    assert!(md.contains("``\"odd|`value`\"`` \\| `\"plain\"`"), "{md}");
    let tags = item.rows.iter().find(|r| r[0] == "`tags`").expect("row");
    assert_eq!(tags[1], "array? (at most 4 items; unique items) of string");
    let extra = item.rows.iter().find(|r| r[0] == "`extra`").expect("row");
    assert!(extra[1].starts_with('`') && extra[1].ends_with("`?"), "{}", extra[1]);
    assert!(md.contains("map of string to integer (≥ 1)"), "{md}");
    let shape = ts.iter().find(|t| t.heading == "`Shape`").expect("union table");
    assert_eq!(shape.header, ["`k`", "Type"]);
    assert_eq!(shape.rows.len(), 2);
    let rules = ts.iter().find(|t| t.heading == "Message Rules").expect("rules");
    let ids: Vec<&str> = rules.rows.iter().map(|r| r[0].as_str()).collect();
    assert!(md.contains("array? (at least 2 items matching string (at least 2 characters))"), "{md}");
    assert!(md.contains("; if it has `number` then (null or boolean"), "{md}");
    assert!(md.contains(" (no properties but those evaluated by the parts above the value passes)"), "{md}");
    for id in
        ["`pattern`", "`max-length`", "`enum`", "`unique-items`", "`max-items`", "`contains`", "`unknown-variant`"]
    {
        assert!(ids.contains(&id), "{id} is missing: {ids:?}");
    }
    assert!(!ids.contains(&"`role-event`") && !ids.contains(&"`unknown-event`"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fenced code blocks that follow `marker` in `md` (their contents).
fn blocks_after(md: &str, marker: &str) -> Vec<String> {
    md.split(marker)
        .skip(1)
        .filter_map(|rest| {
            let start = rest.find("```")?;
            let body = &rest[start..];
            let body = &body[body.find('\n')? + 1..];
            Some(body[..body.find("\n```")?].to_string())
        })
        .collect()
}

#[test]
fn every_events_whole_message_example_is_a_valid_message() {
    use wiregen::engine::{Engine, EngineOptions};
    for (dir, events) in [("schema", 14), ("examples/happy-wire/schema", 9)] {
        let model = wiregen::load::load(&root().join(dir)).expect("loads");
        let md = wiregen::emit::Output::Docs
            .emit(&model, &Default::default())
            .expect("docs render")
            .into_iter()
            .find(|f| f.path.ends_with(".md"))
            .expect("the reference")
            .contents;
        let engine = Engine::new(model, EngineOptions::default()).expect("engine");
        let messages = blocks_after(&md, "As a whole message:");
        assert_eq!(messages.len(), events, "{dir}: one whole message per event");
        for m in &messages {
            let v: Value = serde_json::from_str(m).unwrap_or_else(|e| panic!("{dir}: not JSON ({e}): {m}"));
            assert_eq!(engine.check_value(&v), vec![], "{dir}: {m}");
        }
    }
}

#[test]
fn the_realistic_flow_in_the_reference_is_the_seed_session_and_checks_clean() {
    use wiregen::engine::{Engine, EngineOptions};
    let model = wiregen::load::load(&root().join("schema")).expect("loads");
    let flow = &model.protocol.as_ref().expect("a protocol").flows[0];
    assert_eq!(flow.title, "Realistic Flow");
    // The same 28 messages as the stream fixture (which the stream tests check through every checker).
    let fixture = std::fs::read_to_string(root().join("tests/fixtures/streams/seed-realistic-flow.jsonl")).unwrap();
    let want: Vec<Value> = fixture.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let got: Vec<&Value> = flow.steps.iter().map(|s| &s.message).collect();
    assert_eq!(got, want.iter().collect::<Vec<_>>());
    let engine = Engine::new(model.clone(), EngineOptions::default()).expect("engine");
    let mut checker = wiregen::stream::StreamChecker::new(&engine);
    for (i, m) in got.iter().enumerate() {
        let rec = checker.check(i + 1, serde_json::to_string(m).unwrap().as_bytes());
        assert!(rec.errors.is_empty(), "message {}: {:?}", i + 1, rec.errors);
    }
    // The reference prints it, notes included.
    let md = render(&root().join("schema"));
    let block = blocks_after(&md, "## Realistic Flow").remove(0);
    assert_eq!(block.lines().filter(|l| l.starts_with('{')).count(), 28);
    assert!(block.contains("// User steers mid-turn"));
}

#[test]
fn side_channels_and_open_questions_are_the_seeds() {
    let md = render(&root().join("schema"));
    let seed = std::fs::read_to_string(root().join("tests/fixtures/seed-tables.md")).unwrap();
    let want = tables(&seed).into_iter().find(|t| t.heading == "What Stays on Side Channels").expect("seed table");
    let got = tables(&md).into_iter().find(|t| t.heading == "What Stays on Side Channels").expect("generated table");
    assert_eq!((got.header, got.rows), (want.header, want.rows));
    let open = &md[md.find("## Open Questions").expect("the section")..];
    // The seed's four open questions, each with its decision (the fourth was missing).
    let questions =
        ["`steer` field naming", "Permission auto-approval", "Subagent `agentId` format", "metadata rollup"];
    for q in questions {
        assert!(open.contains(q), "{q}");
    }
    assert_eq!(open.matches("**Decided here:**").count(), questions.len());
    assert!(md.contains("<a id=\"strict-ids\"></a>") && md.contains("**Strict ids.**"));
}

/// A type the protocol's tables show in place that holds itself (an array of itself, which every other output
/// accepts) is named where it recurs instead of spelled out forever (it overflowed the stack).
#[test]
fn a_type_that_holds_itself_is_named_where_it_recurs() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-recursive-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&root().join("schema"), &dir);
    edit_json(&dir.join("events/turn-end.schema.json"), |v| {
        v["$defs"] = serde_json::json!({
            "tree": {"type": "array", "items": {"$ref": "#/$defs/tree"}, "description": "Nested lists."}
        });
        v["properties"]["tree"] = serde_json::json!({"$ref": "#/$defs/tree", "description": "A tree."});
    });
    let md = render(&dir);
    check_tables(&md).unwrap_or_else(|e| panic!("{e}\n{md}"));
    let end = tables(&md).into_iter().find(|t| t.heading == "`turn-end`").expect("turn-end's table");
    // Linked to a section of its own: named in place where it recurred, it was a name nothing explained.
    assert!(end.source.contains("\n| `tree` | [`Tree`](#type-tree)? | A tree. |\n"), "{}", end.source);
    assert!(md.contains("\n### `Tree`\n"), "no section for Tree");
    assert!(md.contains("\narray of [`Tree`](#type-tree)\n"), "Tree's section does not say what it is");
    links_resolve(&md);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the protocol's tables cannot spell out in place is linked to a section that does: before, a map's
/// values, the members of `anyOf`, a tuple's items, an object reached again inside itself, a nested object's
/// `minProperties` and `dependentRequired` and an event's own `dependentRequired` all read `object` or nothing,
/// as if any object were valid there. An event's other properties say their type (they read "see the types",
/// with no type to see).
#[test]
fn what_the_protocol_tables_cannot_spell_out_in_place_is_linked() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-nested-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&root().join("schema"), &dir);
    let obj = |name: &str, ty: &str| {
        serde_json::json!({ "description": "An item.", "type": "object", "required": [name],
            "additionalProperties": false, "properties": { name: { "description": "Its value.", "type": ty } } })
    };
    edit_json(&dir.join("events/text.schema.json"), |v| {
        let p = &mut v["properties"];
        p["m"] = serde_json::json!({ "description": "A map.", "type": "object", "additionalProperties": obj("a", "string") });
        p["u"] =
            serde_json::json!({ "description": "One of two.", "anyOf": [obj("x", "integer"), obj("y", "boolean")] });
        p["n"] = serde_json::json!({ "description": "Nested.", "type": "object", "minProperties": 1,
            "dependentRequired": { "p": ["q"] }, "properties": {
                "p": { "description": "P.", "type": "string" }, "q": { "description": "Q.", "type": "string" } } });
        p["tup"] = serde_json::json!({ "description": "A pair.", "type": "array",
            "prefixItems": [obj("z", "boolean")], "items": false });
        p["node"] = serde_json::json!({ "description": "A tree.", "$ref": "#/$defs/node" });
        p["kinds"] = serde_json::json!({ "description": "Kinds.", "type": ["string", "array"], "minItems": 2 });
        p["empty"] = serde_json::json!({ "description": "Empty.", "type": "object", "additionalProperties": false });
        v["$defs"] = serde_json::json!({ "node": { "description": "A node.", "type": "object", "properties": {
            "kids": { "description": "Children.", "type": "array", "items": { "$ref": "#/$defs/node" } } } } });
        v["dependentRequired"] = serde_json::json!({ "m": ["u"] });
    });
    edit_json(&dir.join("events/service.schema.json"), |v| {
        v["additionalProperties"] = obj("w", "string");
    });
    let md = render(&dir);
    check_tables(&md).unwrap_or_else(|e| panic!("{e}\n{md}"));
    links_resolve(&md);
    let ts = tables(&md);
    let table = |heading: &str| {
        ts.iter().find(|t| t.heading == heading).unwrap_or_else(|| panic!("no table under {heading}\n{md}"))
    };
    // A row as written (the parsed cells keep a link's text only).
    let row = |heading: &str, field: &str, ty: &str| {
        let t = table(heading);
        let line = t.source.lines().find(|l| l.starts_with(&format!("| `{field}` |")));
        let line = line.unwrap_or_else(|| panic!("no row {field} under {heading}:\n{}", t.source));
        assert!(line.starts_with(&format!("| `{field}` | {ty} |")), "under {heading}: {line}");
    };
    row("`text`", "m", "map? of string to [`TextMValue`](#type-textmvalue)");
    row("`text`", "u", "any of? ([`TextUOption0`](#type-textuoption0); [`TextUOption1`](#type-textuoption1))");
    row("`text`", "n", "[`TextN`](#type-textn)?");
    row("`text`", "tup", "array? of: [1] [`TextTupItem0`](#type-texttupitem0) (only if present), then no more items");
    row("`text`", "node", "[`Node`](#type-node)?");
    // The `?` follows the first kind (it went after the first word before a parenthesis: `array? (at least 2
    // items)` inside the list).
    row("`text`", "kinds", "string? or array (at least 2 items)");
    row("`text`", "empty", "object? (no properties)");
    // A nested object without other constraints is still spelled out in rows.
    row("`turn-end`", "usage.cost", "number (≥ 0)");
    // Each linked section says what was missing.
    row("`TextMValue`", "a", "string");
    row("`TextUOption0`", "x", "integer");
    row("`TextUOption1`", "y", "boolean");
    row("`TextTupItem0`", "z", "boolean");
    row("`Node`", "kids", "array? of [`Node`](#type-node)");
    row("`ServiceValue`", "w", "string");
    let section = |name: &str| {
        let at = md.find(&format!("\n### `{name}`\n")).unwrap_or_else(|| panic!("no section {name}"));
        let rest = &md[at + 1..];
        rest[..rest[4..].find("\n### ").map_or(rest.len(), |e| e + 4)].to_string()
    };
    assert!(section("TextMValue").contains("object; other properties are rejected"), "{}", section("TextMValue"));
    let n = section("TextN");
    assert!(n.contains("\n- At least 1 property\n") && n.contains("\n- When `p` is present, so must be `q`\n"), "{n}");
    // The event's own constraints and other properties, in its section.
    let text = &md[md.find("\n#### `text`\n").unwrap()..md.find("\n#### `service`\n").unwrap()];
    assert!(text.contains("\n- When `m` is present, so must be `u`\n"), "{text}");
    assert!(
        md.contains("\nOther properties are accepted when their value is: [`ServiceValue`](#type-servicevalue).\n"),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A type the protocol's tables spell out in place keeps its own words: with examples or a title (which no table
/// row shows) it gets a section too, and the row still spells it out (helper 98: they were said nowhere).
#[test]
fn a_type_shown_in_place_with_its_own_examples_or_title_has_a_section_too() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-in-place-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&root().join("schema"), &dir);
    edit_json(&dir.join("events/text.schema.json"), |v| {
        v["properties"]["stamp"] = serde_json::json!({ "description": "When it was said.", "$ref": "#/$defs/stamp" });
        v["properties"]["mood"] = serde_json::json!({ "description": "How it was said.", "$ref": "#/$defs/mood" });
        v["properties"]["plain"] = serde_json::json!({ "description": "Nothing more.", "$ref": "#/$defs/plain" });
        v["$defs"] = serde_json::json!({
            "stamp": { "description": "Seconds since the epoch.", "type": "integer", "minimum": 0,
                "examples": [1_700_000_000] },
            "mood": { "title": "A mood", "description": "Its tone.", "type": "string", "enum": ["calm", "loud"] },
            "plain": { "description": "A plain count.", "type": "integer", "minimum": 1 } });
    });
    let md = render(&dir);
    check_tables(&md).unwrap_or_else(|e| panic!("{e}\n{md}"));
    links_resolve(&md);
    assert!(md.contains("\n| `stamp` | integer? (≥ 0) | When it was said. |\n"), "{md}");
    assert!(md.contains("\n| `plain` | integer? (≥ 1) | Nothing more. |\n"), "{md}");
    let types = &md[md.find("\n## Types\n").unwrap_or_else(|| panic!("no Types section\n{md}"))..];
    assert!(types.contains("The 2 types the envelope and event tables above do not spell out whole"), "{types}");
    let stamp = &types[types.find("\n### `Stamp`\n").expect("a section for Stamp")..];
    assert!(stamp.contains("\nSeconds since the epoch.\n") && stamp.contains("\n1700000000\n"), "{stamp}");
    assert!(types.contains("\n### `Mood`\n") && types.contains("\nA mood — Its tone.\n"), "{types}");
    assert!(!types.contains("### `Plain`"), "{types}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two sections whose names make the same slug (an event `Text` beside `text`, types `FOOBAR` and `FooBar`) get
/// anchors of their own (`event-text-2`, `type-foobar-2`; types in the Types section's order), and each link leads to its own section: before, both
/// sections carried one anchor and every link led to the first.
#[test]
fn sections_whose_names_share_a_slug_get_anchors_of_their_own() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-slugs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&root().join("schema"), &dir);
    let upper = dir.join("events/text-upper.schema.json");
    std::fs::copy(dir.join("events/text.schema.json"), &upper).unwrap();
    edit_json(&upper, |v| {
        v["$id"] = "https://wiregen.dev/session-protocol/v2/events/text-upper.schema.json".into();
        v["title"] = "Text".into();
        v["x-order"] = 99.into();
        v["properties"]["t"]["const"] = "Text".into();
        v["examples"] = serde_json::json!([{ "t": "Text", "text": "Hello." }]);
    });
    edit_json(&dir.join("defs.schema.json"), |v| {
        for (key, name) in [("fooBar", "FooBar"), ("fooBAR", "FOOBAR")] {
            v["$defs"][key] = serde_json::json!({ "type": "string", "description": "A type.", "x-name": name });
        }
    });
    let md = render(&dir);
    let ids: Vec<&str> =
        md.match_indices("<a id=\"").map(|(i, _)| &md[i + 7..i + 7 + md[i + 7..].find('"').unwrap()]).collect();
    let distinct: std::collections::BTreeSet<&&str> = ids.iter().collect();
    assert_eq!(ids.len(), distinct.len(), "an anchor is given twice: {ids:?}");
    links_resolve(&md);
    // Each link leads to the section of what it names.
    for (link, heading) in [
        ("[`Text`](#event-text-2)", "#### `Text`"),
        ("[`text`](#event-text)", "#### `text`"),
        ("[`FOOBAR`](#type-foobar)", "### `FOOBAR`"),
        ("[`FooBar`](#type-foobar-2)", "### `FooBar`"),
    ] {
        assert!(md.contains(link), "no link {link}");
        let anchor = &link[link.find("(#").unwrap() + 2..link.len() - 1];
        let at = md.find(&format!("<a id=\"{anchor}\"></a>")).unwrap_or_else(|| panic!("no anchor {anchor}"));
        let next = md[at..].lines().find(|l| l.starts_with('#')).unwrap();
        assert_eq!(next, heading, "#{anchor} leads to another section");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A description cannot reach past itself: one that opens a code fence and does not close it, or starts with
/// `<!--`, turned every later section into code or hid it. Types that read with an "or" are parenthesized as an
/// array's items (a nullable array and an array of nullable items both read `array of string or null`), an array
/// of arrays has a `[]` a level in its row paths (`grid[].k` told a reader to send objects), and an empty name is
/// a JSON string in brackets (a one-space code span read as the name " ").
#[test]
fn descriptions_and_literals_cannot_break_the_reference() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-prose-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("plain.schema.json");
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "Alpha": {
                "description": "Example:\n```\n{\"a\": 1}",
                "type": "object",
                "properties": {
                    "arrNull": { "type": ["array", "null"], "items": { "type": "string" } },
                    "itemNull": { "type": "array", "items": { "type": ["string", "null"] } },
                    "grid": { "type": "array", "items": { "type": "array", "items": { "type": "object", "properties": { "k": { "type": "integer" } } } } },
                    "": { "type": "string" }
                }
            },
            "Beta": { "description": "<!-- not closed", "type": "string" },
            "Gamma": { "description": "Still a section.", "type": "integer" }
        }
    });
    std::fs::write(&file, serde_json::to_string_pretty(&schema).unwrap()).unwrap();
    let m = wiregen::load::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let md = wiregen::emit::Output::Docs.emit(&m, &Default::default()).expect("docs render").remove(0).contents;
    check_tables(&md).unwrap_or_else(|e| panic!("{e}\n{md}"));
    // Every `###` section of the source is a heading once rendered, and every table is a table.
    let mut headings = Vec::new();
    let mut cur: Option<String> = None;
    let mut rendered_tables = 0;
    for ev in Parser::new_ext(&md, Options::ENABLE_TABLES) {
        match ev {
            Event::Start(Tag::Heading { level: pulldown_cmark::HeadingLevel::H3, .. }) => cur = Some(String::new()),
            Event::Code(t) | Event::Text(t) if cur.is_some() => cur.as_mut().unwrap().push_str(&t),
            Event::End(TagEnd::Heading(_)) => headings.extend(cur.take()),
            Event::Start(Tag::Table(_)) => rendered_tables += 1,
            _ => {}
        }
    }
    assert_eq!(headings, ["Alpha", "AlphaGridItemItem", "Beta", "Gamma"], "{md}");
    assert_eq!(
        rendered_tables,
        md.lines().filter(|l| l.starts_with("| --- |") || l.starts_with("|---")).count().max(1)
    );
    let alpha = tables(&md).into_iter().find(|t| t.heading == "`Alpha`").expect("Alpha's table");
    let ty = |path: &str| {
        alpha.rows.iter().find(|r| r[0] == path).unwrap_or_else(|| panic!("no row {path}: {:?}", alpha.rows))[1].clone()
    };
    assert_eq!(ty("`arrNull`"), "array? of string or null");
    assert_eq!(ty("`itemNull`"), "array? of (string or null)");
    assert_eq!(ty("`[\"\"]`"), "string?");
    // In a protocol's event table a nested object's rows are in place: one `[]` a level of arrays.
    let proto = dir.join("protocol");
    copy_dir(&root().join("schema"), &proto);
    edit_json(&proto.join("events/text.schema.json"), |v| {
        v["properties"]["grid"] = serde_json::json!({ "description": "Rows.", "type": "array", "items": {
            "type": "array", "items": { "description": "A cell.", "type": "object",
            "properties": { "k": { "description": "Its value.", "type": "integer" } } } } });
        v["properties"]["pp"] = serde_json::json!({ "description": "Patterned.", "type": "object",
            "additionalProperties": false, "patternProperties": { "^x": { "type": "integer" } } });
        v["properties"]["ap"] = serde_json::json!({ "description": "Mapped.", "type": "object",
            "properties": { "a": { "description": "A.", "type": "string" } }, "additionalProperties": { "type": "integer" } });
    });
    let md = render(&proto);
    let text = tables(&md).into_iter().find(|t| t.heading == "`text`").expect("text's table");
    let paths: Vec<&str> = text.rows.iter().map(|r| r[0].as_str()).collect();
    assert!(paths.contains(&"`grid[][].k`"), "{paths:?}");
    // An object in place says what it takes besides its rows (a bare `object` read as closed).
    let ty = |path: &str| text.rows.iter().find(|r| r[0] == path).map(|r| r[1].clone()).unwrap_or_default();
    assert_eq!(ty("`pp`"), "object? (properties matching `^x`: integer)");
    assert_eq!(ty("`ap`"), "object? (other properties: integer)");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A type that holds others is spelled out once a table: a type with two properties of the next, level after level,
/// doubled the rows at every level (sixteen levels made 196,607 rows; thirty would not finish). The second time it
/// is a link; so is a map of itself, which overflowed the stack.
#[test]
fn a_type_reached_again_in_a_table_is_a_link_so_the_reference_stays_small() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-doubling-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&root().join("schema"), &dir);
    edit_json(&dir.join("events/text.schema.json"), |v| {
        let mut defs = serde_json::Map::new();
        for i in 0..30 {
            let next = match i {
                29 => serde_json::json!({ "type": "string" }),
                _ => serde_json::json!({ "$ref": format!("#/$defs/L{}", i + 1) }),
            };
            let prop = |d: &str| {
                let mut p = next.clone();
                p["description"] = d.into();
                p
            };
            defs.insert(
                format!("L{i}"),
                serde_json::json!({ "description": "A level.", "type": "object",
                    "properties": { "a": prop("A."), "b": prop("B.") } }),
            );
        }
        defs.insert(
            "rm".into(),
            serde_json::json!({ "description": "A map of itself.", "type": "object",
                "additionalProperties": { "$ref": "#/$defs/rm" } }),
        );
        v["$defs"] = Value::Object(defs);
        v["properties"]["deep"] = serde_json::json!({ "description": "Deep.", "$ref": "#/$defs/L0" });
        v["properties"]["rm"] = serde_json::json!({ "description": "Maps.", "$ref": "#/$defs/rm" });
    });
    let md = render(&dir);
    check_tables(&md).unwrap_or_else(|e| panic!("{e}"));
    links_resolve(&md);
    let text = tables(&md).into_iter().find(|t| t.heading == "`text`").expect("text's table");
    let rows: Vec<&str> = text.source.lines().filter(|l| l.starts_with("| `")).collect();
    // L0 is spelled out in rows; L1, reached twice, is a link.
    assert!(rows.contains(&"| `deep` | object? (other properties accepted) | Deep. |"), "{rows:#?}");
    assert!(rows.contains(&"| `deep.a` | [`L1`](#type-l1)? | A. |"), "{rows:#?}");
    assert!(rows.contains(&"| `deep.b` | [`L1`](#type-l1)? | B. |"), "{rows:#?}");
    assert!(rows.contains(&"| `rm` | [`Rm`](#type-rm)? | Maps. |"), "{rows:#?}");
    assert!(rows.len() < 10, "{rows:#?}");
    assert!(md.contains("\n| `a` | [`L2`](#type-l2)? | A. |\n"), "L1's section links L2");
    assert!(md.contains("\nmap of string to [`Rm`](#type-rm)\n"), "Rm's section says what it is");
    assert!(md.len() < 200_000, "{} bytes", md.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each constraint reads as the level it belongs to: an array's counts right after `array` (`array of string
/// (non-empty)` said the same of a non-empty array and of non-empty strings, and two levels of arrays read alike);
/// `prefixItems` by position, each only if present (`array of A, B` read as a pair); the items `unevaluatedItems`
/// speaks of, which `contains` accepts too; property names as strings; no `At least 0 properties` nor an unfinished
/// `When x is present, so must be`; `1 item`, not `1 items`. A plain package's example its type rejects says so (it
/// was printed as valid), and an event property only some senders may send says who in its row.
#[test]
fn constraints_read_as_the_level_they_belong_to() {
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "Levels": {
                "type": "object",
                "properties": {
                    "souter": { "type": "array", "minItems": 1, "items": { "type": "string" } },
                    "sinner": { "type": "array", "items": { "type": "string", "minLength": 1 } },
                    "outer": { "type": "array", "minItems": 2, "items": { "type": "array", "items": { "type": "integer" } } },
                    "inner": { "type": "array", "items": { "type": "array", "minItems": 2, "items": { "type": "integer" } } },
                    "one": { "type": "array", "maxItems": 1, "items": { "type": "string", "maxLength": 1 } },
                    "pair": { "type": "array", "prefixItems": [{ "type": "string" }, { "type": "integer" }], "items": false },
                    "full": { "type": "array", "minItems": 2, "prefixItems": [{ "type": "string" }, { "type": "integer" }] },
                    "rest": { "type": "array", "prefixItems": [{ "type": "string" }], "contains": { "type": "integer" }, "unevaluatedItems": false },
                    "names": { "type": "object", "propertyNames": { "maxLength": 3 }, "minProperties": 0, "dependentRequired": { "a": [] } },
                    "nonames": { "type": "object", "propertyNames": { "type": "integer" } },
                    "nested": { "type": "array", "prefixItems": [{ "type": "array", "prefixItems": [{ "type": "integer" }], "items": false }, { "type": "boolean" }], "items": false },
                    "three": { "type": "array", "minItems": 1, "prefixItems": [{ "type": "string" }, { "type": "integer" }, { "type": "boolean" }] },
                    "anyrest": { "type": "array", "anyOf": [{ "prefixItems": [{ "type": "string" }] }, { "items": { "type": "boolean" } }], "unevaluatedItems": { "type": "null" } }
                }
            },
            "Whole": {
                "type": "object", "properties": { "x": { "type": "integer" } },
                "allOf": [{ "properties": { "y": { "type": "string" } } }], "unevaluatedProperties": false
            },
            "Point": {
                "type": "object", "required": ["x"], "additionalProperties": false,
                "properties": { "x": { "type": "integer" } },
                "examples": [{ "x": 1 }, { "x": "one" }]
            },
            "Either": { "anyOf": [{ "$ref": "#/$defs/Point" }, { "type": "string" }] },
            "Solely": { "oneOf": [{ "$ref": "#/$defs/Point" }, { "type": "object" }] }
        }
    });
    let md = render_plain("docs-levels", &schema);
    check_tables(&md).unwrap_or_else(|e| panic!("{e}\n{md}"));
    let levels = tables(&md).into_iter().find(|t| t.heading == "`Levels`").expect("Levels' table");
    let ty = |path: &str| {
        levels.rows.iter().find(|r| r[0] == format!("`{path}`")).unwrap_or_else(|| panic!("no row {path}"))[1].clone()
    };
    assert_eq!(ty("souter"), "array? (non-empty) of string");
    assert_eq!(ty("sinner"), "array? of string (non-empty)");
    assert_eq!(ty("outer"), "array? (at least 2 items) of array of integer");
    assert_eq!(ty("inner"), "array? of array (at least 2 items) of integer");
    assert_eq!(ty("one"), "array? (at most 1 item) of string (at most 1 character)");
    assert_eq!(ty("pair"), "array? of: [1] string, [2] integer (each only if present), then no more items");
    assert_eq!(
        ty("three"),
        "array? (non-empty) of: [1] string, [2] integer, [3] boolean ([2], [3] only if present), then anything"
    );
    // A tuple inside a tuple is in parentheses (its `[2]` read as the inner one's).
    assert_eq!(
        ty("nested"),
        "array? of: [1] (array of: [1] integer (only if present), then no more items), [2] boolean \
         (each only if present), then no more items"
    );
    assert_eq!(ty("full"), "array? (at least 2 items) of: [1] string, [2] integer, then anything");
    assert_eq!(
        ty("rest"),
        "array? (some item matching integer) of: [1] string (only if present), then anything \
         (no items but those evaluated by a position, `items` or `contains` of the parts above the value passes)"
    );
    // A part the value fails evaluates nothing: `["a", 1, true]` breaks it at /2 though `items` accepts `true`.
    assert!(ty("anyrest").ends_with(
        "(items not evaluated by a position, `items` or `contains` of the parts above the value passes: null)"
    ));
    let at = md.find("\n### `LevelsNames`\n").expect("LevelsNames' section");
    let section = &md[at..md[at + 1..].find("\n### ").map_or(md.len(), |e| at + 1 + e)];
    assert!(section.contains("\n- Property names: string (at most 3 characters)\n"), "{section}");
    assert!(!section.contains("At least 0") && !section.contains("so must be"), "{section}");
    let at = md.find("\n### `LevelsNonames`\n").expect("LevelsNonames' section");
    assert!(
        md[at..].contains("\n- Property names: none (a name is a string, and no string is allowed"),
        "{}",
        &md[at..]
    );
    // A part of a composition says so: alone it reads "other properties are accepted", which the whole rejects.
    let at = md.find("\n### `WholePart0Object`\n").expect("the part's section");
    assert!(
        md[at..]
            .contains("\n- A part of the schema of [`Whole`](#type-whole): a value there is checked against the whole"),
        "{}",
        &md[at..]
    );
    // The second example of Point is not a Point, and says so; the first is.
    let at = md.find("\n### `Point`\n").expect("Point's section");
    let point = &md[at..];
    // An alternative of an `anyOf` is not told that the whole may reject what it accepts (helper 78); a member
    // of a `oneOf` is (a value may match two).
    assert!(
        point.contains("\n- An alternative in the schema of [`Either`](#type-either) (`anyOf`): a value this type"),
        "{point}"
    );
    assert!(!point.contains("A part of the schema of [`Either`]"), "{point}");
    assert!(
        point.contains("\n- A part of the schema of [`Solely`](#type-solely): a value there is checked"),
        "{point}"
    );
    assert_eq!(point.matches("Not valid against `Point`").count(), 1, "{point}");
    assert!(point.contains("`/x: expected an integer, got a string [type]`"), "{point}");
    // A protocol: `thinking` only from the agent, in its row.
    let md = render(&root().join("schema"));
    let text = tables(&md).into_iter().find(|t| t.heading == "`text`").expect("text's table");
    assert!(text.source.contains("\n| `thinking` | boolean? — agent only |"), "{}", text.source);
}

#[test]
fn a_unique_rule_with_filters_says_it_remembers_only_what_it_applies_to() {
    // Only the messages a filtered rule applies to are remembered; the reference said any accepted message
    // (helper 117). v2's `id.duplicate`, then given a `role`.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-unique-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&root().join("schema"), &dir);
    let plain = render(&dir);
    assert!(plain.contains("a message whose `/id` an accepted message already had"), "the unfiltered wording");
    edit_json(&dir.join("envelope.schema.json"), |v| {
        v["x-sequence"]["rules"][0]["role"] = "user".into();
    });
    let md = render(&dir);
    assert!(md.contains("a message whose `/id` an accepted message it applies to already had"), "the filtered wording");
    std::fs::remove_dir_all(&dir).unwrap();
}
