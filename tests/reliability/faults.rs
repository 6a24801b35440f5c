//! A misbehaving server, one fault per test, through the whole one-shot pipeline.
//! Every case must: end within the sum of its timeouts plus one second; keep the CLI's
//! peak memory under [`MEMORY_BOUND_KIB`]; print an honest report (the diagnostics,
//! or a `note:` saying what was not checked); leave the edit applied; and leave no
//! server behind. Crashes and hangs at start-up, during the wait and at shutdown,
//! garbage framing, stale versions, endless progress and a stderr flood are in
//! `tests/fake.rs`.

use std::time::Duration;

use super::{Measured, figure, measured};
use crate::support::Test;

/// Small timeouts, so that every fault ends within seconds.
const WAITS: [&str; 6] = [
    "--startup-timeout",
    "2s",
    "--timeout",
    "1s",
    "--cross-file-timeout",
    "500ms",
];

/// The sum of `WAITS` plus the one second the issue allows.
const BOUND: Duration = Duration::from_millis(2000 + 1000 + 500 + 1000);

/// The CLI's peak resident memory, whatever the server sends.
const MEMORY_BOUND_KIB: u64 = 200 * 1024;

const CLEAN: &str = "one\ntwo\n";
const BROKEN: &str = "one\nERROR boom\n";
const BOOM: &str = "Error: a.fake:2:1 [fake][E1] boom";

/// Writes `content` over a.fake with the fake server in `modes`, measured, and checks
/// what every fault must hold: time, memory, the edit applied, no process left.
#[track_caller]
fn fault(name: &str, modes: &[&str], content: &str) -> Measured {
    let mut args = Vec::new();
    for mode in modes {
        args.extend(["--mode", mode]);
    }
    let test = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&args)
        .args(["write", "a.fake", "--content", content])
        .args(WAITS);
    let run = measured(&test, b"");
    figure(&format!(
        "fault {name}: exit {:?} in {} ms, peak RSS {} KiB",
        run.code,
        run.elapsed.as_millis(),
        run.peak_kib
    ));
    assert!(
        run.elapsed < BOUND,
        "{name}: took {:?}, more than the timeouts plus 1s ({BOUND:?})\n{run}",
        run.elapsed
    );
    assert!(
        run.peak_kib < MEMORY_BOUND_KIB,
        "{name}: peak RSS {} KiB, bound {MEMORY_BOUND_KIB} KiB\n{run}",
        run.peak_kib
    );
    assert_eq!(
        std::fs::read_to_string(test.path("a.fake")).ok().as_deref(),
        Some(content),
        "{name}: the edit must stay applied\n{run}"
    );
    run.assert_no_orphans();
    run
}

/// The fault did not stop the check: the error is found, exit 1.
#[track_caller]
fn checked(name: &str, modes: &[&str]) -> Measured {
    let run = fault(name, modes, BROKEN);
    run.assert_code(1);
    assert_eq!(
        run.block("file_diagnostics"),
        Some(vec![BOOM]),
        "{name}\n{run}"
    );
    run
}

/// For the faults that pour tens of megabytes through the pipe, which the debug build
/// of the tests may not read within the small timeouts: either the check is complete
/// (the error found, exit 1), or the report says it is not (exit 3 and a note naming
/// the server or the file). Never a silent pass.
#[track_caller]
fn checked_or_said_not(name: &str, modes: &[&str]) -> Measured {
    let run = fault(name, modes, BROKEN);
    match run.code {
        Some(1) => assert_eq!(
            run.block("file_diagnostics"),
            Some(vec![BOOM]),
            "{name}\n{run}"
        ),
        Some(3) => assert!(
            run.notes().iter().any(|n| n.contains("fake")),
            "{name}: incomplete without a note naming the server or file\n{run}"
        ),
        _ => panic!("{name}: unexpected exit status\n{run}"),
    }
    run
}

