//! Writing an [`EditPlan`] to disk: temporary files, then renames.
use std::path::{Path, PathBuf};

use super::{EditError, EditPlan, FileChange};

fn resolve(workspace: &Path, path: &Path) -> Result<PathBuf, EditError> {
    let abs = if path.is_absolute() { path.to_path_buf() } else { workspace.join(path) };
    Ok(abs)
}

pub(super) fn plan_write(workspace: &Path, path: &Path, content: Vec<u8>) -> Result<EditPlan, EditError> {
    let path = resolve(workspace, path)?;
    let before = std::fs::read(&path).ok();
    Ok(EditPlan { changes: vec![FileChange { path, renamed_from: None, before, after: Some(content), mode: None }] })
}

pub(super) fn plan_replace(
    workspace: &Path,
    path: &Path,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<EditPlan, EditError> {
    let path = resolve(workspace, path)?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| EditError::Path { path: path.display().to_string(), message: e.to_string() })?;
    let n = text.matches(old).count();
    if n == 0 || (n > 1 && !replace_all) {
        return Err(EditError::Path { path: path.display().to_string(), message: format!("--old occurs {n} times") });
    }
    let after = if replace_all { text.replace(old, new) } else { text.replacen(old, new, 1) };
    Ok(EditPlan {
        changes: vec![FileChange { path, renamed_from: None, before: Some(text.into_bytes()), after: Some(after.into_bytes()), mode: None }],
    })
}

/// Write every change of `plan`; all or nothing as far as the filesystem allows.
pub fn commit(plan: &EditPlan) -> Result<(), EditError> {
    for c in &plan.changes {
        match &c.after {
            Some(bytes) => std::fs::write(&c.path, bytes).map_err(|e| EditError::Other(e.to_string()))?,
            None => std::fs::remove_file(&c.path).map_err(|e| EditError::Other(e.to_string()))?,
        }
    }
    Ok(())
}
