//! The LSP client: a [`Pool`] of running language servers, each a [`Server`] with
//! its documents, the diagnostics it published or answered, and its progress.
//!
//! The pool owns every server's state and is driven by one thread: [`Pool::pump`]
//! takes the next message from any server, answers the server's requests at once,
//! and records what it said. Waiting (in `wait`) is pumping until a condition over
//! this state holds or a deadline passes, so nothing here blocks without a bound.
//! The pool does not care who started its servers: a one-shot run and the daemon
//! drive it the same way.

mod cache;
pub mod encoding;
pub mod restart;
pub mod transport;
pub mod tsserver;
pub mod uri;

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use lsp_server::{Message, Notification, Request, RequestId, Response};
use lsp_types::Diagnostic;
use serde_json::{Value, json};

use crate::servers::ServerSpec;
use transport::{Incoming, Transport};

/// Log and show messages kept per server.
const LOG_RING: usize = 100;
const SHOW_RING: usize = 50;
/// The longest text kept of one log or show message: the rings bound how many are
/// kept, this how large each is, so that a server logging 50 MiB lines cannot make
/// the rings (which live as long as the daemon) hold gigabytes.
const MESSAGE_TEXT_MAX: usize = 8 * 1024;

/// The name prefix of a server [`Pool::stop`] retired; no spec name starts with it.
const RETIRED: &str = "\u{0}retired:";

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// `initialize` sent, no answer yet.
    Initializing,
    Ready,
    /// Exited, crashed or failed to initialise; the reason is for the report.
    Dead(String),
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
}

/// The last diagnostics a server pushed for a file.
#[derive(Debug, Clone)]
pub struct Published {
    pub diagnostics: Vec<Diagnostic>,
    pub version: Option<i32>,
    /// The pool clock when it arrived.
    pub seq: u64,
    pub at: Instant,
}

/// The last answer to a `textDocument/diagnostic` pull for a file.
#[derive(Debug, Clone)]
pub struct Pulled {
    pub diagnostics: Vec<Diagnostic>,
    /// The pool clock when the request was sent: the answer covers every change
    /// sent before it.
    pub sent_seq: u64,
}

#[derive(Debug, Clone, Default)]
pub struct FileDiagnostics {
    pub pushed: Option<Published>,
    pub pulled: Option<Pulled>,
}

impl FileDiagnostics {
    /// The pool clock of the last word on the file, push or pull.
    pub fn received(&self) -> u64 {
        let pushed = self.pushed.as_ref().map_or(0, |p| p.seq);
        let pulled = self.pulled.as_ref().map_or(0, |p| p.sent_seq);
        pushed.max(pulled)
    }

    /// What the server says about the file now: its pull answer and its pushes
    /// together (rust-analyzer answers pulls with its own analysis and still pushes
    /// cargo check results), exact duplicates removed.
    pub fn current(&self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = Vec::new();
        let parts = [
            self.pulled.as_ref().map(|p| &p.diagnostics),
            self.pushed.as_ref().map(|p| &p.diagnostics),
        ];
        for d in parts.into_iter().flatten().flatten() {
            if !out.contains(d) {
                out.push(d.clone());
            }
        }
        out
    }
}

/// A file's last state in clangd's `textDocument/clangd.fileStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStatus {
    /// The pool clock when it arrived.
    pub seq: u64,
    pub idle: bool,
}

pub use crate::model::progress::Progress;

/// What a request we sent was for, so its answer lands in the right place.
#[derive(Debug, Clone)]
enum Pending {
    Initialize,
    Pull {
        path: PathBuf,
        sent_seq: u64,
    },
    /// One of the three requests of a pull through tsserver ([`tsserver::KINDS`]).
    TsserverPull {
        path: PathBuf,
        sent_seq: u64,
        slot: usize,
    },
    Shutdown,
}

