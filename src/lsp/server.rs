//! One running language server for one root: where it is in its life, the documents
//! it has been shown, what it said (diagnostics, progress, logs) and the requests
//! sent to it that await an answer.
//!
//! Its state is private. The rest of lspgate reads it through the methods below and
//! changes it only through the pool (`Pool::open_or_change`, `Pool::pull`, ...), which
//! hands out `&Server` and never `&mut Server`: the pool's clock orders every event,
//! so a change that bypassed it would make "after" meaningless. What the server sends
//! is read in `incoming`, the `initialize` exchange in `initialize`.

mod incoming;
mod initialize;

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_server::{Message, RequestId};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Exit,
};
use lsp_types::request::{DocumentDiagnosticRequest, ExecuteCommand, Initialize, Shutdown};
use lsp_types::{
    Diagnostic, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams,
    DocumentDiagnosticParams, FileChangeType, FileEvent, TextDocumentContentChangeEvent,
    TextDocumentIdentifier, TextDocumentItem, VersionedTextDocumentIdentifier,
};

use super::diagnostics::Store;
use super::transport::Transport;
use super::{cache, encoding, protocol, uri};
use crate::servers::quirks::{self, FileStatus};
use crate::servers::{Quirks, ServerSpec};

/// Log and show messages kept per server.
const LOG_RING: usize = 100;
const SHOW_RING: usize = 50;
/// The longest text kept of one log or show message: the rings bound how many are
/// kept, this how large each is, so that a server logging 50 MiB lines cannot make
/// the rings (which live as long as the daemon) hold gigabytes.
const MESSAGE_TEXT_MAX: usize = 8 * 1024;

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lifecycle {
    /// `initialize` sent, no answer yet: notifications are held back until it comes.
    Initializing,
    Ready,
    /// Exited, crashed, failed to initialise, or shut down; the reason is for the
    /// report. A crashed server stays here, with its documents, until it is restarted.
    Dead(String),
    /// Stopped for good by `Pool::stop` (with the reason it was dead): its slot stays,
    /// since messages are tagged by slot, but `Pool::find` no longer returns it, so
    /// the next run starts a fresh one.
    Retired(String),
}

/// A document as the server sees it.
#[derive(Debug, Clone)]
pub struct Document {
    pub version: i32,
    pub text: String,
    /// The pool clock when this document was last opened or changed.
    pub changed_at: u64,
    /// And the time: how long the server has held this text.
    pub changed_instant: Instant,
    /// The first version with this text: a change that sends the same text again
    /// gets a new version, and clangd may answer it with an earlier one's publish
    /// (see `wait::freshness`).
    pub text_since: i32,
}

/// One work-done progress under way: plain data, in `model`.
pub use crate::model::progress::Progress;

/// What a request we sent was for, so its answer lands in the right place.
#[derive(Debug, Clone)]
enum Pending {
    Initialize,
    Pull {
        path: PathBuf,
        sent_seq: u64,
    },
    /// One of the requests of a pull routed past the protocol (see
    /// [`Quirks::start_routed_pull`]).
    RoutedPull {
        path: PathBuf,
        sent_seq: u64,
        slot: usize,
    },
    /// A reload of the server's projects (see [`Quirks::reload_request`]): whatever
    /// the answer, it was passed on.
    Reload,
    Shutdown,
}

/// The requests sent to a server that await an answer, and the last id given.
#[derive(Default)]
struct Requests {
    next_id: i32,
    pending: HashMap<RequestId, Pending>,
}

/// The pool clocks of a server that decide whether what it said still holds, and
/// whether a pull answer is current (see [`Server::diagnostics_hold`],
/// [`Server::pull_holds_from`]). 0: never.
#[derive(Default)]
struct Clocks {
    /// Pool clock of the last change to what the server sees: a document's text
    /// changed or closed, files changed on disk, or [`Server::mark_changed`]. A pull
    /// answer sent after it still holds.
    text_changed_at: u64,
    /// Pool clock of the last `workspace/diagnostic/refresh`: pulls sent before it
    /// are out of date.
    refresh_seq: u64,
    /// Pool clock of the last change to what the server sees made outside a run's
    /// own edit (`Pool::mark_changed`): diagnostics received before it were computed
    /// against other files than the ones it has now, whatever their own text. (After
    /// a run's own edit the run waited for the files it can break.)
    content_changed_at: u64,
    /// Pool clock of the last `didSave` sent.
    saved_at: u64,
    /// Pool clock of the last change to a file the server reads from the disk that
    /// kept the file's size (`Pool::mark_size_kept`), for a server blind to such a
    /// change (clangd, see `servers::quirks::looks_unchanged`). Each open file sent
    /// after it goes with a forced rebuild until sent once, and until then what the
    /// server said of it does not hold.
    size_kept_at: u64,
    /// The project as the server sees it, when the daemon named it (a key of every
    /// file's text), and the pool clock since: pull answers from then on are that
    /// view's. Unknown (`None`) after any change the server sees.
    view: Option<(u64, u64)>,
}

