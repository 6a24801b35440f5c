//! What lspgate reads: `check` reads files inside the workspace only, and no run (nor
//! the daemon) ever blocks on a FIFO in the workspace. The MCP tool's refusal is in
//! `tests/mcp.rs` (`check_outside_the_workspace_is_a_tool_error`).

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use super::figure;
use crate::support::process::DaemonGuard;
use crate::support::{Output, Test};

/// Far beyond a refused run (milliseconds) or a fake-server run (about a second): a
/// run that blocks on a FIFO is killed at this bound and fails its test.
const PROMPT: Duration = Duration::from_secs(20);

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .expect("mkfifo");
}

/// Refused as bad input: exit 2, one error line naming `named`, no server started.
#[track_caller]
fn refused(out: &Output, named: &str) {
    out.assert_code(2);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines.len() == 1 && lines[0].starts_with("lspgate: ") && lines[0].contains(named),
        "not one error line naming {named}\n{out}"
    );
    assert!(out.fake_pids().is_empty(), "a server was started\n{out}");
}

#[test]
fn check_refuses_a_file_outside_the_workspace_in_process_and_through_the_daemon() {
    for daemon in [false, true] {
        for what in ["absolute", "relative", "a symlink out"] {
            let mut test = Test::new().file("a.fake", "one\n").fake_server(&[]);
            let outside = test.private_dir("home").join("secret.fake");
            fs::write(&outside, "ERROR topsecret\n").expect("write");
            symlink(&outside, test.path("link.fake")).expect("symlink");
            let given = match what {
                "absolute" => outside.display().to_string(),
                "relative" => "../home/secret.fake".to_string(),
                _ => "link.fake".to_string(),
            };
            let _guard = daemon.then(|| DaemonGuard::new(&test));
            if daemon {
                test = test.with_daemon();
            }
            let out = test.args(["check", &given]).watchdog(PROMPT).run();
            figure(&format!(
                "check outside ({what}, daemon {daemon}): exit {:?} in {:?}",
                out.code, out.elapsed
            ));
            refused(&out, &given);
            assert!(
                out.stderr.contains("outside the workspace") && !out.stdout.contains("topsecret"),
                "{what}, daemon {daemon}: {out}"
            );
        }
    }
}

#[test]
fn check_of_a_fifo_is_refused_at_once_in_process() {
    let test = Test::new().file("a.fake", "one\n").fake_server(&[]);
    mkfifo(&test.path("ff.fake"));
    let out = test.args(["check", "ff.fake"]).watchdog(PROMPT).run();
    figure(&format!(
        "check of a FIFO: exit {:?} in {:?}",
        out.code, out.elapsed
    ));
    refused(&out, "ff.fake");
    out.stderr_contains("ff.fake: is not a regular file (a FIFO)");
}

/// The daemon refuses a FIFO to check, and one put in the place of a file its
/// servers have open does not stop it either: the next run (which reads the open
/// files back) and `daemon stop` both work.
#[test]
fn a_fifo_never_wedges_the_daemon() {
    let test = Test::new()
        .file("a.fake", "one\n")
        .file("b.fake", "two\n")
        .fake_server(&[])
        .with_daemon();
    let _guard = DaemonGuard::new(&test);
    mkfifo(&test.path("ff.fake"));
    let out = test.args(["check", "ff.fake"]).watchdog(PROMPT).run();
    refused(&out, "ff.fake");

    // a.fake is open in the daemon's server; then it becomes a FIFO.
    let test = out.again();
    let out = test.args(["check", "a.fake"]).watchdog(PROMPT).run();
    out.assert_code(0);
    fs::remove_file(out.workspace().join("a.fake")).expect("rm");
    mkfifo(&out.workspace().join("a.fake"));
    let test = out.again();
    let out = test
        .args(["write", "b.fake", "--content", "ERROR new\n"])
        .watchdog(PROMPT)
        .run();
    figure(&format!(
        "daemon run after an open file became a FIFO: exit {:?} in {:?}",
        out.code, out.elapsed
    ));
    out.assert_code(1).stdout_contains("new");
    let out = out.again().args(["daemon", "stop"]).watchdog(PROMPT).run();
    out.assert_code(0);
}
