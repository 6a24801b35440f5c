//! What a reporting command asks for, as plain data: the front (the command line, an
//! MCP tool) fills it in, the commands plan and run it.

use std::path::PathBuf;

/// What a reporting command asks for: the CLI's `write`, `edit`, `patch` and `check`,
/// and the `lspgate mcp` tools of the same names. Relative paths resolve against the
/// run directory.
pub enum Reporting {
    Write {
        path: PathBuf,
        content: Vec<u8>,
    },
    Edit {
        path: PathBuf,
        old: String,
        new: String,
        replace_all: bool,
    },
    Patch {
        patch: Vec<u8>,
        strip: usize,
        /// Apply it in reverse (`patch -R`).
        reverse: bool,
    },
    /// `paths` alone, or `staged`, or an applied `patch`.
    Check {
        paths: Vec<PathBuf>,
        staged: bool,
        /// `--changed`: what changed on disk since lspgate last looked (`changed`).
        changed: bool,
        patch: Option<Vec<u8>>,
    },
    /// `baseline`: a check of one file of each server that analyses its whole
    /// workspace, in this process, whose after view is stored (`check::stored`).
    Baseline,
}
