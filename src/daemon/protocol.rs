//! What the CLI and the daemon say to each other over the socket, and how it is
//! framed.
//!
//! Framing is LSP's: a `Content-Length: N` header, a blank line, N bytes of JSON.
//! Every message is an object whose `protocol`, `lspgate_version` and `build` (an
//! [`Identity`]) are read before its `body`, so two different lspgates can always
//! tell that they differ, whatever the rest of their messages look like. The CLI sends one
//! request per connection; for a run the daemon answers [`Response::Started`] when it
//! takes the run up (so the CLI knows the edit may be applied from then on), then, if
//! the CLI asked for them, [`Response::Progress`] messages while the run waits, then
//! the report. The other requests get one answer each.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::check::Job;
use crate::edit::{EditPlan, FileChange};
use crate::model::Options;
use crate::model::Report;
use crate::servers::ServerSpec;

/// Bumped whenever a message changes shape. 2: progress, the cache queries
/// (diagnostics, logs, messages) and crash counts in the status. 3: the client's umask
/// and trust in a run, the exit status in `Failed`. 4: a run's file contents follow
/// its frame raw ([`WireJob`]). 5: `Failed` carries the failure's kind
/// (`error::Failure`), not an exit status. 6: a report's notes are typed
/// (`model::Note`), a server's report carries its reasons, not a detail text, and a
/// report its outcome (`exit::Outcome`), not an exit status: no number crosses. 7: a
/// server's waits carry its way of reporting as one value (`servers::Delivery`),
/// not a flag for each.
pub const PROTOCOL: u32 = 8;

/// Frames carry no file contents (those follow a run's frame raw): generous, but
/// bounded so that garbage on the socket cannot take the daemon's memory.
pub const MAX_FRAME: usize = 512 * 1024 * 1024;

/// The file contents of one run, in all: bounded like a frame.
pub const MAX_CONTENTS: u64 = 4 * 1024 * 1024 * 1024;

/// Who is speaking: two sides whose identities differ do not talk further.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub protocol: u32,
    pub lspgate_version: String,
    /// The executable's modification time: a rebuilt or upgraded binary of the same
    /// version still replaces its daemon. Empty when unknown (then not compared).
    #[serde(default)]
    pub build: String,
}

impl Identity {
    /// This process's identity. In debug builds `LSPGATE_VERSION_OVERRIDE` replaces
    /// the version, so tests can make a daemon of "another version".
    pub fn current() -> Identity {
        let mut version = env!("CARGO_PKG_VERSION").to_string();
        if cfg!(debug_assertions)
            && let Ok(v) = std::env::var("LSPGATE_VERSION_OVERRIDE")
            && !v.is_empty()
        {
            version = v;
        }
        Identity {
            protocol: PROTOCOL,
            lspgate_version: version,
            build: build_id(),
        }
    }

    /// Whether a peer with identity `other` speaks our language.
    pub fn compatible(&self, other: &Identity) -> bool {
        self.protocol == other.protocol
            && self.lspgate_version == other.lspgate_version
            && (self.build.is_empty() || other.build.is_empty() || self.build == other.build)
    }
}

fn build_id() -> String {
    std::env::current_exe()
        .and_then(std::fs::metadata)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos().to_string())
        .unwrap_or_default()
}

/// A run, as the CLI sends it (borrowing what it already holds).
#[derive(Serialize)]
pub struct RunRef<'a> {
    pub workspace: &'a Path,
    pub run_dir: &'a Path,
    pub servers: &'a [ServerSpec],
    pub options: &'a Options,
    /// The job without its file contents, which follow the frame.
    pub job: WireJob,
    /// Send [`Response::Progress`] while the run waits (the CLI draws a status line).
    pub progress: bool,
    /// The client's file creation mask: the files the daemon writes for the run get
    /// the permissions the client's own write would have given them.
    pub umask: u32,
    /// `--trust-project` or `LSPGATE_TRUST_PROJECT`: the daemon checks the servers it
    /// is asked to run against the configuration it reads itself under this trust.
    pub trust_project: bool,
    /// What the run asks of the daemon's views of the tree (`check --changed`'s).
    pub views: crate::check::Views,
}

