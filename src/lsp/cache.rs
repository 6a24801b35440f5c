//! Keeping the diagnostics a server holds bounded, for a pool that lives as long as
//! the daemon.
//!
//! A file's entry is dropped when it is closed ([`Pool::close`]), but servers publish
//! for files nobody opened (gopls reports every package it loads) and publish an empty
//! list for a file just closed, so entries for unopened files accumulate. Between runs
//! [`Pool::trim_diagnostics`] drops the entries of unopened files that say nothing
//! (an empty list is what a missing entry means to the check: no diagnostics), and
//! beyond a cap the oldest of the rest, by the pool clock of their last publish or pull.
//! Entries of open documents are never dropped here: the open-document cap bounds them.
//!
//! The cost of the cap: a dropped file that still has diagnostics, republished unchanged
//! after a later edit, has no "before" and shows as new in that run.

use std::path::PathBuf;

use super::{FileDiagnostics, Pool};

impl Pool {
    /// Drop the diagnostics of `index`'s unopened files that are empty, then keep at
    /// most `cap` of the others, the most recently received. Returns how many entries
    /// were dropped.
    pub fn trim_diagnostics(&mut self, index: usize, cap: usize) -> usize {
        let Some(server) = self.servers.get_mut(index) else {
            return 0;
        };
        // Its diagnostics are the live before view of every file, and the files it
        // published are the ones it tracks: all are kept (a few hundred bytes a file).
        if server.spec.wait.workspace_analysis {
            return 0;
        }
        let before = server.diagnostics.len();
        let docs = &server.docs;
        server
            .diagnostics
            .retain(|path, d| docs.contains_key(path) || has_any(d));
        let mut unopened: Vec<(u64, PathBuf)> = server
            .diagnostics
            .iter()
            .filter(|(path, _)| !docs.contains_key(*path))
            .map(|(path, d)| (d.received(), path.clone()))
            .collect();
        if unopened.len() > cap {
            unopened.sort();
            let excess = unopened.len() - cap;
            for (_, path) in unopened.into_iter().take(excess) {
                server.diagnostics.remove(&path);
            }
        }
        before - server.diagnostics.len()
    }

    /// How many files `index` holds diagnostics for that it does not have open: what
    /// [`Pool::trim_diagnostics`] bounds.
    pub fn unopened_diagnostics(&self, index: usize) -> usize {
        self.servers.get(index).map_or(0, |s| {
            s.diagnostics
                .keys()
                .filter(|p| !s.docs.contains_key(*p))
                .count()
        })
    }
}

fn has_any(d: &FileDiagnostics) -> bool {
    d.pushed.as_ref().is_some_and(|p| !p.diagnostics.is_empty())
        || d.pulled.as_ref().is_some_and(|p| !p.diagnostics.is_empty())
}
