//! The patterns of the generated types (only in a crate whose schema has patterns): each is compiled once, on
//! first use, with the same `regex` crate and features as the reference engine.

use std::sync::OnceLock;

use super::rt::Matcher;

/// A schema pattern: its ECMA-262 source (for messages) and the same expression in Rust's syntax.
pub(crate) struct Pattern {
    source: &'static str,
    rust: &'static str,
    re: OnceLock<Option<regex::Regex>>,
}

impl Pattern {
    pub(crate) const fn new(source: &'static str, rust: &'static str) -> Self {
        Pattern { source, rust, re: OnceLock::new() }
    }
}

impl Matcher for Pattern {
    fn source(&self) -> &str {
        self.source
    }

    /// The generator compiled every pattern already; one that did not compile would match nothing.
    fn is_match(&self, s: &str) -> bool {
        self.re.get_or_init(|| regex::Regex::new(self.rust).ok()).as_ref().is_some_and(|re| re.is_match(s))
    }
}
