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
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use lspgate::daemon::protocol::PROTOCOL;
use serde_json::Value;

use crate::support::process::{DaemonGuard as Guard, alive, daemon_pids, eventually, kill};
use crate::support::{Output, Test};

/// How long a process may take to go away once told to.
const GONE: Duration = Duration::from_secs(10);

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
    let body = format!(
        r#"{{"protocol":{PROTOCOL},"lspgate_version":"9.9.9-other","build":"","body":"status"}}"#
    );
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
    assert_eq!(answer["protocol"], PROTOCOL, "{answer}");
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

/// `lspgate diagnostics` on a workspace whose daemon holds `a.fake` (an error),
/// `b.fake` (a warning) and `sub/c.fake` (an error): all of them, one file, a
/// directory, and the JSON form.
#[test]
fn diagnostics_prints_what_the_warm_servers_hold() {
    let (test, _guard) = setup();
    let test = test
        .file("a.fake", "ERROR one\n")
        .file("b.fake", "fine\nWARN two\n")
        .file("sub/c.fake", "ERROR three\n");
    let run = test.args(["check", "a.fake", "b.fake", "sub/c.fake"]).run();
    run.assert_code(1);

    let all = run.again().args(["diagnostics"]).run();
    all.assert_code(0);
    assert_eq!(
        all.stdout,
        "Error: a.fake:1:1 [fake][E1] one\n\
         Warn: b.fake:2:1 [fake][W1] two\n\
         Error: sub/c.fake:1:1 [fake][E1] three\n",
        "{all}"
    );
    assert!(all.stderr.is_empty(), "{all}");

    let one = all.again().args(["diagnostics", "b.fake"]).run();
    one.assert_code(0);
    assert_eq!(one.stdout, "Warn: b.fake:2:1 [fake][W1] two\n", "{one}");
    let dir = one.again().args(["diagnostics", "sub"]).run();
    assert_eq!(
        dir.stdout, "Error: sub/c.fake:1:1 [fake][E1] three\n",
        "{dir}"
    );
    let json = dir.again().args(["diagnostics", "--format", "json"]).run();
    json.assert_code(0);
    let list = json.json();
    let uris: Vec<&str> = list
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|f| f["uri"].as_str())
        .collect();
    let ws = json.workspace().display().to_string();
    assert_eq!(
        uris,
        [
            format!("file://{ws}/a.fake"),
            format!("file://{ws}/b.fake"),
            format!("file://{ws}/sub/c.fake"),
        ],
        "{json}"
    );
    assert_eq!(
        list[1]["diagnostics"],
        serde_json::json!([{
            "message": "two",
            "severity": "Warning",
            "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 8}},
            "source": "fake",
            "code": "W1",
        }]),
        "{json}"
    );
    assert_eq!(list[0]["diagnostics"][0]["severity"], "Error", "{json}");
    stop(json);
}

/// Without a daemon the cache commands print nothing (an empty JSON list), say so on
/// stderr, exit 0, and start no daemon.
#[test]
fn cache_commands_without_a_daemon_say_so_and_start_none() {
    let (test, _guard) = setup();
    let mut out: Option<Output> = None;
    let mut next = Some(test);
    for args in [
        &["diagnostics"][..],
        &["logs"],
        &["messages"],
        &["diagnostics", "a.fake", "--format", "json"],
        &["logs", "--format", "json"],
        &["messages", "--format", "json"],
    ] {
        let test = match next.take() {
            Some(test) => test,
            None => out.take().expect("a previous run").again(),
        };
        let run = test.args(args).run();
        run.assert_code(0).stderr_contains(&format!(
            "lspgate: no daemon running for {}",
            run.workspace().display()
        ));
        let expected = if args.contains(&"json") { "[]\n" } else { "" };
        assert_eq!(run.stdout, expected, "{run}");
        assert!(daemon_pids(run.workspace()).is_empty(), "{run}");
        out = Some(run);
    }
}

