//! clangd: its entry, its waits, and what an untrusted project may set for it.
//!
//! Measured facts the waits and the check rely on:
//! - with `clangdFileStatus`, clangd reports each file's state
//!   (`textDocument/clangd.fileStatus`): a file with a publish of our version is done
//!   once its state is back to "idle", and the short quiet covers the rest of the
//!   burst; "idle" with nothing published waits out the full quiet (see `wait`),
//!   since "idle" also comes between the steps of a rebuild, and clangd publishes
//!   nothing when a file's text and includes did not change;
//! - clangd 14 reads included headers from the disk, not from the open documents: a
//!   change shown only in memory (--dry-run, --reject, check --staged) does not reach
//!   the files that include it (`dependents_see_unsaved: false`);
//! - clangd 14 skips the rebuild of a file whose text did not change unless its
//!   preamble did: a changed header it includes further down (Lua's `lstate.h`
//!   includes `lobject.h` after a typedef) leaves it silent and stale, and so does a
//!   header it did not find and that is back; such a file sent again unchanged is
//!   sent with `forceRebuild` (`force_rebuild_unchanged`, see `lsp::clangd`).

use std::time::Duration;

use serde_json::json;

use super::{Allow, AllowList, ServerSpec, WaitProfile, entry, languages, strs};

pub(super) const CLANGD: &str = "clangd";

pub(super) fn clangd() -> ServerSpec {
    ServerSpec {
        root_markers: strs(&["compile_commands.json", "compile_flags.txt", ".clangd"]),
        initialization_options: Some(json!({ "clangdFileStatus": true })),
        wait: WaitProfile {
            quiet: Duration::from_millis(150),
            confirmed_quiet: Some(Duration::from_millis(15)),
            dependents_see_unsaved: false,
            force_rebuild_unchanged: true,
            ..WaitProfile::default()
        },
        install_hint: "apt-get install clangd".into(),
        ..entry(
            CLANGD,
            "clangd",
            &["--background-index=false"],
            languages::C,
            "cpp",
        )
    }
}

/// What an untrusted project may set: clangd reads only initialization options. Not
/// `fallbackFlags` (compiler flags, a `-fplugin` among them) nor
/// `compilationDatabaseChanges` (flags per file).
pub(super) const ALLOWED: AllowList = AllowList {
    settings: &[],
    initialization_options: &[
        ("clangdFileStatus", Allow::Value),
        ("compilationDatabasePath", Allow::InsidePaths),
    ],
};
