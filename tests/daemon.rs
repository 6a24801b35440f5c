//! The warm daemon end to end, with the fake server: the first run starts it and later
//! runs reuse its server; files changed behind its back are seen; `daemon stop|status`;
//! a stale socket, a killed daemon and a daemon of another version are replaced; ten
//! runs at once on a cold workspace share one daemon.
//!
//! Every test stops its daemon at the end, and a [`Guard`] stops (then kills) it and
//! its servers when a test fails half-way. Waits poll with deadlines, never sleep as
//! synchronisation.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Output, Test};

/// How long a process may take to go away once told to.
const GONE: Duration = Duration::from_secs(10);

/// Stops the test's daemon when dropped, then kills whatever is left of it and of its
/// fake servers, so no test leaves a process behind, pass or fail.
struct Guard {
    workspace: PathBuf,
    runtime: PathBuf,
    fake: PathBuf,
}

impl Guard {
    fn new(test: &Test) -> Guard {
        Guard {
            workspace: test.workspace().to_path_buf(),
            runtime: test.private_dir("runtime").join("lspgate"),
            fake: test.private_dir("fake"),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(mut child) = Command::new(env!("CARGO_BIN_EXE_lspgate"))
            .arg("-C")
            .arg(&self.workspace)
            .args(["daemon", "stop"])
            .env("LSPGATE_RUNTIME_DIR", &self.runtime)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            let deadline = Instant::now() + GONE * 2;
            while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
                thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        for pid in daemon_pids(&self.workspace) {
            kill(pid);
        }
        let pids = fs::read_to_string(self.fake.join("pids")).unwrap_or_default();
        for pid in pids.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
            if alive(pid) {
                kill(pid);
            }
        }
    }
}

fn kill(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
}

/// Whether `pid` runs (a zombie has exited; a container's init may never reap it).
fn alive(pid: u32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    state.is_some_and(|s| s != "Z" && s != "X")
}

/// The live daemons of `workspace`: processes run as `lspgate __daemon --workspace WS`.
fn daemon_pids(workspace: &Path) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return pids;
    };
    for entry in entries.flatten() {
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

/// Polls `done` until it holds or `bound` passes; returns whether it held.
fn eventually(bound: Duration, mut done: impl FnMut() -> bool) -> bool {
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

/// A workspace with the fake server, runs going through the daemon.
fn setup() -> (Test, Guard) {
    let test = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&[])
        .with_daemon();
    let guard = Guard::new(&test);
    (test, guard)
}

/// `daemon status --format json` of the test's workspace.
#[track_caller]
fn status(out: Output) -> (Value, Output) {
    let out = out
        .again()
        .args(["daemon", "status", "--format", "json"])
        .run();
    out.assert_code(0);
    let status = out.json();
    (status, out)
}

#[track_caller]
fn stop(out: Output) -> Output {
    let out = out.again().args(["daemon", "stop"]).run();
    out.assert_code(0).stdout_contains("stopped the daemon");
    assert!(
        eventually(GONE, || daemon_pids(out.workspace()).is_empty()),
        "a daemon outlived `daemon stop`\n{out}"
    );
    out.assert_no_orphans();
    out
}

fn write(test: Test, file: &str, content: &str) -> Output {
    test.args(["write", file, "--content", content]).run()
}

#[test]
fn the_first_run_starts_the_daemon_and_the_next_reuses_its_server() {
    let (test, _guard) = setup();
    let first = write(test, "a.fake", "ERROR first\n");
    first
        .assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] first");
    let server = first.fake_pids();
    assert_eq!(server.len(), 1, "{first}");
    assert_eq!(daemon_pids(first.workspace()).len(), 1, "{first}");

    let second = write(first.again(), "a.fake", "ERROR second\n");
    second
        .assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] second")
        .stdout_lacks("] first");
    // The same server answered: no second one was started.
    assert_eq!(second.fake_pids(), server, "{second}");
    assert!(alive(server[0]), "the warm server is gone\n{second}");

    let (status, out) = status(second);
    assert_eq!(status["runs"], 2, "{out}");
    assert_eq!(status["servers"][0]["name"], "fake", "{out}");
    assert_eq!(status["servers"][0]["pid"], server[0], "{out}");
    assert_eq!(status["servers"][0]["open_documents"], 1, "{out}");
    assert_eq!(
        status["pid"].as_u64(),
        daemon_pids(out.workspace()).first().map(|&p| u64::from(p)),
        "{out}"
    );
    let text = out.again().args(["daemon", "status"]).run();
    text.assert_code(0)
        .stdout_contains("daemon: pid ")
        .stdout_contains("2 runs")
        .stdout_contains(&format!("fake (root .): pid {}, ready", server[0]))
        .stdout_contains("1 open document");
    stop(text);
}

