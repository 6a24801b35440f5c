//! The wait rules, message by message, against a server played in memory
//! ([`Pool::start_in_memory`]). Each negative case is bounded by a deadline shorter
//! than the rule it checks would need, so a broken rule fails the test instead of
//! slowing it; no test sleeps.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification, Response};
use serde_json::{Value, json};

use super::*;
use crate::lsp::transport::MemoryPeer;
use crate::lsp::uri;
use crate::lsp::{FileChangeType, ServerId};
use crate::servers::{Delivery, ServerSpec, WaitProfile};

/// A server spec whose full quiet is long and whose confirmed quiet is short, so a
/// test can tell which of the two ended a wait by its deadline alone.
fn spec(wait: WaitProfile) -> ServerSpec {
    ServerSpec {
        name: "memory".into(),
        command: "memory".into(),
        args: Vec::new(),
        extensions: vec!["x".into()],
        language_ids: Vec::new(),
        default_language_id: "x".into(),
        root_markers: Vec::new(),
        settings: json!({}),
        initialization_options: None,
        wait,
        install_hint: String::new(),
        origin: crate::servers::Origin::BuiltIn,
        disabled: false,
        not_checked: Vec::new(),
        env: Vec::new(),
        coverage: Default::default(),
    }
}

const LONG_QUIET: Duration = Duration::from_secs(5);

fn confirming() -> WaitProfile {
    WaitProfile {
        quiet: LONG_QUIET,
        confirmed_quiet: Some(Duration::from_millis(10)),
        ..WaitProfile::default()
    }
}

/// What the played server does with each message the client sends after
/// `initialize`: returns false to exit (its stream closes).
type Script = Box<dyn FnMut(&Message, &MemoryPeer) -> bool + Send>;

/// A pool with one in-memory server that answers `initialize` with `capabilities`
/// and everything else by `script`, already initialised.
fn pool_with(wait: WaitProfile, capabilities: Value, script: Script) -> (Pool, ServerId) {
    pool_at(Path::new("/memory"), wait, capabilities, script)
}

/// [`pool_with`], the server started at `root`.
fn pool_at(
    root: &Path,
    wait: WaitProfile,
    capabilities: Value,
    mut script: Script,
) -> (Pool, ServerId) {
    let mut pool = Pool::new();
    let (s, peer) = pool.start_in_memory(&spec(wait), root);
    thread::spawn(move || {
        for msg in peer.received.clone() {
            if let Message::Request(req) = &msg
                && req.method == "initialize"
            {
                let result = json!({ "capabilities": capabilities });
                peer.send(Message::Response(Response::new_ok(req.id.clone(), result)));
                continue;
            }
            if !script(&msg, &peer) {
                return;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pool.server(s).initialized() && Instant::now() < deadline {
        pool.pump(deadline);
    }
    assert!(pool.server(s).initialized(), "initialize answered");
    (pool, s)
}

fn path() -> PathBuf {
    PathBuf::from("/memory/a.x")
}

fn notification(method: &str, params: Value) -> Message {
    Message::Notification(Notification::new(method.into(), params))
}

fn publish(path: &Path, version: Option<i32>, messages: &[&str]) -> Message {
    let diagnostics: Vec<Value> = messages
        .iter()
        .map(|m| json!({ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 1 } }, "severity": 1, "message": m }))
        .collect();
    let mut params = json!({ "uri": uri::from_path(path), "diagnostics": diagnostics });
    if let Some(v) = version {
        params["version"] = json!(v);
    }
    notification("textDocument/publishDiagnostics", params)
}

/// clangd's `textDocument/clangd.fileStatus` for the file.
fn file_status(state: &str) -> Message {
    notification(
        "textDocument/clangd.fileStatus",
        json!({ "uri": uri::from_path(&path()), "state": state }),
    )
}

/// A server that answers the file's open with an empty publish of version 1.
fn publishes_the_open() -> Script {
    Box::new(|msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(publish(&path(), Some(1), &[]));
        }
        true
    })
}