/// The log and show-message rings: the last 100 and 50 of each server, `--limit` the
/// last N, `--level` that level and the more severe ones.
#[test]
fn logs_and_messages_show_the_rings() {
    let test = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&["--log-messages", "130"])
        .with_daemon();
    let _guard = Guard::new(&test);
    let run = write(test, "a.fake", "two\n");
    run.assert_code(0);

    let logs = run.again().args(["logs"]).run();
    logs.assert_code(0);
    let lines: Vec<&str> = logs.stdout.lines().collect();
    assert_eq!(lines.len(), 100, "the ring keeps 100\n{logs}");
    // Message i has level i % 4 + 1; the oldest 30 fell out of the ring.
    assert_eq!(lines[0], "fake [info] log 30", "{logs}");
    assert_eq!(lines[99], "fake [warning] log 129", "{logs}");

    let last = logs.again().args(["logs", "--limit", "3"]).run();
    assert_eq!(
        last.stdout, "fake [log] log 127\nfake [error] log 128\nfake [warning] log 129\n",
        "{last}"
    );
    let severe = last.again().args(["logs", "--level", "warning"]).run();
    assert_eq!(severe.stdout.lines().count(), 50, "{severe}");
    assert!(
        severe
            .stdout
            .lines()
            .all(|l| l.starts_with("fake [error] ") || l.starts_with("fake [warning] ")),
        "{severe}"
    );
    let json = severe
        .again()
        .args([
            "logs", "--level", "error", "--limit", "2", "--format", "json",
        ])
        .run();
    let ws = json.workspace().display().to_string();
    assert_eq!(
        json.json(),
        serde_json::json!([
            {"server": "fake", "root": ws, "level": "error", "message": "log 124"},
            {"server": "fake", "root": ws, "level": "error", "message": "log 128"},
        ]),
        "{json}"
    );

    let messages = json.again().args(["messages"]).run();
    messages.assert_code(0);
    assert_eq!(
        messages.stdout, "fake [info] show 0\nfake [info] show 1\n",
        "{messages}"
    );
    let one = messages.again().args(["messages", "--limit", "1"]).run();
    assert_eq!(one.stdout, "fake [info] show 1\n", "{one}");
    stop(one);
}

/// A file's diagnostics go when the file is closed (here: deleted behind lspgate's
/// back, so the next run closes it), though the server publishes an empty list for it.
#[test]
fn a_closed_file_s_diagnostics_are_dropped() {
    let (test, _guard) = setup();
    let test = test.file("b.fake", "ERROR gone soon\n");
    let first = test.args(["check", "a.fake", "b.fake"]).run();
    first.assert_code(1);
    let held = first.again().args(["diagnostics"]).run();
    held.stdout_contains("Error: b.fake:1:1 [fake][E1] gone soon");

    fs::remove_file(held.workspace().join("b.fake")).expect("delete b.fake");
    let second = held.again().args(["check", "a.fake"]).run();
    second.assert_code(0);
    let closed = second.fake_log().iter().any(|e| {
        e["method"] == "textDocument/didClose"
            && e["uri"].as_str().is_some_and(|u| u.ends_with("/b.fake"))
    });
    assert!(closed, "b.fake was not closed\n{second}");
    let now = second
        .again()
        .args(["diagnostics", "--format", "json"])
        .run();
    let uris: Vec<String> = now
        .json()
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|f| f["uri"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        uris,
        [format!("file://{}/a.fake", now.workspace().display())],
        "{now}"
    );
    stop(now);
}

/// A server that publishes for every file under its root, opened or not (as gopls
/// does): the daemon keeps at most 1000 unopened files' diagnostics, and the open
/// ones always.
#[test]
fn diagnostics_of_unopened_files_are_capped() {
    const FILES: usize = 1100;
    let mut test = Test::new()
        .file("a.fake", "ERROR open\n")
        .fake_server(&["--push-unopened"])
        .with_daemon();
    let _guard = Guard::new(&test);
    for i in 0..FILES {
        test = test.file(format!("many/f{i:04}.fake"), format!("ERROR e{i}\n"));
    }
    let run = test.args(["check", "a.fake"]).run();
    run.assert_code(1);
    let held = run.again().args(["diagnostics", "--format", "json"]).run();
    held.assert_code(0);
    let list = held.json();
    let uris: Vec<&str> = list
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|f| f["uri"].as_str())
        .collect();
    assert_eq!(uris.len(), 1000 + 1, "{}", uris.len());
    assert!(uris.iter().any(|u| u.ends_with("/a.fake")), "{held}");
    stop(held);
}

