//! End-to-end tests with the fake server: lspgate's whole pipeline (edit, notify,
//! waits, diff, report, exit status) against a server whose diagnostics are known in
//! advance and whose faults are scripted. `server` first checks the fake server itself,
//! so that an end-to-end failure points at lspgate, not at its test double.

use std::time::Duration;

use serde_json::Value;

use crate::support::Test;
use crate::support::process::DaemonGuard;

/// Small waits for the fault tests, so each ends within seconds.
const FAST: [&str; 6] = [
    "--timeout",
    "1s",
    "--cross-file-timeout",
    "1s",
    "--startup-timeout",
    "3s",
];

/// The sum of `FAST`'s waits plus a margin for starting and stopping: no fault may cost
/// more.
const FAST_BOUND: Duration = Duration::from_secs(1 + 1 + 3 + 2);

/// Long waits, to show that a run on a prompt server ends when the server has settled
/// rather than when a wait runs out.
const LONG: [&str; 4] = ["--timeout", "20s", "--cross-file-timeout", "20s"];

/// Far below any of `LONG`'s waits, far above what a fake-server run needs (under 1s).
const LONG_BOUND: Duration = Duration::from_secs(8);

/// The diagnostics of a JSON report's file `path`.
#[track_caller]
fn json_file<'a>(report: &'a Value, path: &str) -> &'a Value {
    report["files"]
        .as_array()
        .and_then(|files| files.iter().find(|file| file["path"] == path))
        .unwrap_or_else(|| panic!("no file {path} in {report:#}"))
}

mod server {
    //! The fake server on its own, spoken to directly.

    use std::{fs, time::Duration};

    use lsp_server::Message;
    use serde_json::{Value, json};
    use tempfile::TempDir;

    use crate::support::lsp_client::{Frame, LspProcess};

    fn uri(dir: &TempDir, name: &str) -> String {
        lsp_types::Url::from_file_path(dir.path().join(name))
            .expect("absolute path")
            .to_string()
    }

    /// A started and initialised fake server rooted at `dir`; returns the initialize result.
    fn start(dir: &TempDir, args: &[&str]) -> (LspProcess, Value) {
        let mut server = LspProcess::fake(args, dir.path());
        let root = lsp_types::Url::from_directory_path(dir.path()).expect("absolute path");
        let init = server.request(
            "initialize",
            json!({"processId": null, "rootUri": root, "capabilities": {}}),
        );
        server.notify("initialized", json!({}));
        (server, init)
    }

    fn open(server: &mut LspProcess, uri: &str, version: i32, text: &str) {
        let doc = json!({"uri": uri, "languageId": "fake", "version": version, "text": text});
        server.notify("textDocument/didOpen", json!({"textDocument": doc}));
    }