/// A run, as the daemon receives it: a `check::Context` and a `Job`.
#[derive(Deserialize)]
pub struct RunRequest {
    pub workspace: PathBuf,
    pub run_dir: PathBuf,
    pub servers: Vec<ServerSpec>,
    pub options: Options,
    pub job: WireJob,
    pub progress: bool,
    pub umask: u32,
    pub trust_project: bool,
    #[serde(default)]
    pub views: crate::check::Views,
}

/// A job as its frame carries it. Its file contents are not in the JSON: serde_json
/// writes bytes as an array of numbers (four to five bytes of text a byte) and reads
/// them through a `Value` a byte (32 bytes each), so a 50 MB write cost the daemon
/// over 3 GB. They follow the frame, raw, in the order the changes list them (each
/// change's before, then its after); the frame gives their lengths.
#[derive(Debug, Serialize, Deserialize)]
pub enum WireJob {
    Edit(WirePlan),
    Check(Vec<PathBuf>),
    Review(WirePlan),
}

/// An [`EditPlan`] without its contents.
#[derive(Debug, Serialize, Deserialize)]
pub struct WirePlan {
    pub changes: Vec<WireChange>,
}

/// A [`FileChange`] whose contents are their lengths.
#[derive(Debug, Serialize, Deserialize)]
pub struct WireChange {
    pub path: PathBuf,
    pub renamed_from: Option<PathBuf>,
    pub before: Option<u64>,
    pub after: Option<u64>,
    pub mode: Option<u32>,
}

impl WireJob {
    /// `job` for the frame, and the contents to send after it, in order.
    pub fn split(job: &Job) -> (WireJob, Vec<&[u8]>) {
        let mut contents = Vec::new();
        let wire = |plan: &'_ EditPlan| WirePlan {
            changes: plan
                .changes
                .iter()
                .map(|c| WireChange {
                    path: c.path.clone(),
                    renamed_from: c.renamed_from.clone(),
                    before: c.before.as_deref().map(|b| b.len() as u64),
                    after: c.after.as_deref().map(|b| b.len() as u64),
                    mode: c.mode,
                })
                .collect(),
        };
        let shape = match job {
            Job::Edit(plan) => WireJob::Edit(wire(plan)),
            Job::Review(plan) => WireJob::Review(wire(plan)),
            Job::Check(paths) => WireJob::Check(paths.clone()),
        };
        if let Job::Edit(plan) | Job::Review(plan) = job {
            for c in &plan.changes {
                contents.extend(c.before.as_deref());
                contents.extend(c.after.as_deref());
            }
        }
        (shape, contents)
    }

    /// How many bytes of contents follow the frame.
    pub fn content_length(&self) -> u64 {
        match self {
            WireJob::Edit(plan) | WireJob::Review(plan) => plan
                .changes
                .iter()
                .flat_map(|c| [c.before, c.after])
                .map(|n| n.unwrap_or(0))
                .fold(0u64, u64::saturating_add),
            WireJob::Check(_) => 0,
        }
    }

    /// The whole job: its contents read from `reader`, where they follow the frame,
    /// giving up at `deadline`. Each content is read into a buffer of its size, once.
    pub fn join(self, reader: &mut BufReader<Deadlined<'_>>, deadline: Instant) -> io::Result<Job> {
        let total = self.content_length();
        if total > MAX_CONTENTS {
            return Err(bad(&format!(
                "{total} bytes of file contents, over the cap"
            )));
        }
        reader.get_mut().deadline = deadline;
        let mut read = |len: Option<u64>| -> io::Result<Option<Vec<u8>>> {
            let Some(len) = len else { return Ok(None) };
            let len = usize::try_from(len).map_err(|_| bad("a content too large"))?;
            let mut bytes = vec![0; len];
            reader.read_exact(&mut bytes)?;
            Ok(Some(bytes))
        };
        let mut plan = |wire: WirePlan| -> io::Result<EditPlan> {
            let mut plan = EditPlan::default();
            for c in wire.changes {
                let before = read(c.before)?;
                let after = read(c.after)?;
                plan.changes.push(FileChange {
                    path: c.path,
                    renamed_from: c.renamed_from,
                    before,
                    after,
                    mode: c.mode,
                });
            }
            Ok(plan)
        };
        Ok(match self {
            WireJob::Edit(wire) => Job::Edit(plan(wire)?),
            WireJob::Review(wire) => Job::Review(plan(wire)?),
            WireJob::Check(paths) => Job::Check(paths),
        })
    }
}

