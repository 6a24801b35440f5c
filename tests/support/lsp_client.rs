//! A minimal LSP client for testing the fake server directly, without lspgate: spawn
//! it, send framed messages, and receive what it writes, junk included, each wait
//! bounded by a deadline.

use std::{
    io::{BufRead, BufReader},
    path::Path,
    process::{Child, ChildStdin, Command, ExitStatus, Stdio},
    thread,
    time::{Duration, Instant},
};

use crossbeam_channel::Receiver;
use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::Value;

/// How long any single expected message may take.
const PATIENCE: Duration = Duration::from_secs(10);

/// One unit of the server's stdout.
#[derive(Debug)]
pub enum Frame {
    Message(Message),
    /// A line outside any frame, or a frame whose body is not an LSP message.
    Junk(String),
}

pub struct LspProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: Receiver<Frame>,
    next_id: i32,
}

impl LspProcess {
    /// Starts fake-lsp with these arguments in `cwd`.
    pub fn fake(args: &[&str], cwd: &Path) -> LspProcess {
        let mut child = Command::new(super::fake_lsp())
            .args(args)
            .current_dir(cwd)
            .env_remove("FAKE_LSP_LOG")
            .env_remove("FAKE_LSP_PIDFILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn fake-lsp");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, frames) = crossbeam_channel::unbounded();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(frame) = read_frame(&mut reader) {
                if tx.send(frame).is_err() {
                    break;
                }
            }
        });
        LspProcess {
            stdin: child.stdin.take(),
            child,
            frames,
            next_id: 0,
        }
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(Notification::new(method.to_owned(), params).into());
    }

    /// Sends a request and returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> RequestId {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(Request::new(id.clone(), method.to_owned(), params).into());
        id
    }

    pub fn send(&mut self, msg: Message) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        msg.write(stdin).expect("write to fake-lsp");
    }

    /// Sends a request and waits for its result, keeping nothing else it skips over.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        match self
            .expect(|frame| matches!(frame, Frame::Message(Message::Response(r)) if r.id == id))
        {
            Frame::Message(Message::Response(resp)) => resp
                .response_result
                .unwrap_or_else(|err| panic!("{method} failed: {err:?}")),
            _ => unreachable!(),
        }
    }

    /// The next frame, or None when none comes within `within`.
    pub fn next(&self, within: Duration) -> Option<Frame> {
        self.frames.recv_timeout(within).ok()
    }

    /// Skips frames until one matches; panics after `PATIENCE`.
    pub fn expect(&self, mut wanted: impl FnMut(&Frame) -> bool) -> Frame {
        let deadline = Instant::now() + PATIENCE;
        let mut skipped = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.frames.recv_timeout(left) {
                Ok(frame) if wanted(&frame) => return frame,
                Ok(frame) => skipped.push(frame),
                Err(_) => panic!("no matching frame within {PATIENCE:?}; skipped {skipped:#?}"),
            }
        }
    }

    /// Waits for the next publish for `uri` and returns its params.
    pub fn expect_publish(&self, uri: &str) -> Value {
        match self.expect(|frame| publish_uri(frame) == Some(uri)) {
            Frame::Message(Message::Notification(not)) => not.params,
            _ => unreachable!(),
        }
    }

    /// Closes stdin and waits (bounded) for the process to exit.
    pub fn wait(&mut self) -> ExitStatus {
        self.stdin = None;
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "fake-lsp did not exit within {PATIENCE:?}"
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether the process is still running, without waiting.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for LspProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn publish_uri(frame: &Frame) -> Option<&str> {
    match frame {
        Frame::Message(Message::Notification(not))
            if not.method == "textDocument/publishDiagnostics" =>
        {
            not.params["uri"].as_str()
        }
        _ => None,
    }
}

/// Reads one frame, tolerating junk the way a robust client must: a line that is not
/// a header is junk, and a body that is not an LSP message is junk.
fn read_frame(reader: &mut impl BufRead) -> Option<Frame> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let Some(len) = line
        .strip_prefix("Content-Length:")
        .and_then(|n| n.trim().parse::<usize>().ok())
    else {
        return Some(Frame::Junk(line.trim_end().to_owned()));
    };
    // The rest of the header, up to the empty line.
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(match serde_json::from_slice::<Message>(&body) {
        Ok(msg) => Frame::Message(msg),
        Err(_) => Frame::Junk(String::from_utf8_lossy(&body).into_owned()),
    })
}