    fn change(server: &mut LspProcess, uri: &str, version: i32, text: &str) {
        server.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    fn messages(diagnostics: &Value) -> Vec<&str> {
        diagnostics
            .as_array()
            .expect("an array")
            .iter()
            .filter_map(|d| d["message"].as_str())
            .collect()
    }

    #[test]
    fn publishes_errors_and_warnings_with_the_version() {
        let dir = TempDir::new().expect("temp dir");
        let (mut server, init) = start(&dir, &[]);
        assert_eq!(
            init["capabilities"]["textDocumentSync"]["change"], 1,
            "{init}"
        );
        assert!(
            init["capabilities"]["diagnosticProvider"].is_null(),
            "{init}"
        );
        let a = uri(&dir, "a.fake");
        open(
            &mut server,
            &a,
            7,
            "fine\nx ERROR  boom \r\n  WARN\néé ERROR\n",
        );
        let publish = server.expect_publish(&a);
        assert_eq!(publish["version"], 7);
        assert_eq!(
            publish["diagnostics"],
            json!([
                {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 14}},
                 "severity": 1, "code": "E1", "source": "fake", "message": "boom"},
                {"range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 6}},
                 "severity": 2, "code": "W1", "source": "fake", "message": "warning"},
                {"range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 8}},
                 "severity": 1, "code": "E1", "source": "fake", "message": "error"},
            ])
        );
        change(&mut server, &a, 8, "fine\n");
        let publish = server.expect_publish(&a);
        assert_eq!(
            (publish["version"].clone(), publish["diagnostics"].clone()),
            (json!(8), json!([]))
        );
    }

    #[test]
    fn cross_file_names_follow_open_documents_and_disk_and_only_open_ones_publish() {
        let dir = TempDir::new().expect("temp dir");
        fs::write(dir.path().join("a.fake"), "def greet\n").expect("write");
        fs::write(dir.path().join("b.fake"), "use greet\nuse nobody\n").expect("write");
        fs::create_dir(dir.path().join("sub")).expect("mkdir");
        fs::write(dir.path().join("sub/c.fake"), "def other\n").expect("write");
        let (mut server, _) = start(&dir, &[]);
        let (a, b) = (uri(&dir, "a.fake"), uri(&dir, "b.fake"));

        open(&mut server, &b, 1, "use greet\nuse other\nuse nobody\n");
        assert_eq!(
            messages(&server.expect_publish(&b)["diagnostics"]),
            ["unknown name nobody"]
        );

        // The in-memory text of a wins over its disk content, and b is republished.
        open(&mut server, &a, 1, "def greet\n");
        assert_eq!(
            messages(&server.expect_publish(&b)["diagnostics"]),
            ["unknown name nobody"]
        );
        change(&mut server, &a, 2, "def hello\n");
        let publish = server.expect_publish(&b);
        assert_eq!(publish["version"], 1, "b itself did not change");
        assert_eq!(
            messages(&publish["diagnostics"]),
            ["unknown name greet", "unknown name nobody"]
        );

        // Closing a drops its in-memory text: the disk, which still defines greet, counts.
        server.notify("textDocument/didClose", json!({"textDocument": {"uri": a}}));
        assert_eq!(server.expect_publish(&a)["diagnostics"], json!([]));
        assert_eq!(
            messages(&server.expect_publish(&b)["diagnostics"]),
            ["unknown name nobody"]
        );

        // Nothing was ever published for the files nobody opened.
        server.request("shutdown", json!(null));
        while let Some(frame) = server.next(Duration::ZERO) {
            if let Frame::Message(Message::Notification(not)) = &frame {
                assert!(not.params["uri"] == a || not.params["uri"] == b, "{not:?}");
            }
        }
    }

    #[test]
    fn pull_mode_answers_for_any_file_and_never_publishes() {
        let dir = TempDir::new().expect("temp dir");
        fs::write(dir.path().join("b.fake"), "use greet\n").expect("write");
        let (mut server, init) = start(&dir, &["--pull"]);
        assert_eq!(
            init["capabilities"]["diagnosticProvider"]["interFileDependencies"], true,
            "{init}"
        );
        let (a, b) = (uri(&dir, "a.fake"), uri(&dir, "b.fake"));
        open(&mut server, &a, 1, "ERROR a\ndef greet\n");
        let report = server.request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": a}}),
        );
        assert_eq!(
            (report["kind"].as_str(), messages(&report["items"])),
            (Some("full"), vec!["a"])
        );
        // b is not open: read from disk, with a's definition taken from memory.
        let report = server.request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": b}}),
        );
        assert_eq!(report["items"], json!([]));
        change(&mut server, &a, 2, "");
        let id = server.send_request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": b}}),
        );
        // Messages come in order, so a publish for the change would come before the answer.
        match server.expect(|frame| !matches!(frame, Frame::Junk(_))) {
            Frame::Message(Message::Response(resp)) => {
                assert_eq!(resp.id, id);
                let items = resp.response_result.expect("a result")["items"].clone();
                assert_eq!(messages(&items), ["unknown name greet"]);
            }
            other => panic!("expected the answer, got {other:?}"),
        }
    }

    #[test]
    fn stale_version_and_no_version() {
        let dir = TempDir::new().expect("temp dir");
        let a = uri(&dir, "a.fake");
        let (mut stale, _) = start(&dir, &["--mode", "stale-version"]);
        open(&mut stale, &a, 1, "");
        assert_eq!(
            stale.expect_publish(&a)["version"],
            1,
            "an open is published with its version"
        );
        change(&mut stale, &a, 2, "ERROR x\n");
        let publish = stale.expect_publish(&a);
        assert_eq!(
            (
                publish["version"].clone(),
                messages(&publish["diagnostics"])
            ),
            (json!(1), vec!["x"])
        );

        let (mut unversioned, _) = start(&dir, &["--mode=no-version"]);
        open(&mut unversioned, &a, 1, "ERROR y\n");
        let publish = unversioned.expect_publish(&a);
        assert!(publish.get("version").is_none(), "{publish}");
        assert_eq!(messages(&publish["diagnostics"]), ["y"]);
    }

    #[test]
    fn garbage_mode_writes_junk_after_initialize_then_works() {
        let dir = TempDir::new().expect("temp dir");
        let mut server = LspProcess::fake(&["--mode", "garbage"], dir.path());
        let id = server.send_request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        );
        match server.next(Duration::from_secs(10)) {
            Some(Frame::Message(Message::Response(resp))) => assert_eq!(resp.id, id),
            other => panic!("expected the initialize answer, got {other:?}"),
        }
        for junk in ["garbage!", "{invalid}"] {
            match server.next(Duration::from_secs(10)) {
                Some(Frame::Junk(text)) => assert_eq!(text, junk),
                other => panic!("expected junk {junk:?}, got {other:?}"),
            }
        }
        server.notify("initialized", json!({}));
        let a = uri(&dir, "a.fake");
        open(&mut server, &a, 1, "ERROR z\n");
        assert_eq!(messages(&server.expect_publish(&a)["diagnostics"]), ["z"]);
    }

    #[test]
    fn server_requests_and_the_log() {
        let dir = TempDir::new().expect("temp dir");
        let log = dir.path().join("log.jsonl");
        let log_arg = log.display().to_string();
        let (mut server, _) = start(&dir, &["--mode", "server-request", "--log", &log_arg]);
        let mut answered = Vec::new();
        while answered.len() < 2 {
            let Frame::Message(Message::Request(req)) =
                server.expect(|f| matches!(f, Frame::Message(Message::Request(_))))
            else {
                unreachable!()
            };
            if req.method == "workspace/configuration" {
                assert_eq!(
                    req.params["items"].as_array().map(Vec::len),
                    Some(2),
                    "{req:?}"
                );
                server.send(lsp_server::Response::new_ok(req.id, json!([null, {"k": 1}])).into());
            } else {
                assert_eq!(req.method, "fake/unknown");
                server.send(
                    lsp_server::Response::new_err(req.id, -32601, "unknown".to_owned()).into(),
                );
            }
            answered.push(req.method);
        }
        // Handled in order: once shutdown is answered, both answers are logged.
        assert_eq!(server.request("shutdown", json!(null)), Value::Null);
        server.notify("exit", json!(null));
        assert_eq!(
            server.wait().code(),
            Some(0),
            "exit after shutdown is a clean exit"
        );
        let events: Vec<Value> = fs::read_to_string(&log)
            .expect("the log")
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect();
        let methods: Vec<&str> = events
            .iter()
            .filter(|e| e["event"] == "recv")
            .filter_map(|e| e["method"].as_str())
            .collect();
        assert_eq!(methods, ["initialize", "initialized", "shutdown", "exit"]);
        let response = |id: &str| {
            events
                .iter()
                .find(|e| e["event"] == "response" && e["id"] == id)
                .cloned()
        };
        assert_eq!(
            response("fake-unknown").expect("logged")["error"]["code"],
            -32601
        );
        assert_eq!(
            response("fake-configuration").expect("logged")["result"],
            json!([null, {"k": 1}])
        );
    }

    #[test]
    fn progress_begins_once_the_token_is_accepted_and_never_ends() {
        let dir = TempDir::new().expect("temp dir");
        let (mut server, _) = start(&dir, &["--mode", "progress-never-ends"]);
        let Frame::Message(Message::Request(create)) =
            server.expect(|f| matches!(f, Frame::Message(Message::Request(_))))
        else {
            unreachable!()
        };
        assert_eq!(create.method, "window/workDoneProgress/create");
        server.send(lsp_server::Response::new_ok(create.id, json!(null)).into());
        let progress = server.expect(
            |f| matches!(f, Frame::Message(Message::Notification(n)) if n.method == "$/progress"),
        );
        let Frame::Message(Message::Notification(progress)) = progress else {
            unreachable!()
        };
        assert_eq!(progress.params["value"]["kind"], "begin");
        // Once shutdown is answered, everything before it has been written: no end.
        server.request("shutdown", json!(null));
        while let Some(frame) = server.next(Duration::ZERO) {
            assert!(
                !matches!(&frame, Frame::Message(Message::Notification(n)) if n.method == "$/progress"),
                "{frame:?}"
            );
        }
    }

    #[test]
    fn slow_publish_still_answers_requests_first() {
        let dir = TempDir::new().expect("temp dir");
        let (mut server, _) = start(&dir, &["--mode", "slow-publish=1500"]);
        let a = uri(&dir, "a.fake");
        open(&mut server, &a, 1, "ERROR late\n");
        let id = server.send_request("shutdown", json!(null));
        match server.next(Duration::from_secs(10)) {
            Some(Frame::Message(Message::Response(resp))) => assert_eq!(resp.id, id),
            other => panic!("expected the shutdown answer before the publish, got {other:?}"),
        }
        assert_eq!(
            messages(&server.expect_publish(&a)["diagnostics"]),
            ["late"]
        );
    }

    #[test]
    fn crashes_and_exits() {
        let dir = TempDir::new().expect("temp dir");
        let mut server = LspProcess::fake(&["--mode", "exit-immediately"], dir.path());
        assert_eq!(server.wait().code(), Some(0));

        let mut server = LspProcess::fake(&["--mode", "crash-initialize"], dir.path());
        server.send_request("initialize", json!({"capabilities": {}}));
        assert_eq!(server.wait().code(), Some(1));

        let (mut server, _) = start(&dir, &["--mode", "crash-on-change"]);
        let a = uri(&dir, "a.fake");
        open(&mut server, &a, 1, "");
        change(&mut server, &a, 2, "x");
        assert_eq!(server.wait().code(), Some(1));

        let (mut server, _) = start(&dir, &["--mode", "crash-shutdown"]);
        server.send_request("shutdown", json!(null));
        assert_eq!(server.wait().code(), Some(1));

        // Without shutdown first, exit is an error exit (LSP: code 1).
        let (mut server, _) = start(&dir, &[]);
        server.notify("exit", json!(null));
        assert_eq!(server.wait().code(), Some(1));
    }

    #[test]
    fn unknown_mode_is_refused() {
        let dir = TempDir::new().expect("temp dir");
        let mut server = LspProcess::fake(&["--mode", "no-such-mode"], dir.path());
        assert_eq!(server.wait().code(), Some(2));
    }

    /// The next `textDocument/clangd.fileStatus` or publish, as `(state, version,
    /// messages)`: a state has no version nor messages, a publish no state.
    fn status_or_publish(server: &LspProcess) -> (String, Value, Vec<String>) {
        let frame = server.expect(|f| {
            matches!(f, Frame::Message(Message::Notification(n))
                if n.method == "textDocument/clangd.fileStatus"
                    || n.method == "textDocument/publishDiagnostics")
        });
        let Frame::Message(Message::Notification(not)) = frame else {
            unreachable!()
        };
        let state = not.params["state"].as_str().unwrap_or_default().to_owned();
        let texts = match &not.params["diagnostics"] {
            Value::Null => Vec::new(),
            list => messages(list).into_iter().map(str::to_owned).collect(),
        };
        (state, not.params["version"].clone(), texts)
    }

    #[test]
    fn file_status_mode_flaps_before_the_full_publish() {
        let dir = TempDir::new().expect("temp dir");
        let (mut server, _) = start(&dir, &["--mode", "file-status=50"]);
        let a = uri(&dir, "a.fake");
        let status = |state: &str| (state.to_owned(), Value::Null, Vec::new());
        let publish =
            |version: i32, texts: &[&str]| (String::new(), json!(version), strings(texts));
        let expected_for = |version: i32| {
            vec![
                status("file is queued"),
                publish(version, &["w"]),
                status("idle"),
                status("parsing includes"),
                publish(version, &["w", "e"]),
                status("idle"),
            ]
        };
        open(&mut server, &a, 1, "WARN w\nERROR e\n");
        let got: Vec<_> = (0..6).map(|_| status_or_publish(&server)).collect();
        assert_eq!(got, expected_for(1));
        change(&mut server, &a, 2, "WARN w\nERROR e\nfine\n");
        let got: Vec<_> = (0..6).map(|_| status_or_publish(&server)).collect();
        assert_eq!(got, expected_for(2));
    }

    #[test]
    fn idle_early_mode_says_idle_before_it_publishes() {
        let dir = TempDir::new().expect("temp dir");
        let (mut server, _) = start(&dir, &["--mode", "idle-early=50"]);
        let a = uri(&dir, "a.fake");
        open(&mut server, &a, 4, "ERROR e\n");
        let got: Vec<_> = (0..4).map(|_| status_or_publish(&server)).collect();
        assert_eq!(
            got,
            [
                ("file is queued".to_owned(), Value::Null, Vec::new()),
                ("idle".to_owned(), Value::Null, Vec::new()),
                (String::new(), json!(4), strings(&["e"])),
                ("idle".to_owned(), Value::Null, Vec::new()),
            ]
        );
    }

    fn strings(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn two_pass_mode_publishes_the_errors_then_everything() {
        let dir = TempDir::new().expect("temp dir");
        let (mut server, _) = start(&dir, &["--mode", "two-pass=50"]);
        let a = uri(&dir, "a.fake");
        open(&mut server, &a, 3, "WARN w\nERROR e\n");
        for expected in [vec!["e"], vec!["w", "e"]] {
            let publish = server.expect_publish(&a);
            assert_eq!(publish["version"], 3, "{publish}");
            assert_eq!(messages(&publish["diagnostics"]), expected, "{publish}");
        }
    }

    fn tsserver_request(server: &mut LspProcess, kind: &str, file: &str) -> Value {
        server.request(
            "workspace/executeCommand",
            json!({"command": "typescript.tsserverRequest", "arguments": [kind, {"file": file}]}),
        )
    }

    #[test]
    fn tsserver_mode_answers_the_diagnostics_commands() {
        let dir = TempDir::new().expect("temp dir");
        let (mut server, init) = start(&dir, &["--mode", "tsserver", "--mode", "silent"]);
        assert_eq!(
            init["capabilities"]["executeCommandProvider"]["commands"],
            json!(["typescript.tsserverRequest"]),
            "{init}"
        );
        let path = dir.path().join("a.fake");
        let file = path.to_str().expect("a UTF-8 path");
        // Not open: the disk's text. Then the open document's, not the disk's.
        fs::write(&path, "ERROR on disk\n").expect("write");
        let answer = tsserver_request(&mut server, "semanticDiagnosticsSync", file);
        assert_eq!(answer["body"][0]["text"], "on disk", "{answer}");
        open(
            &mut server,
            &uri(&dir, "a.fake"),
            1,
            "fine\n  é ERROR boom\nWARN\n",
        );
        let answer = tsserver_request(&mut server, "semanticDiagnosticsSync", file);
        assert_eq!(
            answer,
            json!({
                "seq": 0, "type": "response", "command": "semanticDiagnosticsSync",
                "request_seq": 2, "success": true,
                "body": [
                    {"start": {"line": 2, "offset": 5}, "end": {"line": 2, "offset": 15},
                     "text": "boom", "code": 1001, "category": "error"},
                    {"start": {"line": 3, "offset": 1}, "end": {"line": 3, "offset": 5},
                     "text": "warning", "code": 6133, "category": "warning"},
                ],
            })
        );
        for kind in ["syntacticDiagnosticsSync", "suggestionDiagnosticsSync"] {
            let answer = tsserver_request(&mut server, kind, file);
            assert_eq!(
                (&answer["command"], &answer["success"], &answer["body"]),
                (&json!(kind), &json!(true), &json!([])),
                "{answer}"
            );
        }
        let id = server.send_request("workspace/executeCommand", json!({"command": "other"}));
        match server.expect(|f| matches!(f, Frame::Message(Message::Response(_)))) {
            Frame::Message(Message::Response(resp)) => {
                assert_eq!(resp.id, id);
                assert!(resp.response_result.is_err(), "{resp:?}");
            }
            _ => unreachable!(),
        }

        let (mut failing, init) = start(&dir, &["--mode", "tsserver-fails"]);
        assert!(
            init["capabilities"]["executeCommandProvider"].is_object(),
            "{init}"
        );
        let answer = tsserver_request(&mut failing, "semanticDiagnosticsSync", file);
        assert_eq!(
            (&answer["success"], &answer["message"]),
            (&json!(false), &json!("No Project.")),
            "{answer}"
        );
    }
}