/// When things happened to a server, on the wall clock.
struct Times {
    started: Instant,
    last_message: Instant,
    /// When `initialize` was answered.
    ready_at: Option<Instant>,
    /// When it died, for the crash backoff of `restart`.
    died_at: Option<Instant>,
}

/// How a server learns of files created, changed or deleted on disk.
#[derive(Debug, Default)]
struct DiskSight {
    /// It registered `workspace/didChangeWatchedFiles` once: it learns of the disk
    /// from us from then on, even between an unregistration and the registration
    /// after it (typescript-language-server registers its watchers again, the old
    /// ones unregistered first, each time tsserver watches somewhere new).
    through_us: bool,
    /// A file of its own was created or deleted on disk behind lspgate's back while
    /// the server watches the disk itself: when it sees that is its own business
    /// (see [`Server::knows_the_disk_as_sent`]).
    lost: bool,
}

/// One running language server for one root.
pub struct Server {
    pub(super) name: String,
    spec: ServerSpec,
    root: PathBuf,
    lifecycle: Lifecycle,
    transport: Transport,
    /// The requests sent that await an answer.
    requests: Requests,
    /// Notifications sent before `initialize` was answered, held back until then.
    held: Vec<Message>,
    /// Pull diagnostics: offered statically or registered dynamically
    /// (pyright registers `textDocument/diagnostic` right after `initialized`, and
    /// again with a new id once it has read its configuration, unregistering the
    /// first: so registrations are tracked by id).
    pull: bool,
    static_pull: bool,
    /// Dynamic registrations in force: id → method.
    registrations: HashMap<String, String>,
    /// How the server learns of the disk.
    disk: DiskSight,
    /// Whether the server said it handles `didSave` (statically or by registration).
    wants_save: bool,
    /// The unit of the server's `character` offsets; stored positions are UTF-16.
    encoding: encoding::Encoding,
    docs: HashMap<PathBuf, Document>,
    diagnostics: Store,
    /// Work-done progress begun (or created, see `pyright`) and not ended, by token.
    pub(super) progress: HashMap<String, Progress>,
    /// A work-done progress has ended since the server started: for a server
    /// analysing its whole workspace, an analysis of more than the open files has run.
    pub(super) progress_ended: bool,
    /// What the server needs beyond the protocol, and what it said of its own:
    /// everything server-specific (see `servers::quirks`).
    pub(super) quirks: Quirks,
    /// Files with a pull request in flight.
    pulls_in_flight: HashSet<PathBuf>,
    /// Those of them the daemon asked about between runs (`Server::try_pull`).
    trials: HashSet<PathBuf>,
    /// The pool clocks that decide whether what the server said still holds.
    clocks: Clocks,
    /// The slowest change-to-publish time seen lately (decays), so that waiting
    /// out a server's silence scales with how slow it is now (a loaded machine).
    publish_latency: Duration,
    logs: VecDeque<(i32, String)>,
    shown: VecDeque<(i32, String)>,
    /// When it started, last spoke, became ready and died.
    times: Times,
}

/// Reading a server.
impl Server {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The process id; 0 for a server in memory.
    pub fn pid(&self) -> u32 {
        self.transport.pid()
    }

    pub fn lifecycle(&self) -> &Lifecycle {
        &self.lifecycle
    }

    /// Dead or retired: it will say nothing more.
    pub fn is_dead(&self) -> bool {
        matches!(self.lifecycle, Lifecycle::Dead(_) | Lifecycle::Retired(_))
    }

    pub fn is_retired(&self) -> bool {
        matches!(self.lifecycle, Lifecycle::Retired(_))
    }

    pub fn dead_reason(&self) -> Option<&str> {
        match &self.lifecycle {
            Lifecycle::Dead(r) | Lifecycle::Retired(r) => Some(r),
            _ => None,
        }
    }

    /// Whether it answered `initialize`, alive now or not: a server that died after
    /// it crashed, one that died before it failed to start.
    pub fn initialized(&self) -> bool {
        self.times.ready_at.is_some()
    }

    pub fn started(&self) -> Instant {
        self.times.started
    }

    /// When it last said anything.
    pub fn last_message(&self) -> Instant {
        self.times.last_message
    }

    /// Whether the files that include an edited one see its text as shown, saved or
    /// not (`servers::Launch`).
    pub fn dependents_see_unsaved(&self) -> bool {
        self.quirks.dependents_see_unsaved()
    }

    /// Whether it answers pulls (`textDocument/diagnostic`, or tsserver's).
    pub fn pulls(&self) -> bool {
        self.pull
    }

    pub fn pull_in_flight(&self, path: &Path) -> bool {
        self.pulls_in_flight.contains(path)
    }

    /// Pool clock of its last `workspace/diagnostic/refresh` that is news: the
    /// refresh a pull answer must postdate. pyright asks for a refresh ~250 ms after
    /// every change though a pull sent after the change already had the final
    /// answer; for a server whose profile says so, refreshes are not news (0).
    pub fn refresh_seq(&self) -> u64 {
        if self.spec.wait.refresh_is_news {
            self.clocks.refresh_seq
        } else {
            0
        }
    }

