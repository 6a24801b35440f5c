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
//!
//! clangd rebuilds a file whose text did not change only when its preamble (the
//! directives at the top of the file, built once and reused) is out of date. A
//! header included further down, after the first declaration, is part of the rest
//! of the file, and clangd 14's TUScheduler takes "inputs are the same" as
//! "diagnostics are the same" ("the AST could actually change if non-preamble
//! includes changed, but we choose to ignore it"): measured on Lua, whose `lstate.h`
//! includes `lobject.h` after a typedef and stayed silent, with its first
//! diagnostics, through every change to `lobject.h`. Hence a text sent again unchanged
//! carries clangd's `forceRebuild` ([`DidChangeForcingRebuild`]) when clangd would
//! not see for itself that it must rebuild ([`must_force_rebuild`]), and its silence
//! after a save vouches for a file only when all its includes are in its preamble
//! ([`includes_after_preamble`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use lsp_types::notification::Notification;
use lsp_types::{Diagnostic, DidChangeTextDocumentParams, NumberOrString, Url};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::c_source;
use crate::uri;

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
    /// and rebuilds and publishes only those whose text or preamble changed; the
    /// others go back to "idle" with nothing published. So once clangd is quiet, a
    /// file idle since a save sent after a change, all of whose includes are in its
    /// preamble, has its published diagnostics still current. (Quiet, because "idle"
    /// also comes between the steps of one rebuild.)
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

/// `textDocument/didChange` with clangd's `forceRebuild`: rebuild the file from
/// scratch, preamble included, even though its text is what clangd has.
pub enum DidChangeForcingRebuild {}

