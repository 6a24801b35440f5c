//! `lspgate history` on stdout: the list of runs and one run with its diagnostics, as
//! text or JSON. The records come from `crate::history`; this file only lays them out.
//!
//! Text: one run a line, newest first (`ID  STARTED  COMMAND  EXIT  SUMMARY`); one run
//! as a few `Key: value` lines, then its diagnostics as the report prints them, new ones
//! marked. JSON: `{"schema": 1, "workspace": ..., "runs": [RUN...]}` for a list, and
//! `{"schema": 1, "run": RUN}` for one run, where RUN has the keys of [`JsonRun`] and,
//! for one run, `diagnostics`. With the gate (`--last`), one run also has `gate` (the
//! exit status), `outstanding` (the breaks: `diagnostics`' keys and the `run` that
//! found each) and, when it holds the gate, `unsettled_run`; the text ends with the
//! outstanding breaks and a `gate: N (why)` line. Times are UTC, `2026-05-01T10:22:03Z`, and in
//! milliseconds since the Unix epoch; paths relative to the run directory of the
//! `history` command, as in reports.

use std::io::{self, Write};
use std::path::Path;

use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range};
use serde::Serialize;

use super::styles::Styles;
use super::text::{diagnostic_line, one_line};
use crate::history::{Gate, Run, StoredDiagnostic};
use crate::model::Format;
use crate::model::tag_name;
use crate::paths;

/// Bumped when a key changes meaning or disappears.
pub const SCHEMA: u32 = 1;

/// How to show history.
pub struct View<'a> {
    /// Paths print relative to this directory.
    pub run_dir: &'a Path,
    pub format: Format,
}

#[derive(Serialize)]
struct JsonList<'a> {
    schema: u32,
    workspace: String,
    runs: Vec<JsonRun<'a>>,
}

#[derive(Serialize)]
struct JsonOne<'a> {
    schema: u32,
    run: JsonRun<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gate: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outstanding: Option<Vec<JsonBreak<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unsettled_run: Option<i64>,
}

#[derive(Serialize)]
struct JsonBreak<'a> {
    run: i64,
    #[serde(flatten)]
    diagnostic: JsonDiagnostic<'a>,
}

#[derive(Serialize)]
struct JsonRun<'a> {
    id: i64,
    started_at: String,
    started_at_ms: i64,
    duration_ms: i64,
    command: &'a str,
    args: &'a [String],
    workspace: String,
    run_dir: String,
    files: Vec<JsonFile<'a>>,
    exit_code: i32,
    summary: &'a str,
    dry_run: bool,
    rejected: bool,
    /// False for a run recorded as started that never recorded its outcome.
    completed: bool,
    new_errors: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnostics: Option<Vec<JsonDiagnostic<'a>>>,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    path: String,
    action: &'a str,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    path: String,
    role: &'a str,
    line: u32,
    column: u32,
    severity: &'a str,
    code: Option<&'a str>,
    source: Option<&'a str>,
    message: &'a str,
    new: bool,
    /// As in the report's JSON: only when tagged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<&'static str>,
}

fn json_run<'a>(run: &'a Run, view: &View<'_>, with_diagnostics: bool) -> JsonRun<'a> {
    JsonRun {
        id: run.id,
        started_at: utc(run.started_at_ms),
        started_at_ms: run.started_at_ms,
        duration_ms: run.duration_ms,
        command: &run.command,
        args: &run.args,
        workspace: run.workspace.display().to_string(),
        run_dir: run.run_dir.display().to_string(),
        files: run
            .files
            .iter()
            .map(|f| JsonFile {
                path: paths::display_raw(&f.path, view.run_dir),
                action: &f.action,
            })
            .collect(),
        exit_code: run.exit_code,
        summary: &run.summary,
        dry_run: run.dry_run,
        rejected: run.rejected,
        completed: run.completed,
        new_errors: run.new_errors,
        diagnostics: with_diagnostics.then(|| {
            run.diagnostics
                .iter()
                .map(|d| json_diagnostic(d, view))
                .collect()
        }),
    }
}