/// How long sending or reading `bytes` of file contents may take, on top of the
/// exchange's own bound: at least 16 MiB a second, which any local socket does.
pub fn transfer_bound(bytes: u64) -> Duration {
    Duration::from_secs(bytes / (16 * 1024 * 1024))
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestRef<'a> {
    Run(RunRef<'a>),
    Status,
    Stop,
    Diagnostics(&'a CacheQuery),
    Logs(&'a CacheQuery),
    Messages(&'a CacheQuery),
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    Run(Box<RunRequest>),
    Status,
    Stop,
    /// The diagnostics the servers hold: [`Response::Diagnostics`].
    Diagnostics(CacheQuery),
    /// The `window/logMessage` rings: [`Response::Lines`].
    Logs(CacheQuery),
    /// The `window/showMessage` rings: [`Response::Lines`].
    Messages(CacheQuery),
}

/// What to read of the daemon's cache.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CacheQuery {
    /// Diagnostics: only this file, or the files under this directory (absolute).
    pub path: Option<PathBuf>,
    /// Logs and messages: the last N of each server.
    pub limit: Option<usize>,
    /// Logs: only messages of this LSP `MessageType` or more severe (1 error ... 4 log).
    pub level: Option<i32>,
}

/// One file's diagnostics as the warm servers hold them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedFile {
    pub path: PathBuf,
    pub diagnostics: Vec<lsp_types::Diagnostic>,
}

/// One logged or shown message of a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageLine {
    pub server: String,
    pub root: PathBuf,
    /// LSP `MessageType`: 1 error, 2 warning, 3 info, 4 log (5 debug).
    pub level: i32,
    pub message: String,
}

pub use crate::model::progress::Busy;

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    /// The run is taken up: from now on the edit may be applied.
    Started,
    Report(Box<Report>),
    /// The run could not be made (an edit that failed to commit, say); nothing of it
    /// is reported. Bad input (nothing was written), a partly written edit, or lost
    /// (the daemon failed during the run: the edit may have been applied).
    Failed(crate::error::Failure),
    Status(Box<Status>),
    /// Answer to `stop`: the daemon exits once it has shut its servers down.
    Stopping {
        pid: u32,
    },
    /// The peer differs; the daemon exits after saying so, for the CLI to replace it.
    VersionMismatch {
        daemon: Identity,
    },
    /// The daemon is going away without having started this run: try again.
    Exiting,
    /// While a run waits (when asked for): the live servers and their progress.
    Progress(Vec<Busy>),
    Diagnostics(Vec<CachedFile>),
    /// Logs or messages, each server's oldest first.
    Lines(Vec<MessageLine>),
}

/// What `daemon status` shows.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Status {
    pub pid: u32,
    pub lspgate_version: String,
    pub workspace: PathBuf,
    pub socket: PathBuf,
    pub log: PathBuf,
    pub uptime_ms: u64,
    pub idle_timeout_ms: u64,
    pub runs: u64,
    /// Resident memory, where the system tells (Linux).
    pub rss_kib: Option<u64>,
    pub servers: Vec<ServerInfo>,
    /// Directories the file system watcher watches.
    #[serde(default)]
    pub watched_directories: usize,
    /// Server roots the watcher does not cover, each with why: walked before every run.
    #[serde(default)]
    pub unwatched: Vec<(PathBuf, String)>,
}

