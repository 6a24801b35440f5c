//! `lspgate mcp` (issue 14): the commands as the tools of an MCP server on stdio.
//!
//! `python_sdk` drives it with the official MCP Python SDK (pinned, installed by
//! `scripts/install-mcp-client.sh`) against pyright on the Python fixture: the client
//! the issue names, and its checks of every structured result against the tool's output
//! schema. The other tests speak JSON-RPC to it line by line, with the fake server: the
//! protocol's errors, revisions, progress and cancellation, and what closing stdin
//! ends. Waits are bounded reads of the server's output or polls with deadlines, never
//! sleeps.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};
use serde_json::{Value, json};

use crate::support::process::{DaemonGuard, alive, daemon_pids, eventually, kill};
use crate::support::{Test, require_mcp_client, require_server};

/// How long one answer may take: a cold fake server answers in well under a second.
const ANSWER: Duration = Duration::from_secs(20);

/// How long the server may take to exit once its stdin is closed.
const EXIT: Duration = Duration::from_secs(5);

/// `lspgate mcp` started by the test, spoken to one line at a time.
struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Its stderr, once it has closed it (exited).
    stderr: Arc<Mutex<String>>,
    /// Every line read so far, for failure messages.
    seen: Vec<String>,
    next_id: i64,
}

