//! The tools: a `tools/call`'s arguments parsed into a [`Call`], run through the code
//! behind the command of the same name, and its result rendered as the command's text
//! (uncoloured) and its `--format json` object.
//!
//! `write`, `edit`, `patch` and `check` are [`crate::reporting_run`], as the CLI's
//! commands are: the same daemon (or in process), the same history record. A run that
//! found errors is a result like any other, its content says so; what the CLI refuses
//! with exit status 2 (text not found, a hunk that does not apply, a path outside the
//! workspace) is a tool error carrying the CLI's message, and nothing is written.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Setup;
use crate::commands::run::{Ran, RunSetting, reporting_run};
use crate::daemon::client::{self as daemon_client, Cache, Cached};
use crate::daemon::protocol::CacheQuery;
use crate::history;
use crate::model::Reporting;
use crate::model::progress::Watcher;
use crate::model::{Format, LogLevel};
use crate::report::{self, styles::Styles};

/// A call, its arguments checked.
pub enum Call {
    /// `write`, `edit`, `patch`, `check`.
    Report {
        tool: &'static str,
        request: Reporting,
        options: EditOptions,
        /// The arguments as sent, for the history's record of the run.
        arguments: String,
    },
    Diagnostics {
        uri: Option<String>,
        path: Option<PathBuf>,
    },
    Logs {
        limit: Option<usize>,
        level: Option<LogLevel>,
    },
    Messages {
        limit: Option<usize>,
    },
    History {
        run: Option<i64>,
        last: bool,
        limit: usize,
    },
}