mod harness {
    //! The harness's own guarantees: a hung run fails instead of hanging the suite.

    use std::time::Duration;

    use crate::support::{Test, require_server};

    #[test]
    #[should_panic(expected = "watchdog: lspgate still running")]
    fn watchdog_fails_a_hung_run() {
        let _ = Test::new()
            .file("a.fake", "one\n")
            .fake_server(&["--mode", "hang-initialize"])
            .args([
                "write",
                "a.fake",
                "--content",
                "two\n",
                "--startup-timeout",
                "10m",
            ])
            .watchdog(Duration::from_secs(2))
            .run();
    }

    #[test]
    fn require_server_looks_on_path() {
        assert!(require_server("git"));
        let missing = std::panic::catch_unwind(|| require_server("lspgate-no-such-server"));
        match std::env::var("CI").as_deref() {
            Ok("true") => assert!(missing.is_err(), "a missing server must fail in CI"),
            _ => assert_eq!(missing.ok(), Some(false)),
        }
    }
}

// ---------------------------------------------------------------------------------
// Through the CLI.

#[test]
fn error_in_the_edited_file_is_reported_at_its_line() {
    let out = Test::new()
        .file("a.fake", "one\ntwo\n")
        .fake_server(&[])
        .args(["write", "a.fake", "--content", "one\nx ERROR boom\n"])
        .run();
    out.assert_code(1);
    assert_eq!(
        out.block("file_diagnostics"),
        Some(vec!["Error: a.fake:2:1 [fake][E1] boom"]),
        "{out}"
    );
    assert_eq!(out.block("project_diagnostics"), None, "{out}");
    let summary = out.summary();
    assert_eq!(
        summary.first(),
        Some(&"Current file: 1 error, 0 warnings"),
        "{out}"
    );
    assert!(
        summary
            .iter()
            .any(|l| l.starts_with("New: 1 error, 0 warnings")),
        "{out}"
    );
    assert_eq!(out.file("a.fake"), "one\nx ERROR boom\n");
    // The server was told as an editor would tell it, and stopped in order.
    let methods = out.fake_methods();
    for method in [
        "initialize",
        "initialized",
        "textDocument/didOpen",
        "textDocument/didSave",
        "shutdown",
        "exit",
    ] {
        assert!(
            methods.iter().any(|m| m == method),
            "{method} never sent: {methods:?}\n{out}"
        );
    }
    out.assert_no_orphans();
}

/// Issue 10, case 4, and issue 29, items 3 and 5: an untrusted project config that
/// would turn off the server of a file (`disabled`, or `extensions` it no longer
/// matches) or the verdict (`fail-on = "never"`) cannot make a breaking edit pass:
/// the key is withheld with a note naming it, the server runs and the error fails
/// the run, in lspgate's own process and through the daemon. Trusted, the project's
/// choice stands: the file is skipped, or the run passes.
#[test]
fn an_untrusted_project_config_cannot_switch_the_check_off() {
    for (project, key) in [
        ("[server.fake]\ndisabled = true\n", "server.fake.disabled"),
        (
            "[server.fake]\nextensions = [\"nope\"]\n",
            "server.fake.extensions",
        ),
        ("fail-on = \"never\"\n", "fail-on"),
    ] {
        for daemon in [false, true] {
            let test = Test::new()
                .file("a.fake", "one\n")
                .fake_server_in_user_config(&[])
                .file(".lspgate.toml", project);
            let test = if daemon { test.with_daemon() } else { test };
            let out = test
                .args(["write", "a.fake", "--content", "ERROR unseen\n"])
                .run();
            out.assert_code(1)
                .stdout_contains("[fake][E1] unseen")
                .stderr_contains(&format!("ignored {key}"))
                .stderr_contains("--trust-project");

            let out = out
                .again()
                .trust_project()
                .args(["write", "a.fake", "--content", "ERROR trusted\n"])
                .run();
            out.assert_code(0);
            if daemon {
                let _ = out.again().args(["daemon", "stop"]).run();
            }
        }
    }
}

#[test]
fn an_existing_file_is_changed_with_a_new_version() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&[])
        .args(["edit", "a.fake", "--old", "one", "--new", "ERROR two"])
        .run();
    out.assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] two");
    assert_eq!(out.file("a.fake"), "ERROR two\n");
    // The snapshot before needs the old text open first; the change must then raise the version.
    let log = out.fake_log();
    let versions: Vec<i64> = log
        .iter()
        .filter(|e| {
            e["method"] == "textDocument/didOpen" || e["method"] == "textDocument/didChange"
        })
        .filter(|e| {
            e["uri"]
                .as_str()
                .is_some_and(|uri| uri.ends_with("/a.fake"))
        })
        .filter_map(|e| e["version"].as_i64())
        .collect();
    assert!(
        versions.len() >= 2 && versions.windows(2).all(|w| w[0] < w[1]),
        "versions {versions:?}\n{out}"
    );
}

#[test]
fn clean_edit_exits_0_and_prints_only_the_summary() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&[])
        .args(["write", "a.fake", "--content", "one\ntwo\n"])
        .args(LONG)
        .run();
    out.assert_code(0);
    // Nothing to wait for once the clean publish is in: no wait runs out.
    out.assert_elapsed_below(LONG_BOUND);
    assert!(out.stdout.starts_with("<diagnostic_summary>\n"), "{out}");
    assert_eq!(
        out.stdout.matches('<').count(),
        2,
        "only the summary block\n{out}"
    );
    let summary = out.summary();
    assert_eq!(
        summary.first(),
        Some(&"Current file: 0 errors, 0 warnings"),
        "{out}"
    );
    assert!(
        summary
            .iter()
            .any(|l| l.starts_with("New: 0 errors, 0 warnings")),
        "{out}"
    );
    assert_eq!(
        out.notes(),
        Vec::<&str>::new(),
        "a complete check has no note\n{out}"
    );
    out.assert_no_orphans();
}

