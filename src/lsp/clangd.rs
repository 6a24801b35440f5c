//! clangd's protocol extensions (<https://clangd.llvm.org/extensions>): its per-file
//! status, `textDocument/clangd.fileStatus`, and its older way of agreeing on a
//! position encoding, `offsetEncoding`.
//!
//! The file status is what tells a clangd that is still working on a file from one
//! that is done: any state but "idle" means work queued or under way. "idle" follows
//! every publish, but also comes between the steps of one rebuild; how the wait reads
//! it is `wait`'s business, this module only records the last state of each file.
//! clangd sends it when asked to by `initializationOptions.clangdFileStatus` (its
//! entry in `servers`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_types::Url;
use lsp_types::notification::Notification;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::uri;

/// `textDocument/clangd.fileStatus`.
pub enum FileStatusNotification {}

impl Notification for FileStatusNotification {
    type Params = FileStatusParams;
    const METHOD: &'static str = "textDocument/clangd.fileStatus";
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileStatusParams {
    pub uri: Url,
    /// "idle", or a description of the work under way ("parsing includes, running
    /// Update", "running Build AST").
    pub state: String,
}

/// A file's last state in clangd's `textDocument/clangd.fileStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStatus {
    /// The pool clock when it arrived.
    pub seq: u64,
    pub idle: bool,
}

/// The last state of each file clangd reported on.
#[derive(Debug, Default)]
pub struct FileStatuses {
    files: HashMap<PathBuf, FileStatus>,
}

impl FileStatuses {
    pub fn get(&self, path: &Path) -> Option<FileStatus> {
        self.files.get(path).copied()
    }

    /// Record a status that arrived at pool clock `seq`.
    pub fn record(&mut self, params: &FileStatusParams, seq: u64) {
        if let Some(path) = uri::to_path(&params.uri) {
            let idle = params.state == "idle";
            self.files.insert(path, FileStatus { seq, idle });
        }
    }

    /// Whether `path`'s last state is "idle" and arrived after pool clock `since`.
    ///
    /// Sent a `didSave`, clangd 14 goes over every open file again (each says "file
    /// is queued" within a millisecond of the save, measured on Lua's 34 open files)
    /// and rebuilds and publishes only those whose text or included files changed; the
    /// others go back to "idle" with nothing published. So once clangd is quiet, a
    /// file idle since a save sent after a change has its published diagnostics
    /// still current. (Quiet, because "idle" also comes between the steps of one
    /// rebuild.)
    pub fn idle_after(&self, path: &Path, since: u64) -> bool {
        self.files
            .get(path)
            .is_some_and(|s| s.idle && s.seq > since)
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The file was closed: its status says nothing about a later open.
    pub fn forget(&mut self, path: &Path) {
        self.files.remove(path);
    }
}

/// Offer UTF-8 positions the way clangd 14 understands: it predates LSP 3.17's
/// `general.positionEncodings` and reads its own `offsetEncoding` capability (and
/// answers with `offsetEncoding` next to the capabilities, which `encoding` reads).
pub fn offer_offset_encoding(capabilities: &mut Value) {
    capabilities["offsetEncoding"] = json!(["utf-8", "utf-16"]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_state_of_each_file_is_kept() {
        let params = |state: &str| FileStatusParams {
            uri: uri::from_path(Path::new("/w/a.cc")),
            state: state.into(),
        };
        let mut statuses = FileStatuses::default();
        statuses.record(&params("parsing includes, running Update"), 3);
        assert_eq!(
            statuses.get(Path::new("/w/a.cc")),
            Some(FileStatus {
                seq: 3,
                idle: false
            })
        );
        statuses.record(&params("idle"), 5);
        assert_eq!(
            statuses.get(Path::new("/w/a.cc")),
            Some(FileStatus { seq: 5, idle: true })
        );
        statuses.forget(Path::new("/w/a.cc"));
        assert_eq!(statuses.get(Path::new("/w/a.cc")), None);
    }
}