/// A server whose answers to pulls are final, answering every one with `items` and
/// counting them in `pulls`.
fn answering_pulls(items: Value, pulls: Arc<AtomicUsize>) -> (Pool, ServerId) {
    let script: Script = Box::new(move |msg, peer| {
        if let Message::Request(req) = msg
            && req.method == "textDocument/diagnostic"
        {
            pulls.fetch_add(1, Ordering::SeqCst);
            let result = json!({ "kind": "full", "items": items });
            peer.send(Message::Response(Response::new_ok(req.id.clone(), result)));
        }
        true
    });
    let wait = WaitProfile {
        refresh_is_news: false,
        ..confirming()
    };
    let capabilities = json!({ "diagnosticProvider": { "interFileDependencies": true, "workspaceDiagnostics": false } });
    pool_with(wait, capabilities, script)
}

fn is(msg: &Message, method: &str) -> bool {
    matches!(msg, Message::Notification(n) if n.method == method)
}

/// Open the file with a new version and return the target a wait would have.
fn open(pool: &mut Pool, s: ServerId) -> Target {
    change_to(pool, s, "text")
}

/// Open or change the file to `text` with a new version; the target a wait would
/// have.
fn change_to(pool: &mut Pool, s: ServerId, text: &str) -> Target {
    let version = pool.open_or_change(s, &path(), text);
    Target {
        server: s,
        path: path(),
        trigger: pool.clock(),
        trigger_at: Instant::now(),
        version: Some(version),
        stands: false,
    }
}

fn within(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

#[test]
fn a_publish_echoing_our_version_ends_the_wait_after_the_confirmed_quiet() {
    let script: Script = Box::new(|msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(publish(&path(), Some(1), &["broken"]));
        }
        true
    });
    let (mut pool, s) = pool_with(confirming(), json!({}), script);
    let target = open(&mut pool, s);
    // The full quiet (5 s) would overrun this deadline.
    let outcome = settle(&mut pool, &[target], within(3000));
    assert!(outcome.complete(), "{:?}", outcome.unsettled);
    assert_eq!(outcome.fresh, vec![true]);
    assert_eq!(pool.server(s).diagnostics_of(&path())[0].message, "broken");
}

#[test]
fn a_publish_of_another_version_is_not_the_answer() {
    let script: Script = Box::new(|msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(publish(&path(), Some(7), &["old"]));
        }
        true
    });
    let (mut pool, s) = pool_with(confirming(), json!({}), script);
    let target = open(&mut pool, s);
    let outcome = settle(&mut pool, &[target], within(300));
    assert_eq!(outcome.fresh, vec![false]);
    assert!(
        outcome
            .unsettled
            .iter()
            .any(|u| u.path.as_deref() == Some(path().as_path())),
        "{:?}",
        outcome.unsettled
    );
}

/// A server that answers the file's open with a publish too large to read, of
/// version `version`.
fn skips_the_open(version: i64) -> Script {
    Box::new(move |msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send_skipped(crate::lsp::transport::Skipped {
                uri: uri::from_path(&path()).to_string(),
                version: Some(version),
                why: "skipped a huge message".into(),
            });
        }
        true
    })
}

#[test]
fn a_publish_too_large_to_read_ends_the_wait_unread_after_the_confirmed_quiet() {
    let (mut pool, s) = pool_with(confirming(), json!({}), skips_the_open(1));
    let target = open(&mut pool, s);
    // The full quiet (5 s) would overrun this deadline.
    let outcome = settle(&mut pool, &[target], within(3000));
    assert_eq!(outcome.fresh, vec![false]);
    assert_eq!(outcome.unsettled.len(), 1, "{:?}", outcome.unsettled);
    let unsettled = &outcome.unsettled[0];
    assert!(unsettled.unreadable, "{unsettled:?}");
    assert_eq!(unsettled.path.as_deref(), Some(path().as_path()));
    assert_eq!(unsettled.reason, "skipped a huge message");
}

#[test]
fn a_publish_too_large_to_read_of_another_version_is_not_the_answer() {
    let (mut pool, s) = pool_with(confirming(), json!({}), skips_the_open(7));
    let target = open(&mut pool, s);
    let outcome = settle(&mut pool, &[target], within(300));
    assert_eq!(outcome.fresh, vec![false]);
    assert!(
        outcome
            .unsettled
            .iter()
            .any(|u| u.path.as_deref() == Some(path().as_path()) && !u.unreadable),
        "{:?}",
        outcome.unsettled
    );
    assert!(outcome.unsettled.iter().all(|u| !u.unreadable));
}

