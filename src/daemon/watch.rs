//! Files created, changed or deleted behind lspgate's back, for servers that rely on
//! the client to watch the disk.
//!
//! lspgate tells servers it supports `workspace/didChangeWatchedFiles`, so servers
//! that register file watchers (pyright, gopls, rust-analyzer, TypeScript 7) do not
//! watch the disk themselves: between runs a warm server would never learn that `git
//! checkout` or an editor created, changed or deleted a file it has not opened. Open
//! documents are re-synced from their text (see the daemon's `resync`); this module
//! covers the others. (typescript-language-server registers none: its tsserver
//! watches the disk itself, in its own time.) The same walk gives the key of the
//! project's view ([`Watch::view_key`]).
//!
//! The approach is a bounded scan, not a watcher: before each run the daemon walks
//! each server root (honouring `.gitignore`, skipping hidden files) and compares the
//! files of the server's extensions, with their size and modification time, with the
//! previous walk. The first walk of a root, made after the run that started its
//! server, is the baseline and reports nothing. A root whose walk meets more than
//! [`MAX_ENTRIES`] entries is given up for the daemon's life (logged once): the walk
//! is on the path of every run, and on a large tree it would cost more than a warm run
//! is meant to take. There only open documents are re-synced, and a server that
//! relies on the client's watching misses files changed behind lspgate's back until
//! it opens them. The files a run writes are re-stamped after it ([`Watch::touched`]):
//! the run announced them itself.
//!
//! A change that keeps both size and modification time (within the file system's
//! time granularity) goes unseen; so does a change inside a gitignored directory.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::lsp::clangd;

/// Entries (files and directories) one walk may visit before its root is given up.
/// The walk is on every run's path: 10,000 entries cost about 9 ms (measured on a
/// loaded 2-core machine, warm page cache), a tiny tree well under 1 ms.
pub const MAX_ENTRIES: usize = 10_000;

/// What tells one version of a file from another without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// The files of one root at the last walk (those with one of `extensions`), or the
/// root given up on.
enum Known {
    Files {
        extensions: HashSet<String>,
        files: HashMap<PathBuf, Stamp>,
    },
    TooLarge,
}

/// A change to announce: LSP `FileChangeType` 1 created, 2 changed, 3 deleted.
pub type Change = (PathBuf, u8);

pub struct Watch {
    roots: HashMap<PathBuf, Known>,
    /// Each file's text hashed, with the stamp it had then (see [`Watch::view_key`]).
    hashes: HashMap<PathBuf, (Stamp, u64)>,
    /// [`MAX_ENTRIES`], but for tests.
    cap: usize,
    /// The files the last [`Watch::changes`] found changed that clangd would take for
    /// unchanged (see [`Watch::looks_unchanged_to_clangd`]).
    unseen_by_clangd: HashSet<PathBuf>,
}

impl Default for Watch {
    fn default() -> Self {
        Watch {
            roots: HashMap::new(),
            hashes: HashMap::new(),
            cap: MAX_ENTRIES,
            unseen_by_clangd: HashSet::new(),
        }
    }
}

/// Files at a root that the servers read besides those of their extensions, which a
/// view's key covers too: dependency lock files (their root markers are added).
pub const LOCK_FILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "go.sum",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
];

impl Watch {
    /// Walk `root` for files with one of `extensions` and return what changed since
    /// the last walk, remembering this one. The first walk of a root (or the first with
    /// other extensions: a server was added there) returns nothing; so does a root
    /// given up on. `Err` carries the message to log when a root is given up on now.
    pub fn changes(
        &mut self,
        root: &Path,
        extensions: &HashSet<String>,
    ) -> Result<Vec<Change>, String> {
        if matches!(self.roots.get(root), Some(Known::TooLarge)) {
            return Ok(Vec::new());
        }
        let Some(now) = walk(root, extensions, self.cap) else {
            self.roots.insert(root.to_path_buf(), Known::TooLarge);
            return Err(format!(
                "{}: more than {} entries; files created or changed there behind lspgate's \
                 back are not announced to its servers",
                root.display(),
                self.cap
            ));
        };
        let changes = match self.roots.get(root) {
            Some(Known::Files {
                extensions: before_extensions,
                files: before,
            }) if before_extensions == extensions => {
                self.unseen_by_clangd = changes_unseen_by_clangd(before, &now);
                diff(before, &now)
            }
            _ => Vec::new(),
        };
        self.roots.insert(
            root.to_path_buf(),
            Known::Files {
                extensions: extensions.clone(),
                files: now,
            },
        );
        Ok(changes)
    }