/// One running language server for one root.
pub struct Server {
    pub name: String,
    pub spec: ServerSpec,
    pub root: PathBuf,
    pub state: ServerState,
    transport: Transport,
    next_id: i32,
    pending: HashMap<RequestId, Pending>,
    /// Notifications sent before `initialize` was answered, held back until then.
    held: Vec<Message>,
    /// Pull diagnostics: offered statically or registered dynamically
    /// (pyright registers `textDocument/diagnostic` right after `initialized`, and
    /// again with a new id once it has read its configuration, unregistering the
    /// first: so registrations are tracked by id).
    pub pull: bool,
    static_pull: bool,
    /// Pulls go to tsserver through typescript-language-server (see
    /// [`tsserver`]); the answers of pulls under way, by file.
    tsserver_pull: bool,
    tsserver_parts: HashMap<PathBuf, tsserver::Parts>,
    /// Dynamic registrations in force: id → method.
    registrations: HashMap<String, String>,
    pub docs: HashMap<PathBuf, Document>,
    pub diagnostics: HashMap<PathBuf, FileDiagnostics>,
    /// Work-done progress begun and not ended, by token.
    pub progress: HashMap<String, Progress>,
    /// rust-analyzer's `experimental/serverStatus`: false while it is indexing.
    pub quiescent: Option<bool>,
    pub last_message: Instant,
    pub started: Instant,
    /// When `initialize` was answered.
    pub ready_at: Option<Instant>,
    /// Pool clock of the last `workspace/diagnostic/refresh`: pulls sent before it
    /// are out of date.
    pub refresh_seq: u64,
    /// Files with a pull request in flight.
    pub pulls_in_flight: HashSet<PathBuf>,
    /// The highest version seen in a publish for a file; a version from the future
    /// is the server's bug, not ours to wait for.
    pub logs: VecDeque<(i32, String)>,
    pub shown: VecDeque<(i32, String)>,
    /// clangd's `textDocument/clangd.fileStatus`: the last state of each open file.
    /// Any state but "idle" means work queued or under way; "idle" follows every
    /// publish, but also comes between the steps of one rebuild (see `wait`).
    pub status: HashMap<PathBuf, FileStatus>,
    /// Pool clock of the last change to what the server sees made outside a run's
    /// own edit ([`Pool::mark_changed`]): diagnostics received before it were
    /// computed against other files than the ones it has now, whatever their own
    /// text. (After a run's own edit the run waited for the files it can break.)
    pub content_changed_at: u64,
    /// The unit of the server's `character` offsets; stored positions are UTF-16.
    pub encoding: encoding::Encoding,
    /// The slowest change-to-publish time seen lately (decays), so that waiting
    /// out a server's silence scales with how slow it is now (a loaded machine).
    pub publish_latency: Duration,
    /// Non-LSP output and unparseable frames seen.
    pub garbage: usize,
    /// Whether the server said it handles `didSave` (statically or by registration).
    pub wants_save: bool,
    /// When it died, for the crash backoff of [`restart`].
    pub died_at: Option<Instant>,
    /// A server that analyses its whole workspace (`WaitProfile::workspace_analysis`)
    /// answers every change it was told of by republishing the file: the files it
    /// still owes a publish, with the pool clock of the change. Until they come it is
    /// not settled, however quiet: pyright says nothing for 300 ms or more after a
    /// change (its scheduling), and nothing while one file's check runs for seconds.
    pub owed: HashMap<PathBuf, u64>,
}

impl Server {
    fn next_request_id(&mut self) -> RequestId {
        self.next_id += 1;
        RequestId::from(self.next_id)
    }

    fn send(&mut self, msg: Message) {
        if self.state == ServerState::Initializing
            && let Message::Notification(_) = msg
        {
            self.held.push(msg);
            return;
        }
        if matches!(self.state, ServerState::Dead(_)) {
            return;
        }
        self.transport.send(msg);
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(Message::Notification(Notification::new(
            method.to_string(),
            params,
        )));
    }

    fn update_pull(&mut self) {
        self.pull = self.static_pull
            || self
                .registrations
                .values()
                .any(|m| m == "textDocument/diagnostic");
    }

    pub fn pid(&self) -> u32 {
        self.transport.pid()
    }

    /// Whether a server analysing its whole workspace reports on `path`: it has
    /// published the file, or (a new file) another file of its directory. Files its
    /// own configuration excludes (pyright's `include`/`exclude`) it never publishes,
    /// so a change to one is owed nothing.
    fn tracks(&self, path: &Path) -> bool {
        self.diagnostics.contains_key(path)
            || self.docs.contains_key(path)
            || path
                .parent()
                .is_some_and(|dir| self.diagnostics.keys().any(|p| p.parent() == Some(dir)))
    }

    /// True when no progress is under way and the server has been silent for its
    /// quiet period.
    pub fn settled(&self, now: Instant) -> bool {
        self.settled_after(now, self.spec.wait.quiet)
    }

    /// True when no progress is under way, no publish is owed, and the server has
    /// been silent for `quiet`.
    pub fn settled_after(&self, now: Instant, quiet: Duration) -> bool {
        self.progress.is_empty()
            && self.owed.is_empty()
            && self.quiescent != Some(false)
            && self.pulls_in_flight.is_empty()
            && now.duration_since(self.last_message) >= quiet
    }

    /// Whether `path`'s diagnostics were received after the last change of anything
    /// the server sees ([`Server::content_changed_at`]), so that they still hold.
    pub fn diagnostics_hold(&self, path: &Path) -> bool {
        self.content_changed_at == 0
            || self
                .diagnostics
                .get(path)
                .is_some_and(|d| d.received() > self.content_changed_at)
    }

