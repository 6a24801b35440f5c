//! The warm daemon (docs/SPEC.md section 6): one process per workspace that keeps the
//! workspace's language servers running between runs, and serves runs one at a time,
//! in arrival order, through the same [`check::run`] as a one-shot run.
//!
//! Who owns what:
//! - `paths`: the per-user runtime directory and the socket, lock and log names.
//! - `protocol`: the messages and their framing.
//! - `client`: the CLI side: reach the daemon (starting it when it is not running),
//!   send a run, get its report; `daemon start|stop|status|restart`; the cache queries.
//! - `watch`: files created, changed or deleted on disk behind lspgate's back.
//! - this file: the daemon process: start-up (new session, lock, socket), the main
//!   loop, bringing the servers' view back to the disk before each run, answering the
//!   cache queries (`diagnostics`, `logs`, `messages`), keeping the cache bounded,
//!   restarting a server that crashed while idle, and exit.
//!
//! The daemon is the same binary, re-executed by the CLI as `lspgate __daemon
//! --workspace DIR` (see [`SUBCOMMAND`]), with stdin and stdout on /dev/null and stderr
//! on its log file: a pre-commit hook or a `$(...)` that waits for the CLI's output
//! to close must never wait for the daemon.

pub(crate) mod client;
pub(crate) mod paths;
pub mod protocol;
mod pulls;
mod units;
mod watch;
mod watcher;

use crate::error::Failure;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Select};

use crate::check;
use crate::lsp::{
    FileChangeType, Lifecycle, Observer, Pool, SeenView, SeenViews, Server, ServerId,
};
use crate::model::Note;
use crate::servers::{ServerSpec, quirks};
use paths::Paths;
use protocol::{
    CacheQuery, CachedFile, Deadlined, Identity, MessageLine, Request, Response, RunRequest,
    ServerInfo, Status,
};

/// The hidden first argument that makes lspgate the daemon. Not a clap subcommand, so
/// it never shows in help, completions or man pages.
pub const SUBCOMMAND: &str = "__daemon";

/// Idle time after which the daemon exits (docs/SPEC.md section 6); `LSPGATE_IDLE_TIMEOUT`
/// changes it.
const DEFAULT_IDLE: Duration = Duration::from_secs(600);
/// How long servers get to shut down when the daemon stops one or exits.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// How long a connected CLI may take to send its request.
const REQUEST_READ: Duration = Duration::from_secs(10);
/// How long a CLI may take to read an answer.
const REPLY_WRITE: Duration = Duration::from_secs(10);
/// How often the daemon checks that its socket file is still there.
const SOCKET_CHECK: Duration = Duration::from_secs(1);
/// Documents kept open per server; the least recently changed are closed beyond it,
/// so that memory stays bounded however many files runs touch.
const MAX_OPEN_DOCS: usize = 500;
/// Files a server may hold diagnostics for without having them open (gopls publishes
/// for every package it loads); the oldest are dropped beyond it (`lsp::cache`).
const MAX_UNOPENED_DIAGNOSTICS: usize = 1000;
/// A client drawing the status line gets the servers' progress this often while a
/// run waits, once the line shows (after [`crate::model::progress::SHOW_AFTER`]).
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// How long sending one progress message may take; a client that does not read gets
/// no more of them.
const PROGRESS_WRITE: Duration = Duration::from_millis(500);

/// If `args` ask for the daemon (`lspgate __daemon --workspace DIR`), be it and
/// return how it ended; otherwise `None`.
pub fn serve_if_asked(args: &[OsString]) -> Option<crate::exit::Outcome> {
    if args.get(1).is_none_or(|a| a != SUBCOMMAND) {
        return None;
    }
    let workspace = match args.get(2..) {
        Some([flag, dir]) if flag == "--workspace" => PathBuf::from(dir),
        _ => {
            log(&format!("usage: lspgate {SUBCOMMAND} --workspace DIR"));
            return Some(crate::exit::Outcome::BadInput);
        }
    };
    match serve(&workspace) {
        Ok(()) => Some(crate::exit::Outcome::Clean),
        Err(e) => {
            log(&format!("exiting: {e:#}"));
            Some(crate::exit::Outcome::Failed)
        }
    }
}

/// One line on stderr, which is the daemon's log file.
/// The files a review's change already holds on disk (`check --patch`, `check
/// --changed`): the run shows the servers their old text, then the new, itself, so the
/// daemon does not announce them beforehand. Announced, a server checks the new text
/// before the old one can be asked about, and a deletion or a check of the disk
/// (rust-analyzer's) cannot be taken back in memory: a module deleted behind the
/// daemon's back passed as clean in `check --changed` (rich and mobx in the corpus's
/// hook mode).
fn held_back(job: &check::Job) -> HashSet<PathBuf> {
    match job {
        check::Job::Review(plan) => plan
            .changes
            .iter()
            .flat_map(|c| std::iter::once(c.path.clone()).chain(c.renamed_from.clone()))
            .collect(),
        _ => HashSet::new(),
    }
}

/// `LSPGATE_WATCH_LIMIT`: the directories the daemon's watcher may watch, at most
/// (inotify watches are a per-user budget other programs share); unset or not a
/// number, no limit but the system's. A root past it is walked before every run.
fn watch_limit() -> usize {
    std::env::var("LSPGATE_WATCH_LIMIT")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(usize::MAX)
}

fn log(message: &str) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let _ = writeln!(
        io::stderr().lock(),
        "{}.{:03} [{}] {message}",
        now.as_secs(),
        now.subsec_millis(),
        std::process::id()
    );
}

