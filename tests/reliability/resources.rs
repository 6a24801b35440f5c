//! Resources (issue 29): a large write through the daemon costs the CLI and the
//! daemon about the file's size, not several copies of it as JSON.
//!
//! File contents travel to the daemon raw, after the request's frame: as JSON, bytes
//! are an array of numbers (four to five bytes of text per byte), and parsed into a
//! `Value` per byte (32 bytes each) before they are bytes again.

use std::time::Duration;

use super::{figure, measured, vm_hwm_kib};
use crate::support::process::{DaemonGuard, daemon_pids, eventually};
use crate::support::{Test, require_server};

/// 50 MB of text, over the size lspgate shows servers (so the check part is cheap).
fn fifty_megabytes() -> String {
    "plain line of a generated file\n".repeat(50_000_000 / 31)
}

#[test]
fn a_50_mb_write_through_the_daemon_keeps_both_processes_bounded() {
    let test = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&[])
        .with_daemon()
        .args(["write", "big.fake", "--timeout", "2s"]);
    let _guard = DaemonGuard::new(&test);
    // Warm: the daemon and its server are up before the measured run.
    measured(&test, b"ERROR warm\n").assert_code(1);
    let mut daemons = Vec::new();
    assert!(
        eventually(Duration::from_secs(15), || {
            daemons = daemon_pids(test.workspace());
            daemons.len() == 1
        }),
        "expected one daemon, found {daemons:?}"
    );
    let daemon = daemons[0];
    let big = fifty_megabytes();
    let run = measured(&test, big.as_bytes());
    let daemon_kib = vm_hwm_kib(daemon).unwrap_or(u64::MAX);
    figure(&format!(
        "50 MB write through the daemon: exit {:?} in {} ms, CLI peak {} KiB, daemon peak {} KiB",
        run.code,
        run.elapsed.as_millis(),
        run.peak_kib,
        daemon_kib
    ));
    run.assert_code(3);
    assert!(
        !run.stderr.contains("running the servers in this process"),
        "the run did not go through the daemon\n{run}"
    );
    assert!(
        run.notes()
            .iter()
            .any(|n| n.contains("big.fake") && n.contains("too large")),
        "no note that big.fake was not checked\n{run}"
    );
    assert_eq!(
        std::fs::metadata(test.path("big.fake"))
            .map(|m| m.len())
            .ok(),
        Some(big.len() as u64)
    );
    assert!(
        run.peak_kib < 200 * 1024,
        "CLI peak {} KiB for a 50 MB write through the daemon\n{run}",
        run.peak_kib
    );
    assert!(
        daemon_kib < 400 * 1024,
        "daemon peak {daemon_kib} KiB for a 50 MB write\n{run}"
    );
}

/// An MCP line over the 64 MiB limit is skipped unparsed, and answered with the
/// request's id read from the line's start: a client waits on that id, and an answer
/// to `null` would leave it waiting for ever.
#[test]
fn an_mcp_request_over_the_line_limit_is_answered_by_its_id() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let test = Test::new();
    let mut cmd = test.to_command();
    cmd.arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn lspgate mcp");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, lines) = crossbeam_channel::unbounded();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let content = "x".repeat(65 * 1024 * 1024);
    let writer = std::thread::spawn(move || {
        let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{{"name":"write","arguments":{{"path":"big.txt","content":"{content}"}}}}}}"#
        );
        let ping = r#"{"jsonrpc":"2.0","id":42,"method":"ping"}"#;
        for line in [initialize, &call, ping] {
            stdin.write_all(line.as_bytes())?;
            stdin.write_all(b"\n")?;
        }
        stdin.flush()?;
        // Stdin stays open until the answers are read.
        Ok::<_, std::io::Error>(stdin)
    });
    let mut answers = Vec::new();
    while answers.len() < 3 {
        match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => answers.push(
                serde_json::from_str::<serde_json::Value>(&line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line}")),
            ),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no answer within 60s ({e}); so far: {answers:?}");
            }
        }
    }
    drop(writer.join().expect("writer"));
    let _ = child.wait();
    let error = &answers[1];
    assert_eq!(error["id"], 41, "{answers:?}");
    assert_eq!(error["error"]["code"], -32600, "{answers:?}");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("67108864 bytes")),
        "{answers:?}"
    );
    // Serving goes on.
    assert_eq!(answers[2]["id"], 42, "{answers:?}");
    assert!(answers[2].get("result").is_some(), "{answers:?}");
    assert!(!test.path("big.txt").exists());
}

/// A publish too large to read (40,000 diagnostics, well over the size lspgate
/// parses: as a file with 25,000 pyright errors) is skipped, and the run says so
/// at once, naming the file: exit 3, not a wait to the end of `--timeout` that ends in
/// "still analysing".
#[test]
fn a_publish_too_large_to_read_is_said_and_ends_the_wait() {
    let test = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&["--mode", "many-diagnostics=40000"])
        .args([
            "write",
            "a.fake",
            "--content",
            "ERROR MANY\n",
            "--timeout",
            "30s",
        ]);
    let run = measured(&test, b"");
    figure(&format!(
        "publish of 40,000 diagnostics: exit {:?} in {} ms (timeout 30 s), peak RSS {} KiB",
        run.code,
        run.elapsed.as_millis(),
        run.peak_kib
    ));
    run.assert_code(3);
    assert!(
        run.notes()
            .iter()
            .any(|n| n.contains("a.fake") && n.contains("too large to read")),
        "no note that a.fake's diagnostics were skipped\n{run}"
    );
    assert!(
        run.elapsed < Duration::from_secs(15),
        "the run waited for a publish that had come\n{run}"
    );
    assert_eq!(
        std::fs::read_to_string(test.path("a.fake")).ok().as_deref(),
        Some("ERROR MANY\n")
    );
}

/// The same with pyright: 25,000 type errors in one file are a publish of about
/// 10 MB, about 100 MiB once parsed. The run says so and ends, rather than waiting out
/// both timeouts with "still analysing" (93 s with the default ones).
#[test]
fn a_pyright_publish_too_large_to_read_is_said_and_ends_the_wait() {
    if !require_server("pyright-langserver") {
        return;
    }
    // Fifty to a line: a diff of 25,000 lines would cost a debug build seconds.
    let content: String = (0..500)
        .map(|line| {
            let names: Vec<String> = (0..50)
                .map(|i| format!("v{}: int = \"s\"", line * 50 + i))
                .collect();
            names.join("; ") + "\n"
        })
        .collect();
    let test = Test::new().file("m.py", "x = 1\n").args([
        "write",
        "m.py",
        "--startup-timeout",
        "60s",
        "--timeout",
        "30s",
        "--cross-file-timeout",
        "5s",
    ]);
    let run = measured(&test, content.as_bytes());
    figure(&format!(
        "pyright, 25,000 errors in one file: exit {:?} in {} ms (timeout 30 s), peak RSS {} KiB",
        run.code,
        run.elapsed.as_millis(),
        run.peak_kib
    ));
    run.assert_code(3);
    assert!(
        run.notes()
            .iter()
            .any(|n| n.contains("m.py") && n.contains("too large to read")),
        "no note that m.py's diagnostics were skipped\n{run}"
    );
    assert!(
        run.elapsed < Duration::from_secs(25),
        "the run waited for a publish that had come\n{run}"
    );
}
