//! The pool and its servers message by message, against a server played in memory
//! ([`Pool::start_in_memory`]) from the test's own thread: what the client sends is
//! read from the peer, what the server says is sent through it and pumped in. No
//! test sleeps; each wait is bounded.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};

use super::*;
use crate::lsp::protocol;
use crate::lsp::server::Lifecycle;
use crate::lsp::uri;
use crate::servers::typescript::tsserver;
use crate::servers::{Delivery, WaitProfile};

/// A built-in entry made a server in memory with `wait`: the fields this file does
/// not care about stay as the table has them.
fn spec(wait: WaitProfile) -> ServerSpec {
    let mut spec = crate::servers::builtin()
        .into_iter()
        .next()
        .expect("a built-in server");
    spec.name = "memory".into();
    spec.settings = json!({ "memory": { "level": 3 } });
    spec.initialization_options = None;
    spec.wait = wait;
    spec
}

fn root() -> PathBuf {
    PathBuf::from("/memory")
}

fn path() -> PathBuf {
    PathBuf::from("/memory/a.x")
}

/// The next message the client sent.
fn next(peer: &MemoryPeer) -> Message {
    peer.received
        .recv_timeout(Duration::from_secs(2))
        .expect("the client sent something")
}

fn method(msg: &Message) -> &str {
    match msg {
        Message::Request(r) => &r.method,
        Message::Notification(n) => &n.method,
        Message::Response(_) => "(response)",
    }
}

/// Pump until `done` holds; fails after two seconds.
fn pump_until(pool: &mut Pool, done: impl Fn(&Pool) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !done(pool) && Instant::now() < deadline {
        pool.pump(deadline);
    }
    assert!(done(pool), "not reached in time");
}

/// Everything queued is handled.
fn pump_all(pool: &mut Pool) {
    pool.pump(Instant::now() + Duration::from_millis(50));
}

/// A pool with one server in memory that answered `initialize` with `capabilities`;
/// `initialized` already read from the peer.
fn started(wait: WaitProfile, capabilities: Value) -> (Pool, ServerId, MemoryPeer) {
    let mut pool = Pool::new();
    let (id, peer) = pool.start_in_memory(&spec(wait), &root());
    let Message::Request(init) = next(&peer) else {
        panic!("initialize first");
    };
    assert_eq!(init.method, "initialize");
    let result = json!({ "capabilities": capabilities });
    peer.send(Message::Response(Response::new_ok(init.id, result)));
    pump_until(&mut pool, |p| p.server(id).initialized());
    assert_eq!(method(&next(&peer)), "initialized");
    (pool, id, peer)
}

fn request(id: i32, method: &str, params: Value) -> Message {
    Message::Request(Request::new(RequestId::from(id), method.into(), params))
}

fn notification(method: &str, params: Value) -> Message {
    Message::Notification(Notification::new(method.into(), params))
}

/// The answer the client gave to request `id`.
fn answer_to(peer: &MemoryPeer, id: i32) -> Response {
    loop {
        if let Message::Response(r) = next(peer)
            && r.id == RequestId::from(id)
        {
            return r;
        }
    }
}

fn diagnostic_at(character: u32, message: &str) -> Value {
    json!({
        "range": { "start": { "line": 0, "character": character }, "end": { "line": 0, "character": character } },
        "severity": 1,
        "message": message,
    })
}

#[test]
fn notifications_wait_for_the_answer_to_initialize() {
    let mut pool = Pool::new();
    let (id, peer) = pool.start_in_memory(&spec(WaitProfile::default()), &root());
    pool.open_or_change(id, &path(), "text");
    let Message::Request(init) = next(&peer) else {
        panic!("initialize first");
    };
    assert!(
        peer.received.try_recv().is_err(),
        "didOpen went out before initialize was answered"
    );
    assert_eq!(pool.server(id).lifecycle(), &Lifecycle::Initializing);
    peer.send(Message::Response(Response::new_ok(
        init.id,
        json!({ "capabilities": {} }),
    )));
    pump_until(&mut pool, |p| p.server(id).lifecycle() == &Lifecycle::Ready);
    assert_eq!(method(&next(&peer)), "initialized");
    let Message::Notification(open) = next(&peer) else {
        panic!("didOpen next");
    };
    assert_eq!(open.method, "textDocument/didOpen");
    assert_eq!(open.params["textDocument"]["version"], 1);
    assert_eq!(open.params["textDocument"]["text"], "text");
}

