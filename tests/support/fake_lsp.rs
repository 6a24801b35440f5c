//! `fake-lsp`: a small, scriptable language server for `.fake` files, the server of
//! lspgate's end-to-end tests (built as `[[example]] name = "fake-lsp"`).
//!
//! Its diagnostics follow from the text, so a test can predict them exactly:
//!
//! - a line containing `ERROR` gives an Error on that line (code `E1`), whose message
//!   is the rest of the line after `ERROR`, trimmed, or `error`;
//! - a line containing `WARN` gives a Warning (code `W1`) the same way;
//! - a line `use NAME` gives an Error `unknown name NAME` (code `E2`) unless a `.fake`
//!   file under the root has a line `def NAME`. Open documents' text wins over the
//!   disk, which is read afresh every time.
//!
//! Like most real servers it pushes diagnostics for open documents only, with their
//! version, and republishes every open document when anything changes, so open
//! dependents get fresh diagnostics. `--pull` turns that into pull diagnostics.
//!
//! `--mode NAME` (repeatable) scripts the faults real servers won't produce on demand;
//! see `Modes`. `--log FILE` (or `FAKE_LSP_LOG`) appends one JSON line per message
//! received, and `--pidfile FILE` (or `FAKE_LSP_PIDFILE`) appends the pid, so tests can
//! check what the client sent and that no server outlived the run.
//!
//! It speaks through lsp-server's `Message::read`/`Message::write`, not
//! `Connection::stdio()`: that connection's writer thread holds the stdout lock for
//! its whole life, and the `garbage` mode must put raw bytes between two frames.

use std::{
    collections::{BTreeMap, HashSet},
    env, fs,
    io::{self, Write},
    path::{Path, PathBuf},
    process,
    sync::{Arc, Mutex, PoisonError},
    thread,
    time::{Duration, Instant},
};

use crossbeam_channel::Sender;
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::Url;
use serde_json::{Value, json};

/// The faults, each off by default.
#[derive(Debug, Default)]
struct Modes {
    /// Never answer `initialize` (nor anything after it), and never exit by itself.
    hang_initialize: bool,
    /// Exit 1 on `initialize`.
    crash_initialize: bool,
    /// Exit 0 before reading anything.
    exit_immediately: bool,
    /// Exit 1 on the first `didChange`.
    crash_on_change: bool,
    /// Never answer `shutdown`, ignore `exit`, never exit by itself.
    hang_shutdown: bool,
    /// Exit 1 on `shutdown`.
    crash_shutdown: bool,
    /// After the `initialize` answer, a non-LSP line and a frame of invalid JSON.
    garbage: bool,
    /// Publishes for a changed document carry its previous version.
    stale_version: bool,
    /// Publishes carry no version.
    no_version: bool,
    /// After `initialized`, begin a work-done progress and never end it.
    progress_never_ends: bool,
    /// Delay every publish by this much (requests are still answered meanwhile).
    slow_publish: Option<Duration>,
    /// `slow-pull=MS`: answer each pull (`textDocument/diagnostic`, or a tsserver
    /// request) MS after reading it, handling nothing meanwhile, as a server checking
    /// a large file.
    slow_pull: Option<Duration>,
    /// Never publish.
    silent: bool,
    /// Write to stderr continuously, and a line per message received.
    flood_stderr: bool,
    /// After `initialized`, send `fake/unknown` and a two-item `workspace/configuration`.
    server_request: bool,
    /// After the `initialize` answer, one notification frame of this many bytes
    /// (`huge-message=BYTES`), streamed: a client must skip it, not buffer it.
    huge_message: Option<usize>,
    /// After the `initialize` answer, one notification of about this many bytes whose
    /// params are an array of tiny objects (`wide-message=BYTES`): small as text, many
    /// times larger once parsed into JSON values.
    wide_message: Option<usize>,
    /// A publish whose diagnostics include one with the message `MANY` (a line
    /// `ERROR MANY`) carries this many copies of its list's first diagnostic
    /// (`many-diagnostics=N`), as a server reporting tens of thousands of errors in a
    /// file does: over the size a client can read once parsed, it is skipped.
    many_diagnostics: Option<usize>,
    /// After the `initialize` answer, twelve `window/logMessage`s of this many bytes
    /// each (`big-logs=BYTES`).
    big_logs: Option<usize>,
    /// After the `initialize` answer, this many bytes of `Content-Length` header lines
    /// that do not parse, then a blank line (`bad-headers=BYTES`).
    bad_headers: Option<usize>,
    /// After the `initialize` answer, a line and a frame holding invalid UTF-8; every
    /// publish's messages end in an invalid UTF-8 byte.
    invalid_utf8: bool,
    /// After `initialized`, unknown notifications and requests, a `$/` request, a
    /// cancel and a response for ids never sent.
    unknown_methods: bool,
    /// `pull-fails`: every `textDocument/diagnostic` is answered with an internal error
    /// (a hard one, not "retry").
    pull_fails: bool,
    /// Publishes carry the next version, one the client never sent.
    future_version: bool,
    /// From `initialized` on, republish the last diagnostics of every open document
    /// over and over, this many per second (`flood-publish=RATE`; 0: as fast as the
    /// pipe takes them).
    flood_publish: Option<u64>,
    /// clangd's file states (`textDocument/clangd.fileStatus`, params `{uri, state}`):
    /// wherever a document would be published, it is `file is queued`, then a first
    /// pass (its warnings only, with its version), then a flap `idle` and at once
    /// `parsing includes`, then this long later (`file-status=MS`) the full
    /// diagnostics with its version, then `idle`. Only the latest state tells whether
    /// the file is done: the first pass and the flap's `idle` are not the answer.
    file_status: Option<Duration>,
    /// clangd's file states with `idle` before the publish, as clangd says it between
    /// the steps of one rebuild: wherever a document would be published, it is `file
    /// is queued`, `idle`, then this long later (`idle-early=MS`) the diagnostics with
    /// the version, then `idle` again.
    idle_early: Option<Duration>,
    /// Every publish in two passes with the same version: at once without the
    /// warnings, then this long later (`two-pass=MS`) the full set, as servers that
    /// diagnose in stages do (gopls's default diagnosticsDelay).
    two_pass: Option<Duration>,
    /// typescript-language-server's route to tsserver: `executeCommandProvider` lists
    /// `typescript.tsserverRequest`, and `workspace/executeCommand` with it and
    /// `[KIND, {file}]` answers a tsserver response for the document's current text
    /// (the open document's, else the disk's). `semanticDiagnosticsSync` lists a
    /// line's `ERROR` (category error, code 1001) and `WARN` (warning, code 6133), each
    /// from the word to the end of the line (1-based line and UTF-16 offset), with
    /// the rest of the line as text as in a publish; `syntacticDiagnosticsSync` and
    /// `suggestionDiagnosticsSync` answer an empty body. Pushes are as without it
    /// (combine with `slow-publish`, `silent`, `no-version`).
    tsserver: bool,
    /// As `tsserver`, but every tsserver request fails: `success: false`, message
    /// `No Project.`, as tsserver answers for a file outside every project.
    tsserver_fails: bool,
    /// pyright's workspace mode (`workspace=MS`): after `initialized` and after every
    /// change (not an open, which only checks the opened file, nor a save), nothing for
    /// MS (an analysis slice), then every open document's publish
    /// with its version and the `window/workDoneProgress/create` of the analysis's
    /// token, MS later its `begin`, every other `.fake` file under the root (no
    /// version), and its `end`. Silence alone never says the analysis is done.
    workspace: Option<Duration>,
}

