//! `check --changed`: what changed on disk since lspgate last looked, for harnesses
//! that write files with their own tools and run lspgate after each write. The
//! change is planned as an [`EditPlan`] from the baseline's text to the disk's and
//! checked as a review (the servers shown the baseline's text, then the disk's), so
//! only what it introduced is new, in the changed files and their dependents alike.
//!
//! The baseline is what lspgate last saw of the files the servers cover (one of
//! their extensions, or a file one reads as its configuration), `.gitignore`
//! honoured: a manifest in lspgate's data directory, beside the history, with each
//! file's size, modification time and git blob id (the SHA-1 git gives its text).
//! A baseline text is read back from git when git has that blob (a file as it is in
//! the index, the usual case), else from the copy the baseline keeps, for those files
//! only. It moves forward after every complete `check --changed` (exit 0 or 1: what
//! it reported is said once) and after every run that writes an edit; an incomplete
//! one (exit 3) leaves it, so the next call checks the same change again rather than
//! passing it, unless checking it again could tell no more (a server had read the
//! change from the disk already: `commands::run`'s known gaps; the exit 3 stands, and
//! the gate holds it). A workspace with no baseline yet takes git's index for one, and says
//! so; outside git, the tree as it is (nothing to report the first time).

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::edit::{EditError, EditPlan, FileChange};
use crate::model::{Note, RunReason};
use crate::servers::ServerSpec;
use crate::staged;

const WHO: &str = "check --changed";

/// One file as the baseline knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Known {
    len: u64,
    /// Nanoseconds since the epoch; 0 when unknown (taken from git's index).
    modified: u128,
    /// Its git blob id.
    oid: String,
}

/// The baseline's manifest, by path relative to the workspace.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    files: BTreeMap<String, Known>,
    /// The daemon's view of this tree (`lsp::SeenView`): what its servers had said when
    /// the run that moved the baseline here ended. None when no daemon ran it, or when
    /// the tree may hold a change the servers were shown after it (an edit's run moves
    /// only its own files).
    #[serde(default)]
    seen: Option<u64>,
}

/// What the baseline was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// The last `check --changed` (or written edit) in this workspace.
    LastCheck,
    /// No baseline yet: git's index.
    GitIndex,
    /// No baseline yet and no git: the tree as it is now.
    Nothing,
}

/// The change on disk since the baseline, and the tree it was found in.
pub struct Changes {
    pub plan: EditPlan,
    pub since: Since,
    tree: BTreeMap<String, Known>,
    /// The files of `plan`, relative to the workspace.
    planned: Vec<String>,
    /// The daemon's view of the baseline's tree, when the baseline names one.
    pub seen: Option<u64>,
}

impl Changes {
    /// The files of the change that are no longer as they were checked (another
    /// write came while the check ran): the report is not about the disk as it is.
    pub fn moved_since(&self, workspace: &Path) -> Vec<PathBuf> {
        self.planned
            .iter()
            .filter(|rel| {
                let now = crate::regular::read(workspace.join(rel))
                    .ok()
                    .map(|b| oid(&b));
                now.as_ref() != self.tree.get(*rel).map(|k| &k.oid)
            })
            .map(|rel| workspace.join(rel))
            .collect()
    }

    /// A line for the report's notes saying what the change was measured from: with
    /// nothing to measure from, a reason the check is incomplete (never a clean result).
    pub fn note(&self) -> Option<Note> {
        match self.since {
            Since::LastCheck => None,
            Since::GitIndex => Some(Note::Info(
                "check --changed: no earlier check here, so the change is the working tree's \
                 since the git index"
                    .into(),
            )),
            Since::Nothing => Some(Note::Incomplete(RunReason::NoBaseline)),
        }
    }
}

/// Where the baseline of `workspace` is kept, or `None` without a data directory.
fn store(workspace: &Path) -> Option<PathBuf> {
    let data = crate::paths::dirs().data.as_ref()?;
    Some(
        data.join("changed")
            .join(crate::paths::workspace_hash(workspace)),
    )
}

