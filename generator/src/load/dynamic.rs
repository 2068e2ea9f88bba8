//! `$dynamicRef` and `$dynamicAnchor`, resolved while the types are built.
//!
//! A `$dynamicRef` first resolves like a `$ref`. When the reference's fragment names a `$dynamicAnchor` and that is
//! where it leads, it goes instead to the `$dynamicAnchor` of that name in the *outermost* schema resource of the
//! dynamic scope: the resources entered on the way from where evaluation started to the reference (a subschema
//! with `$id` is entered when it applies, a `$ref` or `$dynamicRef` enters the resource of its target). Otherwise it
//! is a `$ref`.
//!
//! The model has no dynamic references: a type is built once per dynamic scope it is reached in ([`Dynamic`]
//! keeps each scope as the anchors it binds, interned), and every reference in it is then an ordinary
//! [`crate::ir::Shape::Ref`]. A scope only binds the anchor names some `$dynamicRef` can look up, so a package
//! without them builds each type once, as before.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::Origin;

/// A dynamic scope, as what it binds: anchor name -> where the outermost resource declares it.
type Scope = BTreeMap<String, Origin>;

/// How many types a package may build in dynamic scopes besides the first one at each place: the scopes of `n`
/// resources that each bind another name can number `2^n`, so a hostile schema is refused, not built.
pub(crate) const MAX_SCOPED_TYPES: usize = 4096;

/// The dynamic anchors and references of a load, and the dynamic scopes met so far.
#[derive(Debug, Default)]
pub(crate) struct Dynamic {
    /// Base URI of a schema resource -> its `$dynamicAnchor`s (name, location), in document order.
    anchors: BTreeMap<String, Vec<(String, Origin)>>,
    /// Each schema holding a `$dynamicRef` -> where it leads as a `$ref`, and the anchor it looks up (when dynamic).
    refs: BTreeMap<Origin, (Origin, Option<String>)>,
    /// The anchor names some `$dynamicRef` looks up.
    names: BTreeSet<String>,
    /// Interned scopes: anchor name -> the location of the outermost resource's `$dynamicAnchor`. Scope 0 is empty.
    scopes: Vec<Scope>,
    /// Each scope's index in `scopes`.
    index: BTreeMap<Scope, usize>,
    /// The scope the node being built is in.
    pub(crate) current: usize,
}

impl Dynamic {
    /// Records a `$dynamicAnchor` of the resource with base URI `base`.
    pub(crate) fn anchor(&mut self, base: &str, name: &str, at: &Origin) {
        self.anchors.entry(base.to_string()).or_default().push((name.to_string(), at.clone()));
    }

    /// Records a `$dynamicRef` at `at`, which leads to `target` as a `$ref`; `anchor` when it is dynamic.
    pub(crate) fn reference(&mut self, at: &Origin, target: Origin, anchor: Option<String>) {
        if let Some(a) = &anchor {
            self.names.insert(a.clone());
        }
        self.refs.insert(at.clone(), (target, anchor));
    }

    /// Where a `$dynamicRef` may lead: its `$ref` target and every `$dynamicAnchor` it can look up (each is a
    /// named location, so that it can be a type).
    pub(crate) fn targets(&self) -> impl Iterator<Item = &Origin> {
        let anchors = self.anchors.values().flatten().filter(|(n, _)| self.names.contains(n)).map(|(_, at)| at);
        self.refs.values().map(|(t, _)| t).chain(anchors)
    }

    /// Whether some `$dynamicRef` looks up an anchor (else every scope is scope 0).
    pub(crate) fn active(&self) -> bool {
        !self.names.is_empty()
    }

