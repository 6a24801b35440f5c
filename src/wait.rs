//! The waits: pump the pool until every target file has diagnostics that belong to
//! the text the server now has, and its server has settled, or a deadline passes.
//!
//! A file is fresh when the server answered a pull sent after the file's trigger
//! (the notification that made its diagnostics stale), or pushed a publish after the
//! trigger carrying the version we sent (and, for clangd, its latest file state is
//! "idle"): these are positive signs ([`Fresh::Confirmed`]). A server that sends no
//! versions is trusted with any publish after the trigger, silence after an empty
//! publish counts as "still empty", and clangd's "idle" with nothing published as
//! "unchanged", but only once the server has been quiet for its full quiet period
//! ([`Fresh::Unconfirmed`]). A server is settled when no work-done
//! progress is under way and it has been quiet for its quiet period, or for its much
//! shorter confirmed quiet period when every file has a positive sign, or with no
//! silence at all once a server that brackets each of its diagnoses with a progress
//! (gopls) has ended every bracket it owes; the first publish that happens to arrive
//! proves nothing on its own.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::lsp::{Pool, ServerId, Unknown};

/// How far a target's diagnostics are known to belong to the text the server has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fresh {
    No,
    /// Taken on trust once the server has been quiet for its full quiet period.
    Unconfirmed,
    /// The server said so: the wait needs only its confirmed quiet period.
    Confirmed,
}

/// A file whose fresh diagnostics a phase waits for.
#[derive(Debug, Clone)]
pub struct Target {
    pub server: ServerId,
    pub path: PathBuf,
    /// Pool clock of the notification that made the file's diagnostics stale.
    pub trigger: u64,
    pub trigger_at: Instant,
    /// The document version we sent, if the file is open.
    pub version: Option<i32>,
    /// The server already said its diagnostics stand (see
    /// `Server::says_unchanged`): nothing to wait for.
    pub stands: bool,
}

impl Target {
    /// A target for `path`, which server `s` is asked about by a pull without being
    /// sent its text (it is not open, or open with the text it has): any answer to a
    /// pull sent after the last change to what the server sees is fresh, so an answer
    /// the daemon already holds (the last run's, or its refresh after files changed
    /// behind its back) is used as it is.
    pub fn pulled(pool: &Pool, s: ServerId, path: &std::path::Path) -> Target {
        Target {
            server: s,
            path: path.to_path_buf(),
            trigger: pool.server(s).pull_holds_from(),
            trigger_at: Instant::now(),
            version: None,
            stands: false,
        }
    }
}

/// Why a target is not fresh at the deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsettled {
    pub server: ServerId,
    pub path: Option<PathBuf>,
    pub reason: String,
    /// The server answered for `path`, in a message too large to read (`reason`
    /// says why): not a wait that ran out, and no longer waited for.
    pub unreadable: bool,
}

/// How a phase ended.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Targets (by index) with fresh diagnostics.
    pub fresh: Vec<bool>,
    /// What was still pending at the deadline; empty when the phase settled.
    pub unsettled: Vec<Unsettled>,
    pub elapsed: Duration,
}

impl Outcome {
    #[cfg(test)]
    pub fn complete(&self) -> bool {
        self.unsettled.is_empty()
    }
}

/// The longest the loop waits for a message before re-checking time-based
/// conditions (quiet periods).
const TICK: Duration = Duration::from_millis(20);

/// Pump `pool` until every target is fresh and its server settled, or `deadline`.
pub fn settle(pool: &mut Pool, targets: &[Target], deadline: Instant) -> Outcome {
    settle_prefetching(pool, targets, &[], deadline)
}

