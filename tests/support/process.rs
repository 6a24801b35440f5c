//! Processes the tests start and must not leave behind: whether one runs, killing
//! it, finding a workspace's daemons, and a guard that stops a test's daemon and
//! whatever is left of it and its fake servers, pass or fail.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use super::{Test, kill_fake_servers};

/// How long `daemon stop` may take in a guard's drop before what is left is killed.
const STOP_BOUND: Duration = Duration::from_secs(20);

pub fn kill(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Whether `pid` runs (a zombie has exited; a container's init may never reap it).
pub fn alive(pid: u32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) state ...`; comm may hold spaces and parentheses.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    state.is_some_and(|s| s != "Z" && s != "X")
}

/// Polls `done` until it holds or `bound` passes; returns whether it held.
pub fn eventually(bound: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + bound;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// The live daemons of `workspace`: processes run as `lspgate __daemon --workspace WS`.
pub fn daemon_pids(workspace: &Path) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let is_ours = args.len() >= 4
            && args[1] == b"__daemon"
            && args[2] == b"--workspace"
            && args[3] == workspace.as_os_str().as_encoded_bytes();
        if is_ours && alive(pid) {
            pids.push(pid);
        }
    }
    pids
}

/// Stops the test's daemon when dropped (`lspgate daemon stop`, bounded), then kills
/// whatever is left of it and of its fake servers.
pub struct DaemonGuard {
    stop: Command,
    workspace: PathBuf,
    fake: PathBuf,
}

impl DaemonGuard {
    pub fn new(test: &Test) -> DaemonGuard {
        let mut stop = test.to_command();
        stop.args(["daemon", "stop"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        DaemonGuard {
            stop,
            workspace: test.workspace().to_path_buf(),
            fake: test.private_dir("fake"),
        }
    }
}

impl Drop for DaemonGuard {
    fn drop(&mut self) {
        if let Ok(mut child) = self.stop.spawn() {
            let stopped = eventually(STOP_BOUND, || !matches!(child.try_wait(), Ok(None)));
            if !stopped {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
        for pid in daemon_pids(&self.workspace) {
            kill(pid);
        }
        kill_fake_servers(&self.fake);
    }
}