#[derive(Debug, Default)]
struct Options {
    pull: bool,
    modes: Modes,
    log: Option<PathBuf>,
    pidfile: Option<PathBuf>,
    /// `--push-unopened`: publish every `.fake` file under the root, opened or not,
    /// as gopls reports every package it loads.
    push_unopened: bool,
    /// `--watch-files`: after `initialized`, register `workspace/didChangeWatchedFiles`
    /// for every file, as pyright and gopls do (they learn of the disk from the
    /// client only).
    watch_files: bool,
    /// `--swap-on-initialize DIR=TARGET`: before answering `initialize`, rename the
    /// root's directory DIR to `DIR.real` and put a symlink to TARGET in its place: a
    /// workspace changed between an edit's planning and its commit, at a moment the
    /// client cannot miss (it waits for the answer before it writes).
    swap_on_initialize: Option<(PathBuf, PathBuf)>,
    /// `--crash-once FILE`: exit 1 on the first `didChange` unless FILE exists, after
    /// creating it, so that only the first of a daemon's servers crashes.
    crash_once: Option<PathBuf>,
    /// `--append-on-change FILE`: on every `didChange`, append a line to FILE, as
    /// another tool writing a file while lspgate checks it.
    append_on_change: Option<PathBuf>,
    /// `--log-messages N`: after `initialized`, N `window/logMessage`s (levels 1 to 4
    /// in turn, "log I") and two `window/showMessage`s ("show 0", "show 1").
    log_messages: usize,
    /// `--silent-under DIR`: never publish for a document under DIR (relative to the
    /// root): a server too slow for one package of a monorepo.
    silent_under: Option<PathBuf>,
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options {
        log: env::var_os("FAKE_LSP_LOG").map(PathBuf::from),
        pidfile: env::var_os("FAKE_LSP_PIDFILE").map(PathBuf::from),
        ..Options::default()
    };
    let mut args = env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or(format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--pull" => opts.pull = true,
            "--log" => opts.log = Some(value()?.into()),
            "--pidfile" => opts.pidfile = Some(value()?.into()),
            "--mode" => set_mode(&mut opts.modes, &value()?)?,
            "--push-unopened" => opts.push_unopened = true,
            "--watch-files" => opts.watch_files = true,
            "--crash-once" => opts.crash_once = Some(value()?.into()),
            "--append-on-change" => opts.append_on_change = Some(value()?.into()),
            "--silent-under" => opts.silent_under = Some(value()?.into()),
            "--swap-on-initialize" => {
                let value = value()?;
                let (dir, target) = value
                    .split_once('=')
                    .ok_or(format!("--swap-on-initialize: {value:?} is not DIR=TARGET"))?;
                opts.swap_on_initialize = Some((dir.into(), target.into()));
            }
            "--log-messages" => {
                opts.log_messages = value()?
                    .parse()
                    .map_err(|e| format!("--log-messages: {e}"))?;
            }
            // Real servers are started with `--stdio`; accept it so configs can copy them.
            "--stdio" => {}
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    Ok(opts)
}

fn set_mode(modes: &mut Modes, mode: &str) -> Result<(), String> {
    let flag = match mode {
        "hang-initialize" => &mut modes.hang_initialize,
        "crash-initialize" => &mut modes.crash_initialize,
        "exit-immediately" => &mut modes.exit_immediately,
        "crash-on-change" => &mut modes.crash_on_change,
        "hang-shutdown" => &mut modes.hang_shutdown,
        "crash-shutdown" => &mut modes.crash_shutdown,
        "garbage" => &mut modes.garbage,
        "stale-version" => &mut modes.stale_version,
        "no-version" => &mut modes.no_version,
        "progress-never-ends" => &mut modes.progress_never_ends,
        "silent" => &mut modes.silent,
        "flood-stderr" => &mut modes.flood_stderr,
        "server-request" => &mut modes.server_request,
        "invalid-utf8" => &mut modes.invalid_utf8,
        "unknown-methods" => &mut modes.unknown_methods,
        "pull-fails" => &mut modes.pull_fails,
        "future-version" => &mut modes.future_version,
        "tsserver" => &mut modes.tsserver,
        "tsserver-fails" => &mut modes.tsserver_fails,
        _ => {
            let (name, value) = mode
                .split_once('=')
                .ok_or(format!("unknown mode {mode:?}"))?;
            let number = value
                .parse::<u64>()
                .map_err(|_| format!("mode {name}: {value:?} is not a number"))?;
            let size = usize::try_from(number).map_err(|e| format!("mode {name}: {e}"))?;
            match name {
                "slow-publish" => modes.slow_publish = Some(Duration::from_millis(number)),
                "slow-pull" => modes.slow_pull = Some(Duration::from_millis(number)),
                "huge-message" => modes.huge_message = Some(size),
                "wide-message" => modes.wide_message = Some(size),
                "many-diagnostics" => modes.many_diagnostics = Some(size),
                "bad-headers" => modes.bad_headers = Some(size),
                "big-logs" => modes.big_logs = Some(size),
                "flood-publish" => modes.flood_publish = Some(number),
                "file-status" => modes.file_status = Some(Duration::from_millis(number)),
                "two-pass" => modes.two_pass = Some(Duration::from_millis(number)),
                "idle-early" => modes.idle_early = Some(Duration::from_millis(number)),
                "workspace" => modes.workspace = Some(Duration::from_millis(number)),
                _ => return Err(format!("unknown mode {mode:?}")),
            }
            return Ok(());
        }
    };
    *flag = true;
    Ok(())
}

/// Stdout, shared by the main loop and the delayed-message thread; one frame at a time.
#[derive(Clone)]
struct Out(Arc<Mutex<io::Stdout>>);

impl Out {
    fn send(&self, msg: impl Into<Message>) {
        let mut stdout = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // The client is gone: nobody is left to serve.
        if msg.into().write(&mut *stdout).is_err() {
            process::exit(1);
        }
    }

