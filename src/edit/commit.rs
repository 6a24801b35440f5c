//! Writing an [`EditPlan`] to disk: temporary files, then renames.
//!
//! The guarantee, in order of what happens:
//! 1. Every file the plan reads from is checked against the plan's `before` bytes
//!    (and every file it creates must still be missing); if anything changed on disk
//!    since planning, nothing is written.
//! 2. Every new content is written to a temporary file in its target's directory
//!    (missing parent directories are created), given its final permissions, and
//!    fsynced. A failure up to here leaves the disk as it was: the temporary files
//!    and the directories created for them are removed.
//! 3. Only then is each temporary file renamed over its target (atomic per file:
//!    a reader sees the old bytes or the new ones, never a mix), then deleted files
//!    and the old paths of renames are removed, then the touched directories are
//!    fsynced.
//!
//! A failure during step 3 can leave some files replaced and others not
//! ([`EditError::Write`] with `partial` set, exit 4; its message names the files that
//! changed and those that did not); no file is ever half-written. `git apply` has the
//! same limit. SIGINT, SIGTERM and SIGHUP are held back for the whole commit (see
//! `signals`): one arriving while staging stops it, removes the temporary files and
//! then ends the process; one arriving during step 3 ends it once every rename and
//! removal is done. Only SIGKILL (or a power cut) can leave step 3 half done. Not kept across a replace: hard links (the path gets a
//! new inode), an owner other than ours, extended attributes and ACLs. Directories
//! left empty by a delete or rename are kept, unlike `git apply`, because `commit`
//! does not know where the workspace ends.
//!
//! A target that is a symlink is written through: the file it points to is replaced
//! and the link stays (the planners checked where it points). Deleting a symlink
//! removes the link.

use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::signals::Deferred;
use super::{EditError, EditPlan, FileChange, paths};

/// Files named in a message about a partly written edit, per list; the rest are counted.
const NAMED: usize = 5;

/// Write every change of `plan`; all or nothing as far as the filesystem allows (see
/// the module documentation for the exact guarantee).
pub fn commit(plan: &EditPlan) -> Result<(), EditError> {
    commit_failing_at(plan, injected_fault())
}

/// Debug builds only: `LSPGATE_FAULT_COMMIT=N` makes step 3 fail at its change number
/// N (0-based, renames then removals), as a full disk or a vanished directory would,
/// so that the tests can reach a partly written edit (root, which runs CI, cannot be
/// kept from renaming by permissions).
fn injected_fault() -> Option<usize> {
    if !cfg!(debug_assertions) {
        return None;
    }
    std::env::var("LSPGATE_FAULT_COMMIT").ok()?.parse().ok()
}

pub(super) fn commit_failing_at(plan: &EditPlan, fault: Option<usize>) -> Result<(), EditError> {
    for change in &plan.changes {
        check_unchanged(change)?;
    }
    // From here to the end of the renames, a signal waits (see `signals`).
    let deferred = Deferred::start();
    let mut created_dirs = Vec::new();
    let staged = match stage(plan, &mut created_dirs, &deferred) {
        Ok(staged) => staged,
        Err(e) => {
            // The temporary files are gone (dropped with `stage`'s vector); the
            // directories made for them are empty again.
            for dir in created_dirs.iter().rev() {
                let _ = fs::remove_dir(dir);
            }
            return Err(e);
        }
    };

    let removals: Vec<&Path> = plan.changes.iter().filter_map(removed).collect();
    // Step 3, in order: what is done, and what is left, for a message on failure.
    let mut left: Vec<PathBuf> = staged.iter().map(|f| f.target.clone()).collect();
    left.extend(removals.iter().map(|p| p.to_path_buf()));
    left.reverse();
    let mut changed: Vec<PathBuf> = Vec::new();
    let mut touched_dirs: Vec<PathBuf> = Vec::new();
    for file in staged {
        let persisted = if fault == Some(changed.len()) {
            Err(io::Error::other("injected fault (LSPGATE_FAULT_COMMIT)"))
        } else if file.new {
            file.temp
                .persist_noclobber(&file.target)
                .map(drop)
                .map_err(|e| e.error)
        } else {
            file.temp
                .persist(&file.target)
                .map(drop)
                .map_err(|e| e.error)
        };
        if let Err(e) = persisted {
            // The temporary files not yet renamed are removed as `staged` is dropped.
            return Err(partly_written(
                &file.target,
                format!("cannot replace: {e}"),
                &changed,
                &left,
            ));
        }
        left.pop();
        changed.push(file.target.clone());
        touched_dirs.extend(file.target.parent().map(Path::to_path_buf));
    }

    for gone in removals {
        let removed = if fault == Some(changed.len()) {
            Err(io::Error::other("injected fault (LSPGATE_FAULT_COMMIT)"))
        } else {
            fs::remove_file(gone)
        };
        match removed {
            Ok(()) => {}
            Err(e) if is_missing(&e) => {}
            Err(e) => {
                return Err(partly_written(
                    gone,
                    format!("cannot remove: {e}"),
                    &changed,
                    &left,
                ));
            }
        }
        left.pop();
        changed.push(gone.to_path_buf());
        touched_dirs.extend(gone.parent().map(Path::to_path_buf));
    }
    // Every change is made: a signal held back since staging may take effect.
    drop(deferred);

    touched_dirs.extend(
        created_dirs
            .iter()
            .filter_map(|d| d.parent().map(Path::to_path_buf)),
    );
    // Durability of the renames; best effort, as some filesystems cannot sync a
    // directory and the data itself is already safe.
    touched_dirs.sort();
    touched_dirs.dedup();
    for dir in touched_dirs {
        if let Ok(handle) = File::open(&dir) {
            let _ = handle.sync_all();
        }
    }
    Ok(())
}

