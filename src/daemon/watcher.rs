//! The operating system's word on what changed under the servers' roots, through the
//! `notify` crate (inotify on Linux, FSEvents on macOS): one watcher for the daemon,
//! one watch per directory the walk of a root visits (so `.gitignore`d trees such as
//! `node_modules` cost no watch), and the paths it names collected until the next run
//! asks.
//!
//! The events come on the watcher's own thread, some time after the change. Before a
//! run the daemon must have every event of every change made before it: it writes a
//! marker file in a directory of its own that the same watcher watches, and waits for
//! the marker's event. Events of one watcher come in the order of the changes (one
//! inotify queue), so once the marker's has come, every earlier one has. A marker that
//! does not come in time, an overflowed queue or a watcher error is a rescan (a full
//! walk): never silently stale.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher as _};

/// How long the run waits for its marker's event before it walks instead.
const SYNC_BOUND: Duration = Duration::from_secs(2);

/// What the watcher's thread found since the last [`OsWatcher::drain`].
#[derive(Default)]
struct Found {
    paths: HashSet<PathBuf>,
    /// The watcher lost events (a queue overflow, an error): walk everything.
    rescan: bool,
    /// The highest marker seen.
    synced: u64,
}

/// What changed since the last drain.
#[derive(Debug, Default)]
pub struct Drained {
    pub paths: HashSet<PathBuf>,
    /// Events may have been lost: every root must be walked.
    pub rescan: bool,
}

pub struct OsWatcher {
    watcher: notify::RecommendedWatcher,
    found: Arc<(Mutex<Found>, Condvar)>,
    sync_dir: PathBuf,
    watched: HashSet<PathBuf>,
    /// Directories it may watch, at most (`LSPGATE_WATCH_LIMIT`): past it, a root is
    /// walked instead, as when the system's own limit is reached.
    limit: usize,
    marker: u64,
}

impl OsWatcher {
    /// A watcher whose markers go in `sync_dir` (made if need be, the daemon's own).
    pub fn new(sync_dir: &Path, limit: usize) -> Result<OsWatcher, String> {
        std::fs::create_dir_all(sync_dir).map_err(|e| format!("{}: {e}", sync_dir.display()))?;
        let found: Arc<(Mutex<Found>, Condvar)> = Arc::default();
        let theirs = Arc::clone(&found);
        let markers = sync_dir.to_path_buf();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let (lock, cvar) = &*theirs;
                let mut found = lock.lock().unwrap_or_else(|p| p.into_inner());
                match event {
                    Ok(event) => {
                        found.rescan |= event.need_rescan();
                        for path in event.paths {
                            match marker_number(&markers, &path) {
                                Some(n) => found.synced = found.synced.max(n),
                                None => {
                                    found.paths.insert(path);
                                }
                            }
                        }
                    }
                    Err(_) => found.rescan = true,
                }
                cvar.notify_all();
            })
            .map_err(|e| e.to_string())?;
        watcher
            .watch(sync_dir, RecursiveMode::NonRecursive)
            .map_err(|e| e.to_string())?;
        Ok(OsWatcher {
            watcher,
            found,
            sync_dir: sync_dir.to_path_buf(),
            watched: HashSet::new(),
            limit,
            marker: 0,
        })
    }

    /// Watch `dir` (its entries, not below). `Err` says why it cannot be: the
    /// system's limit on watches, or [`OsWatcher::limit`].
    pub fn watch_dir(&mut self, dir: &Path) -> Result<(), String> {
        if self.watched.contains(dir) {
            return Ok(());
        }
        if self.watched.len() >= self.limit {
            return Err(format!(
                "more than {} directories to watch (LSPGATE_WATCH_LIMIT)",
                self.limit
            ));
        }
        self.watcher
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(|e| e.to_string())?;
        self.watched.insert(dir.to_path_buf());
        Ok(())
    }

    /// Stop watching the directories under `root` (a root now walked instead).
    pub fn forget(&mut self, root: &Path) {
        let under: Vec<PathBuf> = self
            .watched
            .iter()
            .filter(|d| d.starts_with(root))
            .cloned()
            .collect();
        for dir in under {
            let _ = self.watcher.unwatch(&dir);
            self.watched.remove(&dir);
        }
    }

    /// How many directories are watched.
    pub fn watched(&self) -> usize {
        self.watched.len()
    }

    /// Every path the system named since the last drain, once every change made
    /// before this call has been heard of (see the module's notes); a rescan when that
    /// cannot be known.
    pub fn drain(&mut self) -> Drained {
        self.synced(|found, heard| Drained {
            paths: std::mem::take(&mut found.paths),
            rescan: std::mem::take(&mut found.rescan) || !heard,
        })
    }

    /// Whether nothing at all was named since the last drain, every change made before
    /// this call heard of; false when that cannot be known. Nothing is taken.
    pub fn quiet(&mut self) -> bool {
        self.synced(|found, heard| heard && !found.rescan && found.paths.is_empty())
    }

    /// `read` what was found once every change made before this call has been heard
    /// of (its marker's event has come: `heard`), or the bound ran out (not `heard`).
    fn synced<T>(&mut self, read: impl FnOnce(&mut Found, bool) -> T) -> T {
        self.marker += 1;
        let marker = self.sync_dir.join(format!("sync-{}", self.marker));
        let written = std::fs::write(&marker, b"");
        let (lock, cvar) = &*self.found;
        let deadline = Instant::now() + SYNC_BOUND;
        let mut found = lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut heard = written.is_ok();
        while heard && found.synced < self.marker {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                heard = false;
                break;
            }
            found = cvar
                .wait_timeout(found, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        let out = read(&mut found, heard);
        drop(found);
        let _ = std::fs::remove_file(&marker);
        out
    }
}

/// The number of marker `path`, if it is one of `markers`'.
fn marker_number(markers: &Path, path: &Path) -> Option<u64> {
    if path.parent()? != markers {
        return None;
    }
    path.file_name()?
        .to_str()?
        .strip_prefix("sync-")?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_made_before_the_drain_is_in_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical");
        let sync = root.join("sync");
        let tree = root.join("tree");
        std::fs::create_dir(&tree).expect("mkdir");
        let mut watcher = OsWatcher::new(&sync, usize::MAX).expect("a watcher");
        watcher.watch_dir(&tree).expect("watch");
        for round in 0..20 {
            let file = tree.join(format!("f{round}.py"));
            std::fs::write(&file, "x").expect("write");
            let drained = watcher.drain();
            assert!(!drained.rescan, "round {round}");
            assert!(drained.paths.contains(&file), "round {round}: {drained:?}");
        }
    }

    #[test]
    fn past_the_limit_a_directory_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical");
        let mut watcher = OsWatcher::new(&root.join("sync"), 1).expect("a watcher");
        std::fs::create_dir(root.join("a")).expect("mkdir");
        std::fs::create_dir(root.join("b")).expect("mkdir");
        assert!(watcher.watch_dir(&root.join("a")).is_ok());
        assert!(watcher.watch_dir(&root.join("b")).is_err());
        assert_eq!(watcher.watched(), 1);
    }
}
