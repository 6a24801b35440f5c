//! rust-analyzer's `experimental/serverStatus`: whether it is quiescent, that is done
//! loading and indexing the workspace. While it is not, what it publishes may be
//! incomplete, so a server that said `quiescent: false` is not settled
//! (`Server::settled_after`). It sends the notification only to a client that offers
//! `experimental.serverStatusNotification` ([`offer_server_status`]).
//!
//! Its flycheck: with `checkOnSave`, a save (and, once it has loaded a Cargo
//! workspace, its start) runs `cargo check` on the crates, bracketed by a work-done
//! progress `rust-analyzer/flycheck/N`, and pushes rustc's diagnostics for every file
//! of them: [`Check`] follows it for `Delivery::CheckAfterSave`. A change with no
//! save to start one (a deleted module) asks for it with `rust-analyzer/runFlycheck`.
//! A reload of its workspace (a file deleted or created, Cargo.toml changed) drops
//! the check's diagnostics, and a check is asked for again. The diagnostics it pushes
//! can trail the progress's end (see [`Check::settled_after`]), and can come out of
//! order (see [`Check::stale`]).

use std::path::Path;
use std::time::{Duration, Instant};

use lsp_types::Diagnostic;
use lsp_types::notification::Notification;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `experimental/serverStatus`.
pub enum ServerStatusNotification {}

impl Notification for ServerStatusNotification {
    type Params = ServerStatusParams;
    const METHOD: &'static str = "experimental/serverStatus";
}

/// The parameters as rust-analyzer's `lsp_ext` defines them: `quiescent`, and
/// `health` with its `message` (`"error"`: its workspace did not load).
/// Every field is optional here: a status without `quiescent` says nothing about it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServerStatusParams {
    #[serde(default)]
    pub health: Option<String>,
    #[serde(default)]
    pub quiescent: Option<bool>,
    #[serde(default)]
    pub message: Option<String>,
}

/// Whether a pull's error says the file is in no crate rust-analyzer has loaded: it
/// answers so (code -32603, "file not found: PATH") for every file of a workspace
/// it is still loading, measured on the Rust fixture's first pull of a cold run. Once
/// it is quiescent the same answer is a failure (see `Quirks::pull_error_asks_to_retry`).
pub fn not_loaded_yet(message: &str) -> bool {
    message.starts_with("file not found")
}

/// Ask for `experimental/serverStatus` in the client's capabilities.
pub fn offer_server_status(capabilities: &mut Value) {
    capabilities["experimental"] = json!({ "serverStatusNotification": true });
}

/// rust-analyzer's flycheck waits this long after the last request for a check
/// before it starts one (its actor's debounce, `recv_timeout(50ms)` in
/// `flycheck.rs`): a check that begins sooner after we asked was started before our
/// request reached it, and is cancelled by it (its end comes next) or was not ours.
const CHECK_DEBOUNCE: Duration = Duration::from_millis(50);

/// Where the check of the project a server owes stands, for a server whose
/// `Delivery::CheckAfterSave` is set (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Stage {
    /// None owed: none asked for, or the last one asked for has ended.
    #[default]
    Done,
    /// Asked for (a save, a start, `runFlycheck`) at this time; none has begun since.
    Asked(Instant),
    /// One began after it was asked for, and has not ended.
    Running,
}

/// The check a server owes, and how the last one ended.
#[derive(Debug, Clone, Default)]
pub struct Check {
    stage: Stage,
    ended: Option<Ended>,
    /// The pool clock when the last check (or a reload) began: pushes received
    /// after it are of one check (see [`Check::stale`]).
    began: u64,
    /// No check asked for by lspgate yet: the checks so far are rust-analyzer's own
    /// first, which it may cancel and restart (see [`Ended`]).
    first: bool,
    /// The check under way reported a crate it checked (a `report` of its progress:
    /// one per artifact cargo built, none for those it found fresh).
    reported: bool,
}

/// The end of a check: when (the time, and the pool clock), and whether an answer to
/// a pull sent after it proves the check's pushes in. At start rust-analyzer cancels
/// its first check to restart it when its workspace settles, the new one beginning
/// after its 50 ms debounce; a cancelled check shows as a begin and an end together
/// (seen cold on itertools, its native diagnostics off: the before view was taken at
/// that end, and the one check that ran was of the edit). So the end of a first
/// check that reported no crate checked (cancelled, or all of it fresh) is proven by
/// silence only. Later checks are lspgate's own, asked for by a save, and none
/// restarts them.
#[derive(Debug, Clone, Copy)]
struct Ended {
    at: Instant,
    clock: u64,
    answer_proves: bool,
}