/// A server that crashes during a run is restarted in that run, its documents
/// (including one the run did not touch) reopened, the run's files checked again, and
/// the report says so; the daemon's status counts the crash.
#[test]
fn a_server_crashing_during_a_run_is_restarted_with_its_documents() {
    let test = Test::new()
        .file("a.fake", "one\n")
        .file("b.fake", "WARN kept\n");
    let marker = test.private_dir("fake").join("crashed-once");
    let marker_arg = marker.display().to_string();
    let test = test
        .fake_server(&["--crash-once", &marker_arg])
        .with_daemon();
    let _guard = Guard::new(&test);
    // The first run opens b.fake without crashing (the marker says "crashed already").
    fs::write(&marker, "not yet\n").expect("write the marker");
    let first = test.args(["check", "b.fake"]).run();
    first.assert_code(0);
    fs::remove_file(&marker).expect("arm the crash");

    let second = write(first.again(), "a.fake", "ERROR two\n");
    second
        .assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] two");
    let notes = second.notes();
    assert!(
        notes.iter().any(
            |n| n.starts_with("note: fake crashed during the run (exited")
                && n.ends_with("restarted it and reopened 2 files")
        ),
        "{second}"
    );
    assert!(marker.exists(), "the server did not crash\n{second}");
    assert_eq!(second.fake_pids().len(), 2, "{second}");
    let reopened = second
        .fake_log()
        .iter()
        .filter(|e| {
            e["method"] == "textDocument/didOpen"
                && e["uri"].as_str().is_some_and(|u| u.ends_with("/b.fake"))
        })
        .count();
    assert_eq!(reopened, 2, "b.fake was not reopened\n{second}");

    let (status, out) = status(second);
    assert_eq!(status["servers"][0]["crashes"], 1, "{out}");
    assert_eq!(status["servers"][0]["open_documents"], 2, "{out}");
    let pids = out.fake_pids();
    assert_eq!(status["servers"][0]["pid"], pids[1], "{out}");
    // The restarted server serves the next run, which says nothing of crashes.
    let third = write(out.again(), "a.fake", "ERROR three\n");
    third.assert_code(1).stdout_contains("[fake][E1] three");
    assert!(third.notes().is_empty(), "{third}");
    assert_eq!(third.fake_pids(), pids, "{third}");
    stop(third);
}

/// A server that crashes on every change: restarted at once after its first crash,
/// then with a backoff (2 s after the second); never twice in one run; and each report
/// says what happened.
#[test]
fn a_crash_looping_server_is_restarted_with_backoff() {
    let test = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&["--mode", "crash-on-change"])
        .with_daemon();
    let _guard = Guard::new(&test);
    // Crash 1, during the run: restarted at once, the file reopened and checked.
    let first = write(test, "a.fake", "ERROR one\n");
    first
        .assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] one");
    assert!(
        first
            .notes()
            .iter()
            .any(|n| n.contains("fake crashed during the run")),
        "{first}"
    );
    assert_eq!(first.fake_pids().len(), 2, "{first}");

    // Crash 2, a moment later: not restarted now.
    let second = write(first.again(), "a.fake", "ERROR two\n");
    second.assert_code(3).stdout_lacks("] two");
    assert!(
        second
            .notes()
            .iter()
            .any(|n| n.starts_with("note: fake: exited")
                && n.contains("crashed 2 times within 60s; not restarted for another")),
        "{second}"
    );
    assert_eq!(second.fake_pids().len(), 2, "{second}");

    // Runs during the backoff start nothing; the first after it restarts the server
    // (and, its edit crashing it again, does not restart it a second time).
    let mut last = Some(second);
    let restarted = eventually(Duration::from_secs(20), || {
        let run = write(
            last.take().expect("the last run").again(),
            "a.fake",
            "ERROR three\n",
        );
        run.assert_code(3);
        let done = run
            .notes()
            .iter()
            .any(|n| n.contains("fake had crashed since the last run"));
        if !done {
            assert_eq!(
                run.fake_pids().len(),
                2,
                "started during the backoff\n{run}"
            );
            assert!(
                run.notes()
                    .iter()
                    .any(|n| n.contains("not restarted for another")),
                "{run}"
            );
        } else {
            assert!(
                run.notes()
                    .iter()
                    .any(|n| n.contains("it crashed again after its restart")),
                "{run}"
            );
        }
        last = Some(run);
        done
    });
    let out = last.expect("the last run");
    assert!(restarted, "never restarted after the backoff\n{out}");
    assert_eq!(out.fake_pids().len(), 3, "{out}");
    let (status, out) = status(out);
    assert_eq!(status["servers"][0]["crashes"], 3, "{out}");
    stop(out);
}

