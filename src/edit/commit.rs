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
//! 3. Only then, every file checked as in step 1 once more (staging takes time), is
//!    each temporary file renamed over its target (atomic per file:
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
//! and the link stays (where it points is checked again, as the planners did). Deleting
//! a symlink removes the link.
//!
//! Every directory is reached from a handle on the workspace root without following a
//! symlink, and every create, write, rename and removal is made through it (see
//! `beneath`): a directory swapped for a symlink out of the workspace since planning
//! stops the commit while staging, nothing written.

use std::ffi::OsString;
use std::fs::{self, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::beneath::{self, Root};
use super::signals::Deferred;
use super::{EditError, EditPlan, FileChange, paths};

/// Files named in a message about a partly written edit, per list; the rest are counted.
const NAMED: usize = 5;

/// Write every change of `plan` inside `workspace` (canonical, the one the plan was
/// made in); all or nothing as far as the filesystem allows (see the module
/// documentation for the exact guarantee).
pub fn commit(workspace: &Path, plan: &EditPlan) -> Result<(), EditError> {
    commit_failing_at(workspace, plan, injected_fault())
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

pub(super) fn commit_failing_at(
    workspace: &Path,
    plan: &EditPlan,
    fault: Option<usize>,
) -> Result<(), EditError> {
    for change in &plan.changes {
        check_unchanged(change)?;
    }
    let root = Root::open(workspace)
        .map_err(|e| nothing_written(workspace, format!("cannot open the workspace: {e}")))?;
    // From here to the end of the renames, a signal waits (see `signals`).
    let deferred = Deferred::start();
    let mut created_dirs = Vec::new();
    let staged = stage(&root, plan, &mut created_dirs, &deferred)
        .and_then(|staged| still_unchanged(plan).map(|()| staged))
        .and_then(|staged| Ok((staged, removal_dirs(&root, plan)?)));
    let (staged, removals) = match staged {
        Ok(staged) => staged,
        Err(e) => {
            // The temporary files are gone (dropped with `stage`'s vector); the
            // directories made for them are empty again.
            for dir in created_dirs.iter().rev() {
                let _ = root.remove_dir(dir);
            }
            return Err(e);
        }
    };
    // Step 3, in order: what is done, and what is left, for a message on failure.
    let mut left: Vec<PathBuf> = staged.iter().map(|f| f.target.clone()).collect();
    left.extend(removals.iter().map(|r| r.path.to_path_buf()));
    left.reverse();
    let mut changed: Vec<PathBuf> = Vec::new();
    let mut touched_dirs: Vec<PathBuf> = Vec::new();
    for file in staged {
        let dir = file.temp.dir().path.clone();
        let persisted = if fault == Some(changed.len()) {
            Err(io::Error::other("injected fault (LSPGATE_FAULT_COMMIT)"))
        } else {
            file.temp.persist(&file.name, file.new)
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
        touched_dirs.push(dir);
    }

    for Removal {
        path: gone,
        dir,
        name,
    } in removals
    {
        let removed = if fault == Some(changed.len()) {
            Err(io::Error::other("injected fault (LSPGATE_FAULT_COMMIT)"))
        } else {
            dir.remove_file(&name)
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
        touched_dirs.push(dir.path);
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
        if let Ok(handle) = root.dir(&dir) {
            let _ = handle.sync();
        }
    }
    Ok(())
}

/// A file to remove in step 3, its directory opened before anything is renamed.
struct Removal<'a> {
    path: &'a Path,
    dir: beneath::Dir,
    name: OsString,
}

/// The directory of every path the plan removes; a failure here is before any change.
fn removal_dirs<'a>(root: &Root, plan: &'a EditPlan) -> Result<Vec<Removal<'a>>, EditError> {
    plan.changes
        .iter()
        .filter_map(removed)
        .map(|path| {
            let (dir, name) = root
                .parent_of(path, None)
                .map_err(|e| nothing_written(path, format!("cannot open its directory: {e}")))?;
            Ok(Removal {
                path,
                dir,
                name: name.to_os_string(),
            })
        })
        .collect()
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
    temp: beneath::Temp,
    /// `target`'s name in the temporary file's directory.
    name: OsString,
    /// The file to replace: the change's path with a symlink followed.
    target: PathBuf,
    /// The target does not exist: never replace one that appeared meanwhile.
    new: bool,
}

fn check_unchanged(change: &FileChange) -> Result<(), EditError> {
    let changed = |path: &Path| EditError::Path {
        path: super::shown(path),
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

/// Step 1 once more, after staging and right before the first rename: staging writes
/// and syncs every new content, which takes time, and a file another process rewrote
/// meanwhile must not be replaced (it is refused as in step 1: nothing written, exit
/// 2). What is left is the moment between this read and the rename, which no POSIX
/// call closes.
fn still_unchanged(plan: &EditPlan) -> Result<(), EditError> {
    #[cfg(test)]
    after_staging::run();
    plan.changes.iter().try_for_each(check_unchanged)
}

fn stage(
    root: &Root,
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
        let (dir, target) = create_dirs(root, &change.path, created_dirs)
            .map_err(|e| fail(&change.path, "cannot open or create its directory", e))?;
        let name = target
            .file_name()
            .ok_or_else(|| nothing_written(&target, "has no file name".into()))?
            .to_os_string();

        // The mode to keep: the file's own, or for a rename the old path's.
        let old_mode = dir.mode_of(&name).ok().or_else(|| {
            let from = change.renamed_from.as_ref()?;
            fs::metadata(from)
                .ok()
                .map(|meta| meta.permissions().mode() & 0o7777)
        });
        let new = !dir.has(&name);
        let dir_path = dir.path.clone();
        let temp = match old_mode {
            Some(old) => {
                let temp = dir
                    .temp_file(0o600)
                    .map_err(|e| fail(&dir_path, "cannot create a temporary file", e))?;
                let mode = change.mode.unwrap_or(old);
                temp.file
                    .set_permissions(Permissions::from_mode(mode))
                    .map_err(|e| fail(&target, "cannot set permissions", e))?;
                temp
            }
            // A new file: `open`'s mode, which the umask reduces.
            None => dir
                .temp_file(change.mode.unwrap_or(0o666))
                .map_err(|e| fail(&dir_path, "cannot create a temporary file", e))?,
        };
        let mut file = &temp.file;
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| fail(&target, "cannot write", e))?;
        staged.push(Staged {
            temp,
            name,
            target,
            new,
        });
    }
    Ok(staged)
}

/// The directory to write `path` in, its missing ancestors created (each recorded in
/// `created`), and the file to replace there: `path`, or where it leads when it is a
/// symlink, which must be inside the workspace too.
fn create_dirs(
    root: &Root,
    path: &Path,
    created: &mut Vec<PathBuf>,
) -> io::Result<(beneath::Dir, PathBuf)> {
    let (dir, name) = root.parent_of(path, Some(created))?;
    if !dir.is_symlink(name) {
        return Ok((dir, path.to_path_buf()));
    }
    // Written through: the file the link leads to, checked (by `parent_of`) to be in
    // the workspace as the planners checked it.
    let target = paths::real_path(path, true)?;
    let (dir, _) = root.parent_of(&target, Some(created))?;
    Ok((dir, target))
}

/// A write failure before anything changed on disk.
fn nothing_written(path: &Path, message: String) -> EditError {
    EditError::Write {
        path: super::shown(path),
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
        path: super::shown(path),
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
        .map(|p| super::shown(p))
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

/// Tests only: what another process does while a commit stages (see `still_unchanged`).
#[cfg(test)]
pub(super) mod after_staging {
    use std::cell::RefCell;

    thread_local! {
        static HOOK: RefCell<Option<Box<dyn FnOnce()>>> = RefCell::new(None);
    }

    /// Run `f` once, in this thread's next commit, after it has staged its files.
    pub fn set(f: impl FnOnce() + 'static) {
        HOOK.with(|hook| *hook.borrow_mut() = Some(Box::new(f)));
    }

    pub(super) fn run() {
        if let Some(f) = HOOK.with(|hook| hook.borrow_mut().take()) {
            f();
        }
    }
}