#[test]
fn a_file_changed_behind_its_back_is_seen_by_the_next_run() {
    let (test, _guard) = setup();
    let test = test
        .file("use.fake", "use foo\n")
        .file("def.fake", "def foo\n");
    let first = test.args(["check", "use.fake", "def.fake"]).run();
    first.assert_code(0);

    // The server holds def.fake open as "def foo"; the disk now says otherwise.
    fs::write(first.workspace().join("def.fake"), "def bar\n").expect("write def.fake");
    let second = first.again().args(["check", "use.fake"]).run();
    second
        .assert_code(1)
        .stdout_contains("Error: use.fake:1:1 [fake][E2] unknown name foo");

    // Back to a definition, then deleted: the server must drop its open copy.
    fs::write(second.workspace().join("def.fake"), "def foo\n").expect("write def.fake");
    let third = second.again().args(["check", "use.fake"]).run();
    third.assert_code(0).stdout_lacks("unknown name");
    fs::remove_file(third.workspace().join("def.fake")).expect("delete def.fake");
    let fourth = third.again().args(["check", "use.fake"]).run();
    fourth
        .assert_code(1)
        .stdout_contains("Error: use.fake:1:1 [fake][E2] unknown name foo");
    // One server saw all of it.
    assert_eq!(fourth.fake_pids().len(), 1, "{fourth}");
    stop(fourth);
}

#[test]
fn daemon_stop_leaves_no_process_and_no_socket() {
    let (test, _guard) = setup();
    let first = write(test, "a.fake", "two\n");
    first.assert_code(0);
    let (status, out) = status(first);
    let socket = PathBuf::from(status["socket"].as_str().expect("a socket path"));
    assert!(socket.exists(), "{out}");
    let out = stop(out);
    assert!(!socket.exists(), "the socket outlived the daemon\n{out}");
    // Stopping what is not running is fine too.
    let again = out.again().args(["daemon", "stop"]).run();
    again.assert_code(0).stdout_contains("no daemon running");
    let none = again
        .again()
        .args(["daemon", "status", "--format", "json"])
        .run();
    none.assert_code(1);
    assert_eq!(none.json(), Value::Null, "{none}");
}

#[test]
fn daemon_start_and_restart() {
    let (test, _guard) = setup();
    let started = test.args(["daemon", "start"]).run();
    started
        .assert_code(0)
        .stdout_contains("daemon running (pid ");
    let pids = daemon_pids(started.workspace());
    assert_eq!(pids.len(), 1, "{started}");
    // Starting a running daemon keeps it.
    let again = started.again().args(["daemon", "start"]).run();
    again
        .assert_code(0)
        .stdout_contains(&format!("daemon running (pid {})", pids[0]));
    let restarted = again.again().args(["daemon", "restart"]).run();
    restarted.assert_code(0);
    assert!(eventually(GONE, || !alive(pids[0])), "{restarted}");
    let now = daemon_pids(restarted.workspace());
    assert_eq!(now.len(), 1, "{restarted}");
    assert_ne!(now, pids, "{restarted}");
    let run = write(restarted.again(), "a.fake", "ERROR after restart\n");
    run.assert_code(1).stdout_contains("after restart");
    stop(run);
}