/// A server killed while the daemon is idle is restarted right away with its
/// documents, and the next report says so.
#[test]
fn a_server_killed_between_runs_is_restarted_before_the_next() {
    let (test, _guard) = setup();
    let test = test.file("b.fake", "WARN open\n");
    let first = test.args(["check", "a.fake", "b.fake"]).run();
    first.assert_code(0);
    let old = first.fake_pids();
    assert_eq!(old.len(), 1, "{first}");
    kill(old[0]);
    let mut last = Some(first);
    let replaced = eventually(GONE, || {
        let (status, run) = status(last.take().expect("the last run"));
        last = Some(run);
        status["servers"][0]["state"] == "ready"
            && status["servers"][0]["pid"].as_u64() != Some(u64::from(old[0]))
    });
    let out = last.expect("the last run");
    assert!(replaced, "the daemon did not restart its server\n{out}");
    let (status, out) = status(out);
    assert_eq!(status["servers"][0]["crashes"], 1, "{out}");
    assert_eq!(status["servers"][0]["open_documents"], 2, "{out}");

    let run = write(out.again(), "a.fake", "ERROR after\n");
    run.assert_code(1).stdout_contains("[fake][E1] after");
    assert!(
        run.notes()
            .iter()
            .any(|n| n.starts_with("note: fake crashed after the last run")
                && n.ends_with("restarted it and reopened 2 files")),
        "{run}"
    );
    assert_eq!(run.fake_pids().len(), 2, "{run}");
    stop(run);
}

/// Files created, changed and deleted behind lspgate's back that no server has open
/// are announced with didChangeWatchedFiles before the next run; the files a run
/// writes itself are not announced again.
#[test]
fn files_changed_behind_its_back_are_announced() {
    let (test, _guard) = setup();
    let test = test
        .file("use.fake", "use foo\n")
        .file("other.fake", "x\n")
        .file("gone.fake", "y\n")
        .file("notes.txt", "not a server's file\n");
    let first = test.args(["check", "use.fake"]).run();
    first.assert_code(1).stdout_contains("unknown name foo");

    let ws = first.workspace().to_path_buf();
    fs::write(ws.join("def.fake"), "def foo\n").expect("create def.fake");
    fs::write(ws.join("other.fake"), "changed\n").expect("change other.fake");
    fs::remove_file(ws.join("gone.fake")).expect("delete gone.fake");
    fs::write(ws.join("notes.txt"), "changed too\n").expect("change notes.txt");
    let second = first.again().args(["check", "use.fake"]).run();
    second.assert_code(0).stdout_lacks("unknown name");
    let uri = |name: &str| format!("file://{}/{name}", ws.display());
    let watched: Vec<Value> = second
        .fake_log()
        .into_iter()
        .filter(|e| e["method"] == "workspace/didChangeWatchedFiles")
        .collect();
    assert_eq!(
        watched.first().map(|e| e["changes"].clone()),
        Some(serde_json::json!([
            {"uri": uri("def.fake"), "type": 1},
            {"uri": uri("gone.fake"), "type": 3},
            {"uri": uri("other.fake"), "type": 2},
        ])),
        "{second}"
    );

    // A file the run creates: announced once, by the run itself.
    let third = write(second.again(), "new.fake", "fine\n");
    third.assert_code(0);
    let fourth = third.again().args(["check", "use.fake"]).run();
    fourth.assert_code(0);
    let announced: Vec<Value> = fourth
        .fake_log()
        .into_iter()
        .filter(|e| e["method"] == "workspace/didChangeWatchedFiles")
        .flat_map(|e| e["changes"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["uri"] == uri("new.fake"))
        .collect();
    assert_eq!(
        announced,
        [serde_json::json!({"uri": uri("new.fake"), "type": 1})],
        "{fourth}"
    );
    stop(fourth);
}

/// `daemon status --all` lists the daemons of every workspace of the runtime
/// directory, passing over a stale socket.
#[test]
fn daemon_status_all_lists_every_workspace() {
    let (one, _guard_one) = setup();
    let runtime = one.private_dir("runtime").join("lspgate");
    let two = Test::new()
        .file("b.fake", "two\n")
        .fake_server(&[])
        .with_daemon()
        .env("LSPGATE_RUNTIME_DIR", &runtime);
    let _guard_two = Guard::new(&two);
    let first = write(one, "a.fake", "ERROR one\n");
    first.assert_code(1);
    let second = write(two, "b.fake", "ERROR two\n");
    second.assert_code(1);
    // A socket nobody listens on, as a killed daemon leaves.
    drop(UnixListener::bind(runtime.join("0123456789abcdef.sock")).expect("bind"));

    let all = first
        .again()
        .args(["daemon", "status", "--all", "--format", "json"])
        .run();
    all.assert_code(0);
    let list = all.json();
    let mut workspaces: Vec<String> = list
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|s| s["workspace"].as_str().map(str::to_owned))
        .collect();
    workspaces.sort();
    let mut expected = vec![
        all.workspace().display().to_string(),
        second.workspace().display().to_string(),
    ];
    expected.sort();
    assert_eq!(workspaces, expected, "{all}");
    assert!(
        list.as_array()
            .expect("a list")
            .iter()
            .all(|s| s["servers"][0]["name"] == "fake"),
        "{all}"
    );
    let text = all.again().args(["daemon", "status", "--all"]).run();
    text.assert_code(0)
        .stdout_contains(&format!("workspace: {}", expected[0]))
        .stdout_contains(&format!("workspace: {}", expected[1]));
    assert_eq!(text.stdout.matches("daemon: pid ").count(), 2, "{text}");

    let text = stop(text);
    let second = second.again().args(["daemon", "stop"]).run();
    second.assert_code(0);
    assert!(
        eventually(GONE, || daemon_pids(second.workspace()).is_empty()),
        "{second}"
    );
    let none = text.again().args(["daemon", "status", "--all"]).run();
    none.assert_code(1).stdout_contains("no daemon running");
    let none = none
        .again()
        .args(["daemon", "status", "--all", "--format", "json"])
        .run();
    none.assert_code(1);
    assert_eq!(none.json(), serde_json::json!([]), "{none}");
}

