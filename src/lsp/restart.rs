//! Restarting a server that crashed (docs/SPEC.md section 6: "a server that crashes is
//! restarted once and its documents reopened").
//!
//! A *crash* is the death of a server that had answered `initialize`, not caused by
//! lspgate (`Pool::stop` retires a server, `Pool::kill` gives up on one that never
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
//! it warm. `Pool::restart` spawns the same spec at the same root under a new
//! `ServerId` (messages are tagged by slot, so the dead one is retired, not reused)
//! and opens the dead one's documents again with the text it had been shown; its log
//! and show-message rings carry over, so `lspgate logs` still shows what led to the
//! crash.
//!
//! This module holds the policy (what counts, how long to wait); the pool applies it.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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

/// The crash logs of a pool's servers, by name and root: a restarted server's crashes
/// count with its predecessors'.
#[derive(Debug, Default)]
pub struct Crashes {
    logs: HashMap<(String, PathBuf), CrashLog>,
}

impl Crashes {
    /// The crashes of `name` at `root` so far.
    pub fn of(&self, name: &str, root: &Path) -> CrashLog {
        self.logs
            .get(&(name.to_string(), root.to_path_buf()))
            .cloned()
            .unwrap_or_default()
    }

    /// Record the crash of `name` at `root` that happened at `died`; once per death,
    /// however often it is recorded.
    pub fn record(&mut self, name: &str, root: &Path, died: Instant) {
        let log = self
            .logs
            .entry((name.to_string(), root.to_path_buf()))
            .or_default();
        if log.times.back().is_some_and(|&t| t >= died) {
            return;
        }
        log.total += 1;
        if log.times.len() == KEPT {
            log.times.pop_front();
        }
        log.times.push_back(died);
    }

    /// Why `name` at `root` may not be restarted at `now`, if it may not.
    pub fn refusal(&self, name: &str, root: &Path, now: Instant) -> Option<NotRestarted> {
        let log = self.of(name, root);
        let left = log.backoff_left(now)?;
        Some(NotRestarted(format!(
            "crashed {} times within {}s; not restarted for another {:.1}s",
            log.recent(now),
            CRASH_WINDOW.as_secs(),
            left.as_secs_f64()
        )))
    }
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
    fn a_death_is_recorded_once_and_refusals_say_why() {
        let (root, now) = (Path::new("/w"), Instant::now());
        let mut crashes = Crashes::default();
        crashes.record("gopls", root, now);
        crashes.record("gopls", root, now);
        assert_eq!(crashes.of("gopls", root).total, 1, "one death");
        assert_eq!(crashes.refusal("gopls", root, now), None, "first crash");
        crashes.record("gopls", root, now + Duration::from_millis(1));
        let refused = crashes.refusal("gopls", root, now).expect("backing off");
        assert!(
            refused.0.starts_with("crashed 2 times within 60s"),
            "{}",
            refused.0
        );
        assert_eq!(crashes.of("gopls", Path::new("/elsewhere")).total, 0);
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
