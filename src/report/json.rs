//! JSON rendering of a [`super::Report`] (docs/SPEC.md section 3): one object, on one line, with
//! a stable shape: every key is always present (`null` when there is nothing), in the
//! order of the structs below, except a diagnostic's `tags`, present only when it has
//! some. The lists follow the same new-only/`--all` choice and order as the text.

use std::io::{self, Write};
use std::path::Path;

use lsp_types::NumberOrString;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC};
use serde::Serialize;

use super::file_order_key;
use crate::model::tag_name;
use crate::model::{Action, Counts, Level, Reason, Report, Role, ServerStatus, listed};
use crate::paths;

/// Bumped when a key changes meaning or disappears; adding keys does not bump it.
/// 2: `incomplete`, the typed reasons the check is incomplete, decides exit status 3.
pub const SCHEMA: u32 = 2;

#[derive(Serialize)]
struct JsonReport<'a> {
    schema: u32,
    workspace: String,
    applied: Vec<JsonApplied>,
    dry_run: bool,
    files: Vec<JsonFile<'a>>,
    summary: JsonSummary,
    servers: Vec<JsonServer<'a>>,
    notes: Vec<String>,
    /// Why the check is incomplete, one object each with its `kind`: exit status 3
    /// unless something new was found; `[]` for a complete check.
    incomplete: Vec<Reason<String>>,
    skipped: Vec<String>,
    rejected: bool,
    timed_out: bool,
    exit_code: i32,
}

#[derive(Serialize)]
struct JsonApplied {
    path: String,
    action: Action,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    path: String,
    uri: String,
    role: Role,
    diagnostics: Vec<JsonDiagnostic<'a>>,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    severity: &'static str,
    message: &'a str,
    source: Option<&'a str>,
    code: Option<&'a NumberOrString>,
    new: bool,
    range: &'a lsp_types::Range,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<&'static str>,
    /// What was folded into this diagnostic (`check::merge`): another source's report
    /// of the same problem, and the hints pointing back at it; `[]` when nothing was.
    related: Vec<JsonRelated<'a>>,
}

#[derive(Serialize)]
struct JsonRelated<'a> {
    path: String,
    severity: &'static str,
    message: &'a str,
    source: Option<&'a str>,
    code: Option<&'a NumberOrString>,
    range: &'a lsp_types::Range,
}

#[derive(Serialize)]
struct JsonSummary {
    file: Counts,
    project: Counts,
    new: Counts,
    fixed: usize,
}

#[derive(Serialize)]
struct JsonServer<'a> {
    name: &'a str,
    status: ServerStatus,
    primary_ms: Option<u64>,
    cross_file_ms: Option<u64>,
    detail: Option<String>,
    /// The directory it checked from, relative to the run directory.
    root: String,
    /// The monorepo packages it checked; empty outside a monorepo.
    packages: &'a [String],
    /// Where its before view came from: the server, or a stored baseline.
    before: crate::model::BeforeView,
}

/// Write the report as one JSON object and a newline. Messages are the servers' own,
/// uncut: a program reading them has no screen to protect.
pub fn render(report: &Report, all: bool, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &build(report, all)).map_err(io::Error::from)?;
    writeln!(out)
}