#[test]
fn a_pull_answer_sent_after_the_change_is_the_final_word() {
    let items = json!([{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 1 } }, "severity": 1, "message": "pulled" }]);
    let (mut pool, s) = answering_pulls(items, Arc::default());
    assert!(pool.server(s).pulls());
    let target = open(&mut pool, s);
    let outcome = settle(&mut pool, &[target], within(3000));
    assert!(outcome.complete(), "{:?}", outcome.unsettled);
    assert_eq!(pool.server(s).diagnostics_of(&path())[0].message, "pulled");
}

#[test]
fn an_unversioned_publish_is_taken_only_after_the_full_quiet() {
    let script: Script = Box::new(|msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(publish(&path(), None, &["unversioned"]));
        }
        true
    });
    let wait = WaitProfile {
        versioned_publish: false,
        quiet: Duration::from_millis(400),
        confirmed_quiet: Some(Duration::from_millis(10)),
        ..WaitProfile::default()
    };
    let (mut pool, s) = pool_with(wait, json!({}), script);
    let target = open(&mut pool, s);
    // Shorter than the quiet: the publish alone must not end the wait.
    let early = settle(&mut pool, std::slice::from_ref(&target), within(150));
    assert!(!early.complete(), "settled before the full quiet");
    let later = settle(&mut pool, &[target], within(5000));
    assert!(later.complete(), "{:?}", later.unsettled);
}

#[test]
fn clangd_idle_after_our_publish_confirms_and_busy_does_not() {
    let busy: Script = Box::new(move |msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(file_status("parsing includes, running Update"));
            peer.send(publish(&path(), Some(1), &["x"]));
            peer.send(file_status("running Build AST"));
        }
        true
    });
    let (mut pool, s) = pool_with(confirming(), json!({}), busy);
    let target = open(&mut pool, s);
    let outcome = settle(&mut pool, &[target], within(300));
    assert_eq!(
        outcome.fresh,
        vec![false],
        "a file still building is not done"
    );

    let idle: Script = Box::new(move |msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(file_status("parsing includes, running Update"));
            peer.send(publish(&path(), Some(1), &["x"]));
            peer.send(file_status("idle"));
        }
        true
    });
    let (mut pool, s) = pool_with(confirming(), json!({}), idle);
    let target = open(&mut pool, s);
    let outcome = settle(&mut pool, &[target], within(3000));
    assert!(outcome.complete(), "{:?}", outcome.unsettled);
}

/// A target whose diagnostics the server already said stand (clangd idle since a
/// save, nothing published: `Server::says_unchanged`) needs no wait; the same target
/// without that word waits out the server's full quiet for a publish.
#[test]
fn a_target_the_server_said_stands_is_fresh_at_once() {
    let silent: Script = Box::new(|_, _| true);
    let (mut pool, s) = pool_with(confirming(), json!({}), silent);
    let mut target = open(&mut pool, s);
    target.stands = true;
    let outcome = settle(&mut pool, std::slice::from_ref(&target), within(3000));
    assert_eq!(outcome.fresh, vec![true]);
    target.stands = false;
    let outcome = settle(&mut pool, &[target], within(300));
    assert_eq!(outcome.fresh, vec![false], "nothing was published");
}

#[test]
fn progress_under_way_keeps_the_server_busy_until_it_ends() {
    let progress = |kind: &str| {
        notification(
            "$/progress",
            json!({ "token": "t", "value": { "kind": kind, "title": "Checking" } }),
        )
    };
    let (begin, end) = (progress("begin"), progress("end"));
    let open_only: Script = Box::new(move |msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(begin.clone());
            peer.send(publish(&path(), Some(1), &["x"]));
        }
        true
    });
    let (mut pool, s) = pool_with(confirming(), json!({}), open_only);
    let target = open(&mut pool, s);
    let outcome = settle(&mut pool, &[target], within(300));
    assert!(!outcome.complete());
    assert!(
        outcome
            .unsettled
            .iter()
            .any(|u| u.reason.contains("Checking in progress")),
        "{:?}",
        outcome.unsettled
    );

    let begin = progress("begin");
    let ended: Script = Box::new(move |msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(begin.clone());
            peer.send(publish(&path(), Some(1), &["x"]));
            peer.send(end.clone());
        }
        true
    });
    let (mut pool, s) = pool_with(confirming(), json!({}), ended);
    let target = open(&mut pool, s);
    let outcome = settle(&mut pool, &[target], within(3000));
    assert!(outcome.complete(), "{:?}", outcome.unsettled);
}