/// A run whose stderr is a terminal draws the status line from the progress the
/// daemon streams; with `--quiet`, or when stderr is not a terminal, nothing is drawn.
#[test]
fn the_status_line_is_drawn_through_the_daemon() {
    let test = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&["--mode", "progress-never-ends"])
        .with_daemon();
    let _guard = Guard::new(&test);
    // The server never settles: the run waits out its (short) timeouts, long enough
    // for the line to show.
    let args = |content: &'static str| {
        [
            "write",
            "a.fake",
            "--content",
            content,
            "--startup-timeout",
            "1500ms",
            "--timeout",
            "1s",
            "--cross-file-timeout",
            "1s",
        ]
    };
    let mut cmd = test.to_command();
    cmd.args(args("ERROR drawn\n"));
    let (code, stdout, terminal) = run_on_a_terminal(cmd);
    assert_eq!(code, Some(1), "{stdout}\n{terminal}");
    assert!(stdout.contains("[fake][E1] drawn"), "{stdout}");
    assert!(
        terminal.contains("fake: fake indexing (1."),
        "no status line on the terminal: {terminal:?}"
    );
    assert!(terminal.contains("\r\u{1b}[K"), "{terminal:?}");
    assert!(
        !stdout.contains('\u{1b}'),
        "the line went to stdout: {stdout:?}"
    );

    let mut cmd = test.to_command();
    cmd.args(args("ERROR quiet\n")).arg("--quiet");
    let (code, stdout, terminal) = run_on_a_terminal(cmd);
    assert_eq!(code, Some(1), "{stdout}\n{terminal}");
    assert!(!terminal.contains("fake: fake indexing ("), "{terminal:?}");

    let piped = test.args(args("ERROR piped\n")).run();
    piped.assert_code(1);
    assert!(!piped.stderr.contains("fake: fake indexing ("), "{piped}");
    stop(piped);
}

/// Runs `cmd` with its stderr on a pseudo-terminal and its stdout on a pipe; returns
/// the exit status, stdout, and what reached the terminal.
fn run_on_a_terminal(mut cmd: Command) -> (Option<i32>, String, String) {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("openpt");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let name = ptsname(&master, Vec::new()).expect("ptsname");
    let slave = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_string_lossy().as_ref())
        .expect("open the terminal");
    let mut master = fs::File::from(master);
    let reader = thread::spawn(move || {
        // Ends with EIO once no process holds the terminal open.
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    });
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave))
        .spawn()
        .expect("spawn lspgate");
    // The command holds its copy of the terminal until dropped, and the reader ends
    // only when no copy is left.
    drop(cmd);
    let pid = child.id();
    let (tx, rx) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(output) => output.expect("wait for lspgate"),
        Err(_) => {
            kill(pid);
            panic!("lspgate on a terminal did not end within 60s");
        }
    };
    let terminal = reader.join().expect("the terminal reader");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        terminal,
    )
}