/// A note that names the server and says the wait ran out.
#[track_caller]
fn assert_timeout_note(name: &str, run: &Measured) {
    assert!(
        run.notes()
            .iter()
            .any(|n| n.contains("fake") && n.contains("timed out")),
        "{name}: no note saying what timed out\n{run}"
    );
}

/// For comparison: the same run against a well-behaved server.
#[test]
fn baseline() {
    let run = checked("none (baseline)", &[]);
    assert_eq!(run.notes(), Vec::<&str>::new(), "{run}");
}

/// 100 MiB in one frame: over the transport's cap, so it is read past, never held.
#[test]
fn a_100_mib_message_is_skipped() {
    checked_or_said_not("huge-message (100 MiB)", &["huge-message=104857600"]);
}

/// 30 MB of `{"a":0},`: under the size cap, but as parsed JSON values it would
/// take gigabytes.
#[test]
fn a_message_that_explodes_when_parsed_is_skipped() {
    checked_or_said_not(
        "wide-message (30 MB of tiny objects)",
        &["wide-message=30000000"],
    );
}

/// Twelve 3.5 MB log messages: the log ring keeps the last hundred messages, and must
/// not keep them whole. Kept whole they would add 42 MB to the peak; cut, the peak is
/// the baseline's plus one message in flight.
#[test]
fn big_log_messages_are_cut() {
    let run = checked_or_said_not("big-logs (12 x 3.5 MB)", &["big-logs=3500000"]);
    assert!(
        run.peak_kib < 48 * 1024,
        "the log ring holds the messages whole: peak RSS {} KiB\n{run}",
        run.peak_kib
    );
}

/// 8 MB of header lines that never make a frame: the stream goes on after them.
#[test]
fn endless_bad_headers_do_not_accumulate() {
    checked_or_said_not("bad-headers (8 MB)", &["bad-headers=8000000"]);
}

/// Invalid UTF-8 in a stray line, in a log message, and in every diagnostic message:
/// the diagnostics still count, the bad bytes shown as U+FFFD.
#[test]
fn invalid_utf8_in_a_frame_keeps_the_message() {
    let run = fault("invalid-utf8", &["invalid-utf8"], BROKEN);
    run.assert_code(1);
    assert_eq!(
        run.block("file_diagnostics"),
        Some(vec!["Error: a.fake:2:1 [fake][E1] boom\u{fffd}"]),
        "{run}"
    );
}

/// Unknown notifications are ignored; every request, known or not, is answered; an
/// answer or cancel for an id never sent changes nothing.
#[test]
fn unknown_methods_are_answered_or_ignored() {
    let run = checked("unknown-methods", &["unknown-methods"]);
    let log = run.fake_log();
    let answer = |id: serde_json::Value| {
        log.iter()
            .find(|e| e["event"] == "response" && e["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("lspgate never answered request {id}\n{run}"))
    };
    for id in [
        serde_json::json!(77),
        serde_json::json!("fake-dollar"),
        serde_json::json!("fake-show-document"),
    ] {
        assert_eq!(answer(id)["error"]["code"], -32601, "{run}");
    }
    assert_eq!(
        answer(serde_json::json!("fake-apply-edit"))["result"]["applied"],
        false,
        "lspgate never applies a server's edit\n{run}"
    );
}

/// A publish for a version the client never sent is not taken for the new text: the
/// wait runs out and says so.
#[test]
fn a_future_version_is_not_taken_as_fresh() {
    let run = fault("future-version", &["future-version"], CLEAN);
    run.assert_code(3);
    assert_timeout_note("future-version", &run);
}

/// Thousands of publishes a second: the server never falls quiet, so it never counts
/// as settled; the error is still reported and the note says the wait ran out.
#[test]
fn a_publish_flood_is_bounded() {
    let run = checked("flood-publish (5000/s)", &["flood-publish=5000"]);
    assert_timeout_note("flood-publish", &run);
    let run = checked("flood-publish (unpaced)", &["flood-publish=0"]);
    assert_timeout_note("flood-publish", &run);
}
