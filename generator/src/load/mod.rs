//! The loader: reads a schema directory (or one schema file), resolves `$ref`s, refuses what it cannot express,
//! and builds the [`Model`].
//!
//! Steps, each in its own module:
//! 1. read the files (`load::document`: JSON text to a `Value`, refusing a repeated key) and check every schema
//!    node's keywords against the supported set ([`KEYWORDS`], the known `x-` annotations); anything else is a
//!    located error, never silently dropped;
//! 2. index `$id`s and `$anchor`s and resolve every `$ref` (`load::uri`); a `$dynamicRef` resolves per dynamic
//!    scope while the types are built (`load::dynamic`);
//! 3. build the types (`load::build`): every file root, every `$defs` entry and every `$ref` target is a named
//!    type; inline objects, unions and string enums are named from their path (`load::naming`);
//! 4. recognise discriminated unions among `oneOf`/`anyOf` (`load::unions`) and refuse `$ref` cycles that no object
//!    or array breaks;
//! 5. lower the session-protocol annotations, when there are any (`load::protocol`);
//! 6. give every type its export names, once, for every language (`load::naming`).

mod branching;
mod build;
mod document;
mod dynamic;
mod examples;
mod limits;
mod naming;
mod protocol;
pub(crate) mod sequence;
mod stripping;
mod unions;
pub(crate) mod uri;

pub(crate) use build::is_type_root;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::diag::{push_ptr, LocatedText, SchemaError, SchemaErrorKind as K, SchemaErrors};
use crate::ir::*;

/// The envelope schema's file name inside a protocol's schema directory.
pub const ENVELOPE_FILE: &str = "envelope.schema.json";

/// The JSON Schema keywords the loader supports besides those of each JSON kind (`build::is_kind_keyword`);
/// every one maps to something each output expresses exactly.
pub const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "definitions",
    "$comment",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "type",
    "enum",
    "const",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
];

/// The keywords that hold a schema's definitions: `$defs`, and `definitions`, the name draft 2020-12's meta-schema
/// keeps for the same container (deprecated, for schemas written for earlier drafts). Both mean the same everywhere:
/// their entries are named types named by their keys.
pub(crate) const DEFS_KEYWORDS: &[&str] = &["$defs", "definitions"];

/// Keywords that are refused on purpose, with the reason shown to the user.
const REFUSED: &[(&str, &str)] = &[
    (
        "format",
        "`format` is checked by some validators and not by others (draft 2020-12 leaves it to each; ajv with \
         ajv-formats checks it), so the outputs could not agree on what it means: delete it for 2020-12's default (no \
         check), or write the check as a `pattern`",
    ),
    ("$vocabulary", "custom vocabularies are not supported"),
    (
        "contentEncoding",
        "`contentEncoding` is an annotation the outputs could not agree on (some validators decode the string): \
         delete it, or check the string with a `pattern`",
    ),
    (
        "contentMediaType",
        "`contentMediaType` is an annotation the outputs could not agree on (some validators parse the string): \
         delete it, or check the string with a `pattern`",
    ),
    (
        "contentSchema",
        "`contentSchema` is an annotation the outputs could not agree on (some validators check the decoded \
         string): delete it",
    ),
];

/// Keywords written as an earlier draft wrote them, which draft 2020-12 reads otherwise or not at all: the keyword,
/// the form (of its value), the kind of error, and what draft 2020-12 writes instead. The keyword check refuses
/// them first, so that the one mistake is one error that says what to write, not a complaint about the value's
/// shape (and nothing below the keyword is checked as a schema).
const EARLIER_FORMS: &[EarlierForm] = &[
    EarlierForm {
        keyword: "items",
        form: Value::is_array,
        kind: K::InvalidValue,
        instead: "`items` as an array is the tuple form of draft-07 and earlier: draft 2020-12 writes that array as \
                  `prefixItems`, and what `additionalItems` said as `items`",
    },
    EarlierForm {
        keyword: "exclusiveMinimum",
        form: Value::is_boolean,
        kind: K::InvalidValue,
        instead: "a boolean `exclusiveMinimum` is the form of draft-04: draft 2020-12 writes the bound itself \
                  (`\"exclusiveMinimum\": 5` for `\"minimum\": 5, \"exclusiveMinimum\": true`)",
    },
    EarlierForm {
        keyword: "exclusiveMaximum",
        form: Value::is_boolean,
        kind: K::InvalidValue,
        instead: "a boolean `exclusiveMaximum` is the form of draft-04: draft 2020-12 writes the bound itself \
                  (`\"exclusiveMaximum\": 5` for `\"maximum\": 5, \"exclusiveMaximum\": true`)",
    },
    EarlierForm {
        keyword: "required",
        form: Value::is_boolean,
        kind: K::InvalidValue,
        instead: "a boolean `required` is the form of draft-03: list the property's name in the `required` array \
                  of the object schema that holds the property",
    },
    EarlierForm {
        keyword: "additionalItems",
        form: is_any,
        kind: K::UnsupportedKeyword,
        instead: "`additionalItems` is the draft-07 keyword: use `prefixItems` and `items` (wiregen refuses what some \
                  output would drop)",
    },
    EarlierForm {
        keyword: "$recursiveRef",
        form: is_any,
        kind: K::UnsupportedKeyword,
        instead: "`$recursiveRef` (draft 2019-09) is not supported: use `$dynamicRef` (wiregen refuses what some \
                  output would drop)",
    },
    EarlierForm {
        keyword: "$recursiveAnchor",
        form: is_any,
        kind: K::UnsupportedKeyword,
        instead: "`$recursiveAnchor` (draft 2019-09) is not supported: use `$dynamicAnchor` (wiregen refuses what \
                  some output would drop)",
    },
    EarlierForm {
        keyword: "id",
        form: Value::is_string,
        kind: K::UnsupportedKeyword,
        instead: "`id` is draft-04's name of `$id`",
    },
    EarlierForm {
        keyword: "divisibleBy",
        form: is_any,
        kind: K::UnsupportedKeyword,
        instead: "`divisibleBy` is draft-03's name of `multipleOf`",
    },
];

