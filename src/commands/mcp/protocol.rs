//! JSON-RPC 2.0 over MCP's stdio transport: one message per line, UTF-8, on stdin
//! (from the client) and stdout (to it).
//!
//! Written here rather than taken from the official Rust SDK (`rmcp`), which is built
//! on tokio: lspgate is synchronous (threads and crossbeam channels, no async runtime),
//! and what a stdio server needs of MCP's transport is small: read lines, parse them,
//! write lines. As in `lsp-server`, a [`Connection`] is a pair of channels. A reader
//! thread turns stdin's lines into [`Incoming`] messages, and a writer thread, the one
//! place in `lspgate mcp` that writes to stdout, writes each frame it is sent as one
//! line. Methods and their meaning are the session's (`super`), not this file's.
//!
//! Lenient in what it takes: blank lines and a `\r` before the newline are passed over,
//! and responses (lspgate sends no requests, so none is awaited) are dropped. Batches
//! (a JSON array; in the 2025-03-26 revision only) are answered with one error.

use std::io::{self, BufRead, Write};
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use serde::Serialize;
use serde_json::Value;

/// The line is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON, but not a JSON-RPC request or notification (or not one this server takes now).
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// Lines longer than this are skipped to their end and answered with an error rather
/// than buffered: a `write` of a large file fits many times over.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// The capacity of the line buffer kept between lines.
const KEPT_LINE: usize = 1024 * 1024;

/// What a line from the client holds.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// `id` is a string or a number.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// A response to a request of ours. lspgate sends none, so it is dropped.
    Response,
    /// Not a message this server can take: the error to answer with. `id` is the
    /// line's when it had a usable one, else `null`.
    Invalid {
        id: Value,
        code: i64,
        message: String,
    },
}

/// Parse one line (without its newline).
pub fn parse(line: &[u8]) -> Incoming {
    let invalid = |id: Value, code, message: &str| Incoming::Invalid {
        id,
        code,
        message: message.to_owned(),
    };
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => return invalid(Value::Null, PARSE_ERROR, &format!("parse error: {e}")),
    };
    let mut map = match value {
        Value::Object(map) => map,
        Value::Array(_) => {
            return invalid(
                Value::Null,
                INVALID_REQUEST,
                "batches are not supported: send one message a line",
            );
        }
        _ => return invalid(Value::Null, INVALID_REQUEST, "not a JSON-RPC message"),
    };
    // An id that is neither a string nor a number cannot be answered by it.
    let id = match map.remove("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
        Some(_) => {
            return invalid(
                Value::Null,
                INVALID_REQUEST,
                "id must be a string or a number",
            );
        }
    };
    let reply_to = id.clone().unwrap_or(Value::Null);
    if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(reply_to, INVALID_REQUEST, "jsonrpc must be \"2.0\"");
    }
    let method = match map.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => return invalid(reply_to, INVALID_REQUEST, "method must be a string"),
        None if id.is_some() && (map.contains_key("result") || map.contains_key("error")) => {
            return Incoming::Response;
        }
        None => return invalid(reply_to, INVALID_REQUEST, "no method"),
    };
    let params = map.remove("params").unwrap_or(Value::Null);
    if !matches!(params, Value::Object(_) | Value::Array(_) | Value::Null) {
        return invalid(
            reply_to,
            INVALID_REQUEST,
            "params must be an object or an array",
        );
    }
    match id {
        Some(id) => Incoming::Request { id, method, params },
        None => Incoming::Notification { method, params },
    }
}

#[derive(Serialize)]
struct Response<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: T,
}

#[derive(Serialize)]
struct ErrorResponse<'a> {
    jsonrpc: &'static str,
    id: &'a Value,
    error: ErrorObject<'a>,
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    code: i64,
    message: &'a str,
}

#[derive(Serialize)]
struct Notification<'a, T: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    params: T,
}

/// The frame answering request `id` with `result`.
pub fn response(id: &Value, result: &impl Serialize) -> String {
    frame(&Response {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// The frame answering request `id` (`null` when it could not be read) with an error.
pub fn error(id: &Value, code: i64, message: &str) -> String {
    frame(&ErrorResponse {
        jsonrpc: "2.0",
        id,
        error: ErrorObject { code, message },
    })
}

pub fn notification(method: &str, params: &impl Serialize) -> String {
    frame(&Notification {
        jsonrpc: "2.0",
        method,
        params,
    })
}

/// One line of JSON. serde_json escapes the line breaks inside strings, so a frame is
/// never split; serialising these types (strings, numbers, maps with string keys)
/// cannot fail, and an internal error frame stands in should it ever.
fn frame(message: &impl Serialize) -> String {
    serde_json::to_string(message).unwrap_or_else(|e| {
        format!(
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32603,"message":{}}}}}"#,
            Value::String(format!("lspgate could not encode its answer: {e}"))
        )
    })
}