#[test]
fn every_request_of_the_server_is_answered() {
    let (mut pool, id, peer) = started(WaitProfile::default(), json!({}));
    // One answer per item, whatever the items hold.
    peer.send(request(
        1,
        "workspace/configuration",
        json!({ "items": [{ "section": "memory.level" }, { "scopeUri": "not a uri" }] }),
    ));
    peer.send(request(2, "custom/unknown", json!({})));
    peer.send(request(
        3,
        "client/registerCapability",
        json!({ "registrations": [{ "id": "pull-1", "method": "textDocument/diagnostic" }] }),
    ));
    pump_all(&mut pool);
    let config = answer_to(&peer, 1).response_result.expect("answered");
    assert_eq!(config, json!([3, { "memory": { "level": 3 } }]));
    let unknown = answer_to(&peer, 2).response_result.expect_err("an error");
    assert_eq!(unknown.code, protocol::METHOD_NOT_FOUND);
    assert_eq!(answer_to(&peer, 3).response_result.ok(), Some(Value::Null));
    assert!(pool.server(id).pulls(), "pulls registered");

    // The field as the spec misspells it, and as a server might spell it.
    for (n, field) in [(4, "unregisterations"), (6, "unregistrations")] {
        peer.send(request(
            n,
            "client/registerCapability",
            json!({ "registrations": [{ "id": "pull-2", "method": "textDocument/diagnostic" }] }),
        ));
        peer.send(request(
            n + 1,
            "client/unregisterCapability",
            json!({ field: [{ "id": "pull-1", "method": "textDocument/diagnostic" }, { "id": "pull-2", "method": "textDocument/diagnostic" }] }),
        ));
        pump_all(&mut pool);
        answer_to(&peer, n + 1);
        assert!(!pool.server(id).pulls(), "unregistered with `{field}`");
    }
}

#[test]
fn a_pull_asking_to_be_retried_records_nothing_and_a_failed_one_an_unknown_answer() {
    let caps = json!({ "diagnosticProvider": { "interFileDependencies": false, "workspaceDiagnostics": false } });
    let (mut pool, id, peer) = started(WaitProfile::default(), caps);
    assert!(pool.server(id).pulls());
    pool.pull(id, &path());
    assert!(pool.server(id).pull_in_flight(&path()));
    let Message::Request(pull) = next(&peer) else {
        panic!("a pull");
    };
    assert_eq!(pull.method, "textDocument/diagnostic");
    assert_eq!(
        pull.params,
        json!({ "textDocument": { "uri": uri::from_path(&path()) } })
    );
    peer.send(Message::Response(Response::new_err(
        pull.id,
        protocol::CONTENT_MODIFIED,
        "content modified".into(),
    )));
    pump_until(&mut pool, |p| !p.server(id).pull_in_flight(&path()));
    assert!(pool.server(id).diagnostics().get(&path()).is_none());

    pool.pull(id, &path());
    let sent = pool.clock();
    let Message::Request(pull) = next(&peer) else {
        panic!("a pull");
    };
    peer.send(Message::Response(Response::new_err(
        pull.id,
        -32603,
        "internal error".into(),
    )));
    pump_until(&mut pool, |p| !p.server(id).pull_in_flight(&path()));
    // Said nothing of the file: unknown, not an empty answer.
    assert!(pool.server(id).diagnostics().get(&path()).is_none());
    let failed = pool
        .server(id)
        .diagnostics()
        .unreadable(&path())
        .expect("recorded");
    assert_eq!(failed.cause, crate::lsp::Unknown::PullFailed);
    assert_eq!(failed.seq, sent);
    assert!(
        pool.server(id)
            .logs()
            .iter()
            .any(|(_, m)| m.contains("internal error")),
        "said in the log"
    );
}