/// One entry of [`EARLIER_FORMS`].
struct EarlierForm {
    keyword: &'static str,
    /// Whether the keyword's value is in the earlier draft's form.
    form: fn(&Value) -> bool,
    kind: K,
    /// What draft 2020-12 writes instead.
    instead: &'static str,
}

fn is_any(_: &Value) -> bool {
    true
}

/// The annotations of a whole schema file, read at its top only.
const FILE_ANNOTATIONS: &[&str] = &["x-naming", "x-package"];

/// The annotations the loader understands; any other `x-` key is refused so a typo cannot pass silently.
pub const ANNOTATIONS: &[&str] = &[
    "x-name",
    "x-rust-name",
    "x-ts-name",
    "x-zod-name",
    "x-aliases",
    "x-naming",
    "x-package",
    "x-root",
    "x-discriminator",
    "x-unknown-keys",
    "x-roles",
    "x-role-property",
    "x-categories",
    "x-removed",
    "x-flows",
    "x-side-channels",
    "x-open-questions",
    "x-sequence",
    "x-union",
    "x-category",
    "x-order",
    "x-status",
    "x-status-note",
    "x-strict-pattern",
    "x-auto",
    "x-renamed-from",
    "x-moved-from",
];

/// The draft this loader reads.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// One parsed schema file.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path relative to the schema directory, with `/` separators.
    pub rel: String,
    /// The file's text, with where each value is in it (indexed at the first diagnostic that asks).
    pub(crate) text: LocatedText,
    /// The parsed JSON (shared: the loader hands it around without copying).
    pub value: Arc<Value>,
}

impl SourceFile {
    /// The file's text.
    pub fn text(&self) -> &str {
        &self.text.text
    }
}

/// The files of a schema directory, parsed.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The schema directory as given (for one file: the directory holding it).
    pub dir: PathBuf,
    /// Files by relative path.
    pub files: BTreeMap<String, SourceFile>,
}

impl Sources {
    /// A diagnostic at a place of these files, such as an output's refusal of what the loader accepted
    /// ([`crate::emit::EmitError::UnsupportedAt`]), located like the loader's own.
    pub fn error_at(&self, at: &Origin, kind: K, message: impl Into<String>) -> SchemaError {
        located(&self.dir, &self.files, at, kind, message.into())
    }
}

/// A diagnostic at `at`: the file below `dir`, and the line and column of the pointer in its text.
fn located(dir: &Path, files: &BTreeMap<String, SourceFile>, at: &Origin, kind: K, message: String) -> SchemaError {
    let (line, col) = files.get(&at.file).map_or((0, 0), |f| f.text.locate(&at.pointer));
    SchemaError { kind, file: dir.join(&at.file), line, col, pointer: at.pointer.clone(), message }
}

/// Loads and checks a schema directory, or one schema file, returning the model.
///
/// A single file's root type is named `Root` unless it says otherwise (`x-name`).
///
/// # Errors
/// Every problem found, each located by file, line, column and JSON Pointer.
pub fn load(path: &Path) -> Result<Model, SchemaErrors> {
    load_with_sources(path).map(|(m, _)| m)
}

/// Like [`load`], also returning the parsed files (for checkers that read the source schema directly).
///
/// # Errors
/// Every problem found, each located.
pub fn load_with_sources(path: &Path) -> Result<(Model, Sources), SchemaErrors> {
    let mut cx = Cx::default();
    if path.is_file() {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        cx.dir = dir;
        cx.read_file(path, &name);
        cx.single = Some(name);
    } else if !path.exists() {
        cx.errors.push(io_error(path, "no such schema file or directory".into()));
    } else {
        cx.dir = path.to_path_buf();
        cx.read_dir(path, "");
        if cx.files.is_empty() && cx.errors.is_empty() {
            cx.errors.push(io_error(path, "the schema directory has no `.json` files".into()));
        }
    }
    finish(cx)
}

/// Whether a schema directory's file named `name` is one of its schema files (what [`load`] reads from a
/// directory, `wiregen diff` from a git tree, and `generate` must not write into one).
pub fn is_schema_file(name: &str) -> bool {
    name.ends_with(".json")
}