/// What a call may turn on for its run; like the flags, never off.
#[derive(Debug, Default, Clone, Copy)]
pub struct EditOptions {
    dry_run: bool,
    reject: bool,
    all: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: PathBuf,
    content: String,
    #[serde(default)]
    dry_run: bool,
    #[serde(default)]
    reject: bool,
    #[serde(default)]
    all: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: PathBuf,
    old: String,
    new: String,
    #[serde(default)]
    replace_all: bool,
    #[serde(default)]
    dry_run: bool,
    #[serde(default)]
    reject: bool,
    #[serde(default)]
    all: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchArgs {
    patch: String,
    #[serde(default = "one")]
    strip: usize,
    #[serde(default)]
    dry_run: bool,
    #[serde(default)]
    reject: bool,
    #[serde(default)]
    all: bool,
}

fn one() -> usize {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    #[serde(default)]
    paths: Vec<PathBuf>,
    #[serde(default)]
    staged: bool,
    #[serde(default)]
    changed: bool,
    patch: Option<String>,
    #[serde(default)]
    all: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DiagnosticsArgs {
    uri: Option<String>,
    path: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Level {
    Error,
    Warning,
    Info,
    Log,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LogsArgs {
    limit: Option<usize>,
    level: Option<Level>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MessagesArgs {
    limit: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryArgs {
    run: Option<i64>,
    #[serde(default)]
    last: bool,
    #[serde(default = "twenty")]
    limit: usize,
}

fn twenty() -> usize {
    20
}

fn arguments<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, String> {
    // Absent arguments are no arguments.
    let value = match arguments {
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other,
    };
    // Taken, not copied: a `write`'s content moves into the call as it is.
    serde_json::from_value(value).map_err(|e| format!("{tool}: invalid arguments: {e}"))
}

/// The history keeps the start of a call's arguments only (2,000 characters): only
/// that much of them is written out, not a copy of a large file's content.
const RECORDED: usize = 8 * 1024;

/// The first [`RECORDED`] bytes of `args` as JSON (enough for the history's 2,000
/// characters), made UTF-8 where the cut splits a character.
fn recorded(args: &Value) -> String {
    struct Capped(Vec<u8>);
    impl io::Write for Capped {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let room = RECORDED - self.0.len();
            if room == 0 {
                // Ends the serialisation: the rest is not kept.
                return Err(io::ErrorKind::WriteZero.into());
            }
            let n = buf.len().min(room);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut out = Capped(Vec::new());
    // An error here is the cap reached: what was written is what is kept.
    let _ = serde_json::to_writer(&mut out, args);
    String::from_utf8_lossy(&out.0).into_owned()
}

impl Call {
    /// The call of tool `name` with `args` (`tools/call`'s `arguments`); `Err` is the
    /// message of an invalid-params error: an unknown tool, a missing or unknown
    /// argument, one of the wrong type, or two that exclude each other.
    pub fn parse(name: &str, args: Value) -> Result<Call, String> {
        let recorded = recorded(&args);
        let recorded = || recorded.clone();
        Ok(match name {
            "write" => {
                let a: WriteArgs = arguments(name, args)?;
                Call::Report {
                    tool: "write",
                    options: EditOptions {
                        dry_run: a.dry_run,
                        reject: a.reject,
                        all: a.all,
                    },
                    request: Reporting::Write {
                        path: a.path,
                        content: a.content.into_bytes(),
                    },
                    arguments: recorded(),
                }
            }
            "edit" => {
                let a: EditArgs = arguments(name, args)?;
                Call::Report {
                    tool: "edit",
                    options: EditOptions {
                        dry_run: a.dry_run,
                        reject: a.reject,
                        all: a.all,
                    },
                    request: Reporting::Edit {
                        path: a.path,
                        old: a.old,
                        new: a.new,
                        replace_all: a.replace_all,
                    },
                    arguments: recorded(),
                }
            }
            "patch" => {
                let a: PatchArgs = arguments(name, args)?;
                Call::Report {
                    tool: "patch",
                    options: EditOptions {
                        dry_run: a.dry_run,
                        reject: a.reject,
                        all: a.all,
                    },
                    request: Reporting::Patch {
                        patch: a.patch.into_bytes(),
                        strip: a.strip,
                        reverse: false,
                    },
                    arguments: recorded(),
                }
            }
            "check" => {
                let a: CheckArgs = arguments(name, args)?;
                if a.staged && (!a.paths.is_empty() || a.patch.is_some()) {
                    return Err("check: staged cannot be used with paths or patch".into());
                }
                if a.patch.is_some() && !a.paths.is_empty() {
                    return Err("check: patch cannot be used with paths".into());
                }
                if a.changed && (a.staged || a.patch.is_some() || !a.paths.is_empty()) {
                    return Err("check: changed cannot be used with paths, staged or patch".into());
                }
                Call::Report {
                    tool: "check",
                    options: EditOptions {
                        all: a.all,
                        ..EditOptions::default()
                    },
                    request: Reporting::Check {
                        paths: a.paths,
                        staged: a.staged,
                        changed: a.changed,
                        patch: a.patch.map(String::into_bytes),
                    },
                    arguments: recorded(),
                }
            }
            "diagnostics" => {
                let a: DiagnosticsArgs = arguments(name, args)?;
                if a.uri.is_some() && a.path.is_some() {
                    return Err("diagnostics: give uri or path, not both".into());
                }
                Call::Diagnostics {
                    uri: a.uri,
                    path: a.path,
                }
            }
            "logs" => {
                let a: LogsArgs = arguments(name, args)?;
                Call::Logs {
                    limit: a.limit,
                    level: a.level.map(|level| match level {
                        Level::Error => LogLevel::Error,
                        Level::Warning => LogLevel::Warning,
                        Level::Info => LogLevel::Info,
                        Level::Log => LogLevel::Log,
                    }),
                }
            }
            "messages" => {
                let a: MessagesArgs = arguments(name, args)?;
                Call::Messages { limit: a.limit }
            }
            "history" => {
                let a: HistoryArgs = arguments(name, args)?;
                if a.last && a.run.is_some() {
                    return Err("history: give run or last, not both".into());
                }
                Call::History {
                    run: a.run,
                    last: a.last,
                    limit: a.limit,
                }
            }
            other => return Err(format!("unknown tool: {other}")),
        })
    }

    /// Whether the call runs language servers: such calls are made one at a time, in
    /// the order they came; the others only read, and answer at once.
    pub fn runs_servers(&self) -> bool {
        matches!(self, Call::Report { .. })
    }
}

/// What a tool answers: its text, its JSON (an object), or an error message.
pub enum Outcome {
    Done { text: String, json: Box<RawValue> },
    Failed(String),
}

#[derive(Serialize)]
struct ToolResult<'a> {
    content: Vec<TextContent<'a>>,
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a RawValue>,
    #[serde(rename = "isError")]
    is_error: bool,
}

#[derive(Serialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

fn text(text: &str) -> TextContent<'_> {
    TextContent { kind: "text", text }
}

impl Outcome {
    /// The `tools/call` result: the text as text content and the JSON as
    /// `structuredContent`; for a client of a revision before structured results
    /// (2025-06-18), the JSON as a second text instead, as the revisions that brought
    /// them ask for compatibility.
    pub fn result(&self, structured: bool) -> impl Serialize + '_ {
        match self {
            Outcome::Done { text: body, json } if structured => ToolResult {
                content: vec![text(body)],
                structured_content: Some(json),
                is_error: false,
            },
            Outcome::Done { text: body, json } => ToolResult {
                content: vec![text(body), text(json.get())],
                structured_content: None,
                is_error: false,
            },
            Outcome::Failed(message) => ToolResult {
                content: vec![text(message)],
                structured_content: None,
                is_error: true,
            },
        }
    }
}

/// Run `call`. `watcher` follows a reporting run while it waits.
pub fn run(setup: &Setup, call: Call, watcher: Option<Box<dyn Watcher>>) -> Outcome {
    let outcome = match call {
        Call::Report {
            tool,
            request,
            options,
            arguments,
        } => reporting(setup, tool, request, options, &arguments, watcher),
        Call::Diagnostics { uri, path } => diagnostics(setup, uri.as_deref(), path.as_deref()),
        Call::Logs { limit, level } => lines(
            setup,
            Cache::Logs,
            "logs",
            &CacheQuery {
                limit,
                level: level.map(LogLevel::message_type),
                ..CacheQuery::default()
            },
        ),
        Call::Messages { limit } => lines(
            setup,
            Cache::Messages,
            "messages",
            &CacheQuery {
                limit,
                ..CacheQuery::default()
            },
        ),
        Call::History { run, last, limit } => history(setup, run, last, limit),
    };
    // Names in messages are quoted already; no other control character gets through.
    outcome.unwrap_or_else(|e| {
        Outcome::Failed(crate::paths::escape_controls(&format!("{e:#}")).into_owned())
    })
}

fn reporting(
    setup: &Setup,
    tool: &str,
    request: Reporting,
    options: EditOptions,
    arguments: &str,
    watcher: Option<Box<dyn Watcher>>,
) -> anyhow::Result<Outcome> {
    let mut args = setup.args.clone();
    args.dry_run |= options.dry_run;
    args.reject |= options.reject;
    args.all |= options.all;
    let setting = RunSetting {
        workspace: &setup.workspace,
        run_dir: &setup.run_dir,
        trust_project: setup.trust_project,
        args: &args,
    };
    let typed: Vec<OsString> = ["lspgate", "mcp", tool, arguments]
        .into_iter()
        .map(OsString::from)
        .collect();
    let invocation = history::Invocation::start(tool, &typed);
    let (report, options) = match reporting_run(&setting, &invocation, request, watcher)? {
        Ran::Done { report, options } => (report, options),
        Ran::Failed(failure) => return Ok(Outcome::Failed(failure.to_string())),
    };
    let render = report::RenderOptions {
        format: Format::Text,
        all: options.all,
        max_entries: options.max_entries,
        styles: Styles::default(),
    };
    let text = rendered(|out| {
        report::text::render(&report, &render, out)?;
        report::render_stderr_notes(&report, options.max_entries, out)?;
        writeln!(out, "exit_code: {}", crate::exit::status(report.outcome))
    })?;
    let json = rendered(|out| report::json::render(&report, options.all, out))?;
    done(text, json)
}

/// What a renderer writes, as text.
fn rendered(write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    write(&mut out)?;
    Ok(String::from_utf8(out)?)
}

fn done(text: String, json: String) -> anyhow::Result<Outcome> {
    Ok(Outcome::Done {
        text,
        json: RawValue::from_string(json.trim_end().to_owned())?,
    })
}

/// `{"daemon_running": true, "<key>": <list>}`: the command's JSON list in an object
/// (a structured result must be one).
fn wrapped(key: &str, running: bool, list: &str) -> String {
    format!(
        "{{\"daemon_running\":{running},{}:{}}}",
        Value::String(key.to_owned()),
        list.trim_end()
    )
}

fn no_daemon(setup: &Setup, key: &str) -> anyhow::Result<Outcome> {
    done(
        format!(
            "no daemon running for {}: nothing is held before the first write, edit, patch \
             or check",
            setup.workspace.display()
        ),
        wrapped(key, false, "[]"),
    )
}

fn diagnostics(setup: &Setup, uri: Option<&str>, path: Option<&Path>) -> anyhow::Result<Outcome> {
    let path = match (uri, path) {
        (Some(uri), _) => {
            let parsed = lsp_types::Url::parse(uri).map_err(|e| anyhow::anyhow!("{uri}: {e}"))?;
            Some(
                crate::lsp::uri::to_path(&parsed)
                    .ok_or_else(|| anyhow::anyhow!("{uri}: not a file:// URI"))?,
            )
        }
        // As `lspgate diagnostics PATH`: one that no longer exists (deleted, its
        // diagnostics maybe still held) is taken as written.
        (None, Some(path)) => {
            let joined = setup.run_dir.join(path);
            Some(joined.canonicalize().unwrap_or(joined))
        }
        (None, None) => None,
    };
    let query = CacheQuery {
        path,
        ..CacheQuery::default()
    };
    let Some(Cached::Diagnostics(files)) =
        daemon_client::query(&setup.workspace, Cache::Diagnostics, &query)?
    else {
        return no_daemon(setup, "files");
    };
    let write = |format| {
        rendered(|out| {
            report::daemon::write_diagnostics(
                out,
                &files,
                &setup.run_dir,
                format,
                &Styles::default(),
            )
        })
    };
    let mut text = write(Format::Text)?;
    if text.is_empty() {
        text = "no diagnostics held".into();
    }
    done(text, wrapped("files", true, &write(Format::Json)?))
}

fn lines(setup: &Setup, what: Cache, key: &str, query: &CacheQuery) -> anyhow::Result<Outcome> {
    let Some(Cached::Lines(lines)) = daemon_client::query(&setup.workspace, what, query)? else {
        return no_daemon(setup, key);
    };
    let write =
        |format| rendered(|out| report::daemon::write_lines(out, &lines, &setup.workspace, format));
    let mut text = write(Format::Text)?;
    if text.is_empty() {
        text = format!("no {key} held");
    }
    done(text, wrapped(key, true, &write(Format::Json)?))
}

fn history(setup: &Setup, run: Option<i64>, last: bool, limit: usize) -> anyhow::Result<Outcome> {
    let view = |format| report::history::View {
        run_dir: &setup.run_dir,
        format,
    };
    if run.is_none() && !last {
        let runs =
            history::list(&setup.workspace, limit).map_err(|e| anyhow::anyhow!("history: {e}"))?;
        let write = |format| {
            rendered(|out| {
                report::history::render_list(&runs, &setup.workspace, &view(format), out)
            })
        };
        let mut text = write(Format::Text)?;
        if runs.is_empty() {
            text = format!("no runs recorded for {}", setup.workspace.display());
        }
        return done(text, write(Format::Json)?);
    }
    let found = history::find(&setup.workspace, run)?;
    // The gate, as `history --last` answers it: the renderer adds its `gate` key and line.
    let gate = if last {
        Some(history::gate(&setup.workspace, &found).map_err(|e| anyhow::anyhow!("history: {e}"))?)
    } else {
        None
    };
    let write = |format| {
        rendered(|out| report::history::render_run(&found, gate.as_ref(), &view(format), out))
    };
    done(write(Format::Text)?, write(Format::Json)?)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse_error(name: &str, args: Value) -> String {
        match Call::parse(name, args.clone()) {
            Ok(_) => panic!("{name} {args} parsed"),
            Err(message) => message,
        }
    }

    #[test]
    fn missing_unknown_and_conflicting_arguments_are_refused() {
        assert!(
            parse_error("edit", json!({"path": "a.py", "old": "x"}))
                .contains("missing field `new`")
        );
        assert!(parse_error("edit", Value::Null).contains("missing field"));
        assert!(
            parse_error("write", json!({"path": "a", "content": "", "force": true}))
                .contains("unknown field `force`")
        );
        assert!(parse_error("patch", json!({"patch": 3})).contains("invalid type"));
        assert!(parse_error("check", json!({"staged": true, "paths": ["a"]})).contains("staged"));
        assert!(
            parse_error("diagnostics", json!({"uri": "file:///a", "path": "a"}))
                .contains("not both")
        );
        assert!(parse_error("history", json!({"run": 1, "last": true})).contains("not both"));
        assert!(parse_error("logs", json!({"level": "loud"})).contains("unknown variant"));
        assert_eq!(
            parse_error("frobnicate", json!({})),
            "unknown tool: frobnicate"
        );
    }

    #[test]
    fn optional_arguments_default_as_the_flags_do() {
        let Ok(Call::Report {
            request: Reporting::Patch { strip, .. },
            options,
            ..
        }) = Call::parse("patch", json!({"patch": ""}))
        else {
            panic!("not a patch");
        };
        assert_eq!(strip, 1);
        assert!(!options.dry_run && !options.reject && !options.all);
        assert!(matches!(
            Call::parse("history", Value::Null),
            Ok(Call::History {
                run: None,
                last: false,
                limit: 20
            })
        ));
        assert!(matches!(
            Call::parse("diagnostics", json!({})),
            Ok(Call::Diagnostics {
                uri: None,
                path: None
            })
        ));
    }

    #[test]
    fn results_are_structured_or_carry_the_json_as_text() {
        let outcome = Outcome::Done {
            text: "report".into(),
            json: RawValue::from_string(r#"{"b":1,"a":2}"#.into()).expect("JSON"),
        };
        let new = serde_json::to_string(&outcome.result(true)).expect("serialize");
        // The renderer's key order survives.
        assert!(
            new.contains(r#""structuredContent":{"b":1,"a":2}"#),
            "{new}"
        );
        let value: Value = serde_json::from_str(&new).expect("JSON");
        assert_eq!(
            value["content"],
            json!([{"type": "text", "text": "report"}])
        );
        assert_eq!(value["isError"], false);
        let old: Value = serde_json::from_str(
            &serde_json::to_string(&outcome.result(false)).expect("serialize"),
        )
        .expect("JSON");
        assert!(old.get("structuredContent").is_none());
        assert_eq!(old["content"][1]["text"], r#"{"b":1,"a":2}"#);
        let failed: Value = serde_json::from_str(
            &serde_json::to_string(&Outcome::Failed("a.py: no".into()).result(true))
                .expect("serialize"),
        )
        .expect("JSON");
        assert_eq!(
            failed,
            json!({"content": [{"type": "text", "text": "a.py: no"}], "isError": true})
        );
    }

    #[test]
    fn lists_are_wrapped() {
        let wrapped: Value = serde_json::from_str(&wrapped("files", true, "[1]\n")).expect("JSON");
        assert_eq!(wrapped, json!({"daemon_running": true, "files": [1]}));
    }
}
