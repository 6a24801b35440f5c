//! What the daemon commands print: `daemon status` (one workspace or `--all`), and the
//! daemon's cache: `diagnostics` (the diagnostics the warm servers hold), `logs` and
//! `messages` (the servers' `window/logMessage` and `window/showMessage` rings).
//!
//! Diagnostic lines are the report's own ([`super::text::diagnostic_line`]); JSON
//! diagnostics use LSP's words for severities and its 0-based ranges, as the report's
//! JSON does. Text from servers is tamed before it reaches a terminal: no escape
//! sequences, no carriage returns.

use std::io::{self, Write};
use std::path::Path;

use lsp_types::{Diagnostic, NumberOrString};
use serde::Serialize;

use super::ignore_broken_pipe;
use super::json::file_uri;
use super::styles::Styles;
use super::text::diagnostic_line;
use crate::daemon::protocol::{CachedFile, MessageLine, Status};
use crate::model::Format;
use crate::model::Level;
use crate::paths;

#[derive(Serialize)]
struct JsonCachedFile<'a> {
    uri: String,
    diagnostics: Vec<JsonCachedDiagnostic<'a>>,
}

#[derive(Serialize)]
struct JsonCachedDiagnostic<'a> {
    message: &'a str,
    severity: &'static str,
    range: &'a lsp_types::Range,
    source: Option<&'a str>,
    code: Option<&'a NumberOrString>,
}

/// `lspgate diagnostics`: text, one report line per diagnostic, files by path and
/// each file's diagnostics by position; or a JSON list of files.
pub fn write_diagnostics(
    out: &mut dyn Write,
    files: &[CachedFile],
    run_dir: &Path,
    format: Format,
    styles: &Styles,
) -> io::Result<()> {
    let mut files: Vec<&CachedFile> = files.iter().collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    match format {
        Format::Json => {
            let list: Vec<JsonCachedFile<'_>> = files
                .iter()
                .map(|f| JsonCachedFile {
                    uri: file_uri(&f.path),
                    diagnostics: sorted(&f.diagnostics)
                        .into_iter()
                        .map(|d| JsonCachedDiagnostic {
                            message: &d.message,
                            severity: Level::of(d).lsp_name(),
                            range: &d.range,
                            source: d.source.as_deref(),
                            code: d.code.as_ref(),
                        })
                        .collect(),
                })
                .collect();
            serde_json::to_writer(&mut *out, &list).map_err(io::Error::from)?;
            writeln!(out)
        }
        Format::Text => {
            for file in files {
                let path = paths::display(&file.path, run_dir);
                for d in sorted(&file.diagnostics) {
                    writeln!(out, "{}", diagnostic_line(&path, d, styles))?;
                }
            }
            Ok(())
        }
    }
}

/// By position, then severity and message, so the order is stable.
fn sorted(diagnostics: &[Diagnostic]) -> Vec<&Diagnostic> {
    let mut list: Vec<&Diagnostic> = diagnostics.iter().collect();
    list.sort_by(|a, b| {
        (a.range.start, Level::of(a), &a.message).cmp(&(b.range.start, Level::of(b), &b.message))
    });
    list
}

#[derive(Serialize)]
struct JsonLine<'a> {
    server: &'a str,
    root: String,
    level: &'static str,
    message: &'a str,
}

/// `lspgate logs` and `lspgate messages`: text `SERVER [LEVEL] message`, the root
/// added when a server runs at a root other than the workspace; or a JSON list.
pub fn write_lines(
    out: &mut dyn Write,
    lines: &[MessageLine],
    workspace: &Path,
    format: Format,
) -> io::Result<()> {
    match format {
        Format::Json => {
            let list: Vec<JsonLine<'_>> = lines
                .iter()
                .map(|l| JsonLine {
                    server: &l.server,
                    root: l.root.display().to_string(),
                    level: level_name(l.level),
                    message: &l.message,
                })
                .collect();
            serde_json::to_writer(&mut *out, &list).map_err(io::Error::from)?;
            writeln!(out)
        }
        Format::Text => {
            for l in lines {
                let root = match l.root.strip_prefix(workspace) {
                    Ok(rel) if rel.as_os_str().is_empty() => String::new(),
                    Ok(rel) => format!(" ({})", rel.display()),
                    Err(_) => format!(" ({})", l.root.display()),
                };
                writeln!(
                    out,
                    "{}{root} [{}] {}",
                    l.server,
                    level_name(l.level),
                    tame(&l.message)
                )?;
            }
            Ok(())
        }
    }
}

