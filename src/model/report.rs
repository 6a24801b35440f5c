//! The outcome of a run as plain data: what each file's diagnostics are and whether
//! they are new, how each server's part went, the exit status they imply, and the
//! one-line summary. The check builds a [`Report`]; the renderers (`report`), the
//! history and the daemon's protocol read it.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use lsp_types::{Diagnostic, DiagnosticSeverity, DiagnosticTag};

use super::Action;
use super::incomplete::{Note, Reason, ServerReason};
use super::options::{FailOn, Severity};
use crate::exit::Outcome;

/// Whether a file was edited or reported because the edit may have broken it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Edited,
    Dependent,
}

/// One diagnostic as the run reports it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Reported {
    pub diagnostic: Diagnostic,
    /// Not present, at the mapped place, before the edit.
    pub new: bool,
    /// Diagnostics folded into this one (`check::merge`): another source's report of
    /// the same problem, and the hints that only point back at it. One line in the
    /// text; JSON's `related`.
    #[serde(default)]
    pub related: Vec<Related>,
}

impl Reported {
    pub fn new(diagnostic: Diagnostic, new: bool) -> Reported {
        Reported {
            diagnostic,
            new,
            related: Vec::new(),
        }
    }
}

/// A diagnostic folded into another, and the file it was reported in.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Related {
    pub path: PathBuf,
    pub diagnostic: Diagnostic,
}

/// A checked file and its diagnostics after the edit.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileReport {
    /// Absolute path.
    pub path: PathBuf,
    pub role: Role,
    pub diagnostics: Vec<Reported>,
}

/// How one server's part of the run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ServerReport {
    pub name: String,
    pub status: ServerStatus,
    pub primary_ms: Option<u64>,
    pub cross_file_ms: Option<u64>,
    /// Why the status is not `Ok` (its `note:` line, its JSON `detail`): never empty
    /// when it is not.
    #[serde(default)]
    pub reasons: Vec<ServerReason>,
    /// The directory the server checked from.
    #[serde(default)]
    pub root: PathBuf,
    /// In a monorepo checked from its root: the packages whose files it checked
    /// (the edited files' and their dependents'; every package for a server that
    /// analyses its whole workspace). Empty outside one.
    #[serde(default)]
    pub packages: Vec<String>,
    /// Where its before view came from.
    #[serde(default)]
    pub before: BeforeView,
}

/// Where a server's before view came from (docs/SPEC.md section 6, "Stored
/// baselines").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BeforeView {
    /// The server itself, shown the tree before the edit.
    #[default]
    Server,
    /// A stored baseline of the tree before the edit: the server saw only the
    /// tree after it.
    Stored,
    /// What the server had said when the run that moved `check --changed`'s
    /// baseline ended (the daemon's view of that tree): the server saw only the tree
    /// after the change.
    Seen,
}

/// A file of the edit and what happened to it on disk.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Applied {
    pub path: PathBuf,
    pub action: Action,
}

/// Everything a run reports.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// Extra `note:` lines for the summary: what was not checked and why (typed), and
    /// what the reader should know besides.
    pub notes: Vec<Note>,
    /// Files no server covers.
    pub skipped: Vec<PathBuf>,
    /// Number of dependent files checked, and how long the cross-file phase took.
    pub cross_files_checked: usize,
    pub cross_file_secs: f64,
    pub timed_out: bool,
    /// What the exit status says (`exit::status`).
    pub outcome: Outcome,
    /// The view of the tree the daemon kept as this run ended (`lsp::SeenView`), for a
    /// `check --changed` baseline moved by it to name; none outside the daemon.
    #[serde(default)]
    pub seen: Option<u64>,
}

impl Report {
    /// Why the check is incomplete: the notes' reasons, then the servers'.
    pub fn incomplete_reasons(&self) -> impl Iterator<Item = Reason> + '_ {
        incomplete_reasons(&self.notes, &self.servers)
    }

    /// Whether something the run needed went unchecked (exit status 3 when nothing new
    /// was found): whether it has a reason to say so. The only rule.
    pub fn incomplete(&self) -> bool {
        self.incomplete_reasons().next().is_some()
    }

    /// Set the outcome from the listed diagnostics and the reasons (after a reason
    /// was added to a finished report).
    pub fn decide_outcome(&mut self, fail_on: FailOn) {
        self.outcome = outcome(&self.files, fail_on, self.incomplete());
    }
}

