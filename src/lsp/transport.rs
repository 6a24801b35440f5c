//! The transport: a language server process and the threads that move its messages.
//!
//! One reader thread per server parses frames from the server's stdout into
//! [`Incoming`] events on a channel shared by every server of a pool; one writer
//! thread drains an unbounded channel into its stdin, so a server that stops reading
//! can never block the caller; one thread keeps the tail of its stderr.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

use crossbeam_channel::{Receiver, Sender};
use lsp_server::Message;

/// Messages larger than this are skipped, not buffered: a server that sends a
/// 100 MiB frame must not take the CLI's memory with it.
pub const MAX_FRAME: usize = 64 * 1024 * 1024;

/// Messages whose parsed form would take more than this are skipped too. Parsed JSON
/// is far larger than its text: serde_json's `Value` is 32 bytes an element (more
/// with a growing vector's slack), and an object's map a B-tree node of over 600
/// bytes, so a body of tiny objects (`[{"a":0},{"a":0},...]`) under [`MAX_FRAME`]
/// would take gigabytes. Real messages stay far below it: a publish of 10,000
/// diagnostics is estimated at about 30 MiB.
pub const MAX_PARSED: usize = 96 * 1024 * 1024;

/// How many stderr lines of a server are kept for the report of a crash.
const STDERR_TAIL: usize = 20;

/// What a reader thread hands to the pool.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A frame or line that is not a valid LSP message; the stream goes on.
    Garbage(String),
    /// A `textDocument/publishDiagnostics` too large to read (over [`MAX_FRAME`] or
    /// [`MAX_PARSED`]), skipped. The file's diagnostics are unknown from then on,
    /// until a publish that can be read.
    SkippedPublish(Skipped),
    /// The server's stdout closed (it exited or crashed).
    Closed,
}

/// A publish skipped unread, as far as its text tells without parsing it.
#[derive(Debug)]
pub struct Skipped {
    pub uri: String,
    /// `params.version`, when the text holds it where it was looked for.
    pub version: Option<i64>,
    pub why: String,
}

/// A running server process and its I/O threads, or an in-memory peer for tests.
pub struct Transport {
    /// `None` for an in-memory transport ([`Transport::memory`]).
    child: Option<Child>,
    writer: Sender<Message>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

/// The server's end of an in-memory transport: what the client sent, and a way to
/// answer. Dropping it is the server exiting (the pool sees its stream close).
pub struct MemoryPeer {
    index: usize,
    events: Sender<(usize, Incoming)>,
    pub received: Receiver<Message>,
}

impl MemoryPeer {
    /// Send `msg` to the client as the server would.
    pub fn send(&self, msg: Message) {
        let _ = self.events.send((self.index, Incoming::Message(msg)));
    }
}

impl MemoryPeer {
    /// Tell the client what its reader would of a publish too large to read.
    pub fn send_skipped(&self, skipped: Skipped) {
        let _ = self
            .events
            .send((self.index, Incoming::SkippedPublish(skipped)));
    }
}

impl Drop for MemoryPeer {
    fn drop(&mut self) {
        let _ = self.events.send((self.index, Incoming::Closed));
    }
}

impl Transport {
    /// Start `command` in `cwd` without a shell, with `env` added to its environment.
    /// Every message it sends arrives on `events` tagged with `index`.
    pub fn spawn(
        command: &Path,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
        index: usize,
        events: Sender<(usize, Incoming)>,
    ) -> io::Result<Transport> {
        let mut child = Command::new(command)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout"))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("no stdin"))?;
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| io::Error::other("no stderr"))?;

        thread::Builder::new()
            .name("lsp-reader".into())
            .spawn(move || {
                let mut reader = BufReader::with_capacity(64 * 1024, stdout);
                loop {
                    match read_frame(&mut reader) {
                        Ok(Some(Frame::Message(m))) => {
                            trace("<-", &m);
                            if events.send((index, Incoming::Message(m))).is_err() {
                                return;
                            }
                        }
                        Ok(Some(Frame::Garbage(g))) => {
                            if events.send((index, Incoming::Garbage(g))).is_err() {
                                return;
                            }
                        }
                        Ok(Some(Frame::SkippedPublish(skipped))) => {
                            let skipped = Incoming::SkippedPublish(skipped);
                            if events.send((index, skipped)).is_err() {
                                return;
                            }
                        }
                        Ok(None) | Err(_) => {
                            let _ = events.send((index, Incoming::Closed));
                            return;
                        }
                    }
                }
            })?;