    /// The slowest change-to-publish time seen lately (see `Pool::observe_latency`).
    pub fn publish_latency(&self) -> Duration {
        self.publish_latency
    }

    /// The work-done progress under way.
    pub fn progress(&self) -> impl Iterator<Item = &Progress> {
        self.progress.values()
    }

    /// Whether a work-done progress has ended since the server started.
    pub fn progress_ended(&self) -> bool {
        self.progress_ended
    }

    /// The server said it is not quiescent (still loading or indexing).
    pub fn indexing(&self) -> bool {
        self.quirks.indexing()
    }

    /// Whether the project check a save started has yet to end (see
    /// `Delivery::CheckAfterSave`).
    pub fn owes_check(&self) -> bool {
        self.quirks.owes_check()
    }

    /// The server's last status of `path`, for one that reports a status per file
    /// (see [`Quirks::file_status`]).
    pub fn file_status(&self, path: &Path) -> Option<FileStatus> {
        self.quirks.file_status(path)
    }

    pub fn doc(&self, path: &Path) -> Option<&Document> {
        self.docs.get(path)
    }

    pub fn docs(&self) -> impl Iterator<Item = (&Path, &Document)> {
        self.docs.iter().map(|(p, d)| (p.as_path(), d))
    }

    pub fn doc_count(&self) -> usize {
        self.docs.len()
    }

    /// Everything it said about files, by route, with when.
    pub fn diagnostics(&self) -> &Store {
        &self.diagnostics
    }

    /// What the server says about `path` now.
    pub fn diagnostics_of(&self, path: &Path) -> Vec<Diagnostic> {
        let Some(held) = self.diagnostics.get(path) else {
            return Vec::new();
        };
        if let Some(current) = Quirks::current(
            &self.spec.wait,
            held.pulled
                .as_ref()
                .map(|p| (p.sent_seq, p.diagnostics.as_slice())),
            held.pushed
                .as_ref()
                .map(|p| (p.seq, p.diagnostics.as_slice())),
            self.docs.get(path).map(|d| d.changed_at),
        ) {
            return current.to_vec();
        }
        held.current()
    }

    /// Whether `path`'s diagnostics were received after the last change of anything
    /// the server sees (`Pool::mark_changed`), so that they still hold.
    pub fn diagnostics_hold(&self, path: &Path) -> bool {
        !self.blind_to(path)
            && (self.clocks.content_changed_at == 0
                || self
                    .diagnostics
                    .received_after(path, self.clocks.content_changed_at)
                || self.says_unchanged(path))
    }

    /// Whether the server got `path`'s current text after the last change of anything
    /// else it sees: its answer for that version, arrived or not, is current (a unit
    /// the daemon opened between runs, still being built when a run asks for it).
    pub fn doc_postdates_changes(&self, path: &Path) -> bool {
        !self.blind_to(path)
            && self
                .doc(path)
                .is_some_and(|doc| doc.changed_at > self.clocks.content_changed_at)
    }

    /// clangd: a file it reads changed at the same size since `path` was last sent
    /// (see `size_kept_at`): what it built of `path` since may rest on the old text.
    fn blind_to(&self, path: &Path) -> bool {
        self.clocks.size_kept_at > 0
            && self
                .doc(path)
                .is_none_or(|d| d.changed_at < self.clocks.size_kept_at)
    }

    /// clangd: a save since the last change has it going over every open file again
    /// (see [`Server::says_unchanged`]) and it is not quiet yet: what it holds for an
    /// open file is neither known current nor known stale until it is.
    pub fn going_over_open_files(&self) -> bool {
        self.quirks.reports_file_status()
            && self.clocks.content_changed_at > 0
            && self.clocks.saved_at >= self.clocks.content_changed_at
            && !self.settled(Instant::now())
    }

    /// clangd: every open file was gone over again after the last change (a save
    /// sent since, see `clangd::FileStatuses::idle_after`), this one is idle, and
    /// the server is quiet: it published nothing new for the file because nothing it
    /// reads changed, so what it published before stands. Not for a file with an
    /// include after its preamble, whose changes clangd does not notice
    /// (`clangd::includes_after_preamble`).
    pub fn says_unchanged(&self, path: &Path) -> bool {
        !self.blind_to(path)
            && self.clocks.saved_at >= self.clocks.content_changed_at
            && self.diagnostics.get(path).is_some()
            && self.quirks.idle_after(path, self.clocks.saved_at)
            && self.settled(Instant::now())
            && self
                .docs
                .get(path)
                .is_some_and(|d| Quirks::silence_vouches_for(&d.text))
    }

    /// True when no progress is under way and the server has been silent for its
    /// quiet period.
    pub fn settled(&self, now: Instant) -> bool {
        self.settled_after(now, self.spec.wait.quiet)
    }