/// The change on disk since the baseline of `workspace`, for the files `servers` cover.
pub fn find(workspace: &Path, servers: &[ServerSpec]) -> Result<Changes, EditError> {
    let dir = store(workspace);
    let manifest = dir.as_deref().and_then(read_manifest);
    let (mut base, since, seen) = match manifest {
        Some(m) => (m.files, Since::LastCheck, m.seen),
        None => match git_index(workspace) {
            Some(files) => (files, Since::GitIndex, None),
            None => (BTreeMap::new(), Since::Nothing, None),
        },
    };
    // Git's index holds every file; only those the servers cover are the baseline's.
    base.retain(|rel, _| covered(servers, &workspace.join(rel)));
    let tree = walk(workspace, servers, &base)?;
    let mut changes = Vec::new();
    if since != Since::Nothing {
        let mut wanted: Vec<(&String, &Known)> = Vec::new();
        for (rel, known) in &base {
            if tree.get(rel).is_none_or(|now| now.oid != known.oid) {
                wanted.push((rel, known));
            }
        }
        let texts = baseline_texts(workspace, dir.as_deref(), &wanted)?;
        for ((rel, _), before) in wanted.iter().zip(texts) {
            let path = workspace.join(rel);
            let after = if tree.contains_key(*rel) {
                Some(read(&path)?)
            } else {
                None
            };
            changes.push(FileChange {
                path,
                renamed_from: None,
                before: Some(before),
                after,
                mode: None,
            });
        }
        for rel in tree.keys().filter(|rel| !base.contains_key(*rel)) {
            let path = workspace.join(rel);
            let after = read(&path)?;
            changes.push(FileChange {
                path,
                renamed_from: None,
                before: None,
                after: Some(after),
                mode: None,
            });
        }
    }
    let planned = changes
        .iter()
        .filter_map(|c| relative(workspace, &c.path))
        .collect();
    Ok(Changes {
        plan: EditPlan { changes },
        since,
        tree,
        planned,
        seen,
    })
}

/// Move the baseline of `workspace` to the tree `changes` was found in, which the
/// daemon's view `seen` is of (the run checked that tree and ended on it). With
/// nothing changed the tree is the baseline's, and so is the view it names.
pub fn accept(workspace: &Path, changes: &Changes, seen: Option<u64>) -> std::io::Result<()> {
    let Some(dir) = store(workspace) else {
        return Ok(());
    };
    let seen = if changes.planned.is_empty() {
        seen.or(changes.seen)
    } else {
        seen
    };
    save(workspace, &dir, changes.tree.clone(), seen)
}

/// After a run that wrote `paths`: the baseline, if `workspace` has one, takes their
/// text as written, so that `check --changed` does not report the edit again.
pub fn advance(workspace: &Path, paths: &[PathBuf]) -> std::io::Result<()> {
    let Some(dir) = store(workspace) else {
        return Ok(());
    };
    let Some(mut manifest) = read_manifest(&dir) else {
        return Ok(());
    };
    for path in paths {
        let Some(rel) = relative(workspace, path) else {
            continue;
        };
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.is_file() => {
                let bytes = crate::regular::read(path)?;
                manifest.files.insert(rel, known(&meta, &bytes));
            }
            _ => {
                manifest.files.remove(&rel);
            }
        }
    }
    // The other files are the baseline's, which the servers may have been shown
    // otherwise (changed behind lspgate's back): no view is known to be this tree's.
    save(workspace, &dir, manifest.files, None)
}

/// Write `files` as the baseline at `dir`, keeping a copy of each text git's index
/// does not hold, and dropping copies no longer needed.
fn save(
    workspace: &Path,
    dir: &Path,
    files: BTreeMap<String, Known>,
    seen: Option<u64>,
) -> std::io::Result<()> {
    let blobs = dir.join("blobs");
    fs::create_dir_all(&blobs)?;
    let in_git: HashSet<String> = git_index(workspace)
        .map(|index| index.into_values().map(|k| k.oid).collect())
        .unwrap_or_default();
    let mut kept: HashSet<String> = HashSet::new();
    for (rel, known) in &files {
        if in_git.contains(&known.oid) {
            continue;
        }
        let copy = blobs.join(&known.oid);
        if !copy.exists() {
            let bytes = crate::regular::read(workspace.join(rel))?;
            // The file may have changed since the walk: keep only the text named.
            if oid(&bytes) != known.oid {
                continue;
            }
            crate::regular::write_whole(&copy, &bytes)?;
        }
        kept.insert(known.oid.clone());
    }
    for entry in fs::read_dir(&blobs)?.flatten() {
        if !kept.contains(entry.file_name().to_string_lossy().as_ref()) {
            let _ = fs::remove_file(entry.path());
        }
    }
    let manifest = serde_json::to_vec(&Manifest { files, seen })?;
    crate::regular::write_whole(&dir.join("manifest.json"), &manifest)
}