/// Whether a schema directory's file named `name` ends in `.json` in another case (`service.schema.JSON`): not
/// read as a schema file, and refused ([`MISNAMED_SCHEMA_FILE`]), since its event would be missing without a word.
pub fn is_misnamed_schema_file(name: &str) -> bool {
    !is_schema_file(name)
        && name.len() > 5
        && name.get(name.len() - 5..).is_some_and(|e| e.eq_ignore_ascii_case(".json"))
}

/// Why a file [`is_misnamed_schema_file`] is refused.
pub const MISNAMED_SCHEMA_FILE: &str =
    "a schema file's name ends in `.json`, in lower case: rename it (or move it out of the schema directory)";

/// A problem with a file or directory as a whole (it cannot be read, or holds no schema): no line or pointer.
fn io_error(file: &Path, message: String) -> SchemaError {
    SchemaError { kind: K::Io, file: file.to_path_buf(), line: 0, col: 0, pointer: String::new(), message }
}

/// Loads a schema directory held in memory (`files`: relative path with `/` separators, text), such as one
/// compiled into a binary with `include_str!`. `dir` is only the name diagnostics give the directory.
///
/// # Errors
/// Every problem found, each located.
pub fn load_files(dir: &Path, files: &[(&str, &str)]) -> Result<Model, SchemaErrors> {
    let files: Vec<(String, String)> = files.iter().map(|(r, t)| (r.to_string(), t.to_string())).collect();
    load_memory(dir, files, None).map(|(m, _)| m)
}

/// [`load_files`] for the schema compiled into this binary ([`crate::builtin`]), taking its examples, flows and
/// recursion as they are: its files are `schema/`, which every test loads from disk, and checking them again would
/// cost each start of the binary about a third more work.
#[cfg(any(feature = "cli", feature = "serve"))]
pub(crate) fn load_builtin(dir: &Path, files: &[(&str, &str)]) -> Result<Model, SchemaErrors> {
    let files: Vec<(String, String)> = files.iter().map(|(r, t)| (r.to_string(), t.to_string())).collect();
    read_memory(Cx { dir: dir.to_path_buf(), builtin: true, ..Cx::default() }, files).map(|(m, _)| m)
}

/// Loads schema files held in memory, with their parsed sources: a directory (`single` is `None`), or one schema
/// file (`single` names it among `files`, which then holds only it). `dir` is only the name diagnostics give the
/// directory (for `wiregen diff`, a git revision and path such as `main:schema`).
pub(crate) fn load_memory(
    dir: &Path,
    files: Vec<(String, String)>,
    single: Option<String>,
) -> Result<(Model, Sources), SchemaErrors> {
    read_memory(Cx { dir: dir.to_path_buf(), single, ..Cx::default() }, files)
}

fn read_memory(mut cx: Cx, files: Vec<(String, String)>) -> Result<(Model, Sources), SchemaErrors> {
    let dir = cx.dir.clone();
    for (rel, text) in files {
        cx.add_file(&dir.join(&rel), &rel, text);
    }
    if cx.files.is_empty() && cx.errors.is_empty() {
        cx.errors.push(io_error(&dir, "no schema files were given".into()));
    }
    finish(cx)
}

/// Checks and builds what `cx` has read.
fn finish(mut cx: Cx) -> Result<(Model, Sources), SchemaErrors> {
    if !cx.errors.is_empty() {
        return Err(SchemaErrors(cx.errors));
    }
    let rels: Vec<String> = cx.files.keys().cloned().collect();
    for rel in &rels {
        let v = cx.files[rel].value.clone();
        cx.check_keywords(&Origin { file: rel.clone(), pointer: String::new() }, &v, true);
    }
    if cx.errors.is_empty() {
        cx.index_resources();
    }
    if cx.errors.is_empty() {
        cx.resolve_refs();
    }
    let model = if cx.errors.is_empty() { cx.build_model() } else { None };
    if !cx.errors.is_empty() {
        // One problem can be seen from two places (a field and its type); report it once.
        let mut seen = BTreeSet::new();
        cx.errors.retain(|e| seen.insert((e.file.clone(), e.pointer.clone(), e.kind.code(), e.message.clone())));
        return Err(SchemaErrors(cx.errors));
    }
    let model = model.ok_or_else(|| SchemaErrors(Vec::new()))?;
    Ok((model, Sources { dir: cx.dir, files: cx.files }))
}