#[test]
fn a_stale_socket_is_replaced() {
    let (test, _guard) = setup();
    let first = write(test, "a.fake", "two\n");
    first.assert_code(0);
    let (status, out) = status(first);
    let socket = PathBuf::from(status["socket"].as_str().expect("a socket path"));
    let out = stop(out);
    // A socket file nobody listens on, as a crashed daemon leaves.
    drop(UnixListener::bind(&socket).expect("bind a stale socket"));
    assert!(socket.exists());
    assert!(UnixStream::connect(&socket).is_err());

    let run = write(out.again(), "a.fake", "ERROR fresh\n");
    run.assert_code(1).stdout_contains("[fake][E1] fresh");
    assert!(
        !run.stderr.contains("running the servers in this process"),
        "{run}"
    );
    assert_eq!(daemon_pids(run.workspace()).len(), 1, "{run}");
    stop(run);
}

#[test]
fn a_killed_daemon_is_replaced_by_the_next_run() {
    let (test, _guard) = setup();
    let first = write(test, "a.fake", "ERROR one\n");
    first.assert_code(1);
    let daemons = daemon_pids(first.workspace());
    assert_eq!(daemons.len(), 1, "{first}");
    let old_server = first.fake_pids();
    kill(daemons[0]);
    assert!(eventually(GONE, || !alive(daemons[0])), "{first}");
    // Its server loses its stdin with it, and exits.
    assert!(
        eventually(GONE, || !alive(old_server[0])),
        "the killed daemon's server lives on\n{first}"
    );

    let run = write(first.again(), "a.fake", "ERROR two\n");
    run.assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] two");
    assert!(
        !run.stderr.contains("running the servers in this process"),
        "{run}"
    );
    let now = daemon_pids(run.workspace());
    assert_eq!(now.len(), 1, "{run}");
    assert_ne!(now, daemons, "{run}");
    assert_eq!(run.fake_pids().len(), 2, "{run}");
    stop(run);
}