#[test]
fn a_utf8_servers_columns_are_stored_in_utf16() {
    let caps = json!({ "positionEncoding": "utf-8" });
    let (mut pool, id, peer) = started(WaitProfile::default(), caps);
    pool.open_or_change(id, &path(), "😀 = 1\n");
    // After "😀 ": 5 bytes, 3 UTF-16 units.
    peer.send(notification(
        "textDocument/publishDiagnostics",
        json!({ "uri": uri::from_path(&path()), "diagnostics": [diagnostic_at(5, "x"), { "broken": true }] }),
    ));
    pump_until(&mut pool, |p| p.server(id).diagnostics().contains(&path()));
    let got = pool.server(id).diagnostics_of(&path());
    assert_eq!(got.len(), 1, "the malformed one is dropped, not the list");
    assert_eq!(got[0].range.start.character, 3);
}

#[test]
fn stopping_retires_a_server_without_renaming_it() {
    let (mut pool, id, peer) = started(WaitProfile::default(), json!({}));
    pool.open_or_change(id, &path(), "text");
    assert_eq!(pool.find("memory", &root()), Some(id));
    pool.stop(id, Duration::ZERO);
    assert_eq!(method(&next(&peer)), "textDocument/didOpen");
    assert_eq!(method(&next(&peer)), "shutdown");
    assert_eq!(method(&next(&peer)), "exit");
    let server = pool.server(id);
    assert_eq!(server.lifecycle(), &Lifecycle::Retired("stopped".into()));
    assert!(server.is_dead() && pool.is_retired(id) && !pool.crashed(id));
    assert_eq!(server.name(), "memory");
    assert_eq!(server.doc_count(), 0);
    assert_eq!(pool.find("memory", &root()), None);
    assert!(pool.ids().is_empty());
}

#[test]
fn a_crash_is_a_death_after_initialize_and_a_kill_is_not() {
    let (mut pool, id, peer) = started(WaitProfile::default(), json!({}));
    drop(peer);
    pump_until(&mut pool, |p| p.server(id).is_dead());
    assert!(pool.crashed(id));
    assert_eq!(pool.server(id).dead_reason(), Some("exited"));
    assert_eq!(pool.crash_log(id).total, 1);
    assert_eq!(pool.crash_log(id).total, 1, "recorded once per death");
    assert_eq!(pool.find("memory", &root()), Some(id), "kept for a restart");

    let mut pool = Pool::new();
    let (id, _peer) = pool.start_in_memory(&spec(WaitProfile::default()), &root());
    pool.kill(id, "did not answer initialize".into());
    assert!(pool.server(id).is_dead() && !pool.server(id).initialized());
    assert!(!pool.crashed(id));
}