/// How much of a server's project the daemon holds its word on, pulled between runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullStatus {
    /// The files of its project (none when it has more than `budget`).
    pub files: usize,
    /// Those whose answer holds now.
    pub held: usize,
    /// Those still to ask, or under way.
    pub waiting: usize,
    /// Files pulled at most (`coverage.idle_pulls`).
    pub budget: usize,
    /// Why none is pulled (a project larger than the budget).
    pub skipped: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerInfo {
    pub name: String,
    pub root: PathBuf,
    pub pid: u32,
    /// `initializing`, `ready` or `dead: REASON`.
    pub state: String,
    pub uptime_ms: u64,
    pub open_documents: usize,
    pub rss_kib: Option<u64>,
    /// What the daemon asks it about between runs (`daemon::pulls`), for a server it
    /// does that for.
    #[serde(default)]
    pub between_runs: Option<PullStatus>,
    /// Crashes of this server (name at root) since the daemon started, and how long
    /// ago the last one was.
    pub crashes: u32,
    pub last_crash_ms: Option<u64>,
}

/// Resident memory of `pid` in KiB, from /proc (Linux only).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Serialize and frame `body` from `identity`.
pub fn encode<B: Serialize>(identity: &Identity, body: &B) -> io::Result<Vec<u8>> {
    #[derive(Serialize)]
    struct Out<'a, B> {
        #[serde(flatten)]
        identity: &'a Identity,
        body: &'a B,
    }
    let json = serde_json::to_vec(&Out { identity, body }).map_err(io::Error::other)?;
    let mut framed = format!("Content-Length: {}\r\n\r\n", json.len()).into_bytes();
    framed.extend_from_slice(&json);
    Ok(framed)
}

/// Write a whole frame, giving up at `deadline`.
pub fn write_frame(stream: &UnixStream, frame: &[u8], deadline: Instant) -> io::Result<()> {
    write_frame_with(stream, frame, &[], deadline)
}

/// Write a whole frame and the contents that follow it ([`WireJob`]), giving up at
/// `deadline`.
pub fn write_frame_with(
    stream: &UnixStream,
    frame: &[u8],
    contents: &[&[u8]],
    deadline: Instant,
) -> io::Result<()> {
    let mut w = Deadlined { stream, deadline };
    w.write_all(frame)?;
    for content in contents {
        w.write_all(content)?;
    }
    w.flush()
}

/// A message as read, before its body is trusted to have our shape.
pub struct Incoming {
    /// `None` when the peer sent no identity we can read: another protocol.
    pub identity: Option<Identity>,
    pub body: Value,
}

impl Incoming {
    /// The body as `B`; only meaningful once the identity is compatible.
    pub fn parse<B: serde::de::DeserializeOwned>(self) -> io::Result<B> {
        serde_json::from_value(self.body).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// Read one frame, giving up at `deadline`. `Ok(None)` on a clean end of stream
/// before any byte of a frame.
pub fn read_frame(
    reader: &mut BufReader<Deadlined<'_>>,
    deadline: Instant,
) -> io::Result<Option<Incoming>> {
    reader.get_mut().deadline = deadline;
    let mut length: Option<usize> = None;
    let mut first = true;
    loop {
        let mut line = Vec::new();
        let n = reader.by_ref().take(1024).read_until(b'\n', &mut line)?;
        if n == 0 {
            return if first {
                Ok(None)
            } else {
                Err(io::ErrorKind::UnexpectedEof.into())
            };
        }
        first = false;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        if let Some((name, value)) = text.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok();
        }
    }
    let length = length.ok_or_else(|| bad("a frame without Content-Length"))?;
    if length > MAX_FRAME {
        return Err(bad(&format!("a {length}-byte frame, over the cap")));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let value: Value = serde_json::from_slice(&body).map_err(|e| bad(&e.to_string()))?;
    // The body is taken out before the identity is read: no copy of it is made.
    let (identity, body) = match value {
        Value::Object(mut map) => {
            let body = map.remove("body").unwrap_or(Value::Null);
            let identity = serde_json::from_value::<Identity>(Value::Object(map)).ok();
            (identity, body)
        }
        _ => (None, Value::Null),
    };
    Ok(Some(Incoming { identity, body }))
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// A reader of a reader and writer to the socket that never blocks past its
/// deadline: every call sets the socket's timeout to the time left.
pub struct Deadlined<'a> {
    pub stream: &'a UnixStream,
    pub deadline: Instant,
}

impl<'a> Deadlined<'a> {
    pub fn reader(stream: &'a UnixStream) -> BufReader<Deadlined<'a>> {
        BufReader::new(Deadlined {
            stream,
            deadline: Instant::now(),
        })
    }

    fn left(&self) -> io::Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        Ok(left)
    }
}

impl Read for Deadlined<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.set_read_timeout(Some(self.left()?))?;
        (&*self.stream).read(buf)
    }
}