    /// One frame whose body is `head`, `fill` times `byte`, then `tail`, written in
    /// chunks so that neither side of the pipe need hold it whole.
    fn frame(&self, head: &[u8], byte: u8, fill: usize, tail: &[u8]) {
        self.stream(head, &vec![byte; 1024 * 1024], fill, tail);
    }

    /// One frame whose body is `head`, `count` times `item`, then `tail`.
    fn frame_of_items(&self, head: &[u8], item: &[u8], count: usize, tail: &[u8]) {
        // Chunks of whole items, so that every cut falls between two items.
        let chunk = item.repeat((1024 * 1024 / item.len()).max(1));
        self.stream(head, &chunk, count * item.len(), tail);
    }

    /// Writes `head`, `fill` bytes taken from the start of `chunk` over and over, and
    /// `tail`, as one frame.
    fn stream(&self, head: &[u8], chunk: &[u8], fill: usize, tail: &[u8]) {
        let mut stdout = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let len = head.len() + fill + tail.len();
        let mut write = |bytes: &[u8]| {
            if stdout.write_all(bytes).is_err() {
                process::exit(1);
            }
        };
        write(format!("Content-Length: {len}\r\n\r\n").as_bytes());
        write(head);
        let mut left = fill;
        while left > 0 {
            let n = left.min(chunk.len());
            write(&chunk[..n]);
            left -= n;
        }
        write(tail);
        if stdout.flush().is_err() {
            process::exit(1);
        }
    }

