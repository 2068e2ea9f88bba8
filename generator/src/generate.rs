//! `generate` and `check`: run the emitters in memory, then write only what changed (or compare).
//!
//! Each output owns one subdirectory of the output root and records the files it produced in a manifest
//! (`.wiregen-manifest`), so files it no longer produces are deleted, while files it never produced (a lockfile,
//! `node_modules/`, `dist/`) are left alone. Nothing is written unless every emitter succeeded, and the files are
//! replaced all or nothing ([`commit`]): a write that fails half-way is undone.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::diag::SchemaErrors;
use crate::emit::{EmitError, EmitOptions, OutFile, Output};
use crate::load;

mod commit;

/// The manifest file each output keeps in its subdirectory.
pub(crate) const MANIFEST: &str = ".wiregen-manifest";

/// What to generate, from where, to where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The schema directory (`schema/`).
    pub schema_dir: PathBuf,
    /// The output root (`generated/`); each output writes below `<out_dir>/<output name>/`.
    pub out_dir: PathBuf,
    /// Which outputs to produce.
    pub outputs: Vec<Output>,
    /// What the emitters need besides the model (the command each file's `@generated` header names).
    pub emit: EmitOptions,
}

impl Options {
    /// The outputs to produce, each once in the order first named: an output named twice (`--only docs --only
    /// docs`) rendered its files twice, and the second write found the first one's staged copy gone and deleted
    /// the file (helper 82).
    pub fn outputs(&self) -> Vec<Output> {
        let mut out: Vec<Output> = Vec::with_capacity(self.outputs.len());
        for o in &self.outputs {
            if !out.contains(o) {
                out.push(*o);
            }
        }
        out
    }

    /// All outputs from `schema_dir` into `out_dir`.
    pub fn new(schema_dir: impl Into<PathBuf>, out_dir: impl Into<PathBuf>) -> Self {
        Options {
            schema_dir: schema_dir.into(),
            out_dir: out_dir.into(),
            outputs: Output::ALL.to_vec(),
            emit: EmitOptions::default(),
        }
    }
}

/// Why generation failed. Nothing was written (a failed write is undone), except for [`Error::NotRestored`].
///
/// `Display` says what failed at this level; the cause is [`source()`](std::error::Error::source) (the schema
/// diagnostics, the emitter's error, the I/O error), so a report that walks the chain shows each line once.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The schema is broken.
    Schema(SchemaErrors),
    /// An emitter failed.
    Emit(EmitError),
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Writing failed, and putting back what was already replaced failed too: the output directory is changed.
    NotRestored {
        /// The failure that started the undo.
        failed: Box<Error>,
        /// The files (and directories) that could not be put back as they were.
        unrestored: Vec<PathBuf>,
    },
    /// An output `.json` file (the bundled schema, the TypeScript package's `package.json`) would be written into
    /// the schema directory (an output root in it, or that holds it, such as the directory above `schema/`), where
    /// the next load would read it as a schema file. Nothing was written.
    IntoSchema {
        /// The first such output file.
        path: PathBuf,
        /// The schema directory.
        schema: PathBuf,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Schema(e) => {
                write!(f, "the schema has {}", e.count("error"))
            }
            Error::Emit(_) => f.write_str("an emitter failed"),
            Error::Io { path, .. } => write!(f, "cannot update {}", path.display()),
            Error::NotRestored { unrestored, .. } => {
                f.write_str("writing failed, and these could not be put back as they were:")?;
                for p in unrestored {
                    write!(f, " {}", p.display())?;
                }
                Ok(())
            }
            Error::IntoSchema { path, schema } => write!(
                f,
                "{} would be written into the schema directory {} (the next load would read it as a schema \
                 file); choose an output directory outside it",
                path.display(),
                schema.display()
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Schema(e) => Some(e),
            Error::Emit(e) => Some(e),
            Error::Io { source, .. } => Some(source),
            Error::NotRestored { failed, .. } => Some(failed.as_ref()),
            Error::IntoSchema { .. } => None,
        }
    }
}