#[test]
fn typescript_language_server_is_pulled_through_tsserver() {
    let wait = WaitProfile {
        delivery: Delivery::TsserverPull,
        ..WaitProfile::default()
    };
    let caps = json!({ "executeCommandProvider": { "commands": [tsserver::COMMAND] } });
    let (mut pool, id, peer) = started(wait, caps);
    assert!(pool.server(id).pulls());
    pool.open_or_change(id, &path(), "let x: number = 'a';\n");
    assert_eq!(method(&next(&peer)), "textDocument/didOpen");
    pool.pull(id, &path());
    let mut requests = Vec::new();
    for _ in 0..3 {
        let Message::Request(r) = next(&peer) else {
            panic!("a request");
        };
        assert_eq!(r.method, "workspace/executeCommand");
        assert_eq!(r.params["command"], tsserver::COMMAND);
        requests.push(r);
    }
    for (r, text) in requests.into_iter().zip(["", "not assignable", ""]) {
        let body: Vec<Value> = if text.is_empty() {
            Vec::new()
        } else {
            vec![
                json!({ "start": { "line": 1, "offset": 5 }, "end": { "line": 1, "offset": 6 }, "text": text, "category": "error" }),
            ]
        };
        let result = json!({ "success": true, "body": body });
        peer.send(Message::Response(Response::new_ok(r.id, result)));
    }
    pump_until(&mut pool, |p| !p.server(id).pull_in_flight(&path()));
    let got = pool.server(id).diagnostics_of(&path());
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].message, "not assignable");

    // A route that fails falls back to pushes.
    pool.pull(id, &path());
    let Message::Request(r) = next(&peer) else {
        panic!("a request");
    };
    peer.send(Message::Response(Response::new_err(
        r.id,
        protocol::METHOD_NOT_FOUND,
        "no such command".into(),
    )));
    pump_until(&mut pool, |p| !p.server(id).pulls());
    assert!(!pool.server(id).pull_in_flight(&path()));
    assert!(
        pool.server(id)
            .logs()
            .iter()
            .any(|(_, m)| m.contains("waiting for pushes instead"))
    );
}

