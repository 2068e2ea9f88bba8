//! Replacing a set of files as one step. Every new file is first staged beside its target; then each target is
//! moved aside and the staged file moved into its place, and each stale file moved aside. Only when all of that
//! worked are the old files removed. If any step fails, the steps taken so far are undone in reverse order (the
//! old files moved back, staged files and created directories removed), so the output directory is as it was.

use std::io;
use std::path::{Path, PathBuf};

use super::{hidden_beside, staged_name, Error};

/// One step taken, and so one step to undo.
enum Step {
    /// A directory that did not exist.
    Created(PathBuf),
    /// A staged file written.
    Staged(PathBuf),
    /// A file moved from `from` to `to` on the way to replacing or deleting the output file `file`.
    Moved { from: PathBuf, to: PathBuf, file: PathBuf },
}

/// The name an old file is kept under beside `path` until the new files are all in place.
pub(super) fn kept_name(path: &Path) -> PathBuf {
    hidden_beside(path, "wiregen-old")
}

/// Writes each `(path, contents)` and deletes each of `delete`, all or nothing; once all is in place, removes the
/// files of `debris` (what a killed run left: in the order given), and returns those it removed.
///
/// # Errors
/// [`Error::Io`] for the first step that failed, when every step before it was undone; [`Error::NotRestored`]
/// when undoing failed too (it names the files that could not be put back).
pub(super) fn replace(
    write: &[(PathBuf, &[u8])],
    delete: &[PathBuf],
    debris: &[PathBuf],
) -> Result<Vec<PathBuf>, Error> {
    replace_with(write, delete, debris, &mut |from, to| std::fs::rename(from, to), &mut |p| std::fs::remove_file(p))
}

/// [`replace`], moving files with `rename` (a test makes it fail) and removing them with `remove` (a test
/// records the order).
fn replace_with(
    write: &[(PathBuf, &[u8])],
    delete: &[PathBuf],
    debris: &[PathBuf],
    rename: &mut dyn FnMut(&Path, &Path) -> io::Result<()>,
    remove: &mut dyn FnMut(&Path) -> io::Result<()>,
) -> Result<Vec<PathBuf>, Error> {
    // A directory where a file goes is the user's: refuse before anything is written.
    for path in write.iter().map(|(p, _)| p).chain(delete) {
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
            let source = io::Error::new(io::ErrorKind::IsADirectory, "a directory is in the way");
            return Err(Error::Io { path: path.clone(), source });
        }
    }
    let mut done = Vec::new();
    match apply(write, delete, rename, &mut done) {
        Ok(()) => {
            // The debris goes first: the old copies of this run's files include those of the manifests, which
            // name the files the debris belongs to (removed before it, a run killed between the two left debris
            // no manifest named, for good; helper 99).
            // An old copy this run moved a file aside to is this run's own, not debris (it replaced what a killed
            // run left under that name).
            let own: std::collections::HashSet<&PathBuf> = done
                .iter()
                .filter_map(|step| match step {
                    Step::Moved { to, file, .. } if *to == kept_name(file) => Some(to),
                    _ => None,
                })
                .collect();
            let removed: Vec<PathBuf> =
                debris.iter().filter(|p| !own.contains(p) && remove(p).is_ok()).cloned().collect();
            // The old copies go: those of deleted files first, then those of replaced files in the order of
            // `write` (the caller puts a file that names the others last, so a run killed here leaves it).
            let deletes: std::collections::HashSet<&PathBuf> = delete.iter().collect();
            let kept = |deleted: bool| {
                let deletes = &deletes;
                done.iter().filter_map(move |step| match step {
                    Step::Moved { to, file, .. } if *to == kept_name(file) && deletes.contains(file) == deleted => {
                        Some(to)
                    }
                    _ => None,
                })
            };
            for to in kept(true).chain(kept(false)) {
                let _ = remove(to);
            }
            Ok(removed)
        }
        Err(failed) => {
            let unrestored = undo(done, rename);
            if unrestored.is_empty() {
                Err(failed)
            } else {
                Err(Error::NotRestored { failed: Box::new(failed), unrestored })
            }
        }
    }
}

