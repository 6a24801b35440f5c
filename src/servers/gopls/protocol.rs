//! gopls: what it says beyond the protocol.
//!
//! A workspace it cannot load (a `go.mod` it cannot parse, a module it cannot find)
//! is shown as a work-done progress titled "Error loading workspace" that begins and
//! stays open until the error is mended (gopls's `showCriticalErrorStatus`, with
//! the error as its message): a standing report, not work under way. Waiting for its
//! end ran out every timeout of the run.
//!
//! Told `verboseWorkDoneProgress` (an option of its own regression tests), gopls
//! brackets each diagnosis it runs outside a request with a work-done progress: one
//! titled "diagnosing initial workspace load" begun at `initialized`, and one per
//! `didOpen`, `didChange`, `didSave`, `didClose` and `didChangeWatchedFiles`, titled
//! by that cause, begun before the notification is handled and ended once the
//! diagnosis it started has published (x/tools v0.5.0, `didModifyFiles` and
//! `addFolders`; the same in later gopls). Every publish of a diagnosis comes before
//! its end on the one stream, so once every notification sent has had its bracket
//! end, the server has said all it will: no silence needs to follow. Without the
//! option its only signal was the end of loading; the before view of a cold run then
//! ended on 400 ms of quiet (go-cmp: 1.09 s from start to verdict, against the
//! server's 0.67 s to its last publish).

use std::collections::HashMap;

/// The title of gopls's progress that reports a workspace it could not load.
pub const WORKSPACE_LOAD_FAILURE: &str = "Error loading workspace";

/// The initialization option that has gopls bracket its diagnoses.
pub const BRACKET_OPTION: &str = "verboseWorkDoneProgress";

/// The bracket of the diagnosis gopls runs when it has loaded a workspace.
const INITIAL_LOAD: &str = "diagnosing initial workspace load";

/// The notifications gopls diagnoses, each with the title of its bracket
/// (`DiagnosticWorkTitle` of the notification's `ModificationSource`).
const CAUSES: [(&str, &str); 5] = [
    ("textDocument/didOpen", "diagnosing opened files"),
    ("textDocument/didChange", "diagnosing changed files"),
    ("textDocument/didSave", "diagnosing saved files"),
    ("textDocument/didClose", "diagnosing close files"),
    (
        "workspace/didChangeWatchedFiles",
        "diagnosing files changed on disk",
    ),
];

/// The diagnoses a server bracketed as gopls does, against the notifications sent
/// to it (see the module's notes). A server that brackets none (any other, or a
/// gopls not told to) is never taken as done by it.
#[derive(Debug, Default)]
pub struct Diagnoses {
    /// The notifications of each of [`CAUSES`] sent.
    sent: [u64; CAUSES.len()],
    /// The brackets of each of [`CAUSES`] that ended.
    ended: [u64; CAUSES.len()],
    /// The brackets under way, by token: an index into [`CAUSES`], or `None` for the
    /// initial load's.
    open: HashMap<String, Option<usize>>,
    /// The initial load's diagnosis has ended.
    loaded: bool,
}

impl Diagnoses {
    /// A notification `method` is being sent.
    pub fn sending(&mut self, method: &str) {
        if let Some(i) = CAUSES.iter().position(|(m, _)| *m == method) {
            self.sent[i] += 1;
        }
    }

    /// A work-done progress `token` began with `title`.
    pub fn begun(&mut self, token: &str, title: &str) {
        let cause = if title == INITIAL_LOAD {
            None
        } else if let Some(i) = CAUSES.iter().position(|(_, t)| *t == title) {
            Some(i)
        } else {
            return;
        };
        self.open.insert(token.to_string(), cause);
    }

    /// The work-done progress `token` ended.
    pub fn ended(&mut self, token: &str) {
        match self.open.remove(token) {
            Some(Some(i)) => self.ended[i] += 1,
            Some(None) => self.loaded = true,
            None => {}
        }
    }

    /// Whether every diagnosis the server owes has published: its initial load's,
    /// and one for each notification sent, none under way.
    pub fn all_in(&self) -> bool {
        self.loaded
            && self.open.is_empty()
            && self.sent.iter().zip(&self.ended).all(|(s, e)| e >= s)
    }

    /// Whether the server has shown it brackets its diagnoses (its initial load's
    /// ended) and one it owes has not ended: whatever its silence, it has more to
    /// say. A deletion told to a warm gopls, with no file to wait for, looked settled
    /// after its 10 ms of quiet, before its diagnosis had begun (go-cmp's deleted file
    /// through the daemon: exit 0, its 4 breaks unseen).
    pub fn owed(&self) -> bool {
        self.loaded && !self.all_in()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exchange of a cold run on go-cmp (`LSPGATE_TRACE`): the initial load's
    /// bracket, an open's, then a change and a save, the change's bracket ending
    /// at once (its diagnosis superseded by the save's) and the save's after its
    /// publishes.
    #[test]
    fn done_once_every_notification_sent_has_its_bracket_ended() {
        let mut d = Diagnoses::default();
        assert!(!d.all_in(), "nothing heard yet");
        d.sending("textDocument/didOpen");
        d.begun("1", INITIAL_LOAD);
        d.begun("2", "Setting up workspace");
        d.ended("2");
        d.begun("3", "diagnosing opened files");
        d.ended("1");
        assert!(!d.all_in(), "the open's diagnosis is under way");
        d.ended("3");
        assert!(d.all_in());
        d.sending("textDocument/didChange");
        d.sending("textDocument/didSave");
        assert!(!d.all_in(), "sent, not begun");
        d.begun("4", "diagnosing changed files");
        d.begun("5", "diagnosing saved files");
        d.ended("4");
        assert!(!d.all_in(), "the save's diagnosis is under way");
        d.ended("5");
        assert!(d.all_in());
        assert!(!d.owed());
        d.sending("$/cancelRequest");
        d.sending("workspace/didChangeWatchedFiles");
        d.begun("6", "diagnosing opened files");
        d.ended("6");
        assert!(!d.all_in(), "another cause's bracket pays nothing");
        assert!(d.owed(), "the file change's diagnosis is owed");
    }

    #[test]
    fn never_done_without_the_initial_load_bracketed() {
        let mut d = Diagnoses::default();
        d.sending("textDocument/didOpen");
        d.begun("3", "diagnosing opened files");
        d.ended("3");
        assert!(
            !d.all_in(),
            "a server that does not bracket its first diagnosis"
        );
        d.sending("textDocument/didChange");
        assert!(
            !d.owed(),
            "not shown to bracket: its silence still settles it"
        );
    }
}
