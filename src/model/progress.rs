//! A run's progress while it waits, as plain data: what a server is busy with, and the
//! [`Watcher`] interface through which the one who asked (the status line, an MCP
//! client) follows it, in process or as the daemon streams it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One work-done progress under way.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    pub title: String,
    pub message: Option<String>,
    pub percentage: Option<u32>,
}

/// What the status line shows of one live server while a run waits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Busy {
    pub server: String,
    /// Its first work-done progress under way, if any.
    pub progress: Option<Progress>,
}

/// Waits shorter than this show nothing.
pub const SHOW_AFTER: Duration = Duration::from_millis(1000);

/// Follows one run while it waits.
pub trait Watcher {
    /// The run's live servers and the progress each has under way: after every pump in
    /// process (at least every few tens of milliseconds while a wait lasts), as the
    /// daemon streams it (every 100 ms once a wait has lasted [`SHOW_AFTER`]) otherwise.
    fn progress(&mut self, busy: &[Busy]);

    /// In process only, with each [`Watcher::progress`]: the pids of the servers the
    /// run has running, for a caller that must be able to kill them.
    fn servers(&mut self, _pids: &[u32]) {}
}
