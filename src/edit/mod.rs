//! Edits: turn a write, a string replacement or a unified diff into an [`EditPlan`]
//! (every file's bytes before and after, computed in memory), and commit a plan to
//! disk. Nothing here writes to the disk before [`commit`].
//!
//! Who owns what:
//! - `paths`: where an edit may write. Every path a plan names is absolute, has its
//!   directories resolved through symlinks, and lies inside the workspace.
//! - `single`: `write` and `edit --old/--new`, one file each ([`plan_write`],
//!   [`plan_replace`]).
//! - `patch`: unified diffs, git or plain, parsed with diffy and applied to an
//!   in-memory overlay of the tree ([`plan_patch`]).
//! - `hunks`: placing one hunk in a file's lines (offset search, CRLF retry) and
//!   explaining why a hunk does not apply.
//! - `eol`: line-ending helpers shared by the planners.
//! - `reverse`: the change an already applied patch made, found by planning the
//!   patch reversed against the tree that holds its result
//!   ([`plan_patch_reverse`], for `check --patch`).
//! - `commit`: temporary files, then renames ([`commit`]); its doc states exactly what
//!   survives a failure.
//! - `beneath`: the directory handles `commit` writes through, each reached from the
//!   workspace root without following a symlink, so that what a path names at commit
//!   time cannot lead out of the workspace.
//!
//! Paths: `workspace` is the canonical workspace root. `base` is the absolute run
//! directory: relative paths, and the paths inside a patch once `-p N` is stripped,
//! resolve against it, as they would under `git -C base`.

mod beneath;
#[cfg(test)]
mod beneath_tests;
mod commit;
mod eol;
mod hunks;
mod patch;
mod paths;
mod reverse;
mod signals;
mod single;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use commit::commit;
pub use patch::plan_patch;
pub use reverse::plan_patch_reverse;

/// A patch turned around, as `git apply -R` reads it (`patch -R`).
pub fn reverse_patch(patch: &[u8]) -> Result<Vec<u8>, EditError> {
    reverse::reverse(patch)
}

/// What happens to one file: data the report shares, so it lives in `model`.
pub use crate::model::Action;

/// One file of an edit. Paths are absolute and lie inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileChange {
    /// Where the file is after the edit (for a delete: where it was). Directories
    /// are resolved; a last component that is a symlink is kept, and [`commit`]
    /// writes through it to the file it points to.
    pub path: PathBuf,
    /// For a rename: where it was before.
    pub renamed_from: Option<PathBuf>,
    /// The bytes before the edit (for a rename: the bytes at `renamed_from`); `None`
    /// when the file did not exist.
    pub before: Option<Vec<u8>>,
    /// The bytes after the edit; `None` when the edit deletes the file.
    pub after: Option<Vec<u8>>,
    /// Permission bits to set after writing (from a git mode line, or the source's
    /// mode for a copy); `None` keeps the old mode (for a rename: the old path's).
    /// A new file gets `mode`, or `0o666`, reduced by the umask, as `open` does.
    pub mode: Option<u32>,
}

impl FileChange {
    pub fn action(&self) -> Action {
        match (&self.before, &self.after) {
            (None, _) => Action::Created,
            (Some(_), None) => Action::Deleted,
            _ if self.renamed_from.is_some() => Action::Renamed,
            _ => Action::Modified,
        }
    }
}

/// Every file an edit touches, computed in memory.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EditPlan {
    pub changes: Vec<FileChange>,
}

/// Why an edit was refused or could not be written. Every message's first line names
/// the file, the patch line or the hunk; further lines, if any, are details.
///
/// Every variant is bad input (the CLI exits 2) and means nothing was written, except
/// [`EditError::Write`] with `partial` set (exit 4: see [`EditError::partly_written`]).
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// A path that may not be written, or a file that cannot take this edit.
    #[error("{path}: {message}")]
    Path { path: String, message: String },
    /// A patch that cannot be parsed: `line N: ...`.
    #[error("patch: {0}")]
    Patch(String),
    /// A hunk whose context and removed lines are not in the file. `details` shows
    /// the expected lines and the file's lines near the hunk's stated position.
    #[error("{path}: hunk {number} ({header}) does not apply{}", details_suffix(.details))]
    Hunk {
        path: String,
        number: usize,
        header: String,
        details: String,
    },
    /// Writing to disk failed. With `partial` false nothing changed on disk; with
    /// `partial` true some files had already been replaced (see [`commit`]), and the
    /// message names those that were and those that were not. `path` may be empty
    /// (an error of the whole commit).
    #[error("{}{message}", if path.is_empty() { String::new() } else { format!("{path}: ") })]
    Write {
        path: String,
        message: String,
        partial: bool,
    },
    #[error("{0}")]
    Other(String),
}