fn json_diagnostic<'a>(d: &'a StoredDiagnostic, view: &View<'_>) -> JsonDiagnostic<'a> {
    JsonDiagnostic {
        path: paths::display_raw(&d.path, view.run_dir),
        role: &d.role,
        line: d.line,
        column: d.column,
        severity: &d.severity,
        code: d.code.as_deref(),
        source: d.source.as_deref(),
        message: &d.message,
        new: d.new,
        tags: d.tags.iter().filter_map(tag_name).collect(),
    }
}

/// Print the list of runs. An empty history prints nothing in text (and says so on
/// stderr), an empty `runs` list in JSON.
pub fn print_list(runs: &[Run], workspace: &Path, view: &View<'_>) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = render_list(runs, workspace, view, &mut out).and_then(|()| out.flush());
    super::ignore_broken_pipe(result)?;
    if runs.is_empty() && view.format == Format::Text {
        let mut err = io::stderr().lock();
        writeln!(err, "note: no runs recorded for {}", workspace.display())?;
    }
    Ok(())
}

/// Print one run with its diagnostics, and the gate when it is the last.
pub fn print_run(run: &Run, gate: Option<&Gate>, view: &View<'_>) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = render_run(run, gate, view, &mut out).and_then(|()| out.flush());
    super::ignore_broken_pipe(result)
}

pub fn render_list(
    runs: &[Run],
    workspace: &Path,
    view: &View<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    if view.format == Format::Json {
        let list = JsonList {
            schema: SCHEMA,
            workspace: workspace.display().to_string(),
            runs: runs.iter().map(|r| json_run(r, view, false)).collect(),
        };
        serde_json::to_writer(&mut *out, &list).map_err(io::Error::from)?;
        return writeln!(out);
    }
    if runs.is_empty() {
        return Ok(());
    }
    let id_width = runs
        .iter()
        .map(|r| r.id.to_string().len())
        .max()
        .unwrap_or(2)
        .max(2);
    let command_width = runs
        .iter()
        .map(|r| r.command.len())
        .max()
        .unwrap_or(7)
        .max(7);
    writeln!(
        out,
        "{:>id_width$}  {:<20}  {:<command_width$}  EXIT  SUMMARY",
        "ID", "STARTED", "COMMAND"
    )?;
    for run in runs {
        writeln!(
            out,
            "{:>id_width$}  {:<20}  {:<command_width$}  {:>4}  {}",
            run.id,
            utc(run.started_at_ms),
            run.command,
            run.exit_code,
            one_line(&run.summary)
        )?;
    }
    Ok(())
}

pub fn render_run(
    run: &Run,
    gate: Option<&Gate>,
    view: &View<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    if view.format == Format::Json {
        let one = JsonOne {
            schema: SCHEMA,
            run: json_run(run, view, true),
            gate: gate.map(|g| crate::exit::status(g.outcome)),
            outstanding: gate.map(|g| {
                g.outstanding
                    .iter()
                    .map(|b| JsonBreak {
                        run: b.run_id,
                        diagnostic: json_diagnostic(&b.diagnostic, view),
                    })
                    .collect()
            }),
            unsettled_run: gate.and_then(|g| g.unsettled.as_ref().map(|r| r.id)),
        };
        serde_json::to_writer(&mut *out, &one).map_err(io::Error::from)?;
        return writeln!(out);
    }
    writeln!(
        out,
        "Run {}: {} at {}, {:.2}s, exit {}",
        run.id,
        run.command,
        utc(run.started_at_ms),
        run.duration_ms as f64 / 1000.0,
        run.exit_code
    )?;
    let args: Vec<String> = run.args.iter().map(|a| shell_word(a)).collect();
    writeln!(out, "Command: lspgate {}", args.join(" "))?;
    writeln!(out, "Workspace: {}", run.workspace.display())?;
    if !run.files.is_empty() {
        let files: Vec<String> = run
            .files
            .iter()
            .map(|f| format!("{} ({})", paths::display(&f.path, view.run_dir), f.action))
            .collect();
        writeln!(out, "Files: {}", files.join(", "))?;
    }
    writeln!(out, "{}", one_line(&run.summary))?;
    let (new, old): (Vec<&StoredDiagnostic>, Vec<&StoredDiagnostic>) =
        run.diagnostics.iter().partition(|d| d.new);
    for (title, list) in [("New", new), ("Already there", old)] {
        if list.is_empty() {
            continue;
        }
        writeln!(out)?;
        writeln!(out, "{title}:")?;
        for d in list {
            writeln!(out, "{}", entry(d, view.run_dir))?;
        }
    }
    if let Some(gate) = gate {
        render_gate(gate, view, out)?;
    }
    Ok(())
}

