//! rust-analyzer's `experimental/serverStatus`: whether it is quiescent, that is done
//! loading and indexing the workspace. While it is not, what it publishes may be
//! incomplete, so a server that said `quiescent: false` is not settled
//! (`Server::settled_after`). It sends the notification only to a client that offers
//! `experimental.serverStatusNotification` ([`offer_server_status`]).
//!
//! Its flycheck: with `checkOnSave`, a save (and, once it has loaded a Cargo
//! workspace, its start) runs `cargo check` on the crates, bracketed by a work-done
//! progress `rust-analyzer/flycheck/N`, and pushes rustc's diagnostics for every file
//! of them: [`Check`] follows it for `WaitProfile::check_after_save`. A change with no
//! save to start one (a deleted module) asks for it with `rust-analyzer/runFlycheck`.
//! A reload of its workspace (a file deleted or created, Cargo.toml changed) drops
//! the check's diagnostics, and a check is asked for again; so does a check that
//! drops part of its own results ([`Check::on_publish`]). The diagnostics it pushes
//! can trail the progress's end (see [`Check::settled_after`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_types::notification::Notification;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `experimental/serverStatus`.
pub enum ServerStatusNotification {}

impl Notification for ServerStatusNotification {
    type Params = ServerStatusParams;
    const METHOD: &'static str = "experimental/serverStatus";
}

/// The parameters as rust-analyzer's `lsp_ext` defines them; only `quiescent` is read.
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
/// `WaitProfile::check_after_save` is set (see the module docs).
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

/// Checks asked for again, at most, when one contradicted itself (see
/// [`Check::on_publish`]).
const MAX_RECHECKS: u32 = 2;

/// The check a server owes, and when the last one ended (the time, and the pool
/// clock).
#[derive(Debug, Clone, Default)]
pub struct Check {
    stage: Stage,
    ended: Option<(Instant, u64)>,
    /// While one runs: the most diagnostics each file was published with so far.
    published: HashMap<PathBuf, usize>,
    /// The running check published a file with fewer diagnostics than it had
    /// published it with before.
    contradicted: bool,
    /// Checks asked for again since the last ask of ours.
    rechecks: u32,
}

impl Check {
    /// A server starting at `root`: it owes its first check if it runs one at start
    /// (once it has loaded a Cargo workspace; with none it checks nothing until a
    /// save).
    pub fn at_start(applies: bool, root: &Path) -> Check {
        let owed = applies && root.join("Cargo.toml").is_file();
        Check {
            stage: if owed {
                Stage::Asked(Instant::now())
            } else {
                Stage::Done
            },
            ..Check::default()
        }
    }

    /// A save or `runFlycheck` was sent: a check that begins from now on (after its
    /// debounce) is owed.
    pub fn ask(&mut self) {
        self.stage = Stage::Asked(Instant::now());
        self.rechecks = 0;
    }

    /// A publish of `path` with `count` diagnostics. A check adds what cargo reports
    /// as it comes, after clearing a package's old results before its first one: a
    /// file it already published with more, published with fewer, is rust-analyzer
    /// dropping part of its own results (seen: b.rs 3, 9, then 6 of 9; lib.rs 4, 8,
    /// 16, then 12; c.rs 0, 5, then 2, the break's errors gone; nothing after, so
    /// about one cold check in five missed a broken caller). That check's word is
    /// not taken: another is asked for when it ends. What it publishes at the end of
    /// the main-loop turn that sent its end comes after the end (c.rs 5, then 0):
    /// such a drop asks for another at once; returns true then.
    pub fn on_publish(&mut self, path: &Path, count: usize) -> bool {
        let after_end = self.stage == Stage::Done && self.ended.is_some();
        if self.stage != Stage::Running && !after_end {
            return false;
        }
        let most = self.published.entry(path.to_path_buf()).or_insert(0);
        let dropped = count < *most;
        *most = (*most).max(count);
        if !dropped {
            return false;
        }
        if !after_end {
            self.contradicted = true;
            return false;
        }
        self.recheck(Instant::now())
    }

