//! Reading one side of a diff: a schema directory, one schema file, or `REV:PATH` from git.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::process::Command;

use super::Location;
use crate::diag::{LocatedText, SchemaErrors};
use crate::ir::{Model, Origin};

/// One version of a schema, loaded.
#[derive(Debug, Clone)]
pub struct Side {
    /// How the side was named (`schema`, `main:schema`, `v1/sessionProtocol.schema.json`).
    pub label: String,
    /// The model.
    pub model: Model,
    /// What file names are shown with: the directory as named, with a trailing `/` (empty for the current one).
    prefix: String,
    /// Each file's text, by path relative to the schema directory (for line and column).
    texts: BTreeMap<String, LocatedText>,
}

/// Why a side could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum DiffError {
    /// The path does not exist or cannot be read (and is not `REV:PATH`).
    Io {
        /// The side as named.
        spec: String,
        /// The cause.
        source: std::io::Error,
    },
    /// `git` could not run, or could not read `REV:PATH`.
    Git {
        /// The side as named.
        spec: String,
        /// What git said (its standard error), or why it did not run.
        message: String,
    },
    /// The loader refused the schema; the source holds every located diagnostic.
    Schema {
        /// The side as named.
        spec: String,
        /// The diagnostics.
        errors: SchemaErrors,
    },
}

impl fmt::Display for DiffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiffError::Io { spec, .. } => write!(f, "cannot read `{spec}`"),
            DiffError::Git { spec, message } => write!(f, "git cannot read `{spec}`: {message}"),
            DiffError::Schema { spec, errors } => {
                write!(f, "`{spec}` has {}", errors.count("schema error"))
            }
        }
    }
}

impl std::error::Error for DiffError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DiffError::Io { source, .. } => Some(source),
            DiffError::Schema { errors, .. } => Some(errors),
            DiffError::Git { .. } => None,
        }
    }
}

impl Side {
    /// Loads a side: a schema directory, one schema file, or `REV:PATH` (a git revision and a path in it, as
    /// `git show` reads it: from the repository root, or relative to the current folder with `./`), read from the
    /// git repository of the current folder. A path that exists is always read as a path.
    ///
    /// # Errors
    /// A path that is neither a file, a directory nor a readable `REV:PATH`; a schema the loader refuses.
    pub fn load(spec: &str) -> Result<Side, DiffError> {
        let path = Path::new(spec);
        if path.exists() {
            return Side::from_path(spec, path);
        }
        match spec.split_once(':') {
            Some((rev, p)) if !rev.is_empty() => Side::from_git(spec, rev, p),
            _ => Err(DiffError::Io {
                spec: spec.to_string(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory (nor REV:PATH)"),
            }),
        }
    }

    /// Loads a schema directory or file from disk.
    fn from_path(spec: &str, path: &Path) -> Result<Side, DiffError> {
        let (model, sources) = crate::load::load_with_sources(path)
            .map_err(|errors| DiffError::Schema { spec: spec.to_string(), errors })?;
        let dir = if path.is_file() { path.parent().unwrap_or(Path::new("")) } else { path };
        let texts = sources.files.into_iter().map(|(k, f)| (k, f.text)).collect();
        Ok(Side { label: spec.to_string(), model, prefix: dir_prefix(&dir.to_string_lossy()), texts })
    }

    /// Loads `path` at git revision `rev`.
    fn from_git(spec: &str, rev: &str, path: &str) -> Result<Side, DiffError> {
        let git_err = |message: String| DiffError::Git { spec: spec.to_string(), message };
        if rev.starts_with('-') {
            // `git cat-file -t -p:schema` would read it as options.
            return Err(git_err("a revision cannot start with `-`".to_string()));
        }
        let object = format!("{rev}:{path}");
        let kind = git(&["cat-file", "-t", &object]).map_err(git_err)?;
        let mut files = Vec::new();
        let (dir, single) = match kind.trim() {
            "tree" => {
                let names = git(&["ls-tree", "--full-tree", "-r", "-z", "--name-only", &object]).map_err(git_err)?;
                if let Some(bad) = names.split('\0').find(|n| crate::load::is_misnamed_schema_file(n)) {
                    return Err(git_err(format!("`{bad}`: {}", crate::load::MISNAMED_SCHEMA_FILE)));
                }
                for rel in names.split('\0').filter(|n| crate::load::is_schema_file(n)) {
                    let blob = if path.is_empty() || path.ends_with('/') {
                        format!("{object}{rel}")
                    } else {
                        format!("{object}/{rel}")
                    };
                    files.push((rel.to_string(), git(&["cat-file", "blob", &blob]).map_err(git_err)?));
                }
                (object.trim_end_matches('/').to_string(), None)
            }
            "blob" => {
                let (parent, name) = match path.rsplit_once('/') {
                    Some((d, n)) => (format!("{rev}:{d}"), n.to_string()),
                    None => (format!("{rev}:"), path.to_string()),
                };
                files.push((name.clone(), git(&["cat-file", "blob", &object]).map_err(git_err)?));
                (parent, Some(name))
            }
            other => return Err(git_err(format!("`{object}` is a {other}, not a directory or a file"))),
        };
        let texts = files.iter().map(|(k, t)| (k.clone(), LocatedText::new(t.clone()))).collect();
        let (model, _) = crate::load::load_memory(Path::new(&dir), files, single)
            .map_err(|errors| DiffError::Schema { spec: spec.to_string(), errors })?;
        let prefix = if dir.ends_with(':') { dir } else { format!("{dir}/") };
        Ok(Side { label: spec.to_string(), model, prefix, texts })
    }

    /// Where a model node is, with line and column.
    pub(crate) fn location(&self, o: &Origin) -> Location {
        let (line, col) = self.texts.get(&o.file).map_or((0, 0), |t| t.locate(&o.pointer));
        Location { file: format!("{}{}", self.prefix, o.file), line, col, pointer: o.pointer.clone() }
    }
}

/// `schema` -> `schema/`; the current folder -> nothing.
fn dir_prefix(dir: &str) -> String {
    let d = dir.trim_end_matches('/');
    if d.is_empty() || d == "." {
        String::new()
    } else {
        format!("{d}/")
    }
}

/// Runs git in the current folder; its standard output as text, or what went wrong.
fn git(args: &[&str]) -> Result<String, String> {
    let out = Command::new("git").args(args).output().map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.trim().lines().next().unwrap_or("git failed").to_string());
    }
    String::from_utf8(out.stdout).map_err(|_| format!("`git {}` printed text that is not UTF-8", args.join(" ")))
}