/// A pull the daemon tries between runs of a file tsserver has in no project fails
/// for that file only: what was pulled of it goes, and the route stays, with its
/// other pulls.
#[test]
fn a_failed_pull_between_runs_keeps_the_tsserver_route() {
    let wait = WaitProfile {
        delivery: Delivery::TsserverPull,
        ..WaitProfile::default()
    };
    let caps = json!({ "executeCommandProvider": { "commands": [tsserver::COMMAND] } });
    let (mut pool, id, peer) = started(wait, caps);
    let outside = PathBuf::from("/w/other/x.ts");
    pool.try_pull(id, &outside);
    pool.try_pull(id, &path());
    let requests: Vec<_> = (0..6)
        .map(|_| match next(&peer) {
            Message::Request(r) => r,
            other => panic!("a request, not {other:?}"),
        })
        .collect();
    for r in requests {
        let file = r.params["arguments"][1]["file"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let answer = if file.ends_with("x.ts") {
            json!({ "success": false, "message": "No Project." })
        } else {
            json!({ "success": true, "body": [] })
        };
        peer.send(Message::Response(Response::new_ok(r.id, answer)));
    }
    pump_until(&mut pool, |p| {
        !p.server(id).pull_in_flight(&path()) && !p.server(id).pull_in_flight(&outside)
    });
    let server = pool.server(id);
    assert!(server.pulls(), "the route was dropped");
    assert!(server.was_pulled(&path()) && server.pull_holds(&path()));
    assert!(!server.was_pulled(&outside));
}

#[test]
fn clangd_file_status_and_rust_analyzer_server_status_are_recorded() {
    let (mut pool, id, peer) = started(WaitProfile::default(), json!({}));
    peer.send(notification(
        "textDocument/clangd.fileStatus",
        json!({ "uri": uri::from_path(&path()), "state": "parsing includes" }),
    ));
    peer.send(notification(
        "experimental/serverStatus",
        json!({ "health": "ok", "quiescent": false }),
    ));
    pump_until(&mut pool, |p| p.server(id).indexing());
    let status = pool.server(id).file_status(&path()).expect("recorded");
    assert!(!status.idle);
    let later = Instant::now() + Duration::from_secs(3600);
    assert!(!pool.server(id).settled_after(later, Duration::ZERO));
    peer.send(notification(
        "experimental/serverStatus",
        json!({ "health": "ok", "quiescent": true }),
    ));
    pump_until(&mut pool, |p| !p.server(id).indexing());
    assert!(pool.server(id).settled_after(later, Duration::ZERO));
    pool.close(id, &path());
    assert!(pool.server(id).file_status(&path()).is_none());
}

/// rust-analyzer sends each publish from a task of its worker pool: within one check
/// a list built before a fuller one can arrive after it, and is not taken; the next
/// check's lists are news again.
#[test]
fn rust_analyzer_a_check_list_arriving_after_a_fuller_one_is_not_taken() {
    let check = WaitProfile {
        delivery: Delivery::CheckAfterSave {
            pushes_before_answers: false,
            disk_only: false,
        },
        ..WaitProfile::default()
    };
    let (mut pool, id, peer) = started(check, json!({}));
    let progress = |kind: &str| {
        notification(
            "$/progress",
            json!({ "token": "rust-analyzer/flycheck/0", "value": { "kind": kind, "title": "cargo check" } }),
        )
    };
    let publish = |messages: &[&str]| {
        let list: Vec<Value> = messages.iter().map(|m| diagnostic_at(0, m)).collect();
        notification(
            "textDocument/publishDiagnostics",
            json!({ "uri": uri::from_path(&path()), "diagnostics": list }),
        )
    };
    let held = |pool: &Pool| -> Vec<String> {
        pool.server(id)
            .diagnostics_of(&path())
            .into_iter()
            .map(|d| d.message)
            .collect()
    };
    peer.send(progress("begin"));
    peer.send(publish(&["one", "two"]));
    peer.send(publish(&["one"]));
    peer.send(progress("end"));
    peer.send(publish(&[]));
    pump_until(&mut pool, |p| p.server(id).diagnostics().contains(&path()));
    pump_all(&mut pool);
    assert_eq!(held(&pool), ["one", "two"]);
    // The next check clears what it no longer finds.
    peer.send(progress("begin"));
    peer.send(publish(&["two"]));
    peer.send(progress("end"));
    pump_until(&mut pool, |p| held(p) == ["two"]);
}

/// clangd goes over every open file after a save and publishes only those whose
/// text or includes changed: a file it went back to "idle" on since a save sent after
/// the last change keeps what it published, once the server is quiet.
#[test]
fn clangd_idle_since_a_save_after_a_change_keeps_its_diagnostics() {
    let quiet = WaitProfile {
        quiet: Duration::ZERO,
        ..WaitProfile::default()
    };
    let (mut pool, id, peer) = started(quiet, json!({}));
    let status = |state: &str| {
        notification(
            "textDocument/clangd.fileStatus",
            json!({ "uri": uri::from_path(&path()), "state": state }),
        )
    };
    pool.open_or_change(id, &path(), "int x;\n");
    peer.send(notification(
        "textDocument/publishDiagnostics",
        json!({ "uri": uri::from_path(&path()), "version": 1, "diagnostics": [diagnostic_at(0, "old")] }),
    ));
    peer.send(status("idle"));
    pump_until(&mut pool, |p| p.server(id).diagnostics().contains(&path()));
    pump_all(&mut pool);
    assert!(pool.server(id).diagnostics_hold(&path()));

    // Something it reads changed behind its back: what it said no longer holds,
    // idle or not, until a save has it go over its open files again.
    pool.mark_changed(id);
    assert!(!pool.server(id).diagnostics_hold(&path()));
    peer.send(status("idle"));
    pump_all(&mut pool);
    assert!(
        !pool.server(id).diagnostics_hold(&path()),
        "no save since the change"
    );

    pool.save(id, &path());
    assert!(
        !pool.server(id).diagnostics_hold(&path()),
        "not gone over yet"
    );
    peer.send(status("parsing includes, running Update (1)"));
    pump_all(&mut pool);
    assert!(!pool.server(id).diagnostics_hold(&path()), "still at it");
    peer.send(status("idle"));
    pump_all(&mut pool);
    assert!(pool.server(id).says_unchanged(&path()));
    assert!(pool.server(id).diagnostics_hold(&path()));
    assert!(!pool.server(id).going_over_open_files());

    // A change after the save: the save no longer speaks for it.
    pool.mark_changed(id);
    assert!(!pool.server(id).diagnostics_hold(&path()));

    // A file including a header after its preamble: clangd's silence says nothing
    // about it (it does not notice that header's changes).
    pool.open_or_change(id, &path(), "int x;\n#include \"late.h\"\n");
    pool.mark_changed(id);
    pool.save(id, &path());
    peer.send(status("idle"));
    pump_all(&mut pool);
    assert!(!pool.server(id).says_unchanged(&path()));
}

/// clangd does not see a header that changed at the same size within the same
/// second: after one, each open file sent goes with `forceRebuild` (its text changed
/// or not) until sent once, and what clangd said of it before, even idle after a
/// save, does not hold. A server that sees such changes is not affected.
#[test]
fn clangd_a_change_that_kept_a_files_size_forces_each_file_once() {
    let clangd = WaitProfile {
        quiet: Duration::ZERO,
        force_rebuild_unchanged: true,
        ..WaitProfile::default()
    };
    let (mut pool, id, peer) = started(clangd, json!({}));
    let other = PathBuf::from("/memory/b.x");
    let forced = |msg: &Message| match msg {
        Message::Notification(n) if n.method == "textDocument/didChange" => {
            n.params.get("forceRebuild") == Some(&json!(true))
        }
        other => panic!("a change, not {other:?}"),
    };
    pool.open_or_change(id, &path(), "int x;\n");
    pool.open_or_change(id, &other, "int y;\n");
    assert_eq!(method(&next(&peer)), "textDocument/didOpen");
    assert_eq!(method(&next(&peer)), "textDocument/didOpen");
    peer.send(notification(
        "textDocument/publishDiagnostics",
        json!({ "uri": uri::from_path(&path()), "version": 1, "diagnostics": [] }),
    ));
    pump_until(&mut pool, |p| p.server(id).diagnostics().contains(&path()));
    assert!(pool.server(id).diagnostics_hold(&path()));

    pool.mark_size_kept(id);
    assert!(
        !pool.server(id).diagnostics_hold(&path()),
        "built on the old text"
    );
    pool.open_or_change(id, &path(), "int z;\n");
    assert!(forced(&next(&peer)), "a changed text is forced too");
    pool.open_or_change(id, &other, "int y;\n");
    assert!(forced(&next(&peer)));
    // Each was sent once since: no more forcing.
    pool.open_or_change(id, &other, "int y;\n");
    assert!(!forced(&next(&peer)));

    // A server that sees every change of the disk ignores it.
    let (mut plain, plain_id, plain_peer) = started(WaitProfile::default(), json!({}));
    plain.open_or_change(plain_id, &path(), "int x;\n");
    assert_eq!(method(&next(&plain_peer)), "textDocument/didOpen");
    plain.mark_size_kept(plain_id);
    plain.open_or_change(plain_id, &path(), "int x;\n");
    assert!(!forced(&next(&plain_peer)));
}

#[test]
fn what_a_server_logs_is_kept_bounded() {
    let (mut pool, id, peer) = started(WaitProfile::default(), json!({}));
    let long = "é".repeat(10_000);
    for _ in 0..150 {
        peer.send(notification(
            "window/logMessage",
            json!({ "type": 3, "message": long }),
        ));
    }
    peer.send(notification(
        "window/showMessage",
        json!({ "type": 1, "message": "shown" }),
    ));
    pump_until(&mut pool, |p| !p.server(id).shown().is_empty());
    let logs = pool.server(id).logs();
    assert_eq!(logs.len(), 100);
    assert!(
        logs.iter()
            .all(|(level, m)| *level == 3 && m.len() <= 8 * 1024 + 3)
    );
    assert_eq!(pool.server(id).shown()[0], (1, "shown".to_string()));
}

#[test]
fn the_clock_orders_what_is_sent_and_what_comes_back() {
    let (mut pool, id, peer) = started(WaitProfile::default(), json!({}));
    let opened = pool.clock();
    pool.open_or_change(id, &path(), "text");
    let changed = pool.server(id).doc(&path()).expect("open").changed_at;
    assert!(changed > opened);
    let version = pool.open_or_change(id, &path(), "text 2");
    assert_eq!(version, 2);
    peer.send(notification(
        "textDocument/publishDiagnostics",
        json!({ "uri": uri::from_path(&path()), "version": 2, "diagnostics": [] }),
    ));
    pump_until(&mut pool, |p| p.server(id).diagnostics().contains(&path()));
    let pushed = pool
        .server(id)
        .diagnostics()
        .get(&path())
        .and_then(|d| d.pushed.clone())
        .expect("pushed");
    assert!(pushed.seq > pool.server(id).doc(&path()).map_or(0, |d| d.changed_at));
    assert_eq!(pushed.version, Some(2));
    // Diagnostics received before a change from outside no longer hold.
    assert!(pool.server(id).diagnostics_hold(&path()));
    pool.mark_changed(id);
    assert!(!pool.server(id).diagnostics_hold(&path()));
    let tick = pool.tick();
    assert_eq!(pool.clock(), tick);
}

/// rust-analyzer for one written edit (`Delivery::CheckAfterSave`'s `disk_only`),
/// started.
fn started_shown_no_document() -> (Pool, ServerId, MemoryPeer) {
    let wait = WaitProfile {
        delivery: Delivery::CheckAfterSave {
            pushes_before_answers: false,
            disk_only: true,
        },
        ..WaitProfile::default()
    };
    started(wait, json!({}))
}

/// The methods of what the client sent and the peer has not read yet.
fn unread_methods(peer: &MemoryPeer) -> Vec<String> {
    peer.received
        .try_iter()
        .map(|m| method(&m).to_string())
        .collect()
}

/// Shown no document, rust-analyzer hears of a written file only as a request for
/// the check of every crate.
#[test]
fn a_server_shown_no_document_hears_only_of_the_check() {
    let (mut pool, id, peer) = started_shown_no_document();
    pool.open_or_change(id, &path(), "fn a() {}\n");
    pool.open_or_change(id, &path(), "fn b() {}\n");
    let version = pool.server(id).doc(&path()).map(|d| d.version);
    assert_eq!(version, Some(2), "lspgate keeps its view");
    pool.save(id, &path());
    assert!(pool.server(id).owes_check());
    pool.close(id, &path());
    assert_eq!(method(&next(&peer)), "rust-analyzer/runFlycheck");
    let rest = unread_methods(&peer);
    assert!(rest.is_empty(), "sent {rest:?}");
}

#[test]
fn an_edit_of_several_files_asks_a_server_shown_no_document_for_one_check() {
    let (mut pool, id, peer) = started_shown_no_document();
    let other = path().with_file_name("other.rs");
    pool.open_or_change(id, &path(), "fn a() {}\n");
    pool.open_or_change(id, &other, "fn b() {}\n");
    pool.save(id, &path());
    pool.save(id, &other);
    assert_eq!(method(&next(&peer)), "rust-analyzer/runFlycheck");
    let rest = unread_methods(&peer);
    assert!(rest.is_empty(), "sent {rest:?}");
}

/// A server that sends faster than its messages are handled (a publish flood) never
/// leaves the queue empty: a pump still ends at its deadline, not when the flood does.
#[test]
fn a_pump_ends_at_its_deadline_however_much_is_queued() {
    let (mut pool, _, peer) = started(WaitProfile::default(), json!({}));
    let publish = notification(
        "textDocument/publishDiagnostics",
        json!({ "uri": uri::from_path(&path()), "diagnostics": [diagnostic_at(0, "flood")] }),
    );
    for _ in 0..1000 {
        peer.send(publish.clone());
    }
    let before = pool.clock();
    // A deadline already passed: the one message it waits for, and no more.
    pool.pump(Instant::now());
    assert_eq!(pool.clock() - before, 1, "handled past its deadline");
    pump_until(&mut pool, |p| p.clock() - before == 1000);
}
