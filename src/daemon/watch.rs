//! Files created, changed or deleted behind lspgate's back, for servers that rely on
//! the client to watch the disk.
//!
//! lspgate tells servers it supports `workspace/didChangeWatchedFiles`, so servers
//! that register file watchers (pyright, gopls, rust-analyzer, TypeScript 7, and
//! typescript-language-server, which hands tsserver's watching to us) do not watch
//! the disk themselves: between runs a warm server would never learn that `git
//! checkout` or an editor created, changed or deleted a file it has not opened. Open
//! documents are re-synced from their text (see the daemon's `resync`); this module
//! covers the others. (An older typescript-language-server registers none: its
//! tsserver watches the disk itself, in its own time.) The same walk gives the key of
//! the project's view ([`Watch::view_key`]).
//!
//! The daemon learns of changes from the operating system (`watcher`: inotify on
//! Linux, FSEvents on macOS, one watch per directory the walk visits): the first walk
//! of a root, made after the run that started its server, is the baseline and reports
//! nothing; before each later run the paths the system named since are looked at
//! again, and a directory created is walked. A root the watcher cannot cover (the
//! system's limit on watches, `LSPGATE_WATCH_LIMIT`, a watcher that cannot start) is
//! walked whole before every run instead, with no cap, and said so (`Watch::unwatched`:
//! `daemon status` and every run's notes); so is every root after the watcher lost
//! events. The files a run writes are re-stamped after it ([`Watch::touched`]): the run
//! announced them itself.
//!
//! A change that keeps both size and modification time (within the file system's
//! time granularity) goes unseen by a walk; a change inside a gitignored directory
//! goes unseen either way.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::watcher::OsWatcher;
use crate::servers::quirks;

mod ignore_rules;

/// What tells one version of a file from another without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// The files of one root (those with one of `extensions`) as last seen.
struct Known {
    extensions: HashSet<String>,
    files: HashMap<PathBuf, Stamp>,
}

/// A change to announce: LSP `FileChangeType` 1 created, 2 changed, 3 deleted.
pub type Change = (PathBuf, u8);

/// With no watcher ([`Watch::default`]), every root is walked before every run.
#[derive(Default)]
pub struct Watch {
    roots: HashMap<PathBuf, Known>,
    /// Each file's text hashed, with the stamp it had then (see [`Watch::view_key`]).
    hashes: HashMap<PathBuf, (Stamp, u64)>,
    /// The files the last [`Watch::changes`] found changed that clangd would take for
    /// unchanged (see [`Watch::kept_size_and_second`]).
    size_and_second_kept: HashSet<PathBuf>,
    os: Option<OsWatcher>,
    /// What the watcher named at the last [`Watch::sync`]; each root reads its own.
    pending: HashSet<PathBuf>,
    /// The watcher may have lost events since the last sync: every root is walked.
    rescan: bool,
    /// Roots the watcher does not cover, and why: walked before every run.
    walked: BTreeMap<PathBuf, String>,
}

/// Files at a root that the servers read besides those of their extensions, which a
/// view's key covers too: dependency lock files (their root markers are added).
pub use crate::baseline::LOCK_FILES;

impl Watch {
    /// A watch with the system's watcher, its markers in `sync_dir` (the daemon's own),
    /// watching at most `limit` directories; without one (it could not start: why),
    /// every root is walked.
    pub fn watching(sync_dir: &Path, limit: usize) -> (Watch, Option<String>) {
        match OsWatcher::new(sync_dir, limit) {
            Ok(os) => (
                Watch {
                    os: Some(os),
                    ..Watch::default()
                },
                None,
            ),
            Err(why) => (Watch::default(), Some(why)),
        }
    }

    /// Before a run: take what the watcher heard of every change made so far.
    pub fn sync(&mut self) {
        let Some(os) = &mut self.os else { return };
        let drained = os.drain();
        self.pending = drained.paths;
        self.rescan = drained.rescan;
    }

