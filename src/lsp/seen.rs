//! What the servers had said of the tree when a run ended: the diagnostics lspgate
//! last saw, kept apart from the live store.
//!
//! Between runs the live store does not stand still: an older tsserver watches the
//! disk itself and has typescript-language-server push the open files again when another tool
//! changes a module; a later `check` of another file shows the servers a tree that
//! changed behind lspgate's back. A `check --changed` wants the word on the tree its
//! baseline names, which is the one the run that moved the baseline ended on: that
//! run's [`SeenView`], taken as it ended, is it (docs/SPEC.md section 6).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lsp_types::Diagnostic;

use super::{Pool, ServerId};

/// What one server had said when a run ended.
#[derive(Debug, Clone, Default)]
pub struct ServerSeen {
    /// Each file whose word then still held (received after the last change of
    /// anything the server sees), by path.
    pub files: HashMap<PathBuf, Vec<Diagnostic>>,
    /// The server reports on every file of its workspace unasked and had settled:
    /// a file missing from `files` had nothing said of it.
    pub whole: bool,
}

impl ServerSeen {
    /// The word on `path`: `None` when it is not known.
    pub fn of(&self, path: &Path) -> Option<Vec<Diagnostic>> {
        match self.files.get(path) {
            Some(d) => Some(d.clone()),
            None if self.whole => Some(Vec::new()),
            None => None,
        }
    }

    /// Whether the word on every one of `paths` is known.
    pub fn covers<'a>(&self, mut paths: impl Iterator<Item = &'a Path>) -> bool {
        self.whole || paths.all(|p| self.files.contains_key(p))
    }
}

/// The word of every live server when a run ended.
#[derive(Debug, Clone, Default)]
pub struct SeenView {
    pub servers: HashMap<ServerId, ServerSeen>,
}

impl SeenView {
    /// What the pool's live servers say now, each file whose word still holds.
    pub fn of(pool: &Pool) -> SeenView {
        let mut servers = HashMap::new();
        for id in pool.ids() {
            let server = pool.server(id);
            if server.is_dead() || !server.initialized() {
                continue;
            }
            let store = server.diagnostics();
            let whole = server.spec().wait.reports_unopened()
                && store.owes_nothing()
                && !store.any_unreadable()
                && server.progress().next().is_none();
            let files = store
                .files()
                .filter(|p| whole || server.diagnostics_hold(p))
                .map(|p| (p.to_path_buf(), server.diagnostics_of(p)))
                .collect();
            servers.insert(id, ServerSeen { files, whole });
        }
        SeenView { servers }
    }

    pub fn server(&self, id: ServerId) -> Option<&ServerSeen> {
        self.servers.get(&id)
    }

    /// The view of a run that started from `earlier` (the tree it was of, plus the
    /// run's change): each server's word on a file the run neither changed nor asked
    /// about (`touched`), known in `earlier` and not said again since, carried over.
    /// That word still holds as far as the run's scan for dependents can tell, which
    /// is what the run's own check trusts: a file the change could break was asked
    /// about. Without it, every change elsewhere would leave the view holding only
    /// the files of the last run (clangd's units, tsserver's files).
    pub fn carry_over(&mut self, earlier: &SeenView, touched: &HashSet<PathBuf>) {
        for (id, now) in self.servers.iter_mut().filter(|(_, v)| !v.whole) {
            let Some(before) = earlier.servers.get(id) else {
                continue;
            };
            for (path, diagnostics) in &before.files {
                if !touched.contains(path) && !now.files.contains_key(path) {
                    now.files.insert(path.clone(), diagnostics.clone());
                }
            }
        }
    }
}

/// The views a daemon kept, newest last, each by an id no other daemon gives: a
/// baseline names the view its run ended on, and a later run finds it here while
/// this daemon lives.
#[derive(Debug)]
pub struct SeenViews {
    kept: Vec<(u64, Arc<SeenView>)>,
    next: u64,
}

/// Views kept: the one the baseline names, and the newest (a review not yet accepted:
/// one that found the tree changed again while it ran). Each holds a copy of every
/// word kept, all of pyright's on a large project: the daemon's memory bounds them.
const KEPT: usize = 2;

impl Default for SeenViews {
    fn default() -> SeenViews {
        // Ids from the clock and the process: a baseline written by an earlier daemon
        // names none of this one's.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        SeenViews {
            kept: Vec::new(),
            next: nanos ^ (u64::from(std::process::id()) << 40),
        }
    }
}