/// The reasons among `notes` and `servers`, before they make a [`Report`].
pub fn incomplete_reasons<'a>(
    notes: &'a [Note],
    servers: &'a [ServerReport],
) -> impl Iterator<Item = Reason> + 'a {
    let run = notes.iter().filter_map(|note| match note {
        Note::Incomplete(reason) => Some(Reason::Run(reason.clone())),
        Note::Info(_) => None,
    });
    let server = servers
        .iter()
        .flat_map(|server| server.reasons.iter().cloned().map(Reason::Server));
    run.chain(server)
}

/// The outcome the diagnostics imply (docs/SPEC.md section 4, without bad input, which
/// never reaches a report): new diagnostics if one is at or above `fail_on`, else
/// incomplete if the check was `incomplete`, else clean.
pub fn outcome(report_files: &[FileReport], fail_on: FailOn, incomplete: bool) -> Outcome {
    let threshold = match fail_on {
        FailOn::Error => Some(Level::Error),
        FailOn::Warning => Some(Level::Warning),
        FailOn::Never => None,
    };
    let failed = threshold.is_some_and(|threshold| {
        report_files
            .iter()
            .flat_map(|file| &file.diagnostics)
            .any(|reported| reported.new && Level::of(&reported.diagnostic) <= threshold)
    });
    if failed {
        Outcome::NewDiagnostics
    } else if incomplete {
        Outcome::Incomplete
    } else {
        Outcome::Clean
    }
}

/// Drop from `files` the diagnostics below `severity` (`--severity`), keeping those
/// at or above `fail_on`'s level: a run never fails on what it does not list.
pub fn keep_severity(files: &mut [FileReport], severity: Severity, fail_on: FailOn) {
    let shown = match severity {
        Severity::Error => Level::Error,
        Severity::Warning => Level::Warning,
        Severity::Info => Level::Info,
        Severity::Hint => Level::Hint,
    };
    let failing = match fail_on {
        FailOn::Error => Level::Error,
        FailOn::Warning => Level::Warning,
        FailOn::Never => Level::Error,
    };
    let lowest = shown.max(failing);
    for file in files {
        file.diagnostics
            .retain(|reported| Level::of(&reported.diagnostic) <= lowest);
    }
}

/// The one-line outcome, as the summary's `New:` line prints it (also fit for a history
/// record): `New: 6 errors, 0 warnings, fixed 2 (edit applied; 2 files checked across
/// files in 0.41s)`.
pub fn summary_line(report: &Report) -> String {
    let new = Counts::of(
        report
            .files
            .iter()
            .flat_map(|file| listed(file, false))
            .map(|reported| &reported.diagnostic),
    );
    let fixed = if report.fixed > 0 {
        format!(", fixed {}", report.fixed)
    } else {
        String::new()
    };
    let state = if !report.is_edit {
        "no edit"
    } else if report.rejected {
        "edit rejected, not written"
    } else if report.dry_run {
        "dry run, not written"
    } else {
        "edit applied"
    };
    // The cross-file clause only when other files were checked: "0 files checked
    // across files" says nothing.
    let cross = if report.cross_files_checked > 0 {
        format!(
            "; {} checked across files in {:.2}s",
            plural(report.cross_files_checked, "file"),
            report.cross_file_secs
        )
    } else {
        String::new()
    };
    format!("New: {}{fixed} ({state}{cross})", new.phrase())
}

/// `1 error`, `2 errors`, `0 errors`.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// A diagnostic's severity as lspgate ranks and prints it. A missing severity is an
/// error (LSP leaves it to the client; an unknown one is treated the same way, so a
/// confused server cannot slip an error past `--fail-on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error,
    Warning,
    Info,
    Hint,
}

impl Level {
    pub fn of(diagnostic: &Diagnostic) -> Level {
        match diagnostic.severity {
            Some(DiagnosticSeverity::WARNING) => Level::Warning,
            Some(DiagnosticSeverity::INFORMATION) => Level::Info,
            Some(DiagnosticSeverity::HINT) => Level::Hint,
            _ => Level::Error,
        }
    }

    /// The text form's word.
    pub fn short_name(self) -> &'static str {
        match self {
            Level::Error => "Error",
            Level::Warning => "Warn",
            Level::Info => "Info",
            Level::Hint => "Hint",
        }
    }

    /// The JSON form's word, LSP's own names.
    pub fn lsp_name(self) -> &'static str {
        match self {
            Level::Error => "Error",
            Level::Warning => "Warning",
            Level::Info => "Information",
            Level::Hint => "Hint",
        }
    }
}