    /// What the server says about `path` now.
    pub fn diagnostics_of(&self, path: &Path) -> Vec<Diagnostic> {
        let Some(held) = self.diagnostics.get(path) else {
            return Vec::new();
        };
        if self.spec.wait.tsserver_pull
            && let (Some(pulled), Some(pushed)) = (&held.pulled, &held.pushed)
        {
            // typescript-language-server: a pull and a push are two routes to the
            // same answer, so the newer counts, not both. A pull sent after the
            // file's last change is the answer for its text; a push arriving after
            // it may come from a check that started before the change.
            let changed = self.docs.get(path).map(|d| d.changed_at);
            let pull_is_current =
                pulled.sent_seq > pushed.seq || changed.is_some_and(|c| pulled.sent_seq > c);
            return if pull_is_current {
                pulled.diagnostics.clone()
            } else {
                pushed.diagnostics.clone()
            };
        }
        held.current()
    }

    pub fn is_dead(&self) -> bool {
        matches!(self.state, ServerState::Dead(_))
    }

    pub fn dead_reason(&self) -> Option<&str> {
        match &self.state {
            ServerState::Dead(r) => Some(r),
            _ => None,
        }
    }

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
        self.state = ServerState::Dead(reason);
        self.died_at = Some(Instant::now());
        self.pulls_in_flight.clear();
        self.tsserver_parts.clear();
        self.pending.clear();
        self.progress.clear();
        self.owed.clear();
    }
}

/// Called with the servers' state after every pump.
pub type Observer = Box<dyn FnMut(&[Server])>;

/// A set of running servers whose messages arrive on one channel.
pub struct Pool {
    pub servers: Vec<Server>,
    tx: Sender<(usize, Incoming)>,
    rx: Receiver<(usize, Incoming)>,
    /// Counts every message sent and received: "after" means a higher clock.
    pub clock: u64,
    /// Called after every pump, to show progress (the stderr status line).
    pub observer: Option<Observer>,
    /// Crashes per server name and root, across restarts (see [`restart`]).
    crashes: HashMap<(String, PathBuf), restart::CrashLog>,
}

impl Default for Pool {
    fn default() -> Self {
        Self::new()
    }
}

impl Pool {
    pub fn new() -> Pool {
        let (tx, rx) = crossbeam_channel::unbounded();
        Pool {
            servers: Vec::new(),
            tx,
            rx,
            clock: 0,
            observer: None,
            crashes: HashMap::new(),
        }
    }

    /// The server for `spec` at `root`, if one is running (or dead) in the pool.
    pub fn find(&self, name: &str, root: &Path) -> Option<usize> {
        self.servers
            .iter()
            .position(|s| s.name == name && s.root == root)
    }

    /// Spawn `spec`'s command (found on PATH as `program`) at `root` and send
    /// `initialize`; the answer arrives through [`Pool::pump`].
    pub fn start(
        &mut self,
        spec: &ServerSpec,
        program: &Path,
        root: &Path,
    ) -> std::io::Result<usize> {
        let index = self.servers.len();
        let transport = Transport::spawn(program, &spec.args, root, index, self.tx.clone())?;
        Ok(self.attach(spec, root, transport))
    }

    /// A server for `spec` at `root` played by the caller through the returned peer
    /// (`initialize` is already on its way to it). Use this for testing.
    pub fn start_in_memory(
        &mut self,
        spec: &ServerSpec,
        root: &Path,
    ) -> (usize, transport::MemoryPeer) {
        let (transport, peer) = Transport::memory(self.servers.len(), self.tx.clone());
        (self.attach(spec, root, transport), peer)
    }

    /// Add a server over `transport` and send `initialize`.
    fn attach(&mut self, spec: &ServerSpec, root: &Path, transport: Transport) -> usize {
        let index = self.servers.len();
        let now = Instant::now();
        let mut server = Server {
            name: spec.name.clone(),
            spec: spec.clone(),
            root: root.to_path_buf(),
            state: ServerState::Initializing,
            transport,
            next_id: 0,
            pending: HashMap::new(),
            held: Vec::new(),
            pull: false,
            static_pull: false,
            tsserver_pull: false,
            tsserver_parts: HashMap::new(),
            registrations: HashMap::new(),
            docs: HashMap::new(),
            diagnostics: HashMap::new(),
            progress: HashMap::new(),
            quiescent: None,
            last_message: now,
            started: now,
            ready_at: None,
            refresh_seq: 0,
            pulls_in_flight: HashSet::new(),
            logs: VecDeque::new(),
            shown: VecDeque::new(),
            status: HashMap::new(),
            content_changed_at: 0,
            publish_latency: Duration::ZERO,
            encoding: encoding::Encoding::Utf16,
            garbage: 0,
            wants_save: true,
            died_at: None,
            owed: HashMap::new(),
        };
        let id = server.next_request_id();
        server.pending.insert(id.clone(), Pending::Initialize);
        let params = initialize_params(spec, root);
        server.transport.send(Message::Request(Request::new(
            id,
            "initialize".into(),
            params,
        )));
        self.servers.push(server);
        self.clock += 1;
        index
    }