    /// True when no progress is under way, no publish is owed, no pull is in flight,
    /// rust-analyzer is not indexing nor owes a check (and its last check ended its
    /// full quiet ago: what it pushes can trail the end), gopls owes no diagnosis it
    /// brackets, and the server has been silent for `quiet`.
    pub fn settled_after(&self, now: Instant, quiet: Duration) -> bool {
        // A project it could not load is its last word until it is mended: nothing
        // more will come (the run says so, see `load_failure`).
        if self.load_failure().is_some() {
            return now.duration_since(self.times.last_message) >= quiet;
        }
        self.progress.is_empty()
            && self.diagnostics.owes_nothing()
            && !self.indexing()
            && self
                .quirks
                .check_settled_after(now, self.spec.wait.quiet, |end| {
                    self.diagnostics.pulled_after(end)
                })
            && self.pulls_in_flight.is_empty()
            && !self.quirks.diagnoses_owed()
            && now.duration_since(self.times.last_message) >= quiet
    }

    /// gopls: every diagnosis it owes for what it was sent has published
    /// (`Quirks::diagnoses_in`): no silence needs to follow.
    pub fn diagnoses_in(&self) -> bool {
        self.quirks.diagnoses_in()
    }

    /// rust-analyzer: the check a save started has ended and a pull answer proves
    /// its pushes in (`rust_analyzer::Check::proven_in`): a server with every target
    /// answered has nothing left to say, and needs no further silence.
    pub fn check_proven_in(&self) -> bool {
        self.quirks
            .check_proven_in(&self.spec.wait, |end| self.diagnostics.pulled_after(end))
    }

    /// Why the server says it could not load its project, while it says so:
    /// rust-analyzer's `health: "error"`, gopls's standing "Error loading workspace"
    /// progress (`gopls`), pyright's log that a config file could not be parsed
    /// (`pyright`). Its word on any file is then not the project's.
    pub fn load_failure(&self) -> Option<String> {
        self.quirks.load_failure(
            &self.logs,
            self.progress
                .values()
                .map(|p| (p.title.as_str(), p.message.as_deref())),
        )
    }

    /// Its `window/logMessage`s, oldest first, with their level.
    pub fn logs(&self) -> &VecDeque<(i32, String)> {
        &self.logs
    }

    /// Its `window/showMessage`s (and message requests), oldest first.
    pub fn shown(&self) -> &VecDeque<(i32, String)> {
        &self.shown
    }

    /// When it died, if it did.
    pub(super) fn died_at(&self) -> Option<Instant> {
        self.times.died_at
    }
}

/// Changing a server: for the pool only, which passes its clock.
impl Server {
    /// A server over `transport`, with `initialize` sent.
    pub(super) fn start(spec: &ServerSpec, root: &Path, transport: Transport) -> Server {
        let now = Instant::now();
        let mut server = Server {
            name: spec.name.clone(),
            spec: spec.clone(),
            root: root.to_path_buf(),
            lifecycle: Lifecycle::Initializing,
            transport,
            requests: Requests::default(),
            held: Vec::new(),
            pull: false,
            static_pull: false,
            registrations: HashMap::new(),
            disk: DiskSight::default(),
            wants_save: true,
            encoding: encoding::Encoding::Utf16,
            docs: HashMap::new(),
            diagnostics: Store::default(),
            progress: HashMap::new(),
            progress_ended: false,
            quirks: Quirks::new(&spec.wait, root),
            pulls_in_flight: HashSet::new(),
            trials: HashSet::new(),
            publish_latency: Duration::ZERO,
            logs: VecDeque::new(),
            shown: VecDeque::new(),
            clocks: Clocks::default(),
            times: Times {
                started: now,
                last_message: now,
                ready_at: None,
                died_at: None,
            },
        };
        let id = server.request_id(Pending::Initialize);
        let params = initialize::params(spec, root);
        // Sent past the hold: it is what the hold waits for.
        server
            .transport
            .send(protocol::request_untyped::<Initialize>(id, params));
        server
    }

    /// What the transport delivered, at pool clock `clock`.
    pub(super) fn handle(&mut self, event: super::transport::Incoming, clock: u64) {
        use super::transport::Incoming;
        self.times.last_message = Instant::now();
        match event {
            Incoming::Closed => {
                let reason = if self.lifecycle == Lifecycle::Initializing {
                    "exited during initialize"
                } else {
                    "exited"
                };
                self.die(reason.to_string());
            }
            Incoming::Garbage(text) => self.log(1, format!("lspgate: {text}")),
            Incoming::SkippedPublish(skipped) => {
                self.log(
                    1,
                    format!(
                        "lspgate: {}: the diagnostics of {}",
                        skipped.why, skipped.uri
                    ),
                );
                if let Some(path) = lsp_types::Url::parse(&skipped.uri)
                    .ok()
                    .and_then(|u| uri::to_path(&u))
                {
                    let version = skipped.version.and_then(|v| i32::try_from(v).ok());
                    self.diagnostics.skipped(path, clock, version, skipped.why);
                }
            }
            Incoming::Message(Message::Request(req)) => incoming::request(self, req, clock),
            Incoming::Message(Message::Response(resp)) => incoming::response(self, resp),
            Incoming::Message(Message::Notification(n)) => incoming::notification(self, n, clock),
        }
    }