/// What `generate` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GenerateReport {
    /// Files written because they were new or changed.
    pub written: Vec<PathBuf>,
    /// Files left alone because they were already up to date.
    pub unchanged: Vec<PathBuf>,
    /// Stale files deleted.
    pub deleted: Vec<PathBuf>,
}

/// What `check` found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Files that would be created.
    pub missing: Vec<PathBuf>,
    /// Files whose contents differ, each with a short unified-style diff.
    pub changed: Vec<(PathBuf, String)>,
    /// Files that would be deleted.
    pub extra: Vec<PathBuf>,
    /// Files that are up to date.
    pub fresh: usize,
}

impl CheckReport {
    /// Whether everything is up to date.
    pub fn is_clean(&self) -> bool {
        self.missing.is_empty() && self.changed.is_empty() && self.extra.is_empty()
    }
}

/// Loads the schema and renders the requested outputs in memory, with their manifests.
///
/// # Errors
/// A broken schema or a failing emitter.
pub(crate) fn render(opts: &Options) -> Result<Vec<OutFile>, Error> {
    let (proto, sources) = load::load_with_sources(&opts.schema_dir).map_err(Error::Schema)?;
    let mut files = Vec::new();
    for o in &opts.outputs() {
        // An output's refusal names its place in the schema like the loader's errors.
        let mut produced = o.emit(&proto, &opts.emit).map_err(|e| {
            let located = e.located(&sources);
            if located.is_empty() {
                Error::Emit(e)
            } else {
                Error::Schema(SchemaErrors(located))
            }
        })?;
        let mut names: Vec<String> = produced.iter().map(|f| f.path[o.name().len() + 1..].to_string()).collect();
        names.sort();
        let mut manifest = format!("# @generated by `{}`: the files this output owns\n", opts.emit.regenerate);
        for n in names {
            manifest.push_str(&n);
            manifest.push('\n');
        }
        produced.push(OutFile::new(format!("{}/{MANIFEST}", o.name()), manifest));
        files.extend(produced);
    }
    Ok(files)
}

/// The most bytes of a manifest on disk that are read: one line per file an output owns.
const MANIFEST_LIMIT: u64 = 16 << 20;