    fn raw(&self, bytes: &[u8]) {
        let mut stdout = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if stdout
            .write_all(bytes)
            .and_then(|()| stdout.flush())
            .is_err()
        {
            process::exit(1);
        }
    }
}

/// Appends JSON lines to `--log`; one `write` per line, so processes may share a file.
struct Log(Option<PathBuf>);

impl Log {
    fn event(&self, event: Value) {
        let Some(path) = &self.0 else { return };
        let line = format!("{event}\n");
        let written = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(err) = written {
            stderr_line(&format!("fake-lsp: cannot write {}: {err}", path.display()));
        }
    }
}

fn stderr_line(line: &str) {
    let _ = writeln!(io::stderr(), "{line}");
}

struct Doc {
    uri: String,
    version: i64,
    text: String,
    changed: bool,
}

struct Server {
    opts: Options,
    out: Out,
    log: Log,
    /// Delayed messages go through this thread, in order (`slow-publish`,
    /// `file-status`, `idle-early`, `two-pass`).
    delayed: Option<Sender<(Instant, Message)>>,
    root: Option<PathBuf>,
    /// Open documents by path: clients may spell one file's URI in several ways.
    docs: BTreeMap<PathBuf, Doc>,
    /// Stop answering: `hang-initialize` or `hang-shutdown` has struck.
    hung: bool,
    shutdown: bool,
    /// The last publish's params per URI, which `flood-publish` sends again and again.
    published: Arc<Mutex<BTreeMap<String, Value>>>,
    /// The `request_seq` of the next tsserver response (`tsserver`).
    tsserver_seq: u64,
    /// Analyses begun (`workspace`), for their progress tokens.
    analyses: std::cell::Cell<u64>,
}

const PROGRESS_CREATE_ID: &str = "fake-progress-create";

fn main() {
    let opts = match parse_args() {
        Ok(opts) => opts,
        Err(err) => {
            stderr_line(&format!("fake-lsp: {err}"));
            process::exit(2);
        }
    };
    if let Some(pidfile) = &opts.pidfile {
        Log(Some(pidfile.clone())).event(json!(process::id()));
    }
    if opts.modes.exit_immediately {
        process::exit(0);
    }
    if opts.modes.flood_stderr {
        thread::spawn(flood_stderr);
    }
    let out = Out(Arc::new(Mutex::new(io::stdout())));
    let modes = &opts.modes;
    let delayed = (modes.slow_publish.is_some()
        || modes.file_status.is_some()
        || modes.idle_early.is_some()
        || modes.two_pass.is_some()
        || modes.workspace.is_some())
    .then(|| spawn_delayed(out.clone()));
    let mut server = Server {
        log: Log(opts.log.clone()),
        opts,
        out,
        delayed,
        root: None,
        docs: BTreeMap::new(),
        hung: false,
        shutdown: false,
        published: Arc::new(Mutex::new(BTreeMap::new())),
        tsserver_seq: 0,
        analyses: std::cell::Cell::new(0),
    };
    let mut stdin = io::stdin().lock();
    loop {
        match Message::read(&mut stdin) {
            Ok(Some(msg)) => server.handle(msg),
            Ok(None) => break,
            Err(err) => {
                stderr_line(&format!("fake-lsp: unreadable message: {err}"));
                server
                    .log
                    .event(json!({"event": "bad-input", "error": err.to_string()}));
                process::exit(1);
            }
        }
    }
    // A hung server does not notice that its client left: the client must kill it.
    if server.hung {
        loop {
            thread::park();
        }
    }
    process::exit(if server.shutdown { 0 } else { 1 });
}

/// A burst bigger than any pipe buffer, then a steady stream: a client that does not
/// drain stderr stalls the server (the main loop writes there too), as with real ones.
fn flood_stderr() {
    let line = "fake-lsp: flooding stderr, as chatty servers do ........................\n";
    let chunk = line.repeat(8 * 1024 / line.len());
    let mut stderr = io::stderr();
    for _ in 0..64 {
        if stderr.write_all(chunk.as_bytes()).is_err() {
            return;
        }
    }
    // Paced so the flood does not eat the CPU the test itself needs.
    while stderr.write_all(chunk.as_bytes()).is_ok() {
        thread::sleep(Duration::from_millis(5));
    }
}

/// Stands for an invalid UTF-8 byte in a publish (`invalid-utf8`).
const BAD_BYTE_MARKER: &str = "<<BAD-BYTE>>";

/// `flood-publish`: the last publishes again and again, `rate` a second (0: unpaced),
/// until the client stops reading (then `Out::send` exits the process).
fn flood_publish(out: &Out, published: &Mutex<BTreeMap<String, Value>>, rate: u64) {
    let pause = (rate > 0).then(|| Duration::from_micros(1_000_000 / rate));
    loop {
        let all: Vec<Value> = published
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        if all.is_empty() {
            // Nothing opened yet: wait for a publish to repeat.
            thread::sleep(Duration::from_millis(5));
            continue;
        }
        for params in all {
            out.send(Notification::new(
                "textDocument/publishDiagnostics".to_owned(),
                params,
            ));
            if let Some(pause) = pause {
                thread::sleep(pause);
            }
        }
    }
}

fn spawn_delayed(out: Out) -> Sender<(Instant, Message)> {
    let (tx, rx) = crossbeam_channel::unbounded::<(Instant, Message)>();
    thread::spawn(move || {
        for (due, msg) in rx {
            thread::sleep(due.saturating_duration_since(Instant::now()));
            out.send(msg);
        }
    });
    tx
}

impl Server {
    fn handle(&mut self, msg: Message) {
        match msg {
            Message::Request(req) => {
                self.received(&req.method, &req.params);
                if !self.hung {
                    self.request(req);
                }
            }
            Message::Notification(not) => {
                self.received(&not.method, &not.params);
                if !self.hung {
                    self.notification(not);
                }
            }
            Message::Response(resp) => {
                let (result, error) = match resp.response_result {
                    Ok(result) => (result, Value::Null),
                    Err(err) => (
                        Value::Null,
                        json!({"code": err.code, "message": err.message}),
                    ),
                };
                self.log.event(
                    json!({"event": "response", "id": resp.id, "result": result, "error": error}),
                );
                if resp.id == RequestId::from(PROGRESS_CREATE_ID.to_owned()) && !self.hung {
                    self.progress_begin();
                }
            }
        }
    }

    fn received(&self, method: &str, params: &Value) {
        let doc = &params["textDocument"];
        let mut event = json!({
            "event": "recv", "method": method,
            "uri": doc["uri"], "version": doc["version"],
        });
        if method == "workspace/didChangeWatchedFiles" {
            event["changes"] = params["changes"].clone();
        }
        if method == "workspace/executeCommand" {
            event["command"] = params["command"].clone();
            event["arguments"] = params["arguments"].clone();
        }
        self.log.event(event);
        if self.opts.modes.flood_stderr {
            stderr_line(&format!("fake-lsp: received {method}"));
        }
    }

    fn request(&mut self, req: Request) {
        let modes = &self.opts.modes;
        if let Some(slow) = modes.slow_pull
            && matches!(
                req.method.as_str(),
                "textDocument/diagnostic" | "workspace/executeCommand"
            )
        {
            // The server is busy checking the file: a stand-in for its work.
            thread::sleep(slow);
        }
        let result = match req.method.as_str() {
            "initialize" => {
                if modes.hang_initialize {
                    self.hung = true;
                    return;
                }
                if modes.crash_initialize {
                    process::exit(1);
                }
                self.root = root_of(&req.params);
                if let (Some((dir, target)), Some(root)) =
                    (&self.opts.swap_on_initialize, &self.root)
                {
                    let dir = root.join(dir);
                    let mut real = dir.clone().into_os_string();
                    real.push(".real");
                    if let Err(e) = fs::rename(&dir, &real)
                        .and_then(|()| std::os::unix::fs::symlink(target, &dir))
                    {
                        stderr_line(&format!("--swap-on-initialize: {e}"));
                    }
                }
                self.initialize_result()
            }
            "shutdown" => {
                if modes.hang_shutdown {
                    self.hung = true;
                    return;
                }
                if modes.crash_shutdown {
                    process::exit(1);
                }
                self.shutdown = true;
                Value::Null
            }
            "textDocument/diagnostic" if self.opts.pull && modes.pull_fails => {
                let code = ErrorCode::InternalError as i32;
                let message = "fake-lsp: pull-fails".to_owned();
                self.out.send(Response::new_err(req.id, code, message));
                return;
            }
            "textDocument/diagnostic" if self.opts.pull => {
                let uri = req.params["textDocument"]["uri"]
                    .as_str()
                    .unwrap_or_default();
                let items = match path_of(uri) {
                    Some(path) => {
                        let defs = self.defined_names();
                        let text = match self.docs.get(&path) {
                            Some(doc) => Some(doc.text.clone()),
                            None => fs::read_to_string(&path).ok(),
                        };
                        text.map(|text| diagnostics(&text, &defs))
                            .unwrap_or_default()
                    }
                    None => Vec::new(),
                };
                json!({"kind": "full", "items": items})
            }
            "workspace/executeCommand" if modes.tsserver || modes.tsserver_fails => {
                match self.tsserver_request(&req.params) {
                    Ok(result) => result,
                    Err(message) => {
                        let code = ErrorCode::InvalidParams as i32;
                        self.out.send(Response::new_err(req.id, code, message));
                        return;
                    }
                }
            }
            _ => {
                let resp = Response::new_err(
                    req.id,
                    ErrorCode::MethodNotFound as i32,
                    format!("fake-lsp does not handle {}", req.method),
                );
                self.out.send(resp);
                return;
            }
        };
        self.out.send(Response::new_ok(req.id, result));
        if req.method == "initialize" {
            self.after_initialize();
        }
    }