    /// Open `path` with `text`, or change it to `text`; returns the version the server
    /// now has.
    pub(super) fn open_or_change(&mut self, path: &Path, text: &str, clock: u64) -> i32 {
        if self.spec.wait.workspace_analysis() {
            self.diagnostics.owe(path, clock);
        }
        let uri = uri::from_path(path);
        if let Some(doc) = self.docs.get_mut(path) {
            let blind = doc.changed_at < self.clocks.size_kept_at;
            doc.version += 1;
            let changed = doc.text != text;
            if changed {
                doc.text_since = doc.version;
            }
            doc.text = text.to_string();
            doc.changed_at = clock;
            doc.changed_instant = Instant::now();
            let version = doc.version;
            if changed {
                self.saw_change(clock);
            }
            if self.spec.wait.reopens_written_files() && disk_holds(path, text) {
                self.reopen(path, version, text);
                return version;
            }
            let change = DidChangeTextDocumentParams {
                text_document: VersionedTextDocumentIdentifier { uri, version },
                content_changes: vec![TextDocumentContentChangeEvent {
                    range: None,
                    range_length: None,
                    text: text.to_string(),
                }],
            };
            let force = self.spec.wait.force_rebuild_unchanged
                && (blind
                    || !changed && quirks::must_force_rebuild(text, &self.diagnostics_of(path)));
            if force {
                let (method, params) = Quirks::forcing_rebuild(change);
                self.send_document(protocol::notification_raw(method, params));
            } else {
                self.send_document(protocol::notification::<DidChangeTextDocument>(change));
            }
            return version;
        }
        let language_id = self.language_id_of(path);
        self.docs.insert(
            path.to_path_buf(),
            Document {
                version: 1,
                text: text.to_string(),
                changed_at: clock,
                changed_instant: Instant::now(),
                text_since: 1,
            },
        );
        self.send_document(protocol::notification::<DidOpenTextDocument>(
            DidOpenTextDocumentParams {
                text_document: TextDocumentItem {
                    uri,
                    language_id,
                    version: 1,
                    text: text.to_string(),
                },
            },
        ));
        1
    }

    /// Show the server `path`'s new text, which the disk holds, as a close and an
    /// open rather than a change (`Delivery::WorkspaceAnalysis`'s `typing_backoff`).
    fn reopen(&mut self, path: &Path, version: i32, text: &str) {
        let uri = uri::from_path(path);
        self.send_document(protocol::notification::<DidCloseTextDocument>(
            DidCloseTextDocumentParams {
                text_document: TextDocumentIdentifier { uri: uri.clone() },
            },
        ));
        self.send_document(protocol::notification::<DidOpenTextDocument>(
            DidOpenTextDocumentParams {
                text_document: TextDocumentItem {
                    uri,
                    language_id: self.language_id_of(path),
                    version,
                    text: text.to_string(),
                },
            },
        ));
    }

    fn language_id_of(&self, path: &Path) -> String {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        self.spec.language_id(ext).to_string()
    }

    /// Send a notification about a document: none to a server shown no document
    /// (`Delivery::CheckAfterSave`'s `disk_only`), which lspgate still keeps the
    /// documents of.
    fn send_document(&mut self, msg: Message) {
        if !self.spec.wait.disk_only() {
            self.send(msg);
        }
    }

    /// Tell the server `path` was written to disk, if it has it open and cares.
    pub(super) fn save(&mut self, path: &Path, clock: u64) {
        if self.spec.wait.disk_only() {
            // The edit is on disk before the servers hear of it: one check, asked
            // for at the first file's save, reads every file the edit wrote.
            if !self.quirks.check_asked() {
                self.run_check();
            }
            return;
        }
        let Some(text) = self.docs.get(path).map(|d| d.text.clone()) else {
            return;
        };
        if self.wants_save {
            self.clocks.saved_at = clock;
            self.send(protocol::notification::<DidSaveTextDocument>(
                DidSaveTextDocumentParams {
                    text_document: TextDocumentIdentifier {
                        uri: uri::from_path(path),
                    },
                    text: Some(text),
                },
            ));
            if self.spec.wait.check_after_save() {
                self.quirks.ask_check();
            }
        }
    }

    /// Ask for the project check a save would start, for a change that saved nothing
    /// (a deleted file); nothing for a server without one.
    pub(super) fn run_check(&mut self) {
        if self.spec.wait.check_after_save() {
            self.send_check_request();
            self.quirks.ask_check();
        }
    }

    /// Ask for the check of the whole project ([`Quirks::check_request`]); the
    /// quirks know it is owed.
    pub(super) fn send_check_request(&mut self) {
        let (method, params) = Quirks::check_request();
        self.send(protocol::notification_raw(method, params));
    }