/// The manifest at `path` when it is a regular file of at most [`MANIFEST_LIMIT`] bytes (a FIFO blocked `check`
/// and `generate`, `/dev/zero` or a huge sparse file grew them by gigabytes); otherwise none, and the output's
/// new manifest replaces it. A regular file that cannot be read is an error: it alone names what its output
/// owned, and replaced unread, the files the output no longer produces stayed with no list naming them (a
/// manifest made unreadable by `chmod 000`: `generate` exited 0, then `check` said fresh; helper 99).
fn read_manifest(path: &Path) -> Result<Option<String>, Error> {
    match on_disk(path, MANIFEST_LIMIT) {
        OnDisk::File(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        OnDisk::Unreadable(source) => Err(Error::Io { path: path.to_path_buf(), source }),
        OnDisk::Missing | OnDisk::Other(_) => Ok(None),
    }
}

/// Files an output's manifest on disk lists that the new render no longer produces, whether or not they are
/// still there; also those its kept copy lists (`.wiregen-manifest.wiregen-old`: a run killed after its new
/// manifest was in place, and before the files it no longer lists were gone, left them with no manifest naming
/// them, so neither `check` nor the next `generate` saw them).
fn owned_before(opts: &Options, files: &[OutFile]) -> Result<Vec<PathBuf>, Error> {
    let produced: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let mut out = Vec::new();
    for o in &opts.outputs() {
        let manifest = opts.out_dir.join(o.name()).join(MANIFEST);
        for text in [read_manifest(&manifest)?, read_manifest(&commit::kept_name(&manifest))?].into_iter().flatten() {
            for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
                if line.split('/').any(|seg| seg == ".." || seg.is_empty()) {
                    continue;
                }
                let rel = format!("{}/{}", o.name(), line);
                if !produced.contains(rel.as_str()) {
                    out.push(opts.out_dir.join(rel));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Folds an old manifest a killed run kept aside into the manifest in place (the files either lists), so that this
/// run, moving the manifest in place aside in its turn, does not replace the only list that names a file an
/// earlier run stopped producing (two kills in a row lost it, and `check` said the tree was fresh).
fn fold_kept_manifests(opts: &Options) -> Result<(), Error> {
    for o in &opts.outputs() {
        let manifest = opts.out_dir.join(o.name()).join(MANIFEST);
        let kept = commit::kept_name(&manifest);
        let Some(old) = read_manifest(&kept)? else { continue };
        let current = read_manifest(&manifest)?.unwrap_or_default();
        let mut lines: Vec<&str> = current.lines().collect();
        let mut seen: BTreeSet<&str> = lines.iter().copied().collect();
        for l in old.lines().filter(|l| !l.starts_with('#')) {
            if seen.insert(l) {
                lines.push(l);
            }
        }
        let mut text = lines.join("\n");
        text.push('\n');
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        let staged = staged_name(&manifest);
        create_staged(&staged)
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
            .map_err(io(&manifest))?;
        std::fs::rename(&staged, &manifest).map_err(io(&manifest))?;
        std::fs::remove_file(&kept).map_err(io(&kept))?;
    }
    Ok(())
}

/// Of the files outputs owned ([`owned_before`]), those still there: stale, to be deleted.
fn stale(owned: &[PathBuf]) -> Vec<PathBuf> {
    owned.iter().filter(|p| p.exists()).cloned().collect()
}

/// Regenerates the outputs: writes new and changed files, deletes stale ones, leaves the rest untouched.
///
/// # Errors
/// A broken schema or a failing emitter (then nothing is written), or an I/O error while writing.
pub fn generate(opts: &Options) -> Result<GenerateReport, Error> {
    let files = render(opts)?;
    if opts.schema_dir.is_dir() {
        let schema = absolute(&opts.schema_dir);
        let read_back =
            |f: &&OutFile| load::is_schema_file(&f.path) && absolute(&opts.out_dir.join(&f.path)).starts_with(&schema);
        if let Some(f) = files.iter().find(read_back) {
            return Err(Error::IntoSchema { path: opts.out_dir.join(&f.path), schema: opts.schema_dir.clone() });
        }
    }
    // One run at a time into one directory (the lock is on the output root, so it has to exist).
    // The directories this creates (the root and any missing above it) go again if writing fails.
    let created: Vec<&Path> =
        opts.out_dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).collect();
    not_directories(opts)?;
    std::fs::create_dir_all(&opts.out_dir).map_err(|source| Error::Io { path: opts.out_dir.clone(), source })?;
    let lock = lock_dir(&opts.out_dir, true);
    let done = write_outputs(opts, &files);
    drop(lock);
    if done.is_err() {
        for d in created {
            let _ = std::fs::remove_dir(d);
        }
    }
    done
}

/// The writing part of [`generate`], with the output root locked.
fn write_outputs(opts: &Options, files: &[OutFile]) -> Result<GenerateReport, Error> {
    fold_kept_manifests(opts)?;
    // Read the old manifests before the new ones replace them.
    let owned = owned_before(opts, files)?;
    let stale_files = stale(&owned);
    let mut report = GenerateReport::default();
    let mut to_write = Vec::new();
    for f in files {
        let path = opts.out_dir.join(&f.path);
        match on_disk(&path, compare_limit(f.contents.as_bytes())) {
            OnDisk::File(old) if same_but_command(&old, f.contents.as_bytes()) => report.unchanged.push(path),
            _ => to_write.push((path, f)),
        }
    }
    // All or nothing: a failure puts back what was replaced (`commit`). The manifests go last, so the old copy of
    // one is the last file removed: until then it names what the outputs owned.
    to_write.sort_by_key(|(p, _)| is_manifest(p));
    let write: Vec<(PathBuf, &[u8])> = to_write.iter().map(|(p, f)| (p.clone(), f.contents.as_bytes())).collect();
    // What a run that was killed half-way left beside the outputs goes once every output is in place, the old
    // manifests' copies last, and before this run's old copies (of its manifests too).
    let mut left = leftovers(opts, files, &owned);
    left.sort_by_key(|p| p.file_name().is_some_and(|n| *n == *kept_manifest_name()));
    let removed = commit::replace(&write, &stale_files, &left)?;
    report.written = write.into_iter().map(|(p, _)| p).collect();
    report.deleted = stale_files;
    report.deleted.extend(removed);
    Ok(report)
}

/// Whether `p` is an output's manifest.
fn is_manifest(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == MANIFEST)
}

/// The name of a manifest's kept copy ([`commit::kept_name`]).
fn kept_manifest_name() -> std::ffi::OsString {
    commit::kept_name(Path::new(MANIFEST)).into_os_string()
}

/// `p` made absolute with symbolic links resolved as far as it exists (the rest appended as it is), so two paths
/// to one place compare equal.
fn absolute(p: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = p;
    loop {
        if let Ok(found) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(found, |acc, c| acc.join(c));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
            }
            _ => return p.to_path_buf(),
        }
    }
}

/// The name a file is staged under beside `path` before it replaces it (a rename within one directory).
pub(crate) fn staged_name(path: &Path) -> PathBuf {
    hidden_beside(path, "wiregen-tmp")
}

/// `.<file name>.<suffix>` in `path`'s directory: the hidden files wiregen keeps beside an output while replacing it.
fn hidden_beside(path: &Path, suffix: &str) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{suffix}"))
}

