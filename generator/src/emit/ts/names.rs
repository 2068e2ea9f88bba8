//! The names each TypeScript module holds, and the one check of the names made from the model.
//!
//! A module *holds* a name it declares or imports. Some are its own (the runtime's helpers, the line checkers, the
//! stream checker, the upcaster: lists beside each template, which tests hold to the templates); the others are made
//! from the model: each type's TypeScript type and Zod schema and its aliases', each type's validators
//! `validate<T>`/`is<T>`, the protocol's tables (`sessionEventTags`, `SessionEventForRole`, ...).
//!
//! The rule, for every module of the npm package and both one-file modules: a name made from the model is an
//! identifier that hides no global ([`js::ident`] for a type, [`js::value_ident`] for a value), is no name the module
//! holds of its own, and is held once, except that a type's (or an alias's) own TypeScript type and Zod schema may
//! share a name (TypeScript keeps types and values apart). In a module with standalone code, a made name holds no
//! `$`: every name that code makes for itself does (`check$T`, `keys$0`, `$ok`). The package's `index.ts`
//! re-exports every module (`export *`), so it holds every name they export: a name two modules export is refused
//! too (TypeScript would refuse the ambiguous re-export).
//!
//! [`check`] refuses every name that breaks the rule, at once, each at the keyword that gave it ([`Names::at`]) and
//! once, in the first module that cannot hold it. Of two made names that clash, the one a keyword gave is reported
//! (a derived name is not the mistake); a validator or table made from a refused TypeScript name is not reported
//! again.

use std::collections::{BTreeMap, BTreeSet};

use super::{js, standalone, zod};
use crate::emit::EmitError;
use crate::ir::{Model, Names, Origin, TypeId};

/// Which name of a type (or of one of its aliases) a made name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// The TypeScript type.
    Ts,
    /// The Zod schema.
    Zod,
    /// `validate<T>`.
    Validate,
    /// `is<T>`.
    Guard,
    /// A protocol table that is a value (`<union>Tags`, `<union>Roles`, the removed events).
    TableValue,
    /// A protocol type (`<Union>ForRole`, `<Envelope>Options`).
    TableType,
}

impl Kind {
    fn is_type(self) -> bool {
        matches!(self, Kind::Ts | Kind::TableType)
    }

    fn said(self) -> &'static str {
        match self {
            Kind::Ts => "the TypeScript type",
            Kind::Zod => "the Zod schema",
            Kind::Validate | Kind::Guard => "a validator",
            Kind::TableValue => "a protocol table",
            Kind::TableType => "a protocol type",
        }
    }
}

/// A name made from the model.
#[derive(Clone, Debug)]
pub(crate) struct Made<'m> {
    pub(crate) name: String,
    /// Where it was given.
    at: &'m Origin,
    /// The type it names, and which of its names: 0 for the type's own, 1 + i for its alias i.
    owner: (TypeId, usize),
    kind: Kind,
}

impl<'m> Made<'m> {
    fn id(&self) -> (TypeId, usize, Kind, &str) {
        (self.owner.0, self.owner.1, self.kind, &self.name)
    }

    /// The TypeScript name it is made from, when it is made from one (a validator's, a protocol table's): when that
    /// is refused, this name is an echo of the mistake.
    fn source(&self, m: &Model) -> Option<(TypeId, usize, Kind, String)> {
        let ts = || (self.owner.0, 0, Kind::Ts, m.ty(self.owner.0).names.ts.clone());
        (!matches!(self.kind, Kind::Ts | Kind::Zod)).then(ts)
    }

    /// Whether no keyword gave it: it was derived (from a `$defs` key, a file name, a path), so it is located at the
    /// type's schema.
    fn derived(&self, m: &Model) -> bool {
        *self.at == m.ty(self.owner.0).origin
    }