/// The path a change removes: a deleted file, or a renamed file's old path.
fn removed(change: &FileChange) -> Option<&Path> {
    match (&change.after, &change.renamed_from) {
        (None, _) => Some(&change.path),
        (Some(_), from) => from.as_deref(),
    }
}

/// A new content, written and synced, waiting to be renamed over `target`.
struct Staged {
    temp: NamedTempFile,
    /// The file to replace: the change's path with a symlink followed.
    target: PathBuf,
    /// The target does not exist: never replace one that appeared meanwhile.
    new: bool,
}

fn check_unchanged(change: &FileChange) -> Result<(), EditError> {
    let changed = |path: &Path| EditError::Path {
        path: path.display().to_string(),
        message: "changed on disk since the edit was planned; nothing was written".into(),
    };
    let source = change.renamed_from.as_ref().unwrap_or(&change.path);
    let now = match crate::regular::read(source) {
        Ok(bytes) => Some(bytes),
        Err(e) if is_missing(&e) => None,
        Err(e) => return Err(nothing_written(source, format!("cannot read: {e}"))),
    };
    if now != change.before {
        return Err(changed(source));
    }
    if change.renamed_from.is_some() && fs::symlink_metadata(&change.path).is_ok() {
        return Err(changed(&change.path));
    }
    Ok(())
}

fn stage(
    plan: &EditPlan,
    created_dirs: &mut Vec<PathBuf>,
    deferred: &Deferred,
) -> Result<Vec<Staged>, EditError> {
    let mut staged = Vec::new();
    for change in &plan.changes {
        let Some(bytes) = &change.after else {
            continue;
        };
        if deferred.interrupted() {
            // Dropping `staged` removes the temporary files; the caller removes the
            // directories, then the signal takes effect.
            return Err(nothing_written(
                &change.path,
                "interrupted by a signal".into(),
            ));
        }
        let fail =
            |path: &Path, what: &str, e: io::Error| nothing_written(path, format!("{what}: {e}"));
        let target = paths::real_path(&change.path, true)
            .map_err(|e| fail(&change.path, "cannot resolve", e))?;
        let dir = target
            .parent()
            .ok_or_else(|| nothing_written(&target, "has no parent directory".into()))?;
        create_dirs(dir, created_dirs).map_err(|e| fail(dir, "cannot create directory", e))?;

        // The mode to keep: the file's own, or for a rename the old path's.
        let old_mode = fs::metadata(&target)
            .or_else(|e| match &change.renamed_from {
                Some(from) => fs::metadata(from),
                None => Err(e),
            })
            .ok()
            .map(|meta| meta.permissions().mode() & 0o7777);
        let mut builder = tempfile::Builder::new();
        builder.prefix(".lspgate-").suffix(".tmp");
        let temp = match old_mode {
            Some(old) => {
                let temp = builder.tempfile_in(dir);
                let temp = temp.map_err(|e| fail(dir, "cannot create a temporary file", e))?;
                let mode = change.mode.unwrap_or(old);
                temp.as_file()
                    .set_permissions(Permissions::from_mode(mode))
                    .map_err(|e| fail(&target, "cannot set permissions", e))?;
                temp
            }
            // A new file: `open`'s mode, which the umask reduces.
            None => builder
                .permissions(Permissions::from_mode(change.mode.unwrap_or(0o666)))
                .tempfile_in(dir)
                .map_err(|e| fail(dir, "cannot create a temporary file", e))?,
        };
        let mut file = temp.as_file();
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| fail(&target, "cannot write", e))?;
        let new = fs::symlink_metadata(&target).is_err();
        staged.push(Staged { temp, target, new });
    }
    Ok(staged)
}

/// Create `dir` and its missing ancestors, recording each directory made.
fn create_dirs(dir: &Path, created: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut current = dir;
    while fs::symlink_metadata(current).is_err() {
        missing.push(current.to_path_buf());
        match current.parent() {
            Some(parent) => current = parent,
            None => break,
        }
    }
    for dir in missing.into_iter().rev() {
        fs::create_dir(&dir)?;
        created.push(dir);
    }
    Ok(())
}

/// A write failure before anything changed on disk.
fn nothing_written(path: &Path, message: String) -> EditError {
    EditError::Write {
        path: path.display().to_string(),
        message: format!("{message}; nothing was written"),
        partial: false,
    }
}

/// A write failure after the files in `changed` were replaced or removed; those in
/// `left` (in reverse order, the failing one last) were not.
fn partly_written(
    path: &Path,
    message: String,
    changed: &[PathBuf],
    left: &[PathBuf],
) -> EditError {
    if changed.is_empty() {
        return nothing_written(path, message);
    }
    let left: Vec<PathBuf> = left.iter().rev().cloned().collect();
    EditError::Write {
        path: path.display().to_string(),
        message: format!(
            "{message}; the edit is partly written: changed {}; not changed {}",
            name_some(changed),
            name_some(&left)
        ),
        partial: true,
    }
}

/// `a, b, c and 4 more`: the first [`NAMED`] paths, the rest counted.
fn name_some(paths: &[PathBuf]) -> String {
    let mut text = paths
        .iter()
        .take(NAMED)
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > NAMED {
        text.push_str(&format!(" and {} more", paths.len() - NAMED));
    }
    text
}

fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}
