//! The CLI side of the daemon: reach this workspace's daemon over its socket,
//! starting it when nothing answers, hand it a run and take its report back (passing
//! the progress it streams to the run's watcher, such as the status line); the
//! `daemon start|stop|status|restart` commands; and the cache queries behind
//! `diagnostics`, `logs` and `messages`, which ask a running daemon and never start one.
//!
//! Nothing here waits without a bound. When the daemon cannot be reached or started,
//! [`run`] says so and the caller runs the servers in-process instead; once the daemon
//! has taken a run up, the run is never made a second time.

use crate::error::Failure;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::check::{Context, Job};
use crate::model::Report;
use crate::model::progress::Watcher;
use crate::servers::ServerSpec;

use super::SUBCOMMAND;
use super::paths::{self, Paths};
use super::protocol::{
    self, CacheQuery, CachedFile, Deadlined, Identity, MessageLine, RequestRef, Response, RunRef,
    Status, WireJob,
};

/// How long a CLI tries to reach a daemon it has started before giving up on it.
const CONNECT_BOUND: Duration = Duration::from_secs(10);
/// A started daemon that exited at once (another one held the lock, and may be on its
/// way out) is started again this often, at most.
const RESPAWN_EVERY: Duration = Duration::from_millis(100);
/// How long a run may wait for the runs queued before it.
const QUEUE_BOUND: Duration = Duration::from_secs(300);
/// Beyond the run's own timeouts: stopping a reconfigured server, re-syncing files.
const RUN_MARGIN: Duration = Duration::from_secs(30);
/// Sending a request, and short exchanges (status, stop).
const EXCHANGE_BOUND: Duration = Duration::from_secs(10);
/// How long `daemon stop` waits for the daemon to shut its servers down and exit.
const STOP_BOUND: Duration = Duration::from_secs(10);
/// Times a run is offered again after the daemon went away before taking it up.
const ATTEMPTS: usize = 4;
/// The longest socket path every Unix binds (macOS's `sun_path` less its NUL).
const MAX_SOCKET_PATH: usize = 103;
/// The log is cut when a daemon starts and finds it larger.
const MAX_LOG: u64 = 1024 * 1024;

/// How a run through the daemon ended.
pub enum Served {
    Report(Report),
    /// The daemon took the run up and it failed: bad input (nothing written), a
    /// partly written edit, or lost (the daemon stopped answering, or failed during
    /// the run: the edit may be applied, and must not be made again).
    Failed(Failure),
    /// No daemon could be reached or started; nothing was sent. The caller runs
    /// the servers in-process.
    Unreachable(String),
}

/// Make the run through the workspace's daemon, starting it if needed. With a
/// `watcher`, the daemon streams its servers' progress while the run waits, and the
/// watcher gets it as an in-process run's would. `trust_flag` is `--trust-project`.
pub fn run(
    ctx: &Context,
    job: &Job,
    mut watcher: Option<&mut Box<dyn Watcher>>,
    trust_flag: bool,
) -> Served {
    let paths = match Paths::for_workspace(&ctx.workspace) {
        Ok(p) => p,
        Err(e) => return Served::Unreachable(format!("no daemon runtime directory: {e}")),
    };
    let me = Identity::current();
    // The daemon's PATH is that of the run that started it, maybe long ago: find the
    // servers on this run's PATH, as the in-process path would.
    let servers: Vec<ServerSpec> = ctx
        .servers
        .iter()
        .map(|spec| {
            let mut spec = spec.clone();
            if let Some(program) = crate::config::which(&spec.command) {
                spec.command = program.display().to_string();
            }
            spec
        })
        .collect();
    // The file contents follow the frame raw, written from the plan itself.
    let (job, contents) = WireJob::split(job);
    let request = RequestRef::Run(RunRef {
        workspace: &ctx.workspace,
        run_dir: &ctx.run_dir,
        servers: &servers,
        options: &ctx.options,
        job,
        progress: watcher.is_some(),
        umask: current_umask(),
        trust_project: trust_flag || crate::config::trust_from_env(),
        views: ctx.views,
    });
    let frame = match protocol::encode(&me, &request) {
        Ok(f) => f,
        Err(e) => return Served::Unreachable(format!("could not encode the run: {e}")),
    };
    let opts = &ctx.options;
    let budget = opts.startup_timeout + opts.timeout + opts.cross_file_timeout + RUN_MARGIN;
    let mut why = String::new();
    for _ in 0..ATTEMPTS {
        let stream = match connect_or_spawn(&paths, &ctx.workspace) {
            Ok(s) => s,
            Err(e) => return Served::Unreachable(e),
        };
        match exchange_run(
            &stream,
            (&frame, &contents),
            &me,
            &paths,
            budget,
            &mut watcher,
        ) {
            Step::Done(served) => return served,
            Step::Retry(reason) => why = reason,
        }
    }
    Served::Unreachable(format!("the daemon kept going away ({why})"))
}