#[test]
fn ten_runs_at_once_on_a_cold_workspace_share_one_daemon() {
    const RUNS: usize = 10;
    let (mut test, _guard) = setup();
    for i in 0..RUNS {
        test = test.file(format!("f{i}.fake"), "fine\n");
    }
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut pids = Vec::new();
    for i in 0..RUNS {
        let mut cmd = test.to_command();
        cmd.args([
            "write",
            &format!("f{i}.fake"),
            "--content",
            &format!("ERROR boom{i}\n"),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let child = cmd.spawn().expect("spawn lspgate");
        pids.push(child.id());
        let tx = tx.clone();
        thread::spawn(move || {
            let _ = tx.send((i, child.wait_with_output()));
        });
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut outputs = vec![None; RUNS];
    for _ in 0..RUNS {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok((i, output)) => outputs[i] = Some(output.expect("wait for lspgate")),
            Err(_) => {
                for &pid in &pids {
                    kill(pid);
                }
                panic!("ten runs at once did not all end within 60s");
            }
        }
    }
    for (i, output) in outputs.into_iter().enumerate() {
        let output = output.expect("every run reported");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let context = format!("run {i}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}");
        assert_eq!(output.status.code(), Some(1), "{context}");
        assert!(
            stdout.contains(&format!("Error: f{i}.fake:1:1 [fake][E1] boom{i}")),
            "{context}"
        );
        // Each report is that run's own.
        for j in (0..RUNS).filter(|&j| j != i) {
            assert!(!stdout.contains(&format!("boom{j}")), "{context}");
        }
        assert!(
            !stderr.contains("running the servers in this process"),
            "{context}"
        );
    }
    for i in 0..RUNS {
        let text = fs::read_to_string(test.path(format!("f{i}.fake"))).expect("read");
        assert_eq!(text, format!("ERROR boom{i}\n"), "edit {i} lost");
    }
    assert_eq!(
        daemon_pids(test.workspace()).len(),
        1,
        "not exactly one daemon"
    );
    let servers = fs::read_to_string(test.private_dir("fake").join("pids")).unwrap_or_default();
    assert_eq!(servers.lines().count(), 1, "servers started: {servers}");
    let out = test.args(["daemon", "status", "--format", "json"]).run();
    out.assert_code(0);
    assert_eq!(out.json()["runs"], RUNS, "{out}");
    stop(out);
}

#[test]
fn a_daemon_of_another_version_is_replaced() {
    if !cfg!(debug_assertions) {
        // LSPGATE_VERSION_OVERRIDE is honoured by debug builds only.
        return;
    }
    let (test, _guard) = setup();
    let old = write(
        test.env("LSPGATE_VERSION_OVERRIDE", "0.0.0-old"),
        "a.fake",
        "ERROR old\n",
    );
    old.assert_code(1);
    let old_daemons = daemon_pids(old.workspace());
    assert_eq!(old_daemons.len(), 1, "{old}");
    let old_server = old.fake_pids();

    let new = write(
        old.again().env_remove("LSPGATE_VERSION_OVERRIDE"),
        "a.fake",
        "ERROR new\n",
    );
    new.assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] new");
    assert!(
        !new.stderr.contains("running the servers in this process"),
        "{new}"
    );
    assert!(eventually(GONE, || !alive(old_daemons[0])), "{new}");
    assert!(eventually(GONE, || !alive(old_server[0])), "{new}");
    let now = daemon_pids(new.workspace());
    assert_eq!(now.len(), 1, "{new}");
    assert_ne!(now, old_daemons, "{new}");
    let (status, out) = status(new);
    assert_eq!(
        status["lspgate_version"],
        env!("CARGO_PKG_VERSION"),
        "{out}"
    );
    stop(out);
}

/// Speaks the protocol from here: a request of another version gets a version
/// mismatch, and the daemon exits rather than serve it.
#[test]
fn the_daemon_answers_a_wrong_version_with_a_mismatch_and_exits() {
    let (test, _guard) = setup();
    let first = write(test, "a.fake", "two\n");
    first.assert_code(0);
    let (status, out) = status(first);
    let socket = PathBuf::from(status["socket"].as_str().expect("a socket path"));
    let daemons = daemon_pids(out.workspace());
    assert_eq!(daemons.len(), 1, "{out}");

    let stream = UnixStream::connect(&socket).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let body = r#"{"protocol":1,"lspgate_version":"9.9.9-other","build":"","body":"status"}"#;
    (&stream)
        .write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
        .expect("send");
    let mut reader = BufReader::new(&stream);
    let mut length = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("a header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse::<usize>().ok();
        }
    }
    let mut answer = vec![0; length.expect("a Content-Length header")];
    reader.read_exact(&mut answer).expect("the answer");
    let answer: Value = serde_json::from_slice(&answer).expect("JSON");
    assert_eq!(answer["protocol"], 1, "{answer}");
    assert_eq!(
        answer["body"]["version_mismatch"]["daemon"]["lspgate_version"],
        env!("CARGO_PKG_VERSION"),
        "{answer}"
    );
    assert!(eventually(GONE, || !alive(daemons[0])), "the daemon stayed");
    assert!(!socket.exists(), "the socket stayed");
    out.assert_no_orphans();
}

#[test]
fn no_daemon_keeps_the_one_shot_path() {
    let (test, _guard) = setup();
    let run = test
        .args([
            "write",
            "a.fake",
            "--content",
            "ERROR solo\n",
            "--no-daemon",
        ])
        .run();
    run.assert_code(1).stdout_contains("solo");
    assert!(daemon_pids(run.workspace()).is_empty(), "{run}");
    run.assert_no_orphans();
    let env = write(run.again().env("LSPGATE_NO_DAEMON", "1"), "a.fake", "ok\n");
    env.assert_code(0);
    assert!(daemon_pids(env.workspace()).is_empty(), "{env}");
    env.assert_no_orphans();
}

