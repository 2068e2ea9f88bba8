//! What every generated crate carries besides its types: the [`Rule`] catalogue (taken from
//! [`crate::rules`]) and `Cargo.toml`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{doc_attrs, lit};
use crate::ir::{pascal_case, Model};
use crate::rules::Rule;

/// The `Rule` enum with `id`, `summary`, `from_id` and `Display`.
pub(crate) fn rule_tokens() -> TokenStream {
    let path = |r: &Rule| {
        let v = format_ident!("{}", pascal_case(r.id()));
        quote!(Rule::#v)
    };
    let variants = Rule::ALL.iter().map(|r| {
        let v = format_ident!("{}", pascal_case(r.id()));
        let docs = doc_attrs(&format!("`{}`: {}", r.id(), r.summary()));
        quote!(#docs #v)
    });
    let all = Rule::ALL.iter().map(path);
    let ids = Rule::ALL.iter().map(|r| {
        let (p, id) = (path(r), lit(r.id()));
        quote!(#p => #id)
    });
    let summaries = Rule::ALL.iter().map(|r| {
        let (p, s) = (path(r), lit(r.summary()));
        quote!(#p => #s)
    });
    quote! {
        /// The rule a value broke: the same stable ids `wiregen validate` reports.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule {
            #(#variants,)*
        }

        impl Rule {
            /// Every rule, in catalogue order.
            pub const ALL: &'static [Rule] = &[#(#all),*];

            /// The stable id (`"required"`, `"role-event"`, ...).
            pub fn id(self) -> &'static str {
                match self {
                    #(#ids,)*
                }
            }

            /// One sentence on what the rule means.
            pub fn summary(self) -> &'static str {
                match self {
                    #(#summaries,)*
                }
            }

            /// The rule with this id.
            pub fn from_id(id: &str) -> ::std::option::Option<Rule> {
                Rule::ALL.iter().copied().find(|r| r.id() == id)
            }
        }

        impl ::std::fmt::Display for Rule {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.id())
            }
        }
    }
}

/// The dependencies of generated code, as `Cargo.toml` lines: `serde` (no derive: every impl is generated),
/// `serde_json` with `float_roundtrip` (numbers are the correctly rounded doubles the engine compares), and
/// `regex` with the engine's own features when the schema has patterns.
pub(crate) fn dependencies(patterns: bool) -> String {
    // `preserve_order`: a `serde_json::Map` payload (an open object's value, `args`) and the stream rollup keep
    // their keys in input and declaration order; without it, in a build that does not turn it on elsewhere, they
    // came out sorted.
    let mut out = String::from(
        "serde = \"1\"\nserde_json = { version = \"1\", features = [\"float_roundtrip\", \"preserve_order\"] }\n",
    );
    if patterns {
        out.push_str(
            "regex = { version = \"1\", default-features = false, features = [\"std\", \"perf\", \"unicode-perl\", \"unicode-gencat\"] }\n",
        );
    }
    out
}

/// The crate's `Cargo.toml`.
pub(crate) fn cargo_toml(m: &Model, patterns: bool, generated_by: &str) -> String {
    let description = format!("Types for {}, generated from its JSON Schema", m.title).replace(['"', '\\'], "'");
    format!(
        r#"# {generated_by}
[package]
name = "{name}"
version = "{version}"
description = "{description}"
edition = "2021"
license = "{license}"
rust-version = "1.85"
publish = false

[dependencies]
{deps}schemars = {{ version = "1", optional = true, default-features = false, features = ["std"] }}

[features]
schemars = ["dep:schemars"]
"#,
        name = m.package.crate_name,
        version = m.package.version,
        license = m.package.license,
        deps = dependencies(patterns),
    )
}