/// A --dry-run (or a rejected edit) shows the servers a text and takes it back; the
/// dependents' diagnostics the daemon got for that text must not pass for the before
/// view of the next run, or the same breaking edit would look clean the second time.
#[test]
fn a_breaking_dry_run_stays_breaking_when_repeated() {
    // Pull mode: answers are cached per file, as pyright's are, and a push server
    // republishing every open file would hide the bug.
    let test = Test::new()
        .file("def.fake", "def greet\n")
        .file("use.fake", "use greet\n")
        .fake_server(&["--pull"])
        .with_daemon();
    let _guard = Guard::new(&test);
    let mut out = test
        .args([
            "edit",
            "def.fake",
            "--old",
            "greet",
            "--new",
            "hello",
            "--dry-run",
        ])
        .run();
    out.assert_code(1)
        .stdout_contains("Error: use.fake:1:1 [fake][E2] unknown name greet");
    for flags in [["--dry-run"], ["--reject"], ["--reject"]] {
        out = out
            .again()
            .args(["edit", "def.fake", "--old", "greet", "--new", "hello"])
            .args(flags)
            .run();
        out.assert_code(1)
            .stdout_contains("Error: use.fake:1:1 [fake][E2] unknown name greet");
        assert_eq!(out.file("def.fake"), "def greet\n", "{out}");
    }
    stop(out);
}

/// A file changed behind the daemon's back can break files it holds diagnostics for:
/// those cached diagnostics must not pass for the next run's before view, or the
/// break would be reported as the next edit's doing.
#[test]
fn a_break_made_behind_its_back_is_not_blamed_on_the_next_edit() {
    // Pull mode: answers are cached per file (as pyright's are) and nothing is
    // republished by itself.
    let test = Test::new()
        .file("words.fake", "def greet\n")
        .file("use.fake", "use greet\n// from words\n")
        .fake_server(&["--pull"])
        .with_daemon();
    let _guard = Guard::new(&test);
    let first = test.args(["check", "use.fake", "words.fake"]).run();
    first.assert_code(0);

    // An editor removes `greet`: use.fake is broken before lspgate's next edit.
    fs::write(first.workspace().join("words.fake"), "def hello\n").expect("write words.fake");
    let second = write(first.again(), "words.fake", "def hello\ndef extra\n");
    second
        .assert_code(0)
        .stdout_lacks("unknown name greet")
        .stdout_contains("1 file checked across files");
    stop(second);
}

/// The pulls of `file` the fake server received, all runs so far.
fn pulls_of(out: &Output, file: &str) -> usize {
    out.fake_log()
        .iter()
        .filter(|e| e["event"] == "recv" && e["method"] == "textDocument/diagnostic")
        .filter(|e| e["uri"].as_str().is_some_and(|u| u.ends_with(file)))
        .count()
}

/// A project put back behind the daemon's back to texts it had before (`git
/// checkout`) gets the answers it had then as its before view, from a server that
/// learns of the disk from lspgate only: nothing is asked again before the edit, and
/// the edit's breaks are reported as the first time. Were the answers after the first
/// edit taken instead, the break would be old news. A server that watches the disk
/// itself is asked again (it may not have seen the change yet).
#[test]
fn a_project_put_back_behind_its_back_gets_its_earlier_answers() {
    // A server that watches the disk itself is shown the file put back as a
    // document, so its view is known too; once a file of its was created or deleted
    // behind the daemon's back, it is not (it sees that in its own time), and the
    // dependent is asked again.
    for (args, delete_first, asked_again) in [
        (&["--pull", "--watch-files"][..], false, 0),
        (&["--pull"][..], false, 0),
        (&["--pull", "--watch-files"][..], true, 0),
        (&["--pull"][..], true, 1),
    ] {
        put_back_behind_its_back(args, delete_first, asked_again);
    }
}

