//! What a running server needs beyond the protocol, in one value per server that
//! `lsp::Server` holds and calls: the generic client asks it, and never names a
//! server. Each answer comes from the family that needs it, in its own module:
//!
//! - clangd (`clangd::protocol`): the capability `offsetEncoding`, its per-file status
//!   `textDocument/clangd.fileStatus`, the changes it misses unless told to
//!   `forceRebuild`, the rewrite it cannot see (same size, same second);
//! - rust-analyzer (`rust_analyzer::protocol`): `experimental/serverStatus` (indexing,
//!   a workspace it could not load) and the check a save starts;
//! - typescript-language-server (`typescript::tsserver`): pulls routed to tsserver,
//!   and tsserver's project reload;
//! - pyright (`pyright::protocol`): the pull capability withheld, the progress token
//!   of its analysis, a configuration file it could not parse;
//! - gopls (`gopls::protocol`): a workspace it could not load, and the brackets of
//!   its diagnoses.
//!
//! Which of these apply is the server's `WaitProfile`'s, as before, or (the
//! notifications, the capabilities every server is offered) whether the server
//! sends or reads them: a server added by a config that speaks clangd's extensions is
//! understood as clangd is.

use std::path::Path;
use std::time::{Duration, Instant};

use lsp_types::{Diagnostic, DidChangeTextDocumentParams, ExecuteCommandParams};
use serde::Deserialize;
use serde_json::Value;

use super::WaitProfile;
use super::clangd::protocol::{self as clangd, FileStatuses};
use super::gopls::protocol as gopls;
use super::pyright::protocol as pyright;
use super::rust_analyzer::protocol::{self as rust_analyzer, Check};
use super::typescript::tsserver::{self, Route};

pub use super::clangd::protocol::FileStatus;
pub use super::typescript::tsserver::Answer as RoutedAnswer;

/// One server's state beyond the protocol (see the module's doc).
#[derive(Debug)]
pub struct Quirks {
    /// Pulls go to tsserver through typescript-language-server, once its
    /// `initialize` answer offered the command (`Delivery::TsserverPull`).
    route: Option<Route>,
    /// rust-analyzer's check of the project a save starts
    /// (`Delivery::CheckAfterSave`).
    check: Check,
    /// rust-analyzer's `experimental/serverStatus`: false while it is indexing.
    quiescent: Option<bool>,
    /// rust-analyzer's `experimental/serverStatus` said `health: "error"`: it could
    /// not load its workspace; the message, if it gave one.
    health_error: Option<String>,
    /// clangd's `textDocument/clangd.fileStatus`: the last state of each open file.
    file_status: FileStatuses,
    /// The files that include an edited one see its text as shown (see
    /// [`Quirks::dependents_see_unsaved`]).
    dependents_see_unsaved: bool,
    /// gopls's diagnoses, bracketed by work-done progress, against the
    /// notifications sent to it.
    diagnoses: gopls::Diagnoses,
}

impl Quirks {
    /// The state of a server starting at `root` with waits `wait`.
    pub fn new(wait: &WaitProfile, root: &Path) -> Quirks {
        Quirks {
            route: None,
            check: Check::at_start(wait.check_after_save(), root),
            quiescent: None,
            health_error: None,
            file_status: FileStatuses::default(),
            dependents_see_unsaved: wait.dependents_see_unsaved,
            diagnoses: gopls::Diagnoses::default(),
        }
    }

    /// The server was started as `launch` says (clangd told to read open headers).
    pub fn launched(&mut self, launch: &super::Launch) {
        self.dependents_see_unsaved = launch.dependents_see_unsaved;
    }

    /// Whether the files that include an edited one see its text as shown, saved or
    /// not: clangd 14 reads them from the disk, clangd 15 and later as lspgate shows
    /// them once told to (`clangd::adapt_launch`).
    pub fn dependents_see_unsaved(&self) -> bool {
        self.dependents_see_unsaved
    }

    // ------------------------------------------------------------------------------
    // The `initialize` exchange