/// The loader's working state.
#[derive(Default)]
pub(crate) struct Cx {
    pub(crate) dir: PathBuf,
    pub(crate) files: BTreeMap<String, SourceFile>,
    /// In single-file mode, that file.
    pub(crate) single: Option<String>,
    pub(crate) errors: Vec<SchemaError>,
    /// Where each of [`Cx::errors`] is ([`Cx::refused_within`]).
    refused: Vec<Origin>,
    /// The schema compiled into the binary ([`load_builtin`]): its files are `schema/`, which the tests load from
    /// disk with every check, so the checks of examples and flows and of branching recursion are left out here.
    pub(crate) builtin: bool,
    /// Absolute URI (without fragment) of every schema resource -> where it is.
    resources: BTreeMap<String, Origin>,
    /// Absolute URI with an anchor fragment -> where it is.
    anchors: BTreeMap<String, Origin>,
    /// The base URI established at each location that has `$id`.
    ids: BTreeMap<Origin, String>,
    /// Each schema holding a `$ref` -> the schema it names.
    pub(crate) refs: BTreeMap<Origin, Origin>,
    /// `$dynamicAnchor`s and `$dynamicRef`s, and the dynamic scope the types are being built in.
    pub(crate) dynamic: dynamic::Dynamic,
    /// Compiled patterns by source, so a pattern used many times is translated and checked once.
    pub(crate) patterns: BTreeMap<String, Result<crate::ir::Pattern, String>>,
    /// The directories read so far, by canonical path: one reached again through a symbolic link is not read
    /// twice (a link to a directory above it would otherwise be followed until the path grows too long).
    dirs_read: HashSet<PathBuf>,
}

/// A file's parsed document, shared with the loader: a caller that holds it reads a location's value while it
/// borrows the loader mutably, without copying the value (a copy per type and per node built from it was a fifth
/// of loading the session protocol).
pub(crate) struct Doc(Option<Arc<Value>>);

impl Doc {
    /// The value at `at`'s pointer in this document.
    pub(crate) fn get(&self, at: &Origin) -> Option<&Value> {
        self.0.as_deref()?.pointer(&at.pointer)
    }

    /// The schema at `at`: `true` (it accepts everything) where the document holds none.
    pub(crate) fn schema(&self, at: &Origin) -> &Value {
        static TRUE: Value = Value::Bool(true);
        self.get(at).unwrap_or(&TRUE)
    }

    /// The value at `at`, `null` where the document holds none.
    pub(crate) fn or_null(&self, at: &Origin) -> &Value {
        static NULL: Value = Value::Null;
        self.get(at).unwrap_or(&NULL)
    }
}

impl Cx {
    /// Records a located error.
    pub(crate) fn err(&mut self, at: &Origin, kind: K, message: impl Into<String>) {
        let e = located(&self.dir, &self.files, at, kind, message.into());
        self.errors.push(e);
        self.refused.push(at.clone());
    }

    /// Records that `at` is refused for a mistake reported already (its own error would only echo it), so the
    /// checks that read it skip it as they skip a reported one.
    pub(crate) fn echo(&mut self, at: &Origin) {
        self.refused.push(at.clone());
    }

    /// Whether an error was reported at `at` itself.
    pub(crate) fn refused_at(&self, at: &Origin) -> bool {
        self.refused.iter().any(|r| r == at)
    }

    /// Whether an error was reported at `at` or below it. A check whose verdict follows from what is there skips
    /// it then: one mistake gets one error, not its echoes.
    pub(crate) fn refused_within(&self, at: &Origin) -> bool {
        self.refused.iter().any(|r| at.holds(r))
    }

    /// Refuses each member of annotation object `o` (at `at`) that is not one of `known`, so a misspelt or invented
    /// member cannot be silently ignored; `false` when there was one. `what` names the object in the message.
    pub(crate) fn unknown_keys(
        &mut self,
        at: &Origin,
        o: &serde_json::Map<String, Value>,
        known: &[&str],
        what: &str,
    ) -> bool {
        let mut ok = true;
        for k in o.keys().filter(|k| !known.contains(&k.as_str())) {
            self.err(&at.join(k), K::InvalidValue, format!("`{k}` means nothing in {what} ({})", known.join(", ")));
            ok = false;
        }
        ok
    }

    /// The value at a location.
    pub(crate) fn value_at(&self, at: &Origin) -> Option<&Value> {
        self.files.get(&at.file).and_then(|f| f.value.pointer(&at.pointer))
    }

    /// The document of `at`'s file, held by the caller ([`Doc`]).
    pub(crate) fn doc(&self, at: &Origin) -> Doc {
        Doc(self.files.get(&at.file).map(|f| Arc::clone(&f.value)))
    }