/// Creates the staged file `path` afresh: whatever is there (a file left by a run that was killed, a symbolic link
/// someone put there) is removed first, never written through.
pub(crate) fn create_staged(path: &Path) -> std::io::Result<std::fs::File> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::fs::OpenOptions::new().write(true).create_new(true).open(path)
}

/// What is on disk where an output file goes.
enum OnDisk {
    /// Nothing.
    Missing,
    /// A file, with its bytes.
    File(Vec<u8>),
    /// Something that is not the output: a directory, a device, a FIFO (read, it would block or never end), or a
    /// file longer than the reader's bound (not read whole).
    Other(&'static str),
    /// A regular file that reading failed on.
    Unreadable(std::io::Error),
}

/// The most bytes of a file on disk read to compare it with `new`: the command in the header is the only part
/// that may differ, and it is one line.
fn compare_limit(new: &[u8]) -> u64 {
    (new.len() as u64).saturating_mul(2) + 65_536
}

/// Reads what is at `path` when it is a regular file of at most `most` bytes, without blocking on a FIFO or
/// reading a device without end.
fn on_disk(path: &Path, most: u64) -> OnDisk {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) if std::fs::symlink_metadata(path).is_ok() => return OnDisk::Other("a broken symbolic link"),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return OnDisk::Other("a file is in the way of its directory")
        }
        Err(_) => return OnDisk::Missing,
    };
    if meta.is_dir() {
        return OnDisk::Other("a directory is in the way");
    }
    if !meta.is_file() {
        return OnDisk::Other("not a regular file (a device, a FIFO or a socket)");
    }
    if meta.len() > most {
        return OnDisk::Other("a file far longer than the output");
    }
    match std::fs::read(path) {
        Ok(b) => OnDisk::File(b),
        Err(e) => OnDisk::Unreadable(e),
    }
}

/// Locks the output root against another `generate` (exclusive) or while `check` reads it (shared), for as long
/// as the returned handle lives: two runs into one directory interleaved their files (a tree of neither) and
/// failed on each other's staged files. `None` when the directory does not exist (nothing to check) or cannot be
/// locked where its file system does not lock.
pub(crate) fn lock_dir(dir: &Path, exclusive: bool) -> Option<std::fs::File> {
    // Only a directory is opened: opening a FIFO given as `--out` blocked `check` for ever.
    if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let f = std::fs::File::open(dir).ok()?;
    let locked = if exclusive { f.lock() } else { f.lock_shared() };
    locked.ok().map(|()| f)
}

