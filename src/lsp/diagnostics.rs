//! The diagnostics store of one server: per file, the last list it pushed
//! (`textDocument/publishDiagnostics`) and the last answer to a pull
//! (`textDocument/diagnostic`), each with the pool clock it came at; and, for a server
//! analysing its whole workspace, the files it still owes a publish.
//!
//! The store records; it does not judge. Whether a file's diagnostics belong to the
//! text the server has now is the wait's question (`wait`), asked of these clocks.
//! Positions are stored in UTF-16 whatever the server counts in (`encoding`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use lsp_types::Diagnostic;
use serde_json::Value;

/// The last diagnostics a server pushed for a file.
#[derive(Debug, Clone)]
pub struct Published {
    pub diagnostics: Vec<Diagnostic>,
    pub version: Option<i32>,
    /// The pool clock when it arrived.
    pub seq: u64,
    pub at: Instant,
}

/// An answer for a file that says nothing of it: a publish too large to read, skipped,
/// or a pull the server failed.
#[derive(Debug, Clone)]
pub struct Unreadable {
    /// The pool clock when it arrived (a publish), or when it was asked (a pull).
    pub seq: u64,
    /// Its version, where its text told it.
    pub version: Option<i32>,
    /// Why it was skipped.
    pub why: String,
    pub cause: Unknown,
}

impl Unreadable {
    /// Whether it answers a change sent at pool clock `trigger`: a publish that came
    /// after it, a pull sent from it on.
    pub fn answers(&self, trigger: u64) -> bool {
        match self.cause {
            Unknown::PullFailed => self.seq >= trigger,
            Unknown::TooLarge => self.seq > trigger,
        }
    }
}

/// Why an answer says nothing of its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknown {
    /// A publish over the transport's caps.
    TooLarge,
    /// A pull the server answered with an error that asks for no retry.
    PullFailed,
}

/// The last answer to a `textDocument/diagnostic` pull for a file.
#[derive(Debug, Clone)]
pub struct Pulled {
    pub diagnostics: Vec<Diagnostic>,
    /// The pool clock when the request was sent: the answer covers every change
    /// sent before it. For an answer given again ([`Store::enter_view`]), the clock
    /// it was given again at.
    pub sent_seq: u64,
    /// The project as the server saw it when asked, where known (`Server::view_at`):
    /// the same view again gives the same answer.
    pub view: Option<u64>,
    /// Given again from an earlier view, not asked for: no sign of anything the
    /// server did since.
    pub reinstated: bool,
}

impl Pulled {
    /// An answer to a pull sent at `sent_seq` while the server saw `view`.
    pub fn answer(diagnostics: Vec<Diagnostic>, sent_seq: u64, view: Option<u64>) -> Pulled {
        Pulled {
            diagnostics,
            sent_seq,
            view,
            reinstated: false,
        }
    }
}

/// Answers kept per file for views other than the current one: a revert behind the
/// daemon's back (`git checkout`, `git stash`) goes back to the view before the last
/// edit, seldom further.
const EARLIER_VIEWS: usize = 2;

/// What a server said about one file, by either route.
#[derive(Debug, Clone, Default)]
pub struct FileDiagnostics {
    pub pushed: Option<Published>,
    pub pulled: Option<Pulled>,
    /// Earlier pull answers, each of another known view, newest first.
    pub(super) earlier: Vec<Pulled>,
}

impl FileDiagnostics {
    /// The pool clock of the last word on the file, push or pull.
    pub fn received(&self) -> u64 {
        let pushed = self.pushed.as_ref().map_or(0, |p| p.seq);
        let pulled = self.pulled.as_ref().map_or(0, |p| p.sent_seq);
        pushed.max(pulled)
    }

    /// What the server says about the file now: its pull answer and its pushes
    /// together (rust-analyzer answers pulls with its own analysis and still pushes
    /// cargo check results), exact duplicates removed.
    pub fn current(&self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = Vec::new();
        let parts = [
            self.pulled.as_ref().map(|p| &p.diagnostics),
            self.pushed.as_ref().map(|p| &p.diagnostics),
        ];
        for d in parts.into_iter().flatten().flatten() {
            if !out.contains(d) {
                out.push(d.clone());
            }
        }
        out
    }

    /// Whether either route says anything at all: an empty list means the same to
    /// the check as no entry.
    pub fn has_any(&self) -> bool {
        self.pushed
            .as_ref()
            .is_some_and(|p| !p.diagnostics.is_empty())
            || self
                .pulled
                .as_ref()
                .is_some_and(|p| !p.diagnostics.is_empty())
    }
}

