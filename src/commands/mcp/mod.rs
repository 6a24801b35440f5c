//! `lspgate mcp`: the reporting and cache commands as the tools of a Model Context
//! Protocol server on stdin and stdout.
//!
//! - `protocol`: JSON-RPC 2.0 on MCP's stdio transport (lines in, lines out), and why
//!   it is written here.
//! - this file: the session. `initialize` negotiates the revision (the client's when it
//!   is one of [`VERSIONS`], else the latest), then `tools/list` and `tools/call`;
//!   `ping` at any time; `notifications/cancelled` drops a call's answer. Every request
//!   gets exactly one answer, unless it is cancelled or stdin closes first.
//! - `tools`: each tool's arguments, its run through the command's own code, and its
//!   result; `schema`: what `tools/list` says about them.
//!
//! Threads: the main loop reads the client's messages and the finished calls, and
//! answers. Calls that run language servers (`write`, `edit`, `patch`, `check`) go to
//! one runner thread, one at a time in the order they came, as the daemon serves runs;
//! the others (`diagnostics`, `logs`, `messages`, `history`) only read and get a thread
//! each, so they answer while a check waits. A runner's watcher sends the client
//! `notifications/progress` while a run waits, when the call carried a progress token,
//! and keeps the pids of the servers an in-process run has running.
//!
//! Closing stdin is the client leaving, as a killed client would (the MCP stdio
//! transport's shutdown): the server stops at once, answering nothing more. Through the
//! daemon, a run under way is finished by the daemon for nobody, as for a killed CLI;
//! in process (`--no-daemon`), its language servers are killed before lspgate exits,
//! hung ones included, so none outlives it.

mod protocol;
mod schema;
mod tools;

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use serde_json::{Value, json};

use crate::daemon::protocol::Busy;
use crate::model::ReportArgs;
use crate::model::progress::{SHOW_AFTER, Watcher};
use crate::report::progress::describe_busy;
use protocol::{INVALID_PARAMS, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND};
use tools::{Call, Outcome};

/// The revisions of MCP this server speaks, oldest first. The stateless 2026-07-28
/// revision (`server/discover`, no `initialize`) is not among them: its clients fall
/// back to `initialize` when `server/discover` is not found.
pub const VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Progress notifications: at most this often, the first once a wait has lasted
/// [`SHOW_AFTER`] (a quick run sends none).
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How long the answers already sent may take to be written once stdin has closed.
const CLOSE_BOUND: Duration = Duration::from_secs(2);

/// Where the server runs and every call's default options.
#[derive(Debug, Clone)]
pub struct Setup {
    pub workspace: PathBuf,
    pub run_dir: PathBuf,
    pub trust_project: bool,
    pub args: ReportArgs,
}

/// Serve MCP on stdin and stdout until stdin closes; returns the exit status.
pub fn serve(setup: &Setup) -> anyhow::Result<crate::exit::Outcome> {
    let conn = protocol::stdio()?;
    let setup = Arc::new(setup.clone());
    let running: Arc<Mutex<Vec<u32>>> = Arc::default();
    let (done_tx, done_rx) = crossbeam_channel::unbounded();
    let (queue_tx, queue_rx) = crossbeam_channel::unbounded();
    {
        let (setup, done, out, running) = (
            Arc::clone(&setup),
            done_tx.clone(),
            conn.sender.clone(),
            Arc::clone(&running),
        );
        thread::Builder::new()
            .name("mcp-runner".into())
            .spawn(move || run_calls(&setup, &queue_rx, &done, &out, &running))?;
    }
    let mut session = Session {
        setup,
        out: conn.sender.clone(),
        version: None,
        calls: HashMap::new(),
        queue: queue_tx,
        done: done_tx,
    };
    loop {
        let alive = crossbeam_channel::select! {
            recv(conn.receiver) -> incoming => match incoming {
                Ok(incoming) => session.handle(incoming),
                // Stdin closed: the client is gone.
                Err(_) => false,
            },
            recv(done_rx) -> done => match done {
                Ok(done) => session.finish(done),
                Err(_) => false,
            },
        };
        if !alive {
            break;
        }
    }
    kill_running(&running);
    drop(session);
    conn.close(CLOSE_BOUND);
    Ok(crate::exit::Outcome::Clean)
}