/// This process's file creation mask: from `/proc/self/status` where Linux has it,
/// else set and put back at once (the CLI writes no file meanwhile).
fn current_umask() -> u32 {
    let from_proc = fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Umask:"))?;
            u32::from_str_radix(line.split_whitespace().nth(1)?, 8).ok()
        });
    from_proc.unwrap_or_else(|| {
        let mask = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
        rustix::process::umask(mask);
        mask.as_raw_mode()
    })
}

enum Step {
    Done(Served),
    /// The daemon went away without taking the run up: offer it again.
    Retry(String),
}

/// Offer the run (its frame, then its file contents) and follow it to its end.
fn exchange_run(
    stream: &UnixStream,
    (frame, contents): (&[u8], &[&[u8]]),
    me: &Identity,
    paths: &Paths,
    budget: Duration,
    watcher: &mut Option<&mut Box<dyn Watcher>>,
) -> Step {
    let size: u64 = contents.iter().map(|c| c.len() as u64).sum();
    let bound = EXCHANGE_BOUND + protocol::transfer_bound(size);
    if let Err(e) = protocol::write_frame_with(stream, frame, contents, Instant::now() + bound) {
        return Step::Retry(format!("sending the run: {e}"));
    }
    let mut reader = Deadlined::reader(stream);
    // Our turn comes when the runs queued before ours are done.
    let first = match protocol::read_frame(&mut reader, Instant::now() + QUEUE_BOUND) {
        Ok(Some(m)) => m,
        Ok(None) => return Step::Retry("the daemon closed the connection".into()),
        Err(e) if is_timeout(&e) => {
            // Dropping the connection tells the daemon not to make the run later.
            return Step::Done(Served::Unreachable(format!(
                "the daemon did not take the run up within {}s",
                QUEUE_BOUND.as_secs()
            )));
        }
        Err(e) => return Step::Retry(format!("reading the daemon's answer: {e}")),
    };
    match answer(first, me) {
        Ok(Response::Started) => {}
        Ok(Response::Exiting) => return Step::Retry("the daemon was exiting".into()),
        Ok(Response::Failed(failure)) => {
            return Step::Done(Served::Unreachable(failure.to_string()));
        }
        Ok(other) => {
            return Step::Done(Served::Unreachable(format!(
                "unexpected answer from the daemon: {other:?}"
            )));
        }
        Err(daemon) => {
            // It exits after saying so; a new one is started once it is gone.
            wait_gone(paths, None);
            return Step::Retry(format!("replaced a daemon of {daemon}"));
        }
    }
    let lost = |why: String| {
        Step::Done(Served::Failed(Failure::Lost(format!(
            "{why}; the edit may have been applied (daemon log: {})",
            paths.log.display()
        ))))
    };
    let deadline = Instant::now() + budget;
    loop {
        break match protocol::read_frame(&mut reader, deadline) {
            Ok(Some(m)) => match answer(m, me) {
                Ok(Response::Progress(busy)) => {
                    if let Some(watcher) = watcher.as_mut() {
                        watcher.progress(&busy);
                    }
                    continue;
                }
                Ok(Response::Report(report)) => Step::Done(Served::Report(*report)),
                // Lost: the daemon failed part-way, and the edit may have been applied.
                Ok(Response::Failed(Failure::Lost(why))) => lost(why),
                Ok(Response::Failed(failure)) => Step::Done(Served::Failed(failure)),
                Ok(other) => lost(format!("unexpected answer from the daemon: {other:?}")),
                Err(daemon) => lost(format!("the daemon turned into {daemon}")),
            },
            Ok(None) => lost("the daemon exited during the run".into()),
            Err(e) if is_timeout(&e) => lost(format!(
                "no report from the daemon within {}s",
                budget.as_secs()
            )),
            Err(e) => lost(format!("reading the report: {e}")),
        };
    }
}