    pub(super) fn close(&mut self, path: &Path, clock: u64) {
        if self.docs.remove(path).is_some() {
            self.saw_change(clock);
            self.send_document(protocol::notification::<DidCloseTextDocument>(
                DidCloseTextDocumentParams {
                    text_document: TextDocumentIdentifier {
                        uri: uri::from_path(path),
                    },
                },
            ));
        }
        // A server analysing its whole workspace goes on reporting a closed file
        // (and publishes an empty list for a deleted one): what it said stands.
        if !self.spec.wait.workspace_analysis() {
            self.diagnostics.remove(path);
        }
        self.quirks.closed(path);
    }

    /// `workspace/didChangeWatchedFiles` for `changes`, told at pool clock `clock`.
    pub(super) fn watched(&mut self, changes: &[(PathBuf, FileChangeType)], clock: u64) {
        self.saw_change(clock);
        if self.spec.wait.workspace_analysis() {
            for (path, _) in changes {
                if self.diagnostics.tracks(path, self.docs.contains_key(path)) {
                    self.diagnostics.owe(path, clock);
                }
            }
        }
        let changes = changes
            .iter()
            .map(|(path, typ)| FileEvent {
                uri: uri::from_path(path),
                typ: *typ,
            })
            .collect();
        self.send(protocol::notification::<DidChangeWatchedFiles>(
            DidChangeWatchedFilesParams { changes },
        ));
    }