/// Every file one server said something about, and the publishes it owes.
#[derive(Debug, Default)]
pub struct Store {
    files: HashMap<PathBuf, FileDiagnostics>,
    /// A server that analyses its whole workspace (`Delivery::WorkspaceAnalysis`)
    /// answers every change it was told of by republishing the file: the files it
    /// still owes a publish, with the pool clock of the change. Until they come it is
    /// not settled, however quiet: pyright says nothing for 300 ms or more after a
    /// change (its scheduling), and nothing while one file's check runs for seconds.
    owed: HashMap<PathBuf, u64>,
    /// Files whose last publish was too large to read and was skipped: the pool clock
    /// it came at, its version where known, and why. It answers a change (pays what
    /// is owed) but says nothing of the file, whose diagnostics are unknown until a
    /// publish that can be read.
    unreadable: HashMap<PathBuf, Unreadable>,
}

impl Store {
    pub fn get(&self, path: &Path) -> Option<&FileDiagnostics> {
        self.files.get(path)
    }

    pub fn contains(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }

    /// The files with an entry, in no particular order.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.files.keys().map(PathBuf::as_path)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Path, &FileDiagnostics)> {
        self.files.iter().map(|(p, d)| (p.as_path(), d))
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Whether `path`'s last word arrived after pool clock `since`.
    pub fn received_after(&self, path: &Path, since: u64) -> bool {
        self.files.get(path).is_some_and(|d| d.received() > since)
    }

    /// Whether an answer to a pull sent after pool clock `since` has come, for any
    /// file.
    pub fn pulled_after(&self, since: u64) -> bool {
        self.files.values().any(|d| {
            d.pulled
                .as_ref()
                .is_some_and(|p| p.sent_seq > since && !p.reinstated)
        })
    }

    /// The server sees the project as it saw it at `view` (a key of every file's
    /// text), since pool clock `clock`. An answer that still holds (sent at or after
    /// `holds_from`) is that view's; a file whose answer does not hold but that was
    /// answered at this same view before gets that answer back, as if just pulled:
    /// the same project gives the same answer.
    pub(super) fn enter_view(&mut self, view: u64, holds_from: u64, clock: u64) {
        for d in self.files.values_mut() {
            let Some(current) = d.pulled.as_mut() else {
                continue;
            };
            if current.sent_seq >= holds_from {
                current.view = Some(view);
                continue;
            }
            let Some(i) = d.earlier.iter().position(|p| p.view == Some(view)) else {
                continue;
            };
            let mut again = d.earlier.remove(i);
            again.sent_seq = clock;
            again.reinstated = true;
            if let Some(old) = d.pulled.replace(again) {
                keep_earlier(&mut d.earlier, old);
            }
        }
    }

    /// What a server said before a refresh it sends as news may have been
    /// incomplete: no view's answer is given again.
    pub(super) fn forget_views(&mut self) {
        for d in self.files.values_mut() {
            d.earlier.clear();
        }
    }

    /// The files still owed a publish (see [`Store`]'s `owed`).
    pub fn owed(&self) -> impl ExactSizeIterator<Item = &Path> {
        self.owed.keys().map(PathBuf::as_path)
    }

    pub fn owes_nothing(&self) -> bool {
        self.owed.is_empty()
    }

    /// Whether a server analysing its whole workspace reports on `path`: it has
    /// published the file, has it `open`, or (a new file) published another file of
    /// its directory. Files its own configuration excludes (pyright's
    /// `include`/`exclude`) it never publishes, so a change to one is owed nothing.
    pub(super) fn tracks(&self, path: &Path, open: bool) -> bool {
        open || self.files.contains_key(path)
            || path
                .parent()
                .is_some_and(|dir| self.files.keys().any(|p| p.parent() == Some(dir)))
    }

    /// A change to `path` at pool clock `clock` that the server will answer with a
    /// publish.
    pub(super) fn owe(&mut self, path: &Path, clock: u64) {
        self.owed.insert(path.to_path_buf(), clock);
    }

    /// A push for `path`; it pays a publish owed for a change before it.
    pub(super) fn push(&mut self, path: PathBuf, published: Published) {
        if self
            .owed
            .get(&path)
            .is_some_and(|&since| since < published.seq)
        {
            self.owed.remove(&path);
        }
        self.unreadable.remove(&path);
        self.files.entry(path).or_default().pushed = Some(published);
    }