    /// What the user renames, and with which keyword: the one that gave the name, or the one that would.
    fn rename(&self) -> String {
        let own = if self.kind == Kind::Zod { "x-zod-name" } else { "x-ts-name" };
        let given = self.at.pointer.rsplit('/').next().unwrap_or_default();
        match given {
            _ if self.owner.1 > 0 => "rename the alias (`x-aliases`)".to_string(),
            "x-name" => format!("rename the type (`x-name`, or `{own}` for this name alone)"),
            "x-ts-name" | "x-zod-name" => format!("rename the type (`{given}`)"),
            _ => format!("name the type (`{own}`)"),
        }
    }
}

/// A name a module holds.
#[derive(Clone, Debug)]
enum Held<'m> {
    /// One of its own names, with the module (or runtime) that declares it.
    Own(&'static str, &'static str),
    Made(Made<'m>),
}

/// The names one module holds.
#[derive(Clone, Debug)]
pub(crate) struct Module<'m> {
    /// How errors name it.
    label: &'static str,
    /// Each name, and whether the module exports it.
    held: Vec<(Held<'m>, bool)>,
    /// Whether the module holds standalone code, whose own names hold `$`.
    standalone: bool,
    /// Whether it re-exports other modules (`index.ts`).
    reexports: bool,
}

impl<'m> Module<'m> {
    fn new(label: &'static str) -> Self {
        Module { label, held: Vec::new(), standalone: false, reexports: false }
    }

    /// Its own names `names`, declared by `by` (the module itself or the module it imports them from).
    fn own(mut self, names: &[&'static str], by: &'static str, exported: bool) -> Self {
        self.held.extend(names.iter().map(|n| (Held::Own(n, by), exported)));
        self
    }

    fn made(mut self, names: impl IntoIterator<Item = Made<'m>>, exported: bool) -> Self {
        self.held.extend(names.into_iter().map(|n| (Held::Made(n), exported)));
        self
    }

    fn standalone(mut self) -> Self {
        self.standalone = true;
        self
    }

    /// A module that re-exports every name `modules` export (the package's `index.ts`).
    fn reexporting(mut self, modules: &[Module<'m>]) -> Self {
        for module in modules {
            self.held.extend(module.held.iter().filter(|(_, exported)| *exported).cloned());
        }
        self.reexports = true;
        self
    }
}

/// Each type's and alias's TypeScript type and Zod schema.
fn schemas(m: &Model) -> Vec<Made<'_>> {
    let mut out = Vec::new();
    for (i, t) in m.types.iter().enumerate() {
        for (k, n) in std::iter::once(&t.names).chain(&t.aliases).enumerate() {
            out.push(Made { name: n.ts.clone(), at: &n.at.ts, owner: (TypeId(i), k), kind: Kind::Ts });
            out.push(Made { name: n.zod.clone(), at: &n.at.zod, owner: (TypeId(i), k), kind: Kind::Zod });
        }
    }
    out
}

/// The TypeScript types of the types `ids` (and of their aliases, with `aliases`).
fn ts_types(m: &Model, ids: impl IntoIterator<Item = TypeId>, aliases: bool) -> Vec<Made<'_>> {
    let mut out = Vec::new();
    for id in ids {
        let t = m.ty(id);
        let names = std::iter::once(&t.names).chain(t.aliases.iter().filter(|_| aliases));
        for (k, n) in names.enumerate() {
            out.push(Made { name: n.ts.clone(), at: &n.at.ts, owner: (id, k), kind: Kind::Ts });
        }
    }
    out
}

fn all_types(m: &Model) -> impl Iterator<Item = TypeId> {
    (0..m.types.len()).map(TypeId)
}

/// Each type's `validate<T>` and `is<T>` (made from its TypeScript name, so given where that was).
fn validators<'m>(m: &'m Model, ids: impl IntoIterator<Item = TypeId>, which: &[Kind]) -> Vec<Made<'m>> {
    let mut out = Vec::new();
    for id in ids {
        let n: &Names = &m.ty(id).names;
        let (validate, guard) = standalone::validator_names(&n.ts);
        for (kind, name) in [(Kind::Validate, validate), (Kind::Guard, guard)] {
            if which.contains(&kind) {
                out.push(Made { name, at: &n.at.ts, owner: (id, 0), kind });
            }
        }
    }
    out
}