    /// Add to (or take from) the client's `capabilities` what the servers' own
    /// extensions need: clangd's `offsetEncoding` and rust-analyzer's
    /// `experimental.serverStatusNotification` for every server, and, for a server
    /// analysing its workspace, pyright's pull capability withheld.
    pub fn offer(wait: &WaitProfile, capabilities: &mut Value) {
        clangd::offer_offset_encoding(capabilities);
        rust_analyzer::offer_server_status(capabilities);
        if wait.workspace_analysis() {
            pyright::withhold_pull_capability(capabilities);
        }
    }

    /// The server's `initialize` answer offered `capabilities` and no pull of its
    /// own: whether its pulls go to tsserver (typescript-language-server's command,
    /// for a server whose profile asks for it).
    pub fn route_pulls(&mut self, wait: &WaitProfile, capabilities: &Value) -> bool {
        if wait.tsserver_pull() && tsserver::offered(capabilities) {
            self.route = Some(Route::default());
            return true;
        }
        false
    }

    // ------------------------------------------------------------------------------
    // What the server sends

    /// A notification of a server's own, `method` with `params`, that arrived at pool
    /// clock `clock`: recorded, and true, when it is one (clangd's file status,
    /// rust-analyzer's server status).
    pub fn notification(&mut self, method: &str, params: &Value, clock: u64) -> bool {
        use lsp_types::notification::Notification;
        match method {
            clangd::FileStatusNotification::METHOD => {
                if let Ok(status) = clangd::FileStatusParams::deserialize(params) {
                    self.file_status.record(&status, clock);
                }
                true
            }
            rust_analyzer::ServerStatusNotification::METHOD => {
                let status = rust_analyzer::ServerStatusParams::deserialize(params).ok();
                self.quiescent = status.as_ref().and_then(|p| p.quiescent);
                self.health_error =
                    status
                        .filter(|p| p.health.as_deref() == Some("error"))
                        .map(|p| {
                            p.message
                                .unwrap_or_else(|| "its workspace did not load".into())
                        });
                true
            }
            _ => false,
        }
    }

    /// A `window/workDoneProgress/create` with `params`: the token to count as
    /// progress under way at once, for a server analysing its workspace (pyright,
    /// see `pyright::protocol::analysis_token`).
    pub fn progress_created(wait: &WaitProfile, params: &Value) -> Option<String> {
        wait.workspace_analysis()
            .then(|| pyright::analysis_token(params))
    }

    /// Follow a work-done progress `kind` of `token` (with `title` when it begins)
    /// at `now`, pool clock `clock`. True when the project check must be asked for
    /// again (rust-analyzer, see `rust_analyzer::protocol::Check::on_progress`): send
    /// [`Quirks::check_request`].
    pub fn on_progress(
        &mut self,
        token: &str,
        kind: &str,
        title: Option<&str>,
        now: Instant,
        clock: u64,
    ) -> bool {
        match kind {
            "begin" => self.diagnoses.begun(token, title.unwrap_or_default()),
            "end" => self.diagnoses.ended(token),
            _ => {}
        }
        self.check.on_progress(token, kind, now, clock)
    }

    /// A notification `method` is being sent to the server.
    pub fn sending(&mut self, method: &str) {
        self.diagnoses.sending(method);
    }

    /// Whether the server brackets its diagnoses (gopls) and every one it owes has
    /// published (`gopls::protocol::Diagnoses::all_in`): it has said all it will
    /// of what it was sent, and no silence needs to follow.
    pub fn diagnoses_in(&self) -> bool {
        self.diagnoses.all_in()
    }

    /// Whether the server brackets its diagnoses (gopls) and one it owes has not
    /// ended (`gopls::protocol::Diagnoses::owed`): no silence settles it.
    pub fn diagnoses_owed(&self) -> bool {
        self.diagnoses.owed()
    }

    /// Whether a publish of `list` is out of date and is to be dropped, `held` (its
    /// pool clock and list) being the push taken last for the file: rust-analyzer's
    /// pushes of one check, which can come out of order
    /// (`rust_analyzer::protocol::Check::stale`).
    pub fn stale_push(
        &self,
        wait: &WaitProfile,
        held: Option<(u64, &[Diagnostic])>,
        list: &[Diagnostic],
    ) -> bool {
        wait.check_after_save() && self.check.stale(held, list)
    }

