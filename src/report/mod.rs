//! The report: the single output model of a run, and the only code that writes to
//! stdout (text blocks or JSON).
//!
//! Besides the model, this module owns what both renderings share: which diagnostics a
//! run lists (new only, or all with `--all`), in which order, how paths print, how
//! severities count, and the exit status they imply. [`text`] and [`json`] lay them out.

use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use lsp_types::{Diagnostic, DiagnosticSeverity};

use crate::cli::{FailOn, Format};
use crate::diff::Identity;
use crate::edit::Action;
use crate::exit;

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
    /// Why the status is not `Ok`, for a `note:` line.
    pub detail: Option<String>,
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

impl Report {
    /// Whether something the run needed went unchecked: a server was missing, failed or
    /// crashed, or a wait ran out (exit status 3 when nothing new was found).
    pub fn incomplete(&self) -> bool {
        self.timed_out
            || self
                .servers
                .iter()
                .any(|server| server.status != ServerStatus::Ok)
    }
}

pub mod daemon;
pub mod history;
pub mod json;
pub mod progress;
pub mod servers;
pub mod styles;
pub mod text;

/// How to print a report.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    pub format: Format,
    /// List every diagnostic of the checked files, not only the new ones.
    pub all: bool,
    /// Entries per text block; the rest is counted in a `... and N more` line.
    pub max_entries: usize,
    /// Used by text only: JSON is never coloured.
    pub styles: styles::Styles,
}

/// Write the report to `out`: text blocks, or one JSON object on one line.
pub fn render(report: &Report, opts: &RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    match opts.format {
        Format::Text => text::render(report, opts, out),
        Format::Json => json::render(report, opts.all, out),
    }
}

/// Print the report on stdout, and in text form the human notes that SPEC section 3
/// sends to stderr (skipped files). A closed stdout (`lspgate ... | head`) is not an
/// error: the exit status still tells the caller what it needs.
pub fn print(report: &Report, opts: &RenderOptions) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    ignore_broken_pipe(render(report, opts, &mut out).and_then(|()| out.flush()))?;
    if opts.format == Format::Text {
        let stderr = io::stderr();
        let mut err = stderr.lock();
        ignore_broken_pipe(render_stderr_notes(report, opts.max_entries, &mut err))?;
    }
    Ok(())
}

fn ignore_broken_pipe(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The notes that are not part of the report proper: files no server covers. They go
/// to stderr (SPEC section 3) because skipping them is expected, not a gap in the check.
/// The list names at most `max_entries` files (`--max-entries`, as the blocks) and
/// counts the rest.
pub fn render_stderr_notes(
    report: &Report,
    max_entries: usize,
    err: &mut dyn Write,
) -> io::Result<()> {
    if report.skipped.is_empty() {
        return Ok(());
    }
    let mut paths: Vec<String> = report
        .skipped
        .iter()
        .take(max_entries)
        .map(|path| display_path(path, &report.run_dir))
        .collect();
    if report.skipped.len() > max_entries {
        paths.push(format!(
            "... and {} more",
            report.skipped.len() - max_entries
        ));
    }
    writeln!(err, "note: skipped (no server): {}", paths.join(", "))
}

/// The exit status the diagnostics imply (SPEC section 4, without bad input, which never
/// reaches a report): 1 if a new diagnostic is at or above `fail_on`, else 3 if the check
/// was `incomplete`, else 0.
pub fn exit_code(report_files: &[FileReport], fail_on: FailOn, incomplete: bool) -> i32 {
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
        exit::NEW_DIAGNOSTICS
    } else if incomplete {
        exit::INCOMPLETE
    } else {
        exit::OK
    }
}