#[test]
fn a_server_whose_configuration_changed_is_restarted() {
    let (test, _guard) = setup();
    let first = write(test, "a.fake", "ERROR one\n");
    first.assert_code(1);
    let old = first.fake_pids();
    assert_eq!(old.len(), 1, "{first}");
    // Same server, other arguments: the warm one no longer matches.
    let second = write(
        first.again().fake_server(&["--pull"]),
        "a.fake",
        "ERROR two\n",
    );
    second
        .assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] two");
    let now = second.fake_pids();
    assert_eq!(now.len(), 2, "{second}");
    assert!(eventually(GONE, || !alive(old[0])), "{second}");
    assert!(alive(now[1]), "{second}");
    // And the new one stays warm.
    let third = write(second.again(), "a.fake", "ERROR three\n");
    third.assert_code(1).stdout_contains("three");
    assert_eq!(third.fake_pids(), now, "{third}");
    stop(third);
}

/// Two processes editing different files of one workspace, each run after run: the
/// daemon serves them one at a time, loses no edit, and gives each its own report.
#[test]
fn two_processes_editing_at_once_lose_no_edit() {
    const EDITS: usize = 10;
    let (test, _guard) = setup();
    let test = test.file("x.fake", "start\n").file("y.fake", "start\n");
    let mut commands = Vec::new();
    for name in ["x", "y"] {
        let mut runs = Vec::new();
        for n in 0..EDITS {
            let mut cmd = test.to_command();
            cmd.args([
                "write",
                &format!("{name}.fake"),
                "--content",
                &format!("ERROR {name}{n}\n"),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
            runs.push(cmd);
        }
        commands.push((name, runs));
    }
    let (tx, rx) = crossbeam_channel::unbounded();
    for (name, runs) in commands {
        let tx = tx.clone();
        thread::spawn(move || {
            for (n, mut cmd) in runs.into_iter().enumerate() {
                let _ = tx.send((name, n, cmd.output()));
            }
        });
    }
    drop(tx);
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = 0;
    while seen < 2 * EDITS {
        let (name, n, output) = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("{seen} of {} runs ended within 120s", 2 * EDITS));
        seen += 1;
        let output = output.expect("run lspgate");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let context = format!(
            "{name}{n}\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(output.status.code(), Some(1), "{context}");
        assert!(
            stdout.contains(&format!("Error: {name}.fake:1:1 [fake][E1] {name}{n}\n")),
            "{context}"
        );
        let other = if name == "x" { "y.fake" } else { "x.fake" };
        assert!(!stdout.contains(other), "{context}");
    }
    for name in ["x", "y"] {
        let text = fs::read_to_string(test.path(format!("{name}.fake"))).expect("read");
        assert_eq!(text, format!("ERROR {name}{}\n", EDITS - 1));
    }
    assert_eq!(daemon_pids(test.workspace()).len(), 1);
    let out = test.args(["daemon", "status", "--format", "json"]).run();
    out.assert_code(0);
    assert_eq!(out.json()["runs"], 2 * EDITS, "{out}");
    assert_eq!(out.fake_pids().len(), 1, "{out}");
    stop(out);
}

/// A runtime dir whose socket path cannot be bound: the run goes in-process at once,
/// says so, and reports as usual.
#[test]
fn an_unusable_runtime_dir_falls_back_to_the_one_shot_path() {
    let (test, _guard) = setup();
    let long = test.private_dir("runtime").join("x".repeat(120));
    let run = test
        .env("LSPGATE_RUNTIME_DIR", &long)
        .args(["write", "a.fake", "--content", "ERROR anyway\n"])
        .run();
    run.assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] anyway")
        .stderr_contains("too long for a Unix socket")
        .stderr_contains("running the servers in this process")
        .assert_elapsed_below(Duration::from_secs(5));
    assert!(daemon_pids(run.workspace()).is_empty(), "{run}");
    run.assert_no_orphans();
}

#[test]
fn the_daemon_exits_when_idle() {
    let (test, _guard) = setup();
    let run = write(
        test.env("LSPGATE_IDLE_TIMEOUT", "1s"),
        "a.fake",
        "ERROR one\n",
    );
    run.assert_code(1);
    let daemons = daemon_pids(run.workspace());
    assert_eq!(daemons.len(), 1, "{run}");
    assert!(
        eventually(GONE, || !alive(daemons[0])),
        "the daemon outlived its idle timeout\n{run}"
    );
    run.assert_no_orphans();
    let runtime = run
        .workspace()
        .parent()
        .expect("the test's base dir")
        .join("runtime/lspgate");
    assert!(
        fs::read_dir(&runtime)
            .map(|entries| entries
                .flatten()
                .all(|e| e.path().extension().is_some_and(|x| x == "log")))
            .unwrap_or(true),
        "socket or lock left in {}",
        runtime.display()
    );
}

#[test]
fn the_daemon_exits_when_its_socket_is_removed() {
    let (test, _guard) = setup();
    let first = write(test, "a.fake", "two\n");
    first.assert_code(0);
    let (status, out) = status(first);
    let socket = PathBuf::from(status["socket"].as_str().expect("a socket path"));
    let daemons = daemon_pids(out.workspace());
    fs::remove_file(&socket).expect("remove the socket");
    assert!(
        eventually(GONE, || !alive(daemons[0])),
        "the daemon outlived its socket\n{out}"
    );
    out.assert_no_orphans();
    // The next run starts a new one.
    let run = write(out.again(), "a.fake", "ERROR back\n");
    run.assert_code(1).stdout_contains("back");
    assert_eq!(daemon_pids(run.workspace()).len(), 1, "{run}");
    stop(run);
}

/// A server that died is not reused: the next run starts a fresh one, in the same
/// daemon.
#[test]
fn a_crashed_server_is_replaced_by_the_next_run() {
    let test = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&["--mode", "crash-on-change"])
        .with_daemon();
    let _guard = Guard::new(&test);
    let first = write(test, "a.fake", "ERROR one\n");
    first.assert_code_in(&[1, 3]);
    let daemons = daemon_pids(first.workspace());
    assert_eq!(daemons.len(), 1, "{first}");
    let before = first.fake_pids();
    assert!(
        eventually(GONE, || before.iter().all(|&p| !alive(p))),
        "{first}"
    );

    let second = write(first.again(), "a.fake", "ERROR two\n");
    second.assert_code_in(&[1, 3]);
    let after = second.fake_pids();
    assert!(after.len() > before.len(), "no fresh server\n{second}");
    assert_eq!(daemon_pids(second.workspace()), daemons, "{second}");
    stop(second);
}

/// A server installed after the daemon started is found: commands are looked up on
/// the PATH of each run, not on the daemon's.
#[test]
fn servers_are_found_on_the_path_of_the_run() {
    let test = Test::new().file("a.fake", "one\n").with_daemon();
    let _guard = Guard::new(&test);
    let fake = test.private_dir("fake");
    let config = format!(
        "[server.fake]\ncommand = \"fake-lsp\"\nargs = [\"--pidfile\", {}]\nextensions = [\"fake\"]\n",
        serde_json::to_string(&fake.join("pids").display().to_string()).expect("quote")
    );
    let test = test.file(".lspgate.toml", config).trust_project();
    let bare_path = std::env::var("PATH").unwrap_or_default();
    let first = write(test.env("PATH", &bare_path), "a.fake", "ERROR one\n");
    first.assert_code(3).stdout_lacks("] one");
    assert_eq!(daemon_pids(first.workspace()).len(), 1, "{first}");

    let bin = crate::support::fake_lsp()
        .parent()
        .expect("the examples dir")
        .display()
        .to_string();
    let second = write(
        first.again().env("PATH", format!("{bin}:{bare_path}")),
        "a.fake",
        "ERROR two\n",
    );
    second
        .assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] two");
    stop(second);
}