impl SeenViews {
    /// Keep `view`; its id.
    pub fn keep(&mut self, view: SeenView) -> u64 {
        self.next = self.next.wrapping_add(1);
        self.kept.push((self.next, Arc::new(view)));
        if self.kept.len() > KEPT {
            self.kept.remove(0);
        }
        self.next
    }

    /// The view `id` gets what the servers have said since it was kept, of the same
    /// tree (the caller knows nothing changed): a server that reports on its whole
    /// workspace and has settled since gives its whole word; another, its word on the
    /// files the view did not know. (clangd's units, built after the run ended.)
    pub fn extend(&mut self, id: u64, now: SeenView) {
        let Some((_, kept)) = self.kept.iter_mut().find(|(i, _)| *i == id) else {
            return;
        };
        let kept = Arc::make_mut(kept);
        for (server, fresh) in now.servers {
            let known = kept.servers.entry(server).or_default();
            if fresh.whole {
                *known = fresh;
                continue;
            }
            for (path, diagnostics) in fresh.files {
                known.files.entry(path).or_insert(diagnostics);
            }
        }
    }

    pub fn get(&self, id: u64) -> Option<Arc<SeenView>> {
        self.kept
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, v)| Arc::clone(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_is_found_by_its_id_until_kept_newer_ones_replace_it() {
        let mut views = SeenViews::default();
        let first = views.keep(SeenView::default());
        assert!(views.get(first).is_some());
        let mut last = first;
        for _ in 0..KEPT {
            last = views.keep(SeenView::default());
        }
        assert!(views.get(first).is_none());
        assert!(views.get(last).is_some());
        assert!(views.get(last.wrapping_add(1)).is_none());
    }

    #[test]
    fn a_word_not_said_again_is_carried_over_unless_the_run_touched_its_file() {
        let id = |v: &SeenView| *v.servers.keys().next().expect("a server");
        let (a, b, c) = (
            PathBuf::from("/w/a.c"),
            PathBuf::from("/w/b.c"),
            PathBuf::from("/w/c.c"),
        );
        let mut earlier = SeenView::default();
        let mut old = ServerSeen::default();
        for p in [&a, &b, &c] {
            old.files.insert(p.clone(), Vec::new());
        }
        let mut now = SeenView::default();
        let mut fresh = ServerSeen::default();
        fresh.files.insert(a.clone(), vec![Diagnostic::default()]);
        let server = ServerId::nth(0);
        earlier.servers.insert(server, old);
        now.servers.insert(server, fresh);
        now.carry_over(&earlier, &HashSet::from([b.clone()]));
        let files = &now.servers[&id(&now)].files;
        assert_eq!(
            files[&a],
            vec![Diagnostic::default()],
            "said again: the new word"
        );
        assert!(!files.contains_key(&b), "touched by the run: not carried");
        assert!(files.contains_key(&c), "untouched: carried over");
    }

    #[test]
    fn a_view_extended_learns_new_files_and_a_settled_whole_word() {
        let mut views = SeenViews::default();
        let (a, b) = (PathBuf::from("/w/a.c"), PathBuf::from("/w/b.c"));
        let (one, two) = (ServerId::nth(0), ServerId::nth(1));
        let mut kept = SeenView::default();
        let mut units = ServerSeen::default();
        units.files.insert(a.clone(), Vec::new());
        kept.servers.insert(one, units);
        kept.servers.insert(two, ServerSeen::default());
        let id = views.keep(kept);
        let mut now = SeenView::default();
        let mut later = ServerSeen::default();
        later.files.insert(a.clone(), vec![Diagnostic::default()]);
        later.files.insert(b.clone(), Vec::new());
        now.servers.insert(one, later);
        let whole = ServerSeen {
            whole: true,
            ..ServerSeen::default()
        };
        now.servers.insert(two, whole);
        views.extend(id, now);
        let view = views.get(id).expect("kept");
        let units = view.server(one).expect("clangd's");
        assert_eq!(units.files[&a], Vec::new(), "the word it had stands");
        assert!(
            units.files.contains_key(&b),
            "a file it did not know is learnt"
        );
        assert!(view.server(two).expect("pyright's").whole);
    }

    #[test]
    fn a_whole_view_knows_every_file_and_another_only_those_it_holds() {
        let path = PathBuf::from("/w/a.py");
        let other = PathBuf::from("/w/b.py");
        let mut seen = ServerSeen::default();
        seen.files.insert(path.clone(), Vec::new());
        assert!(seen.of(&other).is_none());
        assert!(!seen.covers([path.as_path(), other.as_path()].into_iter()));
        seen.whole = true;
        assert_eq!(seen.of(&other), Some(Vec::new()));
        assert!(seen.covers([path.as_path(), other.as_path()].into_iter()));
    }
}
