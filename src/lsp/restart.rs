//! Restarting a server that crashed (SPEC section 6: "a server that crashes is
//! restarted once and its documents reopened").
//!
//! A *crash* is the death of a server that had answered `initialize`, not caused by
//! lspgate ([`Pool::stop`] retires a server, [`Pool::kill`] gives up on one that never
//! initialised: neither is a crash). Crashes are recorded per server name and root,
//! across restarts, with their time, so that a server that crashes on every edit is not
//! restarted in a loop:
//!
//! - the first crash (none other within [`CRASH_WINDOW`]) is restarted at once;
//! - the n-th crash within the window waits 2^(n-1) seconds after it (2 s, 4 s, 8 s,
//!   ... at most [`MAX_BACKOFF`]) before a restart is allowed. Until then the server
//!   stays dead, and runs that need it say why and when it comes back.
//!
//! Who restarts: the check, for a server of its run found dead (it died between
//! runs) or dying during one of its waits, at most once per server and run; and the
//! daemon, between runs, for a server that crashed while idle, so the next run finds
//! it warm. [`Pool::restart`] spawns the same spec at the same root in a new slot
//! (messages are tagged by slot, so the dead one is retired, not reused) and opens
//! the dead one's documents again with the text it had been shown; its log and
//! show-message rings carry over, so `lspgate logs` still shows what led to the crash.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{Pool, push_ring};

/// Crashes older than this are forgotten for the backoff.
pub const CRASH_WINDOW: Duration = Duration::from_secs(60);
/// The longest a crashed server waits for its restart.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Crash times kept per server; more than enough to reach [`MAX_BACKOFF`].
const KEPT: usize = 8;

/// The crashes of one server (name at root), kept across its restarts.
#[derive(Debug, Clone, Default)]
pub struct CrashLog {
    /// Every crash since the pool started.
    pub total: u32,
    /// The most recent ones, oldest first.
    pub times: VecDeque<Instant>,
}

impl CrashLog {
    /// Crashes within [`CRASH_WINDOW`] of `now`.
    pub fn recent(&self, now: Instant) -> usize {
        self.times
            .iter()
            .filter(|&&t| now.saturating_duration_since(t) < CRASH_WINDOW)
            .count()
    }

    /// How long a restart must still wait at `now`; `None` when it may happen now.
    pub fn backoff_left(&self, now: Instant) -> Option<Duration> {
        let last = *self.times.back()?;
        let n = self.recent(now);
        if n <= 1 {
            return None;
        }
        let delay = Duration::from_secs(1u64 << (n - 1).min(16)).min(MAX_BACKOFF);
        let since = now.saturating_duration_since(last);
        (since < delay).then(|| delay - since)
    }
}

/// Why a dead server was not restarted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRestarted(pub String);

impl Pool {
    /// The crash history of the server in `index`, recording its death first if it is
    /// a crash not yet recorded.
    pub fn crash_log(&mut self, index: usize) -> CrashLog {
        self.record_crash(index);
        let server = &self.servers[index];
        self.crashes
            .get(&(base_name(&server.name).to_string(), server.root.clone()))
            .cloned()
            .unwrap_or_default()
    }

    /// Whether the server in `index` died of a crash (see the module doc).
    pub fn crashed(&self, index: usize) -> bool {
        let server = &self.servers[index];
        server.is_dead()
            && server.ready_at.is_some()
            && server.died_at.is_some()
            && !self.is_retired(index)
    }

    fn record_crash(&mut self, index: usize) {
        if !self.crashed(index) {
            return;
        }
        let server = &self.servers[index];
        let Some(died) = server.died_at else { return };
        let log = self
            .crashes
            .entry((server.name.clone(), server.root.clone()))
            .or_default();
        // Recorded once per death, however often it is asked about.
        if log.times.back().is_some_and(|&t| t >= died) {
            return;
        }
        log.total += 1;
        push_ring(&mut log.times, KEPT, died);
    }