fn put_back_behind_its_back(args: &[&str], delete_first: bool, asked_again: usize) {
    let test = Test::new()
        .file("words.fake", "def greet\n")
        .file("use.fake", "use greet\n// from words\n")
        .file("spare.fake", "def spare\n")
        .fake_server(args)
        .with_daemon();
    let _guard = Guard::new(&test);
    let first = test.args(["check", "use.fake", "words.fake"]).run();
    first.assert_code(0);
    if delete_first {
        fs::remove_file(first.workspace().join("spare.fake")).expect("delete a closed file");
    }
    let second = write(first.again(), "words.fake", "def hello\n");
    second.assert_code(1).stdout_contains("unknown name greet");

    fs::write(second.workspace().join("words.fake"), "def greet\n").expect("put back");
    let asked = pulls_of(&second, "use.fake");
    let third = write(second.again(), "words.fake", "def hello\n");
    third.assert_code(1).stdout_contains("unknown name greet");
    assert_eq!(
        pulls_of(&third, "use.fake") - asked,
        1 + asked_again,
        "use.fake asked about after the edit, and before it {asked_again} time(s), \
         with {args:?}, a closed file deleted first: {delete_first}\n{third}"
    );
    stop(third);
}

/// The files (names) the fake server got a tsserver request for in `log`, in order.
fn tsserver_files(log: &[Value]) -> Vec<String> {
    log.iter()
        .filter(|e| e["event"] == "recv" && e["method"] == "workspace/executeCommand")
        .filter_map(|e| e["arguments"][1]["file"].as_str())
        .filter_map(|f| f.rsplit('/').next().map(str::to_owned))
        .collect()
}

/// A warm daemon pulls the files of a TypeScript server's project between runs
/// (`daemon::pulls`), and a run that comes meanwhile goes first: it waits behind the
/// pulls under way, not the rest, which are asked once it is done. The fake server
/// answers each tsserver request 100 ms late and handles nothing meanwhile, so the
/// 30 files take 9 s; the edit comes as soon as the check that starts them is done.
#[test]
fn pulls_between_runs_yield_to_a_run() {
    let mut test = Test::new().file("e.fake", "one\n");
    for i in 0..30 {
        test = test.file(format!("p{i:02}.fake"), "x\n");
    }
    let test = test
        .fake_server_as(
            "typescript-language-server",
            &["--mode", "tsserver", "--mode", "slow-pull=100"],
        )
        .with_daemon();
    let _guard = Guard::new(&test);
    let first = test.args(["check", "e.fake"]).run();
    first.assert_code(0);
    let run = write(first.again(), "e.fake", "one\nx ERROR boom\n");
    run.assert_code(1).stdout_contains("boom");

    let log = run.fake_log();
    let edit = log
        .iter()
        .position(|e| {
            e["method"] == "textDocument/didChange"
                && e["uri"].as_str().is_some_and(|u| u.ends_with("/e.fake"))
        })
        .unwrap_or_else(|| panic!("the edit was never sent\n{run}"));
    let before: std::collections::HashSet<String> = tsserver_files(&log[..edit])
        .into_iter()
        .filter(|f| f.starts_with('p'))
        .collect();
    assert!(
        !before.is_empty() && before.len() < 30,
        "{} of the 30 files pulled before the edit: the pass had to be under way\n{run}",
        before.len()
    );
    // The run's own answer came before any pull of the rest: the run went first.
    let during = tsserver_files(&log[edit..]);
    let answer = during
        .iter()
        .position(|f| f == "e.fake")
        .unwrap_or_else(|| panic!("e.fake was not pulled after the edit\n{run}"));
    assert!(
        during[..answer].iter().all(|f| !f.starts_with('p')),
        "pulled between the edit and its answer: {:?}\n{run}",
        &during[..answer]
    );

    // Then the rest, all of it.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut out = run;
    loop {
        let (status, next) = status(out);
        out = next;
        let pulls = &status["servers"][0]["between_runs"];
        if pulls["files"] == 31 && pulls["held"] == 31 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the pulls between runs never finished: {pulls}\n{out}"
        );
        thread::sleep(Duration::from_millis(50));
    }
    let after = tsserver_files(&out.fake_log()[edit..])
        .into_iter()
        .filter(|f| f.starts_with('p'))
        .count();
    assert!(after > 0, "nothing pulled after the run\n{out}");
    stop(out);
}

/// `cmd` run by `sh` under file creation mask `umask`, its output captured.
fn under_umask(cmd: &Command, umask: &str) -> std::process::Output {
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(Stdio::null());
    if let Some(dir) = cmd.get_current_dir() {
        sh.current_dir(dir);
    }
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => sh.env(key, value),
            None => sh.env_remove(key),
        };
    }
    sh.output().expect("run sh")
}