/// Files an interrupted `generate` left beside the outputs: the staged new copy and the kept old one
/// ([`hidden_beside`]) of a file an output writes, or of one it owned and deletes (`owned`). A user's file that
/// only looks like one (`.package-lock.json.wiregen-old`, beside no output of that name) is not one.
fn leftovers(opts: &Options, files: &[OutFile], owned: &[PathBuf]) -> Vec<PathBuf> {
    let outputs = files.iter().map(|f| opts.out_dir.join(&f.path)).chain(owned.iter().cloned());
    let mut out = Vec::new();
    for path in outputs {
        for hidden in [staged_name(&path), commit::kept_name(&path)] {
            if std::fs::symlink_metadata(&hidden).is_ok_and(|m| !m.is_dir()) {
                out.push(hidden);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What stands, and is no directory (a file, a device, a FIFO, a link that leads to nothing), where a directory of
/// the outputs goes: at `out` or at the nearest of its parents that is there (`--out afile/sub`). Neither
/// `generate` nor `check` can work there, and both say so, `wanted` saying what `out` is for (`generate` said
/// `File exists (os error 17)`, and `check` listed every file stale and a fix that could not work).
fn not_a_directory(out: &Path, wanted: &str) -> Result<(), Error> {
    let at = |p: &Path| -> Option<&'static str> {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => None,
            Ok(m) if m.is_file() => Some("a file"),
            Ok(_) => Some("a device, a FIFO or a socket"),
            Err(_) if std::fs::symlink_metadata(p).is_ok() => Some("a symbolic link that leads to nothing"),
            Err(_) => None,
        }
    };
    // The path itself, or the nearest of its parents that is there.
    let nearest = out.ancestors().find(|p| p.as_os_str().is_empty() || std::fs::symlink_metadata(p).is_ok());
    let Some(p) = nearest.filter(|p| !p.as_os_str().is_empty()) else { return Ok(()) };
    let Some(what) = at(p) else { return Ok(()) };
    let how = if p == out { wanted } else { "the outputs go in a directory below it" };
    let source =
        std::io::Error::new(std::io::ErrorKind::NotADirectory, format!("it is {what}, not a directory: {how}"));
    Err(Error::Io { path: p.to_path_buf(), source })
}

/// [`not_a_directory`] of `--out` and of each output's subdirectory.
fn not_directories(opts: &Options) -> Result<(), Error> {
    not_a_directory(&opts.out_dir, "--out takes the directory the outputs go in")?;
    opts.outputs().iter().try_for_each(|o| {
        not_a_directory(&opts.out_dir.join(o.name()), &format!("the `{}` output goes in a directory there", o.name()))
    })
}

/// Regenerates in memory and compares with what is on disk.
///
/// # Errors
/// A broken schema or a failing emitter; an output root that is no directory.
pub fn check(opts: &Options) -> Result<CheckReport, Error> {
    let files = render(opts)?;
    not_directories(opts)?;
    // A `generate` under way finishes first: its half-replaced tree is not reported.
    let _lock = lock_dir(&opts.out_dir, false);
    let mut report = CheckReport::default();
    for f in &files {
        let path = opts.out_dir.join(&f.path);
        match on_disk(&path, compare_limit(f.contents.as_bytes())) {
            OnDisk::File(old) if same_but_command(&old, f.contents.as_bytes()) => report.fresh += 1,
            OnDisk::File(old) => {
                let diff = short_diff(&String::from_utf8_lossy(&old), &f.contents);
                report.changed.push((path, diff));
            }
            OnDisk::Other(what) => report.changed.push((path, format!("({what})\n"))),
            OnDisk::Unreadable(e) => report.changed.push((path, format!("(a file that cannot be read: {e})\n"))),
            OnDisk::Missing => report.missing.push(path),
        }
    }
    // A manifest that cannot be read is reported above (changed: "a file that cannot be read"); what it named is
    // not known, so no file is called extra for it.
    let owned = owned_before(opts, &files).unwrap_or_default();
    report.extra = stale(&owned);
    let left = leftovers(opts, &files, &owned);
    report.extra.extend(left);
    Ok(report)
}

/// Whether a file on disk is the one rendered but for the command its `@generated by` header names. That command
/// is spelt from where `generate` ran (`--schema ../a/schema` from one directory is `--schema schema` from
/// another, or a path through a link), not from the schema: a file generated elsewhere is neither stale nor
/// rewritten for it.
fn same_but_command(old: &[u8], new: &[u8]) -> bool {
    fn without_commands(text: &[u8]) -> Vec<&[u8]> {
        const MARK: &[u8] = b"@generated by `";
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(i) = rest.windows(MARK.len()).position(|w| w == MARK) {
            let after = &rest[i + MARK.len()..];
            match after.iter().position(|&b| b == b'`' || b == b'\n') {
                Some(j) if after[j] == b'`' => {
                    pieces.push(&rest[..i + MARK.len()]);
                    rest = &after[j..];
                }
                _ => break,
            }
        }
        pieces.push(rest);
        pieces
    }
    old == new || without_commands(old) == without_commands(new)
}

/// A short line diff: the changed lines, each run of changes with two lines of context around it under a `@@ line N
/// @@` header (N: its first line in the file on disk), at most 40 lines in all, each cut after 400 bytes. The lines between
/// the common start and end are matched by a longest common subsequence, so a one-line change shows as one line
/// removed and one added; past 4,000,000 pairs of lines to compare, the middle is shown whole.
pub fn short_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    // The edit script over the whole files: (old line, new line) for a kept line, one side alone for a change.
    let mut ops: Vec<(Option<usize>, Option<usize>)> = (0..prefix).map(|i| (Some(i), Some(i))).collect();
    ops.extend(middle_ops(am, bm).into_iter().map(|(i, j)| (i.map(|i| i + prefix), j.map(|j| j + prefix))));
    ops.extend((0..suffix).map(|k| (Some(a.len() - suffix + k), Some(b.len() - suffix + k))));
    const CONTEXT: usize = 2;
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0.is_none() || ops[k].1.is_none()).collect();
    if changed.is_empty() {
        return "(the files differ only in line endings or a final newline)\n".to_string();
    }
    let mut out = String::new();
    let mut shown = 0;
    let mut k = 0;
    while k < changed.len() {
        // One hunk: changes whose gaps of kept lines fit in twice the context.
        let first = changed[k];
        let mut last = first;
        while k + 1 < changed.len() && changed[k + 1] - last <= 2 * CONTEXT + 1 {
            k += 1;
            last = changed[k];
        }
        k += 1;
        let (from, to) = (first.saturating_sub(CONTEXT), (last + CONTEXT + 1).min(ops.len()));
        let line = ops[from..to].iter().find_map(|o| o.0).map_or(a.len(), |i| i) + 1;
        out.push_str(&format!("@@ line {line} @@\n"));
        for (at, &(i, j)) in ops.iter().enumerate().take(to).skip(from) {
            if shown == SHORT_DIFF_LINES {
                let rest = changed.iter().filter(|&&c| c >= at).count();
                out.push_str(&format!(
                    "... (diff cut: {})\n",
                    crate::engine::counted(rest as u64, "more changed line", "more changed lines")
                ));
                return out;
            }
            shown += 1;
            match (i, j) {
                (Some(i), Some(_)) => out.push_str(&format!(" {}\n", shown_line(a[i]))),
                (Some(i), None) => out.push_str(&format!("-{}\n", shown_line(a[i]))),
                (None, Some(j)) => out.push_str(&format!("+{}\n", shown_line(b[j]))),
                (None, None) => {}
            }
        }
    }
    out
}