    fn read_dir(&mut self, dir: &Path, prefix: &str) {
        if let Ok(canonical) = std::fs::canonicalize(dir) {
            if !self.dirs_read.insert(canonical) {
                return;
            }
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                self.errors.push(io_error(dir, format!("cannot read the schema directory: {e}")));
                return;
            }
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let Some(os_name) = p.file_name() else { continue };
            let Some(name) = os_name.to_str() else {
                // A name that is not UTF-8 cannot be named in a `$ref` or a diagnostic: refused, not skipped, when
                // it may hold schemas.
                if p.is_dir() || is_schema_file(&os_name.to_string_lossy()) {
                    self.errors.push(io_error(&p, "the name is not UTF-8; rename it".to_string()));
                }
                continue;
            };
            let rel = format!("{prefix}{name}");
            if p.is_dir() {
                self.read_dir(&p, &format!("{rel}/"));
            } else if is_schema_file(name) {
                if std::fs::metadata(&p).is_ok_and(|m| !m.is_file()) {
                    // A device (`/dev/zero`) or a FIFO would be read without end.
                    self.errors.push(io_error(&p, "not a regular file (a device, FIFO or socket)".to_string()));
                    continue;
                }
                self.read_file(&p, &rel);
            } else if is_misnamed_schema_file(name) {
                self.errors.push(io_error(&p, MISNAMED_SCHEMA_FILE.to_string()));
            }
        }
    }

    fn read_file(&mut self, p: &Path, rel: &str) {
        match std::fs::read(p).map(document::text) {
            Err(e) => self.errors.push(io_error(p, format!("cannot read: {e}"))),
            Ok(Ok(text)) => self.add_file(p, rel, text),
            Ok(Err(r)) => self.errors.push(r.at(p)),
        }
    }

    /// Parses one file's text (`p` is where diagnostics say it is). A leading UTF-8 byte order mark, which some
    /// editors write, is not part of the text (RFC 8259 lets a parser ignore it): positions are counted without
    /// it, as such editors show them.
    fn add_file(&mut self, p: &Path, rel: &str, text: String) {
        let text = match text.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_string(),
            None => text,
        };
        match document::parse(&text) {
            Ok(value) => {
                let text = LocatedText::new(text);
                self.files.insert(rel.to_string(), SourceFile { rel: rel.to_string(), text, value: Arc::new(value) });
            }
            Err(r) => self.errors.push(r.at(p)),
        }
    }

    /// Checks the keywords of the schema at `at` and of every subschema below it.
    fn check_keywords(&mut self, at: &Origin, v: &Value, resource_root: bool) {
        let obj = match v {
            Value::Bool(_) => return,
            Value::Object(o) => o,
            _ => return self.err(at, K::InvalidValue, "a schema must be a JSON object or a boolean"),
        };
        let mut unknown: Vec<&str> = Vec::new();
        // Entries below this schema that are not to be checked as schemas (they were refused as a whole).
        let mut not_schemas: BTreeSet<String> = BTreeSet::new();
        for (k, sub) in obj {
            let kat = at.join(k);
            if k.starts_with("x-") {
                if !ANNOTATIONS.contains(&k.as_str()) {
                    self.err(&kat, K::UnsupportedKeyword, format!("unknown annotation `{k}`"));
                } else if FILE_ANNOTATIONS.contains(&k.as_str()) && !at.pointer.is_empty() {
                    let msg = format!("`{k}` is read at the top of a schema file only: here it would be ignored");
                    self.err(&kat, K::InvalidValue, msg);
                }
                continue;
            }
            if let Some(e) = EARLIER_FORMS.iter().find(|e| e.keyword == k && (e.form)(sub)) {
                self.err(&kat, e.kind, e.instead);
                not_schemas.insert(push_ptr("", k));
                continue;
            }
            if let Some((_, why)) = REFUSED.iter().find(|(r, _)| r == k) {
                self.err(&kat, K::UnsupportedKeyword, format!("{why} (wiregen refuses what some output would drop)"));
                continue;
            }
            if !KEYWORDS.contains(&k.as_str()) && !build::is_kind_keyword(k) {
                unknown.push(k.as_str());
                continue;
            }
            if k == "$schema" {
                // With an empty fragment it names the same meta-schema (`...schema#`, as draft 2020-12's own
                // examples and ajv take it; helper 118: refused as another draft).
                if sub.as_str().map(|u| u.strip_suffix('#').unwrap_or(u)) != Some(DRAFT_2020_12) {
                    self.err(
                        &kat,
                        K::UnsupportedKeyword,
                        format!("only draft 2020-12 (`{DRAFT_2020_12}`) is supported"),
                    );
                }
                if !resource_root && !obj.contains_key("$id") {
                    self.err(&kat, K::InvalidValue, "`$schema` belongs at the root of a schema resource");
                }
            }
        }
        match unknown.as_slice() {
            [] => {}
            [k] => self.err(
                &at.join(k),
                K::UnsupportedKeyword,
                format!("keyword `{k}` is not supported by wiregen (it would be silently dropped by some outputs)"),
            ),
            // Several: one mistake, most likely (a map of schemas in the place of a schema, a schema of another
            // dialect), so one error at the schema that lists them.
            several => {
                let listed = crate::diag::and_list(&several.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>());
                let hint = if several.len() == obj.len() && obj.values().all(is_schema) {
                    "; none of its keys is a keyword and each holds a schema: a map of schemas such as `properties` in the place of a schema?"
                } else {
                    ""
                };
                self.err(
                    at,
                    K::UnsupportedKeyword,
                    format!("keywords {listed} are not supported by wiregen (they would be silently dropped by some outputs){hint}"),
                );
            }
        }
        for k in MAP_KEYWORDS.iter().chain(LIST_KEYWORDS) {
            let (entries, must) = match obj.get(*k) {
                Some(Value::Object(m)) if MAP_KEYWORDS.contains(k) => (Entries::Map(m), "an object"),
                Some(Value::Array(a)) if LIST_KEYWORDS.contains(k) => (Entries::List(a), "an array"),
                _ => continue,
            };
            let must = format!("`{k}` must be {must} of schemas (JSON objects or booleans)");
            if let Some(bad) = self.several_misfits(&at.join(k), entries, is_schema, &must) {
                let kk = push_ptr("", k);
                not_schemas.extend(bad.iter().map(|n| push_ptr(&kk, n)));
            }
        }
        for (tok, child) in children(v) {
            if not_schemas.contains(&tok) {
                continue;
            }
            let cat = at.below(&tok);
            self.check_keywords(&cat, child, false);
        }
        // Values that are containers of subschemas must have the container's shape.
        for k in MAP_KEYWORDS {
            if let Some(x) = obj.get(*k) {
                if !x.is_object() {
                    self.err(&at.join(k), K::InvalidValue, format!("`{k}` must be an object of schemas"));
                }
            }
        }
        for k in LIST_KEYWORDS {
            if let Some(x) = obj.get(*k) {
                if x.as_array().is_none_or(|a| a.is_empty()) {
                    self.err(&at.join(k), K::InvalidValue, format!("`{k}` must be a non-empty array of schemas"));
                }
            }
        }
    }

    /// A container of entries (`properties`, `anyOf`, `x-sequence`'s `scopes`, ...) with two or more entries
    /// `fits` refuses is one mistake (another kind of value in its place): one error at the container, `must` (what
    /// its entries must be) and the entries that are not, and the names of those entries, which the caller does not
    /// check one by one. `None` when fewer than two misfit: each is then its own error.
    pub(crate) fn several_misfits(
        &mut self,
        at: &Origin,
        entries: Entries<'_>,
        fits: impl Fn(&Value) -> bool,
        must: &str,
    ) -> Option<Vec<String>> {
        let (bad, listed): (Vec<String>, String) = match entries {
            Entries::Map(m) => {
                let bad: Vec<String> = m.iter().filter(|(_, v)| !fits(v)).map(|(k, _)| k.clone()).collect();
                let quoted: Vec<String> = bad.iter().map(|k| format!("`{k}`")).collect();
                let listed = crate::diag::and_list(&quoted);
                (bad, listed)
            }
            Entries::List(a) => {
                let bad: Vec<String> =
                    a.iter().enumerate().filter(|(_, v)| !fits(v)).map(|(i, _)| i.to_string()).collect();
                let listed = format!("items {}", crate::diag::and_list(&bad));
                (bad, listed)
            }
        };
        if bad.len() < 2 {
            return None;
        }
        self.err(at, K::InvalidValue, format!("{must}: {listed} are not"));
        Some(bad)
    }

    /// Registers every schema resource (`$id`, file) and anchor under its absolute URI.
    fn index_resources(&mut self) {
        let rels: Vec<String> = self.files.keys().cloned().collect();
        for rel in rels {
            let synthetic = file_uri(&rel);
            let root = Origin { file: rel.clone(), pointer: String::new() };
            self.resources.insert(synthetic.clone(), root.clone());
            let v = self.files[&rel].value.clone();
            self.index_schema(&root, &v, &synthetic);
        }
    }

    fn index_schema(&mut self, at: &Origin, v: &Value, parent_base: &str) {
        let Some(obj) = v.as_object() else { return };
        let mut base = parent_base.to_string();
        if let Some(id) = obj.get("$id") {
            match id.as_str().map(|s| (s, uri::resolve(parent_base, s))) {
                Some((s, Some(abs))) if !s.contains('#') || s.ends_with('#') => {
                    let (abs, _) = uri::split_fragment(&abs);
                    let abs = abs.to_string();
                    if let Some(prev) = self.resources.get(&abs).filter(|p| *p != at) {
                        let prev = prev.clone();
                        self.err(
                            &at.join("$id"),
                            K::InvalidValue,
                            format!("`{abs}` is already the `$id` of {}#{}", prev.file, prev.pointer),
                        );
                    }
                    self.resources.insert(abs.clone(), at.clone());
                    self.ids.insert(at.clone(), abs.clone());
                    base = abs;
                }
                _ => self.err(&at.join("$id"), K::InvalidValue, "`$id` must be a URI reference without a fragment"),
            }
        }
        for key in ["$anchor", "$dynamicAnchor"] {
            let Some(a) = obj.get(key) else { continue };
            let Some(name) = a.as_str().filter(|s| is_anchor(s)) else {
                self.err(&at.join(key), K::InvalidValue, format!("`{key}` must be a plain name"));
                continue;
            };
            // A `$dynamicAnchor` is also a plain anchor: a `$ref` to it is an ordinary reference.
            let abs = format!("{base}#{name}");
            if let Some(prev) = self.anchors.get(&abs).filter(|p| *p != at) {
                // In a resource whose `$id` is refused as another's, its anchors are the other's too: not reported.
                let duplicate = self.resources.get(&base).is_some_and(|r| self.refused_at(&r.join("$id")));
                if !duplicate {
                    let msg =
                        format!("`{name}` is already an anchor of this resource, at {}#{}", prev.file, prev.pointer);
                    self.err(&at.join(key), K::InvalidValue, msg);
                }
                continue;
            }
            self.anchors.insert(abs, at.clone());
            // A file is named by its path whatever `$id` its root carries: the anchors of its root resource are
            // the file's too (those of a resource embedded in it are not).
            let file = file_uri(&at.file);
            if base != file && self.resources.get(&base).is_some_and(|r| r.file == at.file && r.pointer.is_empty()) {
                self.anchors.entry(format!("{file}#{name}")).or_insert_with(|| at.clone());
            }
            if key == "$dynamicAnchor" {
                self.dynamic.anchor(&base, name, at);
            }
        }
        for (tok, child) in children(v) {
            let cat = at.below(&tok);
            self.index_schema(&cat, child, &base);
        }
    }

    /// The base URI in effect at a location: the nearest enclosing `$id`, else the file's own URI.
    pub(crate) fn base_at(&self, at: &Origin) -> String {
        let mut p = at.pointer.as_str();
        loop {
            if let Some(b) = self.ids.get(&Origin { file: at.file.clone(), pointer: p.to_string() }) {
                return b.clone();
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return file_uri(&at.file),
            }
        }
    }

    /// Resolves every `$ref` to the location it names.
    fn resolve_refs(&mut self) {
        let rels: Vec<String> = self.files.keys().cloned().collect();
        for rel in rels {
            let v = self.files[&rel].value.clone();
            self.resolve_in(&Origin { file: rel, pointer: String::new() }, &v);
        }
    }

    fn resolve_in(&mut self, at: &Origin, v: &Value) {
        let Some(obj) = v.as_object() else { return };
        for key in ["$ref", "$dynamicRef"] {
            let Some(r) = obj.get(key) else { continue };
            match r.as_str() {
                None => self.err(&at.join(key), K::InvalidValue, format!("`{key}` must be a string")),
                Some(r) => match self.target(at, r) {
                    Ok(t) if key == "$ref" => {
                        self.refs.insert(at.clone(), t);
                    }
                    Ok(t) => {
                        // Dynamic only when the reference names a `$dynamicAnchor` that is where it leads.
                        let (_, frag) = uri::split_fragment(r);
                        let named = self.value_at(&t).and_then(|v| v.get("$dynamicAnchor")).and_then(Value::as_str);
                        let anchor = (!frag.is_empty() && named == Some(frag)).then(|| frag.to_string());
                        self.dynamic.reference(at, t, anchor);
                    }
                    Err(msg) => self.err(&at.join(key), K::UnresolvableRef, format!("`{r}`: {msg}")),
                },
            }
        }
        for (tok, child) in children(v) {
            let cat = at.below(&tok);
            self.resolve_in(&cat, child);
        }
    }

    /// Whether a relative reference names a file on disk beside the one file loaded alone.
    fn beside_single(&self, reference: &str) -> bool {
        let path = reference.split('#').next().unwrap_or_default();
        !path.is_empty() && !path.contains(':') && self.dir.join(path).is_file()
    }

    /// The location a reference names, or why there is none.
    fn target(&self, at: &Origin, reference: &str) -> Result<Origin, String> {
        let base = self.base_at(at);
        let mut candidates = Vec::new();
        if let Some(u) = uri::resolve(&base, reference) {
            candidates.push(u);
        }
        // A file's path beside its `$id`: a relative reference may also name a file by its place in the directory.
        let file_base = file_uri(&at.file);
        if base != file_base && !reference.starts_with('#') {
            if let Some(u) = uri::resolve(&file_base, reference) {
                candidates.push(u);
            }
        }
        let mut why = format!("cannot resolve it against `{base}`");
        // Once a candidate names a schema that is there, why its fragment is not is the answer: a later candidate
        // (the file path) naming no file said "no schema file `inner`" of a resource the `$id`s hold.
        let mut found = false;
        for abs in candidates {
            let (doc, frag) = uri::split_fragment(&abs);
            let Some(res) = self.resources.get(doc) else {
                if found {
                    continue;
                }
                why = match doc.strip_prefix("wiregen:///") {
                    // One file given alone: its neighbours are not read, though they may be there.
                    Some(_) if self.single.is_some() && self.beside_single(reference) => format!(
                        "only `{}` was loaded, not the files beside it: give the schema directory to load the \
                         files it refers to",
                        self.single.as_deref().unwrap_or_default()
                    ),
                    Some(f) => format!("no schema file `{f}`"),
                    None => format!("`{doc}` is not a schema in this directory (remote references are not fetched)"),
                };
                continue;
            };
            found = true;
            if frag.is_empty() || frag.starts_with('/') {
                let Some(tokens) = uri::pointer_tokens(frag) else {
                    why = format!("`{frag}` is not a JSON Pointer");
                    continue;
                };
                let mut ptr = res.pointer.clone();
                for t in &tokens {
                    ptr = push_ptr(&ptr, t);
                }
                let t = Origin { file: res.file.clone(), pointer: ptr };
                if self.value_at(&t).is_some() {
                    return Ok(t);
                }
                why = if res.pointer.is_empty() {
                    format!("`{}` has nothing at `{frag}`", res.file)
                } else {
                    // An embedded resource: what the reference resolved against is not the file.
                    format!(
                        "`{doc}` (the schema whose `$id` is at `{}`, `{}`) has nothing at `{frag}`: a reference \
                         resolves against the nearest `$id` around it, so `#` is that schema, not its file",
                        res.pointer, res.file
                    )
                };
            } else {
                match self.anchors.get(&abs) {
                    Some(t) => return Ok(t.clone()),
                    None => why = format!("no `$anchor` named `{frag}` in `{}`", res.file),
                }
            }
        }
        Err(why)
    }
}