/// The daemon's answer, or `Err(who it is)` when it is another lspgate.
fn answer(incoming: protocol::Incoming, me: &Identity) -> Result<Response, String> {
    match &incoming.identity {
        Some(id) if me.compatible(id) => {}
        Some(id) => {
            return Err(format!(
                "lspgate {} (protocol {})",
                id.lspgate_version, id.protocol
            ));
        }
        None => return Err("an unknown version".into()),
    }
    match incoming.parse::<Response>() {
        Ok(Response::VersionMismatch { daemon }) => Err(format!(
            "lspgate {} (protocol {})",
            daemon.lspgate_version, daemon.protocol
        )),
        Ok(r) => Ok(r),
        Err(e) => Err(format!("a daemon whose answer we cannot read ({e})")),
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Connect to the daemon, starting it when nothing listens (no socket, or a stale one
/// of a daemon that died). Several CLIs may do this at once: every daemon started but
/// the one that takes the lock exits at once, and all CLIs end up on the same socket.
fn connect_or_spawn(paths: &Paths, workspace: &Path) -> Result<UnixStream, String> {
    // `sun_path` holds 108 bytes on Linux, 104 on macOS: a longer path cannot be bound.
    if paths.socket.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(format!(
            "the socket path {} is too long for a Unix socket",
            paths.socket.display()
        ));
    }
    let deadline = Instant::now() + CONNECT_BOUND;
    let mut child: Option<Child> = None;
    let mut last_spawn: Option<Instant> = None;
    let mut backoff = Duration::from_millis(1);
    loop {
        let error = match UnixStream::connect(&paths.socket) {
            Ok(s) => {
                reap_later(child);
                return Ok(s);
            }
            Err(e) => e,
        };
        // Reaps a started daemon that exited, so it leaves no zombie behind. One
        // that lost the lock exits 0 (another daemon is starting or on its way out:
        // try again); any other exit is a failure that trying again will not cure.
        let running = match child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => true,
            Some(Ok(Some(status))) if !status.success() => {
                return Err(format!(
                    "the daemon failed to start ({status}; log: {})",
                    paths.log.display()
                ));
            }
            _ => false,
        };
        if !running && last_spawn.is_none_or(|t| t.elapsed() >= RESPAWN_EVERY) {
            child = Some(
                spawn(paths, workspace).map_err(|e| format!("could not start the daemon: {e}"))?,
            );
            last_spawn = Some(Instant::now());
        }
        let now = Instant::now();
        if now >= deadline {
            reap_later(child);
            return Err(format!(
                "the daemon did not answer within {}s ({error}; log: {})",
                CONNECT_BOUND.as_secs(),
                paths.log.display()
            ));
        }
        // Polling connect is the readiness check: a daemon binds within milliseconds.
        std::thread::sleep(backoff.min(deadline - now));
        backoff = (backoff * 2).min(Duration::from_millis(50));
    }
}

/// Wait for a daemon this process started on a thread of its own: a long-lived client
/// (`lspgate mcp`) outlives the daemons it starts, and each that exits (idle, stopped,
/// replaced) would otherwise stay a zombie until the client exits.
fn reap_later(child: Option<Child>) {
    if let Some(mut child) = child {
        let _ = std::thread::Builder::new()
            .name("daemon-reaper".into())
            .spawn(move || child.wait());
    }
}

/// Connect to a running daemon; never starts one.
fn connect(paths: &Paths) -> Option<UnixStream> {
    UnixStream::connect(&paths.socket).ok()
}

/// Re-execute this binary as the daemon, detached: stdin and stdout on /dev/null,
/// stderr on the log, working directory `/`. The daemon calls setsid itself.
fn spawn(paths: &Paths, workspace: &Path) -> io::Result<Child> {
    let exe = std::env::current_exe()?;
    let log = open_log(&paths.log)?;
    Command::new(exe)
        .arg(SUBCOMMAND)
        .arg("--workspace")
        .arg(workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log))
        .current_dir("/")
        .spawn()
}

fn open_log(path: &Path) -> io::Result<File> {
    let too_big = fs::metadata(path).is_ok_and(|m| m.len() > MAX_LOG);
    let mut options = OpenOptions::new();
    options.create(true).mode(0o600);
    if too_big {
        options.write(true).truncate(true);
    } else {
        options.append(true);
    }
    options.open(path)
}

/// One short request and its answer (status, stop).
fn exchange(stream: &UnixStream, request: &RequestRef<'_>) -> Result<Response, String> {
    let me = Identity::current();
    let frame = protocol::encode(&me, request).map_err(|e| e.to_string())?;
    protocol::write_frame(stream, &frame, Instant::now() + EXCHANGE_BOUND)
        .map_err(|e| format!("sending to the daemon: {e}"))?;
    let mut reader = Deadlined::reader(stream);
    match protocol::read_frame(&mut reader, Instant::now() + EXCHANGE_BOUND) {
        Ok(Some(m)) => answer(m, &me).or_else(|who| {
            Ok(Response::VersionMismatch {
                daemon: Identity {
                    protocol: 0,
                    lspgate_version: who,
                    build: String::new(),
                },
            })
        }),
        Ok(None) => Err("the daemon closed the connection".into()),
        Err(e) => Err(format!("reading the daemon's answer: {e}")),
    }
}