/// [`settle`], also sending the pulls of `next` (the following phase's targets) as
/// soon as their servers take them, so the cross-file phase finds its answers in.
pub fn settle_prefetching(
    pool: &mut Pool,
    targets: &[Target],
    next: &[Target],
    deadline: Instant,
) -> Outcome {
    let start = Instant::now();
    let mut servers: Vec<ServerId> = targets.iter().map(|t| t.server).collect();
    servers.sort_unstable();
    servers.dedup();
    loop {
        request_pulls(pool, targets);
        request_pulls(pool, next);
        let now = Instant::now();
        let signs: Vec<Fresh> = targets.iter().map(|t| freshness(pool, t, now)).collect();
        let fresh: Vec<bool> = signs.iter().map(|f| *f != Fresh::No).collect();
        observe_latency(pool, targets);
        // A target whose answer was too large to read is answered, and unknown: no
        // wait makes it known, so it is not waited for (`explain` says why), and its
        // answer is as positive a sign as one that could be read.
        let skipped: Vec<bool> = targets
            .iter()
            .map(|t| unreadable(pool, t).is_some())
            .collect();
        let all_fresh = targets
            .iter()
            .zip(fresh.iter().zip(&skipped))
            .all(|(t, (f, u))| *f || *u || pool.server(t.server).is_dead());
        // When the quiet period of the first busy server runs out: the loop looks
        // again then, not a tick later.
        let mut wake = now + TICK;
        // A server is done when it settled, or when every one of its targets has
        // a pull answer and its answers are final (pyright): its other work, such
        // as analysing the many files a large project opened, is not ours to await.
        let busy: Vec<ServerId> = servers
            .iter()
            .copied()
            .filter(|&i| {
                let s = pool.server(i);
                let answered = !s.spec().wait.refresh_is_news
                    && s.pulls()
                    && targets
                        .iter()
                        .zip(&fresh)
                        .filter(|(t, _)| t.server == i)
                        .all(|(t, f)| {
                            *f && s
                                .diagnostics()
                                .get(&t.path)
                                .is_some_and(|d| d.pulled.is_some())
                        });
                // Every file of this server has a positive sign: only the rest of
                // the burst its last answer came in is left to wait for.
                let confirmed = targets
                    .iter()
                    .zip(signs.iter().zip(&skipped))
                    .filter(|(t, _)| t.server == i)
                    .all(|(_, (f, u))| *f == Fresh::Confirmed || *u);
                let quiet = if s.diagnoses_in() || confirmed && s.check_proven_in() {
                    Duration::ZERO
                } else if confirmed {
                    s.spec().wait.confirmed_quiet()
                } else {
                    s.spec().wait.quiet
                };
                // A server analysing its whole workspace has answered a file's
                // change once it published our version; the re-analysis of the rest
                // is waited for by `settle_servers`, within its own budget.
                let published = s.spec().wait.workspace_analysis() && confirmed;
                let done = s.is_dead() || s.settled_after(now, quiet) || answered || published;
                let quiet_ends = s.last_message() + quiet;
                if !done && s.settled_after(quiet_ends, quiet) {
                    // Only silence is missing (no progress, no pull under way).
                    wake = wake.min(quiet_ends);
                }
                !done
            })
            .collect();
        if (all_fresh && busy.is_empty()) || now >= deadline {
            let unsettled = explain(pool, targets, &fresh, &busy, now);
            return Outcome {
                fresh,
                unsettled,
                elapsed: start.elapsed(),
            };
        }
        pool.pump(deadline.min(wake));
    }
}

/// Wait for a set of servers alone to settle (used for cold starts): initialised,
/// no progress, quiet.
pub fn settle_servers(pool: &mut Pool, servers: &[ServerId], deadline: Instant) -> Outcome {
    settle_servers_quiet(pool, servers, deadline, Quiet::Own)
}

/// [`settle_servers`] for servers that have just answered for every file of the run
/// with a positive sign: only the rest of that burst is left, so each needs its
/// confirmed quiet (gopls publishes every file a change affects within the same
/// millisecond), while progress under way and publishes owed still count in full.
pub fn settle_answered_servers(
    pool: &mut Pool,
    servers: &[ServerId],
    deadline: Instant,
) -> Outcome {
    settle_servers_quiet(pool, servers, deadline, Quiet::Confirmed)
}

/// [`settle_servers`] for cold servers analysing their workspace: one that has not
/// shown the progress of such an analysis yet needs its `first_analysis_quiet`, as
/// its analysis may not have begun.
pub fn settle_first_analysis(pool: &mut Pool, servers: &[ServerId], deadline: Instant) -> Outcome {
    settle_servers_quiet(pool, servers, deadline, Quiet::FirstAnalysis)
}

/// Which silence settles a server.
#[derive(Clone, Copy)]
enum Quiet {
    Own,
    Confirmed,
    FirstAnalysis,
}