    /// Handle the next incoming event, waiting until `until` at most. Returns false
    /// when the deadline passed with nothing to handle.
    pub fn pump(&mut self, until: Instant) -> bool {
        let timeout = until.saturating_duration_since(Instant::now());
        let handled = self.pump_inner(timeout);
        if let Some(observe) = &mut self.observer {
            observe(&self.servers);
        }
        handled
    }

    fn pump_inner(&mut self, timeout: Duration) -> bool {
        match self.rx.recv_timeout(timeout) {
            Ok((index, incoming)) => {
                self.handle(index, incoming);
                // Drain whatever else is already queued without waiting.
                while let Ok((index, incoming)) = self.rx.try_recv() {
                    self.handle(index, incoming);
                }
                true
            }
            Err(RecvTimeoutError::Timeout) => false,
            // The pool holds a sender, so the channel cannot disconnect.
            Err(RecvTimeoutError::Disconnected) => false,
        }
    }

    fn handle(&mut self, index: usize, incoming: Incoming) {
        self.clock += 1;
        let clock = self.clock;
        let Some(server) = self.servers.get_mut(index) else {
            return;
        };
        server.last_message = Instant::now();
        match incoming {
            Incoming::Closed => {
                let reason = if server.state == ServerState::Initializing {
                    "exited during initialize"
                } else {
                    "exited"
                };
                server.die(reason.to_string());
            }
            Incoming::Garbage(text) => {
                server.garbage += 1;
                push_ring(&mut server.logs, LOG_RING, (1, format!("lspgate: {text}")));
            }
            Incoming::Message(Message::Request(req)) => handle_request(server, req, clock),
            Incoming::Message(Message::Response(resp)) => handle_response(server, resp, clock),
            Incoming::Message(Message::Notification(n)) => handle_notification(server, n, clock),
        }
    }