    /// Ask for another check after one contradicted itself, unless enough were.
    fn recheck(&mut self, now: Instant) -> bool {
        if self.rechecks >= MAX_RECHECKS {
            return false;
        }
        self.rechecks += 1;
        self.stage = Stage::Asked(now);
        true
    }

    /// Follow a work-done progress `kind` ("begin", "end") of `token`. Returns true
    /// when a check is owed again and must be asked for (`runFlycheck`): the one that ended contradicted itself
    /// (see [`Check::on_publish`]), or a reload of its workspace (a file
    /// deleted or created, Cargo.toml changed) ended after a check was asked for,
    /// and rust-analyzer drops the check's diagnostics with the old workspace
    /// without always checking again (traced: lib.rs's E0583 for a deleted module
    /// published, cleared at the reload's end, no check after).
    pub fn on_progress(&mut self, token: &str, kind: &str, now: Instant, clock: u64) -> bool {
        if token.starts_with("rust-analyzer/flycheck/") {
            match (self.stage, kind) {
                (Stage::Asked(at), "begin")
                    if now.saturating_duration_since(at) >= CHECK_DEBOUNCE =>
                {
                    self.stage = Stage::Running;
                    self.published.clear();
                    self.contradicted = false;
                }
                (Stage::Running, "end") if self.contradicted && self.recheck(now) => {
                    return true;
                }
                (Stage::Running, "end") => {
                    self.stage = Stage::Done;
                    self.ended = Some((now, clock));
                }
                _ => {}
            }
            return false;
        }
        let reloaded = token == "rustAnalyzer/Fetching"
            && kind == "end"
            && (self.stage == Stage::Running || self.ended.is_some());
        if reloaded {
            self.ask();
        }
        reloaded
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
    /// (`answered_after` the end's pool clock), proves them in; without one, `quiet`
    /// after the end. A request its main loop answers does not: tried with an
    /// unknown `$/` request, whose answer came before the publishes.
    pub fn settled_after(
        &self,
        now: Instant,
        quiet: Duration,
        answered_after: impl FnOnce(u64) -> bool,
    ) -> bool {
        !self.owed()
            && self.ended.is_none_or(|(at, clock)| {
                now.saturating_duration_since(at) >= quiet || answered_after(clock)
            })
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

    #[test]
    fn a_check_that_drops_part_of_what_it_published_is_asked_for_again() {
        let c = Path::new("/crate/src/c.rs");
        let mut check = Check::default();
        check.ask();
        let later = Instant::now() + CHECK_DEBOUNCE;
        check.on_progress(FLYCHECK, "begin", later, 1);
        // Cleared before its first result, then growing: no contradiction.
        check.on_publish(c, 0);
        check.on_publish(c, 5);
        check.on_publish(c, 2);
        assert!(check.on_progress(FLYCHECK, "end", later, 2), "asked again");
        assert!(check.owed());
        // The next one drops them in the publish that follows its end: asked
        // again at once.
        let again = later + CHECK_DEBOUNCE;
        check.on_progress(FLYCHECK, "begin", again, 3);
        check.on_publish(c, 0);
        check.on_publish(c, 5);
        assert!(!check.on_progress(FLYCHECK, "end", again, 4));
        assert!(!check.owed());
        assert!(check.on_publish(c, 0), "asked again");
        assert!(check.owed());
        // A third is consistent; after two asked again, the next drop is taken.
        let third = Instant::now() + CHECK_DEBOUNCE;
        check.on_progress(FLYCHECK, "begin", third, 5);
        check.on_publish(c, 5);
        assert!(!check.on_progress(FLYCHECK, "end", third, 6));
        assert!(!check.owed());
        assert!(!check.on_publish(c, 0), "at most two asked again");
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