fn settle_servers_quiet(
    pool: &mut Pool,
    servers: &[ServerId],
    deadline: Instant,
    kind: Quiet,
) -> Outcome {
    let settled = |pool: &Pool, i: ServerId, now: Instant| {
        let s = pool.server(i);
        let wait = &s.spec().wait;
        let quiet = match kind {
            _ if s.diagnoses_in() => Duration::ZERO,
            Quiet::Own => wait.quiet,
            Quiet::Confirmed if s.check_proven_in() => Duration::ZERO,
            Quiet::Confirmed => wait.confirmed_quiet(),
            Quiet::FirstAnalysis if s.progress_ended() => wait.quiet,
            Quiet::FirstAnalysis => wait.first_analysis_quiet(),
        };
        s.is_dead() || (s.initialized() && s.settled_after(now, quiet))
    };
    loop {
        let now = Instant::now();
        let busy: Vec<ServerId> = servers
            .iter()
            .copied()
            .filter(|&i| !settled(pool, i, now))
            .collect();
        if busy.is_empty() || now >= deadline {
            // What is still pending, when the deadline came first.
            let unsettled = explain(pool, &[], &[], &busy, now);
            return Outcome {
                fresh: Vec::new(),
                unsettled,
                elapsed: Duration::ZERO,
            };
        }
        pool.pump(deadline.min(now + TICK));
    }
}

/// Send a pull for every target of a pull server whose last answer predates its
/// trigger or the server's last refresh request.
fn request_pulls(pool: &mut Pool, targets: &[Target]) {
    for t in targets {
        let server = pool.server(t.server);
        if !server.pulls() || !server.initialized() || server.is_dead() {
            continue;
        }
        if server.pull_in_flight(&t.path) {
            continue;
        }
        let last = server
            .diagnostics()
            .get(&t.path)
            .and_then(|d| d.pulled.as_ref());
        let stale = match last {
            None => true,
            Some(p) => p.sent_seq < t.trigger || p.sent_seq < server.refresh_seq(),
        };
        // A pull it failed since the trigger is its answer (it said nothing of the
        // file): asked again, it failed again, as fast as it was asked.
        let failed = server
            .diagnostics()
            .unreadable(&t.path)
            .is_some_and(|u| u.cause == Unknown::PullFailed && u.answers(t.trigger));
        if stale && !failed {
            pool.pull(t.server, &t.path);
        }
    }
}

/// Record how long the servers take from a change to its publish, from the targets
/// that got one: the slowest lately, halving each time a faster one is seen so one
/// slow moment does not slow every later wait. Only changes count: the first
/// publish after an open includes loading the project.
fn observe_latency(pool: &mut Pool, targets: &[Target]) {
    for t in targets.iter().filter(|t| t.version.is_some_and(|v| v > 1)) {
        let Some(push) = pool
            .server(t.server)
            .diagnostics()
            .get(&t.path)
            .and_then(|d| d.pushed.as_ref())
        else {
            continue;
        };
        if push.seq > t.trigger {
            let took = push.at.saturating_duration_since(t.trigger_at);
            pool.observe_latency(t.server, took);
        }
    }
}

fn freshness(pool: &Pool, t: &Target, now: Instant) -> Fresh {
    let server = pool.server(t.server);
    if server.is_dead() {
        return Fresh::No;
    }
    if t.stands {
        return Fresh::Confirmed;
    }
    // clangd: a file whose latest state since the trigger is not "idle" has work
    // queued or under way, whatever it published before. "idle" alone is not a sign
    // of done: clangd says it between the steps of one rebuild, up to 30 ms before
    // the publish (measured on a header change).
    let status = server.file_status(&t.path).filter(|s| s.seq > t.trigger);
    if status.is_some_and(|s| !s.idle) {
        return Fresh::No;
    }
    let Some(diags) = server.diagnostics().get(&t.path) else {
        return Fresh::No;
    };
    if server.pulls() {
        // The pull answer is the server's final word on the file.
        if let Some(p) = &diags.pulled {
            let answered = p.sent_seq >= t.trigger && p.sent_seq >= server.refresh_seq();
            return if answered {
                Fresh::Confirmed
            } else {
                Fresh::No
            };
        }
    }
    let Some(push) = &diags.pushed else {
        return Fresh::No;
    };
    if push.seq > t.trigger {
        return match (push.version, t.version) {
            (Some(got), Some(want)) if server.spec().wait.versioned_publish => {
                // clangd: text sent again unchanged (the before view of a file whose
                // includes changed behind its back) while it rebuilds the file for an
                // earlier version publishes that version and goes idle, never ours:
                // its inputs are the same. Once it is idle after our change, a publish
                // after it of an earlier version with the same text is the answer.
                let same_text = status.is_some_and(|s| s.idle)
                    && server
                        .doc(&t.path)
                        .is_some_and(|d| d.version == want && (d.text_since..want).contains(&got));
                if got == want || same_text {
                    Fresh::Confirmed
                } else {
                    Fresh::No
                }
            }
            // No version in the publish, or a server known to send wrong ones:
            // any publish after the trigger, taken once the server settles.
            _ => Fresh::Unconfirmed,
        };
    }
    // No publish since the trigger. typescript-language-server sends nothing when a
    // file's diagnostics were empty and stay empty (and it sends no versions), so
    // silence after an empty publish means "still empty" once the server has been
    // quiet long enough. Only after an *empty* last publish: a file that had
    // diagnostics is always republished when they change, and taking silence for
    // "unchanged" there would report stale errors when the server is merely slow.
    // A server that never published the file at all is not trusted this way.
    // Idle since the trigger with nothing published: clangd publishes nothing when a
    // file's text and includes did not change, so its diagnostics stand, once the
    // server is quiet for its full quiet period.
    if status.is_some() {
        return Fresh::Unconfirmed;
    }
    let unversioned = !server.spec().wait.versioned_publish || push.version.is_none();
    let silent = unversioned
        && push.diagnostics.is_empty()
        && now.duration_since(t.trigger_at)
            >= server
                .spec()
                .wait
                .unpublished_after
                .max(server.publish_latency() * 3)
        && server.settled(now);
    if silent {
        Fresh::Unconfirmed
    } else {
        Fresh::No
    }
}

