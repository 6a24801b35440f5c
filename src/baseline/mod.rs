//! Stored baselines (docs/SPEC.md section 6, "Stored baselines"): the diagnostics a
//! server gave for every file of a tree, kept in the cache directory under the key of
//! that tree ([`Tree::key`]), so that a cold run whose before tree has one takes its
//! before view from it and has its servers analyse the project once, after the edit.
//!
//! Only a server whose after view covers its whole tree stores one (pyright and
//! basedpyright analysing their workspace publish every file, gopls every package's,
//! rust-analyzer's `cargo check --workspace` every crate's; the TypeScript servers
//! and clangd when asked about every file of their project), and only after a
//! complete run: the after view of one run is the before view of the next.
//! A file that cannot be read, is cut short, or does not hold the key it was looked
//! up by is ignored, with a note.

mod tree;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use lsp_types::Diagnostic;
use serde::{Deserialize, Serialize};

pub use tree::{LOCK_FILES, Tree, environment};

/// Bumped when the file's layout changes; a file of another format is not read.
const FORMAT: u32 = 1;

/// Baselines kept per workspace and server, the most recent; older ones are removed
/// when a new one is stored.
const KEPT: usize = 8;

/// The diagnostics of every file of a tree, by path relative to its root; a file not
/// named had none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    pub files: BTreeMap<String, Vec<Diagnostic>>,
}

impl Stored {
    /// The stored diagnostics of `path`, a file under `root`.
    pub fn of(&self, root: &Path, path: &Path) -> Vec<Diagnostic> {
        path.strip_prefix(root)
            .ok()
            .and_then(|rel| self.files.get(rel.to_str()?))
            .cloned()
            .unwrap_or_default()
    }
}

/// `baseline`: one file of each enabled server that analyses or checks its whole
/// workspace (its after view is every file's), to check and so start it; every file
/// of the project at the workspace's top of each server that lists its project
/// (`servers::whole_project`), whose view is then every file's too. None is bad input.
pub fn probes(
    workspace: &Path,
    servers: &[crate::servers::ServerSpec],
) -> Result<Vec<PathBuf>, crate::edit::EditError> {
    let enabled = servers.iter().filter(|s| !s.disabled);
    let mut files: Vec<PathBuf> = Vec::new();
    for s in enabled {
        if s.wait.workspace_analysis() || s.wait.check_after_save() {
            // rust-analyzer's `cargo check` is of the whole workspace, set up as for
            // one written edit (`Context::makes_baseline`).
            files.extend(crate::dependents::any_file(workspace, &s.extensions));
        } else if crate::servers::lists_its_project(s) {
            // Only where it is the server checking the project's files (of the
            // TypeScript servers, the one chosen for them).
            let project = crate::servers::whole_project(s, workspace).unwrap_or_default();
            let checks = project.first().is_some_and(|f| {
                crate::config::servers_for(servers, f, workspace)
                    .iter()
                    .any(|x| x.name == s.name)
            });
            if checks {
                files.extend(project);
            }
        }
    }
    files.sort();
    files.dedup();
    if files.is_empty() {
        return Err(crate::edit::EditError::Other(format!(
            "baseline: no file in {} that a server storing baselines checks (see `lspgate \
             baseline --help`); nothing to store",
            workspace.display()
        )));
    }
    Ok(files)
}

/// A server's part in stored baselines in one run: the tree it sees before the edit,
/// and the stored before view of that tree when there is one (the server is then
/// started once the edit is written).
#[derive(Debug, Clone)]
pub struct ForRun {
    pub tree: Tree,
    pub found: Option<Stored>,
    /// Whether the run's after view is of every file the server sees, once worked
    /// out (`check::stored::whole_view`: it may walk the project).
    pub whole: std::cell::OnceCell<bool>,
}

impl ForRun {
    /// Whether the before view comes from a stored baseline.
    pub fn used(&self) -> bool {
        self.found.is_some()
    }
}

/// A stored baseline as a file.
#[derive(Serialize, Deserialize)]
struct OnDisk {
    format: u32,
    key: String,
    server: String,
    /// The git blob id of `files` as JSON: a file changed or cut short is not used.
    check: String,
    files: BTreeMap<String, Vec<Diagnostic>>,
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup {
    Found(Stored),
    Absent,
    /// A file under the key that cannot be used, and why.
    Unusable {
        path: PathBuf,
        why: String,
    },
}

/// The stored baselines of one workspace: a directory of the cache.
#[derive(Debug, Clone)]
pub struct Baselines {
    dir: PathBuf,
}

impl Baselines {
    /// Those of `workspace`, in the user's cache directory; `None` without one.
    pub fn of(workspace: &Path) -> Option<Baselines> {
        let cache = crate::paths::dirs().cache.as_ref()?;
        let hash = crate::paths::workspace_hash(workspace);
        Some(Baselines::at(cache.join("baselines").join(hash)))
    }

    /// Those kept in `dir`.
    pub fn at(dir: PathBuf) -> Baselines {
        Baselines { dir }
    }

    /// The baseline of `server` stored for the tree with `key`.
    pub fn lookup(&self, server: &str, key: &str) -> Lookup {
        let path = self.file_of(server, key);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Absent,
            Err(e) => return unusable(path, e.to_string()),
        };
        let on_disk: OnDisk = match serde_json::from_slice(&bytes) {
            Ok(d) => d,
            Err(e) => return unusable(path, format!("not a stored baseline ({e})")),
        };
        if on_disk.format != FORMAT || on_disk.key != key || on_disk.server != server {
            return unusable(path, "made for another tree or server".into());
        }
        if check_of(&on_disk.files) != on_disk.check {
            return unusable(path, "its content does not match its checksum".into());
        }
        Lookup::Found(Stored {
            files: on_disk.files,
        })
    }

    /// Store `stored` as the baseline of `server` for the tree with `key`, removing
    /// the oldest beyond [`KEPT`]. Returns where it went.
    pub fn store(&self, server: &str, key: &str, stored: Stored) -> std::io::Result<PathBuf> {
        let path = self.file_of(server, key);
        let on_disk = OnDisk {
            format: FORMAT,
            key: key.to_owned(),
            server: server.to_owned(),
            check: check_of(&stored.files),
            files: stored.files,
        };
        let bytes = serde_json::to_vec(&on_disk).map_err(std::io::Error::other)?;
        crate::regular::write_whole(&path, &bytes)?;
        prune(&self.dir, &file_prefix(server));
        Ok(path)
    }

    fn file_of(&self, server: &str, key: &str) -> PathBuf {
        self.dir.join(format!("{}{key}.json", file_prefix(server)))
    }
}

fn unusable(path: PathBuf, why: String) -> Lookup {
    Lookup::Unusable { path, why }
}

/// The start of the names of `server`'s files: its name, made safe for a file name.
fn file_prefix(server: &str) -> String {
    let name: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{name}-")
}

/// Keep the [`KEPT`] most recent files of `dir` whose names start with `prefix`.
fn prune(dir: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    let excess = files.len().saturating_sub(KEPT);
    for (_, path) in files.into_iter().take(excess) {
        let _ = fs::remove_file(path);
    }
}

fn check_of(files: &BTreeMap<String, Vec<Diagnostic>>) -> String {
    crate::changed::oid(&serde_json::to_vec(files).unwrap_or_default())
}

#[cfg(test)]
mod tests;
