//! Edits: turn a write, a string replacement or a unified diff into an [`EditPlan`]
//! (every file's bytes before and after, computed in memory), and commit a plan to
//! disk atomically. Nothing here touches the disk before [`commit`].

mod commit;
mod patch;

use std::path::{Path, PathBuf};

pub use commit::commit;
pub use patch::plan_patch;

/// What happens to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Created,
    Modified,
    Deleted,
    Renamed,
}

/// One file of an edit. Paths are absolute and lie inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Where the file is after the edit (for a delete: where it was).
    pub path: PathBuf,
    /// For a rename: where it was before.
    pub renamed_from: Option<PathBuf>,
    /// The bytes before the edit; `None` when the file did not exist.
    pub before: Option<Vec<u8>>,
    /// The bytes after the edit; `None` when the edit deletes the file.
    pub after: Option<Vec<u8>>,
    /// Unix mode to set after writing (from a git mode line); `None` keeps the old mode
    /// (new files get the default).
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditPlan {
    pub changes: Vec<FileChange>,
}

/// Bad input. Each message names the file, line or hunk; the CLI exits 2.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("{path}: {message}")]
    Path { path: String, message: String },
    #[error("patch: {0}")]
    Patch(String),
    #[error("{0}")]
    Other(String),
}

/// `write`: replace (or create) `path` with `content`.
pub fn plan_write(workspace: &Path, path: &Path, content: Vec<u8>) -> Result<EditPlan, EditError> {
    commit::plan_write(workspace, path, content)
}

/// `edit`: replace `old` by `new` in `path`; `old` must occur exactly once unless
/// `replace_all`.
pub fn plan_replace(
    workspace: &Path,
    path: &Path,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<EditPlan, EditError> {
    commit::plan_replace(workspace, path, old, new, replace_all)
}