/// Why each of `servers` (those the caller found not settled) and each target not
/// fresh is still pending.
fn explain(
    pool: &Pool,
    targets: &[Target],
    fresh: &[bool],
    servers: &[ServerId],
    now: Instant,
) -> Vec<Unsettled> {
    let mut out = Vec::new();
    for &i in servers {
        let s = pool.server(i);
        if let Some(reason) = s.dead_reason() {
            out.push(Unsettled {
                server: i,
                path: None,
                reason: format!("server {reason}"),
                unreadable: false,
            });
        } else if !s.initialized() {
            out.push(Unsettled {
                server: i,
                path: None,
                reason: "never finished initialize".into(),
                unreadable: false,
            });
        } else if !s.settled(now) {
            let reason = if let Some(p) = s.progress().next() {
                let title = if p.title.is_empty() {
                    "work"
                } else {
                    p.title.as_str()
                };
                format!("still busy ({title} in progress)")
            } else if let Some(path) = s.diagnostics().owed().next() {
                let more = match s.diagnostics().owed().len() {
                    1 => String::new(),
                    n => format!(" and {} more", n - 1),
                };
                format!("still analysing: no word yet on {}{more}", path.display())
            } else if s.indexing() {
                "still indexing".to_string()
            } else if s.owes_check() {
                "its check of the project after the save has not run yet".to_string()
            } else {
                "still sending diagnostics".to_string()
            };
            out.push(Unsettled {
                server: i,
                path: None,
                reason,
                unreadable: false,
            });
        } else {
            // Quiet by its own measure, not by its first analysis's.
            out.push(Unsettled {
                server: i,
                path: None,
                reason: "no sign yet that its analysis of the workspace ran".into(),
                unreadable: false,
            });
        }
    }
    for (t, f) in targets.iter().zip(fresh) {
        if !*f && !pool.server(t.server).is_dead() {
            let why = unreadable(pool, t);
            out.push(Unsettled {
                server: t.server,
                path: Some(t.path.clone()),
                reason: why.map_or_else(|| "no diagnostics for the new text".into(), str::to_owned),
                unreadable: why.is_some(),
            });
        }
    }
    out
}

/// Why the server's answer for `t` could not be read, if it could not: a publish
/// over the transport's caps, skipped, after the trigger and (where both are known,
/// from a server whose versions are trusted) for the version sent. A skipped publish
/// of an earlier version is not the answer: the wait goes on.
fn unreadable<'p>(pool: &'p Pool, t: &Target) -> Option<&'p str> {
    let server = pool.server(t.server);
    let skipped = server.diagnostics().unreadable(&t.path)?;
    let other_version = match (skipped.version, t.version) {
        (Some(got), Some(want)) => server.spec().wait.versioned_publish && got != want,
        _ => false,
    };
    (skipped.answers(t.trigger) && !other_version).then_some(skipped.why.as_str())
}

#[cfg(test)]
mod tests;