    /// Whether nothing under any root changed since the last [`Watch::sync`], as far as
    /// the system's watcher can tell: false when it cannot (no watcher, or a root
    /// walked instead of watched).
    pub fn quiet(&mut self) -> bool {
        if !self.unwatched().is_empty() {
            return false;
        }
        self.os.as_mut().is_some_and(OsWatcher::quiet)
    }

    /// The roots walked whole before every run rather than watched, each with why.
    pub fn unwatched(&self) -> Vec<(PathBuf, String)> {
        self.walked
            .iter()
            .filter(|(root, _)| self.roots.contains_key(*root))
            .map(|(root, why)| (root.clone(), why.clone()))
            .collect()
    }

    /// How many directories the system's watcher watches (none without one).
    pub fn watched_directories(&self) -> usize {
        self.os.as_ref().map_or(0, OsWatcher::watched)
    }

    /// What changed under `root` (files with one of `extensions`) since the last call,
    /// from what the watcher named at the last [`Watch::sync`], or a walk. The first
    /// call for a root (or the first with other extensions: a server was added there)
    /// is its baseline and returns nothing. Without a sync since, what is returned
    /// may miss the latest changes.
    pub fn changes(&mut self, root: &Path, extensions: &HashSet<String>) -> Vec<Change> {
        let known = self
            .roots
            .get(root)
            .filter(|k| &k.extensions == extensions)
            .map(|k| k.files.clone());
        let Some(before) = known else {
            let (files, dirs) = walk(root, extensions);
            self.cover(root, &dirs);
            self.roots.insert(
                root.to_path_buf(),
                Known {
                    extensions: extensions.clone(),
                    files,
                },
            );
            return Vec::new();
        };
        let watched = self.os.is_some() && !self.walked.contains_key(root);
        let now = match watched && !self.rescan {
            true => self.apply_events(root, extensions, &before),
            false => None,
        };
        let now = now.unwrap_or_else(|| {
            let (files, dirs) = walk(root, extensions);
            if watched {
                self.cover(root, &dirs);
            }
            files
        });
        self.size_and_second_kept = changes_keeping_size_and_second(&before, &now);
        let changes = diff(&before, &now);
        self.roots.insert(
            root.to_path_buf(),
            Known {
                extensions: extensions.clone(),
                files: now,
            },
        );
        changes
    }

    /// Watch `dirs` of `root`; if one cannot be, the root is walked from now on.
    fn cover(&mut self, root: &Path, dirs: &[PathBuf]) {
        let Some(os) = &mut self.os else { return };
        if self.walked.contains_key(root) {
            return;
        }
        for dir in dirs {
            if let Err(why) = os.watch_dir(dir) {
                os.forget(root);
                self.walked.insert(root.to_path_buf(), why);
                return;
            }
        }
    }

