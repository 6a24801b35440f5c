//! Text rendering of a [`super::Report`] (docs/SPEC.md section 3): the `<file_diagnostics>`,
//! `<project_diagnostics>` and `<diagnostic_summary>` blocks, one diagnostic a line.
//! What is listed, in which order, is decided in [`super`]; this file lays it out.

use std::io::{self, Write};

use owo_colors::OwoColorize;

use super::RenderOptions;
use super::styles::Styles;
use crate::model::{
    Counts, FileReport, Level, Report, Reported, Role, ServerReport, ServerStatus, listed,
    summary_line,
};
use crate::paths;

/// Longest message printed, in characters; longer ones end in `…`.
pub const MAX_MESSAGE_CHARS: usize = 400;

/// Longest `note:` line, in characters: notes name files, and a run over thousands of
/// files must not print a line of hundreds of kilobytes.
pub const MAX_NOTE_CHARS: usize = 1000;

/// Write the text report: the non-empty diagnostic blocks, then the summary.
pub fn render(report: &Report, opts: &RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    let edited = entries(report, Role::Edited, opts.all);
    let dependent = entries(report, Role::Dependent, opts.all);

    for (tag, entries) in [
        ("file_diagnostics", &edited),
        ("project_diagnostics", &dependent),
    ] {
        if entries.is_empty() {
            continue;
        }
        writeln!(out, "<{tag}>")?;
        for entry in entries.iter().take(opts.max_entries) {
            writeln!(out, "{}", format_entry(entry, &opts.styles))?;
        }
        if entries.len() > opts.max_entries {
            writeln!(out, "... and {} more", entries.len() - opts.max_entries)?;
        }
        writeln!(out, "</{tag}>")?;
        writeln!(out)?;
    }

    let counts = |entries: &[Entry<'_>]| Counts::of(entries.iter().map(|e| &e.reported.diagnostic));
    writeln!(out, "<diagnostic_summary>")?;
    writeln!(out, "Current file: {}", counts(&edited).phrase())?;
    writeln!(out, "Project: {}", counts(&dependent).phrase())?;
    writeln!(out, "{}", summary_line(report))?;
    // Capped as the blocks are: a note a file can come thousands of times.
    for note in report.notes.iter().take(opts.max_entries) {
        let note = super::incomplete::note_text(note, &report.run_dir);
        writeln!(out, "note: {}", truncate(&one_line(&note), MAX_NOTE_CHARS))?;
    }
    if report.notes.len() > opts.max_entries {
        writeln!(
            out,
            "note: ... and {} more notes",
            report.notes.len() - opts.max_entries
        )?;
    }
    for server in &report.servers {
        if let Some(note) = server_note(server, &report.run_dir) {
            writeln!(out, "note: {}", one_line(&note))?;
        }
    }
    // In a monorepo, which packages each server checked: what the run covered.
    for server in report.servers.iter().filter(|s| !s.packages.is_empty()) {
        writeln!(
            out,
            "checked: {} at {} for packages {}",
            server.name,
            paths::display(&server.root, &report.run_dir),
            one_line(&server.packages.join(", "))
        )?;
    }
    writeln!(out, "</diagnostic_summary>")
}

/// One listed diagnostic with the path it prints under.
struct Entry<'a> {
    path: String,
    reported: &'a Reported,
}

/// Every listed diagnostic of the files in `role`, errors first, then by path, line and
/// column.
fn entries(report: &Report, role: Role, all: bool) -> Vec<Entry<'_>> {
    let mut entries: Vec<Entry<'_>> = report
        .files
        .iter()
        .filter(|file: &&FileReport| file.role == role)
        .flat_map(|file| {
            let path = paths::display(&file.path, &report.run_dir);
            listed(file, all).into_iter().map(move |reported| Entry {
                path: path.clone(),
                reported,
            })
        })
        .collect();
    fn key<'e>(e: &'e Entry<'_>) -> (Level, &'e str, lsp_types::Position, &'e str) {
        let d = &e.reported.diagnostic;
        (Level::of(d), &e.path, d.range.start, &d.message)
    }
    entries.sort_by(|a, b| key(a).cmp(&key(b)));
    // The same file reported twice (say, by two servers with the same source) would
    // list its diagnostics twice; `listed` only dedupes within one file.
    entries.dedup_by(|a, b| {
        a.path == b.path
            && crate::model::Identity(&a.reported.diagnostic)
                == crate::model::Identity(&b.reported.diagnostic)
    });
    entries
}

fn format_entry(entry: &Entry<'_>, styles: &Styles) -> String {
    diagnostic_line(&entry.path, &entry.reported.diagnostic, styles)
}