#[test]
fn write_reads_stdin_and_creates_the_file() {
    let out = Test::new()
        .fake_server(&[])
        .args(["write", "new/c.fake"])
        .stdin("fine\nWARN careful\n")
        .run();
    out.assert_code(0)
        .stdout_contains("Warn: new/c.fake:2:1 [fake][W1] careful");
    assert_eq!(out.file("new/c.fake"), "fine\nWARN careful\n");
}

#[test]
fn fail_on_warning_makes_a_new_warning_fail() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&[])
        .args([
            "write",
            "a.fake",
            "--content",
            "WARN w\n",
            "--fail-on",
            "warning",
        ])
        .run();
    out.assert_code(1)
        .stdout_contains("Warn: a.fake:1:1 [fake][W1] w");
}

#[test]
fn shifted_existing_error_is_not_new() {
    let test = Test::new()
        .file("a.fake", "x\nERROR old\n")
        .fake_server(&[]);
    let out = test
        .args(["write", "a.fake", "--content", "added\nx\nERROR old\n"])
        .run();
    out.assert_code(0).stdout_lacks("<file_diagnostics>");
    assert!(
        out.summary().iter().any(|l| l.starts_with("New: 0 errors")),
        "{out}"
    );

    // With --all it is listed, at its new line, and still does not fail the run.
    let out = out
        .again()
        .args([
            "write",
            "a.fake",
            "--content",
            "more\nadded\nx\nERROR old\n",
            "--all",
        ])
        .run();
    out.assert_code(0);
    assert_eq!(
        out.block("file_diagnostics"),
        Some(vec!["Error: a.fake:4:1 [fake][E1] old"]),
        "{out}"
    );
}

#[test]
fn fixed_error_is_counted() {
    let out = Test::new()
        .file("a.fake", "ERROR old\n")
        .fake_server(&[])
        .args(["write", "a.fake", "--content", "fine\n"])
        .run();
    out.assert_code(0);
    assert!(
        out.summary()
            .iter()
            .any(|l| l.starts_with("New: 0 errors") && l.contains("fixed 1")),
        "{out}"
    );
}

/// a defines `greet`, b uses it; nothing but lspgate ever opens b.
fn greet_workspace(server_args: &[&str]) -> Test {
    Test::new()
        .file("a.fake", "def greet\n")
        .file("b.fake", "use greet\n")
        .fake_server(server_args)
}

#[test]
fn breaking_a_dependent_is_reported_in_project_diagnostics() {
    let out = greet_workspace(&[])
        .args(["edit", "a.fake", "--old", "greet", "--new", "hello"])
        .args(LONG)
        .run();
    out.assert_code(1);
    // The waits end once the server has settled, not when they run out.
    out.assert_elapsed_below(LONG_BOUND);
    assert_eq!(
        out.block("file_diagnostics"),
        None,
        "a itself is clean\n{out}"
    );
    assert_eq!(
        out.block("project_diagnostics"),
        Some(vec!["Error: b.fake:1:1 [fake][E2] unknown name greet"]),
        "{out}"
    );
    let summary = out.summary();
    assert!(summary.contains(&"Project: 1 error, 0 warnings"), "{out}");
    assert!(
        summary
            .iter()
            .any(|l| l.starts_with("New: 1 error, 0 warnings")),
        "{out}"
    );
    assert_eq!(out.notes(), Vec::<&str>::new(), "{out}");
    out.assert_no_orphans();
}

#[test]
fn breaking_a_dependent_with_a_pull_server() {
    let out = greet_workspace(&["--pull"])
        .args(["edit", "a.fake", "--old", "greet", "--new", "hello"])
        .run();
    out.assert_code(1)
        .stdout_contains("Error: b.fake:1:1 [fake][E2] unknown name greet");
    // b is opened for the before view and then only pulled again: its text, which the
    // edit did not change, is not sent a second time (each would be parsed afresh).
    let b: Vec<(String, String)> = out
        .fake_log()
        .iter()
        .filter(|e| e["event"] == "recv")
        .filter(|e| e["uri"].as_str().is_some_and(|u| u.ends_with("/b.fake")))
        .filter_map(|e| {
            e["method"]
                .as_str()
                .map(|m| (m.to_owned(), e["version"].to_string()))
        })
        .collect();
    let pulls = b
        .iter()
        .filter(|(m, _)| m == "textDocument/diagnostic")
        .count();
    let sent: Vec<_> = b
        .iter()
        .filter(|(m, _)| m != "textDocument/diagnostic")
        .collect();
    assert_eq!(pulls, 2, "one pull before the edit, one after\n{out}");
    assert_eq!(
        sent,
        [&("textDocument/didOpen".to_owned(), "1".to_owned())],
        "{out}"
    );
    out.assert_no_orphans();
}

#[test]
fn json_report_marks_the_dependent() {
    let out = greet_workspace(&[])
        .args([
            "edit", "a.fake", "--old", "greet", "--new", "hello", "--format", "json",
        ])
        .run();
    out.assert_code(1);
    let report = out.json();
    assert_eq!(report["schema"], 2, "{report:#}");
    assert_eq!(report["exit_code"], 1, "{report:#}");
    assert_eq!(report["dry_run"], false, "{report:#}");
    assert_eq!(report["timed_out"], false, "{report:#}");
    assert_eq!(
        report["workspace"].as_str().map(std::path::Path::new),
        Some(out.workspace()),
        "{report:#}"
    );
    assert_eq!(
        report["applied"],
        serde_json::json!([{"path": "a.fake", "action": "modified"}]),
        "{report:#}"
    );
    assert_eq!(json_file(&report, "a.fake")["role"], "edited", "{report:#}");
    let b = json_file(&report, "b.fake");
    assert_eq!(b["role"], "dependent", "{report:#}");
    assert!(
        b["uri"]
            .as_str()
            .is_some_and(|uri| uri.starts_with("file:///") && uri.ends_with("/b.fake")),
        "{b:#}"
    );
    assert_eq!(
        b["diagnostics"],
        serde_json::json!([{
            "severity": "Error", "message": "unknown name greet", "source": "fake", "code": "E2", "new": true,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 9}},
            "related": [],
        }]),
        "{report:#}"
    );
    assert_eq!(
        report["summary"]["new"],
        serde_json::json!({"errors": 1, "warnings": 0}),
        "{report:#}"
    );
    assert_eq!(
        report["summary"]["project"],
        serde_json::json!({"errors": 1, "warnings": 0}),
        "{report:#}"
    );
    assert_eq!(report["servers"][0]["name"], "fake", "{report:#}");
    assert_eq!(report["servers"][0]["status"], "ok", "{report:#}");
}

#[test]
fn patch_reports_every_edited_file() {
    let patch = "\
--- a/a.fake
+++ b/a.fake
@@ -1 +1 @@
-one
+ERROR in a
--- a/b.fake
+++ b/b.fake
@@ -1 +1 @@
-two
+ERROR in b
";
    let out = Test::new()
        .file("a.fake", "one\n")
        .file("b.fake", "two\n")
        .fake_server(&[])
        .args(["patch", "-"])
        .stdin(patch)
        .run();
    out.assert_code(1);
    assert_eq!(
        out.block("file_diagnostics"),
        Some(vec![
            "Error: a.fake:1:1 [fake][E1] in a",
            "Error: b.fake:1:1 [fake][E1] in b"
        ]),
        "{out}"
    );
    assert_eq!(
        (out.file("a.fake"), out.file("b.fake")),
        ("ERROR in a\n".into(), "ERROR in b\n".into())
    );
}

#[test]
fn dry_run_leaves_the_disk_byte_identical() {
    let test = greet_workspace(&[]).file("c.fake", "crlf\r\nline\r\n");
    let before = test.snapshot();
    let out = test
        .args([
            "edit",
            "a.fake",
            "--old",
            "def greet",
            "--new",
            "ERROR gone",
            "--dry-run",
            "--format",
            "json",
        ])
        .run();
    out.assert_code(1);
    let report = out.json();
    assert_eq!(report["dry_run"], true, "{report:#}");
    // The servers saw the new text in memory: both the edit's error and the broken dependent.
    let messages = |path| {
        json_file(&report, path)["diagnostics"]
            .as_array()
            .map(|ds| ds.iter().map(|d| d["message"].clone()).collect::<Vec<_>>())
    };
    assert_eq!(messages("a.fake"), Some(vec!["gone".into()]), "{report:#}");
    assert_eq!(
        messages("b.fake"),
        Some(vec!["unknown name greet".into()]),
        "{report:#}"
    );
    assert_eq!(out.snapshot(), before, "{out}");

    // A file the edit would create is not created either.
    let out = out
        .again()
        .args(["write", "d.fake", "--content", "ERROR new\n", "--dry-run"])
        .run();
    out.assert_code(1)
        .stdout_contains("Error: d.fake:1:1 [fake][E1] new");
    assert_eq!(out.snapshot(), before, "{out}");
    out.assert_no_orphans();
}