    /// `before` with the paths the watcher named under `root` looked at again; `None`
    /// when the root has to be walked instead (a directory that cannot be watched).
    fn apply_events(
        &mut self,
        root: &Path,
        extensions: &HashSet<String>,
        before: &HashMap<PathBuf, Stamp>,
    ) -> Option<HashMap<PathBuf, Stamp>> {
        let mut named: Vec<PathBuf> = self
            .pending
            .iter()
            .filter(|p| p.starts_with(root))
            .cloned()
            .collect();
        named.sort();
        let mut now = before.clone();
        let mut ignores = ignore_rules::Rules::default();
        for path in named {
            let meta = fs::symlink_metadata(&path).ok();
            let is_dir = meta.as_ref().is_some_and(|m| m.is_dir());
            if meta.is_some() && ignores.ignored(root, &path, is_dir) {
                continue;
            }
            match meta {
                Some(_) if is_dir => {
                    let (files, dirs) = walk(&path, extensions);
                    now.extend(files);
                    self.cover(root, &dirs);
                    if self.walked.contains_key(root) {
                        return None;
                    }
                }
                Some(meta) if meta.is_file() && has_extension(&path, extensions) => {
                    now.insert(path, Stamp::of(&meta));
                }
                // Gone (with what was under it), or no longer a file a walk lists.
                _ => now.retain(|p, _| !p.starts_with(&path)),
            }
        }
        Some(now)
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
        let Known { files, .. } = self.roots.get(root)?;
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
    /// `servers::quirks::looks_unchanged`). True for a file not known, or not there.
    pub fn kept_size_and_second(&self, path: &Path) -> bool {
        let known = self.roots.values().find_map(|k| k.files.get(path));
        match (known, fs::metadata(path)) {
            (Some(old), Ok(meta)) => {
                quirks::looks_unchanged((old.len, old.modified), (meta.len(), meta.modified().ok()))
            }
            _ => true,
        }
    }

    /// Whether the last [`Watch::changes`] found `path` changed in a way clangd does
    /// not see.
    pub fn changed_keeping_size_and_second(&self, path: &Path) -> bool {
        self.size_and_second_kept.contains(path)
    }

    /// Whether `root` has a baseline.
    pub fn knows(&self, root: &Path) -> bool {
        self.roots.contains_key(root)
    }

    /// Re-stamp `paths` (written or deleted by a run, which announced them itself) in
    /// the roots that hold them, so the next walk does not announce them again.
    pub fn touched(&mut self, paths: &[PathBuf]) {
        for (root, Known { extensions, files }) in &mut self.roots {
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

/// What tells one state of a server's configuration files from another: those in
/// its `root` and the directories above it up to `workspace` (`go.mod`,
/// `tsconfig.json`, `pyrightconfig.json`, ...: `ServerSpec::configured_by`), each by
/// name, size and modification time. A server reads them once, when it starts: the
/// daemon starts one afresh when this changes behind its back. A server checking a
/// monorepo from its root reads each member package's too (its `tsconfig.json`,
/// `go.mod`); another configuration file below the root is not looked at. What is
/// installed where its imports resolve counts too (`baseline::environment`: the
/// entries of `node_modules`, of a `.venv`'s `site-packages`), as do the root's lock
/// files: a dependency installed or upgraded behind the daemon's back is seen by no
/// server that leaves its watching to lspgate (the daemon walks no ignored directory),
/// so the server starts afresh.
pub fn configuration_stamp(
    spec: &crate::servers::ServerSpec,
    root: &Path,
    workspace: &Path,
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let members: Vec<PathBuf> = crate::workspace::monorepo::at(root, &spec.coverage.monorepos)
        .into_iter()
        .flat_map(|m| m.packages.into_iter().map(|p| p.dir))
        .collect();
    let above = root.ancestors().filter(|d| d.starts_with(workspace));
    let mut found: Vec<(PathBuf, Stamp)> = Vec::new();
    for d in members.iter().map(PathBuf::as_path).chain(above) {
        let mut here: Vec<(PathBuf, Stamp)> = fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| spec.configured_by(&e.path()))
            .filter_map(|e| Some((e.path(), Stamp::of(&fs::symlink_metadata(e.path()).ok()?))))
            .collect();
        here.sort_by(|a, b| a.0.cmp(&b.0));
        found.extend(here);
    }
    found.extend(
        LOCK_FILES
            .iter()
            .map(|lock| root.join(lock))
            .filter_map(|p| Some((p.clone(), Stamp::of(&fs::symlink_metadata(&p).ok()?)))),
    );
    found.hash(&mut hasher);
    crate::baseline::environment(root, spec).hash(&mut hasher);
    hasher.finish()
}

fn has_extension(path: &Path, extensions: &HashSet<String>) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| extensions.contains(e))
}

/// The files under `root` with one of `extensions`, and the directories walked
/// (`.gitignore` honoured, hidden entries skipped, links not followed).
fn walk(root: &Path, extensions: &HashSet<String>) -> (HashMap<PathBuf, Stamp>, Vec<PathBuf>) {
    let mut files = HashMap::new();
    let mut dirs = Vec::new();
    for entry in ignore::WalkBuilder::new(root)
        .follow_links(false)
        // The user's global excludes file would cost reading their git config on every
        // walk, before every run; the repository's own ignore files are what matter.
        .git_global(false)
        .build()
        .flatten()
    {
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            dirs.push(entry.into_path());
            continue;
        }
        if !kind.is_file() || !has_extension(entry.path(), extensions) {
            continue;
        }
        if let Ok(meta) = entry.metadata() {
            files.insert(entry.into_path(), Stamp::of(&meta));
        }
    }
    (files, dirs)
}

