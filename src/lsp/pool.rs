//! The pool: every running server of a process, named by [`ServerId`], their messages
//! on one channel, and the clock that orders everything sent and received.
//!
//! The pool owns every server's state and is driven by one thread: [`Pool::pump`]
//! takes the next message from any server, answers the server's requests at once,
//! and records what it said. Every change to a server goes through a method here,
//! which ticks the clock first, so "after" is a comparison of two clock values. The
//! pool does not care who started its servers: a one-shot run and the daemon drive it
//! the same way, and a test plays a server in memory ([`Pool::start_in_memory`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use lsp_types::FileChangeType;

use super::restart::{CrashLog, Crashes, NotRestarted};
use super::server::Server;
use super::transport::{Incoming, MemoryPeer, Transport};
use crate::servers::ServerSpec;

/// A server of a pool. Ids are never reused: a server that is stopped or restarted
/// keeps its id, retired, and its successor gets a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerId(usize);

#[cfg(test)]
impl ServerId {
    /// The id the pool gives its `i`th server.
    pub(crate) fn nth(i: usize) -> ServerId {
        ServerId(i)
    }
}

/// Called with the servers' state after every pump.
pub type Observer = Box<dyn FnMut(&[Server])>;

/// A set of running servers whose messages arrive on one channel.
pub struct Pool {
    /// By [`ServerId`]: the transports tag each message with its server's index.
    servers: Vec<Server>,
    tx: Sender<(usize, Incoming)>,
    rx: Receiver<(usize, Incoming)>,
    /// Counts every message sent and received: "after" means a higher clock.
    clock: u64,
    /// Called after every pump, to show progress (the stderr status line).
    pub observer: Option<Observer>,
    /// Crashes per server name and root, across restarts (see `restart`).
    crashes: Crashes,
}

impl Default for Pool {
    fn default() -> Self {
        Self::new()
    }
}

/// Servers in and out.
impl Pool {
    pub fn new() -> Pool {
        let (tx, rx) = crossbeam_channel::unbounded();
        Pool {
            servers: Vec::new(),
            tx,
            rx,
            clock: 0,
            observer: None,
            crashes: Crashes::default(),
        }
    }

    /// The server named `name` at `root`, if one is running (or dead) in the pool;
    /// retired ones do not count.
    pub fn find(&self, name: &str, root: &Path) -> Option<ServerId> {
        self.ids().into_iter().find(|&id| {
            let s = self.server(id);
            s.name() == name && s.root() == root
        })
    }

    /// Every server not retired, oldest first.
    pub fn ids(&self) -> Vec<ServerId> {
        (0..self.servers.len())
            .map(ServerId)
            .filter(|&id| !self.server(id).is_retired())
            .collect()
    }

    /// The server `id`. Ids come from this pool only, so it exists.
    pub fn server(&self, id: ServerId) -> &Server {
        &self.servers[id.0]
    }

    /// The pool clock now.
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Advance the clock and return it: the trigger of something about to be asked
    /// without a change being sent (a pull of a file the server does not have open),
    /// so that any answer to a request sent from now on counts as after it.
    pub fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Spawn `spec`'s command (found on PATH as `program`) at `root` and send
    /// `initialize`; the answer arrives through [`Pool::pump`].
    pub fn start(
        &mut self,
        spec: &ServerSpec,
        program: &Path,
        root: &Path,
    ) -> std::io::Result<ServerId> {
        let index = self.servers.len();
        let launch = crate::servers::launch(spec, program);
        let transport = Transport::spawn(
            program,
            &launch.args,
            &spec.env,
            root,
            index,
            self.tx.clone(),
        )?;
        let id = self.attach(spec, root, transport);
        self.servers[id.0].launched(&launch);
        Ok(id)
    }

    /// A server for `spec` at `root` played by the caller through the returned peer
    /// (`initialize` is already on its way to it). Use this for testing.
    pub fn start_in_memory(&mut self, spec: &ServerSpec, root: &Path) -> (ServerId, MemoryPeer) {
        let (transport, peer) = Transport::memory(self.servers.len(), self.tx.clone());
        (self.attach(spec, root, transport), peer)
    }