/// The two channels of a connection, and the writer thread behind the second.
pub struct Connection {
    /// The client's messages; disconnected once stdin is closed.
    pub receiver: Receiver<Incoming>,
    /// Frames to write. Sending fails once stdout is gone (the client stopped reading).
    pub sender: Sender<String>,
    written: Receiver<()>,
}

/// A connection on this process's stdin and stdout.
pub fn stdio() -> io::Result<Connection> {
    connect(io::stdin(), io::stdout())
}

/// A connection on any reader and writer (the tests use pipes in memory).
pub fn connect(
    input: impl io::Read + Send + 'static,
    output: impl Write + Send + 'static,
) -> io::Result<Connection> {
    let (incoming, receiver) = crossbeam_channel::unbounded();
    thread::Builder::new()
        .name("mcp-reader".into())
        .spawn(move || read_loop(io::BufReader::new(input), &incoming))?;
    let (sender, outbox) = crossbeam_channel::unbounded::<String>();
    let (done, written) = crossbeam_channel::bounded(1);
    thread::Builder::new()
        .name("mcp-writer".into())
        .spawn(move || {
            write_loop(output, &outbox);
            let _ = done.send(());
        })?;
    Ok(Connection {
        receiver,
        sender,
        written,
    })
}

impl Connection {
    /// Stop writing: the frames sent before are written (a client that closed stdin may
    /// still read the answers to what it sent before it did), waiting at most `bound`
    /// for a client that does not read; frames other threads send later are dropped.
    pub fn close(self, bound: Duration) {
        // The empty frame is the writer's last; no message is empty.
        let _ = self.sender.send(String::new());
        let _ = self.written.recv_timeout(bound);
    }
}

fn read_loop(mut input: impl BufRead, incoming: &Sender<Incoming>) {
    let mut line = Vec::new();
    loop {
        let message = match read_line(&mut input, &mut line, MAX_LINE) {
            Ok(Line::Eof) | Err(_) => return,
            Ok(Line::TooLong { tail }) => Incoming::Invalid {
                // Answered by its id when the line's ends tell it: a client waits on
                // that id, and would wait for ever on an answer to `null`.
                id: oversized_id(&line, &tail),
                code: INVALID_REQUEST,
                message: format!(
                    "message longer than {MAX_LINE} bytes ({} MiB), skipped: write or patch a \
                     file this large with the lspgate CLI",
                    MAX_LINE / (1024 * 1024)
                ),
            },
            Ok(Line::Text) => {
                let text = line.strip_suffix(b"\r").unwrap_or(&line);
                if text.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                parse(text)
            }
        };
        if incoming.send(message).is_err() {
            return;
        }
        // A long line's buffer is not kept for the session's life.
        if line.capacity() > KEPT_LINE {
            line = Vec::new();
        }
    }
}

fn write_loop(mut output: impl Write, outbox: &Receiver<String>) {
    for frame in outbox {
        if frame.is_empty() {
            // [`Connection::close`].
            return;
        }
        let written = output
            .write_all(frame.as_bytes())
            .and_then(|()| output.write_all(b"\n"))
            .and_then(|()| output.flush());
        if written.is_err() {
            // The client closed stdout: dropping the outbox makes every send fail.
            return;
        }
    }
}

enum Line {
    /// `buf` holds a line, without its newline.
    Text,
    /// A line longer than the bound was read past and dropped: `buf` holds its first
    /// [`ENDS`] bytes, `tail` its last ones, where its id may be read.
    TooLong {
        tail: Vec<u8>,
    },
    Eof,
}

/// How much of each end of a line too long to take is kept, to answer it by its id.
const ENDS: usize = 64 * 1024;