/// Wait until the daemon is gone: its process, if known, else its socket file (the
/// first thing an exiting daemon removes). Returns false if it is still there at the
/// bound.
fn wait_gone(paths: &Paths, pid: Option<u32>) -> bool {
    let deadline = Instant::now() + STOP_BOUND;
    let mut backoff = Duration::from_millis(1);
    loop {
        let gone = match pid {
            Some(pid) => !paths::process_alive(pid),
            None => fs::symlink_metadata(&paths.socket).is_err(),
        };
        if gone {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::sleep(backoff.min(deadline - now));
        backoff = (backoff * 2).min(Duration::from_millis(50));
    }
}

/// The status of every daemon with a socket in `dir`, by workspace. Sockets nobody
/// listens on (a daemon that died) are passed over, and so are daemons of another
/// version: hearing from us, they exit, as they would at the next run of their
/// workspace.
pub(crate) fn all_statuses(dir: &Path) -> Vec<Status> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut statuses: Vec<Status> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sock"))
        .filter_map(|socket| {
            let stream = UnixStream::connect(&socket).ok()?;
            match exchange(&stream, &RequestRef::Status) {
                Ok(Response::Status(status)) => Some(*status),
                _ => None,
            }
        })
        .collect();
    statuses.sort_by(|a, b| a.workspace.cmp(&b.workspace));
    statuses
}

/// What a cache query asks for.
#[derive(Debug, Clone, Copy)]
pub enum Cache {
    Diagnostics,
    Logs,
    Messages,
}

/// The answer to a cache query.
pub enum Cached {
    Diagnostics(Vec<CachedFile>),
    Lines(Vec<MessageLine>),
}

/// Ask `workspace`'s running daemon for a part of its cache; `Ok(None)` when no daemon
/// runs (none is started: an empty cache is all a new one would have).
pub fn query(workspace: &Path, what: Cache, query: &CacheQuery) -> anyhow::Result<Option<Cached>> {
    let paths = Paths::for_workspace(workspace)
        .map_err(|e| anyhow::anyhow!("daemon runtime directory: {e}"))?;
    let Some(stream) = connect(&paths) else {
        return Ok(None);
    };
    let request = match what {
        Cache::Diagnostics => RequestRef::Diagnostics(query),
        Cache::Logs => RequestRef::Logs(query),
        Cache::Messages => RequestRef::Messages(query),
    };
    match exchange(&stream, &request) {
        Ok(Response::Diagnostics(files)) => Ok(Some(Cached::Diagnostics(files))),
        Ok(Response::Lines(lines)) => Ok(Some(Cached::Lines(lines))),
        // Another version: it exits on hearing us, and its cache goes with it.
        Ok(Response::VersionMismatch { .. }) => Ok(None),
        Ok(other) => anyhow::bail!("unexpected answer from the daemon: {other:?}"),
        Err(e) => anyhow::bail!("{e} (daemon log: {})", paths.log.display()),
    }
}

pub(crate) fn status(paths: &Paths) -> Option<Status> {
    let stream = connect(paths)?;
    match exchange(&stream, &RequestRef::Status) {
        Ok(Response::Status(status)) => Some(*status),
        // Another version (it exits on hearing us) or no sensible answer: none of ours.
        _ => None,
    }
}

pub(crate) fn start(paths: &Paths, workspace: &Path) -> anyhow::Result<String> {
    for _ in 0..ATTEMPTS {
        let stream = connect_or_spawn(paths, workspace).map_err(|e| anyhow::anyhow!(e))?;
        match exchange(&stream, &RequestRef::Status) {
            Ok(Response::Status(status)) => {
                return Ok(format!("daemon running (pid {})", status.pid));
            }
            // Another version: it exits now; start ours once it is gone.
            Ok(Response::VersionMismatch { .. }) => {
                wait_gone(paths, None);
            }
            _ => {}
        }
    }
    anyhow::bail!("the daemon did not start (log: {})", paths.log.display())
}

pub(crate) fn stop(paths: &Paths) -> anyhow::Result<String> {
    let Some(stream) = connect(paths) else {
        return Ok("no daemon running".into());
    };
    let pid = match exchange(&stream, &RequestRef::Stop) {
        Ok(Response::Stopping { pid }) => Some(pid),
        // Another version exits on hearing us; anything else: go by the socket.
        _ => None,
    };
    if wait_gone(paths, pid) {
        return Ok(match pid {
            Some(pid) => format!("stopped the daemon (pid {pid})"),
            None => "stopped the daemon".into(),
        });
    }
    if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
        // It was told to stop and did not: its servers are its children and die with
        // their stdin when it does.
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        if wait_gone(paths, Some(pid.as_raw_pid() as u32)) {
            return Ok(format!(
                "killed the daemon (pid {}) after it did not stop within {}s",
                pid.as_raw_pid(),
                STOP_BOUND.as_secs()
            ));
        }
    }
    anyhow::bail!(
        "the daemon did not stop within {}s (log: {})",
        STOP_BOUND.as_secs(),
        paths.log.display()
    )
}
