//! Resources (issue 29): a large write through the daemon costs the CLI and the
//! daemon about the file's size, not several copies of it as JSON.
//!
//! File contents travel to the daemon raw, after the request's frame: as JSON, bytes
//! are an array of numbers (four to five bytes of text per byte), and parsed into a
//! `Value` per byte (32 bytes each) before they are bytes again.

use std::time::Duration;

use super::{figure, measured, vm_hwm_kib};
use crate::support::Test;
use crate::support::process::{DaemonGuard, daemon_pids, eventually};

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