#[test]
fn a_server_that_dies_mid_wait_ends_the_wait_with_the_reason() {
    let dies: Script = Box::new(|msg, _peer| !is(msg, "textDocument/didOpen"));
    let (mut pool, s) = pool_with(confirming(), json!({}), dies);
    let target = open(&mut pool, s);
    let deadline = Duration::from_secs(30);
    let outcome = settle(&mut pool, &[target], Instant::now() + deadline);
    assert!(pool.server(s).is_dead());
    assert!(
        outcome.elapsed < deadline / 2,
        "waited {:?} for a dead server",
        outcome.elapsed
    );
    // The wait reports no file of a dead server as fresh; why it died is the
    // server's own state, which the check turns into the server's note.
    assert_eq!(outcome.fresh, vec![false]);
    assert!(
        pool.server(s)
            .dead_reason()
            .is_some_and(|r| r.contains("exited")),
        "{:?}",
        pool.server(s).dead_reason()
    );
}

/// A server analysing its whole workspace, as pyright in workspace mode.
fn analysing() -> WaitProfile {
    WaitProfile {
        quiet: Duration::from_millis(60),
        delivery: Delivery::ANALYSIS,
        ..WaitProfile::default()
    }
}

fn other_path() -> PathBuf {
    PathBuf::from("/memory/b.x")
}

fn create_progress(token: &str) -> Message {
    Message::Request(lsp_server::Request::new(
        lsp_server::RequestId::from(format!("create-{token}")),
        "window/workDoneProgress/create".into(),
        json!({ "token": token }),
    ))
}

#[test]
fn a_workspace_analysis_is_under_way_from_the_create_of_its_progress() {
    // pyright's burst: the edited file's publish and the create of the re-analysis's
    // token; its `begin` comes only seconds later, after an analysis slice.
    let script: Script = Box::new(|msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(publish(&path(), Some(1), &[]));
            peer.send(create_progress("analysis"));
        }
        true
    });
    let (mut pool, s) = pool_with(analysing(), json!({}), script);
    let target = open(&mut pool, s);
    // The file has its answer: the primary wait ends on it, busy or not.
    let primary = settle(&mut pool, &[target], within(3000));
    assert!(primary.complete(), "{:?}", primary.unsettled);
    // The re-analysis of the rest has not ended: the server is not settled, however
    // quiet it stays (5 times its quiet here).
    let rest = settle_servers(&mut pool, &[s], within(300));
    assert!(!rest.complete(), "settled while its analysis was under way");
}

#[test]
fn a_change_told_to_a_workspace_analyser_is_owed_a_publish() {
    let script: Script = Box::new(|msg, peer| {
        if is(msg, "textDocument/didOpen") {
            // It has analysed b.x: it tracks it.
            peer.send(publish(&other_path(), None, &[]));
            peer.send(publish(&path(), Some(1), &[]));
        }
        if is(msg, "workspace/didChangeWatchedFiles") {
            // Says nothing yet: its analysis is scheduled, not done.
        }
        true
    });
    let (mut pool, s) = pool_with(analysing(), json!({}), script);
    let target = open(&mut pool, s);
    assert!(settle(&mut pool, &[target], within(3000)).complete());
    assert!(settle_servers(&mut pool, &[s], within(3000)).complete());
    pool.watched(s, &[(other_path(), FileChangeType::CHANGED)]);
    let owed = settle_servers(&mut pool, &[s], within(300));
    assert!(
        owed.unsettled
            .iter()
            .any(|u| u.reason.contains("no word yet on /memory/b.x")),
        "{:?}",
        owed.unsettled
    );
}

#[test]
fn a_change_to_a_file_the_analyser_never_reported_is_owed_nothing() {
    // pyright never publishes files its configuration excludes: waiting for one
    // would wait out the deadline on every run.
    let script = publishes_the_open();
    let (mut pool, s) = pool_with(analysing(), json!({}), script);
    let target = open(&mut pool, s);
    assert!(settle(&mut pool, &[target], within(3000)).complete());
    pool.watched(
        s,
        &[(
            PathBuf::from("/elsewhere/excluded.x"),
            FileChangeType::CHANGED,
        )],
    );
    let outcome = settle_servers(&mut pool, &[s], within(3000));
    assert!(outcome.complete(), "{:?}", outcome.unsettled);
}