fn build(report: &Report, all: bool) -> JsonReport<'_> {
    let run_dir = &report.run_dir;
    let mut files: Vec<_> = report.files.iter().collect();
    files.sort_by_cached_key(|file| file_order_key(file, run_dir));

    let mut summary = JsonSummary {
        file: Counts::default(),
        project: Counts::default(),
        new: Counts::default(),
        fixed: report.fixed,
    };
    let mut json_files = Vec::with_capacity(files.len());
    for file in files {
        let shown = listed(file, all);
        let counts = Counts::of(shown.iter().map(|reported| &reported.diagnostic));
        let totals = match file.role {
            Role::Edited => &mut summary.file,
            Role::Dependent => &mut summary.project,
        };
        totals.errors += counts.errors;
        totals.warnings += counts.warnings;
        let new = Counts::of(listed(file, false).into_iter().map(|r| &r.diagnostic));
        summary.new.errors += new.errors;
        summary.new.warnings += new.warnings;

        json_files.push(JsonFile {
            path: paths::display_raw(&file.path, run_dir),
            uri: file_uri(&file.path),
            role: file.role,
            diagnostics: shown
                .into_iter()
                .map(|reported| {
                    let diagnostic = &reported.diagnostic;
                    JsonDiagnostic {
                        severity: Level::of(diagnostic).lsp_name(),
                        message: &diagnostic.message,
                        source: diagnostic.source.as_deref(),
                        code: diagnostic.code.as_ref(),
                        new: reported.new,
                        range: &diagnostic.range,
                        tags: diagnostic
                            .tags
                            .iter()
                            .flatten()
                            .filter_map(tag_name)
                            .collect(),
                        related: reported
                            .related
                            .iter()
                            .map(|r| JsonRelated {
                                path: paths::display_raw(&r.path, run_dir),
                                severity: Level::of(&r.diagnostic).lsp_name(),
                                message: &r.diagnostic.message,
                                source: r.diagnostic.source.as_deref(),
                                code: r.diagnostic.code.as_ref(),
                                range: &r.diagnostic.range,
                            })
                            .collect(),
                    }
                })
                .collect(),
        });
    }

    JsonReport {
        schema: SCHEMA,
        workspace: report.workspace.display().to_string(),
        applied: report
            .applied
            .iter()
            .map(|applied| JsonApplied {
                path: paths::display_raw(&applied.path, run_dir),
                action: applied.action,
            })
            .collect(),
        dry_run: report.dry_run,
        files: json_files,
        summary,
        servers: report
            .servers
            .iter()
            .map(|server| JsonServer {
                name: &server.name,
                status: server.status,
                primary_ms: server.primary_ms,
                cross_file_ms: server.cross_file_ms,
                detail: super::incomplete::detail(&server.reasons, run_dir),
                root: paths::display_raw(&server.root, run_dir),
                packages: &server.packages,
                before: server.before,
            })
            .collect(),
        notes: report
            .notes
            .iter()
            .map(|note| super::incomplete::note_text(note, run_dir))
            .collect(),
        incomplete: report
            .incomplete_reasons()
            .map(|reason| reason.map_paths(&|p| paths::display_raw(p, run_dir)))
            .collect(),
        skipped: report
            .skipped
            .iter()
            .map(|path| paths::display_raw(path, run_dir))
            .collect(),
        rejected: report.rejected,
        timed_out: report.timed_out,
        exit_code: crate::exit::status(report.outcome),
    }
}

/// The tags LSP defines and the words a diagnostic's `tags` names them by (the history
/// stores the same words).
/// What a path may hold unescaped in a `file://` URI (RFC 3986 `pchar` plus `/`):
/// unreserved (`-._~` and alphanumerics), sub-delims, `:` and `@`.
const PATH_CHARS: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@')
    .remove(b'/');