/// The language servers of an in-process run under way, killed: their client is
/// gone, and a hung one would not notice its stdin closing. The run's watcher learns
/// of a server at the first pump after its start (within a wait's 20 ms tick); one
/// started in that moment is left to notice its stdin close when lspgate exits.
fn kill_running(running: &Mutex<Vec<u32>>) {
    let pids = running.lock().unwrap_or_else(PoisonError::into_inner);
    for &pid in pids.iter() {
        if let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// A call that went to a thread, and its answer when it has one.
struct Done {
    key: String,
    frame: Option<String>,
}

/// A call waiting for the runner.
struct Queued {
    key: String,
    id: Value,
    call: Call,
    version: &'static str,
    progress_token: Option<Value>,
    cancelled: Arc<AtomicBool>,
}

struct Session {
    setup: Arc<Setup>,
    out: Sender<String>,
    /// The negotiated revision, once `initialize` is answered.
    version: Option<&'static str>,
    /// The calls not yet answered, by id (as JSON: `1` and `"1"` differ), with the
    /// flag `notifications/cancelled` sets.
    calls: HashMap<String, Arc<AtomicBool>>,
    queue: Sender<Queued>,
    done: Sender<Done>,
}

impl Session {
    /// Handle one message; false when the client can no longer be written to.
    fn handle(&mut self, incoming: Incoming) -> bool {
        match incoming {
            Incoming::Request { id, method, params } => self.request(&id, &method, params),
            Incoming::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    self.cancel(&params);
                }
                // `notifications/initialized` needs nothing; others are not ours.
                true
            }
            Incoming::Response => true,
            Incoming::Invalid { id, code, message } => {
                self.send(protocol::error(&id, code, &message))
            }
        }
    }

    fn send(&self, frame: String) -> bool {
        self.out.send(frame).is_ok()
    }

    fn error(&self, id: &Value, code: i64, message: &str) -> bool {
        self.send(protocol::error(id, code, message))
    }

    fn request(&mut self, id: &Value, method: &str, params: Value) -> bool {
        match (method, self.version) {
            ("ping", _) => self.send(protocol::response(id, &json!({}))),
            ("initialize", None) => match params.get("protocolVersion").and_then(Value::as_str) {
                Some(asked) => {
                    let version = negotiate(asked);
                    self.version = Some(version);
                    self.send(protocol::response(id, &initialize_result(version)))
                }
                None => self.error(id, INVALID_PARAMS, "initialize: missing protocolVersion"),
            },
            ("initialize", Some(_)) => self.error(id, INVALID_REQUEST, "already initialized"),
            ("tools/list" | "tools/call", None) => self.error(
                id,
                INVALID_REQUEST,
                "not initialized: send initialize first",
            ),
            ("tools/list", Some(version)) => {
                self.send(protocol::response(id, &tools_list(version)))
            }
            ("tools/call", Some(version)) => self.call(id, params, version),
            (other, _) => self.error(id, METHOD_NOT_FOUND, &format!("method not found: {other}")),
        }
    }

    fn call(&mut self, id: &Value, mut params: Value, version: &'static str) -> bool {
        // Taken out, not copied: a `write`'s content may be tens of megabytes.
        let arguments = params
            .as_object_mut()
            .and_then(|map| map.remove("arguments"))
            .unwrap_or(Value::Null);
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return self.error(id, INVALID_PARAMS, "tools/call: missing name");
        };
        let call = match Call::parse(name, arguments) {
            Ok(call) => call,
            Err(message) => return self.error(id, INVALID_PARAMS, &message),
        };
        let key = id.to_string();
        if self.calls.contains_key(&key) {
            return self.error(id, INVALID_REQUEST, &format!("id {key} is already in use"));
        }
        let cancelled = Arc::new(AtomicBool::new(false));
        self.calls.insert(key.clone(), Arc::clone(&cancelled));
        if call.runs_servers() {
            let progress_token = params
                .get("_meta")
                .and_then(|meta| meta.get("progressToken"))
                .filter(|token| token.is_string() || token.is_number())
                .cloned();
            let queued = Queued {
                key,
                id: id.clone(),
                call,
                version,
                progress_token,
                cancelled,
            };
            if self.queue.send(queued).is_err() {
                self.calls.remove(&id.to_string());
                return self.error(id, protocol::INTERNAL_ERROR, "the runner thread is gone");
            }
            return true;
        }
        let (setup, done, call_id) = (Arc::clone(&self.setup), self.done.clone(), id.clone());
        let spawned = thread::Builder::new()
            .name("mcp-call".into())
            .spawn(move || {
                let frame = answer(&setup, call, None, &call_id, version);
                let _ = done.send(Done {
                    key,
                    frame: Some(frame),
                });
            });
        match spawned {
            Ok(_) => true,
            Err(e) => {
                self.calls.remove(&id.to_string());
                self.error(
                    id,
                    protocol::INTERNAL_ERROR,
                    &format!("no thread for the call: {e}"),
                )
            }
        }
    }

    fn cancel(&mut self, params: &Value) {
        // Unknown or finished ids are passed over, as the protocol allows.
        if let Some(flag) = params
            .get("requestId")
            .and_then(|id| self.calls.get(&id.to_string()))
        {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// A call's thread is done: answer it, unless it was cancelled.
    fn finish(&mut self, done: Done) -> bool {
        let cancelled = self
            .calls
            .remove(&done.key)
            .is_some_and(|flag| flag.load(Ordering::Relaxed));
        match done.frame {
            Some(frame) if !cancelled => self.send(frame),
            _ => true,
        }
    }
}

/// The client's revision when this server speaks it, else the latest it does.
fn negotiate(asked: &str) -> &'static str {
    VERSIONS
        .iter()
        .find(|&&v| v == asked)
        .copied()
        .unwrap_or(VERSIONS[VERSIONS.len() - 1])
}