    /// A key of the project at `root` as the last walk found it: the text of every
    /// file walked, and of the files `extra` names at the root (the servers'
    /// configuration, lock files). Equal keys, the same texts; so a server shown the
    /// project as on disk answers as it answered at that key before (`Pool::enter_view`).
    /// A file is read again only when its stamp changed since it was hashed. `None`
    /// for a root not walked yet, given up on, or with a file that cannot be read.
    ///
    /// What lies outside (installed packages, a gitignored directory) is not covered:
    /// the same caveat as the walk's.
    pub fn view_key(&mut self, root: &Path, extra: &[String]) -> Option<u64> {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let Some(Known::Files { files, .. }) = self.roots.get(root) else {
            return None;
        };
        let mut entries: Vec<(PathBuf, Stamp)> =
            files.iter().map(|(p, stamp)| (p.clone(), *stamp)).collect();
        for name in extra {
            let path = root.join(name);
            if let Ok(meta) = fs::metadata(&path)
                && meta.is_file()
            {
                entries.push((path, Stamp::of(&meta)));
            }
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|a, b| a.0 == b.0);
        let mut key = DefaultHasher::new();
        for (path, stamp) in &entries {
            let hash = match self.hashes.get(path) {
                Some((known, hash)) if known == stamp => *hash,
                _ => {
                    let mut h = DefaultHasher::new();
                    crate::regular::read(path).ok()?.hash(&mut h);
                    let hash = h.finish();
                    self.hashes.insert(path.clone(), (*stamp, hash));
                    hash
                }
            };
            path.hash(&mut key);
            hash.hash(&mut key);
        }
        // Files gone from the root are forgotten.
        let seen: std::collections::HashSet<&PathBuf> = entries.iter().map(|(p, _)| p).collect();
        self.hashes
            .retain(|p, _| !p.starts_with(root) || seen.contains(p));
        Some(key.finish())
    }

    /// Whether clangd would take `path`, as it is now, for the file the last walk (or
    /// touch) found: the same size and modification time to the second (see
    /// `lsp::clangd::looks_unchanged`). True for a file not known, or not there.
    pub fn looks_unchanged_to_clangd(&self, path: &Path) -> bool {
        let known = self.roots.values().find_map(|k| match k {
            Known::Files { files, .. } => files.get(path),
            Known::TooLarge => None,
        });
        match (known, fs::metadata(path)) {
            (Some(old), Ok(meta)) => {
                clangd::looks_unchanged((old.len, old.modified), (meta.len(), meta.modified().ok()))
            }
            _ => true,
        }
    }

    /// Whether the last [`Watch::changes`] found `path` changed in a way clangd does
    /// not see.
    pub fn changed_unseen_by_clangd(&self, path: &Path) -> bool {
        self.unseen_by_clangd.contains(path)
    }

    /// Whether `root` has a baseline (or was given up on).
    pub fn knows(&self, root: &Path) -> bool {
        self.roots.contains_key(root)
    }

    /// Re-stamp `paths` (written or deleted by a run, which announced them itself) in
    /// the roots that hold them, so the next walk does not announce them again.
    pub fn touched(&mut self, paths: &[PathBuf]) {
        for (root, known) in &mut self.roots {
            let Known::Files { extensions, files } = known else {
                continue;
            };
            for path in paths.iter().filter(|p| p.starts_with(root.as_path())) {
                match fs::metadata(path) {
                    // Only files a walk would list: of its extensions.
                    Ok(meta) if meta.is_file() && has_extension(path, extensions) => {
                        files.insert(path.clone(), Stamp::of(&meta));
                    }
                    _ => {
                        files.remove(path);
                    }
                }
            }
        }
    }
}

fn has_extension(path: &Path, extensions: &HashSet<String>) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| extensions.contains(e))
}

