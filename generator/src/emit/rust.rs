//! The Rust output: a crate (`generated/rust/`, named by the schema's `x-package`) or one module
//! (`wiregen types --lang rust FILE`), emitted from the model with `quote!` and formatted with `prettyplease`.
//!
//! Why not typify: the source schema uses `if`/`then` (role rules) and `$ref`s across files, on which typify
//! panics, and typify turns a `$ref`'d `oneOf` into an untagged enum; the model already has the unions, their
//! discriminators and the role rules as data, so the types come straight from it (see the README).
//!
//! What the output holds:
//! - one Rust type per model type ([`types`]): a struct per object, an enum per union (each variant carries the
//!   member's struct, which writes its own discriminator), an enum per string enum, a type alias per alias,
//!   and a newtype for everything else (scalars, arrays, nullable values, combinators);
//! - a `Deserialize` per type built on a generated `decode` over an order-preserving JSON tree, in the engine's
//!   order of checks, so every type parses exactly the values the reference engine accepts and refuses the
//!   others with the engine's first error (rule id from [`crate::rules`] and JSON Pointer); `Serialize` writes
//!   the declared properties in schema order (constants included), then the kept unknown ones in input order;
//! - the runtime those decoders are built from: `rt.rs` (and `rt_regex.rs` when the schema has patterns),
//!   real files of this directory that the generator's own tests compile and test, copied verbatim;
//! - with a protocol layer ([`protocol`]): the envelope with private fields and getters, its checked
//!   constructors (`x-auto` defaults), `parse_envelope`, the role rules printed from
//!   [`crate::ir::Protocol::role_rules`], and an example program ([`example`]);
//! - `JsonSchema` impls behind the `schemars` feature ([`schemars`]): each type's exact schema.

mod example;
mod protocol;
mod schemars;
mod support;
mod types;
mod upgrade;

#[cfg(test)]
mod rt;
#[cfg(test)]
mod rt_regex;
#[cfg(test)]
mod rt_tests;
#[cfg(test)]
use crate::rules::Rule;

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::{EmitError, EmitOptions, OutFile};
use crate::ir::{pascal_case, Model};
use types::Gen;

/// The generated library's path inside the output directory.
pub(crate) const LIB: &str = "src/lib.rs";

/// The runtime every generated crate and module carries (`mod rt`).
const RT: &str = include_str!("rust/rt.rs");
/// The sequence-rule interpreter, shared with [`crate::stream`].
const STREAM_MACHINE: &str = include_str!("../stream/machine.rs");
/// The generated crate's stream checker around it.
const STREAM: &str = include_str!("rust/stream.rs");

/// The pattern runtime (`mod rt_regex`), only where the schema has patterns.
const RT_REGEX: &str = include_str!("rust/rt_regex.rs");

/// Where the generated code finds its runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runtime {
    /// A crate: `mod rt;` beside `src/lib.rs`.
    CrateFiles,
    /// One self-contained module: the runtime inlined as `mod rt { ... }`.
    Inline,
    /// A module among many of one crate: `use super::{rt, rt_regex}` (see [`shared_runtime`]).
    Shared,
}

/// What to emit beside the types.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opts {
    pub(crate) runtime: Runtime,
    /// `JsonSchema` impls behind the `schemars` feature.
    pub(crate) schemars: bool,
}