fn read_manifest(dir: &Path) -> Option<Manifest> {
    let bytes = fs::read(dir.join("manifest.json")).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The files of the working tree the servers cover, each with its blob id: read
/// (and hashed) only when its size or modification time differs from `base`'s.
fn walk(
    workspace: &Path,
    servers: &[ServerSpec],
    base: &BTreeMap<String, Known>,
) -> Result<BTreeMap<String, Known>, EditError> {
    let mut tree = BTreeMap::new();
    for entry in ignore::WalkBuilder::new(workspace)
        .hidden(true)
        .git_ignore(true)
        .git_global(false)
        .follow_links(false)
        .build()
        .flatten()
    {
        let path = entry.path();
        if !entry.file_type().is_some_and(|t| t.is_file()) || !covered(servers, path) {
            continue;
        }
        let (Some(rel), Ok(meta)) = (relative(workspace, path), entry.metadata()) else {
            continue;
        };
        let stamp_holds = base
            .get(&rel)
            .is_some_and(|k| k.len == meta.len() && k.modified == modified(&meta));
        let known = match base.get(&rel) {
            Some(k) if stamp_holds => k.clone(),
            _ => known(&meta, &read(path)?),
        };
        tree.insert(rel, known);
    }
    Ok(tree)
}

/// Whether `path` is a file the enabled servers cover: one of their extensions, or one
/// they read as configuration.
fn covered(servers: &[ServerSpec], path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str());
    servers
        .iter()
        .filter(|s| !s.disabled)
        .any(|s| ext.is_some_and(|e| s.extensions.iter().any(|x| x == e)) || s.configured_by(path))
}

/// The texts of the baseline files `wanted`: from the baseline's copies, else git.
fn baseline_texts(
    workspace: &Path,
    dir: Option<&Path>,
    wanted: &[(&String, &Known)],
) -> Result<Vec<Vec<u8>>, EditError> {
    let copies: Vec<Option<Vec<u8>>> = wanted
        .iter()
        .map(|(_, k)| dir.and_then(|d| fs::read(d.join("blobs").join(&k.oid)).ok()))
        .collect();
    let from_git: Vec<&str> = wanted
        .iter()
        .zip(&copies)
        .filter(|(_, copy)| copy.is_none())
        .map(|((_, k), _)| k.oid.as_str())
        .collect();
    let mut git = staged::cat_blobs_for(WHO, workspace, &from_git)?.into_iter();
    copies
        .into_iter()
        .zip(wanted)
        .map(|(copy, (rel, _))| {
            copy.or_else(|| git.next()).ok_or_else(|| {
                EditError::Other(format!("{WHO}: the baseline's text of {rel} is lost"))
            })
        })
        .collect()
}

/// Git's index of the repository holding `workspace`, its files under the workspace
/// by path relative to it; `None` outside git.
fn git_index(workspace: &Path) -> Option<BTreeMap<String, Known>> {
    let out = staged::git_for(WHO, workspace, &["ls-files", "-s", "-z", "--full-name"]).ok()?;
    let top = staged::git_for(WHO, workspace, &["rev-parse", "--show-toplevel"]).ok()?;
    let top = PathBuf::from(String::from_utf8_lossy(&top).trim());
    let mut files = BTreeMap::new();
    for record in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        // `MODE OID STAGE\tPATH`
        let record = String::from_utf8_lossy(record);
        let Some((head, path)) = record.split_once('\t') else {
            continue;
        };
        let mut parts = head.split_whitespace();
        let (Some(mode), Some(oid)) = (parts.next(), parts.next()) else {
            continue;
        };
        if !mode.starts_with("100") {
            continue;
        }
        let Some(rel) = relative(workspace, &top.join(path)) else {
            continue;
        };
        files.insert(
            rel,
            Known {
                len: u64::MAX,
                modified: 0,
                oid: oid.to_string(),
            },
        );
    }
    Some(files)
}

fn known(meta: &fs::Metadata, bytes: &[u8]) -> Known {
    Known {
        len: meta.len(),
        modified: modified(meta),
        oid: oid(bytes),
    }
}

fn modified(meta: &fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// The id git gives a blob of `bytes`.
pub(crate) fn oid(bytes: &[u8]) -> String {
    let mut hasher = sha1_smol::Sha1::new();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    hasher.digest().to_string()
}

/// `path` relative to `workspace`, as text; `None` outside it or not UTF-8.
pub(crate) fn relative(workspace: &Path, path: &Path) -> Option<String> {
    path.strip_prefix(workspace)
        .ok()
        .and_then(|p| p.to_str())
        .map(str::to_string)
}

fn read(path: &Path) -> Result<Vec<u8>, EditError> {
    crate::regular::read(path).map_err(|e| EditError::Path {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_id_is_gits() {
        // `printf 'hello\n' | git hash-object --stdin`, and of nothing.
        assert_eq!(oid(b"hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
        assert_eq!(oid(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    }
}