    /// The faults written right after the `initialize` answer.
    fn after_initialize(&self) {
        let modes = &self.opts.modes;
        if modes.garbage {
            self.out.raw(b"garbage!\r\n");
            self.out.raw(b"Content-Length: 9\r\n\r\n{invalid}");
        }
        if let Some(size) = modes.huge_message {
            let head = br#"{"jsonrpc":"2.0","method":"fake/huge","params":{"blob":""#;
            let tail = br#""}}"#;
            let fill = size.saturating_sub(head.len() + tail.len());
            self.out.frame(head, b'x', fill, tail);
        }
        if let Some(size) = modes.wide_message {
            let head = br#"{"jsonrpc":"2.0","method":"fake/wide","params":["#;
            let tail = br#"{"a":0}]}"#;
            let item = br#"{"a":0},"#;
            let count = size.saturating_sub(head.len() + tail.len()) / item.len();
            self.out.frame_of_items(head, item, count, tail);
        }
        if let Some(size) = modes.big_logs {
            let head =
                br#"{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":4,"message":""#;
            let tail = br#""}}"#;
            for _ in 0..12 {
                self.out.frame(
                    head,
                    b'l',
                    size.saturating_sub(head.len() + tail.len()),
                    tail,
                );
            }
        }
        if let Some(size) = modes.bad_headers {
            let line = b"Content-Length: not a number\r\n";
            let mut chunk = Vec::new();
            while chunk.len() + line.len() <= 64 * 1024 {
                chunk.extend_from_slice(line);
            }
            let mut left = size;
            while left > 0 {
                let n = left.min(chunk.len());
                self.out.raw(&chunk[..n]);
                left -= n;
            }
            self.out.raw(b"\r\n\r\n");
        }
        if modes.invalid_utf8 {
            self.out
                .raw(b"log line with invalid UTF-8: \xff\xfe\xc3\r\n");
            let body: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"window/logMessage\",\"params\":{\"type\":3,\"message\":\"bad \xff\xc3\x28 bytes\"}}";
            let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
            frame.extend_from_slice(body);
            self.out.raw(&frame);
        }
    }

    fn initialize_result(&self) -> Value {
        let mut capabilities = json!({
            "textDocumentSync": {"openClose": true, "change": 1, "save": {"includeText": false}},
        });
        if self.opts.pull {
            capabilities["diagnosticProvider"] = json!({"identifier": "fake", "interFileDependencies": true, "workspaceDiagnostics": false});
        }
        if self.opts.modes.tsserver || self.opts.modes.tsserver_fails {
            capabilities["executeCommandProvider"] = json!({"commands": [TSSERVER_REQUEST]});
        }
        json!({"capabilities": capabilities, "serverInfo": {"name": "fake-lsp", "version": "0.1.0"}})
    }