/// Errors and warnings among some diagnostics (the summary counts nothing else).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
}

impl Counts {
    pub fn of<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> Counts {
        let mut counts = Counts::default();
        for diagnostic in diagnostics {
            match Level::of(diagnostic) {
                Level::Error => counts.errors += 1,
                Level::Warning => counts.warnings += 1,
                Level::Info | Level::Hint => {}
            }
        }
        counts
    }

    /// `1 error, 0 warnings`. (The the contract's example wrote `1 errors`; issue 13 asked for
    /// English, and a script matches `[0-9]+ errors?,`.)
    pub fn phrase(self) -> String {
        format!(
            "{}, {}",
            plural(self.errors, "error"),
            plural(self.warnings, "warning")
        )
    }
}

/// What a run lists of one file: its new diagnostics (all of them with `all`), exact
/// duplicates dropped, ordered by severity, line, column (then message, so equal places
/// still print in a stable order).
pub fn listed(file: &FileReport, all: bool) -> Vec<&Reported> {
    let mut seen = std::collections::HashSet::new();
    let mut listed: Vec<&Reported> = file
        .diagnostics
        .iter()
        .filter(|reported| all || reported.new)
        .filter(|reported| seen.insert(Identity(&reported.diagnostic)))
        .collect();
    listed.sort_by(|a, b| order_key(&a.diagnostic).cmp(&order_key(&b.diagnostic)));
    listed
}

fn order_key(diagnostic: &Diagnostic) -> (Level, lsp_types::Position, &str) {
    (
        Level::of(diagnostic),
        diagnostic.range.start,
        diagnostic.message.as_str(),
    )
}

/// The same severity, source, code and message.
pub fn same_problem(a: &Diagnostic, b: &Diagnostic) -> bool {
    effective_severity(a.severity) == effective_severity(b.severity)
        && a.source == b.source
        && a.code == b.code
        && a.message == b.message
}

/// A missing severity is an error (see [`Level`]).
pub fn effective_severity(severity: Option<DiagnosticSeverity>) -> DiagnosticSeverity {
    severity.unwrap_or(DiagnosticSeverity::ERROR)
}

/// A diagnostic as far as a reader can tell it apart: where, how bad, from whom, what,
/// and its tags. Two diagnostics equal here print the same line; the rest (`data`,
/// related information) is the server's business.
#[derive(Debug, Clone, Copy)]
pub struct Identity<'a>(pub &'a Diagnostic);

impl PartialEq for Identity<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.range == other.0.range
            && same_problem(self.0, other.0)
            && self.0.tags == other.0.tags
    }
}

impl Eq for Identity<'_> {}

impl Hash for Identity<'_> {
    // A subset of what `eq` compares, which keeps equal values hashing equal;
    // `DiagnosticSeverity` and `DiagnosticTag` do not implement `Hash`.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.range.hash(state);
        self.0.message.hash(state);
    }
}

/// LSP's diagnostic tags and the words the report and the history give them.
const TAG_NAMES: [(DiagnosticTag, &str); 2] = [
    (DiagnosticTag::UNNECESSARY, "unnecessary"),
    (DiagnosticTag::DEPRECATED, "deprecated"),
];

/// The word of a tag LSP defines; `None` for anything else a server invents, which is
/// dropped.
pub fn tag_name(tag: &DiagnosticTag) -> Option<&'static str> {
    TAG_NAMES
        .iter()
        .find(|(known, _)| known == tag)
        .map(|(_, name)| *name)
}

/// The tag [`tag_name`] names `name`; `None` for any other word.
pub fn tag_from_name(name: &str) -> Option<DiagnosticTag> {
    TAG_NAMES
        .iter()
        .find(|(_, known)| *known == name)
        .map(|(tag, _)| tag.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_names_go_both_ways() {
        for (tag, name) in [
            (DiagnosticTag::UNNECESSARY, "unnecessary"),
            (DiagnosticTag::DEPRECATED, "deprecated"),
        ] {
            assert_eq!(tag_name(&tag), Some(name));
            assert_eq!(tag_from_name(name), Some(tag));
        }
        let invented: DiagnosticTag =
            serde_json::from_value(serde_json::json!(99)).expect("any number is a tag");
        assert_eq!(tag_name(&invented), None);
        assert_eq!(tag_from_name(""), None);
        assert_eq!(tag_from_name("Unnecessary"), None);
    }
}