    /// The scope `scope` extended by entering the resource with base URI `base`: its anchors that some
    /// `$dynamicRef` looks up, unless an outer resource already binds the name.
    pub(crate) fn enter(&mut self, scope: usize, base: &str) -> usize {
        if self.scopes.is_empty() {
            self.scopes.push(Scope::new());
            self.index.insert(Scope::new(), 0);
        }
        let Some(list) = self.anchors.get(base) else { return scope };
        let mut next = self.scopes[scope].clone();
        for (name, at) in list {
            if self.names.contains(name) {
                next.entry(name.clone()).or_insert_with(|| at.clone());
            }
        }
        if next == self.scopes[scope] {
            return scope;
        }
        if let Some(i) = self.index.get(&next) {
            return *i;
        }
        self.index.insert(next.clone(), self.scopes.len());
        self.scopes.push(next);
        self.scopes.len() - 1
    }

    /// Where the `$dynamicRef` at `at` leads in the current scope (`None` when there is none at `at`).
    pub(crate) fn target(&self, at: &Origin) -> Option<Origin> {
        let (target, anchor) = self.refs.get(at)?;
        let bound = anchor.as_ref().and_then(|a| self.scopes.get(self.current)?.get(a));
        Some(bound.unwrap_or(target).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(p: &str) -> Origin {
        Origin { file: "a.json".into(), pointer: p.into() }
    }

    #[test]
    fn the_outermost_resource_binds_an_anchor() {
        let mut d = Dynamic::default();
        d.anchor("u:root", "items", &at("/$defs/foo"));
        d.anchor("u:list", "items", &at("/$defs/list/$defs/items"));
        d.anchor("u:list", "other", &at("/$defs/list/$defs/other"));
        d.reference(&at("/$defs/list/items"), at("/$defs/list/$defs/items"), Some("items".into()));
        let root = d.enter(0, "u:root");
        let both = d.enter(root, "u:list");
        assert_eq!(both, root, "entering list binds nothing new: `other` is looked up by no $dynamicRef");
        d.current = both;
        assert_eq!(d.target(&at("/$defs/list/items")), Some(at("/$defs/foo")));
        // Started in list, the anchor is list's own.
        d.current = d.enter(0, "u:list");
        assert_eq!(d.target(&at("/$defs/list/items")), Some(at("/$defs/list/$defs/items")));
        assert_eq!(d.enter(0, "u:list"), d.current, "scopes are interned");
        // Not dynamic: an ordinary reference.
        d.reference(&at("/x"), at("/y"), None);
        assert_eq!(d.target(&at("/x")), Some(at("/y")));
        assert_eq!(d.target(&at("/none")), None);
    }

    /// One resource per anchor name, each referring to all the others: the scopes are the subsets of the names,
    /// `2^14`, and the load stops at [`MAX_SCOPED_TYPES`] with a located error instead of building them all.
    #[test]
    fn a_schema_with_exponentially_many_scopes_is_refused() {
        let n = 14;
        let defs: serde_json::Map<String, serde_json::Value> = (0..n)
            .map(|i| {
                let mut props: serde_json::Map<String, serde_json::Value> = (0..n)
                    .filter(|j| *j != i)
                    .map(|j| (format!("p{j}"), serde_json::json!({"$ref": format!("r{j}")})))
                    .collect();
                props.insert("d".into(), serde_json::json!({"$dynamicRef": format!("#n{i}")}));
                let r = serde_json::json!({
                    "$id": format!("r{i}"),
                    "type": "object",
                    "properties": props,
                    "$defs": {"a": {"$dynamicAnchor": format!("n{i}")}}
                });
                (format!("r{i}"), r)
            })
            .collect();
        let root = serde_json::json!({"$id": "https://example.com/root", "$ref": "r0", "$defs": defs}).to_string();
        let errors = crate::load::load_files(std::path::Path::new("mem"), &[("root.json", &root)]).unwrap_err();
        let e = errors.0.iter().find(|e| e.message.contains("dynamic scopes")).expect("refused for its scopes");
        assert!(e.pointer.starts_with("/$defs/r"), "located at a resource: {}", e.pointer);
    }
}