/// pyright, cold: its quiet is short, its first-analysis quiet long.
fn analysing_cold() -> WaitProfile {
    WaitProfile {
        delivery: Delivery::WorkspaceAnalysis {
            first_analysis_quiet: Some(LONG_QUIET),
            typing_backoff: false,
            brackets_analyses: false,
        },
        ..analysing()
    }
}

#[test]
fn a_cold_analyser_that_answered_before_its_analysis_began_is_not_settled() {
    // It checks the open file and publishes it, then lists the workspace's files in
    // silence (Django: a second): its quiet passes, its analysis has not run.
    let script = publishes_the_open();
    let (mut pool, s) = pool_with(analysing_cold(), json!({}), script);
    let target = open(&mut pool, s);
    assert!(settle(&mut pool, &[target], within(3000)).complete());
    // Its own quiet (60 ms) settles it; the first analysis's (5 s) does not.
    assert!(settle_servers(&mut pool, &[s], within(1000)).complete());
    let first = settle_first_analysis(&mut pool, &[s], within(500));
    assert!(
        !first.complete(),
        "settled before its analysis showed it ran"
    );
}

#[test]
fn a_cold_analyser_whose_analysis_progress_ended_is_settled_by_its_quiet() {
    let progress = |kind: &str| {
        notification(
            "$/progress",
            json!({ "token": "analysis", "value": { "kind": kind, "title": "" } }),
        )
    };
    let (begin, end) = (progress("begin"), progress("end"));
    let script: Script = Box::new(move |msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(publish(&other_path(), None, &[]));
            peer.send(create_progress("analysis"));
            peer.send(begin.clone());
            peer.send(publish(&path(), Some(1), &[]));
            peer.send(end.clone());
        }
        true
    });
    let (mut pool, s) = pool_with(analysing_cold(), json!({}), script);
    let target = open(&mut pool, s);
    assert!(settle(&mut pool, &[target], within(3000)).complete());
    // Well under the first-analysis quiet (5 s): the progress's end said it ran.
    let first = settle_first_analysis(&mut pool, &[s], within(2000));
    assert!(first.complete(), "{:?}", first.unsettled);
    assert!(pool.server(s).progress_ended());
}

/// gopls told `verboseWorkDoneProgress` (`servers::gopls::protocol`), with a full
/// quiet too long for any test deadline: its initial load's diagnosis bracketed
/// after `initialized`, and each open's and change's publish bracketed by a progress
/// titled by its cause. A change's bracket begins only when `changes_answered`.
fn bracketing(changes_answered: bool) -> (Pool, ServerId) {
    let bracket = |token: &str, kind: &str, title: &str| {
        notification(
            "$/progress",
            json!({ "token": token, "value": { "kind": kind, "title": title } }),
        )
    };
    let script: Script = Box::new(move |msg, peer| {
        let (token, title, version) = if is(msg, "initialized") {
            ("load", "diagnosing initial workspace load", None)
        } else if is(msg, "textDocument/didOpen") {
            ("open", "diagnosing opened files", Some(1))
        } else if is(msg, "textDocument/didChange") && changes_answered {
            ("change", "diagnosing changed files", Some(2))
        } else {
            return true;
        };
        peer.send(create_progress(token));
        peer.send(bracket(token, "begin", title));
        peer.send(publish(&path(), version, &[]));
        peer.send(bracket(token, "end", ""));
        true
    });
    let wait = WaitProfile {
        quiet: LONG_QUIET,
        // As gopls's: one burst's publishes come within the same millisecond.
        confirmed_quiet: Some(Duration::from_millis(10)),
        delivery: Delivery::ANALYSIS,
        ..WaitProfile::default()
    };
    pool_with(wait, json!({}), script)
}

#[test]
fn a_server_whose_diagnoses_all_ended_is_settled_without_a_silence() {
    let (mut pool, s) = bracketing(true);
    let target = open(&mut pool, s);
    assert!(settle(&mut pool, &[target], within(3000)).complete());
    // The full quiet (5 s) would overrun these deadlines.
    let first = settle_first_analysis(&mut pool, &[s], within(3000));
    assert!(first.complete(), "{:?}", first.unsettled);
    let target = change_to(&mut pool, s, "changed");
    assert!(settle(&mut pool, &[target], within(3000)).complete());
    let rest = settle_servers(&mut pool, &[s], within(3000));
    assert!(rest.complete(), "{:?}", rest.unsettled);
}