        let (writer, outbox) = crossbeam_channel::unbounded::<Message>();
        thread::Builder::new()
            .name("lsp-writer".into())
            .spawn(move || write_loop(stdin, outbox))?;

        let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
        let tail = Arc::clone(&stderr_tail);
        thread::Builder::new()
            .name("lsp-stderr".into())
            .spawn(move || {
                // Drained continuously: a piped stderr nobody reads blocks the server
                // once the pipe fills.
                let mut lines = BufReader::new(stderr);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match lines.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {
                            let line = String::from_utf8_lossy(&buf).trim_end().to_string();
                            if line.is_empty() {
                                continue;
                            }
                            if let Ok(mut t) = tail.lock() {
                                if t.len() == STDERR_TAIL {
                                    t.pop_front();
                                }
                                let mut line = line;
                                truncate_chars(&mut line, 500);
                                t.push_back(line);
                            }
                        }
                    }
                }
            })?;

        Ok(Transport {
            child: Some(child),
            writer,
            stderr_tail,
        })
    }

    /// A transport to a server played by the caller, in memory: the rules that read
    /// what servers say can be tested message by message, as `lsp_server`'s
    /// `Connection::memory` allows for servers. Use this for testing.
    pub fn memory(index: usize, events: Sender<(usize, Incoming)>) -> (Transport, MemoryPeer) {
        let (writer, received) = crossbeam_channel::unbounded::<Message>();
        let transport = Transport {
            child: None,
            writer,
            stderr_tail: Arc::default(),
        };
        let peer = MemoryPeer {
            index,
            events,
            received,
        };
        (transport, peer)
    }

    /// Queue a message; never blocks.
    pub fn send(&self, msg: Message) {
        let _ = self.writer.send(msg);
    }

    /// The server's process id; 0 for an in-memory server.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// The last lines the server wrote to stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The exit status, if the process has exited.
    pub fn try_exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// Wait for the process to exit until `deadline`, then kill it. Always reaps.
    pub fn finish(&mut self, deadline: std::time::Instant) {
        let Some(child) = &mut self.child else { return };
        loop {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            if std::time::Instant::now() >= deadline {
                break;
            }
            // Polling a child's exit has no blocking-with-timeout form in std.
            thread::sleep(std::time::Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Transport {
    fn drop(&mut self) {
        // No orphan servers, whatever path led here.
        if let Some(child) = &mut self.child
            && let Ok(None) = child.try_wait()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn write_loop(mut stdin: ChildStdin, outbox: Receiver<Message>) {
    for msg in outbox {
        trace("->", &msg);
        if msg.write(&mut stdin).is_err() {
            return;
        }
        let _ = stdin.flush();
    }
}

enum Frame {
    Message(Message),
    Garbage(String),
    SkippedPublish(Skipped),
}

/// Read every frame of `input` the way a server's reader thread does, until the
/// stream ends or fails; returns how many messages and how many garbage reports it
/// gave. Public only for the fuzz targets (`fuzz/`) and the property tests of
/// `tests/reliability.rs`: the reader itself stays private.
#[doc(hidden)]
pub fn fuzz_frames(input: &[u8]) -> (usize, usize) {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let (mut messages, mut garbage) = (0, 0);
    while let Ok(Some(frame)) = read_frame(&mut reader) {
        match frame {
            Frame::Message(_) => messages += 1,
            Frame::Garbage(_) | Frame::SkippedPublish(_) => garbage += 1,
        }
    }
    (messages, garbage)
}

/// Read one frame. Lenient where servers are sloppy: lines that are not headers
/// (wrapper scripts and some servers log to stdout) are skipped and reported as
/// garbage, unknown headers are ignored, and a body that is not a valid message is
/// reported without ending the stream. `lsp_server::Message::read` would fail the
/// whole stream on the first such line, so the framing of input is ours.
fn read_frame(r: &mut impl BufRead) -> io::Result<Option<Frame>> {
    let mut length: Option<usize> = None;
    let mut skipped = String::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = r.take(64 * 1024).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if let Some(len) = length {
                return read_body(r, len).map(Some);
            }
            continue;
        }
        match text.split_once(':') {
            Some((name, value)) if name.eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    // Bounded like the stray lines below: a stream of bad headers
                    // must not grow this string for as long as it lasts.
                    Err(_) if skipped.len() < 200 => skipped.push_str(text),
                    Err(_) => {}
                }
            }
            Some((name, _)) if name.eq_ignore_ascii_case("content-type") => {}
            _ => {
                // Not a header: a stray log line. Report it (bounded) and go on.
                if skipped.len() < 200 {
                    skipped.push_str(text);
                }
                if length.is_none() {
                    let mut g = std::mem::take(&mut skipped);
                    truncate_chars(&mut g, 200);
                    return Ok(Some(Frame::Garbage(format!("non-LSP output: {g}"))));
                }
            }
        }
    }
}

fn read_body(r: &mut impl BufRead, len: usize) -> io::Result<Frame> {
    if len > MAX_FRAME {
        // Its start is kept, to tell what it was: a publish names its file first.
        let mut head = Vec::new();
        r.by_ref()
            .take(HEAD.min(len) as u64)
            .read_to_end(&mut head)?;
        io::copy(&mut r.take((len - head.len()) as u64), &mut io::sink())?;
        return Ok(skipped(
            &head,
            format!("skipped a {len}-byte message (over the {MAX_FRAME}-byte cap)"),
        ));
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body)?;
    let cost = parsed_cost(&body);
    if cost > MAX_PARSED {
        return Ok(skipped(
            &body,
            format!(
                "skipped a {len}-byte message (about {} MiB once parsed, over the {} MiB cap)",
                cost / (1024 * 1024),
                MAX_PARSED / (1024 * 1024)
            ),
        ));
    }
    match serde_json::from_slice::<Message>(&body) {
        Ok(m) => Ok(Frame::Message(m)),
        // Servers quote source text in their messages, and a file that is not UTF-8
        // gives them invalid bytes to quote: keep the message, those bytes shown as
        // U+FFFD, rather than lose a publish over one character.
        Err(_) if std::str::from_utf8(&body).is_err() => {
            match serde_json::from_str::<Message>(&String::from_utf8_lossy(&body)) {
                Ok(m) => Ok(Frame::Message(m)),
                Err(e) => Ok(garbage(&body, &e)),
            }
        }
        Err(e) => Ok(garbage(&body, &e)),
    }
}

/// How much of a message over [`MAX_FRAME`] is kept to tell what it was.
const HEAD: usize = 64 * 1024;

/// A message too large to read, `why`: a publish for a file when its start says so
/// (the wait must learn that the file's diagnostics came and cannot be known), else
/// garbage to log.
fn skipped(head: &[u8], why: String) -> Frame {
    match probe(head) {
        Probe {
            method: Some(method),
            uri: Some(uri),
            version,
        } if method == "textDocument/publishDiagnostics" => {
            Frame::SkippedPublish(Skipped { uri, version, why })
        }
        _ => Frame::Garbage(why),
    }
}

/// What [`probe`] found.
#[derive(Debug, Default, PartialEq)]
struct Probe {
    method: Option<String>,
    uri: Option<String>,
    version: Option<i64>,
}

/// The `method`, `params.uri` and `params.version` of a message, read from its start
/// (`head`) without parsing it (`json_prefix`). `None` for what `head` does not hold.
fn probe(head: &[u8]) -> Probe {
    let [method, uri, version] = crate::json_prefix::scalars_in_head(
        head,
        [&["method"], &["params", "uri"], &["params", "version"]],
    );
    let text = |v: Option<serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => Some(s),
        _ => None,
    };
    Probe {
        method: text(method),
        uri: text(uri),
        version: version.and_then(|v| v.as_i64()),
    }
}