impl Mcp {
    /// `lspgate mcp ARGS` in `test`'s workspace and environment.
    fn start(test: &Test, args: &[&str]) -> Mcp {
        let mut cmd = test.to_command();
        cmd.arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn lspgate mcp");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let stderr_text = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr_text);
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stderr.read_to_end(&mut bytes);
            if let Ok(mut text) = sink.lock() {
                text.push_str(&String::from_utf8_lossy(&bytes));
            }
        });
        let (tx, lines) = crossbeam_channel::unbounded();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Mcp {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: stderr_text,
            seen: Vec::new(),
            next_id: 0,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| stdin.flush())
            .expect("write to lspgate mcp");
    }

    fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    /// Sends a request; returns its id.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next line from the server, parsed.
    #[track_caller]
    fn next(&mut self) -> Value {
        match self.lines.recv_timeout(ANSWER) {
            Ok(line) => {
                self.seen.push(line.clone());
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
            }
            Err(e) => panic!(
                "no line from lspgate mcp within {ANSWER:?} ({e}); so far:\n{}\n--- stderr ---\n{}",
                self.seen.join("\n"),
                self.stderr.lock().map(|t| t.clone()).unwrap_or_default()
            ),
        }
    }

    /// Lines up to the answer to `id`: the notifications before it, and the answer.
    #[track_caller]
    fn answer(&mut self, id: &Value) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        loop {
            let message = self.next();
            if message.get("id") == Some(id) && message.get("method").is_none() {
                return (before, message);
            }
            before.push(message);
        }
    }

    #[track_caller]
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.answer(&id).1
    }

    /// `initialize` at `version` and `notifications/initialized`; the result.
    #[track_caller]
    fn initialize(&mut self, version: &str) -> Value {
        let answer = self.call(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "tests", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer["result"].clone()
    }

    #[track_caller]
    fn tool(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.call("tools/call", json!({"name": name, "arguments": arguments}));
        assert!(answer.get("result").is_some(), "{name}: {answer}");
        answer["result"].clone()
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Its exit status, waiting at most `bound`.
    fn exit_within(&mut self, bound: Duration) -> Option<ExitStatus> {
        let mut status = None;
        eventually(bound, || {
            status = self.child.try_wait().ok().flatten();
            status.is_some()
        });
        status
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// The JSON-RPC error code of an answer.
#[track_caller]
fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {answer}"))
}

/// A tool result's text content.
fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// The fake server for `.fake` files, with `args`.
fn fake(args: &[&str]) -> Test {
    Test::new().file("a.fake", "one\n").fake_server(args)
}

/// The pids of the test's fake servers, alive or not.
fn fake_pids(test: &Test) -> Vec<u32> {
    std::fs::read_to_string(test.private_dir("fake").join("pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

fn fake_alive(test: &Test) -> Vec<u32> {
    fake_pids(test)
        .into_iter()
        .filter(|&pid| alive(pid))
        .collect()
}

/// Children of `parent` that have exited and that nobody reaped.
fn zombie_children(parent: u32) -> Vec<u32> {
    let mut zombies = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let (state, ppid) = (fields.next(), fields.next());
        if state == Some("Z") && ppid == Some(parent.to_string().as_str()) {
            zombies.push(pid);
        }
    }
    zombies
}

#[test]
fn bad_lines_unknown_methods_and_missing_arguments_get_errors_and_serving_goes_on() {
    let test = fake(&[]);
    let mut mcp = Mcp::start(&test, &[]);
    // Before `initialize`, only a ping is answered.
    let early = mcp.call("tools/list", json!({}));
    assert_eq!(error_code(&early), -32600, "{early}");
    assert_eq!(mcp.call("ping", json!({}))["result"], json!({}));
    let init = mcp.initialize("2025-11-25");
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(init["serverInfo"]["name"], "lspgate");

    mcp.send_line("{this is not json");
    let malformed = mcp.next();
    assert_eq!(error_code(&malformed), -32700, "{malformed}");
    assert_eq!(malformed["id"], Value::Null);

    let unknown = mcp.call("resources/frobnicate", json!({}));
    assert_eq!(error_code(&unknown), -32601, "{unknown}");

    let missing = mcp.call(
        "tools/call",
        json!({"name": "edit", "arguments": {"path": "a.fake", "old": "one"}}),
    );
    assert_eq!(error_code(&missing), -32602, "{missing}");
    assert!(
        missing["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("missing field `new`")),
        "{missing}"
    );
    let unknown_tool = mcp.call("tools/call", json!({"name": "frobnicate", "arguments": {}}));
    assert_eq!(error_code(&unknown_tool), -32602, "{unknown_tool}");
    let no_name = mcp.call("tools/call", json!({"arguments": {}}));
    assert_eq!(error_code(&no_name), -32602, "{no_name}");
    assert_eq!(test.snapshot()[std::path::Path::new("a.fake")], b"one\n");

    // Still serving: a ping, the tool list, and a run that finds an error, which is a
    // result whose content says so, not an error.
    assert_eq!(mcp.call("ping", json!({}))["result"], json!({}));
    let tools = mcp.call("tools/list", json!({}));
    assert_eq!(tools["result"]["tools"].as_array().map(Vec::len), Some(8));
    let result = mcp.tool(
        "write",
        json!({"path": "a.fake", "content": "ERROR boom\n"}),
    );
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["exit_code"], 1, "{result}");
    assert!(
        text(&result).contains("Error: a.fake:1:1 [fake][E1] boom"),
        "{result}"
    );
    assert!(text(&result).ends_with("exit_code: 1\n"), "{result}");

    // At rest, closing stdin ends it, and the run's server is long gone.
    mcp.close_stdin();
    let status = mcp.exit_within(EXIT);
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{status:?}");
    assert!(!fake_pids(&test).is_empty());
    assert!(eventually(EXIT, || fake_alive(&test).is_empty()));
}

#[test]
fn bad_input_is_a_tool_error_with_the_clis_message_and_nothing_is_written() {
    let test = fake(&[]);
    let before = test.snapshot();
    let cli = test
        .to_command()
        .args(["edit", "../outside.fake", "--old", "one", "--new", "two"])
        .output()
        .expect("run the CLI");
    assert_eq!(cli.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&cli.stderr).into_owned();
    let cli_message = stderr
        .trim_end()
        .strip_prefix("lspgate: ")
        .unwrap_or_else(|| panic!("not the CLI's error line: {stderr}"));

    let mut mcp = Mcp::start(&test, &[]);
    mcp.initialize("2025-11-25");
    for (arguments, expected) in [
        (
            json!({"path": "../outside.fake", "old": "one", "new": "two"}),
            cli_message,
        ),
        (
            json!({"path": "a.fake", "old": "not there", "new": "two"}),
            "a.fake: --old text not found",
        ),
    ] {
        let result = mcp.tool("edit", arguments);
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(text(&result), expected, "{result}");
        assert!(result.get("structuredContent").is_none(), "{result}");
    }
    let patch = "--- a/a.fake\n+++ b/a.fake\n@@ -1 +1 @@\n-zero\n+two\n";
    let result = mcp.tool("patch", json!({"patch": patch}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result).starts_with("a.fake: hunk 1 (@@ -1 +1 @@) does not apply"),
        "{result}"
    );
    assert_eq!(test.snapshot(), before, "bad input wrote something");
    assert!(fake_pids(&test).is_empty(), "bad input started a server");
}

/// A client of 2024-11-05 gets what that revision has: no output schemas, and the JSON
/// as a second text instead of structured content. An unknown revision gets the latest.
#[test]
fn older_revisions_get_the_json_as_text_and_unknown_ones_the_latest() {
    let test = fake(&[]);
    let mut mcp = Mcp::start(&test, &[]);
    let init = mcp.initialize("2024-11-05");
    assert_eq!(init["protocolVersion"], "2024-11-05");
    assert!(init.get("instructions").is_none(), "{init}");
    let tools = mcp.call("tools/list", json!({}))["result"]["tools"].clone();
    assert!(
        tools
            .as_array()
            .is_some_and(|t| t.iter().all(|t| t.get("outputSchema").is_none())),
        "{tools}"
    );
    let result = mcp.tool("check", json!({"paths": ["a.fake"]}));
    assert!(result.get("structuredContent").is_none(), "{result}");
    let json: Value = result["content"][1]["text"]
        .as_str()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_else(|| panic!("no JSON text: {result}"));
    assert_eq!(json["schema"], 2);
    assert_eq!(json["exit_code"], 0);

    let mut other = Mcp::start(&test, &[]);
    assert_eq!(
        other.initialize("1999-01-01")["protocolVersion"],
        "2025-11-25"
    );
    let again = other.call(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(error_code(&again), -32600, "{again}");
}

/// While a run waits (the server publishes 1.5 s late), the client gets progress
/// notifications with its token, the last before the answer; in process and through
/// the daemon.
#[test]
fn progress_notifications_come_while_a_run_waits() {
    for daemon in [false, true] {
        let mut test = fake(&["--mode", "slow-publish=1500"]);
        if daemon {
            test = test.with_daemon();
        }
        let _guard = daemon.then(|| DaemonGuard::new(&test));
        let mut mcp = Mcp::start(&test, &["--timeout", "20s"]);
        mcp.initialize("2025-11-25");
        let id = mcp.request(
            "tools/call",
            json!({
                "name": "write",
                "arguments": {"path": "a.fake", "content": "ERROR late\n"},
                "_meta": {"progressToken": "tok"},
            }),
        );
        let (before, answer) = mcp.answer(&id);
        assert_eq!(
            answer["result"]["structuredContent"]["exit_code"], 1,
            "{answer}"
        );
        let progress: Vec<&Value> = before
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .collect();
        assert!(
            !progress.is_empty(),
            "daemon {daemon}: no progress in {before:?}"
        );
        for (i, p) in progress.iter().enumerate() {
            assert_eq!(p["params"]["progressToken"], "tok");
            assert_eq!(p["params"]["progress"], i + 1, "{p}");
            assert!(
                p["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("fake")),
                "{p}"
            );
        }
        // None after the answer: the next message is the ping's.
        assert_eq!(mcp.call("ping", json!({}))["result"], json!({}));
        // Without a token, none.
        let id = mcp.request(
            "tools/call",
            json!({"name": "write", "arguments": {"path": "a.fake", "content": "ERROR again\n"}}),
        );
        let (before, _) = mcp.answer(&id);
        assert!(before.is_empty(), "{before:?}");
    }
}

/// A cancelled call is not answered; the calls after it are, in order.
#[test]
fn a_cancelled_call_gets_no_answer() {
    let test = fake(&["--mode", "slow-publish=1000"]);
    let mut mcp = Mcp::start(&test, &["--timeout", "20s"]);
    mcp.initialize("2025-11-25");
    let cancelled = mcp.request(
        "tools/call",
        json!({"name": "write", "arguments": {"path": "a.fake", "content": "ERROR one\n"}}),
    );
    mcp.send(&json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": cancelled, "reason": "changed my mind"},
    }));
    // Runs are made one at a time: this one is answered after the cancelled one ended.
    let next = mcp.request(
        "tools/call",
        json!({"name": "write", "arguments": {"path": "a.fake", "content": "ERROR two\n"}}),
    );
    let (before, answer) = mcp.answer(&next);
    assert!(
        before.iter().all(|m| m.get("id") != Some(&cancelled)),
        "the cancelled call was answered: {before:?}"
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
}

/// Closing stdin while a run waits ends the server at once, as a killed client would,
/// and its language servers with it: here one that hangs in `initialize` and would
/// never notice its stdin closing.
#[test]
fn closing_stdin_mid_run_ends_the_server_and_its_language_servers() {
    let test = fake(&["--mode", "hang-initialize"]);
    let mut mcp = Mcp::start(&test, &["--startup-timeout", "10m"]);
    mcp.initialize("2025-11-25");
    mcp.request(
        "tools/call",
        json!({
            "name": "check",
            "arguments": {"paths": ["a.fake"]},
            "_meta": {"progressToken": 1},
        }),
    );
    // The first progress comes from the run's watcher, which knows its servers by then.
    let progress = mcp.next();
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert!(
        !fake_alive(&test).is_empty(),
        "the hung server is not running"
    );
    mcp.close_stdin();
    let status = mcp.exit_within(EXIT);
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{status:?}");
    let gone = eventually(EXIT, || fake_alive(&test).is_empty());
    let left = fake_alive(&test);
    for &pid in &left {
        kill(pid);
    }
    assert!(gone, "fake servers {left:?} outlived lspgate mcp");
}

/// A long-lived server reaps the daemons it starts: one that exits (stopped here, idle
/// or replaced in life) leaves no zombie behind.
#[test]
fn a_daemon_it_started_is_reaped_when_it_exits() {
    let test = fake(&[]).with_daemon();
    let _guard = DaemonGuard::new(&test);
    let mut mcp = Mcp::start(&test, &[]);
    mcp.initialize("2025-11-25");
    let result = mcp.tool("write", json!({"path": "a.fake", "content": "two\n"}));
    assert_eq!(result["structuredContent"]["exit_code"], 0, "{result}");
    let daemons = daemon_pids(test.workspace());
    assert_eq!(daemons.len(), 1, "{daemons:?}");
    // The cache tools read it.
    let diagnostics = mcp.tool("diagnostics", json!({}));
    assert_eq!(diagnostics["structuredContent"]["daemon_running"], true);
    let stop = test
        .to_command()
        .args(["daemon", "stop"])
        .output()
        .expect("daemon stop");
    assert!(stop.status.success(), "{stop:?}");
    assert!(eventually(ANSWER, || daemon_pids(test.workspace()).is_empty()));
    let reaped = eventually(EXIT, || zombie_children(mcp.pid()).is_empty());
    assert!(
        reaped,
        "zombies {:?} of lspgate mcp",
        zombie_children(mcp.pid())
    );
    let after = mcp.tool("logs", json!({}));
    assert_eq!(
        after["structuredContent"],
        json!({"daemon_running": false, "logs": []})
    );
}

/// The acceptance, with the official Python SDK as the client, pyright as the
/// server and the Python fixture: initialize, list the tools, an edit that breaks the
/// callers (their errors in the structured result), `diagnostics` with and without a
/// path, `logs`, a bad edit (a tool error, the file unchanged), and the gate.
#[test]
fn python_sdk_drives_an_edit_that_breaks_the_callers() {
    if !require_server("pyright-langserver") {
        return;
    }
    let Some(python) = require_mcp_client() else {
        return;
    };
    let test = crate::gate::with_fixture(Test::new(), "python", ".").with_daemon();
    let _guard = DaemonGuard::new(&test);
    let original = std::fs::read_to_string(test.path("a.py")).expect("a.py");
    let broken = original.replacen(
        "def greet(name: str)",
        "def greet(name: str, greeting: str)",
        1,
    );
    assert_ne!(original, broken);
    let calls = json!([
        {"tool": "diagnostics", "arguments": {}},
        {"tool": "edit", "arguments": {
            "path": "a.py", "old": "def greet(name: str)", "new": "def greet(name: str, greeting: str)"}},
        {"tool": "diagnostics", "arguments": {}},
        {"tool": "diagnostics", "arguments": {"path": "b.py"}},
        {"tool": "logs", "arguments": {}},
        {"tool": "messages", "arguments": {"limit": 5}},
        {"tool": "edit", "arguments": {"path": "a.py", "old": "def greet(nme: str)", "new": "x"}},
        {"tool": "check", "arguments": {"paths": ["b.py"]}},
        {"tool": "history", "arguments": {}},
        {"tool": "history", "arguments": {"last": true}},
    ]);
    let mut args = test.lspgate_args();
    args.extend(
        [
            "mcp",
            "--startup-timeout",
            "90s",
            "--timeout",
            "20s",
            "--cross-file-timeout",
            "10s",
        ]
        .map(Into::into),
    );
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/mcp_client.py");
    let mut client = test
        .command_with(&python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_lspgate"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the MCP client");
    let mut stdin = client.stdin.take().expect("piped stdin");
    stdin
        .write_all(calls.to_string().as_bytes())
        .expect("write the calls");
    drop(stdin);
    let (tx, rx) = crossbeam_channel::bounded(1);
    let pid = client.id();
    thread::spawn(move || {
        let _ = tx.send(client.wait_with_output());
    });
    let out = match rx.recv_timeout(Duration::from_secs(300)) {
        Ok(out) => out.expect("wait for the MCP client"),
        Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
            kill(pid);
            panic!("the MCP client did not finish within 300s");
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the MCP client failed:\n{stderr}");
    let transcript: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no transcript ({e}):\n{stderr}"));
    let show = |what: &Value| format!("{what:#}\n--- client's stderr ---\n{stderr}");

    // The SDK probes the 2026 revision first, then falls back to initialize.
    assert_eq!(
        transcript["protocol_version"],
        "2025-11-25",
        "{}",
        show(&transcript)
    );
    assert_eq!(transcript["server_name"], "lspgate");
    assert!(
        transcript["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("exit_code"))
    );
    let tools: Vec<&str> = transcript["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        tools,
        [
            "write",
            "edit",
            "patch",
            "check",
            "diagnostics",
            "logs",
            "messages",
            "history"
        ]
    );
    assert!(
        transcript["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|t| t["inputSchema"]["type"] == "object" && t["outputSchema"]["type"] == "object")
    );

    let calls = transcript["calls"].as_array().cloned().unwrap_or_default();
    assert_eq!(calls.len(), 10, "{}", show(&transcript));
    let result = |i: usize| &calls[i]["result"];
    let structured = |i: usize| &calls[i]["result"]["structuredContent"];

    // Nothing is held before the first run starts the daemon.
    assert_eq!(
        structured(0)["daemon_running"],
        false,
        "{}",
        show(result(0))
    );

    // The edit: a normal result, exit 1, the callers' errors in the structured report.
    let edit = structured(1);
    assert_eq!(result(1)["isError"], false, "{}", show(result(1)));
    assert_eq!(edit["exit_code"], 1, "{}", show(result(1)));
    for caller in ["b.py", "c.py"] {
        let file = edit["files"]
            .as_array()
            .and_then(|files| files.iter().find(|f| f["path"] == caller))
            .unwrap_or_else(|| panic!("no {caller} in {}", show(edit)));
        assert_eq!(file["role"], "dependent");
        assert!(
            file["diagnostics"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|d| d["new"] == true
                    && d["severity"] == "Error"
                    && d["message"] == "Argument missing for parameter \"greeting\""),
            "{}",
            show(file)
        );
    }
    let edit_text = text(result(1));
    assert!(
        edit_text.contains("<project_diagnostics>\nError: b.py:3:7 [Pyright][reportCallIssue]"),
        "{edit_text}"
    );
    assert!(edit_text.ends_with("exit_code: 1\n"), "{edit_text}");

    // Every file's diagnostics, then one file's.
    let uris = |i: usize| -> Vec<String> {
        structured(i)["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["uri"].as_str().map(str::to_owned))
            .collect()
    };
    let uri = |name: &str| format!("file://{}", test.path(name).display());
    assert!(
        uris(2).contains(&uri("b.py")) && uris(2).contains(&uri("c.py")),
        "{}",
        show(result(2))
    );
    assert_eq!(uris(3), [uri("b.py")], "{}", show(result(3)));
    assert!(
        structured(3)["files"][0]["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .any(
                |d| d["message"] == "Argument missing for parameter \"greeting\""
                    && d["range"]["start"]["line"] == 2
            )
    );

    // The servers' log lines.
    assert_eq!(structured(4)["daemon_running"], true);
    assert!(
        structured(4)["logs"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|l| l["server"] == "pyright"),
        "{}",
        show(result(4))
    );
    assert_eq!(structured(5)["daemon_running"], true, "{}", show(result(5)));

    // The bad edit: a tool error with the CLI's message, and a.py as the good edit left it.
    assert_eq!(result(6)["isError"], true, "{}", show(result(6)));
    assert!(
        text(result(6)).starts_with("a.py: --old text not found"),
        "{}",
        show(result(6))
    );
    assert_eq!(
        std::fs::read_to_string(test.path("a.py")).ok(),
        Some(broken)
    );

    // `check` counts b.py's error as new; the history lists both runs, the gate fails.
    assert_eq!(structured(7)["exit_code"], 1, "{}", show(result(7)));
    let runs: Vec<&str> = structured(8)["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["command"].as_str())
        .collect();
    assert_eq!(runs, ["check", "edit"], "{}", show(result(8)));
    assert_eq!(structured(9)["gate"], 1, "{}", show(result(9)));
    assert!(text(result(9)).contains("gate: 1 (it left new errors)"));
}

/// `check` of a file outside the workspace is refused as the CLI refuses it, by the
/// MCP tool too: a tool error naming the path, no server started, nothing of the
/// file's text in the answer.
#[test]
fn check_outside_the_workspace_is_a_tool_error() {
    let test = fake(&[]);
    let outside = test.private_dir("home").join("secret.fake");
    std::fs::write(&outside, "ERROR topsecret\n").expect("write");
    let mut mcp = Mcp::start(&test, &[]);
    mcp.initialize("2025-11-25");
    let path = outside.display().to_string();
    let result = mcp.tool("check", json!({"paths": [path]}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result).starts_with(&format!("{path}: path is outside the workspace")),
        "{result}"
    );
    assert!(!result.to_string().contains("topsecret"), "{result}");
    assert!(fake_pids(&test).is_empty(), "a server was started");
}

/// A file name holding a line break and an escape reaches the agent quoted in the
/// tool's text, as on the terminal: no forged summary line, no raw control character.
#[test]
fn names_with_control_characters_are_quoted_in_the_tool_text() {
    let test = fake(&[]);
    let mut mcp = Mcp::start(&test, &[]);
    mcp.initialize("2025-11-25");
    let patch = "diff --git \"a/x\\nNew: 0 errors\\n\\033[31m.fake\" \"b/x\\nNew: 0 errors\\n\\033[31m.fake\"\n\
                 new file mode 100644\n--- /dev/null\n+++ \"b/x\\nNew: 0 errors\\n\\033[31m.fake\"\n\
                 @@ -0,0 +1 @@\n+ERROR boom\n";
    let result = mcp.tool("patch", json!({"patch": patch}));
    let shown = text(&result);
    assert!(
        shown.contains("\"x\\nNew: 0 errors\\n\\x1b[31m.fake\":1:1"),
        "{result}"
    );
    assert!(
        !shown.chars().any(|c| c.is_control() && c != '\n'),
        "raw control characters: {result}"
    );
    assert_eq!(
        shown.lines().filter(|l| l.starts_with("New:")).count(),
        1,
        "{result}"
    );
    assert!(test.path("x\nNew: 0 errors\n\u{1b}[31m.fake").exists());
}
