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

/// The last answer to a `textDocument/diagnostic` pull for a file.
#[derive(Debug, Clone)]
pub struct Pulled {
    pub diagnostics: Vec<Diagnostic>,
    /// The pool clock when the request was sent: the answer covers every change
    /// sent before it.
    pub sent_seq: u64,
}

/// What a server said about one file, by either route.
#[derive(Debug, Clone, Default)]
pub struct FileDiagnostics {
    pub pushed: Option<Published>,
    pub pulled: Option<Pulled>,
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
    /// A server that analyses its whole workspace (`WaitProfile::workspace_analysis`)
    /// answers every change it was told of by republishing the file: the files it
    /// still owes a publish, with the pool clock of the change. Until they come it is
    /// not settled, however quiet: pyright says nothing for 300 ms or more after a
    /// change (its scheduling), and nothing while one file's check runs for seconds.
    owed: HashMap<PathBuf, u64>,
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
        self.files
            .values()
            .any(|d| d.pulled.as_ref().is_some_and(|p| p.sent_seq > since))
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
        self.files.entry(path).or_default().pushed = Some(published);
    }

    /// A pull answer for `path`.
    pub(super) fn pulled(&mut self, path: PathBuf, pulled: Pulled) {
        self.files.entry(path).or_default().pulled = Some(pulled);
    }

    /// An "unchanged" pull answer: the last one still stands, as of `sent_seq`. (We
    /// never send a `previousResultId`, so servers should not say it; if one does,
    /// what we had is kept.)
    pub(super) fn pull_unchanged(&mut self, path: &Path, sent_seq: u64) {
        if let Some(prev) = self.files.get_mut(path).and_then(|f| f.pulled.as_mut()) {
            prev.sent_seq = sent_seq;
        }
    }

    pub(super) fn remove(&mut self, path: &Path) {
        self.files.remove(path);
    }

    /// A dead server owes nothing: nothing more will come.
    pub(super) fn forgive(&mut self) {
        self.owed.clear();
    }

    pub(super) fn clear(&mut self) {
        self.files.clear();
        self.owed.clear();
    }

    pub(super) fn retain(&mut self, mut keep: impl FnMut(&Path, &FileDiagnostics) -> bool) {
        self.files.retain(|p, d| keep(p, d));
    }
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
            Pulled {
                diagnostics: vec![diagnostic("native"), diagnostic("both")],
                sent_seq: 3,
            },
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
        store.pull_unchanged(&a, 9);
        assert!(store.get(&a).is_none(), "nothing to keep");
        store.pulled(
            a.clone(),
            Pulled {
                diagnostics: vec![diagnostic("x")],
                sent_seq: 2,
            },
        );
        store.pull_unchanged(&a, 9);
        let pulled = store
            .get(&a)
            .and_then(|d| d.pulled.as_ref())
            .expect("pulled");
        assert_eq!((pulled.sent_seq, pulled.diagnostics.len()), (9, 1));
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