    fn attach(&mut self, spec: &ServerSpec, root: &Path, transport: Transport) -> ServerId {
        let id = ServerId(self.servers.len());
        self.servers.push(Server::start(spec, root, transport));
        self.clock += 1;
        id
    }

    /// Stop a server that is of no more use (it never answered `initialize`): kill it
    /// and record why.
    pub fn kill(&mut self, id: ServerId, reason: String) {
        self.servers[id.0].kill(reason);
    }

    /// Stop one server (`shutdown`, then `exit`, bounded by `grace`, then kill) and
    /// retire it: [`Pool::find`] no longer returns it, so the next run starts a fresh
    /// one. Also the way to retire a server that died by itself.
    pub fn stop(&mut self, id: ServerId, grace: Duration) {
        self.shutdown(&[id], grace, "stopped");
        self.servers[id.0].retire();
    }

    pub fn is_retired(&self, id: ServerId) -> bool {
        self.server(id).is_retired()
    }

    /// `shutdown`, then `exit`, each bounded; whatever is still running at the end of
    /// `grace` is killed. No server outlives this call.
    pub fn shutdown_all(&mut self, grace: Duration) {
        let all: Vec<ServerId> = (0..self.servers.len()).map(ServerId).collect();
        self.shutdown(&all, grace, "shut down");
    }

    /// `shutdown` to each of `ids` that is ready, answers awaited until `grace` runs
    /// out, then `exit`, then the processes reaped (killed if need be).
    fn shutdown(&mut self, ids: &[ServerId], grace: Duration, reason: &str) {
        let deadline = Instant::now() + grace;
        for id in ids {
            self.servers[id.0].request_shutdown();
        }
        let awaiting = |pool: &Pool| ids.iter().any(|&id| pool.server(id).awaits_shutdown());
        while awaiting(self) && Instant::now() < deadline {
            if !self.pump(deadline) {
                break;
            }
        }
        for id in ids {
            self.servers[id.0].send_exit();
        }
        for id in ids {
            let at_least = Instant::now() + Duration::from_millis(200);
            self.servers[id.0].finish(deadline.max(at_least), reason);
        }
    }
}

/// Messages in.
impl Pool {
    /// Handle the next incoming event, waiting until `until` at most. Returns false
    /// when the deadline passed with nothing to handle.
    pub fn pump(&mut self, until: Instant) -> bool {
        let handled = self.pump_inner(until);
        if let Some(observe) = &mut self.observer {
            observe(&self.servers);
        }
        handled
    }