/// `Error: src/app.py:12:5 [Pyright][reportAttributeAccessIssue] (unnecessary) message`,
/// the line of one diagnostic in every text output (the report's blocks, `lspgate
/// diagnostics`). Lines and columns are 1-based; the column counts what the server
/// counts (UTF-16 code units by default), since the text it refers to is not at hand here.
pub fn diagnostic_line(path: &str, diagnostic: &lsp_types::Diagnostic, styles: &Styles) -> String {
    let level = Level::of(diagnostic);
    let style = match level {
        Level::Error => styles.error,
        Level::Warning => styles.warning,
        Level::Info => styles.info,
        Level::Hint => styles.hint,
    };
    let start = diagnostic.range.start;
    let mut line = format!(
        "{}: {}:{}:{}",
        level.short_name().style(style),
        path.style(styles.path),
        u64::from(start.line) + 1,
        u64::from(start.character) + 1,
    );
    if diagnostic.source.is_some() || diagnostic.code.is_some() {
        line.push(' ');
    }
    if let Some(source) = &diagnostic.source {
        line.push_str(&format!("[{}]", one_line(source)));
    }
    if let Some(code) = &diagnostic.code {
        let code = match code {
            lsp_types::NumberOrString::Number(number) => number.to_string(),
            lsp_types::NumberOrString::String(string) => one_line(string),
        };
        line.push_str(&format!("[{code}]"));
    }
    for tag in diagnostic.tags.iter().flatten() {
        if *tag == lsp_types::DiagnosticTag::UNNECESSARY {
            line.push_str(" (unnecessary)");
        } else if *tag == lsp_types::DiagnosticTag::DEPRECATED {
            line.push_str(" (deprecated)");
        }
    }
    line.push(' ');
    line.push_str(&truncate(&one_line(&diagnostic.message), MAX_MESSAGE_CHARS));
    line
}