/// LSP `MessageType` names, lowercase as `--level` spells them.
pub fn level_name(level: i32) -> &'static str {
    match level {
        1 => "error",
        2 => "warning",
        3 => "info",
        4 => "log",
        5 => "debug",
        _ => "unknown",
    }
}

/// A server's message as printed: its lines kept (logs are often multi-line), every
/// other control character shown as a space, so a server cannot redraw the terminal.
fn tame(text: &str) -> String {
    text.trim_end()
        .chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect()
}

/// `daemon status`: one daemon, or every one (`--all`: JSON a list, text the blocks
/// separated by a blank line).
pub fn write_statuses(out: &mut dyn Write, statuses: &[Status], format: Format) -> io::Result<()> {
    match format {
        Format::Json => {
            serde_json::to_writer(&mut *out, statuses).map_err(io::Error::from)?;
            writeln!(out)
        }
        Format::Text => {
            for (i, status) in statuses.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                write_status(out, status)?;
            }
            Ok(())
        }
    }
}

/// `daemon status` of one workspace.
pub fn write_status(out: &mut dyn Write, s: &Status) -> io::Result<()> {
    writeln!(
        out,
        "daemon: pid {}, lspgate {}, up {}, {} run{}, {}",
        s.pid,
        s.lspgate_version,
        human_duration(s.uptime_ms),
        s.runs,
        if s.runs == 1 { "" } else { "s" },
        human_memory(s.rss_kib)
    )?;
    writeln!(out, "workspace: {}", s.workspace.display())?;
    writeln!(out, "socket: {}", s.socket.display())?;
    writeln!(out, "log: {}", s.log.display())?;
    writeln!(out, "idle timeout: {}", human_duration(s.idle_timeout_ms))?;
    writeln!(out, "watching: {} directories", s.watched_directories)?;
    for (root, why) in &s.unwatched {
        writeln!(
            out,
            "  not watched, walked before every run: {} ({})",
            tame(&root.display().to_string()),
            tame(why)
        )?;
    }
    if s.servers.is_empty() {
        return writeln!(out, "servers: none yet");
    }
    writeln!(out, "servers:")?;
    for server in &s.servers {
        let root = server
            .root
            .strip_prefix(&s.workspace)
            .ok()
            .map(|r| r.display().to_string())
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| ".".into());
        let crashes = match (server.crashes, server.last_crash_ms) {
            (0, _) => String::new(),
            (n, Some(ago)) => format!(
                ", crashed {n} time{} (last {} ago)",
                if n == 1 { "" } else { "s" },
                human_duration(ago)
            ),
            (n, None) => format!(", crashed {n} time{}", if n == 1 { "" } else { "s" }),
        };
        writeln!(
            out,
            "  {} (root {root}): pid {}, {}, up {}, {} open document{}, {}{crashes}",
            server.name,
            server.pid,
            tame(&server.state).replace('\n', " "),
            human_duration(server.uptime_ms),
            server.open_documents,
            if server.open_documents == 1 { "" } else { "s" },
            human_memory(server.rss_kib)
        )?;
        if let Some(pulls) = &server.between_runs {
            match &pulls.skipped {
                Some(why) => writeln!(out, "    pulled between runs: none ({})", tame(why))?,
                None => writeln!(
                    out,
                    "    pulled between runs: {} of {} files held, {} to ask (at most {})",
                    pulls.held, pulls.files, pulls.waiting, pulls.budget
                )?,
            }
        }
    }
    Ok(())
}

/// Print to stdout through `write`, a closed stdout not being an error.
pub fn print(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    ignore_broken_pipe(write(&mut out).and_then(|()| out.flush()))
}