/// The files under `root` with one of `extensions`, or `None` past `cap` entries.
fn walk(root: &Path, extensions: &HashSet<String>, cap: usize) -> Option<HashMap<PathBuf, Stamp>> {
    let mut files = HashMap::new();
    let mut visited = 0usize;
    for entry in ignore::WalkBuilder::new(root)
        .follow_links(false)
        // The user's global excludes file would cost reading their git config on every
        // walk, before every run; the repository's own ignore files are what matter.
        .git_global(false)
        .build()
        .flatten()
    {
        visited += 1;
        if visited > cap {
            return None;
        }
        if !has_extension(entry.path(), extensions)
            || !entry.file_type().is_some_and(|t| t.is_file())
        {
            continue;
        }
        if let Ok(meta) = entry.metadata() {
            files.insert(entry.into_path(), Stamp::of(&meta));
        }
    }
    Some(files)
}

/// The files changed from `before` to `now` that clangd would take for unchanged.
fn changes_unseen_by_clangd(
    before: &HashMap<PathBuf, Stamp>,
    now: &HashMap<PathBuf, Stamp>,
) -> HashSet<PathBuf> {
    now.iter()
        .filter(|(path, stamp)| {
            before.get(*path).is_some_and(|old| {
                old != *stamp
                    && clangd::looks_unchanged((old.len, old.modified), (stamp.len, stamp.modified))
            })
        })
        .map(|(path, _)| path.clone())
        .collect()
}