#[test]
fn reject_leaves_the_disk_unchanged_when_the_edit_fails() {
    let test = greet_workspace(&[]);
    let before = test.snapshot();
    let out = test
        .args([
            "edit", "a.fake", "--old", "greet", "--new", "hello", "--reject",
        ])
        .run();
    out.assert_code(1)
        .stdout_contains("Error: b.fake:1:1 [fake][E2] unknown name greet");
    assert_eq!(out.snapshot(), before, "{out}");

    // A clean edit is applied.
    let out = out
        .again()
        .args([
            "write",
            "b.fake",
            "--content",
            "use greet\nfine\n",
            "--reject",
        ])
        .run();
    out.assert_code(0);
    assert_eq!(out.file("b.fake"), "use greet\nfine\n");
    out.assert_no_orphans();
}

// ---------------------------------------------------------------------------------
// Faults: each costs at most the timeouts, leaves the edit applied, says what was not
// checked, and leaves no server behind.

const CLEAN: &str = "one\ntwo\n";
const BROKEN: &str = "one\nERROR boom\n";

/// Edits an existing a.fake (so the server sees an open, then a change) under `mode`.
#[track_caller]
fn fault_run(mode: &str, content: &str) -> crate::support::Output {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&["--mode", mode])
        .args(["write", "a.fake", "--content", content])
        .args(FAST)
        .run();
    out.assert_elapsed_below(FAST_BOUND);
    assert_eq!(out.file("a.fake"), content, "the edit stays applied\n{out}");
    out.assert_no_orphans();
    out
}

/// A fault that leaves the edit unchecked: exit 3 and a note naming what was not checked.
#[track_caller]
fn assert_unchecked(mode: &str) -> crate::support::Output {
    let out = fault_run(mode, CLEAN);
    out.assert_code(3);
    let notes = out.notes();
    assert!(
        !notes.is_empty() && notes.iter().any(|n| n.contains("fake")),
        "no note naming the server or file\n{out}"
    );
    out
}

#[track_caller]
fn assert_timeout_note(out: &crate::support::Output) {
    assert!(
        out.notes()
            .iter()
            .any(|n| n.to_lowercase().contains("time")),
        "no note about a timeout\n{out}"
    );
}

/// A fault that does not stop the check: the right diagnostics and exit status.
#[track_caller]
fn assert_checked(mode: &str) -> crate::support::Output {
    let out = fault_run(mode, BROKEN);
    out.assert_code(1);
    assert_eq!(
        out.block("file_diagnostics"),
        Some(vec!["Error: a.fake:2:1 [fake][E1] boom"]),
        "{out}"
    );
    out
}

#[test]
fn fault_hang_initialize() {
    let out = assert_unchecked("hang-initialize");
    // The budget that ran out is the start-up one (FAST's 3s), not the primary wait's.
    assert!(
        out.notes().iter().any(|n| n.contains("3s")),
        "the note should name the start-up budget that ran out\n{out}"
    );
}

#[test]
fn fault_crash_initialize() {
    assert_unchecked("crash-initialize");
}

#[test]
fn fault_exit_immediately() {
    assert_unchecked("exit-immediately");
}

/// A server that dies on the change either stays dead (the check is incomplete: exit 3,
/// and no diagnostic can have been seen) or, if lspgate restarts it, is checked in full
/// by the new one, which only sees an open.
#[test]
fn fault_crash_on_change() {
    for (content, found) in [
        (CLEAN, None),
        (BROKEN, Some("Error: a.fake:2:1 [fake][E1] boom")),
    ] {
        let out = fault_run("crash-on-change", content);
        if out.fake_pids().len() == 1 {
            out.assert_code(3).stdout_lacks("boom");
            assert!(
                out.notes().iter().any(|n| n.contains("fake")),
                "no note naming the server or file\n{out}"
            );
        } else {
            match found {
                Some(line) => out.assert_code(1).stdout_contains(line),
                None => out.assert_code(0),
            };
        }
    }
}

/// A check changes nothing, so it sends no change: the server's answer to the open
/// stands (sending the text again makes pyright re-check every importer). A server
/// that dies on any change is checked in full, by the one process it started as.
#[test]
fn a_check_sends_no_change() {
    let out = Test::new()
        .file("a.fake", "ERROR stood\n")
        .fake_server(&["--mode", "crash-on-change"])
        .args(["check", "a.fake"])
        .args(FAST)
        .run();
    out.assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] stood");
    assert_eq!(out.fake_pids().len(), 1, "{out}");
    assert!(out.notes().is_empty(), "{out}");
}

#[test]
fn fault_stale_version() {
    let out = assert_unchecked("stale-version");
    assert_timeout_note(&out);
}

#[test]
fn fault_progress_never_ends() {
    let out = assert_unchecked("progress-never-ends");
    assert_timeout_note(&out);
}

#[test]
fn fault_silent() {
    assert_unchecked("silent");
}

#[test]
fn fault_slow_publish_beyond_the_timeouts() {
    assert_unchecked("slow-publish=8000");
}

#[test]
fn fault_stale_version_in_json() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&["--mode", "stale-version"])
        .args(["write", "a.fake", "--content", CLEAN, "--format", "json"])
        .args(FAST)
        .run();
    out.assert_code(3).assert_elapsed_below(FAST_BOUND);
    let report = out.json();
    assert_eq!(
        (report["exit_code"].clone(), report["timed_out"].clone()),
        (3.into(), true.into()),
        "{report:#}"
    );
    assert_eq!(report["servers"][0]["status"], "timeout", "{report:#}");
    let reasons = report["incomplete"].as_array().expect("incomplete");
    assert!(
        reasons
            .iter()
            .any(|r| r["kind"] == "timed_out" && r["server"] == "fake"),
        "{report:#}"
    );
}

#[test]
fn fault_hang_shutdown() {
    assert_checked("hang-shutdown");
}

#[test]
fn fault_crash_shutdown() {
    assert_checked("crash-shutdown");
}

#[test]
fn fault_garbage_still_gets_the_diagnostics() {
    assert_checked("garbage");
}

#[test]
fn fault_flood_stderr_still_gets_the_diagnostics() {
    assert_checked("flood-stderr");
}

#[test]
fn fault_no_version_still_gets_the_diagnostics() {
    assert_checked("no-version");
}

#[test]
fn slow_publish_within_the_timeouts_is_waited_for() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&["--mode", "slow-publish=400"])
        .args(["write", "a.fake", "--content", BROKEN])
        .run();
    out.assert_code(1)
        .stdout_contains("Error: a.fake:2:1 [fake][E1] boom");
    assert_eq!(out.notes(), Vec::<&str>::new(), "{out}");
    out.assert_no_orphans();
}