fn human_duration(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

fn human_memory(kib: Option<u64>) -> String {
    match kib {
        Some(k) => format!("{:.1} MiB", k as f64 / 1024.0),
        None => "memory unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use lsp_types::{DiagnosticSeverity, Position, Range};
    use serde_json::Value;

    use super::*;

    fn diag(line: u32, severity: DiagnosticSeverity, message: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 2), Position::new(line, 5)),
            severity: Some(severity),
            code: Some(NumberOrString::String("E1".into())),
            source: Some("fake".into()),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    fn files() -> Vec<CachedFile> {
        vec![
            CachedFile {
                path: PathBuf::from("/ws/src/b.py"),
                diagnostics: vec![
                    diag(3, DiagnosticSeverity::WARNING, "late"),
                    diag(0, DiagnosticSeverity::ERROR, "early"),
                ],
            },
            CachedFile {
                path: PathBuf::from("/ws/a.py"),
                diagnostics: vec![diag(1, DiagnosticSeverity::HINT, "hint\u{1b}[2J")],
            },
        ]
    }

    fn render(format: Format) -> String {
        let mut out = Vec::new();
        write_diagnostics(
            &mut out,
            &files(),
            Path::new("/ws"),
            format,
            &Styles::default(),
        )
        .expect("render");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn text_uses_the_report_line_by_path_then_position() {
        assert_eq!(
            render(Format::Text),
            "Hint: a.py:2:3 [fake][E1] hint [2J\n\
             Error: src/b.py:1:3 [fake][E1] early\n\
             Warn: src/b.py:4:3 [fake][E1] late\n"
        );
    }

    #[test]
    fn json_is_a_list_of_uris_with_lsp_words_and_zero_based_ranges() {
        let json: Value = serde_json::from_str(&render(Format::Json)).expect("JSON");
        assert_eq!(json[0]["uri"], "file:///ws/a.py");
        assert_eq!(json[0]["diagnostics"][0]["severity"], "Hint");
        assert_eq!(json[1]["uri"], "file:///ws/src/b.py");
        let first = &json[1]["diagnostics"][0];
        assert_eq!(first["severity"], "Error");
        assert_eq!(first["message"], "early");
        assert_eq!(first["source"], "fake");
        assert_eq!(first["code"], "E1");
        assert_eq!(
            first["range"],
            serde_json::json!({"start": {"line": 0, "character": 2}, "end": {"line": 0, "character": 5}})
        );
        assert_eq!(json[1]["diagnostics"][1]["severity"], "Warning");
    }

    #[test]
    fn nothing_held_prints_nothing_or_an_empty_list() {
        let mut out = Vec::new();
        write_diagnostics(
            &mut out,
            &[],
            Path::new("/"),
            Format::Text,
            &Styles::default(),
        )
        .expect("render");
        assert!(out.is_empty());
        write_diagnostics(
            &mut out,
            &[],
            Path::new("/"),
            Format::Json,
            &Styles::default(),
        )
        .expect("render");
        assert_eq!(out, b"[]\n");
    }

    #[test]
    fn merging_joins_servers_and_drops_duplicates() {
        let mut all = files();
        all.push(CachedFile {
            path: PathBuf::from("/ws/a.py"),
            diagnostics: vec![
                diag(1, DiagnosticSeverity::HINT, "hint\u{1b}[2J"),
                diag(9, DiagnosticSeverity::ERROR, "other server"),
            ],
        });
        let merged = crate::daemon::merge(all);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].path, PathBuf::from("/ws/a.py"));
        assert_eq!(merged[0].diagnostics.len(), 2);
    }

    #[test]
    fn log_lines_name_server_root_and_level() {
        let lines = vec![
            MessageLine {
                server: "pyright".into(),
                root: PathBuf::from("/ws"),
                level: 1,
                message: "boom\r\nsecond line\u{1b}]0;title\u{7}".into(),
            },
            MessageLine {
                server: "gopls".into(),
                root: PathBuf::from("/ws/go"),
                level: 4,
                message: "loaded".into(),
            },
        ];
        let mut out = Vec::new();
        write_lines(&mut out, &lines, Path::new("/ws"), Format::Text).expect("render");
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "pyright [error] boom \nsecond line ]0;title \ngopls (go) [log] loaded\n"
        );
        let mut out = Vec::new();
        write_lines(&mut out, &lines, Path::new("/ws"), Format::Json).expect("render");
        let json: Value = serde_json::from_slice(&out).expect("JSON");
        assert_eq!(json[1]["level"], "log");
        assert_eq!(json[1]["root"], "/ws/go");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(999), "0s");
        assert_eq!(human_duration(61_000), "1m01s");
        assert_eq!(human_duration(3_700_000), "1h01m");
    }
}