    fn notification(&mut self, not: Notification) {
        let params = &not.params;
        match not.method.as_str() {
            "initialized" => {
                for i in 0..self.opts.log_messages {
                    let params = json!({"type": i % 4 + 1, "message": format!("log {i}")});
                    self.out
                        .send(Notification::new("window/logMessage".to_owned(), params));
                }
                if self.opts.log_messages > 0 {
                    for i in 0..2 {
                        let params = json!({"type": 3, "message": format!("show {i}")});
                        self.out
                            .send(Notification::new("window/showMessage".to_owned(), params));
                    }
                }
                if self.opts.modes.progress_never_ends {
                    // The token may only be used once the client has accepted it.
                    self.send_request(
                        PROGRESS_CREATE_ID,
                        "window/workDoneProgress/create",
                        json!({"token": "fake"}),
                    );
                }
                if self.opts.modes.unknown_methods {
                    self.unknown_methods();
                }
                if self.opts.modes.workspace.is_some() {
                    self.publish_all();
                }
                if self.opts.watch_files {
                    let watchers = json!([{ "globPattern": "**/*" }]);
                    self.send_request(
                        "watch-files",
                        "client/registerCapability",
                        json!({ "registrations": [{
                            "id": "watch-files",
                            "method": "workspace/didChangeWatchedFiles",
                            "registerOptions": { "watchers": watchers },
                        }] }),
                    );
                }
                if let Some(rate) = self.opts.modes.flood_publish {
                    let (out, published) = (self.out.clone(), Arc::clone(&self.published));
                    thread::spawn(move || flood_publish(&out, &published, rate));
                }
                if self.opts.modes.server_request {
                    self.send_request("fake-unknown", "fake/unknown", json!({}));
                    self.send_request(
                        "fake-configuration",
                        "workspace/configuration",
                        json!({"items": [{"section": "fake"}, {"section": "fake.other"}]}),
                    );
                }
            }
            "exit" => process::exit(if self.shutdown { 0 } else { 1 }),
            "textDocument/didOpen" => {
                let doc = &params["textDocument"];
                let uri = doc["uri"].as_str().unwrap_or_default();
                let Some(path) = path_of(uri) else { return };
                let doc = Doc {
                    uri: uri.to_owned(),
                    version: doc["version"].as_i64().unwrap_or_default(),
                    text: doc["text"].as_str().unwrap_or_default().to_owned(),
                    changed: false,
                };
                // pyright's workspace mode takes an opened file's text for the disk's:
                // it checks that file, and nothing else is re-analysed.
                if let Some(slice) = self.opts.modes.workspace {
                    let (uri, version, text) = (doc.uri.clone(), doc.version, doc.text.clone());
                    self.docs.insert(path, doc);
                    let diagnostics = diagnostics(&text, &self.defined_names());
                    self.publish_after(slice, &uri, Some(version), diagnostics);
                    return;
                }
                self.docs.insert(path, doc);
                self.publish_all();
            }
            "textDocument/didChange" => {
                if self.opts.modes.crash_on_change {
                    process::exit(1);
                }
                if let Some(file) = &self.opts.append_on_change {
                    let mut text = fs::read_to_string(file).unwrap_or_default();
                    text.push_str("again\n");
                    let _ = fs::write(file, text);
                }
                if let Some(marker) = &self.opts.crash_once
                    && !marker.exists()
                {
                    let _ = fs::write(marker, "crashed\n");
                    process::exit(1);
                }
                let Some(path) = params["textDocument"]["uri"].as_str().and_then(path_of) else {
                    return;
                };
                let Some(doc) = self.docs.get_mut(&path) else {
                    stderr_line("fake-lsp: didChange for a document that is not open");
                    process::exit(1);
                };
                let changes = params["contentChanges"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                for change in changes {
                    // Full sync was advertised: a ranged change is a client bug worth failing on.
                    if !change["range"].is_null() {
                        stderr_line("fake-lsp: ranged change, but full sync was advertised");
                        process::exit(1);
                    }
                    doc.text = change["text"].as_str().unwrap_or_default().to_owned();
                }
                doc.version = params["textDocument"]["version"]
                    .as_i64()
                    .unwrap_or(doc.version + 1);
                doc.changed = true;
                self.publish_all();
            }
            "textDocument/didClose" => {
                let Some(uri) = params["textDocument"]["uri"].as_str() else {
                    return;
                };
                if let Some(path) = path_of(uri) {
                    self.docs.remove(&path);
                }
                // pyright's workspace mode goes on reporting a closed file: it reads
                // it from the disk and re-analyses what imports it.
                if self.opts.modes.workspace.is_none() {
                    // As real servers do: a closed document's diagnostics are cleared.
                    self.publish(uri, None, Vec::new());
                }
                self.publish_all();
            }
            "workspace/didChangeWatchedFiles" => {
                // pyright's workspace mode clears a deleted file's diagnostics.
                if let Some(slice) = self.opts.modes.workspace {
                    let deleted = params["changes"].as_array().into_iter().flatten();
                    for change in deleted.filter(|c| c["type"] == 3) {
                        let uri = change["uri"].as_str().unwrap_or_default();
                        self.publish_after(slice, uri, None, Vec::new());
                    }
                }
                self.publish_all();
            }
            // pyright's workspace mode does nothing on a save.
            "textDocument/didSave" if self.opts.modes.workspace.is_some() => {}
            "textDocument/didSave" => self.publish_all(),
            _ => {}
        }
    }

    fn send_request(&self, id: &str, method: &str, params: Value) {
        self.out.send(Request::new(
            RequestId::from(id.to_owned()),
            method.to_owned(),
            params,
        ));
    }

    /// What a client must survive: notifications it has never heard of, requests it
    /// must refuse (every one answered), and answers and cancels for ids it never sent.
    fn unknown_methods(&self) {
        let note = |method: &str, params: Value| {
            self.out.send(Notification::new(method.to_owned(), params))
        };
        note("fake/unknownNotification", json!({"x": [1, 2, 3]}));
        note("$/fakeNotification", Value::Null);
        note("telemetry/event", json!({"anything": true}));
        note("$/cancelRequest", json!({"id": 424242}));
        note(
            "$/progress",
            json!({"token": "never-created", "value": {"kind": "end"}}),
        );
        self.out.send(Request::new(
            RequestId::from(77),
            "fake/unknownRequest".to_owned(),
            json!({"deep": {"er": [null]}}),
        ));
        self.send_request("fake-dollar", "$/fakeRequest", Value::Null);
        self.send_request(
            "fake-show-document",
            "window/showDocument",
            json!({"uri": "file:///nonexistent", "external": true}),
        );
        self.send_request(
            "fake-apply-edit",
            "workspace/applyEdit",
            json!({"edit": {"changes": {}}}),
        );
        self.out.send(Response::new_ok(
            RequestId::from(999_999),
            json!({"never": "asked"}),
        ));
        self.out.send(Response::new_err(
            RequestId::from("nobody".to_owned()),
            -32603,
            "an error for no request".to_owned(),
        ));
    }

    fn progress_begin(&self) {
        let value = json!({"kind": "begin", "title": "fake indexing", "cancellable": false});
        self.out.send(Notification::new(
            "$/progress".to_owned(),
            json!({"token": "fake", "value": value}),
        ));
    }

    /// `workspace/executeCommand typescript.tsserverRequest [KIND, {file}]`: tsserver's
    /// response (`tsserver`), or its failure (`tsserver-fails`). An `Err` is a request
    /// typescript-language-server itself would refuse.
    fn tsserver_request(&mut self, params: &Value) -> Result<Value, String> {
        if params["command"] != TSSERVER_REQUEST {
            return Err(format!("unknown command {}", params["command"]));
        }
        let (Some(kind), Some(file)) = (
            params["arguments"][0].as_str(),
            params["arguments"][1]["file"].as_str(),
        ) else {
            return Err(format!("bad arguments {}", params["arguments"]));
        };
        self.tsserver_seq += 1;
        let mut response = json!({
            "seq": 0, "type": "response", "command": kind, "request_seq": self.tsserver_seq,
        });
        if self.opts.modes.tsserver_fails {
            response["success"] = json!(false);
            response["message"] = json!("No Project.");
            return Ok(response);
        }
        let body = match kind {
            "semanticDiagnosticsSync" => {
                let path = PathBuf::from(file);
                let text = match self.docs.get(&path) {
                    Some(doc) => Some(doc.text.clone()),
                    None => fs::read_to_string(&path).ok(),
                };
                text.map(|text| tsserver_diagnostics(&text))
                    .unwrap_or_default()
            }
            "syntacticDiagnosticsSync" | "suggestionDiagnosticsSync" => Vec::new(),
            _ => {
                response["success"] = json!(false);
                response["message"] = json!(format!("Unrecognized JSON command: {kind}"));
                return Ok(response);
            }
        };
        response["success"] = json!(true);
        response["body"] = json!(body);
        Ok(response)
    }

    /// Publishes every open document: anything may have changed what they depend on.
    fn publish_all(&self) {
        if self.opts.pull || self.opts.modes.silent {
            return;
        }
        if let Some(slice) = self.opts.modes.workspace {
            self.analyse_workspace(slice);
            return;
        }
        let defs = self.defined_names();
        for doc in self.docs.values() {
            let modes = &self.opts.modes;
            let version = if modes.no_version {
                None
            } else if modes.future_version {
                Some(doc.version + 1)
            } else if modes.stale_version && doc.changed {
                Some(doc.version - 1)
            } else {
                Some(doc.version)
            };
            let all = diagnostics(&doc.text, &defs);
            // The diagnostics of one severity: 1 error, 2 warning.
            let only = |severity: u8| -> Vec<Value> {
                all.iter()
                    .filter(|d| d["severity"] == severity)
                    .cloned()
                    .collect()
            };
            if let Some(delay) = modes.file_status {
                self.file_status(&doc.uri, "file is queued", Duration::ZERO);
                self.publish(&doc.uri, version, only(2));
                // The flap: both in one go, as clangd sends them.
                self.file_status(&doc.uri, "idle", Duration::ZERO);
                self.file_status(&doc.uri, "parsing includes", Duration::ZERO);
                self.publish_after(delay, &doc.uri, version, all);
                self.file_status(&doc.uri, "idle", delay);
            } else if let Some(delay) = modes.idle_early {
                self.file_status(&doc.uri, "file is queued", Duration::ZERO);
                self.file_status(&doc.uri, "idle", Duration::ZERO);
                self.publish_after(delay, &doc.uri, version, all);
                self.file_status(&doc.uri, "idle", delay);
            } else if let Some(delay) = modes.two_pass {
                self.publish(&doc.uri, version, only(1));
                self.publish_after(delay, &doc.uri, version, all);
            } else {
                self.publish(&doc.uri, version, all);
            }
        }
        if self.opts.push_unopened
            && let Some(root) = &self.root
        {
            let mut files = Vec::new();
            fake_files(root, &mut files);
            for path in files.iter().filter(|p| !self.docs.contains_key(*p)) {
                let (Ok(text), Ok(uri)) = (fs::read_to_string(path), Url::from_file_path(path))
                else {
                    continue;
                };
                self.publish(uri.as_str(), None, diagnostics(&text, &defs));
            }
        }
    }

    /// `workspace`: one analysis of every file, as pyright paces it (see the mode).
    fn analyse_workspace(&self, slice: Duration) {
        let defs = self.defined_names();
        let n = self.analyses.get() + 1;
        self.analyses.set(n);
        let token = format!("analysis-{n}");
        for doc in self.docs.values() {
            let diagnostics = diagnostics(&doc.text, &defs);
            self.publish_after(slice, &doc.uri, Some(doc.version), diagnostics);
        }
        let create = Request::new(
            RequestId::from(format!("create-{n}")),
            "window/workDoneProgress/create".to_owned(),
            json!({"token": token}),
        );
        self.send_after(slice, create.into());
        let progress = |value: Value| -> Message {
            Notification::new(
                "$/progress".to_owned(),
                json!({"token": token, "value": value}),
            )
            .into()
        };
        self.send_after(2 * slice, progress(json!({"kind": "begin", "title": ""})));
        if let Some(root) = &self.root {
            let mut files = Vec::new();
            fake_files(root, &mut files);
            for path in files.iter().filter(|p| !self.docs.contains_key(*p)) {
                let (Ok(text), Ok(uri)) = (fs::read_to_string(path), Url::from_file_path(path))
                else {
                    continue;
                };
                self.publish_after(2 * slice, uri.as_str(), None, diagnostics(&text, &defs));
            }
        }
        self.send_after(2 * slice, progress(json!({"kind": "end"})));
    }

    /// Whether `uri` is under `--silent-under`.
    fn silent_for(&self, uri: &str) -> bool {
        let (Some(dir), Some(root)) = (&self.opts.silent_under, &self.root) else {
            return false;
        };
        let under = root.join(dir);
        Url::parse(uri)
            .ok()
            .and_then(|u| u.to_file_path().ok())
            .is_some_and(|p| p.starts_with(&under))
    }

    fn publish(&self, uri: &str, version: Option<i64>, diagnostics: Vec<Value>) {
        self.publish_after(Duration::ZERO, uri, version, diagnostics);
    }

    /// `textDocument/clangd.fileStatus` for `uri`, `delay` from now (`file-status`,
    /// `idle-early`).
    fn file_status(&self, uri: &str, state: &str, delay: Duration) {
        let params = json!({"uri": uri, "state": state});
        let msg = Notification::new("textDocument/clangd.fileStatus".to_owned(), params);
        self.send_after(delay, msg.into());
    }

    /// `msg` now, or `delay` from now through the delayed-message thread, after
    /// whatever it was given before.
    fn send_after(&self, delay: Duration, msg: Message) {
        match &self.delayed {
            Some(delayed) if !delay.is_zero() => {
                let _ = delayed.send((Instant::now() + delay, msg));
            }
            _ => self.out.send(msg),
        }
    }

    /// A publish, `delay` (plus `slow-publish`'s delay) from now.
    fn publish_after(
        &self,
        delay: Duration,
        uri: &str,
        version: Option<i64>,
        diagnostics: Vec<Value>,
    ) {
        if self.opts.pull || self.opts.modes.silent || self.silent_for(uri) {
            return;
        }
        let diagnostics = match self.opts.modes.many_diagnostics {
            Some(n) if diagnostics.iter().any(|d| d["message"] == "MANY") => {
                vec![diagnostics[0].clone(); n]
            }
            _ => diagnostics,
        };
        let mut params = json!({"uri": uri, "diagnostics": diagnostics});
        if let Some(version) = version {
            params["version"] = json!(version);
        }
        if self.opts.modes.flood_publish.is_some() {
            self.published
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(uri.to_owned(), params.clone());
        }
        if self.opts.modes.invalid_utf8 {
            // JSON cannot carry the bad byte: put a marker in and swap it on the wire.
            if let Some(list) = params["diagnostics"].as_array_mut() {
                for d in list {
                    let message = d["message"].as_str().unwrap_or_default().to_owned();
                    d["message"] = json!(format!("{message}{BAD_BYTE_MARKER}"));
                }
            }
            let note = Notification::new("textDocument/publishDiagnostics".to_owned(), params);
            let mut body = serde_json::to_vec(&Message::from(note)).unwrap_or_default();
            while let Some(at) = body
                .windows(BAD_BYTE_MARKER.len())
                .position(|w| w == BAD_BYTE_MARKER.as_bytes())
            {
                body.splice(at..at + BAD_BYTE_MARKER.len(), [0xff]);
            }
            let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
            frame.extend_from_slice(&body);
            self.out.raw(&frame);
            return;
        }
        let msg = Message::from(Notification::new(
            "textDocument/publishDiagnostics".to_owned(),
            params,
        ));
        let slow = self.opts.modes.slow_publish.unwrap_or_default();
        self.send_after(delay + slow, msg);
    }

    /// Every name a `def` line introduces: open documents as they are in memory, the
    /// other `.fake` files under the root as they are on disk now.
    fn defined_names(&self) -> HashSet<String> {
        let mut texts: Vec<String> = self.docs.values().map(|doc| doc.text.clone()).collect();
        if let Some(root) = &self.root {
            let mut files = Vec::new();
            fake_files(root, &mut files);
            texts.extend(
                files
                    .into_iter()
                    .filter(|path| !self.docs.contains_key(path))
                    .filter_map(|path| fs::read_to_string(path).ok()),
            );
        }
        texts
            .iter()
            .flat_map(|text| text.lines())
            .filter_map(|line| keyword_arg(line, "def"))
            .map(str::to_owned)
            .collect()
    }
}

fn fake_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && !name.to_string_lossy().starts_with('.') && name != "target" {
            fake_files(&path, files);
        } else if kind.is_file() && path.extension().is_some_and(|ext| ext == "fake") {
            files.push(path);
        }
    }
}