#[test]
fn server_requests_are_answered() {
    let out = assert_checked("server-request");
    let log = out.fake_log();
    let response = |id: &str| {
        log.iter()
            .find(|e| e["event"] == "response" && e["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("lspgate never answered {id}\n{out}"))
    };
    assert_eq!(response("fake-unknown")["error"]["code"], -32601, "{out}");
    let config = response("fake-configuration");
    assert_eq!(
        config["result"].as_array().map(Vec::len),
        Some(2),
        "{config}\n{out}"
    );
}

#[test]
fn missing_server_is_an_incomplete_check() {
    let config = "[server.fake]\ncommand = \"/nonexistent/fake-lsp\"\nextensions = [\"fake\"]\n";
    let out = Test::new()
        .file(".lspgate.toml", config)
        .file("a.fake", "one\n")
        .trust_project()
        .args(["write", "a.fake", "--content", CLEAN])
        .args(FAST)
        .run();
    out.assert_code(3).assert_elapsed_below(FAST_BOUND);
    assert!(out.notes().iter().any(|n| n.contains("fake")), "{out}");
    assert_eq!(out.file("a.fake"), CLEAN);

    // In JSON, the same reason typed.
    let out = Test::new()
        .file(".lspgate.toml", config)
        .file("a.fake", "one\n")
        .trust_project()
        .args(["write", "a.fake", "--content", CLEAN, "--format", "json"])
        .args(FAST)
        .run();
    out.assert_code(3);
    let report = out.json();
    assert_eq!(
        report["incomplete"][0]["kind"], "not_installed",
        "{report:#}"
    );
    assert_eq!(report["incomplete"][0]["server"], "fake", "{report:#}");
    assert_eq!(report["incomplete"][0]["files"][0], "a.fake", "{report:#}");
}

// ---------------------------------------------------------------------------------
// How waits end (src/wait.rs): a positive sign that a file is done (a pull answer, a
// publish echoing our version, clangd's latest state "idle") needs only the server's
// confirmed quiet period, which only some built-in profiles shorten. The fake server
// takes a built-in's profile by replacing that entry's command (`fake_server_as`).

/// clangd's profile (confirmed quiet 15 ms): after the change the fake says "file is
/// queued", publishes a first pass with our version but without the error, flaps
/// ("idle", then "parsing includes"), and only 150 ms later publishes the error and
/// says "idle". The file was clean before, so ending the wait on the first pass or on
/// the flap's "idle" would report nothing and exit 0: only the latest state counts.
#[test]
fn clangd_file_states_keep_the_wait_until_the_latest_is_idle() {
    let out = Test::new()
        .file("a.fake", "one\ntwo\n")
        .fake_server_as("clangd", &["--mode", "file-status=150"])
        .args([
            "write",
            "a.fake",
            "--content",
            "one\nx ERROR boom\n",
            "--format",
            "json",
        ])
        .args(LONG)
        .run();
    out.assert_code(1).assert_elapsed_below(LONG_BOUND);
    let report = out.json();
    assert_eq!(report["servers"][0]["name"], "clangd", "{report:#}");
    assert_eq!(report["servers"][0]["status"], "ok", "{report:#}");
    assert_eq!(report["timed_out"], false, "{report:#}");
    assert_eq!(
        json_file(&report, "a.fake")["diagnostics"],
        serde_json::json!([{
            "severity": "Error", "message": "boom", "source": "fake", "code": "E1", "new": true,
            "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 12}},
            "related": [],
        }]),
        "{report:#}"
    );
    out.assert_no_orphans();
}

/// Two units as clangd's, `b.fake` with an error of its own, every publish 1.5 s after
/// its cause, through a daemon.
fn slow_units() -> Test {
    slow_units_of("one\n", "ERROR old\n")
}

/// Two units as clangd's, `a.fake` and `b.fake` with these texts, every publish 1.5 s
/// after its cause, through a daemon.
fn slow_units_of(a: &str, b: &str) -> Test {
    Test::new()
        .file("a.fake", a)
        .file("b.fake", b)
        .compile_commands(&["a.fake", "b.fake"])
        .fake_server_as("clangd", &["--mode", "slow-publish=1500"])
        .with_daemon()
}

/// A check of `a.fake`, after which the daemon opens the units, then at once a write
/// of `a.fake` with `text`: the write's output.
fn write_while_units_build(test: Test, text: &str) -> crate::support::Output {
    let first = test.args(["check", "a.fake"]).args(LONG).run();
    first.assert_code(0);
    first
        .again()
        .args(["write", "a.fake", "--content", text])
        .args(LONG)
        .run()
}

/// A warm daemon opens clangd's units between runs, two at a time (`daemon::units`):
/// a run that comes while one is still building has it closed and queued again
/// (idle work yields), where it used to take the unit's first word, after the edit,
/// as news. Here every publish comes 1.5 s after its cause, `b.fake` has an error of
/// its own, and the edit comes at once after the run that had the daemon open it:
/// without the yield (and without the wait for a document's owed first word, the
/// safety net behind it) `b.fake` read as broken by the edit (exit 1).
#[test]
fn a_unit_still_building_when_a_run_comes_is_nothing_new() {
    let test = slow_units();
    let _guard = DaemonGuard::new(&test);
    let edit = write_while_units_build(test, "two\n");
    edit.assert_code(0);
    assert_eq!(edit.block("project_diagnostics"), None, "{edit}");
}

/// A unit still building when a run comes that the edit reaches is kept open, not
/// closed and opened again: its first word is its before view, and clangd goes on
/// with the build it began (lua's `lvm.c`: 0.15 s of its 0.2 s were thrown away). Here
/// `b.fake` uses what `a.fake` defines, the edit renames it, and every publish comes
/// 1.5 s after its cause: the break is reported as new, and `b.fake` was opened once
/// and never closed.
#[test]
fn a_unit_still_building_that_the_edit_reaches_is_kept_open() {
    let test = slow_units_of("def one\n", "use one\n");
    let _guard = DaemonGuard::new(&test);
    let edit = write_while_units_build(test, "def two\n");
    edit.assert_code(1);
    assert_eq!(
        edit.block("project_diagnostics"),
        Some(vec!["Error: b.fake:1:1 [fake][E2] unknown name one"]),
        "{edit}"
    );
    let log = edit.fake_log();
    let b_events: Vec<&str> = log
        .iter()
        .filter(|e| e["uri"].as_str().is_some_and(|u| u.ends_with("/b.fake")))
        .filter_map(|e| e["method"].as_str())
        .filter(|m| m.starts_with("textDocument/did"))
        .map(|m| m.trim_start_matches("textDocument/"))
        .collect::<Vec<_>>();
    assert_eq!(b_events.first(), Some(&"didOpen"), "{b_events:?}\n{edit}");
    assert!(
        !b_events.contains(&"didClose")
            && b_events.iter().filter(|m| **m == "didOpen").count() == 1,
        "b.fake was closed or opened again: {b_events:?}\n{edit}"
    );
}

/// `check --changed` takes its before view from what the servers had said when the
/// daemon last heard the tree unchanged. A unit the daemon opened after the last call
/// and that clangd built once a harness had written again has no word in that view:
/// its standing error read as new (exit 1). It cannot be told new from old: not
/// counted, and the call says so (exit 3).
#[test]
fn a_unit_first_heard_after_a_change_behind_the_daemon_is_not_news() {
    let test = slow_units().staged();
    let _guard = DaemonGuard::new(&test);
    std::fs::write(test.path("a.fake"), "two\n").expect("a change");
    let first = test.args(["check", "--changed"]).args(LONG).run();
    first.assert_code(0);
    std::fs::write(first.workspace().join("a.fake"), "three\n").expect("another change");
    let (heard, held) = first.once_the_daemon_reports("b.fake", Duration::from_secs(20));
    assert!(heard, "{held}");
    let second = held.again().args(["check", "--changed"]).args(LONG).run();
    second.assert_code(3);
    assert_eq!(second.block("project_diagnostics"), None, "{second}");
    assert!(
        second
            .notes()
            .iter()
            .any(|n| n.contains("no before view of b.fake")),
        "{second}"
    );
}

/// clangd's "idle" with nothing published since the change is no positive sign
/// (clangd says it between the steps of one rebuild): it waits out the full quiet
/// period (150 ms), in which the publish of the error, 50 ms after that "idle", comes.
/// Taken as done after the short confirmed quiet, the wait would end with the clean
/// diagnostics from before the edit and exit 0.
#[test]
fn clangd_idle_before_any_publish_is_not_done() {
    let out = Test::new()
        .file("a.fake", "one\ntwo\n")
        .fake_server_as("clangd", &["--mode", "idle-early=50"])
        .args(["write", "a.fake", "--content", "one\nx ERROR boom\n"])
        .args(LONG)
        .run();
    out.assert_code(1).assert_elapsed_below(LONG_BOUND);
    assert_eq!(
        out.block("file_diagnostics"),
        Some(vec!["Error: a.fake:2:1 [fake][E1] boom"]),
        "{out}"
    );
    assert_eq!(out.notes(), Vec::<&str>::new(), "{out}");
    out.assert_no_orphans();
}

/// The default profile has no short confirmed quiet: a publish echoing our version is
/// a positive sign, but the wait still waits out the full quiet period (300 ms), so
/// the second pass of a server that publishes a file twice per change (here 100 ms
/// later, with the same version, adding the warning) is in the report.
#[test]
fn the_default_profile_waits_its_full_quiet_after_a_versioned_publish() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&["--mode", "two-pass=100"])
        .args([
            "write",
            "a.fake",
            "--content",
            "one\nERROR boom\nWARN careful\n",
        ])
        .args(LONG)
        .run();
    out.assert_code(1).assert_elapsed_below(LONG_BOUND);
    assert_eq!(
        out.block("file_diagnostics"),
        Some(vec![
            "Error: a.fake:2:1 [fake][E1] boom",
            "Warn: a.fake:3:1 [fake][W1] careful",
        ]),
        "{out}"
    );
    assert_eq!(out.notes(), Vec::<&str>::new(), "{out}");
    out.assert_no_orphans();
}

const TSLS: &str = "typescript-language-server";

/// The `workspace/executeCommand` tsserver requests the fake server got for `file`
/// (a path ending), by kind.
fn tsserver_requests(out: &crate::support::Output, file: &str) -> Vec<String> {
    out.fake_log()
        .iter()
        .filter(|e| e["event"] == "recv" && e["method"] == "workspace/executeCommand")
        .filter(|e| e["command"] == "typescript.tsserverRequest")
        .filter(|e| {
            e["arguments"][1]["file"]
                .as_str()
                .is_some_and(|f| f.ends_with(file))
        })
        .filter_map(|e| e["arguments"][0].as_str().map(str::to_owned))
        .collect()
}