/// A bracketing server that answers no change, settled after its first analysis
/// and the open of one file.
fn bracketing_past_its_start() -> (Pool, ServerId) {
    let (mut pool, s) = bracketing(false);
    let target = open(&mut pool, s);
    assert!(settle(&mut pool, &[target], within(3000)).complete());
    assert!(settle_first_analysis(&mut pool, &[s], within(3000)).complete());
    (pool, s)
}

#[test]
fn a_change_whose_diagnosis_has_not_begun_waits_out_the_silence() {
    let (mut pool, s) = bracketing_past_its_start();
    // Told of a change it has not begun to diagnose: every bracket it began has
    // ended, and that is not enough.
    change_to(&mut pool, s, "changed");
    let rest = settle_servers(&mut pool, &[s], within(300));
    assert!(!rest.complete(), "settled before the change was diagnosed");
}

/// A server shown to bracket its diagnoses, told of a change it has not begun to
/// diagnose, with no file of it waited for (a deletion): the short silence that ends
/// a burst does not settle it while the change's bracket is owed.
#[test]
fn a_bracketing_server_owing_a_diagnosis_is_not_settled_by_a_short_silence() {
    let (mut pool, s) = bracketing_past_its_start();
    // In a directory the server never published a file of (gopls publishes a clean
    // file only once it is opened): no publish of it is owed.
    let gone = path().with_file_name("elsewhere").join("gone.go");
    pool.watched(s, &[(gone, crate::lsp::FileChangeType::DELETED)]);
    let rest = settle_answered_servers(&mut pool, &[s], within(300));
    assert!(
        !rest.complete(),
        "settled before the deletion was diagnosed"
    );
}

/// clangd, given the same text again while it rebuilds the file for the version it
/// had (the includers of a header changed behind its back), publishes that earlier
/// version and goes idle: the answer for our text. A changed text is not answered so.
#[test]
fn clangd_answers_the_same_text_again_with_the_earlier_version() {
    let rebuilding: Script = Box::new(move |msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(publish(&path(), Some(1), &[]));
            peer.send(file_status("idle"));
        }
        if is(msg, "textDocument/didChange") {
            // The rebuild of version 1 under way finishes; version 2 changes nothing.
            peer.send(publish(&path(), Some(1), &["x"]));
            peer.send(file_status("idle"));
        }
        true
    });
    let (mut pool, s) = pool_with(confirming(), json!({}), rebuilding);
    let opened = open(&mut pool, s);
    assert!(settle(&mut pool, &[opened], within(3000)).complete());
    let same = change_to(&mut pool, s, "text");
    let outcome = settle(&mut pool, &[same], within(3000));
    assert!(outcome.complete(), "{:?}", outcome.unsettled);

    let stale: Script = Box::new(move |msg, peer| {
        if is(msg, "textDocument/didOpen") || is(msg, "textDocument/didChange") {
            peer.send(publish(&path(), Some(1), &["x"]));
            peer.send(file_status("idle"));
        }
        true
    });
    let (mut pool, s) = pool_with(confirming(), json!({}), stale);
    let opened = open(&mut pool, s);
    assert!(settle(&mut pool, &[opened], within(3000)).complete());
    let other = change_to(&mut pool, s, "other text");
    let outcome = settle(&mut pool, &[other], within(300));
    assert_eq!(
        outcome.fresh,
        vec![false],
        "an earlier text's publish is not ours"
    );
}

/// A server whose save starts a check of the project (rust-analyzer's flycheck),
/// with a long full quiet and a short confirmed one.
fn checking() -> WaitProfile {
    WaitProfile {
        quiet: Duration::from_millis(2000),
        confirmed_quiet: Some(Duration::from_millis(10)),
        delivery: Delivery::CheckAfterSave {
            pushes_before_answers: false,
            disk_only: false,
        },
        ..WaitProfile::default()
    }
}

fn flycheck(kind: &str) -> Message {
    notification(
        "$/progress",
        json!({ "token": "rust-analyzer/flycheck/0", "value": { "kind": kind, "title": "cargo check" } }),
    )
}