/// The protocol's tables and types (see [`super::ProtocolNames`]).
fn tables(m: &Model) -> Vec<Made<'_>> {
    let Some(p) = &m.protocol else { return Vec::new() };
    let names = super::protocol_name_strings(m, p);
    let (u, env) = (&m.ty(p.union).names, &m.ty(p.envelope).names);
    let table = |name: String, kind, owner: TypeId, at| Made { name, at, owner: (owner, 0), kind };
    vec![
        table(names.tags, Kind::TableValue, p.union, &u.at.ts),
        table(names.roles, Kind::TableValue, p.union, &u.at.ts),
        table(names.removed, Kind::TableValue, p.union, &u.at.ts),
        table(names.for_role, Kind::TableType, p.union, &u.at.ts),
        table(names.options, Kind::TableType, p.envelope, &env.at.ts),
    ]
}

/// The module of `wiregen types --lang zod`: the Zod runtime inlined, each type's and alias's schema and type.
pub(crate) fn zod_module(m: &Model) -> Vec<Module<'_>> {
    let runtime: Vec<&'static str> = zod::runtime_names().collect();
    vec![Module::new("the Zod module").own(&runtime, "the Zod runtime", false).made(schemas(m), true)]
}

/// The module of `wiregen types --lang ts-standalone`: the standalone runtime inlined, each type's and alias's
/// TypeScript type and each type's validators.
pub(crate) fn standalone_module(m: &Model) -> Vec<Module<'_>> {
    vec![Module::new("the standalone module")
        .own(standalone::RUNTIME_NAMES, "the standalone runtime", false)
        .own(&["WireError"], "the standalone runtime", true)
        .made(ts_types(m, all_types(m), true), true)
        .made(validators(m, all_types(m), &[Kind::Validate, Kind::Guard]), true)
        .standalone()]
}

/// The npm package's modules that hold names made from the model, and its `index.ts`.
///
/// `stream_types`: the types whose TypeScript names `src/stream.ts` imports (the rollup's).
pub(crate) fn package<'m>(m: &'m Model, stream_types: &[TypeId], upgrade: bool) -> Vec<Module<'m>> {
    const RUNTIME: &str = "`src/runtime.ts`";
    let protocol = m.protocol.as_ref();
    let mut schemas_ts = Module::new("`src/schemas.ts`")
        .own(&["z"], "`zod`", false)
        .own(zod::RUNTIME_EXPORTS, RUNTIME, false)
        .made(tables(m), true)
        .made(schemas(m), true);
    if protocol.is_some() {
        schemas_ts = schemas_ts.own(&["CreateEnvelopeOptions"], "`src/schemas.ts`", true);
    }
    let standalone_ts = Module::new("`src/standalone.ts`")
        .own(standalone::RUNTIME_NAMES, "the standalone runtime", false)
        .own(&["WireError"], RUNTIME, false)
        .made(ts_types(m, all_types(m), false), false)
        .made(validators(m, all_types(m), &[Kind::Validate, Kind::Guard]), true)
        .standalone();
    let mut modules = vec![schemas_ts, standalone_ts];
    if let Some(p) = protocol {
        const ENVELOPE: &str = "`src/envelope.ts`";
        let env = m.ty(p.envelope);
        let imported_schemas = [
            Made { name: env.names.zod.clone(), at: &env.names.at.zod, owner: (p.envelope, 0), kind: Kind::Zod },
            Made { name: env.names.ts.clone(), at: &env.names.at.ts, owner: (p.envelope, 0), kind: Kind::Ts },
        ];
        let roles = ts_types(m, [p.role_enum], false);
        let for_role = tables(m).into_iter().filter(|t| t.kind == Kind::TableType);
        modules.push(
            Module::new(ENVELOPE)
                .own(super::ENVELOPE_EXPORTS, ENVELOPE, true)
                .own(super::ENVELOPE_OWN, ENVELOPE, false)
                .made(imported_schemas.into_iter().chain(roles).chain(for_role), false)
                .made(validators(m, [p.envelope], &[Kind::Validate]), false),
        );
        const STREAM: &str = "`src/stream.ts`";
        modules.push(
            Module::new(STREAM)
                .own(crate::emit::ts_stream::EXPORTS, STREAM, true)
                .own(crate::emit::ts_stream::OWN, STREAM, false)
                .made(ts_types(m, stream_types.iter().copied(), false), false),
        );
    }
    if upgrade {
        const UPGRADE: &str = "`src/upgrade.ts`";
        modules.push(Module::new(UPGRADE).own(super::UPGRADE_EXPORTS, UPGRADE, true).own(
            super::UPGRADE_OWN,
            UPGRADE,
            false,
        ));
    }
    let (public_values, public_types) = super::public_runtime();
    let index = Module::new("`src/index.ts`")
        .own(&public_values, RUNTIME, true)
        .own(&public_types, RUNTIME, true)
        .reexporting(&modules);
    modules.push(index);
    modules
}