/// `NAME` of a line `KEYWORD NAME`.
fn keyword_arg<'a>(line: &'a str, keyword: &str) -> Option<&'a str> {
    let name = line.trim().strip_prefix(keyword)?.strip_prefix(' ')?.trim();
    (!name.is_empty()).then_some(name)
}

fn diagnostics(text: &str, defs: &HashSet<String>) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let end: usize = line.chars().map(char::len_utf16).sum();
        let range =
            json!({"start": {"line": i, "character": 0}, "end": {"line": i, "character": end}});
        let mut add = |severity: u8, code: &str, message: String| {
            out.push(json!({"range": range, "severity": severity, "code": code, "source": "fake", "message": message}));
        };
        for (word, severity, code, default) in
            [("ERROR", 1, "E1", "error"), ("WARN", 2, "W1", "warning")]
        {
            if let Some(at) = line.find(word) {
                let rest = line[at + word.len()..].trim();
                add(
                    severity,
                    code,
                    if rest.is_empty() {
                        default.to_owned()
                    } else {
                        rest.to_owned()
                    },
                );
            }
        }
        if let Some(name) = keyword_arg(line, "use").filter(|name| !defs.contains(*name)) {
            add(1, "E2", format!("unknown name {name}"));
        }
    }
    out
}

/// The command typescript-language-server passes on to tsserver (`tsserver`).
const TSSERVER_REQUEST: &str = "typescript.tsserverRequest";