impl Write for Deadlined<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream.set_write_timeout(Some(self.left()?))?;
        (&*self.stream).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&*self.stream).flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_round_trips_with_its_identity() {
        let (a, b) = UnixStream::pair().expect("pair");
        let me = Identity::current();
        let frame = encode(&me, &Response::Stopping { pid: 7 }).expect("encode");
        write_frame(&a, &frame, Instant::now() + Duration::from_secs(5)).expect("write");
        drop(a);
        let mut reader = Deadlined::reader(&b);
        let got = read_frame(&mut reader, Instant::now() + Duration::from_secs(5))
            .expect("read")
            .expect("a frame");
        assert_eq!(got.identity.as_ref(), Some(&me));
        match got.parse::<Response>().expect("parse") {
            Response::Stopping { pid } => assert_eq!(pid, 7),
            other => panic!("unexpected {other:?}"),
        }
        assert!(
            read_frame(&mut reader, Instant::now() + Duration::from_secs(5))
                .expect("eof")
                .is_none()
        );
    }

    #[test]
    fn a_jobs_contents_follow_its_frame_raw_and_come_back_whole() {
        let change = |path: &str, before: Option<&[u8]>, after: Option<&[u8]>| FileChange {
            path: PathBuf::from(path),
            renamed_from: None,
            before: before.map(<[u8]>::to_vec),
            after: after.map(<[u8]>::to_vec),
            mode: Some(0o644),
        };
        let plan = EditPlan {
            changes: vec![
                change("/w/new", None, Some(b"\xff\x00new")),
                change("/w/gone", Some(b"old"), None),
                change("/w/both", Some(b""), Some(b"after")),
            ],
        };
        let job = Job::Edit(plan.clone());
        let (wire, contents) = WireJob::split(&job);
        assert_eq!(wire.content_length(), 5 + 3 + 5);
        let frame = encode(&Identity::current(), &wire).expect("encode");
        // The frame holds lengths, not bytes.
        assert!(frame.len() < 400, "{}", String::from_utf8_lossy(&frame));
        let (a, b) = UnixStream::pair().expect("pair");
        let deadline = Instant::now() + Duration::from_secs(5);
        write_frame_with(&a, &frame, &contents, deadline).expect("write");
        drop(a);
        let mut reader = Deadlined::reader(&b);
        let wire: WireJob = read_frame(&mut reader, deadline)
            .expect("read")
            .expect("a frame")
            .parse()
            .expect("parse");
        match wire.join(&mut reader, deadline).expect("join") {
            Job::Edit(got) => assert_eq!(got, plan),
            _ => panic!("not an edit"),
        }
    }

    #[test]
    fn a_silent_peer_costs_the_deadline_only() {
        let (_a, b) = UnixStream::pair().expect("pair");
        let mut reader = Deadlined::reader(&b);
        let start = Instant::now();
        let err = read_frame(&mut reader, Instant::now() + Duration::from_millis(100))
            .err()
            .expect("timeout");
        assert!(
            matches!(
                err.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            "{err:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn identities_differing_in_version_or_build_are_incompatible() {
        let me = Identity {
            protocol: 1,
            lspgate_version: "1.0.0".into(),
            build: "5".into(),
        };
        let mut other = me.clone();
        assert!(me.compatible(&other));
        other.build = String::new();
        assert!(me.compatible(&other));
        other.build = "6".into();
        assert!(!me.compatible(&other));
        other.build = "5".into();
        other.lspgate_version = "1.0.1".into();
        assert!(!me.compatible(&other));
    }
}
