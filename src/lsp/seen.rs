//! What the servers had said of the tree when a run ended: the diagnostics lspgate
//! last saw, kept apart from the live store.
//!
//! Between runs the live store does not stand still: tsserver watches the disk itself
//! and has typescript-language-server push the open files again when another tool
//! changes a module; a later `check` of another file shows the servers a tree that
//! changed behind lspgate's back. A `check --changed` wants the word on the tree its
//! baseline names, which is the one the run that moved the baseline ended on: that
//! run's [`SeenView`], taken as it ended, is it (docs/SPEC.md section 6).

use std::collections::HashMap;
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
}

/// The views a daemon kept, newest last, each by an id no other daemon gives: a
/// baseline names the view its run ended on, and a later run finds it here while
/// this daemon lives.
#[derive(Debug)]
pub struct SeenViews {
    kept: Vec<(u64, Arc<SeenView>)>,
    next: u64,
}

/// Views kept: the baseline's, and a few runs of other files after it.
const KEPT: usize = 4;

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
    fn a_view_is_found_by_its_id_until_four_newer_ones_are_kept() {
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