/// Takes the steps, recording each in `done`.
fn apply(
    write: &[(PathBuf, &[u8])],
    delete: &[PathBuf],
    rename: &mut dyn FnMut(&Path, &Path) -> io::Result<()>,
    done: &mut Vec<Step>,
) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    for (path, contents) in write {
        if let Some(dir) = path.parent() {
            let mut missing: Vec<&Path> =
                dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).collect();
            missing.reverse();
            for d in missing {
                std::fs::create_dir(d).map_err(io(d))?;
                done.push(Step::Created(d.to_path_buf()));
            }
        }
        let tmp = staged_name(path);
        // Recorded first: a write that fails half-way (a full disk) leaves a file to remove.
        done.push(Step::Staged(tmp.clone()));
        // Named after the output file: the staged name is ours, not the user's.
        super::create_staged(&tmp).and_then(|mut f| std::io::Write::write_all(&mut f, contents)).map_err(io(path))?;
    }
    for (path, _) in write {
        if std::fs::symlink_metadata(path).is_ok() {
            rename(path, &kept_name(path)).map_err(io(path))?;
            done.push(Step::Moved { from: path.clone(), to: kept_name(path), file: path.clone() });
        }
        rename(&staged_name(path), path).map_err(io(path))?;
        done.push(Step::Moved { from: staged_name(path), to: path.clone(), file: path.clone() });
    }
    for path in delete {
        rename(path, &kept_name(path)).map_err(io(path))?;
        done.push(Step::Moved { from: path.clone(), to: kept_name(path), file: path.clone() });
    }
    Ok(())
}