/// The gate after the last run: what holds it, and the status with its reason.
fn render_gate(gate: &Gate, view: &View<'_>, out: &mut dyn Write) -> io::Result<()> {
    if !gate.outstanding.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "Outstanding (introduced, and not seen fixed by a later run that checked the file):"
        )?;
        for b in &gate.outstanding {
            writeln!(
                out,
                "{} (run {})",
                entry(&b.diagnostic, view.run_dir),
                b.run_id
            )?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "gate: {} ({})",
        crate::exit::status(gate.outcome),
        gate.reason
    )
}

/// A stored diagnostic as the text report prints one: through the report's own
/// [`diagnostic_line`], so the two cannot drift apart.
fn entry(d: &StoredDiagnostic, run_dir: &Path) -> String {
    diagnostic_line(
        &paths::display(&d.path, run_dir),
        &as_lsp(d),
        &Styles::plain(),
    )
}

/// A stored diagnostic back as the LSP diagnostic it was recorded from, as far as the
/// text line shows it: 1-based places back to 0-based, the severity from its LSP name
/// (one lspgate never writes reads as an error, as a missing severity does in reports),
/// a code as the text it was stored as (a number prints the same).
fn as_lsp(d: &StoredDiagnostic) -> Diagnostic {
    let severity = match d.severity.as_str() {
        "Warning" => DiagnosticSeverity::WARNING,
        "Information" => DiagnosticSeverity::INFORMATION,
        "Hint" => DiagnosticSeverity::HINT,
        _ => DiagnosticSeverity::ERROR,
    };
    let start = Position::new(d.line.saturating_sub(1), d.column.saturating_sub(1));
    Diagnostic {
        range: Range::new(start, start),
        severity: Some(severity),
        code: d.code.clone().map(NumberOrString::String),
        source: d.source.clone(),
        message: d.message.clone(),
        tags: (!d.tags.is_empty()).then(|| d.tags.clone()),
        ..Diagnostic::default()
    }
}