/// Whether `version` is `since` or later (both among [`VERSIONS`]).
fn at_least(version: &str, since: &str) -> bool {
    let position = |v: &str| VERSIONS.iter().position(|&known| known == v);
    position(version) >= position(since)
}

fn initialize_result(version: &str) -> Value {
    let mut server_info = json!({"name": "lspgate", "version": env!("CARGO_PKG_VERSION")});
    let mut result = json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
    });
    if at_least(version, "2025-03-26") {
        result["instructions"] = Value::String(schema::INSTRUCTIONS.into());
    }
    if at_least(version, "2025-06-18") {
        server_info["title"] = Value::String("lspgate".into());
    }
    result["serverInfo"] = server_info;
    result
}

fn tools_list(version: &str) -> Value {
    let tools: Vec<Value> = schema::TOOLS
        .iter()
        .map(|tool| {
            let mut entry = json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": (tool.input)(),
            });
            if at_least(version, "2025-03-26") {
                entry["annotations"] = json!({
                    "readOnlyHint": tool.read_only,
                    "destructiveHint": !tool.read_only,
                    "idempotentHint": tool.read_only,
                    "openWorldHint": false,
                });
            }
            if at_least(version, "2025-06-18") {
                entry["title"] = Value::String(tool.title.into());
                entry["outputSchema"] = (tool.output)();
            }
            entry
        })
        .collect();
    json!({ "tools": tools })
}