/// Undoes `done` in reverse order; returns the files it could not put back.
fn undo(done: Vec<Step>, rename: &mut dyn FnMut(&Path, &Path) -> io::Result<()>) -> Vec<PathBuf> {
    let mut unrestored = Vec::new();
    for step in done.into_iter().rev() {
        match step {
            Step::Moved { from, to, file } => {
                if rename(&to, &from).is_err() && unrestored.last() != Some(&file) {
                    unrestored.push(file);
                }
            }
            Step::Staged(tmp) => {
                if std::fs::symlink_metadata(&tmp).is_ok() && std::fs::remove_file(&tmp).is_err() {
                    unrestored.push(tmp);
                }
            }
            Step::Created(dir) => {
                if std::fs::remove_dir(&dir).is_err() {
                    unrestored.push(dir);
                }
            }
        }
    }
    unrestored
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wiregen-commit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("a")).expect("mkdir");
        std::fs::write(d.join("a/old.txt"), "old").expect("write");
        std::fs::write(d.join("a/stale.txt"), "stale").expect("write");
        std::fs::write(d.join("a/same.txt"), "same").expect("write");
        d
    }

    /// Every file below `d` with its bytes (directories as `None`).
    fn tree(d: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut out = BTreeMap::new();
        let mut todo = vec![d.to_path_buf()];
        while let Some(p) = todo.pop() {
            for e in std::fs::read_dir(&p).expect("read_dir").flatten() {
                if e.file_type().expect("type").is_dir() {
                    out.insert(e.path(), None);
                    todo.push(e.path());
                } else {
                    out.insert(e.path(), Some(std::fs::read(e.path()).expect("read")));
                }
            }
        }
        out
    }

    fn changes(d: &Path) -> (Vec<(PathBuf, &'static [u8])>, Vec<PathBuf>) {
        let write: Vec<(PathBuf, &[u8])> =
            vec![(d.join("a/old.txt"), b"new"), (d.join("b/c/fresh.txt"), b"fresh"), (d.join("a/added.txt"), b"added")];
        (write, vec![d.join("a/stale.txt")])
    }

    /// What a killed run left goes before this run's old copies: the last of those is the old manifest, which
    /// names the files the leftovers belong to (removed the other way round, a run killed in between left
    /// leftovers no manifest named, for good; helper 99).
    #[test]
    fn leftovers_go_before_the_old_copies_and_those_of_deleted_files_before_those_of_replaced_ones() {
        let d = dir("debris");
        let (write, delete) = changes(&d);
        let debris = [d.join("a/.gone.txt.wiregen-old"), d.join("a/.gone.txt.wiregen-tmp")];
        for p in &debris {
            std::fs::write(p, "left").unwrap();
        }
        let mut order = Vec::new();
        let removed = replace_with(&write, &delete, &debris, &mut |from, to| std::fs::rename(from, to), &mut |p| {
            order.push(p.strip_prefix(&d).unwrap().display().to_string());
            std::fs::remove_file(p)
        })
        .expect("replaced");
        assert_eq!(removed, debris);
        assert_eq!(
            order,
            [
                "a/.gone.txt.wiregen-old",
                "a/.gone.txt.wiregen-tmp",
                "a/.stale.txt.wiregen-old",
                "a/.old.txt.wiregen-old"
            ]
        );
        let got: Vec<String> = tree(&d).keys().map(|p| p.strip_prefix(&d).unwrap().display().to_string()).collect();
        assert_eq!(got, ["a", "a/added.txt", "a/old.txt", "a/same.txt", "b", "b/c", "b/c/fresh.txt"]);
    }

    /// A killed run's old copy of a file this run moves aside again is replaced by this run's own copy: it is not
    /// reported as a leftover removed. The old copy of a file that is not there (added by this run) stays one.
    #[test]
    fn an_old_copy_this_run_makes_again_is_its_own_not_a_leftover() {
        let d = dir("own-copy");
        let (write, delete) = changes(&d);
        let debris =
            [d.join("a/.old.txt.wiregen-old"), d.join("a/.stale.txt.wiregen-old"), d.join("a/.added.txt.wiregen-old")];
        for p in &debris {
            std::fs::write(p, "left").unwrap();
        }
        let removed = replace(&write, &delete, &debris).expect("replaced");
        assert_eq!(removed, [d.join("a/.added.txt.wiregen-old")]);
        let got: Vec<String> = tree(&d).keys().map(|p| p.strip_prefix(&d).unwrap().display().to_string()).collect();
        assert_eq!(got, ["a", "a/added.txt", "a/old.txt", "a/same.txt", "b", "b/c", "b/c/fresh.txt"]);
    }

    #[test]
    fn all_steps_done_leave_only_the_new_files() {
        let d = dir("ok");
        let (write, delete) = changes(&d);
        replace(&write, &delete, &[]).expect("replaced");
        let got: Vec<String> = tree(&d).keys().map(|p| p.strip_prefix(&d).unwrap().display().to_string()).collect();
        assert_eq!(got, ["a", "a/added.txt", "a/old.txt", "a/same.txt", "b", "b/c", "b/c/fresh.txt"]);
        assert_eq!(std::fs::read(d.join("a/old.txt")).unwrap(), b"new");
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Whichever move fails, the directory ends as it began: old files back, nothing staged, no new directory.
    #[test]
    fn a_failure_at_any_step_leaves_the_directory_as_it_was() {
        let d = dir("fail");
        let before = tree(&d);
        let (write, delete) = changes(&d);
        // The successful run makes 5 moves (3 new files in place, 1 old file and 1 stale one aside).
        for fail_at in 0..5 {
            let mut n = 0;
            let mut rename = |from: &Path, to: &Path| {
                n += 1;
                if n == fail_at + 1 {
                    return Err(io::Error::other("injected"));
                }
                std::fs::rename(from, to)
            };
            let err = replace_with(&write, &delete, &[], &mut rename, &mut |p| std::fs::remove_file(p))
                .expect_err("the injected failure");
            assert!(matches!(err, Error::Io { .. }), "move {fail_at}: {err}");
            assert_eq!(tree(&d), before, "move {fail_at} failed and the directory changed");
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_directory_in_place_of_a_file_is_refused_before_any_write() {
        let d = dir("in-the-way");
        std::fs::create_dir(d.join("a/added.txt")).expect("mkdir");
        let before = tree(&d);
        let (write, delete) = changes(&d);
        let err = replace(&write, &delete, &[]).expect_err("a directory in the way");
        assert!(matches!(&err, Error::Io { path, .. } if path.ends_with("a/added.txt")), "{err}");
        assert_eq!(tree(&d), before);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_failed_undo_names_what_it_could_not_put_back() {
        let d = dir("undo");
        let (write, delete) = changes(&d);
        let mut n = 0;
        // The 3rd move fails; after it, every move fails, so the undo cannot move the first two back.
        let mut rename = |from: &Path, to: &Path| {
            n += 1;
            if n >= 3 {
                return Err(io::Error::other("injected"));
            }
            std::fs::rename(from, to)
        };
        let err = replace_with(&write, &delete, &[], &mut rename, &mut |p| std::fs::remove_file(p))
            .expect_err("the injected failure");
        let Error::NotRestored { unrestored, .. } = &err else { panic!("{err}") };
        assert_eq!(unrestored, &[d.join("a/old.txt")], "{err}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
