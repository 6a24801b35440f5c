//! Keeping the diagnostics a server holds bounded, for a pool that lives as long as
//! the daemon.
//!
//! A file's entry is dropped when it is closed (`Pool::close`), but servers publish
//! for files nobody opened (gopls reports every package it loads) and publish an empty
//! list for a file just closed, so entries for unopened files accumulate. Between runs
//! [`trim`] (through `Pool::trim_diagnostics`) drops the entries of unopened files
//! that say nothing (an empty list is what a missing entry means to the check: no
//! diagnostics), and beyond a cap the oldest of the rest, by the pool clock of their
//! last publish or pull. Entries of open documents are never dropped here: the
//! open-document cap bounds them.
//!
//! The cost of the cap: a dropped file that still has diagnostics, republished unchanged
//! after a later edit, has no "before" and shows as new in that run.

use std::path::{Path, PathBuf};

use super::diagnostics::Store;

/// Drop the entries of `store` for files not `open` that are empty, then keep at
/// most `cap` of the other unopened ones, the most recently received. Returns how many
/// entries were dropped.
pub fn trim(store: &mut Store, open: impl Fn(&Path) -> bool, cap: usize) -> usize {
    let before = store.len();
    store.retain(|path, d| open(path) || d.has_any());
    let mut unopened: Vec<(u64, PathBuf)> = store
        .iter()
        .filter(|(path, _)| !open(path))
        .map(|(path, d)| (d.received(), path.to_path_buf()))
        .collect();
    if unopened.len() > cap {
        unopened.sort();
        let excess = unopened.len() - cap;
        for (_, path) in unopened.into_iter().take(excess) {
            store.remove(&path);
        }
    }
    before - store.len()
}

/// How many entries of `store` are for files not `open`: what [`trim`] bounds.
pub fn unopened(store: &Store, open: impl Fn(&Path) -> bool) -> usize {
    store.files().filter(|p| !open(p)).count()
}