    fn pump_inner(&mut self, until: Instant) -> bool {
        let timeout = until.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(timeout) {
            Ok((index, incoming)) => {
                self.handle(index, incoming);
                // Drain whatever else is already queued without waiting, until `until`:
                // a server that sends faster than its messages are handled (a flood)
                // would otherwise hold the caller past its deadline.
                while Instant::now() < until {
                    let Ok((index, incoming)) = self.rx.try_recv() else {
                        break;
                    };
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
        if let Some(server) = self.servers.get_mut(index) {
            server.handle(incoming, self.clock);
        }
    }

    /// The channel every server's messages arrive on, for a caller that waits on it
    /// together with other channels (the daemon's main loop) and then calls
    /// [`Pool::pump`]. Receiving from it directly would lose the message.
    pub fn events(&self) -> &Receiver<(usize, Incoming)> {
        &self.rx
    }
}

/// What the servers are told.
impl Pool {
    /// Open `path` with `text`, or change it to `text` if it is open with other text.
    /// Returns the version the server now has.
    pub fn open_or_change(&mut self, id: ServerId, path: &Path, text: &str) -> i32 {
        self.clock += 1;
        self.servers[id.0].open_or_change(path, text, self.clock)
    }

    /// Tell the server the file was written to disk.
    pub fn save(&mut self, id: ServerId, path: &Path) {
        self.clock += 1;
        self.servers[id.0].save(path, self.clock);
    }

    /// Ask for the project check a save would start (see `Server::run_check`).
    pub fn run_check(&mut self, id: ServerId) {
        self.clock += 1;
        self.servers[id.0].run_check();
    }

    pub fn close(&mut self, id: ServerId, path: &Path) {
        self.clock += 1;
        self.servers[id.0].close(path, self.clock);
    }

    /// `workspace/didChangeWatchedFiles`: files created, changed or deleted on disk.
    pub fn watched(&mut self, id: ServerId, changes: &[(PathBuf, FileChangeType)]) {
        if changes.is_empty() {
            return;
        }
        self.clock += 1;
        self.servers[id.0].watched(changes, self.clock);
    }

    /// Ask for `path`'s diagnostics (`textDocument/diagnostic`, or tsserver's).
    pub fn pull(&mut self, id: ServerId, path: &Path) {
        self.clock += 1;
        self.servers[id.0].pull(path, self.clock);
    }

    /// Server `id` was shown an edit: a pull answer from before no longer holds, even
    /// where every file of the edit was opened rather than changed. An open says
    /// nothing changed to the clock (the server read that text from the disk), but
    /// in a review of a change made behind lspgate's back the server may have read
    /// the old text: TypeScript 7's answers for mobx from before the change, taken as
    /// the answers after it, passed two of its breaks as clean (hook mode, exit 0).
    pub fn saw_edit(&mut self, id: ServerId) {
        self.clock += 1;
        self.servers[id.0].saw_change(self.clock);
    }

    /// [`Pool::pull`] between runs, of a file server `id` may have in no project (see
    /// `Server::try_pull`).
    pub fn try_pull(&mut self, id: ServerId, path: &Path) {
        self.clock += 1;
        self.servers[id.0].try_pull(path, self.clock);
    }

    /// Record that what server `id` sees changed outside a run's own edit (files
    /// re-sent after an editor changed them, a text put back after a dry run, a
    /// before text it did not hold): the diagnostics it holds may be out of date.
    /// Server `id` is shown texts the disk does not have: see `Server::forget_view`.
    pub fn forget_view(&mut self, id: ServerId) {
        self.servers[id.0].forget_view();
    }

    /// Have server `id`'s tsserver reload its projects from the disk; false when it
    /// has none (see `Server::reload_projects`).
    pub fn reload_projects(&mut self, id: ServerId) -> bool {
        self.clock += 1;
        self.servers[id.0].reload_projects(self.clock)
    }

    /// A file of server `id`'s was created or deleted behind lspgate's back: see
    /// `Server::lose_the_disk`.
    pub fn lose_the_disk(&mut self, id: ServerId) {
        self.servers[id.0].lose_the_disk();
    }

    /// Server `id` sees the project as it is on disk, whose files' texts have key
    /// `view`: see `Server::enter_view`.
    pub fn enter_view(&mut self, id: ServerId, view: u64) {
        self.clock += 1;
        self.servers[id.0].enter_view(view, self.clock);
    }

    /// A file server `id` reads from the disk changed and kept its size: clangd
    /// rebuilds every open file sent from now on from scratch (see `Server`).
    pub fn mark_size_kept(&mut self, id: ServerId) {
        self.clock += 1;
        self.servers[id.0].mark_size_kept(self.clock);
    }

    pub fn mark_changed(&mut self, id: ServerId) {
        self.clock += 1;
        self.servers[id.0].mark_changed(self.clock);
    }

    /// Record how long server `id` took from a change to its publish (the wait
    /// measures it), so that waiting out its silence scales with how slow it is now.
    pub fn observe_latency(&mut self, id: ServerId, took: Duration) {
        self.servers[id.0].observe_latency(took);
    }

    /// Drop the diagnostics of `id`'s unopened files that are empty, then keep at
    /// most `cap` of the others, the most recently received (see `cache`). Returns how
    /// many entries were dropped.
    pub fn trim_diagnostics(&mut self, id: ServerId, cap: usize) -> usize {
        self.servers[id.0].trim_diagnostics(cap)
    }

    /// How many files `id` holds diagnostics for that it does not have open: what
    /// [`Pool::trim_diagnostics`] bounds.
    pub fn unopened_diagnostics(&self, id: ServerId) -> usize {
        self.server(id).unopened_diagnostics()
    }
}

/// Crashes and restarts (the policy is `restart`'s).
impl Pool {
    /// Whether server `id` died of a crash: it had answered `initialize`, died by
    /// itself, and was not retired.
    pub fn crashed(&self, id: ServerId) -> bool {
        let server = self.server(id);
        server.is_dead()
            && server.initialized()
            && server.died_at().is_some()
            && !server.is_retired()
    }

    /// The crash history of server `id` (name at root), recording its death first if
    /// it is a crash not yet recorded.
    pub fn crash_log(&mut self, id: ServerId) -> CrashLog {
        self.record_crash(id);
        let server = self.server(id);
        self.crashes.of(server.name(), server.root())
    }

    fn record_crash(&mut self, id: ServerId) {
        if !self.crashed(id) {
            return;
        }
        let server = &self.servers[id.0];
        if let Some(died) = server.died_at() {
            self.crashes.record(server.name(), server.root(), died);
        }
    }

    /// Why the crashed server `id` may not be restarted yet, if it may not.
    pub fn restart_refused(&mut self, id: ServerId) -> Option<NotRestarted> {
        self.record_crash(id);
        let server = self.server(id);
        self.crashes
            .refusal(server.name(), server.root(), Instant::now())
    }

    /// Start the dead server `id` again: the same spec at the same root, under a new
    /// id, its documents opened again with the text it had been shown (the oldest
    /// first, as they were opened), its rings carried over. The dead one is retired.
    /// Returns the new id. Refused while the crash backoff runs, and when the command
    /// cannot be found or started; the dead server then stays as it is.
    pub fn restart(&mut self, id: ServerId) -> Result<ServerId, NotRestarted> {
        if !self.server(id).is_dead() {
            return Ok(id);
        }
        if let Some(refused) = self.restart_refused(id) {
            return Err(refused);
        }
        let server = self.server(id);
        let reason = server.dead_reason().unwrap_or("stopped").to_string();
        let mut docs: Vec<(u64, PathBuf, String)> = server
            .docs()
            .map(|(p, d)| (d.changed_at, p.to_path_buf(), d.text.clone()))
            .collect();
        docs.sort();
        let (logs, shown) = (server.logs().clone(), server.shown().clone());
        // Only once the new one runs: retiring clears the documents.
        let new = self.replace(id)?;
        let why = format!("lspgate: restarted after a crash ({reason})");
        self.servers[new.0].inherit_rings(logs, shown, why);
        // Held until `initialize` is answered, like any notification sent before.
        for (_, path, text) in docs {
            self.open_or_change(new, &path, &text);
        }
        Ok(new)
    }

    /// Replace the live server `id` by a fresh one of the same spec at the same root,
    /// shown no document: it reads the project's configuration anew (see
    /// `check::configuration`). The old one is stopped and retired.
    pub fn start_afresh(&mut self, id: ServerId) -> Result<ServerId, NotRestarted> {
        self.replace(id)
    }

    /// Start a server of `id`'s spec at its root under a new id, then stop and retire
    /// `id`; `id` stays as it is when the new one cannot be started.
    fn replace(&mut self, id: ServerId) -> Result<ServerId, NotRestarted> {
        let server = self.server(id);
        let spec = server.spec().clone();
        let root = server.root().to_path_buf();
        let program = crate::config::which(&spec.command)
            .ok_or_else(|| NotRestarted(format!("`{}` is no longer on PATH", spec.command)))?;
        let new = self
            .start(&spec, &program, &root)
            .map_err(|e| NotRestarted(format!("could not start `{}` again: {e}", spec.command)))?;
        self.stop(id, Duration::ZERO);
        Ok(new)
    }
}

#[cfg(test)]
mod tests;
