//! Where a run happens: the run directory, the workspace (the boundary every write
//! must stay inside), and each server's root within it.

pub mod monorepo;

use std::path::{Path, PathBuf};

pub use monorepo::{Kind as MonorepoKind, Monorepo, Unmapped};

/// The workspace: `root` when given, else the git top level of `run_dir`, else
/// `run_dir` itself. Canonical.
pub fn find_workspace(run_dir: &Path, root: Option<&Path>) -> std::io::Result<PathBuf> {
    if let Some(root) = root {
        return run_dir.join(root).canonicalize();
    }
    let run_dir = run_dir.canonicalize()?;
    // A `.git` directory or file (worktrees, submodules) marks the top level; walking
    // up is what `git rev-parse --show-toplevel` does, without needing git.
    for dir in run_dir.ancestors() {
        if dir.join(".git").exists() {
            return Ok(dir.to_path_buf());
        }
    }
    Ok(run_dir)
}

/// Where a server of `file` is started: the nearest ancestor directory of `file`,
/// inside `workspace`, holding one of `markers` (else the workspace), unless that
/// directory lies in a monorepo of one of the kinds the server spans (`monorepos`)
/// with `file` in one of its packages: then the monorepo's root, so that one server
/// holds every package's project. A monorepo manifest that cannot be mapped comes
/// back beside the root, for the run to say what it could not check.
pub fn server_root(
    file: &Path,
    markers: &[String],
    monorepos: &[MonorepoKind],
    workspace: &Path,
) -> (PathBuf, Option<Unmapped>) {
    let nearest = nearest_marker(file, markers, workspace);
    match monorepo::around(&nearest, monorepos, workspace) {
        Some(Ok(m)) if m.package_of(file).is_some() => (m.root, None),
        Some(Err(unmapped)) => (nearest, Some(unmapped)),
        _ => (nearest, None),
    }
}

/// The nearest ancestor directory of `file`, inside `workspace`, holding one of
/// `markers`; else the workspace.
fn nearest_marker(file: &Path, markers: &[String], workspace: &Path) -> PathBuf {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if !d.starts_with(workspace) {
            break;
        }
        if markers.iter().any(|m| d.join(m).exists()) {
            return d.to_path_buf();
        }
        if d == workspace {
            break;
        }
        dir = d.parent();
    }
    workspace.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_marker_inside_the_workspace_wins() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let ws = dir.path().canonicalize()?;
        std::fs::create_dir_all(ws.join("svc/api/src"))?;
        std::fs::write(ws.join("go.mod"), "")?;
        std::fs::write(ws.join("svc/api/go.mod"), "")?;
        let markers = vec!["go.mod".to_string()];
        assert_eq!(
            nearest_marker(&ws.join("svc/api/src/x.go"), &markers, &ws),
            ws.join("svc/api")
        );
        assert_eq!(nearest_marker(&ws.join("svc/y.go"), &markers, &ws), ws);
        assert_eq!(
            nearest_marker(&ws.join("svc/y.go"), &["nope".to_string()], &ws),
            ws
        );
        Ok(())
    }

    #[test]
    fn git_top_level_is_the_workspace() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let ws = dir.path().canonicalize()?;
        std::fs::create_dir_all(ws.join(".git"))?;
        std::fs::create_dir_all(ws.join("a/b"))?;
        assert_eq!(find_workspace(&ws.join("a/b"), None)?, ws);
        assert_eq!(find_workspace(&ws, Some(Path::new("a")))?, ws.join("a"));
        Ok(())
    }
}