/// Run `call` and make its answer; a panic in a tool is an error result, not the end
/// of the server.
fn answer(
    setup: &Setup,
    call: Call,
    watcher: Option<Box<dyn Watcher>>,
    id: &Value,
    version: &str,
) -> String {
    let outcome = catch_unwind(AssertUnwindSafe(|| tools::run(setup, call, watcher)))
        .unwrap_or_else(|_| {
            Outcome::Failed("lspgate: internal error (a panic), see stderr".into())
        });
    protocol::response(id, &outcome.result(at_least(version, "2025-06-18")))
}

/// The runner: the calls that run language servers, one at a time.
fn run_calls(
    setup: &Setup,
    queue: &Receiver<Queued>,
    done: &Sender<Done>,
    out: &Sender<String>,
    running: &Arc<Mutex<Vec<u32>>>,
) {
    for queued in queue {
        let frame = (!queued.cancelled.load(Ordering::Relaxed)).then(|| {
            let started = Instant::now();
            let watcher = CallWatcher {
                token: queued.progress_token,
                with_message: at_least(queued.version, "2025-03-26"),
                out: out.clone(),
                cancelled: Arc::clone(&queued.cancelled),
                running: Arc::clone(running),
                started,
                next: started + SHOW_AFTER,
                sent: 0,
            };
            let frame = answer(
                setup,
                queued.call,
                Some(Box::new(watcher)),
                &queued.id,
                queued.version,
            );
            // The run's servers are stopped (in process) or the daemon's.
            running
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
            frame
        });
        let finished = Done {
            key: queued.key,
            frame,
        };
        if done.send(finished).is_err() {
            return;
        }
    }
}

/// Follows a call's run: progress notifications for the client, the pids of the
/// servers it runs in process for [`kill_running`].
struct CallWatcher {
    token: Option<Value>,
    /// The revision has progress messages (2025-03-26 and later).
    with_message: bool,
    out: Sender<String>,
    cancelled: Arc<AtomicBool>,
    running: Arc<Mutex<Vec<u32>>>,
    started: Instant,
    next: Instant,
    sent: u64,
}

impl Watcher for CallWatcher {
    fn progress(&mut self, busy: &[Busy]) {
        let Some(token) = &self.token else { return };
        let now = Instant::now();
        if now < self.next || self.cancelled.load(Ordering::Relaxed) {
            return;
        }
        self.next = now + PROGRESS_EVERY;
        self.sent += 1;
        let mut params = json!({"progressToken": token, "progress": self.sent});
        if self.with_message {
            params["message"] = Value::String(describe_busy(busy, self.started.elapsed()));
        }
        let _ = self
            .out
            .send(protocol::notification("notifications/progress", &params));
    }

    fn servers(&mut self, pids: &[u32]) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        running.clear();
        running.extend_from_slice(pids);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clients_revision_when_known_else_the_latest() {
        assert_eq!(negotiate("2025-03-26"), "2025-03-26");
        assert_eq!(negotiate("2024-11-05"), "2024-11-05");
        assert_eq!(negotiate("2026-07-28"), "2025-11-25");
        assert_eq!(negotiate("1.0"), "2025-11-25");
        assert!(at_least("2025-11-25", "2025-06-18"));
        assert!(!at_least("2025-03-26", "2025-06-18"));
    }

    #[test]
    fn older_revisions_get_no_fields_they_lack() {
        let old = tools_list("2024-11-05");
        let tool = &old["tools"][0];
        assert!(tool.get("outputSchema").is_none() && tool.get("annotations").is_none());
        assert!(
            initialize_result("2024-11-05")
                .get("instructions")
                .is_none()
        );
        let new = tools_list("2025-11-25");
        let names: Vec<&str> = new["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(
            names,
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
        assert_eq!(new["tools"][4]["annotations"]["readOnlyHint"], true);
        assert_eq!(new["tools"][1]["outputSchema"]["type"], "object");
    }
}