/// Drop from `files` the diagnostics below `severity` (`--severity`), keeping those
/// at or above `fail_on`'s level: a run never fails on what it does not list.
pub fn keep_severity(files: &mut [FileReport], severity: crate::cli::Severity, fail_on: FailOn) {
    use crate::cli::Severity;
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

    /// `1 error, 0 warnings`. (The SPEC's example wrote `1 errors`; issue 13 asked for
    /// English, and a script matches `[0-9]+ errors?,`.)
    fn phrase(self) -> String {
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

/// `path` as the user should read it: relative to `run_dir`, with `../` when it lies
/// outside; absolute when the two share nothing but the root (`/usr/lib/...` reads
/// better than `../../../usr/lib/...`) or lie on different roots (Windows drives).
pub fn display_path(path: &Path, run_dir: &Path) -> String {
    if path.is_relative() {
        return path.display().to_string();
    }
    let mut path_components = path.components().peekable();
    let mut dir_components = run_dir.components().peekable();
    let mut shared_normal = false;
    while let (Some(a), Some(b)) = (path_components.peek(), dir_components.peek()) {
        if a != b {
            break;
        }
        shared_normal |= matches!(a, Component::Normal(_));
        path_components.next();
        dir_components.next();
    }
    if !shared_normal {
        return path.display().to_string();
    }
    let mut relative = PathBuf::new();
    for _ in dir_components {
        relative.push("..");
    }
    relative.extend(path_components);
    if relative.as_os_str().is_empty() {
        ".".to_owned()
    } else {
        relative.display().to_string()
    }
}

/// Orders files for output: edited before dependent, then by the path as printed.
fn file_order_key(file: &FileReport, run_dir: &Path) -> (bool, String) {
    (
        file.role == Role::Dependent,
        display_path(&file.path, run_dir),
    )
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! Hand-built reports for the rendering tests.

    use std::path::PathBuf;

    use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range};

    use super::*;

    pub fn diag(
        severity: DiagnosticSeverity,
        line: u32,
        character: u32,
        message: &str,
    ) -> Diagnostic {
        Diagnostic {
            range: Range {
                start: Position { line, character },
                end: Position {
                    line,
                    character: character + 7,
                },
            },
            severity: Some(severity),
            source: Some("Pyright".to_owned()),
            message: message.to_owned(),
            ..Diagnostic::default()
        }
    }

    pub fn with_code(mut diagnostic: Diagnostic, code: &str) -> Diagnostic {
        diagnostic.code = Some(NumberOrString::String(code.to_owned()));
        diagnostic
    }

    pub fn reported(diagnostic: Diagnostic, new: bool) -> Reported {
        Reported::new(diagnostic, new)
    }

    pub fn file(path: &str, role: Role, diagnostics: Vec<Reported>) -> FileReport {
        FileReport {
            path: PathBuf::from(path),
            role,
            diagnostics,
        }
    }

    pub fn server_ok() -> ServerReport {
        ServerReport {
            name: "pyright".to_owned(),
            status: ServerStatus::Ok,
            primary_ms: Some(180),
            cross_file_ms: Some(230),
            detail: None,
        }
    }

    /// The SPEC section 3 example run.
    pub fn spec_example() -> Report {
        let project = (0..5)
            .map(|i| {
                let d = if i == 0 {
                    with_code(
                        diag(
                            DiagnosticSeverity::ERROR,
                            2,
                            20,
                            "Argument missing for parameter \"greeting\"",
                        ),
                        "reportCallIssue",
                    )
                } else {
                    with_code(
                        diag(
                            DiagnosticSeverity::ERROR,
                            10 + i,
                            4,
                            "Argument missing for parameter \"greeting\"",
                        ),
                        "reportCallIssue",
                    )
                };
                reported(d, true)
            })
            .collect();
        Report {
            workspace: PathBuf::from("/abs/root"),
            run_dir: PathBuf::from("/abs/root"),
            applied: vec![Applied {
                path: PathBuf::from("/abs/root/src/app.py"),
                action: Action::Modified,
            }],
            dry_run: false,
            rejected: false,
            is_edit: true,
            files: vec![
                file("/abs/root/src/cli.py", Role::Dependent, project),
                file(
                    "/abs/root/src/app.py",
                    Role::Edited,
                    vec![
                        reported(
                            with_code(
                                diag(
                                    DiagnosticSeverity::ERROR,
                                    11,
                                    4,
                                    "Cannot access attribute \"nme\" for class \"User\"",
                                ),
                                "reportAttributeAccessIssue",
                            ),
                            true,
                        ),
                        reported(
                            with_code(
                                diag(
                                    DiagnosticSeverity::WARNING,
                                    3,
                                    0,
                                    "Import \"os\" is not accessed",
                                ),
                                "reportUnusedImport",
                            ),
                            false,
                        ),
                    ],
                ),
            ],
            fixed: 0,
            servers: vec![server_ok()],
            notes: Vec::new(),
            skipped: Vec::new(),
            cross_files_checked: 2,
            cross_file_secs: 0.41,
            timed_out: false,
            exit_code: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use lsp_types::DiagnosticSeverity;

    use super::fixtures::*;
    use super::*;

    #[test]
    fn relative_paths() {
        let run_dir = Path::new("/work/proj/src");
        assert_eq!(
            display_path(Path::new("/work/proj/src/a.py"), run_dir),
            "a.py"
        );
        assert_eq!(
            display_path(Path::new("/work/proj/lib/b.py"), run_dir),
            "../lib/b.py"
        );
        assert_eq!(
            display_path(Path::new("/work/other/c.py"), run_dir),
            "../../other/c.py"
        );
        assert_eq!(
            display_path(Path::new("/usr/lib/d.pyi"), run_dir),
            "/usr/lib/d.pyi"
        );
        assert_eq!(display_path(Path::new("/work/proj/src"), run_dir), ".");
        assert_eq!(display_path(Path::new("rel/e.py"), run_dir), "rel/e.py");
    }

    #[test]
    fn listed_filters_dedupes_and_orders() {
        let warning = diag(DiagnosticSeverity::WARNING, 0, 0, "w");
        let early_error = diag(DiagnosticSeverity::ERROR, 1, 0, "e1");
        let late_error = diag(DiagnosticSeverity::ERROR, 5, 2, "e2");
        let old = diag(DiagnosticSeverity::ERROR, 0, 0, "old");
        let file = file(
            "/p/a.py",
            Role::Edited,
            vec![
                reported(warning.clone(), true),
                reported(late_error.clone(), true),
                reported(early_error.clone(), true),
                reported(late_error.clone(), true),
                reported(old.clone(), false),
            ],
        );
        let messages = |all| -> Vec<String> {
            listed(&file, all)
                .iter()
                .map(|r| r.diagnostic.message.clone())
                .collect()
        };
        assert_eq!(messages(false), ["e1", "e2", "w"]);
        assert_eq!(messages(true), ["old", "e1", "e2", "w"]);
    }

    #[test]
    fn exit_codes() {
        let error = |new| {
            vec![file(
                "/p/a.py",
                Role::Edited,
                vec![reported(diag(DiagnosticSeverity::ERROR, 0, 0, "e"), new)],
            )]
        };
        let warning = vec![file(
            "/p/a.py",
            Role::Dependent,
            vec![reported(diag(DiagnosticSeverity::WARNING, 0, 0, "w"), true)],
        )];
        let mut no_severity = error(true);
        no_severity[0].diagnostics[0].diagnostic.severity = None;

        assert_eq!(
            exit_code(&error(true), FailOn::Error, false),
            exit::NEW_DIAGNOSTICS
        );
        assert_eq!(
            exit_code(&error(true), FailOn::Error, true),
            exit::NEW_DIAGNOSTICS
        );
        assert_eq!(
            exit_code(&no_severity, FailOn::Error, false),
            exit::NEW_DIAGNOSTICS
        );
        assert_eq!(exit_code(&error(false), FailOn::Error, false), exit::OK);
        assert_eq!(
            exit_code(&error(false), FailOn::Error, true),
            exit::INCOMPLETE
        );
        assert_eq!(exit_code(&error(true), FailOn::Never, false), exit::OK);
        assert_eq!(
            exit_code(&error(true), FailOn::Never, true),
            exit::INCOMPLETE
        );
        assert_eq!(exit_code(&warning, FailOn::Error, false), exit::OK);
        assert_eq!(
            exit_code(&warning, FailOn::Warning, false),
            exit::NEW_DIAGNOSTICS
        );
        assert_eq!(exit_code(&[], FailOn::Warning, false), exit::OK);
    }

    #[test]
    fn incomplete_when_a_server_was_not_ok() {
        let mut report = spec_example();
        assert!(!report.incomplete());
        report.servers[0].status = ServerStatus::Crashed;
        assert!(report.incomplete());
        report.servers[0].status = ServerStatus::Ok;
        report.timed_out = true;
        assert!(report.incomplete());
    }

    #[test]
    fn summary_line_states() {
        let mut report = spec_example();
        assert_eq!(
            summary_line(&report),
            "New: 6 errors, 0 warnings (edit applied; 2 files checked across files in 0.41s)"
        );
        report.fixed = 2;
        report.dry_run = true;
        assert_eq!(
            summary_line(&report),
            "New: 6 errors, 0 warnings, fixed 2 (dry run, not written; 2 files checked across files in 0.41s)"
        );
        report.rejected = true;
        assert!(summary_line(&report).contains("(edit rejected, not written;"));
        report.is_edit = false;
        assert!(summary_line(&report).contains("(no edit;"));
    }

    #[test]
    fn skipped_files_go_to_stderr_notes() {
        let mut report = spec_example();
        let mut err = Vec::new();
        render_stderr_notes(&report, 20, &mut err).expect("write to a Vec");
        assert!(err.is_empty());
        report.skipped = vec![
            PathBuf::from("/abs/root/README.md"),
            PathBuf::from("/abs/root/docs/a.yaml"),
        ];
        render_stderr_notes(&report, 20, &mut err).expect("write to a Vec");
        assert_eq!(
            String::from_utf8(err).expect("utf-8"),
            "note: skipped (no server): README.md, docs/a.yaml\n"
        );
        // Capped as the blocks are (issue 10: 10,000 files made a 198 KB line).
        let mut err = Vec::new();
        render_stderr_notes(&report, 1, &mut err).expect("write to a Vec");
        assert_eq!(
            String::from_utf8(err).expect("utf-8"),
            "note: skipped (no server): README.md, ... and 1 more\n"
        );
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(0, "error"), "0 errors");
        assert_eq!(plural(1, "error"), "1 error");
        assert_eq!(plural(2, "file"), "2 files");
        let counts = Counts {
            errors: 1,
            warnings: 1,
        };
        assert_eq!(counts.phrase(), "1 error, 1 warning");
    }

    /// --severity hides what is below it from the blocks, but never a diagnostic
    /// at --fail-on: a run does not fail on what it does not list.
    #[test]
    fn severity_hides_below_it_but_not_what_fails() {
        use crate::cli::Severity;
        let levels = |files: &[FileReport]| -> Vec<Level> {
            files[0]
                .diagnostics
                .iter()
                .map(|r| Level::of(&r.diagnostic))
                .collect()
        };
        let all = || {
            vec![file(
                "/w/a.py",
                Role::Edited,
                [
                    DiagnosticSeverity::ERROR,
                    DiagnosticSeverity::WARNING,
                    DiagnosticSeverity::INFORMATION,
                    DiagnosticSeverity::HINT,
                ]
                .into_iter()
                .map(|s| reported(diag(s, 1, 0, "m"), true))
                .collect(),
            )]
        };
        let mut files = all();
        keep_severity(&mut files, Severity::Hint, FailOn::Error);
        assert_eq!(levels(&files).len(), 4);
        let mut files = all();
        keep_severity(&mut files, Severity::Warning, FailOn::Error);
        assert_eq!(levels(&files), [Level::Error, Level::Warning]);
        let mut files = all();
        keep_severity(&mut files, Severity::Error, FailOn::Never);
        assert_eq!(levels(&files), [Level::Error]);
        let mut files = all();
        keep_severity(&mut files, Severity::Error, FailOn::Warning);
        assert_eq!(levels(&files), [Level::Error, Level::Warning]);
    }
}