fn diff(before: &HashMap<PathBuf, Stamp>, now: &HashMap<PathBuf, Stamp>) -> Vec<Change> {
    let mut changes: Vec<Change> = Vec::new();
    for (path, stamp) in now {
        match before.get(path) {
            None => changes.push((path.clone(), 1)),
            Some(old) if old != stamp => changes.push((path.clone(), 2)),
            Some(_) => {}
        }
    }
    for path in before.keys().filter(|p| !now.contains_key(*p)) {
        changes.push((path.clone(), 3));
    }
    changes.sort();
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exts(list: &[&str]) -> HashSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// A temporary directory (removed on drop) and its canonical path.
    fn temp_root() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical");
        (tmp, root)
    }

    #[test]
    fn created_changed_and_deleted_files_are_reported_once() {
        let (_tmp, root) = temp_root();
        fs::write(root.join("keep.py"), "a").expect("write");
        fs::write(root.join("gone.py"), "a").expect("write");
        fs::write(root.join("edit.py"), "a").expect("write");
        fs::write(root.join("other.txt"), "a").expect("write");
        let mut watch = Watch::default();
        let py = exts(&["py"]);
        assert_eq!(watch.changes(&root, &py), Ok(Vec::new()), "the baseline");
        assert!(watch.knows(&root));

        fs::write(root.join("new.py"), "a").expect("write");
        fs::write(root.join("edit.py"), "longer").expect("write");
        fs::remove_file(root.join("gone.py")).expect("remove");
        fs::write(root.join("other.txt"), "changed").expect("write");
        assert_eq!(
            watch.changes(&root, &py),
            Ok(vec![
                (root.join("edit.py"), 2),
                (root.join("gone.py"), 3),
                (root.join("new.py"), 1),
            ])
        );
        assert_eq!(watch.changes(&root, &py), Ok(Vec::new()), "told once");
    }

    /// clangd takes a file of the same size and modification time to the second for
    /// unchanged: such changes are named, and only those.
    #[test]
    fn changes_clangd_does_not_see_are_named() {
        let (_tmp, root) = temp_root();
        let header = root.join("a.h");
        let write = |text: &str, secs: u64, nanos: u32| {
            fs::write(&header, text).expect("write");
            let at = SystemTime::UNIX_EPOCH + std::time::Duration::new(secs, nanos);
            fs::File::options()
                .write(true)
                .open(&header)
                .and_then(|f| f.set_modified(at))
                .expect("set the time");
        };
        write("int x;\n", 1000, 0);
        let mut watch = Watch::default();
        let h = exts(&["h"]);
        assert_eq!(watch.changes(&root, &h), Ok(Vec::new()), "the baseline");

        write("int y;\n", 1000, 500_000_000);
        assert!(watch.looks_unchanged_to_clangd(&header));
        assert_eq!(watch.changes(&root, &h), Ok(vec![(header.clone(), 2)]));
        assert!(watch.changed_unseen_by_clangd(&header));

        write("int z;\n", 1002, 0);
        assert!(!watch.looks_unchanged_to_clangd(&header), "another second");
        assert_eq!(watch.changes(&root, &h), Ok(vec![(header.clone(), 2)]));
        assert!(!watch.changed_unseen_by_clangd(&header));

        write("int zz;\n", 1002, 0);
        assert!(!watch.looks_unchanged_to_clangd(&header), "another size");
        assert!(
            Watch::default().looks_unchanged_to_clangd(&header),
            "a file never walked may be anything"
        );
    }

    #[test]
    fn gitignored_and_hidden_files_are_not_walked() {
        let (_tmp, root) = temp_root();
        fs::create_dir(root.join(".git")).expect("a git dir");
        fs::write(root.join(".gitignore"), "build/\n").expect("write");
        let mut watch = Watch::default();
        let py = exts(&["py"]);
        assert_eq!(watch.changes(&root, &py), Ok(Vec::new()));
        fs::create_dir(root.join("build")).expect("mkdir");
        fs::write(root.join("build/gen.py"), "a").expect("write");
        fs::create_dir(root.join(".hidden")).expect("mkdir");
        fs::write(root.join(".hidden/x.py"), "a").expect("write");
        assert_eq!(watch.changes(&root, &py), Ok(Vec::new()));
    }

    #[test]
    fn a_run_s_own_writes_are_not_announced_again() {
        let (_tmp, root) = temp_root();
        fs::write(root.join("a.py"), "a").expect("write");
        let mut watch = Watch::default();
        let py = exts(&["py"]);
        assert_eq!(watch.changes(&root, &py), Ok(Vec::new()));
        fs::write(root.join("a.py"), "written by the run").expect("write");
        fs::write(root.join("b.py"), "created by the run").expect("write");
        watch.touched(&[root.join("a.py"), root.join("b.py")]);
        assert_eq!(watch.changes(&root, &py), Ok(Vec::new()));
    }

    #[test]
    fn a_view_key_follows_the_texts_not_the_stamps() {
        let (_tmp, root) = temp_root();
        fs::write(root.join("a.py"), "a = 1\n").expect("write");
        fs::write(root.join("b.py"), "b = 1\n").expect("write");
        fs::write(root.join("pyproject.toml"), "[tool]\n").expect("write");
        let mut watch = Watch::default();
        let py = exts(&["py"]);
        let extra = vec!["pyproject.toml".to_string(), "uv.lock".to_string()];
        assert_eq!(watch.view_key(&root, &extra), None, "not walked yet");
        watch.changes(&root, &py).expect("walk");
        let pristine = watch.view_key(&root, &extra).expect("a key");
        assert_eq!(
            watch.view_key(&root, &extra),
            Some(pristine),
            "nothing changed"
        );

        fs::write(root.join("a.py"), "a = 22\n").expect("write");
        watch.changes(&root, &py).expect("walk");
        let edited = watch.view_key(&root, &extra).expect("a key");
        assert_ne!(edited, pristine);

        // Back to the same text (a `git checkout`): a new stamp, the same key.
        fs::write(root.join("a.py"), "a = 1\n").expect("write");
        watch.changes(&root, &py).expect("walk");
        assert_eq!(watch.view_key(&root, &extra), Some(pristine));

        fs::write(root.join("pyproject.toml"), "[tool.other]\n").expect("write");
        assert_ne!(
            watch.view_key(&root, &extra),
            Some(pristine),
            "a configuration file counts"
        );
        fs::write(root.join("pyproject.toml"), "[tool]\n").expect("write");
        fs::write(root.join("c.py"), "").expect("write");
        watch.changes(&root, &py).expect("walk");
        assert_ne!(watch.view_key(&root, &extra), Some(pristine), "a new file");
    }

    #[test]
    fn a_large_tree_is_given_up_on() {
        let (_tmp, root) = temp_root();
        for i in 0..20 {
            fs::write(root.join(format!("f{i}")), "").expect("write");
        }
        let mut watch = Watch {
            cap: 10,
            ..Watch::default()
        };
        let err = watch.changes(&root, &exts(&["py"])).expect_err("too large");
        assert!(err.contains("more than"), "{err}");
        fs::write(root.join("new.py"), "").expect("write");
        assert_eq!(watch.changes(&root, &exts(&["py"])), Ok(Vec::new()));
    }
}