/// Servers' messages span lines (pyright indents its explanations); one diagnostic must
/// stay one line, so each line is trimmed and they are joined with a space. Control
/// characters (a stray `\r`, escape sequences) become spaces so a server cannot redraw
/// the terminal.
pub fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `text` cut to `max` characters, with `…` when something was cut.
pub fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The `note:` a server's status calls for (without the `note: `), `None` when it is ok.
fn server_note(server: &ServerReport, run_dir: &std::path::Path) -> Option<String> {
    let default = match server.status {
        ServerStatus::Ok => return None,
        ServerStatus::Timeout => {
            "timed out before its files were settled; they may be incompletely checked"
        }
        ServerStatus::Missing => "not installed; its files were not checked",
        ServerStatus::Failed => "failed to start; its files were not checked",
        ServerStatus::Crashed => "crashed; its files were not fully checked",
    };
    let detail = super::incomplete::detail(&server.reasons, run_dir);
    let detail = detail.as_deref().unwrap_or(default);
    Some(format!("{}: {detail}", server.name))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use lsp_types::{DiagnosticSeverity, DiagnosticTag, NumberOrString};

    use super::*;
    use crate::model::fixtures::*;
    use crate::model::{Format, Note, Phase, ServerReason};

    fn options(all: bool, max_entries: usize, styles: Styles) -> RenderOptions {
        RenderOptions {
            format: Format::Text,
            all,
            max_entries,
            styles,
        }
    }

    fn render_with(report: &Report, opts: &RenderOptions) -> String {
        let mut out = Vec::new();
        render(report, opts, &mut out).expect("write to a Vec");
        String::from_utf8(out).expect("utf-8")
    }

    fn render_plain(report: &Report) -> String {
        render_with(report, &options(false, 20, Styles::plain()))
    }

    fn clean(is_edit: bool) -> Report {
        let mut report = spec_example();
        report.files = vec![file("/abs/root/src/app.py", Role::Edited, Vec::new())];
        report.is_edit = is_edit;
        report.cross_files_checked = 0;
        report.cross_file_secs = 0.0;
        report
    }

    #[test]
    fn spec_example_renders_exactly() {
        let report = spec_example();
        let expected = "\
<file_diagnostics>
Error: src/app.py:12:5 [Pyright][reportAttributeAccessIssue] Cannot access attribute \"nme\" for class \"User\"
</file_diagnostics>

<project_diagnostics>
Error: src/cli.py:3:21 [Pyright][reportCallIssue] Argument missing for parameter \"greeting\"
... and 4 more
</project_diagnostics>

<diagnostic_summary>
Current file: 1 error, 0 warnings
Project: 5 errors, 0 warnings
New: 6 errors, 0 warnings (edit applied; 2 files checked across files in 0.41s)
</diagnostic_summary>
";
        assert_eq!(
            render_with(&report, &options(false, 1, Styles::plain())),
            expected
        );
    }

    #[test]
    fn all_lists_old_diagnostics_too() {
        let report = spec_example();
        let text = render_with(&report, &options(true, 20, Styles::plain()));
        assert!(text.contains(
            "Warn: src/app.py:4:1 [Pyright][reportUnusedImport] Import \"os\" is not accessed\n"
        ));
        assert!(text.contains("Current file: 1 error, 1 warning\n"));
        // The New: line still counts only new diagnostics.
        assert!(text.contains("New: 6 errors, 0 warnings ("));
        assert!(!text.contains("... and"));
    }

    #[test]
    fn clean_run_prints_only_the_summary() {
        assert_eq!(
            render_plain(&clean(true)),
            "\
<diagnostic_summary>
Current file: 0 errors, 0 warnings
Project: 0 errors, 0 warnings
New: 0 errors, 0 warnings (edit applied)
</diagnostic_summary>
"
        );
        assert!(render_plain(&clean(false)).contains("(no edit)"));
    }

    #[test]
    fn fixed_and_notes_in_the_summary() {
        let mut report = clean(true);
        report.fixed = 2;
        report.notes = vec![Note::Info(
            "src/b.py was not checked:\n  no server answered".to_owned(),
        )];
        report.servers = vec![
            ServerReport {
                name: "pyright".to_owned(),
                status: ServerStatus::Timeout,
                primary_ms: Some(5000),
                cross_file_ms: None,
                reasons: vec![ServerReason::TimedOut {
                    server: "pyright".to_owned(),
                    phase: Phase::Primary,
                    limit_ms: 5000,
                    why: None,
                    files: vec![PathBuf::from("/abs/root/src/a.py")],
                }],
                root: PathBuf::from("/abs/root"),
                packages: Vec::new(),
                before: crate::model::BeforeView::Server,
            },
            ServerReport {
                name: "gopls".to_owned(),
                status: ServerStatus::Missing,
                primary_ms: None,
                cross_file_ms: None,
                reasons: Vec::new(),
                root: PathBuf::from("/abs/root"),
                packages: Vec::new(),
                before: crate::model::BeforeView::Server,
            },
            server_ok(),
        ];
        report.skipped = vec![PathBuf::from("/abs/root/README.md")];
        assert_eq!(
            render_plain(&report),
            "\
<diagnostic_summary>
Current file: 0 errors, 0 warnings
Project: 0 errors, 0 warnings
New: 0 errors, 0 warnings, fixed 2 (edit applied)
note: src/b.py was not checked: no server answered
note: pyright: timed out after 5s; not checked: src/a.py
note: gopls: not installed; its files were not checked
</diagnostic_summary>
"
        );
    }

    #[test]
    fn notes_are_capped_like_the_blocks() {
        let mut report = clean(true);
        report.notes = (0..25)
            .map(|i| Note::Info(format!("f{i}.bin: not UTF-8 text, not checked")))
            .collect();
        report.notes[0] = Note::Info("x".repeat(5000));
        let text = render_plain(&report);
        let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("note: ")).collect();
        assert_eq!(notes.len(), 21, "{text}");
        assert_eq!(
            notes[0].chars().count(),
            "note: ".len() + MAX_NOTE_CHARS + 1
        );
        assert!(notes[0].ends_with('…'));
        assert_eq!(notes[19], "note: f19.bin: not UTF-8 text, not checked");
        assert_eq!(notes[20], "note: ... and 5 more notes");
    }

    #[test]
    fn ordering_dedupe_and_more() {
        let mut report = clean(true);
        let hint = diag(DiagnosticSeverity::HINT, 0, 0, "hint");
        let info = diag(DiagnosticSeverity::INFORMATION, 0, 0, "info");
        let warn = diag(DiagnosticSeverity::WARNING, 0, 0, "warn");
        let mut no_severity = diag(DiagnosticSeverity::ERROR, 9, 0, "no severity");
        no_severity.severity = None;
        report.files = vec![
            file(
                "/abs/root/src/b.py",
                Role::Edited,
                vec![
                    reported(hint, true),
                    reported(diag(DiagnosticSeverity::ERROR, 3, 2, "b late"), true),
                    reported(diag(DiagnosticSeverity::ERROR, 3, 1, "b early col"), true),
                    reported(diag(DiagnosticSeverity::ERROR, 3, 1, "b early col"), true),
                ],
            ),
            file(
                "/abs/root/src/a.py",
                Role::Edited,
                vec![
                    reported(warn, true),
                    reported(info, true),
                    reported(diag(DiagnosticSeverity::ERROR, 7, 0, "a"), true),
                    reported(no_severity, true),
                ],
            ),
        ];
        let text = render_with(&report, &options(false, 6, Styles::plain()));
        let block: Vec<&str> = text.lines().take(8).collect();
        assert_eq!(
            block,
            [
                "<file_diagnostics>",
                "Error: src/a.py:8:1 [Pyright] a",
                "Error: src/a.py:10:1 [Pyright] no severity",
                "Error: src/b.py:4:2 [Pyright] b early col",
                "Error: src/b.py:4:3 [Pyright] b late",
                "Warn: src/a.py:1:1 [Pyright] warn",
                "Info: src/a.py:1:1 [Pyright] info",
                "... and 1 more",
            ]
        );
        assert!(text.contains("Current file: 4 errors, 1 warning\n"));
        assert!(!text.contains("<project_diagnostics>"));
    }

    #[test]
    fn source_code_and_tags() {
        let mut report = clean(true);
        let mut no_source = diag(DiagnosticSeverity::ERROR, 0, 0, "no source");
        no_source.source = None;
        no_source.code = Some(NumberOrString::Number(2304));
        let mut bare = diag(DiagnosticSeverity::ERROR, 1, 0, "bare");
        bare.source = None;
        let mut tagged = with_code(
            diag(DiagnosticSeverity::HINT, 2, 0, "\"os\" is not accessed"),
            "reportUnusedImport",
        );
        tagged.tags = Some(vec![DiagnosticTag::UNNECESSARY, DiagnosticTag::DEPRECATED]);
        report.files[0].diagnostics = vec![
            reported(no_source, true),
            reported(bare, true),
            reported(tagged, true),
        ];
        let text = render_plain(&report);
        assert!(text.contains("\nError: src/app.py:1:1 [2304] no source\n"));
        assert!(text.contains("\nError: src/app.py:2:1 bare\n"));
        assert!(text.contains(
            "\nHint: src/app.py:3:1 [Pyright][reportUnusedImport] (unnecessary) (deprecated) \"os\" is not accessed\n"
        ));
    }

    #[test]
    fn long_and_multi_line_messages() {
        let mut report = clean(true);
        let long = "x".repeat(MAX_MESSAGE_CHARS + 50);
        let exact = "é".repeat(MAX_MESSAGE_CHARS);
        let multi =
            "Argument of type \"int\" cannot be assigned\n  \"int\" is not \"str\"\r\n\x1b[31m";
        report.files[0].diagnostics = vec![
            reported(diag(DiagnosticSeverity::ERROR, 0, 0, &long), true),
            reported(diag(DiagnosticSeverity::ERROR, 1, 0, &exact), true),
            reported(diag(DiagnosticSeverity::ERROR, 2, 0, multi), true),
        ];
        let text = render_plain(&report);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            format!(
                "Error: src/app.py:1:1 [Pyright] {}…",
                "x".repeat(MAX_MESSAGE_CHARS)
            )
        );
        assert_eq!(lines[2], format!("Error: src/app.py:2:1 [Pyright] {exact}"));
        assert_eq!(
            lines[3],
            "Error: src/app.py:3:1 [Pyright] Argument of type \"int\" cannot be assigned \"int\" is not \"str\"  [31m"
        );
    }

    #[test]
    fn paths_relative_to_the_run_dir() {
        let mut report = spec_example();
        report.run_dir = PathBuf::from("/abs/root/src/sub");
        report.files.push(file(
            "/elsewhere/lib.py",
            Role::Dependent,
            vec![reported(diag(DiagnosticSeverity::ERROR, 0, 0, "far"), true)],
        ));
        let text = render_plain(&report);
        assert!(text.contains("Error: ../app.py:12:5 "));
        assert!(text.contains("Error: ../cli.py:3:21 "));
        assert!(text.contains("Error: /elsewhere/lib.py:1:1 [Pyright] far\n"));
    }

    #[test]
    fn colour_changes_only_escapes() {
        let mut report = spec_example();
        report.files[1].diagnostics.push(reported(
            diag(DiagnosticSeverity::WARNING, 0, 0, "warn"),
            true,
        ));
        report.files[1]
            .diagnostics
            .push(reported(diag(DiagnosticSeverity::HINT, 0, 0, "hint"), true));
        let plain = render_with(&report, &options(false, 20, Styles::plain()));
        let coloured = render_with(&report, &options(false, 20, Styles::colorized()));
        assert!(!plain.contains('\x1b'));
        assert!(coloured.contains("\x1b["));
        assert_ne!(plain, coloured);
        assert_eq!(strip_ansi(&coloured), plain);
    }

    /// Remove `ESC [ ... m` sequences.
    fn strip_ansi(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn truncate_counts_characters() {
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("abcd", 3), "abc…");
        assert_eq!(truncate("ééé", 2), "éé…");
    }
}