/// typescript-language-server's profile: the server offers `typescript.tsserverRequest`,
/// so a file's diagnostics are pulled from tsserver's three `*DiagnosticsSync`
/// commands and converted (1-based line and offset to 0-based). The fake's pushes come
/// 8 s late, after every wait has run out: only the pull route can give a complete
/// report, with the error where tsserver puts it (from the word, not column 0 as the
/// pushes would) and its numeric code.
#[test]
fn typescript_language_server_is_pulled_through_tsserver() {
    let out = Test::new()
        .file("a.fake", "one\ntwo\n")
        .fake_server_as(TSLS, &["--mode", "tsserver", "--mode", "slow-publish=8000"])
        .args([
            "write",
            "a.fake",
            "--content",
            "one\n  x ERROR boom\n",
            "--format",
            "json",
        ])
        .args(FAST)
        .run();
    out.assert_code(1).assert_elapsed_below(FAST_BOUND);
    let report = out.json();
    assert_eq!(report["servers"][0]["name"], TSLS, "{report:#}");
    assert_eq!(report["servers"][0]["status"], "ok", "{report:#}");
    assert_eq!(
        (report["exit_code"].clone(), report["timed_out"].clone()),
        (1.into(), false.into()),
        "{report:#}"
    );
    assert_eq!(
        json_file(&report, "a.fake")["diagnostics"],
        serde_json::json!([{
            "severity": "Error", "message": "boom", "source": "typescript", "code": 1001,
            "new": true,
            "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 14}},
            "related": [],
        }]),
        "{report:#}"
    );
    // Once for the text before the edit, once for the text after it: three commands each.
    let mut kinds = tsserver_requests(&out, "/a.fake");
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "semanticDiagnosticsSync",
            "semanticDiagnosticsSync",
            "suggestionDiagnosticsSync",
            "suggestionDiagnosticsSync",
            "syntacticDiagnosticsSync",
            "syntacticDiagnosticsSync",
        ],
        "{out}"
    );
    out.assert_no_orphans();

    // Fixing it: the error seen before the edit (pulled too) is counted as fixed.
    let out = out
        .again()
        .args(["write", "a.fake", "--content", "one\ntwo\n"])
        .args(FAST)
        .run();
    out.assert_code(0).assert_elapsed_below(FAST_BOUND);
    assert_eq!(out.notes(), Vec::<&str>::new(), "{out}");
    assert!(
        out.summary()
            .iter()
            .any(|l| l.starts_with("New: 0 errors") && l.contains("fixed 1")),
        "{out}"
    );
    out.assert_no_orphans();
}

/// When tsserver's answers fail (`success: false`), lspgate falls back to the pushes
/// (prompt, unversioned): the report is complete and has the pushed error (column 1,
/// the fake's code), and the run ends when the server settles, not at a timeout.
#[test]
fn a_failing_tsserver_route_falls_back_to_pushes() {
    let out = Test::new()
        .file("a.fake", "one\ntwo\n")
        .fake_server_as(TSLS, &["--mode", "tsserver-fails", "--mode", "no-version"])
        .args(["write", "a.fake", "--content", "one\n  x ERROR boom\n"])
        .args(LONG)
        .args(["--startup-timeout", "20s"])
        .run();
    out.assert_code(1).assert_elapsed_below(LONG_BOUND);
    assert_eq!(
        out.block("file_diagnostics"),
        Some(vec!["Error: a.fake:2:1 [fake][E1] boom"]),
        "{out}"
    );
    assert_eq!(out.notes(), Vec::<&str>::new(), "{out}");
    assert!(
        !tsserver_requests(&out, "/a.fake").is_empty(),
        "the tsserver route was never tried\n{out}"
    );
    out.assert_no_orphans();
}

/// The fallback is logged: `lspgate logs` (from the warm daemon) says the tsserver route
/// failed, why, and that lspgate waits for pushes instead.
#[test]
fn the_tsserver_fallback_is_in_the_logs() {
    let test = Test::new()
        .file("a.fake", "one\ntwo\n")
        .fake_server_as(TSLS, &["--mode", "tsserver-fails", "--mode", "no-version"])
        .with_daemon();
    let _guard = DaemonGuard::new(&test);
    let out = test
        .args(["write", "a.fake", "--content", "one\n  x ERROR boom\n"])
        .args(LONG)
        .run();
    out.assert_code(1)
        .assert_elapsed_below(LONG_BOUND)
        .stdout_contains("Error: a.fake:2:1 [fake][E1] boom");
    assert_eq!(out.notes(), Vec::<&str>::new(), "{out}");

    let logs = out.again().args(["logs", "--level", "warning"]).run();
    logs.assert_code(0);
    let path = logs.workspace().join("a.fake");
    logs.stdout_contains(&format!(
        "{TSLS} [warning] lspgate: pull of {} through tsserver failed, waiting for pushes \
         instead: tsserver said: No Project.",
        path.display()
    ));

    let stop = logs.again().args(["daemon", "stop"]).run();
    stop.assert_code(0);
    stop.assert_no_orphans();
}

mod workspace_analysis {
    //! A server that analyses its whole workspace by itself, paced as pyright's
    //! workspace mode is (the fake's `workspace=MS`): nothing for a slice after each
    //! change, then the open files' publishes and the create of the analysis's progress,
    //! a slice later its begin, every other file, and its end. Silence never says the
    //! analysis is done; only the server's own signs do.

    use super::*;

    const SLICE: &str = "workspace=400";

    /// a.fake's `greet` renamed: b.fake, which uses it, breaks.
    const RENAME_GREET: [&str; 6] = [
        "edit",
        "a.fake",
        "--old",
        "def greet",
        "--new",
        "def welcome",
    ];

    /// a.fake defines `greet`, b.fake uses it, c.fake has an error of its own.
    fn project() -> Test {
        Test::new()
            .file("a.fake", "def greet\n")
            .file("b.fake", "use greet\n")
            .file("c.fake", "ERROR old\n")
            .fake_server_as("pyright", &["--mode", SLICE])
    }