impl Check {
    /// A server starting at `root`: it owes its first check if it runs one at start
    /// (`servers::checks_at_start`).
    pub fn at_start(applies: bool, root: &Path) -> Check {
        let owed = applies && super::checks_at_start(root);
        Check {
            stage: if owed {
                Stage::Asked(Instant::now())
            } else {
                Stage::Done
            },
            first: owed,
            ..Check::default()
        }
    }

    /// A save or `runFlycheck` was sent: a check that begins from now on (after its
    /// debounce) is owed.
    pub fn ask(&mut self) {
        self.stage = Stage::Asked(Instant::now());
        self.first = false;
    }

    /// Whether a publish of a file with `list` is out of date, to be dropped.
    /// Within one check a file's results only grow: rust-analyzer clears a
    /// package's old results before its first new one, then adds what cargo
    /// reports. But it sends each publish from a task of its worker pool
    /// (`GlobalState::publish_diagnostics`), and two tasks for one file can send in
    /// either order: a list built earlier arrives after a fuller one (seen: b.rs 3,
    /// 9, then 6 of the 9; c.rs 0, 5, then 0 after the check's end; nothing after,
    /// so about one cold check in five lost a broken caller). Such a list, a part
    /// of the fullest one published since the check began, is that earlier one.
    /// Its begin comes from the main loop, ahead of the pool's queue, and a
    /// previous check's publish still queued behind it would be taken for this
    /// one's; the waits keep that from happening: the previous check's pushes are
    /// proven in ([`Check::settled_after`]) before an edit is shown.
    ///
    /// `held`: the push taken last for the file (the fullest since the check
    /// began, stale ones never being taken), with the pool clock it arrived at.
    pub fn stale(&self, held: Option<(u64, &[Diagnostic])>, list: &[Diagnostic]) -> bool {
        held.is_some_and(|(seq, held)| {
            seq > self.began && list.len() < held.len() && list.iter().all(|d| held.contains(d))
        })
    }

    /// Follow a work-done progress `kind` ("begin", "end") of `token`. Returns true
    /// when a check is owed again and must be asked for (`runFlycheck`): a reload of
    /// its workspace (a file deleted or created, Cargo.toml changed) ended after a
    /// check was asked for, and rust-analyzer drops the check's diagnostics with the
    /// old workspace without always checking again (traced: lib.rs's E0583 for a
    /// deleted module published, cleared at the reload's end, no check after).
    pub fn on_progress(&mut self, token: &str, kind: &str, now: Instant, clock: u64) -> bool {
        if token.starts_with("rust-analyzer/flycheck/") {
            match kind {
                "begin" => {
                    // Any check, ours or not, clears results as it goes.
                    self.began = clock;
                    self.reported = false;
                }
                "report" => self.reported = true,
                "end" => {
                    // Any check's pushes can trail its end.
                    self.ended = Some(Ended {
                        at: now,
                        clock,
                        answer_proves: self.reported || !self.first,
                    });
                }
                _ => {}
            }
            match (self.stage, kind) {
                (Stage::Asked(at), "begin")
                    if now.saturating_duration_since(at) >= CHECK_DEBOUNCE =>
                {
                    self.stage = Stage::Running;
                }
                (Stage::Running, "end") => self.stage = Stage::Done,
                _ => {}
            }
            return false;
        }
        if token == "rustAnalyzer/Fetching" && kind == "begin" {
            // A reload drops the check's results: a shorter list is news.
            self.began = clock;
        }
        let reloaded = token == "rustAnalyzer/Fetching"
            && kind == "end"
            && (self.stage == Stage::Running || self.ended.is_some());
        if reloaded {
            self.ask();
        }
        reloaded
    }

    /// Whether no check is owed and an answer to a pull sent after the last one's end
    /// (`answered_after` its pool clock) proves all it pushed in (see
    /// [`Check::settled_after`]).
    pub fn proven_in(&self, answered_after: impl FnOnce(u64) -> bool) -> bool {
        !self.owed()
            && self
                .ended
                .is_some_and(|e| e.answer_proves && answered_after(e.clock))
    }

    /// Whether a check was asked for and none has begun since.
    pub fn asked(&self) -> bool {
        matches!(self.stage, Stage::Asked(_))
    }

    /// Whether a check asked for has yet to end.
    pub fn owed(&self) -> bool {
        self.stage != Stage::Done
    }