    /// Why the server says it could not load its project, while it says so, from
    /// what it said (`logs`, the titles and messages of the `progress` under way):
    /// rust-analyzer's `health: "error"`, pyright's log that a config file could not
    /// be parsed, gopls's standing "Error loading workspace" progress.
    pub fn load_failure<'a>(
        &self,
        logs: &std::collections::VecDeque<(i32, String)>,
        progress: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    ) -> Option<String> {
        if let Some(message) = &self.health_error {
            return Some(message.clone());
        }
        if let Some(message) = pyright::unparsed_config(logs) {
            return Some(message.to_string());
        }
        progress
            .into_iter()
            .find(|(title, _)| *title == gopls::WORKSPACE_LOAD_FAILURE)
            .map(|(title, message)| match message {
                Some(m) if !m.is_empty() => format!("{title}: {m}"),
                _ => title.to_string(),
            })
    }

    /// Whether a pull's error `message`, with a code that asks for no retry, asks for
    /// one all the same: rust-analyzer answers "file not found" for the files of a
    /// workspace it has not loaded yet (see `rust_analyzer::protocol::not_loaded_yet`).
    pub fn pull_error_asks_to_retry(&self, message: &str) -> bool {
        self.quiescent != Some(true) && rust_analyzer::not_loaded_yet(message)
    }

    /// The server said it is not quiescent (rust-analyzer still loading or indexing).
    pub fn indexing(&self) -> bool {
        self.quiescent == Some(false)
    }

    // ------------------------------------------------------------------------------
    // The project check a save starts (rust-analyzer)

    /// Whether the project check a save started has yet to end.
    pub fn owes_check(&self) -> bool {
        self.check.owed()
    }

    /// Whether a check was asked for and none has begun since.
    pub fn check_asked(&self) -> bool {
        self.check.asked()
    }

    /// A save or the check's request was sent: a check that begins from now on is
    /// owed.
    pub fn ask_check(&mut self) {
        self.check.ask();
    }

    /// The notification that asks for the check of the whole project, as a method
    /// and its parameters: rust-analyzer's `rust-analyzer/runFlycheck` for every crate.
    pub fn check_request() -> (&'static str, Value) {
        use lsp_types::notification::Notification;
        (
            rust_analyzer::RunFlycheck::METHOD,
            serde_json::json!({ "textDocument": null }),
        )
    }

    /// Whether no check is owed and the last one's pushes are in: proven by an answer
    /// to a pull sent after its end (`answered_after` its pool clock), or `quiet`
    /// after it (`rust_analyzer::protocol::Check::settled_after`).
    pub fn check_settled_after(
        &self,
        now: Instant,
        quiet: Duration,
        answered_after: impl FnOnce(u64) -> bool,
    ) -> bool {
        self.check.settled_after(now, quiet, answered_after)
    }

    /// For a server whose pushes of a check come before its answers to pulls sent
    /// after it: the check ended and such an answer proves its pushes in.
    pub fn check_proven_in(
        &self,
        wait: &WaitProfile,
        answered_after: impl FnOnce(u64) -> bool,
    ) -> bool {
        wait.pushes_before_answers() && self.check.proven_in(answered_after)
    }

    // ------------------------------------------------------------------------------
    // clangd's file status and rebuilds

    /// clangd's last state of `path`.
    pub fn file_status(&self, path: &Path) -> Option<FileStatus> {
        self.file_status.get(path)
    }

    /// Whether the server reports a status per file (clangd).
    pub fn reports_file_status(&self) -> bool {
        !self.file_status.is_empty()
    }

    /// Whether `path`'s last status is "idle" and arrived after pool clock `since`
    /// (see `clangd::protocol::FileStatuses::idle_after`).
    pub fn idle_after(&self, path: &Path, since: u64) -> bool {
        self.file_status.idle_after(path, since)
    }

    /// The file was closed: its status says nothing about a later open.
    pub fn closed(&mut self, path: &Path) {
        self.file_status.forget(path);
    }

    /// Whether silence after a save vouches for a file with `text`: not when it has
    /// an include after its preamble, whose changes clangd does not notice
    /// (`clangd::protocol::includes_after_preamble`).
    pub fn silence_vouches_for(text: &str) -> bool {
        !clangd::includes_after_preamble(text)
    }

    /// The change `change`, asking the server to rebuild the file whatever it
    /// thinks (clangd's `forceRebuild`), as a method and its parameters.
    pub fn forcing_rebuild(change: DidChangeTextDocumentParams) -> (&'static str, Value) {
        use lsp_types::notification::Notification;
        let params = clangd::ForcingRebuildParams {
            change,
            force_rebuild: true,
        };
        (
            clangd::DidChangeForcingRebuild::METHOD,
            serde_json::to_value(params).unwrap_or_default(),
        )
    }

    // ------------------------------------------------------------------------------
    // Pulls through tsserver (typescript-language-server)

    /// Whether pulls go to tsserver.
    pub fn routes_pulls(&self) -> bool {
        self.route.is_some()
    }

    /// Begin a routed pull of `path` sent at pool clock `sent_seq`: the requests to
    /// send, with the slot each answer goes to; none when pulls are not routed.
    pub fn start_routed_pull(
        &mut self,
        path: &Path,
        sent_seq: u64,
    ) -> Option<Vec<(usize, ExecuteCommandParams)>> {
        self.route.as_mut().map(|route| route.start(path, sent_seq))
    }

    /// The answer for `slot` of the routed pull of `path` sent at `sent_seq`; a
    /// failed route is dropped (the server waits for pushes from then on), but for a
    /// `trial` pull (a file the daemon asks about between runs), whose failure says
    /// only that tsserver has the file in no project it loaded.
    pub fn routed_answer(
        &mut self,
        path: &Path,
        sent_seq: u64,
        slot: usize,
        answer: Result<Value, String>,
        trial: bool,
    ) -> RoutedAnswer {
        let Some(route) = &mut self.route else {
            return RoutedAnswer::Incomplete;
        };
        let answer = route.answer(path, sent_seq, slot, answer);
        if let RoutedAnswer::Failed(_) = answer
            && !trial
        {
            self.route = None;
        }
        answer
    }

    /// What to log when a routed pull of `path` failed for `why` and the server is
    /// left to its pushes.
    pub fn route_failed(path: &Path, why: &str) -> String {
        format!(
            "pull of {} through tsserver failed, waiting for pushes instead: {why}",
            path.display()
        )
    }

    /// The request that has tsserver reload its projects from the disk
    /// (`typescript::tsserver::reload_projects`); none when pulls are not routed.
    pub fn reload_request(&self) -> Option<ExecuteCommandParams> {
        self.route.as_ref().map(|_| tsserver::reload_projects())
    }

    /// Which of a file's pull answer and push stands, when the server has both routes
    /// to one answer (`typescript::tsserver::current`); `None`: the store decides.
    pub fn current<'a>(
        wait: &WaitProfile,
        pulled: Option<(u64, &'a [Diagnostic])>,
        pushed: Option<(u64, &'a [Diagnostic])>,
        changed_at: Option<u64>,
    ) -> Option<&'a [Diagnostic]> {
        if !wait.tsserver_pull() {
            return None;
        }
        tsserver::current(pulled, pushed, changed_at)
    }

    /// The server died: nothing under way will finish.
    pub fn forget_work(&mut self) {
        if let Some(route) = &mut self.route {
            route.clear();
        }
    }
}

/// Whether a file sent again with `text` unchanged, of which the server said
/// `diagnostics`, must go as a forced rebuild for a server that rebuilds only for a
/// reason of its own (clangd, `clangd::protocol::must_force_rebuild`).
pub fn must_force_rebuild(text: &str, diagnostics: &[Diagnostic]) -> bool {
    clangd::must_force_rebuild(text, diagnostics)
}

/// Whether a server that takes a file for unchanged when its size and modification
/// time in whole seconds are would miss the change from `before` to `after` (each the
/// size and the time): clangd 14 (`clangd::protocol::looks_unchanged`).
pub fn looks_unchanged(
    before: (u64, Option<std::time::SystemTime>),
    after: (u64, Option<std::time::SystemTime>),
) -> bool {
    clangd::looks_unchanged(before, after)
}
