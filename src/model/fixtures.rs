//! Hand-built reports for the tests of the renderers and the history.

use std::path::PathBuf;

use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range};

use crate::model::{
    Action, Applied, FileReport, Report, Reported, Role, ServerReport, ServerStatus,
};

pub fn diag(severity: DiagnosticSeverity, line: u32, character: u32, message: &str) -> Diagnostic {
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
        reasons: Vec::new(),
        root: PathBuf::from("/abs/root"),
        packages: Vec::new(),
        before: crate::model::BeforeView::Server,
    }
}

/// The docs/SPEC.md section 3 example run.
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
        outcome: crate::exit::Outcome::NewDiagnostics,
        seen: None,
    }
}