/// Refuses every name made from the model that a module of `modules` cannot hold (see the module's
/// documentation), at once.
///
/// # Errors
/// [`EmitError::Several`] (or the one error), each located where the name was given.
pub(crate) fn check(m: &Model, modules: &[Module<'_>]) -> Result<(), EmitError> {
    let mut refused = Vec::new();
    // Each made name is refused once, in the first module that cannot hold it; whether it can be a name at all is
    // asked once, in the first module that holds it.
    let mut reported: BTreeSet<(TypeId, usize, Kind, String)> = BTreeSet::new();
    let mut asked: BTreeSet<(TypeId, usize, Kind, String)> = BTreeSet::new();
    for module in modules {
        let mut bindings: BTreeMap<&str, &Held> = BTreeMap::new();
        for (held, _) in &module.held {
            if let Held::Own(name, _) = held {
                bindings.entry(name).or_insert(held);
            }
        }
        for (held, _) in &module.held {
            let Held::Made(made) = held else { continue };
            let (owner, k, kind, name) = made.id();
            let id = (owner, k, kind, name.to_string());
            if reported.contains(&id) || made.source(m).is_some_and(|src| reported.contains(&src)) {
                continue;
            }
            // What to rename is this name's own keyword (an alias's is `x-aliases`).
            let unusable = match asked.insert(id.clone()) {
                true => js::unusable(name, kind.is_type()).map(|(why, _)| format!("{why}; {}", made.rename())),
                false => None,
            };
            let problem = if let Some(why) = unusable {
                Some(EmitError::at(made.at, why))
            } else if module.standalone && name.contains('$') {
                let why = format!("`{name}` holds `$`, which marks the names {} makes for itself", module.label);
                Some(EmitError::at(made.at, format!("{why}; {}", made.rename())))
            } else if let Some(other) = bindings.get(name) {
                match other {
                    // Where one of two names was given by a keyword and this one was derived, the keyword is what
                    // to change: the error is there, about the other name.
                    Held::Made(given) if made.derived(m) && !given.derived(m) => {
                        let (given_id, given_at, rename) = (given.id(), given.at, given.rename());
                        let why = clash(m, module, given, held);
                        why.map(|why| {
                            let (o, k, kind, name) = given_id;
                            reported.insert((o, k, kind, name.to_string()));
                            EmitError::at(given_at, format!("{why}; {rename}"))
                        })
                    }
                    _ => clash(m, module, made, other)
                        .map(|why| EmitError::at(made.at, format!("{why}; {}", made.rename()))),
                }
            } else {
                bindings.insert(name, held);
                None
            };
            if let Some(e) = problem {
                reported.insert(id);
                // A type's two names refused alike at one place (both empty, say) are one error.
                let said = e.to_string();
                if !refused.iter().any(|r: &EmitError| r.to_string() == said) {
                    refused.push(e);
                }
            }
        }
    }
    EmitError::all(refused)
}

/// Why `made` cannot be held by `module` beside `other`, which has the same name (`None` when they are one binding,
/// or a type's own TypeScript type and Zod schema, which may share a name).
fn clash(m: &Model, module: &Module<'_>, made: &Made<'_>, other: &Held<'_>) -> Option<String> {
    let name = &made.name;
    match other {
        Held::Own(_, by) if *by == module.label => Some(format!("`{name}` is already a name of {by}")),
        Held::Own(_, by) if module.reexports => {
            Some(format!("`{name}` is already a name {by} exports, and {} re-exports both", module.label))
        }
        Held::Own(_, by) => Some(format!("`{name}` is already a name of {by}, which {} uses", module.label)),
        Held::Made(other) => {
            let pair = other.owner == made.owner
                && other.kind.is_type() != made.kind.is_type()
                && [other.kind, made.kind].iter().all(|k| matches!(k, Kind::Ts | Kind::Zod));
            if other.id() == made.id() || pair {
                return None;
            }
            let t = &m.ty(other.owner.0).origin;
            let of = match (other.kind, other.owner.1) {
                (Kind::TableValue | Kind::TableType, _) => "named after the type",
                (_, 0) => "of the type",
                _ => "of an alias of the type",
            };
            let what = format!("{} {of} at {}#{}", other.kind.said(), t.file, t.pointer);
            Some(if module.reexports {
                format!("`{name}` is already {what}, and {} exports both", module.label)
            } else {
                format!("`{name}` is already {what} in {}", module.label)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::EmitOptions;

    /// The names a module's text binds at its top level: what it declares (`function`, `class`, `const`, `let`,
    /// `type`, `interface`, exported or not) and what it imports or re-exports by name (`import { a, type B }`,
    /// `import * as z`, `export { a } from`).
    pub(crate) fn bound_names(src: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let word = |s: &str| -> String {
            let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).unwrap_or(s.len());
            s[..end].to_string()
        };
        let mut lines = src.lines();
        while let Some(line) = lines.next() {
            let l = line.strip_prefix("export ").unwrap_or(line);
            let kw = ["function ", "class ", "const ", "let ", "type ", "interface "];
            if let Some(rest) = kw.iter().find_map(|k| l.strip_prefix(k)) {
                out.insert(word(rest));
                continue;
            }
            if !(line.starts_with("import ") || line.starts_with("export {")) {
                continue;
            }
            let mut stmt = line.to_string();
            while !stmt.contains(" from ") {
                match lines.next() {
                    Some(next) => stmt.push_str(next),
                    None => break,
                }
            }
            let clause = stmt.split(" from ").next().unwrap_or_default();
            if let Some(ns) = clause.split(" as ").nth(1).filter(|_| clause.contains('*')) {
                out.insert(word(ns.trim()));
            }
            if let (Some(a), Some(b)) = (clause.find('{'), clause.rfind('}')) {
                for item in clause[a + 1..b].split(',').map(str::trim).filter(|i| !i.is_empty()) {
                    let item = item.strip_prefix("type ").unwrap_or(item);
                    out.insert(word(item.rsplit(" as ").next().unwrap_or(item)));
                }
            }
        }
        out
    }

    fn held(module: &Module<'_>) -> BTreeSet<String> {
        module
            .held
            .iter()
            .map(|(h, _)| match h {
                Held::Own(n, _) => n.to_string(),
                Held::Made(made) => made.name.clone(),
            })
            .collect()
    }

    fn models() -> Vec<Model> {
        ["schema", "examples/happy-wire/schema"]
            .iter()
            .map(|dir| {
                let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
                crate::load::load(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            })
            .collect()
    }

    /// Every name each module of the package binds is one the table says it holds (or, in standalone code, holds
    /// `$`), for the v2 protocol and the happy-wire example: a module whose names the table lacked would let a type
    /// take one of them unrefused.
    #[test]
    fn the_table_holds_every_name_the_package_binds() {
        for m in models() {
            let files = super::super::emit_model(&m, &EmitOptions::default()).expect("emits");
            let p = m.protocol.as_ref().expect("a protocol");
            let stream_types = crate::emit::ts_stream::imported_types(&m, p).expect("rollup types");
            let plan = crate::upgrade::Plan::of(&m).is_some_and(|p| !p.is_empty());
            let modules = package(&m, &stream_types, plan);
            let mut seen = 0;
            for module in &modules {
                let path = module.label.trim_matches('`');
                let Some(file) = files.iter().find(|f| f.path == path) else {
                    panic!("{}: the package has no {path}", m.package.npm_name)
                };
                let held = held(module);
                for name in bound_names(&file.contents) {
                    let ok = held.contains(&name) || module.standalone && name.contains('$');
                    assert!(ok, "{}: {path} binds `{name}`, which the table lacks", m.package.npm_name);
                }
                seen += 1;
            }
            assert_eq!(seen, if plan { 6 } else { 5 }, "{}: the modules", m.package.npm_name);
        }
    }

    /// The lists of a template's own names name only what it binds: a stale entry would refuse a usable name.
    #[test]
    fn the_lists_of_own_names_are_the_templates() {
        let m = &models()[0];
        let files = super::super::emit_model(m, &EmitOptions::default()).expect("emits");
        let lists: [(&str, &[&[&str]]); 3] = [
            ("src/stream.ts", &[crate::emit::ts_stream::EXPORTS, crate::emit::ts_stream::OWN]),
            ("src/envelope.ts", &[super::super::ENVELOPE_EXPORTS, super::super::ENVELOPE_OWN]),
            ("src/upgrade.ts", &[super::super::UPGRADE_EXPORTS, super::super::UPGRADE_OWN]),
        ];
        for (path, lists) in lists {
            let file = files.iter().find(|f| f.path == path).expect("the module");
            let bound = bound_names(&file.contents);
            for name in lists.iter().flat_map(|l| l.iter()) {
                assert!(bound.contains(*name), "{path} does not bind `{name}`: remove it from its list");
            }
            let exported: BTreeSet<String> =
                bound_names(&file.contents.lines().filter(|l| l.starts_with("export ")).collect::<Vec<_>>().join("\n"));
            let listed: BTreeSet<String> = lists[0].iter().map(|n| n.to_string()).collect();
            assert_eq!(exported, listed, "{path}: the exported names");
        }
    }

    /// The one-file modules too: every name they bind is held.
    #[test]
    fn the_table_holds_every_name_the_one_file_modules_bind() {
        for m in models() {
            let zod = super::super::zod_module(&m).expect("the Zod module");
            let standalone = super::super::standalone_module(&m).expect("the standalone module");
            for (text, modules) in [(zod, zod_module(&m)), (standalone, standalone_module(&m))] {
                let held = held(&modules[0]);
                for name in bound_names(&text) {
                    let ok = held.contains(&name) || modules[0].standalone && name.contains('$');
                    assert!(ok, "{}: {} binds `{name}`, which the table lacks", m.package.npm_name, modules[0].label);
                }
            }
        }
    }

    #[test]
    fn bound_names_reads_declarations_and_imports() {
        let src = "import * as z from \"zod\";\nimport {\n  a,\n  type B,\n  c as d,\n} from \"./x.js\";\nexport { e } from \"./y.js\";\nexport function f() {}\nclass G {}\nexport const h = 1;\n  const inner = 2;\nexport type I<T> = T;\n";
        let got: Vec<String> = bound_names(src).into_iter().collect();
        assert_eq!(got, ["B", "G", "I", "a", "d", "e", "f", "h", "z"]);
    }
}
