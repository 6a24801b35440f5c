//! The renderers: the only code that writes to stdout. They read the plain data of
//! `model` (a run's [`Report`], the history's runs, the daemon's answers, the servers'
//! doctor) and lay it out as text blocks or JSON; [`text`] and [`json`] for a run.

use std::io::{self, Write};
use std::path::Path;

use crate::model::{FileReport, Format, Report, Role};
use crate::paths;

pub mod daemon;
pub mod history;
pub mod incomplete;
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

/// Print the report on stdout, and in text form the human notes that docs/SPEC.md section 3
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
/// to stderr (docs/SPEC.md section 3) because skipping them is expected, not a gap in the check.
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
        .map(|path| paths::display(path, &report.run_dir))
        .collect();
    if report.skipped.len() > max_entries {
        paths.push(format!(
            "... and {} more",
            report.skipped.len() - max_entries
        ));
    }
    writeln!(err, "note: skipped (no server): {}", paths.join(", "))
}

/// Orders files for output: edited before dependent, then by the path as printed.
fn file_order_key(file: &FileReport, run_dir: &Path) -> (bool, String) {
    (
        file.role == Role::Dependent,
        paths::display(&file.path, run_dir),
    )
}

#[cfg(test)]
mod tests {
    use lsp_types::DiagnosticSeverity;

    use super::*;
    use crate::exit::Outcome;
    use crate::model::fixtures::*;
    use std::path::PathBuf;

    use crate::model::{
        Counts, FailOn, Level, Note, RunReason, ServerReason, ServerStatus, keep_severity, listed,
        outcome, plural, summary_line,
    };

    #[test]
    fn relative_paths() {
        let run_dir = Path::new("/work/proj/src");
        assert_eq!(
            paths::display(Path::new("/work/proj/src/a.py"), run_dir),
            "a.py"
        );
        assert_eq!(
            paths::display(Path::new("/work/proj/lib/b.py"), run_dir),
            "../lib/b.py"
        );
        assert_eq!(
            paths::display(Path::new("/work/other/c.py"), run_dir),
            "../../other/c.py"
        );
        assert_eq!(
            paths::display(Path::new("/usr/lib/d.pyi"), run_dir),
            "/usr/lib/d.pyi"
        );
        assert_eq!(paths::display(Path::new("/work/proj/src"), run_dir), ".");
        assert_eq!(paths::display(Path::new("rel/e.py"), run_dir), "rel/e.py");
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
    fn outcomes() {
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
            outcome(&error(true), FailOn::Error, false),
            Outcome::NewDiagnostics
        );
        assert_eq!(
            outcome(&error(true), FailOn::Error, true),
            Outcome::NewDiagnostics
        );
        assert_eq!(
            outcome(&no_severity, FailOn::Error, false),
            Outcome::NewDiagnostics
        );
        assert_eq!(outcome(&error(false), FailOn::Error, false), Outcome::Clean);
        assert_eq!(
            outcome(&error(false), FailOn::Error, true),
            Outcome::Incomplete
        );
        assert_eq!(outcome(&error(true), FailOn::Never, false), Outcome::Clean);
        assert_eq!(
            outcome(&error(true), FailOn::Never, true),
            Outcome::Incomplete
        );
        assert_eq!(outcome(&warning, FailOn::Error, false), Outcome::Clean);
        assert_eq!(
            outcome(&warning, FailOn::Warning, false),
            Outcome::NewDiagnostics
        );
        assert_eq!(outcome(&[], FailOn::Warning, false), Outcome::Clean);
    }

    #[test]
    fn incomplete_when_it_has_a_reason() {
        let mut report = spec_example();
        assert!(!report.incomplete());
        // What is said for information does not make it incomplete.
        report.notes.push(Note::Info("restarted".to_owned()));
        assert!(!report.incomplete());
        // A server's reason does, as does a note's.
        report.servers[0].status = ServerStatus::Crashed;
        report.servers[0].reasons.push(ServerReason::Crashed {
            server: "pyright".to_owned(),
            message: "exited".to_owned(),
            initialized: true,
            again: false,
            files: Vec::new(),
        });
        assert!(report.incomplete());
        report.servers[0] = crate::model::fixtures::server_ok();
        assert!(!report.incomplete());
        report.notes.push(Note::Incomplete(RunReason::NoBaseline));
        assert!(report.incomplete());
        report.files.clear();
        report.decide_outcome(FailOn::Error);
        assert_eq!(report.outcome, Outcome::Incomplete);
        assert_eq!(report.incomplete_reasons().count(), 1);
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
        use crate::model::Severity;
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