/// Issue 10, case 7: a daemon started under `umask 000` wrote a client's new file
/// 0666 (0644 without the daemon). The client's mask travels with the run.
#[test]
fn the_daemon_writes_files_with_the_clients_umask() {
    use std::os::unix::fs::PermissionsExt;
    let (test, _guard) = setup();
    let mut start = test.to_command();
    start.args(["daemon", "start"]);
    let out = under_umask(&start, "000");
    assert!(out.status.success(), "{out:?}");
    for (umask, file, mode) in [("022", "new.txt", 0o644), ("077", "private.txt", 0o600)] {
        let mut write = test.to_command();
        write.args(["write", file, "--content", "x\n"]);
        let out = under_umask(&write, umask);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(
            !stderr.contains("in this process"),
            "not through the daemon: {stderr}"
        );
        let meta = fs::metadata(test.path(file)).expect("written");
        assert_eq!(
            meta.permissions().mode() & 0o777,
            mode,
            "{file} under umask {umask}"
        );
    }
    assert_eq!(daemon_pids(test.workspace()).len(), 1);
}

/// Sends one request body, and the file contents that follow it, to the daemon at
/// `socket` and returns its first answer's body, as another program of the same user
/// could.
fn ask(socket: &std::path::Path, body: Value, contents: &[u8]) -> Value {
    let stream = UnixStream::connect(socket).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let message = serde_json::json!({
        "protocol": PROTOCOL,
        "lspgate_version": env!("CARGO_PKG_VERSION"),
        "build": "",
        "body": body,
    })
    .to_string();
    (&stream)
        .write_all(format!("Content-Length: {}\r\n\r\n{message}", message.len()).as_bytes())
        .expect("send");
    (&stream).write_all(contents).expect("send the contents");
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
    answer["body"].clone()
}

/// Issue 10, case 8: the daemon acts on a same-user client's request only after
/// checking it itself, as the CLI would: no write outside the workspace or into
/// `.git`, no server command that no configuration of the workspace names. Each is
/// refused before the run starts (the client may still run it itself), and nothing
/// happens.
#[test]
fn the_daemon_checks_the_paths_and_commands_a_client_sends() {
    let (test, _guard) = setup();
    let first = write(test, "a.fake", "two\n");
    first.assert_code(0);
    let (status, out) = status(first);
    let socket = PathBuf::from(status["socket"].as_str().expect("a socket path"));
    let ws = out.workspace().to_owned();
    let test = out.again();
    let outside = test.private_dir("home").join("pwned.txt");
    let marker = ws.join("shell-ran");
    let options = serde_json::to_value(lspgate::model::Options::default()).expect("options");
    let run = |path: &std::path::Path, servers: Value| {
        serde_json::json!({ "run": {
            "workspace": ws, "run_dir": ws, "servers": servers, "options": options,
            "job": { "Edit": { "changes": [{
                "path": path, "renamed_from": null, "before": null,
                // Contents follow the frame: the frame gives their length.
                "after": 2, "mode": null,
            }] } },
            "progress": false, "umask": 0o022, "trust_project": true,
        } })
    };
    let mut evil = serde_json::to_value(
        lspgate::servers::builtin()
            .into_iter()
            .next()
            .expect("a built-in"),
    )
    .expect("spec");
    evil["name"] = "fake".into();
    evil["command"] = "/bin/sh".into();
    evil["args"] = serde_json::json!(["-c", format!("touch {}", marker.display())]);
    evil["extensions"] = serde_json::json!(["fake"]);

    for (what, body, expect) in [
        (
            "outside",
            run(&outside, serde_json::json!([])),
            "outside the workspace",
        ),
        (
            ".git",
            run(&ws.join(".git/hooks/pre-commit"), serde_json::json!([])),
            "refusing to write inside a .git directory",
        ),
        (
            "command",
            run(&ws.join("new.fake"), serde_json::json!([evil])),
            "server fake: `/bin/sh -c touch",
        ),
    ] {
        let answer = ask(&socket, body, b"x\n");
        // Refused as bad input: nothing was written.
        let message = answer["failed"]["bad_input"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("the daemon refused the run: ") && message.contains(expect),
            "{what}: {answer}"
        );
    }
    assert!(!outside.exists());
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(!ws.join("new.fake").exists());
    assert!(!marker.exists());
    // It still serves the CLI.
    write(test, "a.fake", "ERROR three\n")
        .assert_code(1)
        .stdout_contains("[fake][E1] three");
}