/// `file://` URI of an absolute path, every byte outside [`PATH_CHARS`] percent-encoded
/// (so non-UTF-8 names survive as their bytes).
pub fn file_uri(path: &Path) -> String {
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes = {
        // `C:\a\b` becomes `/C:/a/b`, the form `file:///C:/a/b` expects.
        let text = path.to_string_lossy().replace('\\', "/");
        if text.starts_with('/') {
            text.into_bytes()
        } else {
            format!("/{text}").into_bytes()
        }
    };
    format!(
        "file://{}",
        percent_encoding::percent_encode(&bytes, PATH_CHARS)
    )
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use lsp_types::{DiagnosticSeverity, DiagnosticTag};
    use serde_json::{Value, json};

    use super::super::{RenderOptions, styles::Styles};
    use super::*;
    use crate::model::Format;
    use crate::model::fixtures::*;
    use crate::model::{Note, ServerReport};

    fn render_text(report: &Report, all: bool) -> String {
        let mut out = Vec::new();
        // Through the public entry point, with colour on: JSON must ignore it.
        let opts = RenderOptions {
            format: Format::Json,
            all,
            max_entries: 1,
            styles: Styles::colorized(),
        };
        super::super::render(report, &opts, &mut out).expect("write to a Vec");
        let text = String::from_utf8(out).expect("utf-8");
        assert!(!text.contains('\x1b'));
        assert_eq!(text.matches('\n').count(), 1, "one line: {text}");
        text
    }

    fn render_json(report: &Report, all: bool) -> Value {
        serde_json::from_str(&render_text(report, all)).expect("valid JSON")
    }

    #[test]
    fn spec_example_shape() {
        let mut report = spec_example();
        report.skipped = vec![PathBuf::from("/abs/root/README.md")];
        report.notes = vec![Note::Info("a note".to_owned())];
        let text = render_text(&report, false);
        let value: Value = serde_json::from_str(&text).expect("valid JSON");

        let keys = [
            "schema",
            "workspace",
            "applied",
            "dry_run",
            "files",
            "summary",
            "servers",
            "notes",
            "incomplete",
            "skipped",
            "rejected",
            "timed_out",
            "exit_code",
        ];
        assert_eq!(value.as_object().map(|o| o.len()), Some(keys.len()));
        // The key order is part of the stable shape: check it in the text, where these
        // names occur once each.
        let positions: Vec<usize> = keys
            .iter()
            .map(|key| text.find(&format!("\"{key}\":")).expect(key))
            .collect();
        assert!(positions.is_sorted(), "{text}");
        assert!(text.starts_with("{\"schema\":2,\"workspace\":\"/abs/root\","));
        assert_eq!(value["schema"], 2);
        assert_eq!(value["workspace"], "/abs/root");
        assert_eq!(
            value["applied"],
            json!([{"path": "src/app.py", "action": "modified"}])
        );
        assert_eq!(value["dry_run"], false);
        assert_eq!(
            value["summary"],
            json!({
                "file": {"errors": 1, "warnings": 0},
                "project": {"errors": 5, "warnings": 0},
                "new": {"errors": 6, "warnings": 0},
                "fixed": 0
            })
        );
        assert_eq!(
            value["servers"],
            json!([{"name": "pyright", "status": "ok", "primary_ms": 180,
                    "cross_file_ms": 230, "detail": null, "root": ".", "packages": [],
                    "before": "server"}])
        );
        assert_eq!(value["notes"], json!(["a note"]));
        assert_eq!(value["incomplete"], json!([]));
        assert_eq!(value["skipped"], json!(["README.md"]));
        assert_eq!(value["rejected"], false);
        assert_eq!(value["timed_out"], false);
        assert_eq!(value["exit_code"], 1);

        // Edited first; the old warning is not listed without --all; no max_entries cap.
        let files = value["files"].as_array().expect("files");
        assert_eq!(files.len(), 2);
        assert_eq!(files[0]["path"], "src/app.py");
        assert_eq!(files[0]["uri"], "file:///abs/root/src/app.py");
        assert_eq!(files[0]["role"], "edited");
        assert_eq!(files[0]["diagnostics"].as_array().map(Vec::len), Some(1));
        assert_eq!(files[1]["role"], "dependent");
        assert_eq!(files[1]["diagnostics"].as_array().map(Vec::len), Some(5));
        assert_eq!(
            files[1]["diagnostics"][0],
            json!({"severity": "Error", "message": "Argument missing for parameter \"greeting\"",
                   "source": "Pyright", "code": "reportCallIssue", "new": true,
                   "range": {"start": {"line": 2, "character": 20},
                             "end": {"line": 2, "character": 27}}, "related": []})
        );
    }

    #[test]
    fn folded_diagnostics_are_related() {
        let mut report = spec_example();
        let hint = diag(DiagnosticSeverity::HINT, 0, 7, "function defined here");
        // cli.py's first error, at line 2.
        report.files[0].diagnostics[0]
            .related
            .push(crate::model::Related {
                path: PathBuf::from("/abs/root/src/a.py"),
                diagnostic: hint,
            });
        let value = render_json(&report, false);
        let folded_into = value["files"]
            .as_array()
            .and_then(|files| files.iter().find(|f| f["path"] == "src/cli.py"))
            .and_then(|f| f["diagnostics"].as_array())
            .and_then(|all| all.iter().find(|d| d["range"]["start"]["line"] == 2))
            .expect("listed");
        assert_eq!(
            folded_into["related"],
            json!([{"path": "src/a.py", "severity": "Hint",
                    "message": "function defined here", "source": "Pyright", "code": null,
                    "range": {"start": {"line": 0, "character": 7},
                              "end": {"line": 0, "character": 14}}}])
        );
    }

    #[test]
    fn all_lists_old_diagnostics_and_empty_files_stay() {
        let mut report = spec_example();
        report
            .files
            .push(file("/abs/root/src/empty.py", Role::Dependent, Vec::new()));
        let value = render_json(&report, false);
        let files = value["files"].as_array().expect("files");
        assert_eq!(files.len(), 3);
        assert_eq!(files[2]["path"], "src/empty.py");
        assert_eq!(files[2]["diagnostics"], json!([]));

        let value = render_json(&report, true);
        let edited = &value["files"][0]["diagnostics"];
        assert_eq!(edited.as_array().map(Vec::len), Some(2));
        assert_eq!(edited[1]["severity"], "Warning");
        assert_eq!(edited[1]["new"], false);
        assert_eq!(
            value["summary"]["file"],
            json!({"errors": 1, "warnings": 1})
        );
        assert_eq!(value["summary"]["new"], json!({"errors": 6, "warnings": 0}));
    }

    #[test]
    fn severities_codes_tags_and_nulls() {
        let mut report = spec_example();
        let mut info = diag(DiagnosticSeverity::INFORMATION, 0, 0, "i");
        info.source = None;
        info.code = Some(NumberOrString::Number(2304));
        let mut hint = diag(DiagnosticSeverity::HINT, 1, 0, "h");
        hint.tags = Some(vec![DiagnosticTag::UNNECESSARY, DiagnosticTag::DEPRECATED]);
        let mut missing = diag(DiagnosticSeverity::ERROR, 2, 0, "m");
        missing.severity = None;
        report.files[1].diagnostics = vec![
            reported(info, true),
            reported(hint, true),
            reported(missing, true),
        ];
        report.fixed = 3;
        report.servers.push(ServerReport {
            name: "gopls".to_owned(),
            status: ServerStatus::Timeout,
            primary_ms: None,
            cross_file_ms: None,
            reasons: vec![crate::model::ServerReason::TimedOut {
                server: "gopls".to_owned(),
                phase: crate::model::Phase::CrossFile,
                limit_ms: 5000,
                why: Some("no answer".to_owned()),
                files: Vec::new(),
            }],
            root: PathBuf::from("/abs/root"),
            packages: Vec::new(),
            before: crate::model::BeforeView::Server,
        });
        let value = render_json(&report, false);
        let diagnostics = &value["files"][0]["diagnostics"];
        assert_eq!(diagnostics[0]["severity"], "Error");
        assert_eq!(diagnostics[0]["message"], "m");
        assert!(diagnostics[0].get("tags").is_none());
        assert_eq!(diagnostics[1]["severity"], "Information");
        assert_eq!(diagnostics[1]["source"], Value::Null);
        assert_eq!(diagnostics[1]["code"], 2304);
        assert_eq!(diagnostics[2]["severity"], "Hint");
        assert_eq!(diagnostics[2]["code"], Value::Null);
        assert_eq!(diagnostics[2]["tags"], json!(["unnecessary", "deprecated"]));
        assert_eq!(value["summary"]["fixed"], 3);
        assert_eq!(
            value["servers"][1],
            json!({"name": "gopls", "status": "timeout", "primary_ms": null,
                   "cross_file_ms": null,
                   "detail": "cross-file wait timed out after 5s (no answer)", "root": ".",
                   "packages": [], "before": "server"})
        );
        assert_eq!(
            value["incomplete"],
            json!([{"kind": "timed_out", "server": "gopls", "phase": "cross_file",
                    "limit_ms": 5000, "why": "no answer", "files": []}])
        );
    }

    #[test]
    fn messages_are_not_cut() {
        let mut report = spec_example();
        let long = format!("{}\nsecond line", "x".repeat(1000));
        report.files[1].diagnostics =
            vec![reported(diag(DiagnosticSeverity::ERROR, 0, 0, &long), true)];
        let value = render_json(&report, false);
        assert_eq!(
            value["files"][0]["diagnostics"][0]["message"],
            long.as_str()
        );
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(
            file_uri(Path::new("/abs/root/src/a.py")),
            "file:///abs/root/src/a.py"
        );
        assert_eq!(
            file_uri(Path::new("/a b/c#d?e%f/ü/x@y:z+(1)~_.-")),
            "file:///a%20b/c%23d%3Fe%25f/%C3%BC/x@y:z+(1)~_.-"
        );
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_paths_keep_their_bytes() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(OsStr::from_bytes(b"/tmp/\xff.py"));
        assert_eq!(file_uri(path), "file:///tmp/%FF.py");
    }
}