/// tsserver's `semanticDiagnosticsSync` body for `text` (`tsserver`): each `ERROR` and
/// `WARN` from the word to the end of its line, 1-based, offsets in UTF-16 units.
fn tsserver_diagnostics(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let utf16 = |s: &str| s.chars().map(char::len_utf16).sum::<usize>();
        for (word, category, code, default) in [
            ("ERROR", "error", 1001, "error"),
            ("WARN", "warning", 6133, "warning"),
        ] {
            if let Some(at) = line.find(word) {
                let rest = line[at + word.len()..].trim();
                out.push(json!({
                    "start": {"line": i + 1, "offset": utf16(&line[..at]) + 1},
                    "end": {"line": i + 1, "offset": utf16(line) + 1},
                    "text": if rest.is_empty() { default } else { rest },
                    "code": code,
                    "category": category,
                }));
            }
        }
    }
    out
}

fn path_of(uri: &str) -> Option<PathBuf> {
    Url::parse(uri).ok()?.to_file_path().ok()
}

fn root_of(params: &Value) -> Option<PathBuf> {
    let uri = params["workspaceFolders"][0]["uri"]
        .as_str()
        .or(params["rootUri"].as_str());
    match uri {
        Some(uri) => path_of(uri),
        None => params["rootPath"].as_str().map(PathBuf::from),
    }
    .or_else(|| env::current_dir().ok())
}