    /// A push for `path` at pool clock `seq` too large to read (`why`): the server
    /// answered, and what it said is unknown.
    pub(super) fn skipped(&mut self, path: PathBuf, seq: u64, version: Option<i32>, why: String) {
        if self.owed.get(&path).is_some_and(|&since| since < seq) {
            self.owed.remove(&path);
        }
        let cause = Unknown::TooLarge;
        self.unreadable.insert(
            path,
            Unreadable {
                seq,
                version,
                why,
                cause,
            },
        );
    }

    /// The pull of `path` sent at pool clock `sent_seq` failed (`why`): the server
    /// answered, and said nothing of the file.
    pub(super) fn pull_failed(&mut self, path: PathBuf, sent_seq: u64, why: String) {
        let failed = Unreadable {
            seq: sent_seq,
            version: None,
            why,
            cause: Unknown::PullFailed,
        };
        self.unreadable.insert(path, failed);
    }

    /// Whether the last publish of any file could not be read.
    pub fn any_unreadable(&self) -> bool {
        !self.unreadable.is_empty()
    }

    /// The last publish for `path`, when it could not be read and no readable one
    /// came after it.
    pub fn unreadable(&self, path: &Path) -> Option<&Unreadable> {
        self.unreadable.get(path)
    }

    /// A pull answer for `path`; the answer it replaces is kept if its view is known.
    pub(super) fn pulled(&mut self, path: PathBuf, pulled: Pulled) {
        self.unreadable.remove(&path);
        let d = self.files.entry(path).or_default();
        if let Some(old) = d.pulled.replace(pulled) {
            keep_earlier(&mut d.earlier, old);
        }
    }

    /// Drop what pulls said of `path` (the file is no longer one a pull answers for).
    pub(super) fn forget_pull(&mut self, path: &Path) {
        if let Some(d) = self.files.get_mut(path) {
            d.pulled = None;
            d.earlier.clear();
            if d.pushed.is_none() {
                self.files.remove(path);
            }
        }
    }

    /// An "unchanged" pull answer: the last one still stands, as of `sent_seq`. (We
    /// never send a `previousResultId`, so servers should not say it; if one does,
    /// what we had is kept.)
    pub(super) fn pull_unchanged(&mut self, path: &Path, sent_seq: u64, view: Option<u64>) {
        if let Some(prev) = self.files.get_mut(path).and_then(|f| f.pulled.as_mut()) {
            prev.sent_seq = sent_seq;
            prev.view = view;
            prev.reinstated = false;
        }
    }

    pub(super) fn remove(&mut self, path: &Path) {
        self.files.remove(path);
        self.unreadable.remove(path);
    }

    /// A dead server owes nothing: nothing more will come.
    pub(super) fn forgive(&mut self) {
        self.owed.clear();
    }

    pub(super) fn clear(&mut self) {
        self.files.clear();
        self.owed.clear();
        self.unreadable.clear();
    }

    pub(super) fn retain(&mut self, mut keep: impl FnMut(&Path, &FileDiagnostics) -> bool) {
        self.files.retain(|p, d| keep(p, d));
    }
}

/// Keep `old` among the earlier answers if its view is known, as the newest of its
/// view, within [`EARLIER_VIEWS`].
fn keep_earlier(earlier: &mut Vec<Pulled>, old: Pulled) {
    if old.view.is_none() {
        return;
    }
    earlier.retain(|p| p.view != old.view);
    earlier.insert(0, old);
    earlier.truncate(EARLIER_VIEWS);
}