/// Cut `text` to at most `max` bytes, at a character boundary. `String::truncate`
/// panics inside a character, and what servers print is any text at all: a log line
/// of Chinese, or bytes made into U+FFFD, would have killed the reader thread.
fn truncate_chars(text: &mut String, max: usize) {
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
}

fn garbage(body: &[u8], e: &serde_json::Error) -> Frame {
    let mut head = String::from_utf8_lossy(&body[..body.len().min(120)]).to_string();
    truncate_chars(&mut head, 120);
    Frame::Garbage(format!("invalid message ({e}): {head}"))
}

/// An estimate, in bytes, of the memory `body` takes once parsed into JSON values
/// (see [`MAX_PARSED`]): its text (strings are copied), plus a map node per object
/// and a value slot per array element or object entry, counted from the structure
/// outside strings. One pass, no allocation.
fn parsed_cost(body: &[u8]) -> usize {
    const OBJECT: usize = 640;
    const SLOT: usize = 64;
    let mut cost = body.len();
    let (mut in_string, mut escaped) = (false, false);
    for &b in body {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' => cost += OBJECT,
                b'[' | b',' => cost += SLOT,
                _ => {}
            }
        }
    }
    cost
}

/// With `LSPGATE_TRACE=FILE`, every message in both directions is appended to FILE
/// (for debugging a server's behaviour; off by default).
fn trace(dir: &str, msg: &Message) {
    use std::sync::OnceLock;
    static FILE: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    let file = FILE.get_or_init(|| {
        let path = std::env::var_os("LSPGATE_TRACE")?;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(Mutex::new)
    });
    if let Some(f) = file
        && let Ok(mut f) = f.lock()
    {
        let text = serde_json::to_string(msg).unwrap_or_default();
        let mut text = text;
        truncate_chars(&mut text, 64 * 1024);
        let _ = writeln!(
            f,
            "{:?} {dir} {text}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis()
                % 100_000
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<String> {
        let mut r = io::Cursor::new(input.to_vec());
        let mut out = Vec::new();
        while let Ok(Some(f)) = read_frame(&mut r) {
            out.push(match f {
                Frame::Message(Message::Notification(n)) => format!("note {}", n.method),
                Frame::Message(m) => format!("msg {m:?}"),
                Frame::Garbage(g) => format!("garbage {g}"),
                Frame::SkippedPublish(Skipped { uri, version, why }) => {
                    format!("skipped publish {uri} {version:?}: {why}")
                }
            });
        }
        out
    }

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    #[test]
    fn skips_log_lines_between_frames() {
        let mut input = b"Starting server...\n".to_vec();
        input.extend(frame(r#"{"jsonrpc":"2.0","method":"a/b","params":null}"#));
        let got = frames(&input);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].starts_with("garbage non-LSP output: Starting server"));
        assert_eq!(got[1], "note a/b");
    }

    #[test]
    fn invalid_json_body_does_not_end_the_stream() {
        let mut input = frame("{not json");
        input.extend(frame(r#"{"jsonrpc":"2.0","method":"x","params":{}}"#));
        input.extend(frame(
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#,
        ));
        let got = frames(&input);
        assert!(got[0].starts_with("garbage invalid message"), "{got:?}");
        assert_eq!(got[1], "note x");
        assert!(got[2].starts_with("garbage"), "{got:?}");
    }

    #[test]
    fn oversized_frame_is_skipped() {
        let mut input = format!("Content-Length: {}\r\n\r\n", MAX_FRAME + 1).into_bytes();
        input.extend(std::iter::repeat_n(b'x', MAX_FRAME + 1));
        input.extend(frame(r#"{"jsonrpc":"2.0","method":"after","params":null}"#));
        let got = frames(&input);
        assert!(got[0].contains("cap"), "{got:?}");
        assert_eq!(got[1], "note after");
    }

    #[test]
    fn invalid_utf8_in_a_body_keeps_the_message() {
        let body = b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"t\":\"a\xffb\"}}";
        let mut input = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        input.extend_from_slice(body);
        let mut r = io::Cursor::new(input);
        match read_frame(&mut r) {
            Ok(Some(Frame::Message(Message::Notification(n)))) => {
                assert_eq!(n.params["t"], "a\u{fffd}b");
            }
            _ => panic!("the message was lost"),
        }
    }

    #[test]
    fn a_body_that_explodes_when_parsed_is_skipped() {
        let items = MAX_PARSED / 640 + 1;
        let body = format!(
            r#"{{"jsonrpc":"2.0","method":"w","params":[{}{{}}]}}"#,
            "{},".repeat(items)
        );
        assert!(body.len() < MAX_FRAME / 8, "small as text");
        let mut input = frame(&body);
        input.extend(frame(r#"{"jsonrpc":"2.0","method":"after","params":null}"#));
        let got = frames(&input);
        assert!(got[0].contains("once parsed"), "{got:?}");
        assert_eq!(got[1], "note after");
        // Strings are copied, not expanded: braces inside one cost nothing extra.
        let quoted = format!(r#""{}""#, "{".repeat(1000));
        assert_eq!(parsed_cost(quoted.as_bytes()), quoted.len());
        assert_eq!(parsed_cost(br#""\"{""#), 5);
    }

    #[test]
    fn a_publish_too_large_to_read_is_told_by_its_file() {
        let uri = "file:///w/a%20b.py";
        let items = MAX_PARSED / 640 + 1;
        let many = format!("[{}{{}}]", "{},".repeat(items));
        let publish = |params: String| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{params}}}"#
            )
        };
        // Over the parsed cap, the file named before or after the list.
        for params in [
            format!(r#"{{"uri":"{uri}","version":3,"diagnostics":{many}}}"#),
            format!(r#"{{"diagnostics":{many},"uri":"{uri}","version":3}}"#),
        ] {
            let got = frames(&frame(&publish(params)));
            assert_eq!(got.len(), 1, "{got:?}");
            assert!(
                got[0].starts_with(&format!("skipped publish {uri} Some(3): skipped a")),
                "{got:?}"
            );
            assert!(got[0].contains("once parsed"), "{got:?}");
        }
        // Over the frame cap: its start names the file.
        let head = format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{{"uri":"{uri}","diagnostics":[{{"message":""#
        );
        let mut input = format!("Content-Length: {}\r\n\r\n{head}", MAX_FRAME + 1).into_bytes();
        input.extend(std::iter::repeat_n(b'x', MAX_FRAME + 1 - head.len()));
        input.extend(frame(r#"{"jsonrpc":"2.0","method":"after","params":null}"#));
        let got = frames(&input);
        assert!(
            got[0].starts_with(&format!("skipped publish {uri} None: ")),
            "{got:?}"
        );
        assert!(got[0].contains("cap"), "{got:?}");
        assert_eq!(got[1], "note after");
        // Another method, or a uri that is not params.uri, is not a publish's.
        let probed = |method: Option<&str>, uri: Option<&str>, version| Probe {
            method: method.map(str::to_owned),
            uri: uri.map(str::to_owned),
            version,
        };
        assert_eq!(
            probe(br#"{"method":"x","params":{"d":{"uri":"file:///n","version":1},"uri":"file:///y","version":-2}}"#),
            probed(Some("x"), Some("file:///y"), Some(-2))
        );
        assert_eq!(
            probe(br#"{"params":{"uri":"file:///a\"b"},"id":1,"result":{"method":"m"}}"#),
            probed(None, Some("file:///a\"b"), None)
        );
        // A number cut by the end of the head is not taken.
        assert_eq!(
            probe(br#"{"params":{"version":12"#),
            probed(None, None, None)
        );
    }

    #[test]
    fn long_non_ascii_lines_are_cut_at_a_character() {
        // 199 ASCII bytes, then a two-byte character across the 200-byte cut.
        let mut input = "x".repeat(199).into_bytes();
        input.extend("é and more\n".as_bytes());
        input.extend(b"\xff".repeat(300));
        input.extend(b"\n");
        input.extend(frame(r#"{"jsonrpc":"2.0","method":"after","params":null}"#));
        let got = frames(&input);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[2], "note after");
        let mut text = "ab€".to_string();
        truncate_chars(&mut text, 3);
        assert_eq!(text, "ab");
    }

    #[test]
    fn content_type_header_is_ignored() {
        let body = r#"{"jsonrpc":"2.0","method":"t","params":null}"#;
        let input = format!(
            "Content-Length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{body}",
            body.len()
        );
        assert_eq!(frames(input.as_bytes()), vec!["note t".to_string()]);
    }
}