fn serve(workspace: &Path) -> anyhow::Result<()> {
    // A session of its own: no controlling terminal, and no SIGINT or SIGHUP meant
    // for the shell that ran the CLI. Safe here, in a fresh exec'd process that is not
    // a process-group leader (which is why the CLI must not use process_group(0)).
    if let Err(e) = rustix::process::setsid() {
        log(&format!("setsid: {e}"));
    }
    let workspace = workspace
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("{}: {e}", workspace.display()))?;
    let paths = Paths::for_workspace(&workspace)?;
    let Some(lock) = paths::try_lock(&paths.lock)? else {
        // Another daemon has this workspace (several CLIs started one at once).
        return Ok(());
    };
    // Holding the lock, any socket file is a dead daemon's: replace it.
    match fs::remove_file(&paths.socket) {
        Ok(()) => log("removed a stale socket"),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(anyhow::anyhow!("{}: {e}", paths.socket.display())),
    }
    let listener = UnixListener::bind(&paths.socket)
        .map_err(|e| anyhow::anyhow!("bind {}: {e}", paths.socket.display()))?;
    // The directory is 0700 already; the socket's own mode says the same.
    fs::set_permissions(&paths.socket, fs::Permissions::from_mode(0o600))?;
    let socket_id = file_id(&paths.socket);
    let idle = idle_timeout();
    log(&format!(
        "serving {} (lspgate {}, idle timeout {idle:?})",
        workspace.display(),
        env!("CARGO_PKG_VERSION")
    ));

    let (conn_tx, conn_rx) = crossbeam_channel::unbounded::<UnixStream>();
    std::thread::Builder::new()
        .name("daemon-accept".into())
        .spawn(move || {
            for conn in listener.incoming() {
                match conn {
                    Ok(stream) => {
                        if conn_tx.send(stream).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        log(&format!("accept: {e}"));
                        // Out of descriptors, say: do not spin on the error.
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
            }
        })?;

    let (watch, unwatched) = watch::Watch::watching(&paths.watch_markers(), watch_limit());
    if let Some(why) = unwatched {
        log(&format!(
            "no file system watcher ({why}): every server root is walked before every run"
        ));
    }
    let mut daemon = Daemon {
        workspace,
        paths,
        identity: Identity::current(),
        pool: Pool::new(),
        started: Instant::now(),
        idle,
        runs: 0,
        seen: SeenViews::default(),
        extending: None,
        watch,
        notes: Vec::new(),
        restart_failed: HashSet::new(),
        units: units::Units::default(),
        pulls: pulls::IdlePulls::default(),
        configuration: HashMap::new(),
    };
    let why = daemon.main_loop(&conn_rx, socket_id);
    log(&format!("exiting: {why}"));
    daemon.exit(&conn_rx, socket_id);
    let _ = fs::remove_dir_all(daemon.paths.watch_markers());
    // The lock file goes last, after the servers are gone: a daemon starting now
    // waits for this one to be completely gone.
    let _ = fs::remove_file(&daemon.paths.lock);
    drop(lock);
    Ok(())
}

fn idle_timeout() -> Duration {
    match std::env::var("LSPGATE_IDLE_TIMEOUT") {
        Ok(v) if !v.is_empty() => crate::config::parse_duration(&v).unwrap_or_else(|e| {
            log(&format!(
                "LSPGATE_IDLE_TIMEOUT: {e}; using {DEFAULT_IDLE:?}"
            ));
            DEFAULT_IDLE
        }),
        _ => DEFAULT_IDLE,
    }
}

/// Device and inode of a file, to tell our socket from one put in its place.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// What to do after a connection.
enum Flow {
    Continue,
    Exit(String),
}

/// The files server `server` may hold diagnostics for without having them open: at
/// least every file the daemon pulls between runs (`pulls`).
fn unopened_cap(server: &Server) -> usize {
    MAX_UNOPENED_DIAGNOSTICS.max(server.spec().coverage.idle_pulls)
}

struct Daemon {
    workspace: PathBuf,
    paths: Paths,
    identity: Identity,
    pool: Pool,
    started: Instant,
    idle: Duration,
    runs: u64,
    /// The files on disk at the last run, per server root.
    watch: watch::Watch,
    /// What happened between runs that the next report should say (a server that
    /// crashed while idle and was restarted).
    notes: Vec<String>,
    /// Crashed servers whose restart between runs failed (not refused for the
    /// backoff): not tried again at every event; the next run that needs one tries,
    /// and says why it failed.
    restart_failed: HashSet<ServerId>,
    /// The units of clangd's projects, opened between runs (`units`).
    units: units::Units,
    /// The files of the TypeScript servers' projects, pulled between runs (`pulls`).
    pulls: pulls::IdlePulls,
    /// Each server's configuration files as they were after the last run
    /// (`watch::configuration_stamp`).
    configuration: HashMap<ServerId, u64>,
    /// What the servers had said as each of the last reviews ended: a `check
    /// --changed` baseline names the one of its tree (`lsp::SeenView`).
    seen: SeenViews,
    /// The latest view while the tree is still the one it is of (no run since, no
    /// change heard), with when it was last extended: what the servers say meanwhile
    /// is added to it (`extend_view`).
    extending: Option<(u64, Instant)>,
}

/// How long a call with nothing changed waits for clangd's queued units before the
/// daemon keeps its view of the tree (`units::Units::finish`), at most.
const UNITS_FOR_A_VIEW: Duration = Duration::from_secs(10);

/// How often an idle daemon adds what its servers said to the latest view, at most.
const EXTEND_EVERY: Duration = Duration::from_millis(250);

impl Daemon {
    /// Serve connections until a reason to exit; returns it. Between runs, the
    /// servers' messages are handled as they come (their requests answered, their
    /// diagnostics and logs recorded), so they never wait on us.
    fn main_loop(&mut self, conns: &Receiver<UnixStream>, socket_id: Option<(u64, u64)>) -> String {
        let mut idle_deadline = Instant::now() + self.idle;
        let mut next_check = Instant::now() + SOCKET_CHECK;
        loop {
            let now = Instant::now();
            if now >= idle_deadline {
                return format!("idle for {:?}", self.idle);
            }
            if now >= next_check {
                if file_id(&self.paths.socket) != socket_id {
                    return "the socket file was removed".into();
                }
                next_check = now + SOCKET_CHECK;
            }
            let wake = idle_deadline.min(next_check);
            let mut select = Select::new();
            let conn_op = select.recv(conns);
            select.recv(self.pool.events());
            match select.ready_timeout(wake.saturating_duration_since(now)) {
                Ok(i) if i == conn_op => {
                    let Ok(stream) = conns.try_recv() else {
                        continue;
                    };
                    let flow = self.handle(stream);
                    idle_deadline = Instant::now() + self.idle;
                    if let Flow::Exit(why) = flow {
                        return why;
                    }
                }
                // A server said something: handle what is queued, without waiting.
                Ok(_) => {
                    self.pool.pump(Instant::now());
                    self.upkeep();
                    self.units.open_some(&mut self.pool);
                    self.pulls.ask_some(&mut self.pool);
                    self.extend_view(EXTEND_EVERY);
                }
                Err(_) => {}
            }
        }
    }

    fn handle(&mut self, stream: UnixStream) -> Flow {
        match peer_uid(&stream) {
            Ok(uid) if uid == paths::uid() => {}
            Ok(uid) => {
                log(&format!("refused a connection from uid {uid}"));
                return Flow::Continue;
            }
            Err(e) => {
                log(&format!("peer credentials: {e}"));
                return Flow::Continue;
            }
        }
        let mut reader = Deadlined::reader(&stream);
        let incoming = match protocol::read_frame(&mut reader, Instant::now() + REQUEST_READ) {
            Ok(Some(m)) => m,
            Ok(None) => return Flow::Continue,
            Err(e) => {
                log(&format!("reading a request: {e}"));
                return Flow::Continue;
            }
        };
        let compatible = incoming
            .identity
            .as_ref()
            .is_some_and(|id| self.identity.compatible(id));
        if !compatible {
            let theirs = incoming
                .identity
                .as_ref()
                .map(|id| format!("lspgate {} (protocol {})", id.lspgate_version, id.protocol))
                .unwrap_or_else(|| "an unknown client".into());
            self.reply(
                &stream,
                &Response::VersionMismatch {
                    daemon: self.identity.clone(),
                },
            );
            return Flow::Exit(format!("version mismatch: {theirs} connected"));
        }
        let request: Request = match incoming.parse() {
            Ok(r) => r,
            Err(e) => {
                self.reply(
                    &stream,
                    &Response::Failed(Failure::BadInput(format!(
                        "the daemon could not read the request: {e}"
                    ))),
                );
                return Flow::Continue;
            }
        };
        match request {
            Request::Run(run) => {
                // The file contents follow the frame.
                let size = run.job.content_length();
                let deadline = Instant::now() + REQUEST_READ + protocol::transfer_bound(size);
                let mut run = *run;
                let wire = std::mem::replace(&mut run.job, protocol::WireJob::Check(Vec::new()));
                match wire.join(&mut reader, deadline) {
                    Ok(job) => self.run(&stream, run, job),
                    Err(e) => {
                        log(&format!("reading a run's file contents: {e}"));
                        Flow::Continue
                    }
                }
            }
            Request::Status => {
                let status = self.status();
                self.reply(&stream, &Response::Status(Box::new(status)));
                Flow::Continue
            }
            Request::Diagnostics(query) => {
                // What the servers said up to now, not up to the last event handled.
                self.pool.pump(Instant::now());
                let files = self.cached_diagnostics(&query);
                self.reply(&stream, &Response::Diagnostics(files));
                Flow::Continue
            }
            Request::Logs(query) => {
                self.pool.pump(Instant::now());
                let lines = self.lines(&query, Server::logs);
                self.reply(&stream, &Response::Lines(lines));
                Flow::Continue
            }
            Request::Messages(query) => {
                self.pool.pump(Instant::now());
                let lines = self.lines(&query, Server::shown);
                self.reply(&stream, &Response::Lines(lines));
                Flow::Continue
            }
            Request::Stop => {
                self.reply(
                    &stream,
                    &Response::Stopping {
                        pid: std::process::id(),
                    },
                );
                Flow::Exit("asked to stop".into())
            }
        }
    }

    /// Make the run `req` asks for; `job` is its job with the file contents read.
    fn run(&mut self, stream: &UnixStream, req: RunRequest, job: check::Job) -> Flow {
        if req.workspace != self.workspace {
            self.reply(
                stream,
                &Response::Failed(Failure::BadInput(format!(
                    "the daemon serves {}, not {}",
                    self.workspace.display(),
                    req.workspace.display()
                ))),
            );
            return Flow::Continue;
        }
        // A client is the same user, but need not be lspgate: what it asks the daemon
        // to write and to run is checked here as the CLI checks it. Refused before the
        // run starts, so the client may still make it itself, in-process.
        if let Err(why) = check_request(&self.workspace, &req, &job) {
            log(&format!("refused a run: {why}"));
            self.reply(
                stream,
                &Response::Failed(Failure::BadInput(format!(
                    "the daemon refused the run: {why}"
                ))),
            );
            return Flow::Continue;
        }
        // A CLI that gave up waiting for its turn has closed its end: then this
        // write fails, and the run must not be made (it may be running in-process).
        if !self.reply(stream, &Response::Started) {
            log("a client left before its run started; skipped");
            return Flow::Continue;
        }
        // Before the run's own sync takes what the watcher heard.
        self.extend_view(Duration::ZERO);
        self.extending = None;
        self.prepare(&req.servers, &held_back(&job));
        let opened_unheard = self.units.unheard(&self.pool);
        if req.progress {
            match stream.try_clone() {
                Ok(out) => self.pool.observer = Some(progress_sender(out, self.identity.clone())),
                Err(e) => log(&format!("no progress for this run: {e}")),
            }
        }
        let ctx = check::Context {
            workspace: req.workspace,
            run_dir: req.run_dir,
            servers: req.servers,
            options: req.options,
            one_run: false,
            makes_baseline: false,
            views: req.views,
            seen: req.views.named().and_then(|id| self.seen.get(id)),
            opened_unheard,
        };
        // A review's files: its view carries over no word of the servers on them.
        let reviewed: Option<HashSet<PathBuf>> = match &job {
            check::Job::Review(plan) if req.views != check::Views::None => {
                Some(plan.changes.iter().map(|c| c.path.clone()).collect())
            }
            _ => None,
        };
        let started_from = ctx.seen.clone();
        let pool = &mut self.pool;
        // The files the run writes get the client's umask, not the one of whichever
        // shell started the daemon. Runs are served one at a time, and no other thread
        // of the daemon creates files.
        let daemons_umask = rustix::process::umask(rustix::fs::Mode::from_raw_mode(req.umask));
        let result = catch_unwind(AssertUnwindSafe(|| check::run(pool, &ctx, job)));
        rustix::process::umask(daemons_umask);
        self.pool.observer = None;
        self.runs += 1;
        match result {
            Ok(Ok(mut report)) => {
                // Before the run's own notes: it happened first.
                let earlier = std::mem::take(&mut self.notes).into_iter();
                report.notes.splice(0..0, earlier.map(Note::Info));
                for (root, why) in self.watch.unwatched() {
                    // It walks the root instead: the check is complete all the same.
                    report.notes.push(Note::Info(format!(
                        "the daemon does not watch {} ({why}): it walks it before every run \
                         instead",
                        root.display()
                    )));
                }
                if let Some(mut touched) = reviewed {
                    if touched.is_empty() {
                        self.units
                            .finish(&mut self.pool, Instant::now() + UNITS_FOR_A_VIEW);
                    }
                    touched.extend(report.files.iter().map(|f| f.path.clone()));
                    let mut view = SeenView::of(&self.pool);
                    if let Some(earlier) = &started_from {
                        view.carry_over(earlier, &touched);
                    }
                    let id = self.seen.keep(view);
                    report.seen = Some(id);
                    self.extending = Some((id, Instant::now()));
                }
                let written: Vec<PathBuf> = report.applied.iter().map(|a| a.path.clone()).collect();
                // Before the client may change anything again: a change made after the
                // report must not be taken for the baseline's, for the run's own write,
                // nor for the configuration a server started in this run was started
                // with. (Re-stamped after the reply, a header the client wrote back
                // at once and then gave its old time had the stamp of the write
                // between: a change clangd 14 cannot see was taken for one it can,
                // and use.c kept the edit's break, once in CI.)
                self.watch.touched(&written);
                self.watch_new_roots();
                self.stamp_new_servers();
                self.reply(stream, &Response::Report(Box::new(report)));
                self.after_run();
                Flow::Continue
            }
            Ok(Err(e)) => {
                self.reply(stream, &Response::Failed(Failure::from(&e)));
                Flow::Continue
            }
            Err(_) => {
                // The panic message is in the log already (stderr). The pool's state
                // is unknown now: start over rather than serve from it.
                self.reply(
                    stream,
                    &Response::Failed(Failure::Lost(format!(
                        "the daemon failed during the run; see {}",
                        self.paths.log.display()
                    ))),
                );
                Flow::Exit("a run panicked".into())
            }
        }
    }

    /// Add to the latest view what the servers have said since (clangd's units built
    /// after the run, pyright's analysis finished), at most once per `every`, while the
    /// watcher heard nothing since the run: a word said after a change behind the
    /// daemon's back may rest on it (tsserver watches the disk itself), and from the
    /// first change heard the view is closed.
    fn extend_view(&mut self, every: Duration) {
        let Some((id, last)) = self.extending else {
            return;
        };
        if last.elapsed() < every {
            return;
        }
        if !self.watch.quiet() {
            self.extending = None;
            return;
        }
        self.seen.extend(id, SeenView::of(&self.pool));
        self.extending = Some((id, Instant::now()));
    }

    /// Send one answer; false when the client cannot be written to.
    fn reply(&self, stream: &UnixStream, response: &Response) -> bool {
        let result = protocol::encode(&self.identity, response)
            .and_then(|frame| protocol::write_frame(stream, &frame, Instant::now() + REPLY_WRITE));
        if let Err(e) = &result {
            log(&format!("writing an answer: {e}"));
        }
        result.is_ok()
    }

    /// Before a run: retire servers whose configuration changed, or that died without
    /// having crashed (they never finished starting), so the check starts fresh
    /// ones; a crashed server is kept with its documents, for the check to restart
    /// (`lsp::restart`). Then bring the servers' view back to the disk.
    fn prepare(&mut self, specs: &[ServerSpec], held: &HashSet<PathBuf>) {
        for i in self.pool.ids() {
            let crashed = self.pool.crashed(i);
            let server = self.pool.server(i);
            let wanted = specs.iter().find(|s| s.name == server.name());
            let stamp = watch::configuration_stamp(server.spec(), server.root(), &self.workspace);
            let why = match (server.dead_reason(), wanted) {
                (_, None) => "it is no longer configured".into(),
                (_, Some(spec)) if spec.disabled => "it was disabled".into(),
                (_, Some(spec)) if spec != server.spec() => "its configuration changed".into(),
                _ if self.configuration.get(&i).is_some_and(|&seen| seen != stamp) => {
                    "the project's configuration files, lock files or installed packages changed on disk".into()
                }
                (Some(reason), _) if !crashed => format!("it died ({reason})"),
                _ => {
                    // What it is kept for: a change from here on, during the run or
                    // after it, is one the next run sees.
                    self.configuration.insert(i, stamp);
                    continue;
                }
            };
            self.configuration.remove(&i);
            log(&format!(
                "stopping {} at {}: {why}",
                server.name(),
                server.root().display()
            ));
            self.pool.stop(i, SHUTDOWN_GRACE);
        }
        self.watch.sync();
        let mut announced = self.resync(held);
        announced.extend(held.iter().cloned());
        self.announce_disk_changes(&announced);
        self.name_views();
    }

    /// The servers now see the project as it is on disk: each is told its key (see
    /// `watch::Watch::view_key`), so that a project back to texts it had before (a
    /// `git checkout` or `git stash` behind the daemon's back) gets the answers it
    /// had then, not a re-check of every file for the next run's before view.
    fn name_views(&mut self) {
        for (root, _) in self.roots() {
            let ids: Vec<_> = self
                .pool
                .ids()
                .into_iter()
                .filter(|&i| {
                    let server = self.pool.server(i);
                    // One that may not see the disk as it is yet has no view to name.
                    !server.is_dead() && server.root() == root && server.knows_the_disk_as_sent()
                })
                .collect();
            if ids.is_empty() {
                continue;
            }
            let mut extra: Vec<String> = watch::LOCK_FILES.iter().map(|s| s.to_string()).collect();
            for &i in &ids {
                extra.extend(self.pool.server(i).spec().root_markers.iter().cloned());
            }
            let Some(key) = self.watch.view_key(&root, &extra) else {
                continue;
            };
            for i in ids {
                self.pool.enter_view(i, key);
            }
        }
    }

    /// Files changed by anything else since the last run (an editor, `git
    /// checkout`, a formatter) are sent again; deleted ones are closed and announced.
    /// Open documents only: those are the ones whose stale text the servers would
    /// otherwise go on using (the others: [`Daemon::announce_disk_changes`]). A
    /// crashed server's documents are brought up to date too, without sending
    /// anything, so that its restart opens them as they are now. Returns the paths
    /// announced.
    fn resync(&mut self, held: &HashSet<PathBuf>) -> HashSet<PathBuf> {
        let mut announced = HashSet::new();
        for i in self.pool.ids() {
            let server = self.pool.server(i);
            let mut changed: Vec<(PathBuf, String)> = Vec::new();
            let mut gone: Vec<PathBuf> = Vec::new();
            for (path, doc) in server.docs().filter(|(p, _)| !held.contains(*p)) {
                match crate::regular::read(path) {
                    Ok(bytes) => match String::from_utf8(bytes) {
                        Ok(text) if text != doc.text => changed.push((path.to_path_buf(), text)),
                        Ok(_) => {}
                        // No longer text: the server cannot be shown it.
                        Err(_) => gone.push(path.to_path_buf()),
                    },
                    // Gone, or no longer a file a server can be shown (a FIFO now).
                    Err(e)
                        if e.kind() == io::ErrorKind::NotFound
                            || crate::regular::not_regular(&e) =>
                    {
                        gone.push(path.to_path_buf())
                    }
                    Err(_) => {}
                }
            }
            let mut overflow: Vec<(u64, PathBuf)> = Vec::new();
            if server.doc_count() > MAX_OPEN_DOCS {
                let mut by_age: Vec<(u64, PathBuf)> = server
                    .docs()
                    .map(|(p, d)| (d.changed_at, p.to_path_buf()))
                    .collect();
                by_age.sort();
                by_age.truncate(server.doc_count() - MAX_OPEN_DOCS);
                overflow = by_age;
            }
            let mut watched: Vec<(PathBuf, FileChangeType)> = Vec::new();
            let saved = !changed.is_empty();
            if saved || !gone.is_empty() {
                // What the other files' cached diagnostics were computed against
                // changes now: the next run's before view asks for them again, unless
                // the server says they stand (clangd, after the saves below).
                self.pool.mark_changed(i);
            }
            // A change clangd does not see (the same size, within the same second):
            // it rebuilds what it is sent afresh, and the saves go first, so that its
            // rebuilds are the newest requests (see `check::notify`).
            let saves_first = self.pool.server(i).spec().wait.force_rebuild_unchanged
                && changed
                    .iter()
                    .any(|(path, _)| self.watch.kept_size_and_second(path));
            if saves_first {
                self.pool.mark_size_kept(i);
                for (path, _) in &changed {
                    self.pool.save(i, path);
                }
            }
            let unchanged = if changed.is_empty() {
                Vec::new()
            } else {
                self.unseen_rebuilds(i, saves_first, &changed)
            };
            for (path, text) in changed {
                self.pool.open_or_change(i, &path, &text);
                // The text is on disk: saved, as far as the server can tell.
                // rust-analyzer re-runs `cargo check` on a save only (until then its
                // cargo check results are the old text's), clangd rebuilds the files
                // including a header on a save only.
                if !saves_first {
                    self.pool.save(i, &path);
                }
                watched.push((path, FileChangeType::CHANGED));
            }
            for (path, text) in unchanged {
                self.pool.open_or_change(i, &path, &text);
            }
            for path in gone {
                self.pool.close(i, &path);
                watched.push((path, FileChangeType::DELETED));
            }
            if !saved && !watched.is_empty() {
                // No save to start rust-analyzer's check of the crate: asked for.
                self.pool.run_check(i);
            }
            for (_, path) in overflow {
                self.pool.close(i, &path);
            }
            if !watched.is_empty() {
                log(&format!(
                    "{}: {} file(s) changed on disk since the last run",
                    self.pool.server(i).name(),
                    watched.len()
                ));
            }
            announced.extend(watched.iter().map(|(p, _)| p.clone()));
            if !watched.is_empty() {
                self.pool.watched(i, &watched);
            }
        }
        announced
    }

    /// After files changed behind the daemon's back: the open documents of server `i`
    /// (but `changed`, sent anyway) that clangd would not rebuild by itself, to send
    /// again now, so that the next edit's before view finds the change taken in.
    /// clangd's pass over its open files after a save misses a file with an include
    /// after its preamble or a header it did not find (`servers::clangd::protocol::must_force_rebuild`,
    /// sent forced), and every file when the change kept a file's size and second
    /// (`unseen`, after `Pool::mark_size_kept`). None for a server without those blind
    /// spots.
    fn unseen_rebuilds(
        &self,
        i: ServerId,
        unseen: bool,
        changed: &[(PathBuf, String)],
    ) -> Vec<(PathBuf, String)> {
        let server = self.pool.server(i);
        if !server.spec().wait.force_rebuild_unchanged {
            return Vec::new();
        }
        server
            .docs()
            .filter(|(path, _)| !changed.iter().any(|(p, _)| p == path))
            .filter(|(path, doc)| {
                unseen || quirks::must_force_rebuild(&doc.text, &server.diagnostics_of(path))
            })
            .map(|(path, doc)| (path.to_path_buf(), doc.text.clone()))
            .collect()
    }

    /// Each root of a live server, with the extensions of all its servers: what one
    /// walk of the disk covers.
    fn roots(&self) -> BTreeMap<PathBuf, HashSet<String>> {
        let mut roots: BTreeMap<PathBuf, HashSet<String>> = BTreeMap::new();
        for i in self.pool.ids() {
            let server = self.pool.server(i);
            roots
                .entry(server.root().to_path_buf())
                .or_default()
                .extend(server.spec().extensions.iter().cloned());
        }
        roots
    }

    /// Files the servers do not have open, created, changed or deleted since the last
    /// run (`watch`): announced with `workspace/didChangeWatchedFiles`, each server
    /// told of the files of its extensions. One walk per root, for the extensions of
    /// all its servers. A server that watches the disk itself and is asked for its
    /// diagnostics is also shown each changed file as a document (see
    /// [`Daemon::show_as_documents`]).
    fn announce_disk_changes(&mut self, announced: &HashSet<PathBuf>) {
        let roots = self.roots();
        for (root, extensions) in roots {
            let changes = self.watch.changes(&root, &extensions);
            if changes.is_empty() {
                continue;
            }
            for i in self.pool.ids() {
                let server = self.pool.server(i);
                if server.is_dead() || server.root() != root {
                    continue;
                }
                let theirs: Vec<(PathBuf, FileChangeType)> = changes
                    .iter()
                    .filter(|(p, _)| !announced.contains(p) && server.doc(p).is_none())
                    .filter(|(p, _)| {
                        p.extension()
                            .and_then(|e| e.to_str())
                            .is_some_and(|e| server.spec().extensions.iter().any(|x| x == e))
                    })
                    .map(|(p, kind)| (p.clone(), change_type(*kind)))
                    .collect();
                if !theirs.is_empty() {
                    log(&format!(
                        "{}: {} file(s) created, changed or deleted behind lspgate's back",
                        server.name(),
                        theirs.len()
                    ));
                    self.pool.watched(i, &theirs);
                    self.pool.mark_changed(i);
                    let unseen = theirs
                        .iter()
                        .any(|(p, _)| self.watch.changed_keeping_size_and_second(p));
                    if unseen {
                        self.pool.mark_size_kept(i);
                    }
                    for (path, text) in self.unseen_rebuilds(i, unseen, &[]) {
                        self.pool.open_or_change(i, &path, &text);
                    }
                    // rust-analyzer checks the crate again on a save only.
                    self.pool.run_check(i);
                    let server = self.pool.server(i);
                    if !server.hears_the_disk_from_us() && server.answers_pulls() {
                        self.show_as_documents(i, &theirs);
                    }
                }
            }
        }
    }

    /// A server that watches the disk itself (the tsserver of a typescript-language-server
    /// that cannot hand its watching to us) sees a file changed behind lspgate's back in its own time. Opened, a changed
    /// file is what lspgate sent, now, and the project's view stays the server's
    /// (`Server::knows_the_disk_as_sent`). A created or deleted one cannot be shown
    /// so: tsserver is asked to reload its projects (`Server::reload_projects`),
    /// another server's view of the disk is unknown from then on.
    fn show_as_documents(&mut self, i: ServerId, changes: &[(PathBuf, FileChangeType)]) {
        let mut created_or_deleted = false;
        for (path, kind) in changes {
            if *kind != FileChangeType::CHANGED {
                created_or_deleted = true;
                continue;
            }
            match crate::regular::read(path).map(String::from_utf8) {
                Ok(Ok(text)) => {
                    self.pool.open_or_change(i, path, &text);
                }
                // Gone again, or no longer text.
                _ => created_or_deleted = true,
            }
        }
        if created_or_deleted && !self.pool.reload_projects(i) {
            self.pool.lose_the_disk(i);
        }
    }

    /// The configuration stamp of each live server that has none, one started by the
    /// run just made: taken before its report is sent, since npm may upgrade a
    /// dependency the moment it is (tsserver kept the old types when the stamp came
    /// after the upgrade, and an edit calling the upgraded function the old way passed
    /// as clean under load). A server kept from an earlier run keeps the stamp
    /// `prepare` took before the run.
    fn stamp_new_servers(&mut self) {
        for i in self.pool.ids() {
            let server = self.pool.server(i);
            if server.is_dead() || self.pool.is_retired(i) || self.configuration.contains_key(&i) {
                continue;
            }
            let stamp = watch::configuration_stamp(server.spec(), server.root(), &self.workspace);
            self.configuration.insert(i, stamp);
        }
    }

    /// The first walk of new servers' roots: the baseline of what they saw, and the
    /// watches on them.
    fn watch_new_roots(&mut self) {
        for (root, extensions) in self.roots() {
            if !self.watch.knows(&root) {
                self.watch.changes(&root, &extensions);
            }
        }
    }

    /// After a run's report is sent: bound the diagnostics held, and queue the idle
    /// work.
    fn after_run(&mut self) {
        for i in self.pool.ids() {
            let cap = unopened_cap(self.pool.server(i));
            self.pool.trim_diagnostics(i, cap);
        }
        for line in self
            .units
            .queue(&self.pool)
            .into_iter()
            .chain(self.pulls.queue(&self.pool))
        {
            log(&line);
        }
        self.units.open_some(&mut self.pool);
        self.pulls.ask_some(&mut self.pool);
    }

    /// Between runs, after the servers said something: restart a server that crashed
    /// (unless its crash backoff runs: then the next run that needs it does), so that
    /// the next run finds it warm; and keep the diagnostics of unopened files bounded
    /// when a server floods them.
    fn upkeep(&mut self) {
        for i in self.pool.ids() {
            if self.pool.crashed(i)
                && !self.restart_failed.contains(&i)
                && self.pool.restart_refused(i).is_none()
            {
                let server = self.pool.server(i);
                let name = server.name().to_string();
                let reason = server.dead_reason().unwrap_or("").to_string();
                let docs = server.doc_count();
                match self.pool.restart(i) {
                    Ok(_) => {
                        log(&format!("{name} crashed ({reason}); restarted it"));
                        self.notes.push(format!(
                            "{name} crashed after the last run ({reason}); restarted it and \
                             reopened {docs} file{}",
                            if docs == 1 { "" } else { "s" }
                        ));
                    }
                    Err(why) => {
                        log(&format!("{name} crashed ({reason}); {}", why.0));
                        self.restart_failed.insert(i);
                    }
                }
            }
            let cap = unopened_cap(self.pool.server(i));
            if self.pool.unopened_diagnostics(i) > 2 * cap {
                self.pool.trim_diagnostics(i, cap);
            }
        }
    }

    /// What the live servers hold, for `lspgate diagnostics`: every file (or those
    /// under `query.path`) with diagnostics, and the open ones even without.
    fn cached_diagnostics(&self, query: &CacheQuery) -> Vec<CachedFile> {
        let mut files = Vec::new();
        for i in self.pool.ids() {
            let server = self.pool.server(i);
            if server.is_dead() {
                continue;
            }
            for path in server.diagnostics().files() {
                if query.path.as_ref().is_some_and(|p| !path.starts_with(p)) {
                    continue;
                }
                let diagnostics = server.diagnostics_of(path);
                if diagnostics.is_empty() && server.doc(path).is_none() {
                    continue;
                }
                files.push(CachedFile {
                    path: path.to_path_buf(),
                    diagnostics,
                });
            }
        }
        merge(files)
    }

    /// The last `query.limit` messages of each server's `ring` at `query.level` or
    /// more severe. A crashed server's are included: they may say why.
    fn lines(
        &self,
        query: &CacheQuery,
        ring: fn(&Server) -> &VecDeque<(i32, String)>,
    ) -> Vec<MessageLine> {
        let max = query.level.unwrap_or(i32::MAX);
        let mut out = Vec::new();
        for i in self.pool.ids() {
            let server = self.pool.server(i);
            let matching: Vec<&(i32, String)> = ring(server)
                .iter()
                .filter(|(level, _)| *level <= max)
                .collect();
            let skip = query.limit.map_or(0, |n| matching.len().saturating_sub(n));
            out.extend(
                matching
                    .into_iter()
                    .skip(skip)
                    .map(|(level, message)| MessageLine {
                        server: server.name().to_string(),
                        root: server.root().to_path_buf(),
                        level: *level,
                        message: message.clone(),
                    }),
            );
        }
        out
    }

    fn status(&mut self) -> Status {
        let now = Instant::now();
        let ids = self.pool.ids();
        let crashes: Vec<_> = ids.iter().map(|&i| self.pool.crash_log(i)).collect();
        let servers = ids
            .iter()
            .zip(&crashes)
            .map(|(&i, crashes)| {
                let s = self.pool.server(i);
                ServerInfo {
                    name: s.name().to_string(),
                    root: s.root().to_path_buf(),
                    pid: s.pid(),
                    state: match s.lifecycle() {
                        Lifecycle::Dead(reason) | Lifecycle::Retired(reason) => {
                            format!("dead: {reason}")
                        }
                        Lifecycle::Ready => "ready".into(),
                        Lifecycle::Initializing => "initializing".into(),
                    },
                    uptime_ms: now.duration_since(s.started()).as_millis() as u64,
                    open_documents: s.doc_count(),
                    rss_kib: if s.is_dead() {
                        None
                    } else {
                        protocol::rss_kib(s.pid())
                    },
                    between_runs: self.pulls.status(&self.pool, i),
                    crashes: crashes.total,
                    last_crash_ms: crashes
                        .times
                        .back()
                        .map(|t| now.saturating_duration_since(*t).as_millis() as u64),
                }
            })
            .collect();
        Status {
            pid: std::process::id(),
            lspgate_version: self.identity.lspgate_version.clone(),
            workspace: self.workspace.clone(),
            socket: self.paths.socket.clone(),
            log: self.paths.log.clone(),
            uptime_ms: now.duration_since(self.started).as_millis() as u64,
            idle_timeout_ms: self.idle.as_millis() as u64,
            runs: self.runs,
            rss_kib: protocol::rss_kib(std::process::id()),
            servers,
            watched_directories: self.watch.watched_directories(),
            unwatched: self.watch.unwatched(),
        }
    }

    /// Stop taking runs (the socket goes first, so new CLIs start a new daemon),
    /// send away the ones already queued, and shut the servers down.
    fn exit(&mut self, conns: &Receiver<UnixStream>, socket_id: Option<(u64, u64)>) {
        if file_id(&self.paths.socket) == socket_id {
            let _ = fs::remove_file(&self.paths.socket);
        }
        while let Ok(stream) = conns.try_recv() {
            self.reply(&stream, &Response::Exiting);
        }
        self.pool.shutdown_all(SHUTDOWN_GRACE);
    }
}

/// Why the daemon will not make the run `req` asks for, if it will not: a path that a
/// planner would not have named (outside the workspace, in `.git`, through a symlink
/// out), a file to check outside the workspace, or a server command no configuration
/// of the workspace names.
fn check_request(workspace: &Path, req: &RunRequest, job: &check::Job) -> Result<(), String> {
    match job {
        check::Job::Edit(plan) | check::Job::Review(plan) => {
            crate::edit::check_plan(workspace, plan).map_err(|e| e.summary())?;
        }
        check::Job::Check(paths) => {
            for path in paths {
                crate::edit::plan_check(workspace, workspace, path).map_err(|e| e.summary())?;
            }
        }
    }
    crate::config::check_commands(workspace, req.trust_project, &req.servers)
}

/// A change `watch` found, in its LSP number (1 created, 2 changed, 3 deleted), as
/// the type `Pool::watched` takes.
fn change_type(kind: u8) -> FileChangeType {
    match kind {
        1 => FileChangeType::CREATED,
        2 => FileChangeType::CHANGED,
        _ => FileChangeType::DELETED,
    }
}

/// The pool observer of a run whose client draws the status line: every
/// [`PROGRESS_EVERY`], once the line would show, the live servers and their progress.
/// A client that stops reading gets no more (the run goes on).
fn progress_sender(stream: UnixStream, identity: Identity) -> Observer {
    let mut next = Instant::now() + crate::model::progress::SHOW_AFTER;
    let mut broken = false;
    Box::new(move |servers: &[Server]| {
        let now = Instant::now();
        if broken || now < next {
            return;
        }
        next = now + PROGRESS_EVERY;
        let busy = crate::lsp::busy(servers);
        let sent = protocol::encode(&identity, &Response::Progress(busy))
            .and_then(|frame| protocol::write_frame(&stream, &frame, now + PROGRESS_WRITE));
        if let Err(e) = sent {
            log(&format!("sending progress: {e}; no more for this run"));
            broken = true;
        }
    })
}

/// The uid of the process at the other end. Linux tells (SO_PEERCRED); elsewhere the
/// socket's directory, 0700 and owned by us, is what keeps others out.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    rustix::net::sockopt::socket_peercred(stream)
        .map(|cred| cred.uid.as_raw())
        .map_err(io::Error::from)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn peer_uid(_stream: &UnixStream) -> io::Result<u32> {
    Ok(paths::uid())
}

/// The files of `files` merged by path (several servers may report one file), exact
/// duplicates dropped.
pub(crate) fn merge(files: impl IntoIterator<Item = CachedFile>) -> Vec<CachedFile> {
    let mut by_path: BTreeMap<PathBuf, Vec<lsp_types::Diagnostic>> = BTreeMap::new();
    for file in files {
        let list = by_path.entry(file.path).or_default();
        for d in file.diagnostics {
            if !list.contains(&d) {
                list.push(d);
            }
        }
    }
    by_path
        .into_iter()
        .map(|(path, diagnostics)| CachedFile { path, diagnostics })
        .collect()
}