impl EditError {
    /// Whether part of the edit was written (exit 4), else nothing was (bad input, 2).
    pub fn partly_written(&self) -> bool {
        matches!(self, EditError::Write { partial: true, .. })
    }

    /// The first line of the message: a one-line summary.
    pub fn summary(&self) -> String {
        let message = self.to_string();
        message.lines().next().unwrap_or_default().to_string()
    }

    fn path(path: &Path, message: impl Into<String>) -> Self {
        EditError::Path {
            path: shown(path),
            message: message.into(),
        }
    }
}

/// A path as messages name it: quoted when it holds a control character.
fn shown(path: &Path) -> String {
    crate::paths::quote(&path.display().to_string()).into_owned()
}

fn details_suffix(details: &str) -> String {
    if details.is_empty() {
        String::new()
    } else {
        format!("\n{details}")
    }
}

/// Whether every path `plan` names is one a planner could have named in `workspace`:
/// absolute, its directories resolved, inside the workspace and outside `.git`, once
/// symlinks are followed too. For the daemon, which commits plans a client made.
pub fn check_plan(workspace: &Path, plan: &EditPlan) -> Result<(), EditError> {
    for change in &plan.changes {
        for path in std::iter::once(&change.path).chain(&change.renamed_from) {
            if !path.is_absolute() {
                return Err(EditError::path(path, "not an absolute path"));
            }
            let target = paths::resolve(workspace, workspace, path)?;
            if target.path != *path {
                return Err(EditError::path(
                    path,
                    format!("resolves to {}", shown(&target.path)),
                ));
            }
        }
    }
    Ok(())
}

/// A file `check` may read: `given` (relative to `base`, or absolute), once every
/// symlink is followed, lies inside the workspace and is a regular file (a FIFO or a
/// device could block the read, or never end). Returns `given` joined to `base`.
pub fn plan_check(workspace: &Path, base: &Path, given: &Path) -> Result<PathBuf, EditError> {
    let joined = base.join(given);
    let real =
        paths::real_path(&joined, true).map_err(|e| EditError::path(given, e.to_string()))?;
    if !real.starts_with(workspace) {
        let mut message = format!("path is outside the workspace {}", workspace.display());
        if real != crate::paths::normalize(&joined) {
            message += &format!(" (it resolves to {})", shown(&real));
        }
        return Err(EditError::path(given, message));
    }
    match std::fs::metadata(&real) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(EditError::path(given, "no such file"))
        }
        Err(e) => Err(EditError::path(given, e.to_string())),
        Ok(meta) => crate::regular::regular(&meta)
            .map(|()| joined)
            .map_err(|e| EditError::path(given, e.to_string())),
    }
}

/// `write`: replace (or create) `path` with `content`. A relative `path` resolves
/// against `base`. When the existing file has CRLF line endings and `content` has
/// only bare LF ones, `content` is converted to CRLF.
pub fn plan_write(
    workspace: &Path,
    base: &Path,
    path: &Path,
    content: Vec<u8>,
) -> Result<EditPlan, EditError> {
    single::plan_write(workspace, base, path, content)
}

/// `edit`: replace `old` by `new` in `path` (relative to `base`); `old` must occur
/// exactly once unless `replace_all`. In a CRLF file, LF line endings in `old` and
/// `new` are taken as CRLF.
pub fn plan_replace(
    workspace: &Path,
    base: &Path,
    path: &Path,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<EditPlan, EditError> {
    single::plan_replace(workspace, base, path, old, new, replace_all)
}