    /// Ask for `path`'s diagnostics at pool clock `sent_seq`, unless a pull of it is
    /// under way.
    pub(super) fn pull(&mut self, path: &Path, sent_seq: u64) {
        if self.is_dead() || self.pulls_in_flight.contains(path) {
            return;
        }
        self.pulls_in_flight.insert(path.to_path_buf());
        if let Some(requests) = self.quirks.start_routed_pull(path, sent_seq) {
            for (slot, params) in requests {
                let id = self.request_id(Pending::RoutedPull {
                    path: path.to_path_buf(),
                    sent_seq,
                    slot,
                });
                self.send(protocol::request::<ExecuteCommand>(id, params));
            }
            return;
        }
        let id = self.request_id(Pending::Pull {
            path: path.to_path_buf(),
            sent_seq,
        });
        let params = DocumentDiagnosticParams {
            text_document: TextDocumentIdentifier {
                uri: uri::from_path(path),
            },
            identifier: None,
            previous_result_id: None,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        self.send(protocol::request::<DocumentDiagnosticRequest>(id, params));
    }

    /// It was started as `launch` says.
    pub(super) fn launched(&mut self, launch: &crate::servers::Launch) {
        self.quirks.launched(launch);
    }

    /// [`Server::pull`], between runs, of a file the server may have in no project
    /// (tsserver answers only for the files of the projects it loaded): a failure
    /// then says so of that file, not that pulls fail (see `incoming::failed_trial`).
    pub(super) fn try_pull(&mut self, path: &Path, sent_seq: u64) {
        if self.is_dead() || self.pulls_in_flight.contains(path) {
            return;
        }
        self.trials.insert(path.to_path_buf());
        self.pull(path, sent_seq);
    }

    /// Have the server reload its projects from the disk (see
    /// [`Quirks::reload_request`]); false when it has no way to.
    pub(super) fn reload_projects(&mut self, clock: u64) -> bool {
        if self.is_dead() {
            return false;
        }
        let Some(params) = self.quirks.reload_request() else {
            return false;
        };
        let id = self.request_id(Pending::Reload);
        self.send(protocol::request::<ExecuteCommand>(id, params));
        self.mark_changed(clock);
        true
    }

    /// A file the server reads from the disk changed at `clock` and kept its size
    /// (see `size_kept_at`); only clangd is blind to that.
    pub(super) fn mark_size_kept(&mut self, clock: u64) {
        if self.spec.wait.force_rebuild_unchanged {
            self.clocks.size_kept_at = clock;
        }
    }

    /// Something the server sees changed outside a run's own edit, at `clock`.
    pub(super) fn mark_changed(&mut self, clock: u64) {
        self.clocks.content_changed_at = clock;
        self.saw_change(clock);
    }

    /// What the server sees changed at `clock`: answers from before no longer hold,
    /// and the view is unknown until the daemon names it again.
    pub(super) fn saw_change(&mut self, clock: u64) {
        self.clocks.text_changed_at = clock;
        self.clocks.view = None;
    }

    /// The server is shown texts the disk does not have (a review, a dry run): it no
    /// longer sees the project its view was named for.
    pub(super) fn forget_view(&mut self) {
        self.clocks.view = None;
    }

    /// The server sees the project as it is on disk, whose every file's text has key
    /// `view` (`daemon::watch`), from pool clock `clock`: answers still holding are
    /// that view's, and answers given at that view before are given again (see
    /// `diagnostics::Store::enter_view`).
    pub(super) fn enter_view(&mut self, view: u64, clock: u64) {
        let holds_from = self.pull_holds_from().max(self.refresh_seq());
        self.diagnostics.enter_view(view, holds_from, clock);
        self.clocks.view = Some((view, clock));
    }

    /// Whether the server learns of files changed on disk only from us: it asked to
    /// be told (`workspace/didChangeWatchedFiles` registered), so it sees each change
    /// in order with what we send after it. One that watches the disk itself sees it
    /// in its own time: typescript-language-server's tsserver, when it cannot hand
    /// its watching to us (see `servers::typescript`), polls for a file it misses,
    /// and a file put back after a deletion was still missing to it when the next run
    /// asked (mobx in the corpus).
    pub fn hears_the_disk_from_us(&self) -> bool {
        self.disk.through_us
    }

    /// Whether what it answers when asked may rest on a change it read on the disk by
    /// itself, before lspgate showed it (tsserver, through typescript-language-server,
    /// which then pushes the open files again unasked): it is asked for its diagnostics
    /// and watches the disk itself.
    pub fn answers_from_its_own_view_of_the_disk(&self) -> bool {
        self.answers_pulls() && !self.hears_the_disk_from_us()
    }

    /// Whether what the server sees of the disk is what lspgate showed it: it hears
    /// of every change from us (see [`Server::hears_the_disk_from_us`]), or, watching
    /// the disk itself and asked for its diagnostics, every file changed behind
    /// lspgate's back was shown to it as a document (the daemon opens those) and none
    /// was created or deleted so. Only then is the project's view its view, and its
    /// answers at a view seen before good again.
    pub fn knows_the_disk_as_sent(&self) -> bool {
        self.hears_the_disk_from_us() || (self.answers_pulls() && !self.disk.lost)
    }

    /// Whether its diagnostics are asked for (`textDocument/diagnostic`, or tsserver's
    /// commands through typescript-language-server): the answers a view keeps.
    pub fn answers_pulls(&self) -> bool {
        self.pull || self.quirks.routes_pulls()
    }

    /// A file of its extensions was created or deleted behind lspgate's back, and
    /// the server, which watches the disk itself and sees that in its own time, could
    /// not be made to see it now (tsserver can: [`Server::reload_projects`]). Its view
    /// of the disk is not known from then on.
    pub(super) fn lose_the_disk(&mut self) {
        self.disk.lost = true;
        self.forget_view();
    }

    /// The view a pull sent at `sent_seq` was answered for: the current one, if it
    /// was named before the pull was sent and nothing changed since.
    pub(super) fn view_at(&self, sent_seq: u64) -> Option<u64> {
        self.clocks
            .view
            .filter(|&(_, since)| sent_seq >= since)
            .map(|(view, _)| view)
    }

    /// The pool clock a pull answer must have been sent at or after to hold: after
    /// the last change to what it sees (see the field).
    pub fn pull_holds_from(&self) -> u64 {
        self.clocks.text_changed_at + 1
    }

    /// Whether it answered a pull of `path` sent after the last change to what it
    /// sees: that answer is its word on the file now.
    pub fn pull_holds(&self, path: &Path) -> bool {
        self.diagnostics
            .get(path)
            .and_then(|d| d.pulled.as_ref())
            .is_some_and(|p| p.sent_seq >= self.pull_holds_from())
    }

    /// Whether a pull ever answered for `path` (a pull between runs that failed takes
    /// the answer back: see `incoming::failed_trial`): tsserver has it in a project.
    pub fn was_pulled(&self, path: &Path) -> bool {
        self.diagnostics
            .get(path)
            .is_some_and(|d| d.pulled.is_some())
    }

    /// A change-to-publish time seen: the slowest lately, halving each time a faster
    /// one is seen so one slow moment does not slow every later wait.
    pub(super) fn observe_latency(&mut self, took: Duration) {
        self.publish_latency = took.max(self.publish_latency / 2);
    }

    /// Drop what [`cache::trim`] says of the diagnostics of unopened files.
    pub(super) fn trim_diagnostics(&mut self, cap: usize) -> usize {
        // Its diagnostics are the live before view of every file, and the files it
        // published are the ones it tracks: all are kept (a few hundred bytes a file).
        if self.spec.wait.workspace_analysis() {
            return 0;
        }
        let docs = &self.docs;
        cache::trim(&mut self.diagnostics, |p| docs.contains_key(p), cap)
    }

    pub(super) fn unopened_diagnostics(&self) -> usize {
        cache::unopened(&self.diagnostics, |p| self.docs.contains_key(p))
    }

    /// Give up on the server (it never answered `initialize`): kill it, say why.
    pub(super) fn kill(&mut self, reason: String) {
        self.transport.finish(Instant::now());
        self.lifecycle = Lifecycle::Dead(reason);
        self.forget_work();
    }

    /// Send `shutdown` if it is ready for one.
    pub(super) fn request_shutdown(&mut self) {
        if self.lifecycle == Lifecycle::Ready {
            let id = self.request_id(Pending::Shutdown);
            self.transport.send(protocol::request::<Shutdown>(id, ()));
        }
    }

    /// Whether a `shutdown` sent awaits its answer.
    pub(super) fn awaits_shutdown(&self) -> bool {
        !self.is_dead()
            && self
                .requests
                .pending
                .values()
                .any(|p| matches!(p, Pending::Shutdown))
    }

    /// Send `exit` (the end of the shutdown handshake, or a last word to a server
    /// that never answered `shutdown`).
    pub(super) fn send_exit(&mut self) {
        self.transport.send(protocol::notification::<Exit>(()));
    }

    /// Wait for the process to end until `deadline`, then kill it; a server still
    /// alive is dead now, for `reason`.
    pub(super) fn finish(&mut self, deadline: Instant, reason: &str) {
        self.transport.finish(deadline);
        if !self.is_dead() {
            self.lifecycle = Lifecycle::Dead(reason.into());
        }
    }

    /// Retire a stopped server: it keeps its slot and rings, nothing else.
    pub(super) fn retire(&mut self) {
        let reason = self.dead_reason().unwrap_or("stopped").to_string();
        self.lifecycle = Lifecycle::Retired(reason);
        self.docs.clear();
        self.diagnostics.clear();
    }

    /// Take over the log and show rings of the server this one replaces, and say why.
    pub(super) fn inherit_rings(
        &mut self,
        logs: VecDeque<(i32, String)>,
        shown: VecDeque<(i32, String)>,
        why: String,
    ) {
        self.logs = logs;
        self.shown = shown;
        self.log(2, why);
    }
}

/// The plumbing under both.
impl Server {
    /// A fresh request id, recorded as awaiting an answer for `pending`.
    fn request_id(&mut self, pending: Pending) -> RequestId {
        self.requests.next_id += 1;
        let id = RequestId::from(self.requests.next_id);
        self.requests.pending.insert(id.clone(), pending);
        id
    }