    /// Whether no check is owed and what the last one pushed is in. rust-analyzer
    /// sends the check's end from its main loop but each publish from a task of its
    /// worker pool (`publish_diagnostics`), queued behind whatever the pool is doing:
    /// pushes can trail the end by seconds (2.4 s on a cold itertools, its workers
    /// busy working out which crates the changed files belong to). An answer to a pull
    /// sent after the end, also a task of that pool and queued after them
    /// (`answered_after` the end's pool clock), proves them in, when the check
    /// is not rust-analyzer's first, cancelled (see [`Ended`]), since lspgate starts
    /// it with one worker thread (`numThreads`: with two, a push could finish after
    /// the answer, and did in 2 of 52 runs of the rust-analyzer tests); without one,
    /// `quiet` after the end. A request its main loop answers does not: tried with an
    /// unknown `$/` request, whose answer came before the publishes.
    pub fn settled_after(
        &self,
        now: Instant,
        quiet: Duration,
        answered_after: impl FnOnce(u64) -> bool,
    ) -> bool {
        self.proven_in(answered_after)
            || !self.owed()
                && self
                    .ended
                    .is_none_or(|e| now.saturating_duration_since(e.at) >= quiet)
    }
}

/// `rust-analyzer/runFlycheck`: check every crate (no document named).
pub enum RunFlycheck {}

impl Notification for RunFlycheck {
    type Params = Value;
    const METHOD: &'static str = "rust-analyzer/runFlycheck";
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLYCHECK: &str = "rust-analyzer/flycheck/0";

    #[test]
    fn a_check_is_done_once_one_that_began_after_it_was_asked_for_has_ended() {
        let mut check = Check::default();
        check.ask();
        let soon = Instant::now();
        let later = soon + CHECK_DEBOUNCE;
        // One under way when the save came, cancelled by it: its end is not ours.
        check.on_progress(FLYCHECK, "end", soon, 1);
        assert!(check.owed());
        check.on_progress("rustAnalyzer/Indexing", "begin", later, 2);
        assert!(check.owed(), "not a check");
        check.on_progress(FLYCHECK, "begin", later, 3);
        check.on_progress("rustAnalyzer/Indexing", "end", later, 4);
        assert!(check.owed(), "still running");
        check.on_progress(FLYCHECK, "report", later, 4);
        check.on_progress(FLYCHECK, "end", later, 5);
        assert!(!check.owed());
        let quiet = Duration::from_millis(300);
        let answered_after_end = |seq: u64| seq < 6;
        let answered_before_end = |seq: u64| seq < 5;
        assert!(
            !check.settled_after(later, quiet, answered_before_end),
            "what it pushed may trail"
        );
        assert!(check.settled_after(later, quiet, answered_after_end));
        assert!(check.settled_after(later + quiet, quiet, answered_before_end));
    }

    #[test]
    fn a_check_is_proven_in_by_an_answer_to_a_pull_sent_after_its_end() {
        let mut check = Check::at_start(true, Path::new("/nowhere"));
        assert!(!check.proven_in(|_| true), "none ended yet");
        check.ask();
        let t0 = Instant::now();
        check.on_progress(FLYCHECK, "begin", t0 + CHECK_DEBOUNCE, 5);
        assert!(!check.proven_in(|_| true), "under way");
        check.on_progress(FLYCHECK, "report", t0 + CHECK_DEBOUNCE, 6);
        check.on_progress(FLYCHECK, "end", t0 + CHECK_DEBOUNCE, 9);
        assert!(check.proven_in(|end| end == 9));
        assert!(!check.proven_in(|_| false), "no answer after the end");
    }

    #[test]
    fn a_first_check_that_reported_no_crate_ends_only_with_silence() {
        // At start: rust-analyzer cancels its first check to restart it when its
        // workspace settles; the cancelled one shows as a begin and an end.
        let mut check = Check {
            stage: Stage::Asked(Instant::now()),
            first: true,
            ..Check::default()
        };
        let t0 = Instant::now() + CHECK_DEBOUNCE;
        check.on_progress(FLYCHECK, "begin", t0, 1);
        check.on_progress(FLYCHECK, "end", t0, 2);
        assert!(!check.owed());
        let quiet = Duration::from_millis(300);
        assert!(
            !check.proven_in(|_| true),
            "a cancelled check proves nothing"
        );
        assert!(!check.settled_after(t0, quiet, |_| true));
        assert!(check.settled_after(t0 + quiet, quiet, |_| true));
        // The restarted one, which reports its crate, is proven in by an answer.
        check.on_progress(FLYCHECK, "begin", t0, 3);
        check.on_progress(FLYCHECK, "report", t0, 4);
        check.on_progress(FLYCHECK, "end", t0, 5);
        assert!(check.proven_in(|end| end == 5));
        assert!(check.settled_after(t0, quiet, |end| end == 5));
        // One lspgate asked for, that found every crate fresh or failed to build
        // one, reports none and is proven in all the same.
        check.ask();
        let t1 = t0 + CHECK_DEBOUNCE;
        check.on_progress(FLYCHECK, "begin", t1, 6);
        check.on_progress(FLYCHECK, "end", t1, 7);
        assert!(check.proven_in(|end| end == 7));
    }