#[test]
fn a_save_is_owed_a_check_that_begins_after_it_and_ends() {
    // The file's answer comes, and a check that was running ends (cancelled); none
    // begins after the save.
    let no_check: Script = Box::new(|msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(publish(&path(), Some(1), &[]));
        }
        if is(msg, "textDocument/didSave") {
            peer.send(flycheck("end"));
        }
        true
    });
    let (mut pool, s) = pool_with(checking(), json!({}), no_check);
    let target = open(&mut pool, s);
    pool.save(s, &path());
    let outcome = settle(&mut pool, &[target], within(300));
    assert!(!outcome.complete(), "settled with no check after the save");
    assert!(
        outcome.unsettled.iter().any(|u| u.reason.contains("check")),
        "{:?}",
        outcome.unsettled
    );

    let checked: Script = Box::new(|msg, peer| {
        if is(msg, "textDocument/didOpen") {
            peer.send(publish(&path(), Some(1), &[]));
        }
        if is(msg, "textDocument/didSave") {
            // As rust-analyzer: its check begins once its debounce has passed.
            thread::sleep(Duration::from_millis(60));
            peer.send(flycheck("begin"));
            peer.send(publish(&path(), Some(1), &["rustc"]));
            peer.send(flycheck("end"));
        }
        true
    });
    let (mut pool, s) = pool_with(checking(), json!({}), checked);
    let target = open(&mut pool, s);
    pool.save(s, &path());
    // What a check pushes can trail its end: the full quiet follows it, even
    // though the file has its answer.
    let early = settle(&mut pool, std::slice::from_ref(&target), within(200));
    assert!(
        !early.complete(),
        "settled within the quiet after the check"
    );
    let outcome = settle(&mut pool, &[target], within(6000));
    assert!(outcome.complete(), "{:?}", outcome.unsettled);
    assert_eq!(pool.server(s).diagnostics_of(&path())[0].message, "rustc");
}

/// As rust-analyzer: pulls answered at once; a save starts a check, once its
/// debounce has passed, that reports the crate it checked, pushes one diagnostic and
/// ends, then a refresh, whose pull is answered in a later turn of its main loop than
/// the check's pushes.
fn check_then_refresh() -> Script {
    Box::new(|msg, peer| {
        answer_pulls(msg, peer);
        if is(msg, "textDocument/didSave") {
            thread::sleep(Duration::from_millis(60));
            check_pushing_rustc(peer);
        }
        true
    })
}

fn answer_pulls(msg: &Message, peer: &MemoryPeer) -> bool {
    if let Message::Request(req) = msg
        && req.method == "textDocument/diagnostic"
    {
        let result = json!({ "kind": "full", "items": [] });
        peer.send(Message::Response(Response::new_ok(req.id.clone(), result)));
        return true;
    }
    false
}

fn check_pushing_rustc(peer: &MemoryPeer) {
    peer.send(flycheck("begin"));
    peer.send(flycheck("report"));
    peer.send(publish(&path(), Some(1), &["rustc"]));
    peer.send(flycheck("end"));
    let refresh = lsp_server::Request::new(
        lsp_server::RequestId::from(900),
        "workspace/diagnostic/refresh".into(),
        Value::Null,
    );
    peer.send(Message::Request(refresh));
}

fn pull_capabilities() -> Value {
    json!({ "diagnosticProvider": { "interFileDependencies": true, "workspaceDiagnostics": false } })
}

#[test]
fn an_answer_to_a_pull_sent_after_the_check_ended_proves_its_pushes_in() {
    let (mut pool, s) = pool_with(checking(), pull_capabilities(), check_then_refresh());
    let target = open(&mut pool, s);
    pool.save(s, &path());
    // Well within the full quiet (2 s) after the check's end.
    let outcome = settle(&mut pool, &[target], within(1500));
    assert!(outcome.complete(), "{:?}", outcome.unsettled);
    assert_eq!(pool.server(s).diagnostics_of(&path())[0].message, "rustc");
}

/// Once an answer to a pull sent after the check's end proves its pushes in (with
/// one worker thread, as lspgate starts rust-analyzer, the pushes were sent first),
/// there is nothing left to hear about the change: the wait ends there, without the
/// silence it waits out otherwise (here far longer than the deadline).
#[test]
fn a_check_proven_in_ends_the_wait_without_a_silence() {
    let silent_long = WaitProfile {
        confirmed_quiet: Some(Duration::from_secs(60)),
        delivery: Delivery::CheckAfterSave {
            pushes_before_answers: true,
            disk_only: false,
        },
        ..checking()
    };
    let (mut pool, s) = pool_with(silent_long, pull_capabilities(), check_then_refresh());
    let target = open(&mut pool, s);
    pool.save(s, &path());
    let outcome = settle(&mut pool, &[target], within(3000));
    assert!(outcome.complete(), "{:?}", outcome.unsettled);
    assert!(pool.server(s).check_proven_in());
    assert_eq!(pool.server(s).diagnostics_of(&path())[0].message, "rustc");
}