/// The next line into `buf` (its `\n` removed), never holding more than `max` bytes
/// of it; a last line without a newline counts.
fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    buf.clear();
    let mut tail: Option<Vec<u8>> = None;
    let mut any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match (any, tail) {
                (false, _) => Line::Eof,
                (true, Some(tail)) => Line::TooLong { tail },
                (true, None) => Line::Text,
            });
        }
        any = true;
        let (chunk, newline) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], Some(at)),
            None => (available, None),
        };
        match &mut tail {
            Some(tail) => {
                tail.extend_from_slice(chunk);
                if tail.len() > 2 * ENDS {
                    tail.drain(..tail.len() - ENDS);
                }
            }
            None if buf.len() + chunk.len() > max => {
                // From here on, only the line's two ends are kept.
                let mut end = buf[buf.len().saturating_sub(ENDS)..].to_vec();
                end.extend_from_slice(chunk);
                buf.truncate(ENDS);
                buf.shrink_to_fit();
                tail = Some(end);
            }
            None => buf.extend_from_slice(chunk),
        }
        let used = newline.map_or(available.len(), |at| at + 1);
        input.consume(used);
        if newline.is_some() {
            return Ok(match tail {
                Some(tail) => Line::TooLong { tail },
                None => Line::Text,
            });
        }
    }
}

/// The id of a line too long to parse, read from its first bytes (`head`) or its last
/// (`tail`) without parsing the rest: a string or number member `id` of the top-level
/// object, found before the head ends, or the object's last member. `null` when
/// neither holds one.
fn oversized_id(head: &[u8], tail: &[u8]) -> Value {
    id_in_head(head)
        .or_else(|| id_at_end(tail))
        .unwrap_or(Value::Null)
}

/// The `id` member of the top-level object, read from the line's start
/// (`json_prefix`).
fn id_in_head(head: &[u8]) -> Option<Value> {
    let [id] = crate::json_prefix::scalars_in_head(head, [&["id"]]);
    id
}