impl Origin {
    /// The location of a member or keyword below this one.
    pub(crate) fn join(&self, token: &str) -> Origin {
        Origin { file: self.file.clone(), pointer: push_ptr(&self.pointer, token) }
    }

    /// The location of a subschema below this one, by the escaped pointer suffix [`children`] gives it.
    pub(crate) fn below(&self, suffix: &str) -> Origin {
        let mut pointer = String::with_capacity(self.pointer.len() + suffix.len());
        pointer.push_str(&self.pointer);
        pointer.push_str(suffix);
        Origin { file: self.file.clone(), pointer }
    }
}

/// The synthetic URI of a schema file, so that files without `$id` can reference each other by relative path.
fn file_uri(rel: &str) -> String {
    format!("wiregen:///{rel}")
}

fn is_anchor(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || matches!(x, '-' | '_' | '.' | ':'))
}

/// Keywords whose value is one subschema.
const ONE_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "propertyNames",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
];
/// Keywords whose value is an object of subschemas.
const MAP_KEYWORDS: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/// Keywords whose value is an array of subschemas.
const LIST_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Whether a value is a schema (an object or a boolean): a `dependencies` entry is one (a `dependentSchemas`
/// entry) or lists property names (a `dependentRequired` entry).
pub(crate) fn is_schema(v: &Value) -> bool {
    v.is_object() || v.is_boolean()
}

/// The entries of a container: a map's by key, an array's by index.
pub(crate) enum Entries<'v> {
    Map(&'v serde_json::Map<String, Value>),
    List(&'v [Value]),
}

/// The schema directly below `v` that the pointer tokens `tokens` (unescaped) begin with, and how many tokens
/// lead to it: one of [`children`], found without listing them all (a root with 10,000 `$defs` listed them once
/// per type named below it).
pub(crate) fn child_at<'v>(v: &'v Value, tokens: &[String]) -> Option<(usize, &'v Value)> {
    let obj = v.as_object()?;
    let k = tokens.first()?;
    let sub = obj.get(k)?;
    if ONE_KEYWORDS.contains(&k.as_str()) {
        return Some((1, sub));
    }
    let key = tokens.get(1)?;
    let child = if MAP_KEYWORDS.contains(&k.as_str()) {
        sub.as_object()?.get(key)?
    } else if LIST_KEYWORDS.contains(&k.as_str()) {
        // `children` names an item by its index as written by `usize` (no leading zeros, no sign).
        let i: usize = key.parse().ok().filter(|i: &usize| i.to_string() == *key)?;
        sub.as_array()?.get(i)?
    } else if k == "dependencies" {
        sub.as_object()?.get(key).filter(|s| is_schema(s))?
    } else {
        return None;
    };
    Some((2, child))
}

impl Cx {
    /// Calls `f` with every schema of every file read (its place and its value), each file's root first: the one
    /// walk behind the checks of annotations that only some schemas may hold (name keywords, `x-root`).
    pub(crate) fn each_schema(&self, f: &mut dyn FnMut(&Origin, &Value)) {
        for (rel, file) in &self.files {
            let mut stack: Vec<(Origin, &Value)> =
                vec![(Origin { file: rel.clone(), pointer: String::new() }, &*file.value)];
            while let Some((at, v)) = stack.pop() {
                f(&at, v);
                stack.extend(children(v).into_iter().rev().map(|(tok, c)| (at.below(&tok), c)));
            }
        }
    }
}

/// The subschemas of a schema, each with the pointer suffix that leads to it (`/properties/a`).
pub(crate) fn children(v: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    let Some(obj) = v.as_object() else { return out };
    for (k, sub) in obj {
        if ONE_KEYWORDS.contains(&k.as_str()) {
            out.push((push_ptr("", k), sub));
        } else if MAP_KEYWORDS.contains(&k.as_str()) {
            if let Some(m) = sub.as_object() {
                let kk = push_ptr("", k);
                out.extend(m.iter().map(|(name, s)| (push_ptr(&kk, name), s)));
            }
        } else if LIST_KEYWORDS.contains(&k.as_str()) {
            if let Some(a) = sub.as_array() {
                let kk = push_ptr("", k);
                out.extend(a.iter().enumerate().map(|(i, s)| (push_ptr(&kk, &i.to_string()), s)));
            }
        } else if k == "dependencies" {
            // Its entries are schemas (as in `dependentSchemas`) or lists of names (as in `dependentRequired`).
            if let Some(m) = sub.as_object() {
                let kk = push_ptr("", k);
                let schemas = m.iter().filter(|(_, s)| is_schema(s));
                out.extend(schemas.map(|(name, s)| (push_ptr(&kk, name), s)));
            }
        }
    }
    out
}
