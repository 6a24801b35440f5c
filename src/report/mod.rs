//! The report: the single output model of a run, and the only code that writes to
//! stdout (text blocks or JSON).

use std::path::PathBuf;

use lsp_types::Diagnostic;

use crate::edit::Action;

/// Whether a file was edited or reported because the edit may have broken it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Edited,
    Dependent,
}

/// One diagnostic as the run reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reported {
    pub diagnostic: Diagnostic,
    /// Not present, at the mapped place, before the edit.
    pub new: bool,
}

/// A checked file and its diagnostics after the edit.
#[derive(Debug, Clone, PartialEq)]
pub struct FileReport {
    /// Absolute path.
    pub path: PathBuf,
    pub role: Role,
    pub diagnostics: Vec<Reported>,
}

/// How one server's part of the run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerStatus {
    /// Every wait ended with the files settled.
    Ok,
    /// A wait ran out before its files were settled.
    Timeout,
    /// The command is not installed.
    Missing,
    /// The server could not be started or initialised.
    Failed,
    /// The server died during the run.
    Crashed,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerReport {
    pub name: String,
    pub status: ServerStatus,
    pub primary_ms: Option<u64>,
    pub cross_file_ms: Option<u64>,
    /// Why the status is not `Ok`, for a `note:` line.
    pub detail: Option<String>,
}

/// A file of the edit and what happened to it on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub path: PathBuf,
    pub action: Action,
}

/// Everything a run reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub workspace: PathBuf,
    /// Paths print relative to this directory.
    pub run_dir: PathBuf,
    pub applied: Vec<Applied>,
    pub dry_run: bool,
    /// `--reject` refused the edit: the disk was left as it was.
    pub rejected: bool,
    /// Whether an edit was made at all (false for `check`).
    pub is_edit: bool,
    pub files: Vec<FileReport>,
    /// Diagnostics present before and gone after (in checked files).
    pub fixed: usize,
    pub servers: Vec<ServerReport>,
    /// Extra `note:` lines for the summary (what was not checked and why).
    pub notes: Vec<String>,
    /// Files no server covers.
    pub skipped: Vec<PathBuf>,
    /// Number of dependent files checked, and how long the cross-file phase took.
    pub cross_files_checked: usize,
    pub cross_file_secs: f64,
    pub timed_out: bool,
    pub exit_code: i32,
}

pub mod json;
pub mod styles;
pub mod text;