    /// Open `path` with `text`, or change it to `text` if it is open with other text.
    /// Returns the version the server now has.
    pub fn open_or_change(&mut self, index: usize, path: &Path, text: &str) -> i32 {
        self.clock += 1;
        let clock = self.clock;
        let server = &mut self.servers[index];
        if server.spec.wait.workspace_analysis {
            server.owed.insert(path.to_path_buf(), clock);
        }
        let uri = uri::from_path(path);
        match server.docs.get_mut(path) {
            Some(doc) => {
                doc.version += 1;
                doc.text = text.to_string();
                doc.changed_at = clock;
                doc.changed_instant = Instant::now();
                let version = doc.version;
                server.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": { "uri": uri, "version": version },
                        "contentChanges": [{ "text": text }],
                    }),
                );
                version
            }
            None => {
                let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
                let language_id = server.spec.language_id(ext).to_string();
                server.docs.insert(
                    path.to_path_buf(),
                    Document {
                        version: 1,
                        text: text.to_string(),
                        changed_at: clock,
                        changed_instant: Instant::now(),
                    },
                );
                server.notify(
                    "textDocument/didOpen",
                    json!({ "textDocument": {
                        "uri": uri, "languageId": language_id, "version": 1, "text": text,
                    }}),
                );
                1
            }
        }
    }

    /// Record that what server `index` sees changed outside a run's own edit (files
    /// re-sent after an editor changed them, a text put back after a dry run, a
    /// before text it did not hold): the diagnostics it holds may be out of date.
    pub fn mark_changed(&mut self, index: usize) {
        self.clock += 1;
        if let Some(server) = self.servers.get_mut(index) {
            server.content_changed_at = self.clock;
        }
    }

    /// Stop a server that is of no more use (it never answered `initialize`): kill it
    /// and record why.
    pub fn kill(&mut self, index: usize, reason: String) {
        let server = &mut self.servers[index];
        server.transport.finish(Instant::now());
        server.state = ServerState::Dead(reason);
        server.died_at = Some(Instant::now());
        server.pulls_in_flight.clear();
        server.tsserver_parts.clear();
        server.pending.clear();
        server.progress.clear();
        server.owed.clear();
    }

    /// Tell the server the file was written to disk.
    pub fn save(&mut self, index: usize, path: &Path) {
        self.clock += 1;
        let server = &mut self.servers[index];
        if server.wants_save && server.docs.contains_key(path) {
            let text = server
                .docs
                .get(path)
                .map(|d| d.text.clone())
                .unwrap_or_default();
            server.notify(
                "textDocument/didSave",
                json!({ "textDocument": { "uri": uri::from_path(path) }, "text": text }),
            );
        }
    }

    pub fn close(&mut self, index: usize, path: &Path) {
        self.clock += 1;
        let server = &mut self.servers[index];
        if server.docs.remove(path).is_some() {
            server.notify(
                "textDocument/didClose",
                json!({ "textDocument": { "uri": uri::from_path(path) } }),
            );
        }
        // A server analysing its whole workspace goes on reporting a closed file
        // (and publishes an empty list for a deleted one): what it said stands.
        if !server.spec.wait.workspace_analysis {
            server.diagnostics.remove(path);
        }
        server.status.remove(path);
    }

    /// `workspace/didChangeWatchedFiles`; `kind` is 1 created, 2 changed, 3 deleted.
    pub fn watched(&mut self, index: usize, changes: &[(PathBuf, u8)]) {
        if changes.is_empty() {
            return;
        }
        self.clock += 1;
        let clock = self.clock;
        let server = &mut self.servers[index];
        if server.spec.wait.workspace_analysis {
            for (path, _) in changes {
                if server.tracks(path) {
                    server.owed.insert(path.clone(), clock);
                }
            }
        }
        let list: Vec<Value> = changes
            .iter()
            .map(|(p, kind)| json!({ "uri": uri::from_path(p), "type": kind }))
            .collect();
        self.servers[index].notify(
            "workspace/didChangeWatchedFiles",
            json!({ "changes": list }),
        );
    }

    /// Ask for `path`'s diagnostics (`textDocument/diagnostic`, or tsserver's).
    pub fn pull(&mut self, index: usize, path: &Path) {
        self.clock += 1;
        let sent_seq = self.clock;
        let server = &mut self.servers[index];
        if server.is_dead() || server.pulls_in_flight.contains(path) {
            return;
        }
        if server.tsserver_pull {
            for (slot, kind) in tsserver::KINDS.iter().enumerate() {
                let id = server.next_request_id();
                server.pending.insert(
                    id.clone(),
                    Pending::TsserverPull {
                        path: path.to_path_buf(),
                        sent_seq,
                        slot,
                    },
                );
                server.send(Message::Request(Request::new(
                    id,
                    "workspace/executeCommand".into(),
                    tsserver::request(kind, path),
                )));
            }
            server
                .tsserver_parts
                .insert(path.to_path_buf(), tsserver::Parts::new(sent_seq));
            server.pulls_in_flight.insert(path.to_path_buf());
            return;
        }
        let id = server.next_request_id();
        server.pending.insert(
            id.clone(),
            Pending::Pull {
                path: path.to_path_buf(),
                sent_seq,
            },
        );
        server.pulls_in_flight.insert(path.to_path_buf());
        server.send(Message::Request(Request::new(
            id,
            "textDocument/diagnostic".into(),
            json!({ "textDocument": { "uri": uri::from_path(path) } }),
        )));
    }

    /// The channel every server's messages arrive on, for a caller that waits on it
    /// together with other channels (the daemon's main loop) and then calls
    /// [`Pool::pump`]. Receiving from it directly would lose the message.
    pub fn events(&self) -> &Receiver<(usize, Incoming)> {
        &self.rx
    }

    /// Stop one server (`shutdown`, then `exit`, bounded by `grace`, then kill) and
    /// retire it: its slot stays, since messages are tagged by index, but its name is
    /// changed so that [`Pool::find`] no longer returns it and the next run starts a
    /// fresh one. Also the way to retire a server that died by itself.
    pub fn stop(&mut self, index: usize, grace: Duration) {
        if index >= self.servers.len() {
            return;
        }
        self.shutdown(&[index], grace, "stopped");
        let server = &mut self.servers[index];
        if !server.name.starts_with(RETIRED) {
            server.name = format!("{RETIRED}{}", server.name);
        }
        server.docs.clear();
        server.diagnostics.clear();
    }

    /// Whether [`Pool::stop`] retired this server.
    pub fn is_retired(&self, index: usize) -> bool {
        self.servers
            .get(index)
            .is_some_and(|s| s.name.starts_with(RETIRED))
    }

    /// `shutdown`, then `exit`, each bounded; whatever is still running at
    /// `deadline` is killed. No server outlives this call.
    pub fn shutdown_all(&mut self, grace: Duration) {
        let all: Vec<usize> = (0..self.servers.len()).collect();
        self.shutdown(&all, grace, "shut down");
    }

    /// `shutdown` to each of `indices` that is ready, answers awaited until
    /// `grace` runs out, then `exit`, then the processes reaped (killed if need be).
    fn shutdown(&mut self, indices: &[usize], grace: Duration, state: &str) {
        let deadline = Instant::now() + grace;
        for &i in indices {
            let server = &mut self.servers[i];
            if server.state == ServerState::Ready {
                let id = server.next_request_id();
                server.pending.insert(id.clone(), Pending::Shutdown);
                // No params at all: tsgo rejects `"params": null` on shutdown.
                server.transport.send(Message::Request(Request {
                    id,
                    method: "shutdown".into(),
                    params: Value::Null,
                }));
            }
        }
        let awaiting = |pool: &Pool| {
            indices.iter().any(|&i| {
                let s = &pool.servers[i];
                !s.is_dead() && s.pending.values().any(|p| matches!(p, Pending::Shutdown))
            })
        };
        while awaiting(self) && Instant::now() < deadline {
            if !self.pump(deadline) {
                break;
            }
        }
        for &i in indices {
            let exit = Notification::new("exit".into(), Value::Null);
            self.servers[i].transport.send(Message::Notification(exit));
        }
        for &i in indices {
            let server = &mut self.servers[i];
            server
                .transport
                .finish(deadline.max(Instant::now() + Duration::from_millis(200)));
            if !server.is_dead() {
                server.state = ServerState::Dead(state.into());
            }
        }
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

fn handle_response(server: &mut Server, resp: Response, _clock: u64) {
    let Some(pending) = server.pending.remove(&resp.id) else {
        return;
    };
    match pending {
        Pending::Initialize => match resp.response_result {
            Ok(result) => {
                let caps = result.get("capabilities").cloned().unwrap_or(Value::Null);
                server.encoding = encoding::Encoding::chosen(&result);
                if caps.get("diagnosticProvider").is_some_and(|v| !v.is_null()) {
                    server.static_pull = true;
                    server.pull = true;
                } else if server.spec.wait.tsserver_pull && tsserver::offered(&caps) {
                    server.tsserver_pull = true;
                    server.static_pull = true;
                    server.pull = true;
                }
                server.state = ServerState::Ready;
                server.ready_at = Some(Instant::now());
                server
                    .transport
                    .send(Message::Notification(Notification::new(
                        "initialized".into(),
                        json!({}),
                    )));
                for msg in std::mem::take(&mut server.held) {
                    server.transport.send(msg);
                }
            }
            Err(e) => server.die(format!("initialize failed: {}", e.message)),
        },
        Pending::Pull { path, sent_seq } => {
            server.pulls_in_flight.remove(&path);
            match resp.response_result {
                Ok(result) => {
                    // A full report has `items`; an "unchanged" one (we never send a
                    // previousResultId, but be safe) keeps what we had.
                    if let Some(items) = result.get("items") {
                        let diagnostics = in_utf16(server, &path, parse_diagnostics(items));
                        server.diagnostics.entry(path).or_default().pulled = Some(Pulled {
                            diagnostics,
                            sent_seq,
                        });
                    } else if let Some(prev) = server
                        .diagnostics
                        .get_mut(&path)
                        .and_then(|f| f.pulled.as_mut())
                    {
                        prev.sent_seq = sent_seq;
                    }
                }
                Err(e) => {
                    // ServerCancelled / ContentModified ask for a retry; the wait
                    // re-pulls a file whose pull is older than its change.
                    push_ring(
                        &mut server.logs,
                        LOG_RING,
                        (
                            2,
                            format!("lspgate: pull of {} failed: {}", path.display(), e.message),
                        ),
                    );
                    if e.code != -32802 && e.code != -32801 {
                        // A hard error: record an empty answer so the wait ends;
                        // the server cannot tell us more about this file.
                        server.diagnostics.entry(path).or_default().pulled = Some(Pulled {
                            diagnostics: Vec::new(),
                            sent_seq,
                        });
                    }
                }
            }
        }
        Pending::TsserverPull {
            path,
            sent_seq,
            slot,
        } => {
            let answer = match resp.response_result {
                Ok(result) => tsserver::diagnostics(&result),
                Err(e) => Err(e.message),
            };
            match answer {
                Ok(diagnostics) => {
                    let Some(parts) = server.tsserver_parts.get_mut(&path) else {
                        return;
                    };
                    if parts.sent_seq != sent_seq {
                        return;
                    }
                    if let Some(all) = parts.add(slot, diagnostics) {
                        server.tsserver_parts.remove(&path);
                        server.pulls_in_flight.remove(&path);
                        server.diagnostics.entry(path).or_default().pulled = Some(Pulled {
                            diagnostics: all,
                            sent_seq,
                        });
                    }
                }
                Err(why) => {
                    // The route does not work here (an older server, a file outside
                    // every project): wait for pushes, as without it.
                    push_ring(
                        &mut server.logs,
                        LOG_RING,
                        (
                            2,
                            format!(
                                "lspgate: pull of {} through tsserver failed, waiting for pushes instead: {why}",
                                path.display()
                            ),
                        ),
                    );
                    server.tsserver_pull = false;
                    server.static_pull = false;
                    server.update_pull();
                    server.tsserver_parts.clear();
                    server.pulls_in_flight.clear();
                }
            }
        }
        Pending::Shutdown => {}
    }
}

/// `diagnostics` of `path` with UTF-16 positions, converted through the text the
/// server has (an open document's, else the file's on disk) when it counts otherwise.
fn in_utf16(server: &Server, path: &Path, mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    if server.encoding == encoding::Encoding::Utf16 || diagnostics.is_empty() {
        return diagnostics;
    }
    let text = match server.docs.get(path) {
        Some(doc) => std::borrow::Cow::Borrowed(doc.text.as_str()),
        None => match std::fs::read_to_string(path) {
            Ok(text) => std::borrow::Cow::Owned(text),
            // Nothing to measure against: the columns stay as the server sent them.
            Err(_) => return diagnostics,
        },
    };
    encoding::to_utf16(&mut diagnostics, &text, server.encoding);
    diagnostics
}

fn parse_diagnostics(items: &Value) -> Vec<Diagnostic> {
    // One malformed entry must not cost the others.
    items
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| serde_json::from_value(d.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn handle_notification(server: &mut Server, n: Notification, clock: u64) {
    match n.method.as_str() {
        "textDocument/publishDiagnostics" => {
            let Some(uri) = n.params.get("uri").and_then(|u| u.as_str()) else {
                return;
            };
            let Some(path) = lsp_types::Url::parse(uri)
                .ok()
                .and_then(|u| uri::to_path(&u))
            else {
                return;
            };
            let version = n
                .params
                .get("version")
                .and_then(|v| v.as_i64())
                .map(|v| v as i32);
            let diagnostics =
                parse_diagnostics(n.params.get("diagnostics").unwrap_or(&Value::Null));
            let diagnostics = in_utf16(server, &path, diagnostics);
            if server.owed.get(&path).is_some_and(|&since| since < clock) {
                server.owed.remove(&path);
            }
            server.diagnostics.entry(path).or_default().pushed = Some(Published {
                diagnostics,
                version,
                seq: clock,
                at: Instant::now(),
            });
        }
        "$/progress" => {
            let token = token_key(n.params.get("token"));
            let kind = n
                .params
                .pointer("/value/kind")
                .and_then(|k| k.as_str())
                .unwrap_or("");
            match kind {
                "begin" => {
                    let text = |k: &str| {
                        n.params
                            .pointer(&format!("/value/{k}"))
                            .and_then(|t| t.as_str())
                            .map(str::to_string)
                    };
                    let progress = Progress {
                        title: text("title").unwrap_or_default(),
                        message: text("message"),
                        percentage: n
                            .params
                            .pointer("/value/percentage")
                            .and_then(|p| p.as_u64())
                            .map(|p| p as u32),
                    };
                    server.progress.insert(token, progress);
                }
                "report" => {
                    if let Some(p) = server.progress.get_mut(&token) {
                        if let Some(m) = n.params.pointer("/value/message").and_then(|t| t.as_str())
                        {
                            p.message = Some(m.to_string());
                        }
                        if let Some(pc) = n
                            .params
                            .pointer("/value/percentage")
                            .and_then(|p| p.as_u64())
                        {
                            p.percentage = Some(pc as u32);
                        }
                    }
                }
                "end" => {
                    server.progress.remove(&token);
                }
                _ => {}
            }
        }
        "window/logMessage" | "window/showMessage" => {
            let level = n.params.get("type").and_then(|t| t.as_i64()).unwrap_or(4) as i32;
            let text = bounded_text(
                n.params
                    .get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or(""),
            );
            if n.method == "window/logMessage" {
                push_ring(&mut server.logs, LOG_RING, (level, text));
            } else {
                push_ring(&mut server.shown, SHOW_RING, (level, text));
            }
        }
        "textDocument/clangd.fileStatus" => {
            let idle = n.params.get("state").and_then(|s| s.as_str()) == Some("idle");
            let path = n
                .params
                .get("uri")
                .and_then(|u| u.as_str())
                .and_then(|u| lsp_types::Url::parse(u).ok())
                .and_then(|u| uri::to_path(&u));
            if let Some(path) = path {
                server.status.insert(path, FileStatus { seq: clock, idle });
            }
        }
        "experimental/serverStatus" => {
            server.quiescent = n.params.get("quiescent").and_then(|q| q.as_bool());
        }
        _ => {}
    }
}

fn token_key(token: Option<&Value>) -> String {
    match token {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

/// Answer a request from the server. Every request gets an answer; one we do not
/// know gets MethodNotFound, never silence.
fn handle_request(server: &mut Server, req: Request, clock: u64) {
    let result: Result<Value, (i32, String)> = match req.method.as_str() {
        "workspace/configuration" => {
            // Exactly one item per requested section.
            let items = req.params.get("items").and_then(|i| i.as_array()).cloned();
            let answers: Vec<Value> = items
                .unwrap_or_default()
                .iter()
                .map(|item| {
                    server
                        .spec
                        .setting(item.get("section").and_then(|s| s.as_str()))
                })
                .collect();
            Ok(Value::Array(answers))
        }
        "client/registerCapability" => {
            for reg in req
                .params
                .get("registrations")
                .and_then(|r| r.as_array())
                .into_iter()
                .flatten()
            {
                let id = reg
                    .get("id")
                    .and_then(|i| i.as_str())
                    .unwrap_or("")
                    .to_string();
                let method = reg
                    .get("method")
                    .and_then(|m| m.as_str())
                    .unwrap_or("")
                    .to_string();
                if method == "textDocument/didSave" {
                    server.wants_save = true;
                }
                server.registrations.insert(id, method);
            }
            server.update_pull();
            // A null success: servers built on vscode-languageserver-node treat an
            // error here as fatal.
            Ok(Value::Null)
        }
        "client/unregisterCapability" => {
            let list = req
                .params
                .get("unregisterations")
                .or_else(|| req.params.get("unregistrations"));
            for reg in list.and_then(|r| r.as_array()).into_iter().flatten() {
                if let Some(id) = reg.get("id").and_then(|i| i.as_str()) {
                    server.registrations.remove(id);
                }
            }
            server.update_pull();
            Ok(Value::Null)
        }
        "window/workDoneProgress/create" => {
            // pyright creates the token of a re-analysis in the same burst as its
            // first publishes, but begins it only after the answer has come back
            // through its event loop, one or more analysis slices (each up to
            // seconds) later: the analysis is under way from the create on.
            if server.spec.wait.workspace_analysis {
                let token = token_key(req.params.get("token"));
                server.progress.entry(token).or_default();
            }
            Ok(Value::Null)
        }
        "workspace/workspaceFolders" => Ok(json!([{
            "uri": uri::from_path(&server.root),
            "name": server.root.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default(),
        }])),
        "workspace/diagnostic/refresh" => {
            // Means: pull again. The wait re-pulls files pulled before this clock.
            server.refresh_seq = clock;
            Ok(Value::Null)
        }
        "window/showMessageRequest" => {
            if let Some(m) = req.params.get("message").and_then(|m| m.as_str()) {
                let level = req.params.get("type").and_then(|t| t.as_i64()).unwrap_or(3) as i32;
                push_ring(&mut server.shown, SHOW_RING, (level, bounded_text(m)));
            }
            Ok(Value::Null)
        }
        "workspace/applyEdit" => {
            Ok(json!({ "applied": false, "failureReason": "lspgate applies no server edits" }))
        }
        "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/inlineValue/refresh"
        | "workspace/codeLens/refresh" => Ok(Value::Null),
        _ => Err((-32601, format!("unhandled method {}", req.method))),
    };
    let response = match result {
        Ok(v) => Response::new_ok(req.id, v),
        Err((code, message)) => Response::new_err(req.id, code, message),
    };
    // Requests are answered even before `initialize` returns.
    server.transport.send(Message::Response(response));
}

/// The `initialize` parameters: honest client capabilities.
fn initialize_params(spec: &ServerSpec, root: &Path) -> Value {
    let root_uri = uri::from_path(root);
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut params = json!({
        "processId": std::process::id(),
        "clientInfo": { "name": "lspgate", "version": env!("CARGO_PKG_VERSION") },
        "rootUri": root_uri,
        "rootPath": root.to_string_lossy(),
        "workspaceFolders": [{ "uri": root_uri, "name": name }],
        "capabilities": {
            // UTF-8 first: servers that count in bytes need not convert; whatever
            // they choose is converted back to UTF-16 on arrival (encoding.rs).
            "general": { "positionEncodings": ["utf-8", "utf-16"] },
            // clangd 14 predates positionEncodings and reads its own extension.
            "offsetEncoding": ["utf-8", "utf-16"],
            "window": { "workDoneProgress": true, "showMessage": {} },
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "didChangeWatchedFiles": { "dynamicRegistration": true, "relativePatternSupport": true },
                "didChangeConfiguration": { "dynamicRegistration": true },
                "diagnostics": { "refreshSupport": true },
                "workspaceEdit": { "documentChanges": true },
            },
            "textDocument": {
                "synchronization": { "dynamicRegistration": true, "didSave": true, "willSave": false },
                "publishDiagnostics": {
                    "relatedInformation": true,
                    "versionSupport": true,
                    "codeDescriptionSupport": true,
                    "dataSupport": true,
                    "tagSupport": { "valueSet": [1, 2] },
                },
                "diagnostic": { "dynamicRegistration": true, "relatedDocumentSupport": false },
            },
            "experimental": { "serverStatusNotification": true },
        },
    });
    if spec.wait.workspace_analysis
        && let Some(text_document) = params
            .pointer_mut("/capabilities/textDocument")
            .and_then(Value::as_object_mut)
    {
        // pyright stops publishing once pulls are offered; in workspace mode its
        // publishes are the whole point.
        text_document.remove("diagnostic");
    }
    if let Some(opts) = &spec.initialization_options {
        params["initializationOptions"] = opts.clone();
    }
    params
}

/// What a daemon streams to a CLI drawing the line: the live servers and the first
/// progress of each, as [`describe`] takes them.
pub fn busy(servers: &[Server]) -> Vec<crate::model::progress::Busy> {
    servers
        .iter()
        .filter(|s| !s.is_dead())
        .map(|s| crate::model::progress::Busy {
            server: s.name.clone(),
            progress: s.progress.values().next().cloned(),
        })
        .collect()
}