/// At start rust-analyzer cancels its first check to restart it (a begin and an end
/// together, no crate reported): an answer to a pull sent after that end proves
/// nothing, and the restarted check, which begins after its debounce, is waited for.
#[test]
fn a_first_check_cancelled_to_restart_it_is_not_proven_in() {
    let silent_long = WaitProfile {
        quiet: Duration::from_millis(600),
        confirmed_quiet: Some(Duration::from_secs(60)),
        delivery: Delivery::CheckAfterSave {
            pushes_before_answers: true,
            disk_only: false,
        },
        ..checking()
    };
    // A Cargo workspace: its first check is owed from the start.
    let root = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(root.path().join("Cargo.toml"), "").expect("Cargo.toml written");
    let mut restarting = false;
    let script: Script = Box::new(move |msg, peer| {
        if is(msg, "initialized") {
            // Its workspace loaded, after the debounce of the check owed at start.
            thread::sleep(Duration::from_millis(60));
            peer.send(flycheck("begin"));
            peer.send(flycheck("end"));
            restarting = true;
        }
        if answer_pulls(msg, peer) && std::mem::take(&mut restarting) {
            // Its debounce, then cargo started: the answer is in by then.
            thread::sleep(Duration::from_millis(200));
            check_pushing_rustc(peer);
        }
        true
    });
    let (mut pool, s) = pool_at(root.path(), silent_long, pull_capabilities(), script);
    // The cancelled check's end is in before the file is asked about.
    let deadline = within(3000);
    while !pool.server(s).progress_ended() && Instant::now() < deadline {
        pool.pump(deadline);
    }
    assert!(pool.server(s).progress_ended(), "the cancelled check ended");
    let target = open(&mut pool, s);
    let outcome = settle(&mut pool, &[target], within(3000));
    assert!(outcome.complete(), "{:?}", outcome.unsettled);
    assert_eq!(
        pool.server(s).diagnostics_of(&path())[0].message,
        "rustc",
        "settled on the cancelled check's end"
    );
}

/// The same with pushes that may finish after the answer (rust-analyzer with more
/// than one worker thread): the silence is waited out.
#[test]
fn a_check_not_proven_in_by_order_waits_out_its_silence() {
    let silent_long = WaitProfile {
        confirmed_quiet: Some(Duration::from_secs(60)),
        ..checking()
    };
    let (mut pool, s) = pool_with(silent_long, pull_capabilities(), check_then_refresh());
    let target = open(&mut pool, s);
    pool.save(s, &path());
    let outcome = settle(&mut pool, &[target], within(1500));
    assert!(!outcome.complete(), "ended before its silence");
    assert!(!pool.server(s).check_proven_in());
}

#[test]
fn a_held_pull_answer_holds_until_what_the_server_sees_changes() {
    let pulls = Arc::new(AtomicUsize::new(0));
    let (mut pool, s) = answering_pulls(json!([]), Arc::clone(&pulls));
    let closed = other_path();
    let target = Target::pulled(&pool, s, &closed);
    let first = settle(&mut pool, &[target], within(3000));
    assert!(first.complete(), "{:?}", first.unsettled);
    assert_eq!(pulls.load(Ordering::SeqCst), 1);
    // Nothing changed: the answer held is the answer, nothing is asked.
    let target = Target::pulled(&pool, s, &closed);
    let again = settle(&mut pool, &[target], within(3000));
    assert!(again.complete(), "{:?}", again.unsettled);
    assert_eq!(
        pulls.load(Ordering::SeqCst),
        1,
        "asked again with nothing changed"
    );
    assert!(pool.server(s).pull_holds(&closed));
    // Opening a file changes nothing it sees; changing its text does.
    open(&mut pool, s);
    assert!(pool.server(s).pull_holds(&closed));
    change_to(&mut pool, s, "new text");
    assert!(!pool.server(s).pull_holds(&closed));
    let target = Target::pulled(&pool, s, &closed);
    let changed = settle(&mut pool, &[target], within(3000));
    assert!(changed.complete(), "{:?}", changed.unsettled);
    assert_eq!(pulls.load(Ordering::SeqCst), 2);
}
