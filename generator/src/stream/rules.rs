//! Sequence rule text: message templates and rule ids.
//!
//! The rules themselves are the protocol's declarations (`x-sequence` on the envelope, lowered into
//! [`crate::ir::sequence::Sequence`]); every checker takes each rule's id, pointer and message template from
//! there. Messages are templates: `{name}` is replaced by the parameter `name` in one pass over the template, so a
//! value holding braces is printed as it is. Which parameters a rule fills depends on its kind (the loader refuses a
//! template naming any other).

/// The rule id as a `&'static str` (what [`crate::engine::Issue::rule`] holds): each distinct id is stored once per
/// process, so loading a schema again (or many schemas with the same ids) adds nothing.
pub(crate) fn intern(id: &str) -> &'static str {
    use std::collections::BTreeSet;
    use std::sync::{Mutex, OnceLock};
    static IDS: OnceLock<Mutex<BTreeSet<&'static str>>> = OnceLock::new();
    let mut ids = IDS.get_or_init(|| Mutex::new(BTreeSet::new())).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = ids.get(id) {
        return s;
    }
    let s: &'static str = Box::leak(id.to_string().into_boxed_str());
    ids.insert(s);
    s
}

/// The `{name}` placeholders of a template, in order of appearance, without repeats.
pub(crate) fn placeholders(template: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if is_param(&after[..close]) => {
                let name = &after[..close];
                if !out.contains(&name) {
                    out.push(name);
                }
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    out
}

/// A `{name` in a template that no `}` follows anywhere after it: a placeholder left unclosed, which every checker
/// would print as it is (a `{` before other text that a `}` closes later, `{like this}`, is text).
pub(crate) fn unclosed_placeholder(template: &str) -> Option<&str> {
    let open = template.rfind('{')?;
    let after = &template[open + 1..];
    let name = &after[..after.find(|c: char| !is_placeholder_char(c)).unwrap_or(after.len())];
    (!name.is_empty() && !after.contains('}')).then(|| &template[open..open + 1 + name.len()])
}

fn is_param(s: &str) -> bool {
    !s.is_empty() && s.chars().all(is_placeholder_char)
}

use super::machine::is_placeholder_char;

#[cfg(test)]
use super::machine::format_message;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_in_one_pass() {
        assert_eq!(placeholders("a {x} b {y} {x} {not a param} {}"), vec!["x", "y"]);
        assert_eq!(format_message("call `{call}` {x}", &[("call", "{call}")]), "call `{call}` {x}");
        assert_eq!(format_message("{a}{b}", &[("a", "1"), ("b", "2")]), "12");
        assert_eq!(format_message("{", &[]), "{");
        // A name may hold `_`, `-` and `$`, as property names do (helper 134: `{run_id}` was text, never filled).
        assert_eq!(placeholders("{run_id} {tool-call} {$ref} {a.b}"), vec!["run_id", "tool-call", "$ref"]);
        assert_eq!(format_message("`{run_id}` `{tool-call}`", &[("run_id", "r"), ("tool-call", "c")]), "`r` `c`");
        assert_eq!(unclosed_placeholder("no open `{run_id"), Some("{run_id"));
    }

    #[test]
    fn an_unclosed_placeholder_is_found() {
        assert_eq!(unclosed_placeholder("no outstanding request `{rid`"), Some("{rid"));
        assert_eq!(unclosed_placeholder("{open} then {rid"), Some("{rid"));
        assert_eq!(unclosed_placeholder("a {like this} b"), None);
        assert_eq!(unclosed_placeholder("{rid was {open}"), None);
        assert_eq!(unclosed_placeholder("a { b"), None);
        assert_eq!(unclosed_placeholder("{x}"), None);
    }

    #[test]
    fn ids_are_interned_once() {
        let a = intern(&String::from("x.interned"));
        let b = intern("x.interned");
        assert!(std::ptr::eq(a, b));
    }
}