/// The diagnostics of a list as a server sent it. Read one by one: one malformed
/// entry must not cost the others.
pub fn parse(items: &Value) -> Vec<Diagnostic> {
    items
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| serde_json::from_value(d.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn diagnostic(message: &str) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    fn published(seq: u64, messages: &[&str]) -> Published {
        Published {
            diagnostics: messages.iter().map(|m| diagnostic(m)).collect(),
            version: None,
            seq,
            at: Instant::now(),
        }
    }

    #[test]
    fn current_is_the_pull_then_the_push_without_duplicates() {
        let mut store = Store::default();
        let a = PathBuf::from("/w/a.rs");
        store.push(a.clone(), published(5, &["check", "both"]));
        store.pulled(
            a.clone(),
            Pulled::answer(vec![diagnostic("native"), diagnostic("both")], 3, None),
        );
        let held = store.get(&a).expect("held");
        let messages: Vec<String> = held.current().into_iter().map(|d| d.message).collect();
        assert_eq!(messages, ["native", "both", "check"]);
        assert_eq!(held.received(), 5);
        assert!(store.received_after(&a, 4) && !store.received_after(&a, 5));
    }

    #[test]
    fn an_unchanged_answer_moves_the_last_pull_forward() {
        let mut store = Store::default();
        let a = PathBuf::from("/w/a.py");
        store.pull_unchanged(&a, 9, None);
        assert!(store.get(&a).is_none(), "nothing to keep");
        store.pulled(a.clone(), Pulled::answer(vec![diagnostic("x")], 2, None));
        store.pull_unchanged(&a, 9, None);
        let pulled = store
            .get(&a)
            .and_then(|d| d.pulled.as_ref())
            .expect("pulled");
        assert_eq!((pulled.sent_seq, pulled.diagnostics.len()), (9, 1));
    }

    #[test]
    fn a_view_seen_before_gets_its_answer_again() {
        let mut store = Store::default();
        let a = PathBuf::from("/w/a.ts");
        let messages = |store: &Store| -> Vec<String> {
            let pulled = store
                .get(&a)
                .and_then(|d| d.pulled.as_ref())
                .expect("pulled");
            pulled
                .diagnostics
                .iter()
                .map(|d| d.message.clone())
                .collect()
        };
        store.pulled(
            a.clone(),
            Pulled::answer(vec![diagnostic("before")], 5, Some(1)),
        );
        // The edit: another view, another answer.
        store.pulled(
            a.clone(),
            Pulled::answer(vec![diagnostic("after")], 11, Some(2)),
        );
        assert_eq!(messages(&store), ["after"]);

        // Back to the first view behind the daemon's back: the answer it gave then.
        store.enter_view(1, 20, 21);
        assert_eq!(messages(&store), ["before"]);
        let pulled = store
            .get(&a)
            .and_then(|d| d.pulled.as_ref())
            .expect("pulled");
        assert_eq!((pulled.sent_seq, pulled.reinstated), (21, true));
        assert!(store.received_after(&a, 20), "it holds for the run");
        assert!(
            !store.pulled_after(20),
            "but is no sign of the server's work"
        );

        // And forward again.
        store.enter_view(2, 30, 31);
        assert_eq!(messages(&store), ["after"]);

        // A view never seen: nothing to give; an answer that holds takes its name.
        store.enter_view(3, 40, 41);
        assert_eq!(messages(&store), ["after"]);
        store.pulled(
            a.clone(),
            Pulled::answer(vec![diagnostic("third")], 42, None),
        );
        store.enter_view(3, 42, 43);
        store.enter_view(1, 50, 51);
        assert_eq!(
            messages(&store),
            ["before"],
            "view 3 kept, view 1 given again"
        );
        store.enter_view(3, 60, 61);
        assert_eq!(messages(&store), ["third"]);

        store.forget_views();
        store.enter_view(1, 70, 71);
        assert_eq!(messages(&store), ["third"], "forgotten after a refresh");
    }

    #[test]
    fn an_owed_publish_is_paid_only_by_a_later_push() {
        let mut store = Store::default();
        let a = PathBuf::from("/w/a.py");
        store.owe(&a, 10);
        store.push(a.clone(), published(10, &[]));
        assert_eq!(store.owed().len(), 1, "a push from before the change");
        store.push(a.clone(), published(11, &[]));
        assert!(store.owes_nothing());
        store.owe(&a, 12);
        store.forgive();
        assert!(store.owes_nothing());
    }

    #[test]
    fn a_workspace_analyser_tracks_what_it_published_and_their_neighbours() {
        let mut store = Store::default();
        store.push(PathBuf::from("/w/pkg/a.py"), published(1, &[]));
        assert!(store.tracks(Path::new("/w/pkg/a.py"), false));
        assert!(
            store.tracks(Path::new("/w/pkg/new.py"), false),
            "same directory"
        );
        assert!(!store.tracks(Path::new("/w/excluded/b.py"), false));
        assert!(store.tracks(Path::new("/w/excluded/b.py"), true), "open");
    }

    #[test]
    fn a_malformed_entry_costs_only_itself() {
        let items = json!([
            { "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 1 } }, "message": "good" },
            { "range": "nowhere", "message": "bad" },
        ]);
        let got = parse(&items);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].message, "good");
        assert!(parse(&Value::Null).is_empty());
    }
}