/// An argument as a shell would need it typed, on one line: bare when it is plain, in
/// single quotes when it has spaces or quotes, as `$'...'` with escapes when it has line
/// breaks or other control characters (which must not reach the terminal raw).
fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        return arg.to_owned();
    }
    if !arg.chars().any(char::is_control) {
        return format!("'{}'", arg.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in arg.chars() {
        match c {
            '\\' => out.push_str(r"\\"),
            '\'' => out.push_str(r"\'"),
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            '\r' => out.push_str(r"\r"),
            // Control characters are all below U+0100: `\xHH` as bash reads it.
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Milliseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (UTC: no time zone
/// database needed, and the same on every machine that reads a shared log).
pub fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Howard Hinnant's days-to-civil algorithm: days since 1970-01-01 to (y, m, d).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use lsp_types::DiagnosticTag;

    use super::*;
    use crate::history::RunFile;
    use crate::model::Level;

    #[test]
    fn utc_times() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_714_558_923_456), "2024-05-01T10:22:03Z");
        assert_eq!(utc(-1000), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("a.py"), "a.py");
        assert_eq!(shell_word("--old"), "--old");
        assert_eq!(shell_word("return 42"), "'return 42'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a\nb's\\\t\u{1b}"), r"$'a\nb\'s\\\t\x1b'");
    }

    fn run() -> Run {
        Run {
            id: 7,
            started_at_ms: 1_714_558_923_456,
            duration_ms: 1234,
            command: "edit".to_owned(),
            args: ["edit", "a.py", "--old", "x\n", "--new", "return 42"]
                .map(String::from)
                .to_vec(),
            workspace: PathBuf::from("/w"),
            run_dir: PathBuf::from("/w"),
            files: vec![RunFile {
                path: PathBuf::from("/w/a.py"),
                action: "modified".to_owned(),
            }],
            exit_code: 1,
            summary: "New: 1 error, 0 warnings (edit applied)".to_owned(),
            dry_run: false,
            rejected: false,
            completed: true,
            new_errors: 1,
            diagnostics: vec![
                StoredDiagnostic {
                    path: PathBuf::from("/w/a.py"),
                    role: "edited".to_owned(),
                    line: 2,
                    column: 12,
                    severity: "Error".to_owned(),
                    code: Some("reportReturnType".to_owned()),
                    source: Some("Pyright".to_owned()),
                    message: "Type \"int\" is not assignable".to_owned(),
                    new: true,
                    tags: Vec::new(),
                },
                StoredDiagnostic {
                    path: PathBuf::from("/w/c.py"),
                    role: "dependent".to_owned(),
                    line: 3,
                    column: 14,
                    severity: "Warning".to_owned(),
                    code: None,
                    source: None,
                    message: "old".to_owned(),
                    new: false,
                    tags: Vec::new(),
                },
                StoredDiagnostic {
                    path: PathBuf::from("/w/a.py"),
                    role: "edited".to_owned(),
                    line: 1,
                    column: 8,
                    severity: "Hint".to_owned(),
                    code: Some("reportUnusedImport".to_owned()),
                    source: Some("Pyright".to_owned()),
                    message: "\"os\" is not accessed".to_owned(),
                    new: true,
                    tags: vec![DiagnosticTag::UNNECESSARY, DiagnosticTag::DEPRECATED],
                },
            ],
        }
    }

    fn text(f: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).expect("write to a Vec");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn one_run_as_text() {
        let view = View {
            run_dir: Path::new("/w"),
            format: Format::Text,
        };
        let shown = text(|out| render_run(&run(), None, &view, out));
        assert_eq!(
            shown,
            "Run 7: edit at 2024-05-01T10:22:03Z, 1.23s, exit 1\n\
             Command: lspgate edit a.py --old $'x\\n' --new 'return 42'\n\
             Workspace: /w\n\
             Files: a.py (modified)\n\
             New: 1 error, 0 warnings (edit applied)\n\
             \n\
             New:\n\
             Error: a.py:2:12 [Pyright][reportReturnType] Type \"int\" is not assignable\n\
             Hint: a.py:1:8 [Pyright][reportUnusedImport] (unnecessary) (deprecated) \"os\" is not accessed\n\
             \n\
             Already there:\n\
             Warn: c.py:3:14 old\n"
        );
    }

    #[test]
    fn list_as_text_and_json() {
        let view = View {
            run_dir: Path::new("/w"),
            format: Format::Text,
        };
        let shown = text(|out| render_list(&[run()], Path::new("/w"), &view, out));
        assert_eq!(
            shown,
            "ID  STARTED               COMMAND  EXIT  SUMMARY\n \
             7  2024-05-01T10:22:03Z  edit        1  New: 1 error, 0 warnings (edit applied)\n"
        );
        assert_eq!(
            text(|out| render_list(&[], Path::new("/w"), &view, out)),
            ""
        );
        let view = View {
            format: Format::Json,
            ..view
        };
        let json: serde_json::Value = serde_json::from_str(&text(|out| {
            render_list(&[run()], Path::new("/w"), &view, out)
        }))
        .expect("JSON");
        assert_eq!(json["schema"], 1);
        assert_eq!(json["runs"][0]["id"], 7);
        assert_eq!(json["runs"][0]["new_errors"], 1);
        assert_eq!(json["runs"][0]["files"][0]["path"], "a.py");
        assert!(json["runs"][0].get("diagnostics").is_none());
        let json: serde_json::Value =
            serde_json::from_str(&text(|out| render_run(&run(), None, &view, out))).expect("JSON");
        assert_eq!(json["run"]["diagnostics"][0]["line"], 2);
        assert_eq!(json["run"]["diagnostics"][1]["new"], false);
        // `tags` as in the report's JSON: the words, and no key when there are none.
        assert!(json["run"]["diagnostics"][0].get("tags").is_none());
        assert!(json["run"]["diagnostics"][1].get("tags").is_none());
        assert_eq!(
            json["run"]["diagnostics"][2]["tags"],
            serde_json::json!(["unnecessary", "deprecated"])
        );
        assert_eq!(json["run"]["started_at"], "2024-05-01T10:22:03Z");
    }

    /// A recorded diagnostic prints the line the report printed for it: severities,
    /// codes (a number is stored as its text), no source, tags, long and multi-line
    /// messages.
    #[test]
    fn a_stored_diagnostic_prints_as_the_report_printed_it() {
        let tagged = |tags: Vec<DiagnosticTag>| Diagnostic {
            tags: Some(tags),
            ..Diagnostic::default()
        };
        let mut cases = vec![
            tagged(vec![DiagnosticTag::UNNECESSARY]),
            tagged(vec![DiagnosticTag::DEPRECATED]),
            tagged(vec![DiagnosticTag::DEPRECATED, DiagnosticTag::UNNECESSARY]),
            tagged(Vec::new()),
        ];
        for (i, severity) in [
            DiagnosticSeverity::ERROR,
            DiagnosticSeverity::WARNING,
            DiagnosticSeverity::INFORMATION,
            DiagnosticSeverity::HINT,
        ]
        .into_iter()
        .enumerate()
        {
            cases[i].severity = Some(severity);
        }
        cases[0].code = Some(NumberOrString::Number(2304));
        cases[1].code = Some(NumberOrString::String("reportUnusedImport".to_owned()));
        cases[1].source = Some("Pyright".to_owned());
        cases[2].source = Some("ts".to_owned());
        cases[3].message = format!("line one\n  line two {}", "x".repeat(500));
        for (i, d) in cases.iter_mut().enumerate() {
            let i = u32::try_from(i).expect("small");
            d.range.start = Position::new(i * 10, i + 3);
            if d.message.is_empty() {
                d.message = format!("message {i}");
            }
        }
        for d in &cases {
            // What `crate::history` records of it.
            let stored = StoredDiagnostic {
                path: PathBuf::from("/w/src/a.py"),
                role: "edited".to_owned(),
                line: d.range.start.line + 1,
                column: d.range.start.character + 1,
                severity: Level::of(d).lsp_name().to_owned(),
                code: d.code.as_ref().map(|c| match c {
                    NumberOrString::Number(n) => n.to_string(),
                    NumberOrString::String(s) => s.clone(),
                }),
                source: d.source.clone(),
                message: d.message.clone(),
                new: true,
                tags: d.tags.clone().unwrap_or_default(),
            };
            assert_eq!(
                entry(&stored, Path::new("/w")),
                diagnostic_line("src/a.py", d, &Styles::plain()),
                "{d:?}"
            );
        }
    }
}