/// Emits `Cargo.toml`, `src/lib.rs`, `src/rt.rs` (and `src/rt_regex.rs` when the schema has patterns), and
/// `examples/<crate>.rs` when the schema has a protocol layer (named after the crate: two generated crates in one
/// workspace would otherwise build examples of the same name, which cargo warns is an output filename collision).
///
/// # Errors
/// When the model holds something this output cannot express (located), or a name is reserved.
pub(crate) fn emit_model(m: &Model, emit: &EmitOptions) -> Result<Vec<OutFile>, EmitError> {
    let opts = Opts { runtime: Runtime::CrateFiles, schemars: true };
    let mut g = Gen::new(m, opts)?;
    let header = format!("// {}\n", emit.generated_by());
    let docs = inner_doc_attrs(&crate_docs(&g)?);
    // Allowed: lints of generated code's shape (a tuple's positions read by closures called in place, a choice's
    // alternatives of different sizes, a 12-position tuple's type) and of descriptions, which are the schema
    // authors' markdown, not rustdoc (`[Foo]`, a bare address or `<T>` in one is text). Each attribute is short
    // enough that prettyplease and rustfmt both keep it on one line (`cargo fmt --check` passes on the crate).
    // `collapsible_if`: included from OUT_DIR into an edition-2024 crate whose rust-version has let chains, nested
    // `if let`s are "collapsible", but the code must build under edition 2021 too (the build-step example is such
    // a crate, so the workspace's clippy gate holds the generated code to both).
    let head = quote! {
        #docs
        #![deny(missing_docs)]
        #![forbid(unsafe_code)]
        #![allow(clippy::redundant_closure_call, clippy::large_enum_variant)]
        #![allow(clippy::type_complexity, clippy::collapsible_if, clippy::let_unit_value)]
        #![allow(rustdoc::broken_intra_doc_links, rustdoc::bare_urls)]
        #![allow(rustdoc::invalid_html_tags)]
    };
    let lib = render_parts(head, Layout::RustfmtSkip, |part| g.items(part))?;
    let mut files = vec![
        OutFile::new("Cargo.toml", support::cargo_toml(m, g.has_patterns(), &emit.generated_by())),
        OutFile::new(LIB, format!("{header}{lib}")),
        OutFile::new("src/rt.rs", format!("{header}{RT}")),
    ];
    if g.has_patterns() {
        files.push(OutFile::new("src/rt_regex.rs", format!("{header}{RT_REGEX}")));
    }
    if let Some(plan) = crate::upgrade::Plan::of(m).filter(|p| !p.is_empty()) {
        let items = upgrade::items(&plan)?;
        files.push(OutFile::new(
            "src/upgrade.rs",
            format!(
                "{header}{}
{items}",
                upgrade::RT_UPGRADE
            ),
        ));
    }
    if let Some(p) = &m.protocol {
        let example = example::source(&g, p, Layout::RustfmtSkip)?;
        files.push(OutFile::new(format!("examples/{}.rs", m.package.crate_name), format!("{header}{example}")));
        // The stream checker: wiregen's own interpreter, verbatim, and the protocol's declarations it reads.
        files.push(OutFile::new("src/stream_machine.rs", format!("{header}{STREAM_MACHINE}")));
        let lib_name = m.package.crate_name.replace('-', "_");
        let declarations = crate::stream::declarations(m, p).to_string();
        let glue = STREAM.replace("session_wire::", &format!("{lib_name}::"));
        files.push(OutFile::new(
            "src/stream.rs",
            format!(
                "{header}{glue}\n/// The protocol's sequence declarations (`x-sequence`, as wiregen lowered them), read by \
                 [`StreamChecker::new`].\nconst DECLARATIONS: &str = {declarations:?};\n"
            ),
        ));
    }
    Ok(files)
}

/// The Rust module of `wiregen types --lang rust`: the types and their runtime in one file (a single schema
/// file's root type is `Root`).
///
/// # Errors
/// When the model holds something this output cannot express (located).
pub(crate) fn module(m: &Model) -> Result<String, EmitError> {
    module_with(m, Runtime::Inline)
}

/// The same module for a crate holding many of them: it uses the crate's `rt` and `rt_regex` modules
/// ([`shared_runtime`]) instead of carrying its own.
///
/// # Errors
/// As [`module`].
pub(crate) fn module_shared(m: &Model) -> Result<String, EmitError> {
    module_with(m, Runtime::Shared)
}

fn module_with(m: &Model, runtime: Runtime) -> Result<String, EmitError> {
    let opts = Opts { runtime, schemars: false };
    let mut g = Gen::new(m, opts)?;
    // The title as doc text (a carriage return or a bidirectional override in it did not compile), in a code
    // span that survives its backticks.
    let title = if m.title.is_empty() {
        "the schema".to_string()
    } else {
        crate::diag::code_span(&doc_lines(&m.title).join(" "))
    };
    let docs = inner_doc_attrs(&[
        format!("Types for {title}, generated by wiregen (`wiregen types --lang rust`)."),
        String::new(),
        "Every type's `Deserialize` accepts exactly the values the schema accepts; a refusal names the rule it \
         broke and where (`from_value` returns it as an `Error`)."
            .to_string(),
    ]);
    let text = render_parts(docs, Layout::Plain, |part| g.items(part))?;
    let mut out =
        format!("// @generated by `wiregen types --lang rust`. Do not edit: change the schema and regenerate.\n{text}");
    if runtime == Runtime::Inline {
        out.push_str(&format!("\n/// The runtime of the types above.\n#[allow(dead_code)]\nmod rt {{\n{RT}}}\n"));
        if g.has_patterns() {
            out.push_str(&format!("\n/// The patterns of the types above.\nmod rt_regex {{\n{RT_REGEX}}}\n"));
        }
    }
    Ok(out)
}