    /// Why the crashed server in `index` may not be restarted yet, if it may not.
    pub fn restart_refused(&mut self, index: usize) -> Option<NotRestarted> {
        let now = Instant::now();
        let log = self.crash_log(index);
        let left = log.backoff_left(now)?;
        Some(NotRestarted(format!(
            "crashed {} times within {}s; not restarted for another {:.1}s",
            log.recent(now),
            CRASH_WINDOW.as_secs(),
            left.as_secs_f64()
        )))
    }

    /// Start the dead server in `index` again: the same spec at the same root, in a new
    /// slot, its documents opened again with the text it had been shown (the oldest
    /// first, as they were opened), its rings carried over. The dead slot is retired.
    /// Returns the new slot. Refused while the crash backoff runs, and when the command
    /// cannot be found or started; the dead server then stays as it is.
    pub fn restart(&mut self, index: usize) -> Result<usize, NotRestarted> {
        if !self.servers[index].is_dead() {
            return Ok(index);
        }
        if let Some(refused) = self.restart_refused(index) {
            return Err(refused);
        }
        let server = &self.servers[index];
        let spec = server.spec.clone();
        let root = server.root.clone();
        let reason = server.dead_reason().unwrap_or("stopped").to_string();
        let program = crate::config::which(&spec.command)
            .ok_or_else(|| NotRestarted(format!("`{}` is no longer on PATH", spec.command)))?;
        let mut docs: Vec<(u64, PathBuf, String)> = server
            .docs
            .iter()
            .map(|(p, d)| (d.changed_at, p.clone(), d.text.clone()))
            .collect();
        docs.sort();
        let logs = server.logs.clone();
        let shown = server.shown.clone();
        let new = self
            .start(&spec, &program, &root)
            .map_err(|e| NotRestarted(format!("could not start `{}` again: {e}", spec.command)))?;
        // Only now that the new one runs: retiring clears the documents.
        self.stop(index, Duration::ZERO);
        let server = &mut self.servers[new];
        server.logs = logs;
        server.shown = shown;
        push_ring(
            &mut server.logs,
            super::LOG_RING,
            (2, format!("lspgate: restarted after a crash ({reason})")),
        );
        // Held until `initialize` is answered, like any notification sent before.
        for (_, path, text) in docs {
            self.open_or_change(new, &path, &text);
        }
        Ok(new)
    }
}

/// A server's name without the retired prefix, so a restarted server's crashes are
/// counted with its predecessors'.
fn base_name(name: &str) -> &str {
    name.strip_prefix(super::RETIRED).unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_at(times: &[Instant]) -> CrashLog {
        CrashLog {
            total: times.len() as u32,
            times: times.iter().copied().collect(),
        }
    }

    #[test]
    fn a_first_crash_restarts_at_once() {
        let now = Instant::now();
        assert_eq!(log_at(&[]).backoff_left(now), None);
        assert_eq!(log_at(&[now]).backoff_left(now), None);
    }

    #[test]
    fn repeated_crashes_back_off_exponentially() {
        let now = Instant::now();
        let two = log_at(&[now, now]);
        assert_eq!(two.backoff_left(now), Some(Duration::from_secs(2)));
        assert_eq!(two.backoff_left(now + Duration::from_secs(2)), None);
        let three = log_at(&[now, now, now]);
        assert_eq!(three.backoff_left(now), Some(Duration::from_secs(4)));
        let many = log_at(&[now; 8]);
        assert_eq!(many.backoff_left(now), Some(MAX_BACKOFF));
    }

    #[test]
    fn crashes_outside_the_window_are_forgotten() {
        let start = Instant::now();
        let later = start + CRASH_WINDOW + Duration::from_secs(1);
        let log = log_at(&[start, later]);
        assert_eq!(log.recent(later), 1);
        assert_eq!(log.backoff_left(later), None);
    }
}