    #[test]
    fn a_check_begun_before_its_debounce_after_the_ask_is_not_ours() {
        let mut check = Check::default();
        check.ask();
        let soon = Instant::now();
        // Its own, started before our request reached it, then cancelled by it.
        check.on_progress(FLYCHECK, "begin", soon, 1);
        check.on_progress(FLYCHECK, "end", soon, 2);
        assert!(check.owed(), "a check begun within the debounce was taken");
        check.on_progress(FLYCHECK, "begin", soon + CHECK_DEBOUNCE, 3);
        check.on_progress(FLYCHECK, "end", soon + CHECK_DEBOUNCE, 4);
        assert!(!check.owed());
    }

    fn diagnostics(lines: &[u32]) -> Vec<Diagnostic> {
        lines
            .iter()
            .map(|&line| {
                let at = lsp_types::Position::new(line, 0);
                Diagnostic::new_simple(lsp_types::Range::new(at, at), format!("E{line}"))
            })
            .collect()
    }

    /// A check and the pushes taken for each file, on one pool clock, as a
    /// server's incoming messages have them.
    #[derive(Default)]
    struct Pushes {
        check: Check,
        held: std::collections::HashMap<&'static str, (u64, Vec<Diagnostic>)>,
        clock: u64,
    }

    impl Pushes {
        fn progress(&mut self, token: &str, kind: &str, now: Instant) {
            self.clock += 1;
            self.check.on_progress(token, kind, now, self.clock);
        }

        /// Whether the push is stale; taken when not.
        fn stale(&mut self, path: &'static str, list: &[Diagnostic]) -> bool {
            self.clock += 1;
            let held = self.held.get(path).map(|(seq, l)| (*seq, l.as_slice()));
            let stale = self.check.stale(held, list);
            if !stale {
                self.held.insert(path, (self.clock, list.to_vec()));
            }
            stale
        }
    }

    #[test]
    fn a_list_a_check_published_before_a_fuller_one_is_stale_when_it_comes_after() {
        let c = "/crate/src/c.rs";
        let d = "/crate/src/d.rs";
        let mut check = Pushes::default();
        check.check.ask();
        let later = Instant::now() + CHECK_DEBOUNCE;
        check.progress(FLYCHECK, "begin", later);
        // Cleared before its first result, then growing.
        assert!(!check.stale(c, &diagnostics(&[])));
        assert!(!check.stale(c, &diagnostics(&[3, 7, 11])));
        // The list of two, built before the list of three, sent after it.
        assert!(check.stale(c, &diagnostics(&[3, 7])));
        // The clear, sent last, after the check's end.
        check.progress(FLYCHECK, "end", later);
        assert!(check.stale(c, &diagnostics(&[])));
        // Not a part of the fullest: news, and the fullest from then on.
        assert!(!check.stale(c, &diagnostics(&[5])));
        assert!(check.stale(c, &diagnostics(&[])));
        // Another file is judged by its own lists.
        assert!(!check.stale(d, &diagnostics(&[1])));
        // The next check clears results as it goes: a shorter list is news.
        check.check.ask();
        let again = later + CHECK_DEBOUNCE;
        check.progress(FLYCHECK, "begin", again);
        assert!(!check.stale(c, &diagnostics(&[])));
        assert!(!check.stale(d, &diagnostics(&[])));
    }

    #[test]
    fn a_reload_of_the_workspace_makes_a_shorter_list_news() {
        let c = "/crate/src/c.rs";
        let mut check = Pushes::default();
        assert!(!check.stale(c, &diagnostics(&[2, 4])));
        check.progress("rustAnalyzer/Fetching", "begin", Instant::now());
        assert!(!check.stale(c, &diagnostics(&[])), "its results dropped");
    }

    #[test]
    fn its_first_check_is_owed_where_it_loads_a_cargo_workspace() {
        let root = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(root.path().join("Cargo.toml"), "[package]\n").expect("Cargo.toml");
        assert!(Check::at_start(true, root.path()).owed());
        assert!(!Check::at_start(false, root.path()).owed());
        assert!(!Check::at_start(true, Path::new("/no/such/root")).owed());
    }

    #[test]
    fn a_reload_of_the_workspace_after_a_check_asks_for_another() {
        let mut check = Check::default();
        let now = Instant::now();
        // Its own loading, before any check: nothing to ask again.
        assert!(!check.on_progress("rustAnalyzer/Fetching", "end", now, 1));
        check.ask();
        let later = Instant::now() + CHECK_DEBOUNCE;
        check.on_progress(FLYCHECK, "begin", later, 2);
        check.on_progress(FLYCHECK, "end", later, 3);
        assert!(check.on_progress("rustAnalyzer/Fetching", "end", later, 4));
    }
}