/// The id when it is the top-level object's last member: the line ends
/// `, "id": VALUE }`.
fn id_at_end(tail: &[u8]) -> Option<Value> {
    let trimmed = tail.trim_ascii_end();
    let body = trimmed.strip_suffix(b"}")?.trim_ascii_end();
    let start = match body.last()? {
        b'"' => {
            // Back to the quote that opens the string: one not escaped.
            let mut at = body.len() - 1;
            loop {
                at = body[..at].iter().rposition(|&b| b == b'"')?;
                let slashes = body[..at].iter().rev().take_while(|&&b| b == b'\\').count();
                if slashes % 2 == 0 {
                    break at;
                }
            }
        }
        _ => {
            let digits = body
                .iter()
                .rev()
                .take_while(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
                .count();
            body.len()
                .checked_sub(digits)
                .filter(|&at| at < body.len())?
        }
    };
    let value = crate::json_prefix::scalar_at(body, start, true)?;
    let before = body[..start]
        .trim_ascii_end()
        .strip_suffix(b":")?
        .trim_ascii_end();
    let before = before.strip_suffix(b"\"id\"")?;
    matches!(before.trim_ascii_end().last(), Some(b',' | b'{')).then_some(value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(id: Value, method: &str) -> Incoming {
        Incoming::Request {
            id,
            method: method.into(),
            params: Value::Null,
        }
    }

    #[test]
    fn requests_notifications_and_responses() {
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            request(json!(1), "ping")
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}"#),
            Incoming::Request {
                id: json!("a"),
                method: "tools/list".into(),
                params: json!({})
            }
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Notification {
                method: "notifications/initialized".into(),
                params: Value::Null
            }
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            Incoming::Response
        );
    }

    fn error_of(line: &[u8]) -> (Value, i64) {
        match parse(line) {
            Incoming::Invalid { id, code, .. } => (id, code),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn what_is_not_a_message_gets_the_error_jsonrpc_names() {
        assert_eq!(error_of(b"{not json"), (Value::Null, PARSE_ERROR));
        assert_eq!(error_of(b"\xff\xfe"), (Value::Null, PARSE_ERROR));
        assert_eq!(error_of(b"[]"), (Value::Null, INVALID_REQUEST));
        assert_eq!(error_of(b"42"), (Value::Null, INVALID_REQUEST));
        assert_eq!(
            error_of(br#"{"id":3,"method":"ping"}"#),
            (json!(3), INVALID_REQUEST)
        );
        assert_eq!(
            error_of(br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#),
            (Value::Null, INVALID_REQUEST)
        );
        assert_eq!(
            error_of(br#"{"jsonrpc":"2.0","id":4,"method":"x","params":3}"#),
            (json!(4), INVALID_REQUEST)
        );
        assert_eq!(
            error_of(br#"{"jsonrpc":"2.0","id":5}"#),
            (json!(5), INVALID_REQUEST)
        );
    }

    #[test]
    fn frames_are_one_line() {
        let frame = response(&json!(1), &json!({"text": "a\nb"}));
        assert!(!frame.contains('\n'), "{frame}");
        assert_eq!(
            serde_json::from_str::<Value>(&frame).expect("JSON"),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"text": "a\nb"}})
        );
        assert_eq!(
            serde_json::from_str::<Value>(&error(&Value::Null, PARSE_ERROR, "bad")).expect("JSON"),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "bad"}})
        );
    }

    fn lines(input: &[u8], max: usize) -> Vec<Result<String, &'static str>> {
        let mut reader = io::BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, &mut buf, max).expect("read from a slice") {
                Line::Eof => return out,
                Line::TooLong { .. } => out.push(Err("too long")),
                Line::Text => out.push(Ok(String::from_utf8_lossy(&buf).into_owned())),
            }
        }
    }

    #[test]
    fn a_line_too_long_is_answered_by_its_id_when_an_end_holds_it() {
        let big = format!(r#""{}""#, "x\\\"id\\\": 9 ".repeat(1000));
        let line = |text: String| {
            let mut reader = io::BufReader::with_capacity(64, text.as_bytes());
            let mut buf = Vec::new();
            match read_line(&mut reader, &mut buf, 1000).expect("read") {
                Line::TooLong { tail } => oversized_id(&buf, &tail),
                _ => panic!("not too long: {text}"),
            }
        };
        let call = |before: &str, after: &str| {
            line(format!(
                r#"{{{before}"method":"tools/call","params":{{"content":{big}}}{after}}}"#
            ))
        };
        assert_eq!(call(r#""jsonrpc":"2.0","id":7,"#, ""), json!(7));
        assert_eq!(call(r#" "id" : "a\"b", "#, ""), json!("a\"b"));
        assert_eq!(call("", r#","id":-12 "#), json!(-12));
        assert_eq!(call("", r#", "id": "last""#), json!("last"));
        // Quoted inside the content, or nested, it is not the request's id.
        assert_eq!(call(r#""x":{"id":3},"#, ""), Value::Null);
        assert_eq!(call("", ""), Value::Null);
        assert_eq!(call("", r#","id":{"a":1}"#), Value::Null);
        // An id after the head and before the end cannot be read cheaply.
        assert_eq!(
            line(format!(r#"{{"params":{big},"id":5,"jsonrpc":"2.0"}}"#)),
            Value::Null
        );
        // A number cut by the end of the head is not taken.
        assert_eq!(id_in_head(br#"{"id":12"#), None);
    }

    #[test]
    fn lines_are_bounded_and_the_last_needs_no_newline() {
        assert_eq!(
            lines(b"ab\n0123456789\ncd\nlast", 8),
            [
                Ok("ab".to_owned()),
                Err("too long"),
                Ok("cd".to_owned()),
                Ok("last".to_owned())
            ]
        );
        assert_eq!(lines(b"", 8), []);
        assert_eq!(lines(b"\n", 8), [Ok(String::new())]);
    }

    #[test]
    fn a_connection_answers_in_order_and_flushes_on_close() {
        let input: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n{oops\n";
        let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0
                    .lock()
                    .map_err(|_| io::Error::other("poisoned"))?
                    .extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let conn = connect(input, Shared(out.clone())).expect("threads");
        let got: Vec<Incoming> = conn.receiver.iter().collect();
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0], request(json!(1), "ping"));
        assert!(matches!(
            got[1],
            Incoming::Invalid {
                code: PARSE_ERROR,
                ..
            }
        ));
        conn.sender
            .send(response(&json!(1), &json!({})))
            .expect("writer alive");
        // A thread still holding a sender (a run under way) does not hold close up.
        let late = conn.sender.clone();
        let started = std::time::Instant::now();
        conn.close(Duration::from_secs(5));
        assert!(started.elapsed() < Duration::from_secs(5));
        let _ = late.send(response(&json!(2), &json!({})));
        let written = String::from_utf8(out.lock().expect("not poisoned").clone()).expect("utf-8");
        assert_eq!(written, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    }
}
