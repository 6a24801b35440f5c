//! Reliability (issue 5): faults, hostile input, concurrency and path safety, each
//! shown by a test that can fail, with the figures `RELIABILITY.md` quotes. The cases
//! `tests/fake.rs` and `tests/daemon.rs` already cover are not repeated here; the
//! table in `RELIABILITY.md` points at them.
//!
//! - `faults`: a misbehaving server (huge, wide, garbled, unknown and flooding
//!   messages, future versions) costs at most the timeouts plus a second, keeps the
//!   CLI's peak memory bounded, leaves the edit applied and no process behind;
//! - `daemon`: the warm daemon killed, its server killed, its client gone mid-run,
//!   and many clients at once (`LSPGATE_SOAK=1` for the long soak);
//! - `input`: patches compared with `git apply` on random trees, the patch planner
//!   and the LSP frame reader on random bytes, a corpus of malformed patches;
//! - `paths`: writes that would leave the workspace or enter `.git`, server commands
//!   and untrusted configuration;
//! - `crash`: lspgate killed at random moments while committing a multi-file patch;
//! - `text`: non-UTF-8 and very large files, and columns on non-ASCII lines;
//! - `resources` (issue 29): a 50 MB write through the daemon, a publish too large to
//!   read (fake server and pyright), an MCP line over its limit.
//! - `swap`, `reads`, `names` (issue 29): a directory swapped for a symlink out between
//!   planning and commit, `check` outside the workspace and of a FIFO, file names
//!   holding control characters.
//!
//! Figures are printed on stderr as `figure: ...` lines (`cargo test -- --nocapture`
//! shows them).

mod closed;
mod crash;
mod daemon;
mod faults;
mod input;
mod names;
mod paths;
mod reads;
mod resources;
mod swap;
mod text;
mod trust;

use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use crate::support::Test;
use crate::support::process::{alive, eventually, kill};

/// The watchdog of a measured run: far beyond every bound a test asserts.
const WATCHDOG: Duration = Duration::from_secs(60);

/// Prints one figure for `RELIABILITY.md`.
#[allow(clippy::print_stderr)]
fn figure(text: &str) {
    eprintln!("figure: {text}");
}

/// One run of lspgate with its peak memory, measured by the kernel.
#[derive(Debug)]
struct Measured {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    /// The process's peak resident set size, KiB (see [`measured`]).
    peak_kib: u64,
    /// What the fake servers logged and their pids, read at exit: the test's
    /// directories may be gone by the time a check runs.
    fake_log: String,
    fake_pids: Vec<u32>,
}

impl std::fmt::Display for Measured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "exit {:?} after {:?}, peak RSS {} KiB",
            self.code, self.elapsed, self.peak_kib
        )?;
        writeln!(f, "--- stdout ---\n{}", self.stdout)?;
        let mut stderr = self.stderr.clone();
        if stderr.len() > 4000 {
            let mut cut = 4000;
            while !stderr.is_char_boundary(cut) {
                cut -= 1;
            }
            stderr.truncate(cut);
        }
        writeln!(f, "--- stderr ---\n{stderr}")
    }
}

impl Measured {
    /// The summary's `note:` lines.
    fn notes(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|line| line.trim_start().starts_with("note:"))
            .collect()
    }

    /// The lines of the `<NAME>` block, if it is there.
    fn block(&self, name: &str) -> Option<Vec<&str>> {
        let open = format!("<{name}>\n");
        let start = self.stdout.find(&open)? + open.len();
        let end = start + self.stdout[start..].find(&format!("</{name}>"))?;
        Some(self.stdout[start..end].lines().collect())
    }

    fn fake_pids(&self) -> Vec<u32> {
        self.fake_pids.clone()
    }

    /// The fake server's log, one JSON value per line.
    fn fake_log(&self) -> Vec<serde_json::Value> {
        self.fake_log
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    #[track_caller]
    fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "unexpected exit status\n{self}");
        self
    }

    /// Every fake server this run started is gone (a zombie counts as gone), after a
    /// short grace for the kernel; fails if none was started.
    #[track_caller]
    fn assert_no_orphans(&self) -> &Self {
        let pids = self.fake_pids();
        assert!(!pids.is_empty(), "no fake server was started\n{self}");
        let gone = eventually(Duration::from_secs(5), || {
            pids.iter().all(|&pid| !alive_named(pid, "fake-lsp"))
        });
        if !gone {
            for &pid in &pids {
                kill(pid);
            }
            panic!("fake servers {pids:?} outlived lspgate\n{self}");
        }
        self
    }
}

/// Runs `test`'s command, measuring its peak memory; fails the test if it outlives
/// the watchdog.
///
/// The peak is the kernel's high-water mark of the process's resident set
/// (`VmHWM` in `/proc/PID/status`), polled every few milliseconds while it runs. Not
/// `ru_maxrss` from `wait4`: Linux carries the RSS of the memory image a process had
/// before `exec` into it, which for a child of this test binary is the test binary's
/// own. Polling can miss growth in the last milliseconds before exit, which is spent
/// stopping servers, not reading their messages.
#[track_caller]
fn measured(test: &Test, stdin: &[u8]) -> Measured {
    let mut cmd = test.to_command();
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn lspgate");
    let pid = child.id();
    let mut input = child.stdin.take().expect("piped stdin");
    let stdin = stdin.to_vec();
    thread::spawn(move || input.write_all(&stdin));
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let (done_tx, done_rx) = crossbeam_channel::bounded(1);
    let waiter = thread::spawn(move || {
        let status = child.wait();
        let _ = done_tx.send(());
        status
    });
    let mut peak_kib = 0;
    let deadline = start + WATCHDOG;
    loop {
        // Read before checking for the exit: a value read while it ran is its own.
        let hwm = vm_hwm_kib(pid);
        match done_rx.recv_timeout(Duration::from_millis(2)) {
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                peak_kib = peak_kib.max(hwm.unwrap_or(0));
            }
            _ => break,
        }
        if Instant::now() >= deadline {
            kill(pid);
            kill_all(&fake_pids(&test.private_dir("fake")));
            panic!("watchdog: lspgate still running after {WATCHDOG:?}, killed");
        }
    }
    let status = waiter.join().expect("waiter").expect("wait for lspgate");
    let elapsed = start.elapsed();
    let bound = Duration::from_secs(10);
    let run = Measured {
        code: status.code(),
        stdout: stdout.recv_timeout(bound).unwrap_or_default(),
        stderr: stderr.recv_timeout(bound).unwrap_or_default(),
        elapsed,
        peak_kib,
        fake_log: fs::read_to_string(test.private_dir("fake").join("log.jsonl"))
            .unwrap_or_default(),
        fake_pids: fake_pids(&test.private_dir("fake")),
    };
    assert!(
        !run.stderr.contains("panicked at"),
        "lspgate panicked\n{run}"
    );
    run
}

/// A process's peak resident set so far, KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    status_field_kib(pid, "VmHWM:")
}

/// A `kB` field of `/proc/PID/status`.
pub(super) fn status_field_kib(pid: u32, field: &str) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

fn drain(mut pipe: impl Read + Send + 'static) -> crossbeam_channel::Receiver<String> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

fn fake_pids(fake_dir: &Path) -> Vec<u32> {
    fs::read_to_string(fake_dir.join("pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

fn kill_all(pids: &[u32]) {
    for &pid in pids {
        if alive(pid) {
            kill(pid);
        }
    }
}

/// Whether `pid` runs and its command line mentions `name` (against pid reuse).
fn alive_named(pid: u32, name: &str) -> bool {
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    alive(pid) && String::from_utf8_lossy(&cmdline).contains(name)
}