/// The most lines [`short_diff`] shows.
const SHORT_DIFF_LINES: usize = 40;

/// The most bytes of one line [`short_diff`] shows.
const SHORT_DIFF_LINE_BYTES: usize = 400;

/// A line as [`short_diff`] shows it: at most [`SHORT_DIFF_LINE_BYTES`] (cut at a character boundary), then how
/// much more there is (a description of 60 MB in one line was printed whole, six times: 360 MB of "short" diff;
/// helper 99).
fn shown_line(line: &str) -> std::borrow::Cow<'_, str> {
    if line.len() <= SHORT_DIFF_LINE_BYTES {
        return line.into();
    }
    let mut end = SHORT_DIFF_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... (line cut: {} more bytes)", &line[..end], line.len() - end).into()
}

/// The most pairs of lines [`short_diff`] compares to match the changed middle of two files.
const SHORT_DIFF_CELLS: usize = 4_000_000;

/// The edit script of two runs of lines: a longest common subsequence kept, the rest removed (old side) then added
/// (new side) at each place; with more than [`SHORT_DIFF_CELLS`] pairs, every line removed then every line added.
fn middle_ops(a: &[&str], b: &[&str]) -> Vec<(Option<usize>, Option<usize>)> {
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > SHORT_DIFF_CELLS {
        return (0..n).map(|i| (Some(i), None)).chain((0..m).map(|j| (None, Some(j)))).collect();
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let w = m + 1;
    let mut lcs = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * w + j] =
                if a[i] == b[j] { lcs[(i + 1) * w + j + 1] + 1 } else { lcs[(i + 1) * w + j].max(lcs[i * w + j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((Some(i), Some(j)));
            i += 1;
            j += 1;
        } else if j == m || (i < n && lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
            ops.push((Some(i), None));
            i += 1;
        } else {
            ops.push((None, Some(j)));
            j += 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An old manifest a killed run kept aside is folded into the one in place before a run moves that aside in
    /// its turn: replaced, it was the only list naming a file an earlier run stopped producing (two kills in a row
    /// left the file for good). Killed after the fold, or after the manifest in place was moved aside again, the
    /// file is still named.
    #[test]
    fn a_kept_manifest_is_folded_into_the_one_in_place_before_it_is_replaced() {
        let out = std::env::temp_dir().join(format!("wiregen-fold-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(out.join("rust")).unwrap();
        let manifest = out.join("rust").join(MANIFEST);
        std::fs::write(&manifest, "# header\nCargo.toml\nsrc/lib.rs\n").unwrap();
        std::fs::write(commit::kept_name(&manifest), "# header\nCargo.toml\nsrc/lib.rs\nsrc/rt_regex.rs\n").unwrap();
        let opts = Options { outputs: vec![Output::Rust], ..Options::new("schema", &out) };
        fold_kept_manifests(&opts).unwrap();
        assert_eq!(std::fs::read_to_string(&manifest).unwrap(), "# header\nCargo.toml\nsrc/lib.rs\nsrc/rt_regex.rs\n");
        assert!(!commit::kept_name(&manifest).exists());
        // The next run, killed once it moved this manifest aside, leaves it where the run after reads it.
        std::fs::rename(&manifest, commit::kept_name(&manifest)).unwrap();
        std::fs::create_dir_all(out.join("rust/src")).unwrap();
        std::fs::write(out.join("rust/src/rt_regex.rs"), "// left").unwrap();
        let files = [OutFile::new("rust/src/lib.rs".to_string(), String::new())];
        assert_eq!(
            owned_before(&opts, &files).unwrap(),
            [out.join("rust/Cargo.toml"), out.join("rust/src/rt_regex.rs")]
        );
        let _ = std::fs::remove_dir_all(&out);
    }

    /// A manifest that is there but cannot be read stops the run before anything is written: it alone names the
    /// files its output owned (read as none, the files the new schema no longer produces were orphaned, and
    /// `check` then said fresh; helper 99). Likewise the copy a killed run kept aside.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_manifest_that_cannot_be_read_is_an_error_not_an_empty_list() {
        let out = std::env::temp_dir().join(format!("wiregen-unreadable-manifest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(out.join("rust")).unwrap();
        let manifest = out.join("rust").join(MANIFEST);
        // A regular file every read of fails, as root too (whom `chmod 000` does not stop): /proc/self/mem, whose
        // first page is not mapped.
        std::os::unix::fs::symlink("/proc/self/mem", &manifest).unwrap();
        assert!(matches!(on_disk(&manifest, MANIFEST_LIMIT), OnDisk::Unreadable(_)));
        let opts = Options { outputs: vec![Output::Rust], ..Options::new("schema", &out) };
        let files = [OutFile::new("rust/src/lib.rs".to_string(), String::new())];
        let e = owned_before(&opts, &files).unwrap_err();
        assert!(matches!(&e, Error::Io { path, .. } if *path == manifest), "{e:?}");
        std::fs::remove_file(&manifest).unwrap();
        std::os::unix::fs::symlink("/proc/self/mem", commit::kept_name(&manifest)).unwrap();
        assert!(
            matches!(fold_kept_manifests(&opts), Err(Error::Io { path, .. }) if path == commit::kept_name(&manifest))
        );
        assert!(owned_before(&opts, &files).is_err());
        let _ = std::fs::remove_dir_all(&out);
    }

    #[test]
    fn the_short_diff_shows_each_changed_line_with_its_context() {
        let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 5\n", "line five\n").replace("line 30\n", "line thirty\n");
        // Two changes far apart: two hunks, each one line removed and one added (it showed the 26 lines between
        // them as removed and added again, and cut the second change off).
        assert_eq!(
            short_diff(&old, &new),
            "@@ line 3 @@\n line 3\n line 4\n-line 5\n+line five\n line 6\n line 7\n\
             @@ line 28 @@\n line 28\n line 29\n-line 30\n+line thirty\n line 31\n line 32\n"
        );
        let inserted = old.replace("line 10\n", "line 10\nnew\n");
        assert_eq!(short_diff(&old, &inserted), "@@ line 9 @@\n line 9\n line 10\n+new\n line 11\n line 12\n");
        let longer: String = (1..=50).map(|i| format!("line {i}\n")).collect();
        let cut = short_diff("", &longer);
        assert!(cut.ends_with("+line 40\n... (diff cut: 10 more changed lines)\n"), "{cut}");
        assert_eq!(cut.lines().count(), SHORT_DIFF_LINES + 2);
        // A long line is cut too, at a character boundary (each `é` is two bytes).
        let long = "é".repeat(1_000);
        let diff = short_diff("a\n", &format!("{long}\n"));
        assert_eq!(diff, format!("@@ line 1 @@\n-a\n+{}... (line cut: 1600 more bytes)\n", "é".repeat(200)));
    }

    #[test]
    fn the_command_a_header_names_does_not_make_a_file_differ() {
        let header = |cmd: &str| format!("// @generated by `{cmd}` from the schema.\nfn f() {{}}\n");
        let here = header("cargo run -p wiregen -- generate --schema schema --out out");
        let there = header("cargo run -p wiregen -- generate --schema ../a/schema --out ../a/out");
        assert!(same_but_command(here.as_bytes(), there.as_bytes()));
        assert!(!same_but_command(here.as_bytes(), here.replace("f()", "g()").as_bytes()));
        // The mark with no closing backtick on its line is text like any other.
        assert!(!same_but_command(b"@generated by `a\nx", b"@generated by `b\nx"));
        assert!(same_but_command(b"no header", b"no header"));
    }

    fn levels(e: &dyn std::error::Error) -> Vec<String> {
        std::iter::successors(Some(e), |e| e.source()).map(|e| e.to_string()).collect()
    }

    #[test]
    fn a_template_error_chains_through_three_levels_without_repeats() {
        let detail = "`nope` is undefined";
        let e = Error::Emit(EmitError::Template(minijinja::Error::new(minijinja::ErrorKind::UndefinedError, detail)));
        let levels = levels(&e);
        assert_eq!(levels.len(), 3, "{levels:?}");
        assert_eq!(levels[..2], ["an emitter failed", "a template failed to render"]);
        assert_eq!(levels.iter().filter(|l| l.contains(detail)).count(), 1, "{levels:?}");
    }

    #[test]
    fn an_io_error_says_which_file_and_leaves_the_cause_to_source() {
        let e = Error::Io { path: "out/x".into(), source: std::io::Error::other("disk full") };
        assert_eq!(levels(&e), ["cannot update out/x", "disk full"]);
    }
}