/// The runtime of a crate of [`module_shared`] modules, for the top of its `lib.rs`: the `Rule` catalogue and
/// the `rt` and `rt_regex` modules (the crate depends on `serde`, `serde_json` and `regex`).
pub(crate) fn shared_runtime() -> Result<String, EmitError> {
    let rule = support::rule_tokens();
    let text = render(quote!(#rule), Layout::Plain)?;
    Ok(format!(
        "{text}\n/// The runtime of the modules.\n#[allow(dead_code)]\npub(crate) mod rt {{\n{RT}}}\n\n/// The patterns of the modules.\npub(crate) mod rt_regex {{\n{RT_REGEX}}}\n"
    ))
}

/// The `[dependencies]` lines of generated Rust.
pub(crate) fn dependencies(patterns: bool) -> String {
    support::dependencies(patterns)
}

/// How rendered source meets `rustfmt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Every top-level item carries `#[rustfmt::skip]`: the generated crate is a workspace member, and `cargo fmt
    /// --all` must leave prettyplease's layout byte for byte as it is (the inner `#![rustfmt::skip]` is unstable).
    RustfmtSkip,
    /// prettyplease's layout alone (the crate docs' example, which rustfmt does not format, and modules).
    Plain,
}

fn render(tokens: TokenStream, layout: Layout) -> Result<String, EmitError> {
    let mut file: syn::File = syn::parse2(tokens)?;
    if layout == Layout::RustfmtSkip {
        for item in &mut file.items {
            let skip = syn::parse::Parser::parse2(syn::Attribute::parse_outer, quote!(#[rustfmt::skip]))?;
            skip_item(item, skip);
        }
    }
    Ok(prettyplease::unparse(&file))
}

/// Renders a file of `head` (inner attributes) and the items `parts` hands over, a part at a time, as [`render`]
/// would render them all at once (prettyplease lays out each top-level item on its own), so only one part is
/// held and parsed at a time.
fn render_parts(
    head: TokenStream,
    layout: Layout,
    parts: impl FnOnce(&mut dyn FnMut(TokenStream) -> Result<(), EmitError>) -> Result<(), EmitError>,
) -> Result<String, EmitError> {
    let mut out = String::new();
    let mut head = Some(head);
    parts(&mut |part| {
        let tokens = match head.take() {
            Some(h) => quote!(#h #part),
            None => part,
        };
        out.push_str(&render(tokens, layout)?);
        Ok(())
    })?;
    Ok(out)
}

/// Appends `skip` (`#[rustfmt::skip]`) to the outer attributes of a top-level item.
fn skip_item(item: &mut syn::Item, skip: Vec<syn::Attribute>) {
    use syn::Item;
    let attrs = match item {
        Item::Const(i) => &mut i.attrs,
        Item::Enum(i) => &mut i.attrs,
        Item::ExternCrate(i) => &mut i.attrs,
        Item::Fn(i) => &mut i.attrs,
        Item::ForeignMod(i) => &mut i.attrs,
        Item::Impl(i) => &mut i.attrs,
        Item::Macro(i) => &mut i.attrs,
        Item::Mod(i) => &mut i.attrs,
        Item::Static(i) => &mut i.attrs,
        Item::Struct(i) => &mut i.attrs,
        Item::Trait(i) => &mut i.attrs,
        Item::TraitAlias(i) => &mut i.attrs,
        Item::Type(i) => &mut i.attrs,
        Item::Union(i) => &mut i.attrs,
        Item::Use(i) => &mut i.attrs,
        Item::Verbatim(ts) => {
            *ts = quote!(#(#skip)* #ts);
            return;
        }
        _ => return,
    };
    attrs.extend(skip);
}

/// An identifier for a name that should already be one; a keyword gets a trailing `_` (`Self` -> `Self_`), and so
/// does `gen`, a keyword from edition 2024 on (the generated crate is 2021, but `wiregen types` output may be
/// included in a crate of any edition).
pub(crate) fn ident(s: &str) -> Ident {
    syn::parse_str::<Ident>(s)
        .ok()
        .filter(|_| s != "gen")
        .or_else(|| syn::parse_str::<Ident>(&format!("{s}_")).ok())
        .unwrap_or_else(|| format_ident!("Unnamed"))
}

/// The Rust field name of a JSON property: snake case, other characters as `_`, a leading digit or an empty
/// name prefixed, a keyword suffixed with `_` (`ref` -> `ref_`). Not unique by itself: see [`Names::unique`].
pub(crate) fn field_name(name: &str) -> String {
    let snake = crate::ir::snake_case(name);
    let s: String = snake.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    // One underscore between words and none at the ends: `a__b`, `_id` and `ünï` (`_n_`) gave names rustc warns
    // of (`a__b`, `with__id`); they are `a_b`, `id` and `n`.
    let mut s = s.to_ascii_lowercase().split('_').filter(|w| !w.is_empty()).collect::<Vec<_>>().join("_");
    if s.is_empty() {
        s = "field".to_string();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'n');
    }
    ident(&s).to_string()
}

/// The Rust variant name of an enum value (`allow-once` -> `AllowOnce`); not unique by itself: see [`Names::unique`].
pub(crate) fn variant_name(value: &str) -> String {
    let mut s = pascal_case(value);
    if s.is_empty() {
        s = "Empty".to_string();
    }
    if s == "ALL" || s == "TAGS" {
        s.push('_');
    }
    ident(&s).to_string()
}

/// Names given out in one scope (an object's fields, an enum's variants), each once.
#[derive(Default)]
pub(crate) struct Names {
    taken: std::collections::HashSet<String>,
    /// Per base, the least suffix not yet tried: every lower one was taken when tried, and names stay taken.
    next: std::collections::HashMap<String, usize>,
}

impl Names {
    /// A scope where `reserved` are taken already.
    pub(crate) fn reserving<'a>(reserved: impl IntoIterator<Item = &'a str>) -> Names {
        Names { taken: reserved.into_iter().map(String::from).collect(), next: Default::default() }
    }

    /// `base`, or `base2`, `base3`, ... : the first not taken, which then is. n names of one base cost n steps
    /// in all, not n² (an `anyOf` of 20,000 constants names 20,000 `Integer` variants).
    pub(crate) fn unique(&mut self, base: String) -> Ident {
        let mut name = base.clone();
        // A number follows the name's last letter or digit: `Self_` (`Self` is reserved) again is `Self2`, not
        // `Self_2`, which is no camel case.
        let base = base.trim_end_matches('_').to_string();
        if self.taken.contains(&name) {
            let n = self.next.entry(base.clone()).or_insert(2);
            name = format!("{base}{n}");
            while self.taken.contains(&name) {
                *n += 1;
                name = format!("{base}{n}");
            }
            *n += 1;
        }
        let id = ident(&name);
        self.taken.insert(name);
        id
    }
}

/// A string literal.
pub(crate) fn lit(s: &str) -> Literal {
    Literal::string(s)
}

/// The lines of a doc text, made safe for `///` comments: split on every line break (`\n`, `\r`, U+2028,
/// U+2029), control and bidirectional-override characters written as `\u{..}`, leading whitespace dropped and a
/// leading code fence escaped (so no schema text becomes a doctest).
pub(crate) fn doc_lines(text: &str) -> Vec<String> {
    let norm = text.replace("\r\n", "\n").replace(['\r', '\u{2028}', '\u{2029}'], "\n");
    norm.trim_end()
        .split('\n')
        .map(|line| {
            let mut out = String::new();
            for c in line.trim_start().chars() {
                let bidi = matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}');
                if (c.is_control() && c != '\t') || bidi {
                    out.push_str(&format!("\\u{{{:04X}}}", c as u32));
                } else {
                    out.push(c);
                }
            }
            // A fence after a blockquote's `>` or a list item's marker opens a code block too (a doctest).
            let at = out.find(|c: char| !matches!(c, '>' | ' ' | '\t' | '-' | '*' | '+' | '.' | ')' | '0'..='9'));
            if let Some(at) = at.filter(|&i| out[i..].starts_with("```") || out[i..].starts_with("~~~")) {
                out.insert(at, '\\');
            }
            out.trim_end().to_string()
        })
        .collect()
}

/// Outer doc attributes (`#[doc = " line"]`) for a text.
pub(crate) fn doc_attrs(text: &str) -> TokenStream {
    let lines = doc_lines(text).into_iter().map(|l| lit(&if l.is_empty() { l } else { format!(" {l}") }));
    quote!(#(#[doc = #lines])*)
}

/// Outer doc attributes for a fenced code block of `lang` (never `rust`, so rustdoc does not run it); each line
/// is sanitized like [`doc_lines`] but keeps its leading whitespace and cannot close the fence.
pub(crate) fn doc_code_block(lang: &str, code: &str) -> TokenStream {
    let mut lines = vec![String::new(), format!("```{lang}")];
    for l in code.replace(['\r', '\u{2028}', '\u{2029}'], "\n").lines() {
        let indent = &l[..l.len() - l.trim_start().len()];
        // A line starting with a fence comes back as `\```...`, which cannot close the block.
        lines.push(format!("{indent}{}", doc_lines(l).concat()));
    }
    lines.push("```".to_string());
    let lines = lines.into_iter().map(|l| lit(&if l.is_empty() { l } else { format!(" {l}") }));
    quote!(#(#[doc = #lines])*)
}

fn inner_doc_attrs(lines: &[String]) -> TokenStream {
    let lines = lines.iter().map(|l| lit(&if l.is_empty() { String::new() } else { format!(" {l}") }));
    quote!(#(#![doc = #lines])*)
}

fn crate_docs(g: &Gen<'_>) -> Result<Vec<String>, EmitError> {
    let m = g.m;
    let krate = &m.package.crate_name;
    let mut lines = vec![format!("# {krate}"), String::new()];
    let about = match (m.title.is_empty(), m.description.is_empty()) {
        (false, false) => format!("{}: {}", m.title, m.description),
        (false, true) => m.title.clone(),
        (true, false) => m.description.clone(),
        (true, true) => "Types generated from a JSON Schema package.".to_string(),
    };
    lines.extend(doc_lines(&about));
    lines.extend([
        String::new(),
        "Generated by wiregen from the schema; every type here comes from the schema, so it cannot drift.".to_string(),
        String::new(),
    ]);
    if let Some(p) = &m.protocol {
        let env = g.type_ident(p.envelope);
        let event = g.type_ident(p.union);
        let disc = p.discriminator(m);
        lines.extend([
            format!(
                "- [`parse_envelope`] reads one line of a stream into an [`{env}`], or says which rule it broke and where."
            ),
            format!("- [`{event}`] has one variant per event type, tagged on `{disc}` on the wire."),
            format!("- [`{env}::new`] / [`create_envelope`] build a message, filling in what the schema fills in."),
            String::new(),
        ]);
    }
    lines.extend([
        "The types follow the schema exactly: `Deserialize` accepts a value only when the schema does (closed \
         objects refuse unknown properties, open ones keep them in an [`Extra`] map, `null` is never an absent \
         optional property, a JSON array is never an object, integers are whole numbers, `1.0` and `1e3` \
         included, within their bounds), and `Serialize` writes declared properties in schema order, constants \
         included, then the kept unknown ones in input order. Parts of a schema that are not a Rust type \
         (`allOf`, `not`, a non-discriminated `anyOf`, ...) are a `serde_json::Value` that was checked."
            .to_string(),
        String::new(),
        "# Errors".to_string(),
        String::new(),
        "Every failure is an [`Error`] with a [`Rule`] (the same stable ids as `wiregen validate`: `required`, \
         `type`, ...) and a JSON Pointer to the offending value, from each type's `from_value`; \
         `serde_json::from_str` gives the same verdict, with the error in its message."
            .to_string(),
    ]);
    if let Some(p) = &m.protocol {
        lines.extend([String::new(), "# Example".to_string(), String::new(), "```".to_string()]);
        let code = example::source(g, p, Layout::Plain)?;
        lines.extend(code.lines().map(str::to_string));
        lines.push("```".to_string());
    }
    lines.extend([
        String::new(),
        "# Features".to_string(),
        String::new(),
        "`schemars`: `JsonSchema` for every type, the exact schema of the type (the role rules of an envelope \
         as `if`/`then`)."
            .to_string(),
    ]);
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crate_asks_for_the_serde_json_features_it_relies_on() {
        // A consumer's build decides serde_json's features for every crate in it (this workspace turns both on,
        // so its own tests cannot see a missing one): the generated crate must ask for them itself.
        let deps = dependencies(false);
        let serde_json = deps.lines().find(|l| l.starts_with("serde_json")).expect("serde_json");
        for feature in ["float_roundtrip", "preserve_order"] {
            assert!(serde_json.contains(&format!("\"{feature}\"")), "{serde_json}");
        }
    }

    #[test]
    fn doc_lines_cannot_break_out() {
        let lines = doc_lines("a */ b `c`\u{2028}d\re\u{202E}f\n    indented\n```rust\nx");
        assert_eq!(lines, vec!["a */ b `c`", "d", "e\\u{202E}f", "indented", "\\```rust", "x"]);
        // A fence in a blockquote or a list item opened a code block, and so a doctest, as well.
        let quoted = doc_lines("Example:\n\n> ```\n> not rust\n> ```\n- ~~~\n1. ```x");
        assert_eq!(quoted, vec!["Example:", "", "> \\```", "> not rust", "> \\```", "- \\~~~", "1. \\```x"]);
    }

    #[test]
    fn names_are_identifiers() {
        assert_eq!(field_name("ref"), "ref_");
        assert_eq!(field_name("toolName"), "tool_name");
        assert_eq!(field_name(""), "field");
        assert_eq!(field_name("1st"), "n1st");
        assert_eq!(field_name("a b\"c"), "a_b_c");
        assert_eq!(field_name("self"), "self_");
        assert_eq!(field_name("gen"), "gen_");
        assert_eq!(variant_name("self"), "Self_");
        assert_eq!(variant_name(""), "Empty");
        assert_eq!(variant_name("ALL"), "ALL_");
        let mut names = Names::reserving(["a3"]);
        assert_eq!(names.unique("a".into()), "a");
        assert_eq!(names.unique("a".into()), "a2");
        assert_eq!(names.unique("a".into()), "a4");
        assert_eq!(names.unique("a2".into()), "a22");
        assert_eq!(names.unique("a".into()), "a5");
        // Names rustc does not warn of: one `_` between words, none at the ends, a number after the last letter.
        assert_eq!(field_name("_x"), "x");
        assert_eq!(field_name("a__b"), "a_b");
        assert_eq!(field_name("__"), "field");
        assert_eq!(field_name("\u{fc}n\u{ef}"), "n");
        assert_eq!(field_name("-"), "field");
        // Acronyms are words (it gave `h_t_t_p_server`).
        assert_eq!(field_name("HTTPServer"), "http_server");
        assert_eq!(field_name("userID"), "user_id");
        assert_eq!(field_name("ID"), "id");
        assert_eq!(field_name("getHTTPResponseCode"), "get_http_response_code");
        assert_eq!(field_name("version2Name"), "version2_name");
        assert_eq!(field_name("codexItemId"), "codex_item_id");
        let mut names = Names::default();
        assert_eq!(names.unique(variant_name("Self")), "Self_");
        assert_eq!(names.unique(variant_name("self")), "Self2");
        let mut names = Names::default();
        assert_eq!(names.unique(field_name("-")), "field");
        assert_eq!(names.unique(field_name("$")), "field2");
    }

    #[test]
    fn no_doc_link_holds_template_text() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
        for dir in ["schema", "examples/happy-wire/schema"] {
            let m = crate::load::load(&root.join(dir)).expect("the schema loads");
            for f in emit_model(&m, &EmitOptions::default()).expect("emits") {
                let leftover = f
                    .contents
                    .match_indices("[`#")
                    .any(|(i, _)| f.contents[i + 3..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'));
                assert!(!leftover, "{dir}: {} has `#ident` inside a doc link", f.path);
            }
        }
    }

    #[test]
    fn hostile_descriptions_stay_inside_doc_comments() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
        let mut m = crate::load::load(&root.join("schema")).expect("schema/ loads");
        let hostile = "ends */ here `tick\u{2028}next\rcr \u{202E}rtl \"quote\" {brace}\n```\nfn x() {}\n```";
        let text = m.type_named("Text").expect("a Text event");
        m.types[text.0].description = Some(hostile.into());
        if let crate::ir::Shape::Object(o) = &mut m.types[text.0].node.shape {
            o.fields[1].description = Some(hostile.into());
        }
        let files = emit_model(&m, &EmitOptions::default()).expect("emits");
        let lib = &files.iter().find(|f| f.path == LIB).expect("lib.rs").contents;
        assert!(syn::parse_file(lib).is_ok());
        assert!(!lib.contains(['\r', '\u{2028}', '\u{202E}']), "raw line breaks or bidi characters in the output");
        assert!(lib.contains("/// \\```") && lib.contains("/// ends */ here `tick"));
    }
}