    /// Send `msg`; a notification waits until `initialize` is answered, and nothing
    /// is sent to a dead server. (Answers to the server's requests do not come here:
    /// they go out even before `initialize` returns.)
    fn send(&mut self, msg: Message) {
        if let Message::Notification(n) = &msg {
            self.quirks.sending(&n.method);
        }
        if self.lifecycle == Lifecycle::Initializing
            && let Message::Notification(_) = msg
        {
            self.held.push(msg);
            return;
        }
        if self.is_dead() {
            return;
        }
        self.transport.send(msg);
    }

    fn update_pull(&mut self) {
        self.pull = self.static_pull
            || self
                .registrations
                .values()
                .any(|m| m == <DocumentDiagnosticRequest as lsp_types::request::Request>::METHOD);
    }

    /// It died by itself (or failed `initialize`): say how, from its exit status and
    /// its last words on stderr.
    fn die(&mut self, reason: String) {
        if self.is_dead() {
            return;
        }
        let status = self.transport.try_exit_status();
        let mut reason = match status {
            Some(s) => format!("{reason} ({s})"),
            None => reason,
        };
        if let Some(last) = self.transport.stderr_tail().last() {
            reason.push_str(&format!("; last stderr: {last}"));
        }
        self.lifecycle = Lifecycle::Dead(reason);
        self.forget_work();
    }

    /// Nothing under way will finish: forget it, so no wait waits for it.
    fn forget_work(&mut self) {
        self.times.died_at = Some(Instant::now());
        self.pulls_in_flight.clear();
        self.trials.clear();
        self.quirks.forget_work();
        self.requests.pending.clear();
        self.progress.clear();
        self.diagnostics.forgive();
    }

    fn log(&mut self, level: i32, text: String) {
        push_ring(&mut self.logs, LOG_RING, (level, bounded_text(&text)));
    }

    fn show(&mut self, level: i32, text: &str) {
        push_ring(&mut self.shown, SHOW_RING, (level, bounded_text(text)));
    }

    /// `diagnostics` of `path` with UTF-16 positions, converted through the text the
    /// server has (an open document's, else the file's on disk) when it counts
    /// otherwise.
    fn in_utf16(&self, path: &Path, mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
        if self.encoding == encoding::Encoding::Utf16 || diagnostics.is_empty() {
            return diagnostics;
        }
        let text = match self.docs.get(path) {
            Some(doc) => std::borrow::Cow::Borrowed(doc.text.as_str()),
            None => match crate::regular::read_to_string(path) {
                Ok(text) => std::borrow::Cow::Owned(text),
                // Nothing to measure against: the columns stay as the server sent them.
                Err(_) => return diagnostics,
            },
        };
        encoding::to_utf16(&mut diagnostics, &text, self.encoding);
        diagnostics
    }
}

/// `text`, cut to [`MESSAGE_TEXT_MAX`] bytes at a character boundary, with `…`.
fn bounded_text(text: &str) -> String {
    if text.len() <= MESSAGE_TEXT_MAX {
        return text.to_string();
    }
    let mut cut = MESSAGE_TEXT_MAX;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

fn push_ring<T>(ring: &mut VecDeque<T>, cap: usize, item: T) {
    if ring.len() == cap {
        ring.pop_front();
    }
    ring.push_back(item);
}

/// Whether the file at `path` holds `text`: a server that reads a closed file from
/// the disk then sees the text lspgate shows it. Read, not told by the caller: what
/// counts is what the server will read at the close, and the one file just written
/// is read back in microseconds.
fn disk_holds(path: &Path, text: &str) -> bool {
    crate::regular::read(path).is_ok_and(|on_disk| on_disk == text.as_bytes())
}