impl Notification for DidChangeForcingRebuild {
    type Params = ForcingRebuildParams;
    const METHOD: &'static str = "textDocument/didChange";
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForcingRebuildParams {
    #[serde(flatten)]
    pub change: DidChangeTextDocumentParams,
    pub force_rebuild: bool,
}

/// Whether a file sent again with its text unchanged must carry `forceRebuild`, or
/// clangd may keep what it said: an include after its preamble (see
/// [`includes_after_preamble`]), or a header it did not find ("pp_file_not_found"):
/// clangd assumes a missing header stays missing (its own words for
/// `forceRebuild`), and a header put back behind its back left Lua's `llex.c` with
/// "'lctype.h' file not found". Otherwise clangd rebuilds the file when its preamble
/// changed and is rightly silent when it did not; forcing every file cost a warm run
/// a second rebuild of every dependent.
pub fn must_force_rebuild(text: &str, diagnostics: &[Diagnostic]) -> bool {
    includes_after_preamble(text)
        || diagnostics
            .iter()
            .any(|d| d.code == Some(NumberOrString::String("pp_file_not_found".into())))
}

/// Whether `text` has an `#include` (or `#import`) after its preamble, where clangd
/// does not notice that the included file changed (see the module's doc).
///
/// clang's preamble runs to the first line that is not a comment or a directive of
/// the kinds it keeps (`Lexer::ComputePreamble`). Written here because no crate
/// computes clang's preamble bounds. Conservative where it matters: any other
/// directive ends the preamble here, and an `#include` anywhere after, even in a
/// skipped `#if` block or a comment, counts.
pub fn includes_after_preamble(text: &str) -> bool {
    const KEPT: &[&str] = &[
        "include",
        "include_next",
        "import",
        "define",
        "undef",
        "if",
        "ifdef",
        "ifndef",
        "elif",
        "else",
        "endif",
        "pragma",
    ];
    let code = c_source::blank_comments(text);
    let mut lines = text.lines().zip(code.lines());
    let mut continued = false;
    // The preamble: comments and the directives clang keeps in one.
    for (line, code) in lines.by_ref() {
        let continuation = continued;
        continued = line.ends_with('\\');
        if continuation || code.trim().is_empty() {
            continue;
        }
        match c_source::directive(code) {
            Some((name, _)) if KEPT.contains(&name) => {}
            _ => break,
        }
    }
    // The rest, read line by line without parsing comments: an include in a comment
    // or a string counts, which only costs a rebuild.
    lines.any(|(line, _)| {
        c_source::directive(line).is_some_and(|(name, _)| c_source::is_include(name))
    })
}

/// Whether clangd 14 would take a file that changed from `before` to `after` (each
/// its size and modification time) for unchanged: it compares an included file's size
/// and modification time in whole seconds with those it built a preamble on (LLVM's
/// `PrecompiledPreamble::CanReuse`). An unknown time counts as the same.
///
/// So a header written again at the same size within the same second (an edit, its
/// undo and the edit again, as an agent makes them) leaves every preamble built on it
/// in place, and the files including it rebuilt against the old text: measured on
/// Lua's `ltable.h`, whose includers kept the old signature of `luaH_resize` and hid
/// a break. After such a change (`Pool::mark_size_kept`) each open file is sent again
/// with `forceRebuild`, and what clangd said of it before does not hold.
pub fn looks_unchanged(
    before: (u64, Option<SystemTime>),
    after: (u64, Option<SystemTime>),
) -> bool {
    let secs = |t: Option<SystemTime>| {
        t.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map(|d| d.as_secs())
    };
    before.0 == after.0
        && match (secs(before.1), secs(after.1)) {
            (Some(b), Some(a)) => b == a,
            _ => true,
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
    fn an_include_after_the_first_declaration_is_after_the_preamble() {
        // Lua's lstate.h, shortened.
        let lstate = "/*\n** $Id: lstate.h $\n*/\n\n#ifndef lstate_h\n#define lstate_h\n\n\
            #include \"lua.h\"\n\n/* Some header files included here need this definition */\n\
            typedef struct CallInfo CallInfo;\n\n#include \"lobject.h\"\n#endif\n";
        assert!(includes_after_preamble(lstate));
        let lapi = "/* lapi.c */\n#define lapi_c\n#define LUA_CORE \\\n  1\n\
            #include \"lprefix.h\"\n// the API\n#include <limits.h> /* INT_MAX */\n\
            #if defined(X)\n#include \"x.h\"\n#endif\n\nint f(void) { return 0; }\n";
        assert!(!includes_after_preamble(lapi));
    }

    #[test]
    fn comments_and_other_directives_are_read_as_clang_reads_them() {
        // A declaration inside a comment does not end the preamble.
        assert!(!includes_after_preamble(
            "/* int x;\n int y; */ #include \"a.h\"\nint z;\n"
        ));
        // A directive clang does not keep in a preamble ends it.
        assert!(includes_after_preamble(
            "#include \"a.h\"\n#error no\n#include \"b.h\"\n"
        ));
        // An include in a skipped block after the preamble still counts.
        assert!(includes_after_preamble(
            "int x;\n#if 0\n#  include \"b.h\"\n#endif\n"
        ));
        assert!(!includes_after_preamble("int x;\n// #include \"b.h\"\n"));
        // After the preamble, comments are not parsed: one there counts.
        assert!(includes_after_preamble(
            "int x;\n/*\n#include \"b.h\"\n*/\n"
        ));
    }

    #[test]
    fn a_file_is_forced_when_clangd_would_keep_what_it_said() {
        let missing = Diagnostic {
            code: Some(NumberOrString::String("pp_file_not_found".into())),
            message: "'lctype.h' file not found".into(),
            ..Diagnostic::default()
        };
        let other = Diagnostic {
            code: Some(NumberOrString::String("unknown_typename".into())),
            ..Diagnostic::default()
        };
        let plain = "#include \"lctype.h\"\nint x;\n";
        assert!(must_force_rebuild(plain, &[other.clone(), missing]));
        assert!(!must_force_rebuild(plain, std::slice::from_ref(&other)));
        assert!(must_force_rebuild(
            "int x;\n#include \"late.h\"\n",
            &[other]
        ));
    }

    #[test]
    fn a_file_looks_unchanged_at_the_same_size_within_the_same_second() {
        let at = |secs: u64, nanos: u32| {
            Some(SystemTime::UNIX_EPOCH + std::time::Duration::new(secs, nanos))
        };
        assert!(looks_unchanged(
            (10, at(100, 1)),
            (10, at(100, 900_000_000))
        ));
        assert!(!looks_unchanged((10, at(100, 1)), (10, at(101, 0))));
        assert!(!looks_unchanged((10, at(100, 1)), (11, at(100, 1))));
        assert!(
            looks_unchanged((10, None), (10, at(101, 0))),
            "unknown: the same"
        );
    }

    #[test]
    fn a_forced_rebuild_is_a_did_change_with_clangds_field() {
        let change = DidChangeTextDocumentParams {
            text_document: lsp_types::VersionedTextDocumentIdentifier {
                uri: uri::from_path(Path::new("/w/a.h")),
                version: 3,
            },
            content_changes: Vec::new(),
        };
        let value = serde_json::to_value(ForcingRebuildParams {
            change,
            force_rebuild: true,
        })
        .expect("the params serialize");
        assert_eq!(value["forceRebuild"], json!(true));
        assert_eq!(value["textDocument"]["version"], json!(3));
        assert_eq!(DidChangeForcingRebuild::METHOD, "textDocument/didChange");
    }

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