    fn new_messages(report: &Value) -> Vec<String> {
        report["files"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|f| f["diagnostics"].as_array().into_iter().flatten())
            .filter(|d| d["new"] == true)
            .map(|d| d["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// Cold, the edit arrives while the start-up analysis is still under way: the run
    /// waits for it (the create of its progress, then its end) before taking the before
    /// view, so c.fake's old error is not new, and b.fake's break is found without
    /// anyone opening it.
    #[test]
    fn an_edit_during_the_start_up_analysis_waits_for_it() {
        let out = project()
            .args(RENAME_GREET)
            .args(["--no-daemon", "--format", "json"])
            .args(LONG)
            .run();
        out.assert_code(1);
        let report = out.json();
        assert_eq!(
            new_messages(&report),
            ["unknown name greet"],
            "only b.fake's break is new\n{out}"
        );
        assert_eq!(json_file(&report, "b.fake")["role"], "dependent", "{out}");
        let opened: Vec<Value> = out
            .fake_log()
            .into_iter()
            .filter(|e| e["method"] == "textDocument/didOpen")
            .map(|e| e["uri"].clone())
            .collect();
        assert!(
            opened
                .iter()
                .all(|u| u.as_str().is_some_and(|u| u.ends_with("/a.fake"))),
            "only the edited file is opened: {opened:?}\n{out}"
        );
    }

    /// Cold, a start-up analysis that does not finish within the start-up budget gives
    /// no before view: c.fake's old error is not counted as new (it was, exit 1), nor
    /// anything else it says, and the run is incomplete.
    #[test]
    fn an_unfinished_start_up_analysis_counts_nothing_as_new() {
        let out = Test::new()
            .file("a.fake", "def greet\n")
            .file("c.fake", "ERROR old\n")
            .fake_server_as("pyright", &["--mode", "workspace=3000"])
            .args([
                "edit",
                "a.fake",
                "--old",
                "def greet",
                "--new",
                "def greet\nERROR new",
            ])
            .args(["--no-daemon", "--format", "json"])
            .args([
                "--startup-timeout",
                "1s",
                "--timeout",
                "8s",
                "--cross-file-timeout",
                "1s",
            ])
            .run();
        out.assert_code(3);
        let report = out.json();
        assert_eq!(new_messages(&report), Vec::<String>::new(), "{out}");
        assert_eq!(report["servers"][0]["status"], "timeout", "{out}");
        let kinds: Vec<&str> = report["incomplete"]
            .as_array()
            .expect("incomplete")
            .iter()
            .filter_map(|r| r["kind"].as_str())
            .collect();
        assert!(kinds.contains(&"workspace_unfinished"), "{out}");
    }

    /// Cold, a run that only creates a file gives the server none of its files to
    /// answer for: one file of the root, opened, is the sign its analysis began.
    #[test]
    fn a_run_creating_a_file_waits_for_the_start_up_analysis_too() {
        let out = project()
            .args(["write", "d.fake", "--content", "use greet\n"])
            .args(["--no-daemon", "--format", "json"])
            .args(LONG)
            .run();
        out.assert_code(0);
        assert!(new_messages(&out.json()).is_empty(), "{out}");
    }

    /// Warm, an edit of a file the server analysed but nobody opened: it is opened as
    /// it was and then changed, as an editor would, since the server takes an opened
    /// file's text for the disk's and re-analyses nothing else on an open.
    #[test]
    fn a_warm_edit_of_an_unopened_file_reaches_its_dependents() {
        let test = project().with_daemon();
        let _guard = DaemonGuard::new(&test);
        let first = test.args(["check", "c.fake"]).args(LONG).run();
        first.assert_code(1);
        let next = first
            .again()
            .args(RENAME_GREET)
            .args(["--format", "json"])
            .args(LONG)
            .run();
        next.assert_code(1);
        assert_eq!(new_messages(&next.json()), ["unknown name greet"], "{next}");
        let stopped = next.again().args(["daemon", "stop"]).run();
        stopped.assert_code(0);
    }

    /// Warm, an edit written to an open file is shown to the server as a close and an
    /// open, not a change, which pyright answers only after 250 ms of waiting for more
    /// typing; b.fake's break is found all the same. A dry run's text, which the disk
    /// does not hold, is a change: an open alone would not have the server re-analyse
    /// b.fake. Putting the disk's text back after it is a close and an open again.
    #[test]
    fn a_written_edit_is_a_close_and_an_open_and_a_dry_run_a_change() {
        let test = project().with_daemon();
        let _guard = DaemonGuard::new(&test);
        let first = test.args(["check", "a.fake"]).args(LONG).run();
        first.assert_code(0);
        let dry = first
            .again()
            .args(RENAME_GREET)
            .args(["--dry-run", "--format", "json"])
            .args(LONG)
            .run();
        dry.assert_code(1);
        assert_eq!(new_messages(&dry.json()), ["unknown name greet"], "{dry}");
        let written = dry
            .again()
            .args(RENAME_GREET)
            .args(["--format", "json"])
            .args(LONG)
            .run();
        written.assert_code(1);
        assert_eq!(
            new_messages(&written.json()),
            ["unknown name greet"],
            "{written}"
        );
        let sent: Vec<String> = written
            .fake_log()
            .iter()
            .filter(|e| e["event"] == "recv")
            .filter(|e| e["uri"].as_str().is_some_and(|u| u.ends_with("/a.fake")))
            .filter_map(|e| e["method"].as_str())
            .filter(|m| m.starts_with("textDocument/did"))
            .map(|m| m.trim_start_matches("textDocument/").to_owned())
            .collect();
        assert_eq!(
            sent,
            [
                "didOpen",   // the check
                "didChange", // the dry run
                "didClose",  // its end: the disk's text back
                "didOpen",
                "didClose", // the written edit
                "didOpen",
                "didSave",
            ],
            "{written}"
        );
        let stopped = written.again().args(["daemon", "stop"]).run();
        stopped.assert_code(0);
    }

    /// Warm, a break made behind the daemon's back (b.fake rewritten on disk) is
    /// re-analysed before the next run's before view: the next edit, harmless, is not
    /// blamed for it, as a cold run would not.
    #[test]
    fn a_change_behind_the_daemons_back_is_analysed_before_the_next_run() {
        let test = project().with_daemon();
        let _guard = DaemonGuard::new(&test);
        let first = test.args(["check", "a.fake"]).args(LONG).run();
        first.assert_code(0);
        std::fs::write(first.workspace().join("b.fake"), "use missing\n")
            .expect("write b.fake behind the daemon's back");
        let next = first
            .again()
            .args([
                "edit",
                "c.fake",
                "--old",
                "ERROR old",
                "--new",
                "ERROR old\nWARN note",
            ])
            .args(["--format", "json"])
            .args(LONG)
            .run();
        let report = next.json();
        assert_eq!(
            new_messages(&report),
            ["note"],
            "only the edit's own warning is new\n{next}"
        );
        next.assert_code(0);
        let stopped = next.again().args(["daemon", "stop"]).run();
        stopped.assert_code(0);
    }
}

/// `check --changed` of a file another tool writes again while it is being checked:
/// the report is not of the disk as it is now, so it is not clean (exit 3, a note), and
/// the next call checks the file again as it then is.
#[test]
fn a_file_written_again_during_check_changed_is_not_passed() {
    let test = Test::new().file("a.fake", "one\n");
    let marker = test.path("a.fake");
    // Staged: with no baseline yet, the first call measures from git's index.
    let test = test
        .fake_server(&["--append-on-change", &marker.display().to_string()])
        .staged();
    let first = test.args(["check", "--changed"]).run();
    first.assert_code(0);
    std::fs::write(first.workspace().join("a.fake"), "one\ntwo\n").expect("another tool's write");
    let during = first.again().args(["check", "--changed"]).run();
    during.assert_code(3);
    assert!(
        during
            .notes()
            .iter()
            .any(|n| n.contains("written again while it was checked")),
        "{during}"
    );
    let again = during.again().args(["check", "--changed"]).run();
    assert!(
        !again.notes().iter().any(|n| n.contains("no earlier check")),
        "{again}"
    );
    again.assert_code(3);
}

/// `check --changed` outside git, with no earlier call: what changed before it cannot
/// be known, so it is not clean (exit 3), and the next call measures from it.
#[test]
fn check_changed_with_nothing_to_measure_from_is_not_clean() {
    let test = Test::new().file("a.fake", "one\n").fake_server(&[]);
    std::fs::remove_dir_all(test.path(".git")).expect("no git");
    let first = test.args(["check", "--changed"]).run();
    first.assert_code(3);
    assert!(
        first.notes().iter().any(|n| n.contains("cannot be known")),
        "{first}"
    );
    let next = first.again().args(["check", "--changed"]).run();
    next.assert_code(0);
}

/// A report that cannot be printed (stdout on a full disk) after the edit was written
/// never claims that nothing was written: exit 1 when the edit broke something, else
/// 3 (the caller did not get the report), with a line saying what happened.
#[test]
fn a_report_that_cannot_be_printed_does_not_claim_nothing_was_written() {
    for (new, code) in [("one\ntwo\n", 3), ("one\nERROR two\n", 1)] {
        let test = Test::new()
            .file("a.fake", "one\n")
            .fake_server(&[])
            .args(["write", "a.fake", "--content", new])
            .args(LONG);
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = test
            .command_with(env!("CARGO_BIN_EXE_lspgate"))
            .args(test.lspgate_args())
            .stdout(full)
            .output()
            .expect("lspgate runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        assert!(
            stderr.contains("the edit was written and checked")
                && stderr.contains("could not be printed"),
            "{stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(test.path("a.fake")).expect("a.fake"),
            new,
            "the edit is on disk"
        );
    }
}

/// A file whose before view did not arrive (the server slower than the start-up
/// budget): what the server says of it after the edit cannot be told new from old, so
/// its old error is not reported as new (it was, exit 1), and the run is incomplete.
#[test]
fn no_before_view_never_counts_an_old_diagnostic_as_new() {
    let out = Test::new()
        .file("a.fake", "ERROR old\none\n")
        .fake_server(&["--mode", "slow-publish=2500"])
        .args(["edit", "a.fake", "--old", "one", "--new", "two"])
        .args([
            "--startup-timeout",
            "1s",
            "--timeout",
            "10s",
            "--cross-file-timeout",
            "1s",
        ])
        .args(["--no-daemon"])
        .run();
    out.assert_code(3);
    assert!(
        out.stdout_lacks("<file_diagnostics>")
            .stdout
            .contains("New: 0 errors"),
        "{out}"
    );
    assert!(
        out.notes()
            .iter()
            .any(|n| n.contains("no before view of a.fake") && n.contains("not checked: a.fake")),
        "{out}"
    );
}

/// A server that fails every pull with a hard error (not "retry") has said nothing of
/// the file: its edit, which adds an error, is never passed as clean, and the failed
/// pull is not sent again and again. Before, the failure was taken for an empty
/// answer: exit 0, "0 errors".
#[test]
fn a_pull_the_server_fails_is_never_clean() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&["--pull", "--mode", "pull-fails"])
        .args(["write", "a.fake", "--content", "one\nERROR boom\n"])
        .args(FAST)
        .run();
    out.assert_code(3).assert_elapsed_below(FAST_BOUND);
    assert!(
        out.notes()
            .iter()
            .any(|n| n.contains("said nothing of a.fake (the server failed the pull")),
        "{out}"
    );
}