/// The files changed from `before` to `now` that clangd would take for unchanged.
fn changes_keeping_size_and_second(
    before: &HashMap<PathBuf, Stamp>,
    now: &HashMap<PathBuf, Stamp>,
) -> HashSet<PathBuf> {
    now.iter()
        .filter(|(path, stamp)| {
            before.get(*path).is_some_and(|old| {
                old != *stamp
                    && quirks::looks_unchanged((old.len, old.modified), (stamp.len, stamp.modified))
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

    /// A dependency installed or upgraded behind the daemon's back changes the stamp
    /// that retires a server: no server that leaves its watching to lspgate hears of
    /// `node_modules` (the daemon walks no ignored directory).
    #[test]
    fn what_is_installed_and_the_lock_file_count_in_the_configuration_stamp() {
        let (_tmp, root) = temp_root();
        let spec = crate::servers::builtin()
            .into_iter()
            .find(|s| s.name == crate::servers::typescript::TSLS)
            .expect("a TypeScript server");
        fs::write(root.join("tsconfig.json"), "{}").expect("write");
        fs::create_dir_all(root.join("node_modules/dep")).expect("mkdir");
        let stamp = || configuration_stamp(&spec, &root, &root);
        let first = stamp();
        assert_eq!(stamp(), first, "nothing changed");
        fs::create_dir_all(root.join("node_modules/other")).expect("mkdir");
        let installed = stamp();
        assert_ne!(installed, first, "a package installed");
        fs::write(root.join("package-lock.json"), "{}").expect("write");
        assert_ne!(stamp(), installed, "a lock file written");
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
        assert_eq!(watch.changes(&root, &py), Vec::new(), "the baseline");
        assert!(watch.knows(&root));

        fs::write(root.join("new.py"), "a").expect("write");
        fs::write(root.join("edit.py"), "longer").expect("write");
        fs::remove_file(root.join("gone.py")).expect("remove");
        fs::write(root.join("other.txt"), "changed").expect("write");
        assert_eq!(
            watch.changes(&root, &py),
            vec![
                (root.join("edit.py"), 2),
                (root.join("gone.py"), 3),
                (root.join("new.py"), 1),
            ]
        );
        assert_eq!(watch.changes(&root, &py), Vec::new(), "told once");
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
        assert_eq!(watch.changes(&root, &h), Vec::new(), "the baseline");

        write("int y;\n", 1000, 500_000_000);
        assert!(watch.kept_size_and_second(&header));
        assert_eq!(watch.changes(&root, &h), vec![(header.clone(), 2)]);
        assert!(watch.changed_keeping_size_and_second(&header));

        write("int z;\n", 1002, 0);
        assert!(!watch.kept_size_and_second(&header), "another second");
        assert_eq!(watch.changes(&root, &h), vec![(header.clone(), 2)]);
        assert!(!watch.changed_keeping_size_and_second(&header));

        write("int zz;\n", 1002, 0);
        assert!(!watch.kept_size_and_second(&header), "another size");
        assert!(
            Watch::default().kept_size_and_second(&header),
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
        assert_eq!(watch.changes(&root, &py), Vec::new());
        fs::create_dir(root.join("build")).expect("mkdir");
        fs::write(root.join("build/gen.py"), "a").expect("write");
        fs::create_dir(root.join(".hidden")).expect("mkdir");
        fs::write(root.join(".hidden/x.py"), "a").expect("write");
        assert_eq!(watch.changes(&root, &py), Vec::new());
    }

    #[test]
    fn a_run_s_own_writes_are_not_announced_again() {
        let (_tmp, root) = temp_root();
        fs::write(root.join("a.py"), "a").expect("write");
        let mut watch = Watch::default();
        let py = exts(&["py"]);
        assert_eq!(watch.changes(&root, &py), Vec::new());
        fs::write(root.join("a.py"), "written by the run").expect("write");
        fs::write(root.join("b.py"), "created by the run").expect("write");
        watch.touched(&[root.join("a.py"), root.join("b.py")]);
        assert_eq!(watch.changes(&root, &py), Vec::new());
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
        watch.changes(&root, &py);
        let pristine = watch.view_key(&root, &extra).expect("a key");
        assert_eq!(
            watch.view_key(&root, &extra),
            Some(pristine),
            "nothing changed"
        );

        fs::write(root.join("a.py"), "a = 22\n").expect("write");
        watch.changes(&root, &py);
        let edited = watch.view_key(&root, &extra).expect("a key");
        assert_ne!(edited, pristine);

        // Back to the same text (a `git checkout`): a new stamp, the same key.
        fs::write(root.join("a.py"), "a = 1\n").expect("write");
        watch.changes(&root, &py);
        assert_eq!(watch.view_key(&root, &extra), Some(pristine));

        fs::write(root.join("pyproject.toml"), "[tool.other]\n").expect("write");
        assert_ne!(
            watch.view_key(&root, &extra),
            Some(pristine),
            "a configuration file counts"
        );
        fs::write(root.join("pyproject.toml"), "[tool]\n").expect("write");
        fs::write(root.join("c.py"), "").expect("write");
        watch.changes(&root, &py);
        assert_ne!(watch.view_key(&root, &extra), Some(pristine), "a new file");
    }

    /// With the system's watcher, what changed is what it named: a file created in a
    /// tree larger than any walk cap, a directory created with files in it, a file
    /// deleted; nothing is missed or said twice. Each change is made before the sync,
    /// as a tool changes files before lspgate runs.
    #[test]
    fn the_watcher_names_what_changed_in_a_large_tree() {
        let (_tmp, root) = temp_root();
        let tree = root.join("tree");
        fs::create_dir_all(tree.join("assets")).expect("mkdir");
        for i in 0..12_000 {
            fs::write(tree.join(format!("assets/f{i}.png")), "").expect("write");
        }
        fs::write(tree.join("a.py"), "a").expect("write");
        let (mut watch, failed) = Watch::watching(&root.join("sync"), usize::MAX);
        assert_eq!(failed, None);
        let py = exts(&["py"]);
        watch.sync();
        assert_eq!(watch.changes(&tree, &py), Vec::new(), "the baseline");
        fs::write(tree.join("a.py"), "changed").expect("write");
        fs::create_dir(tree.join("pkg")).expect("mkdir");
        fs::write(tree.join("pkg/b.py"), "b").expect("write");
        watch.sync();
        assert_eq!(
            watch.changes(&tree, &py),
            vec![(tree.join("a.py"), 2), (tree.join("pkg/b.py"), 1)]
        );
        fs::remove_file(tree.join("a.py")).expect("remove");
        fs::write(tree.join("pkg/c.py"), "c").expect("write");
        watch.sync();
        assert_eq!(
            watch.changes(&tree, &py),
            vec![(tree.join("a.py"), 3), (tree.join("pkg/c.py"), 1)]
        );
        watch.sync();
        assert_eq!(watch.changes(&tree, &py), Vec::new(), "told once");
        assert!(watch.unwatched().is_empty());
    }

    /// A root with more directories than the watcher may watch is walked instead, and
    /// said so: its changes are still found.
    #[test]
    fn a_root_the_watcher_cannot_cover_is_walked() {
        let (_tmp, root) = temp_root();
        let tree = root.join("tree");
        for d in 0..5 {
            fs::create_dir_all(tree.join(format!("d{d}"))).expect("mkdir");
        }
        let (mut watch, _) = Watch::watching(&root.join("sync"), 3);
        let py = exts(&["py"]);
        watch.sync();
        assert_eq!(watch.changes(&tree, &py), Vec::new());
        let unwatched = watch.unwatched();
        assert_eq!(unwatched.len(), 1);
        assert!(
            unwatched[0].1.contains("LSPGATE_WATCH_LIMIT"),
            "{unwatched:?}"
        );
        fs::write(tree.join("d4/x.py"), "x").expect("write");
        watch.sync();
        assert_eq!(watch.changes(&tree, &py), vec![(tree.join("d4/x.py"), 1)]);
    }
}
