//! What `tools/list` says about each tool: its description (the agent-facing text of
//! the README's "How an agent uses it", short and exact), the JSON Schema of its
//! arguments, and the JSON Schema of its structured result: the JSON that the
//! command's `--format json` prints (the report's is described in the README's
//! "JSON (`--format json`)"), wrapped in an object where that is a list.
//!
//! The output schemas are checked against real results by the integration test that
//! drives `lspgate mcp` with the official Python SDK, which validates every structured
//! result against its tool's schema.

use serde_json::{Value, json};

/// The server's instructions (`initialize`): how to read every reporting tool's result.
pub const INSTRUCTIONS: &str = "\
Edit files with these tools instead of writing them yourself: write, edit and patch apply \
the edit, let the project's language servers check it, and report what the edit broke. \
Read the report after every edit: <file_diagnostics> lists new problems in the files you \
edited, <project_diagnostics> new problems in other files the edit broke (callers, \
importers), <diagnostic_summary> counts them. The result's exit_code: 0, applied, no new \
errors; 1, applied, and it introduced the errors listed: fix them next (reject: true leaves \
the disk unchanged when an edit would introduce errors; dry_run: true only asks); 3, \
applied, nothing new found, but not everything was checked: each \"note:\" line says what \
and why; it is not a clean result. A tool error means nothing was written (text not found, \
hunk does not apply, path outside the project): read the message and retry. You are done \
only when history with last: true reports gate 0.";

/// One tool as `tools/list` shows it.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// Whether it only reads (no edit).
    pub read_only: bool,
    pub input: fn() -> Value,
    pub output: fn() -> Value,
}

pub const TOOLS: [ToolSpec; 8] = [
    ToolSpec {
        name: "write",
        title: "Write a file and check it",
        description: "Create or replace the file at path with content, then report the new \
            diagnostics this introduced, in the file and in the files it broke (callers, \
            importers). See the server's instructions for how to read the result.",
        read_only: false,
        input: write_input,
        output: report_output,
    },
    ToolSpec {
        name: "edit",
        title: "Edit a file and check it",
        description: "Replace old by new in the file at path (old must occur exactly once, \
            unless replace_all), then report the new diagnostics the edit introduced, in the \
            file and in the files it broke (callers, importers). Text not found is an error \
            and nothing is written.",
        read_only: false,
        input: edit_input,
        output: report_output,
    },
    ToolSpec {
        name: "patch",
        title: "Apply a unified diff and check it",
        description: "Apply a unified diff (git diff or diff -u, a/ and b/ paths; several \
            files, new, deleted and renamed files), all or nothing, then report the new \
            diagnostics it introduced. A hunk that does not apply is an error and nothing \
            is written.",
        read_only: false,
        input: patch_input,
        output: report_output,
    },
    ToolSpec {
        name: "check",
        title: "Check files without editing",
        description: "Report without editing: every diagnostic of the files at paths; or \
            only what a change introduced, staged (the git index against HEAD), patch (a \
            diff already applied to the files) or changed (the disk since the last check), \
            including the callers it broke.",
        read_only: true,
        input: check_input,
        output: report_output,
    },
    ToolSpec {
        name: "diagnostics",
        title: "Diagnostics the servers hold now",
        description: "The diagnostics the warm language servers hold now, for every file, or \
            for one file or directory (uri or path). Ranges are 0-based. Reads the \
            workspace's daemon and starts nothing: before the first write, edit, patch or \
            check there is none.",
        read_only: true,
        input: diagnostics_input,
        output: diagnostics_output,
    },
    ToolSpec {
        name: "logs",
        title: "Language server logs",
        description: "The language servers' recent log messages (window/logMessage; the \
            last 100 of each server), optionally only the last limit of each and only at \
            level or more severe.",
        read_only: true,
        input: logs_input,
        output: logs_output,
    },
    ToolSpec {
        name: "messages",
        title: "Language server messages",
        description: "The messages the language servers showed the user \
            (window/showMessage; the last 50 of each server), optionally only the last \
            limit of each.",
        read_only: true,
        input: messages_input,
        output: messages_output,
    },
    ToolSpec {
        name: "history",
        title: "Past runs, and the gate",
        description: "Past write, edit, patch and check runs of this workspace, newest \
            first; one run with its diagnostics (run); or the last run (last: true) and the \
            gate, which answers for the files on disk: 1 while an error a run introduced is \
            not seen fixed (outstanding lists them), 4 when the last edit was partly \
            written, 3 when a run was incomplete, else 0.",
        read_only: true,
        input: history_input,
        output: history_output,
    },
];

fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The options every edit takes (they can only turn a behaviour on, as flags do).
fn with_edit_options(mut properties: Value) -> Value {
    if let Value::Object(map) = &mut properties {
        map.insert(
            "dry_run".into(),
            json!({"type": "boolean", "description": "Never touch the disk: the servers see the new text in memory only."}),
        );
        map.insert(
            "reject".into(),
            json!({"type": "boolean", "description": "Write the edit only if the check is complete and finds nothing new; otherwise leave the disk as it was."}),
        );
    }
    with_all(properties)
}

fn with_all(mut properties: Value) -> Value {
    if let Value::Object(map) = &mut properties {
        map.insert(
            "all".into(),
            json!({"type": "boolean", "description": "List every diagnostic of the checked files, not only the new ones."}),
        );
    }
    properties
}

fn write_input() -> Value {
    object(
        with_edit_options(json!({
            "path": {"type": "string", "description": "The file to write, created if missing; relative to the server's directory, or absolute, inside the workspace."},
            "content": {"type": "string", "description": "The file's whole new content. The request, as one JSON line, must stay under 64 MiB (the MCP line limit): write a larger file with the lspgate CLI."},
        })),
        &["path", "content"],
    )
}

fn edit_input() -> Value {
    object(
        with_edit_options(json!({
            "path": {"type": "string", "description": "The file to edit; relative to the server's directory, or absolute."},
            "old": {"type": "string", "description": "The exact text to replace; it must occur once unless replace_all."},
            "new": {"type": "string", "description": "The replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence of old."},
        })),
        &["path", "old", "new"],
    )
}

fn patch_input() -> Value {
    object(
        with_edit_options(json!({
            "patch": {"type": "string", "description": "A unified diff: git diff or diff -u output. The request, as one JSON line, must stay under 64 MiB (the MCP line limit): apply a larger diff with the lspgate CLI."},
            "strip": {"type": "integer", "minimum": 0, "default": 1, "description": "Leading path components to strip from the diff's paths, as git apply -p."},
        })),
        &["patch"],
    )
}

fn check_input() -> Value {
    object(
        with_all(json!({
            "paths": {"type": "array", "items": {"type": "string"}, "description": "Files to check: every diagnostic of them counts as new."},
            "staged": {"type": "boolean", "description": "Check the staged content of the git index, counting as new only what it changes from HEAD. Not with paths or patch."},
            "changed": {"type": "boolean", "description": "Check what changed on disk since lspgate last looked (the last changed check or written edit; the first time, the git index), counting as new only what that change introduced, the callers it broke included. Call it after writing files with other tools. Not with paths, staged or patch."},
            "patch": {"type": "string", "description": "A diff already applied to the files: check the files it touches, counting as new only what it introduced. Not with paths."},
        })),
        &[],
    )
}

fn diagnostics_input() -> Value {
    object(
        json!({
            "uri": {"type": "string", "description": "A file:// URI: only this file, or the files under this directory."},
            "path": {"type": "string", "description": "Only this file, or the files under this directory; relative to the server's directory, or absolute."},
        }),
        &[],
    )
}

fn limit() -> Value {
    json!({"type": "integer", "minimum": 0, "description": "Only the last N of each server."})
}

fn logs_input() -> Value {
    object(
        json!({
            "limit": limit(),
            "level": {"type": "string", "enum": ["error", "warning", "info", "log"], "description": "Only messages at this level or more severe."},
        }),
        &[],
    )
}

fn messages_input() -> Value {
    object(json!({ "limit": limit() }), &[])
}

fn history_input() -> Value {
    object(
        json!({
            "run": {"type": "integer", "description": "Show this run and its diagnostics."},
            "last": {"type": "boolean", "description": "Show the last run and the gate: 0 passed, 1 errors introduced and not seen fixed (outstanding), 3 incomplete, 4 partly written."},
            "limit": {"type": "integer", "minimum": 0, "default": 20, "description": "How many runs to list, newest first."},
        }),
        &[],
    )
}

fn string() -> Value {
    json!({"type": "string"})
}

fn integer() -> Value {
    json!({"type": "integer"})
}

fn boolean() -> Value {
    json!({"type": "boolean"})
}

fn nullable(kind: &str) -> Value {
    json!({"type": [kind, "null"]})
}

/// An object with these properties, all of them required (the renderers always write
/// every key), more allowed: adding a key does not bump a schema.
fn record(properties: Value) -> Value {
    let required: Vec<String> = properties
        .as_object()
        .map(|map| map.keys().cloned().collect())
        .unwrap_or_default();
    json!({"type": "object", "properties": properties, "required": required})
}

fn range() -> Value {
    let position = record(json!({
        "line": {"type": "integer", "minimum": 0},
        "character": {"type": "integer", "minimum": 0},
    }));
    record(json!({"start": position, "end": position}))
}

fn code() -> Value {
    json!({"type": ["string", "integer", "null"]})
}

fn counts() -> Value {
    record(json!({"errors": integer(), "warnings": integer()}))
}

/// The report's JSON (`report::json`).
fn report_output() -> Value {
    let mut diagnostic = record(json!({
        "severity": {"enum": ["Error", "Warning", "Information", "Hint"]},
        "message": string(),
        "source": nullable("string"),
        "code": code(),
        "new": boolean(),
        "range": range(),
    }));
    // Present only when the diagnostic is tagged.
    diagnostic["properties"]["tags"] =
        json!({"type": "array", "items": {"enum": ["unnecessary", "deprecated"]}});
    record(json!({
        "schema": integer(),
        "workspace": string(),
        "applied": {"type": "array", "items": record(json!({
            "path": string(),
            "action": {"enum": ["created", "modified", "deleted", "renamed"]},
        }))},
        "dry_run": boolean(),
        "files": {"type": "array", "items": record(json!({
            "path": string(),
            "uri": string(),
            "role": {"enum": ["edited", "dependent"]},
            "diagnostics": {"type": "array", "items": diagnostic},
        }))},
        "summary": record(json!({
            "file": counts(),
            "project": counts(),
            "new": counts(),
            "fixed": integer(),
        })),
        "servers": {"type": "array", "items": record(json!({
            "name": string(),
            "status": {"enum": ["ok", "timeout", "missing", "failed", "crashed"]},
            "primary_ms": nullable("integer"),
            "cross_file_ms": nullable("integer"),
            "detail": nullable("string"),
            "root": string(),
            "packages": {"type": "array", "items": string()},
            "before": {"enum": ["server", "stored", "seen"]},
        }))},
        "notes": {"type": "array", "items": string()},
        "incomplete": {"type": "array", "items": {
            "type": "object",
            "properties": {"kind": {"enum": crate::model::incomplete::KINDS}},
            "required": ["kind"],
        }},
        "skipped": {"type": "array", "items": string()},
        "rejected": boolean(),
        "timed_out": boolean(),
        "exit_code": integer(),
    }))
}

/// `lspgate diagnostics --format json`'s list, as `files`.
fn diagnostics_output() -> Value {
    let diagnostic = record(json!({
        "message": string(),
        "severity": {"enum": ["Error", "Warning", "Information", "Hint"]},
        "range": range(),
        "source": nullable("string"),
        "code": code(),
    }));
    record(json!({
        "daemon_running": boolean(),
        "files": {"type": "array", "items": record(json!({
            "uri": string(),
            "diagnostics": {"type": "array", "items": diagnostic},
        }))},
    }))
}

fn lines_output(key: &str) -> Value {
    let line = record(json!({
        "server": string(),
        "root": string(),
        "level": {"enum": ["error", "warning", "info", "log", "debug", "unknown"]},
        "message": string(),
    }));
    let mut properties = serde_json::Map::new();
    properties.insert("daemon_running".into(), boolean());
    properties.insert(key.into(), json!({"type": "array", "items": line}));
    record(Value::Object(properties))
}

fn logs_output() -> Value {
    lines_output("logs")
}

fn messages_output() -> Value {
    lines_output("messages")
}

/// `lspgate history --format json`: a list (`runs`) or one run (`run`), and with
/// `last` the gate.
fn history_output() -> Value {
    let mut run = record(json!({
        "id": integer(),
        "started_at": string(),
        "started_at_ms": integer(),
        "duration_ms": integer(),
        "command": string(),
        "args": {"type": "array", "items": string()},
        "workspace": string(),
        "run_dir": string(),
        "files": {"type": "array", "items": record(json!({"path": string(), "action": string()}))},
        "exit_code": integer(),
        "summary": string(),
        "dry_run": boolean(),
        "rejected": boolean(),
        "new_errors": integer(),
    }));
    let mut diagnostic = record(json!({
        "path": string(),
        "role": string(),
        "line": integer(),
        "column": integer(),
        "severity": string(),
        "code": nullable("string"),
        "source": nullable("string"),
        "message": string(),
        "new": boolean(),
    }));
    diagnostic["properties"]["tags"] = json!({"type": "array", "items": string()});
    // Present for one run only.
    run["properties"]["diagnostics"] = json!({"type": "array", "items": diagnostic.clone()});
    // The gate's breaks: a diagnostic and the run that found it.
    let mut outstanding = diagnostic;
    outstanding["properties"]["run"] = integer();
    if let Some(required) = outstanding["required"].as_array_mut() {
        required.push(json!("run"));
    }
    json!({
        "type": "object",
        "properties": {
            "schema": integer(),
            "workspace": string(),
            "runs": {"type": "array", "items": run},
            "run": run,
            "gate": {"enum": [0, 1, 3, 4]},
            "outstanding": {"type": "array", "items": outstanding},
            "unsettled_run": integer(),
        },
        "required": ["schema"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_object_schemas_and_a_unique_name() {
        let mut names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
        for tool in &TOOLS {
            for schema in [(tool.input)(), (tool.output)()] {
                assert_eq!(schema["type"], "object", "{}", tool.name);
                assert!(schema["properties"].is_object(), "{}", tool.name);
            }
            let input = (tool.input)();
            for required in input["required"].as_array().into_iter().flatten() {
                let key = required.as_str().unwrap_or_default();
                assert!(
                    input["properties"].get(key).is_some(),
                    "{}: {key}",
                    tool.name
                );
            }
        }
    }

    #[test]
    fn the_line_limit_the_descriptions_state_is_the_readers() {
        let limit = format!(
            "under {} MiB",
            super::super::protocol::MAX_LINE / (1024 * 1024)
        );
        for (tool, key) in [("write", "content"), ("patch", "patch")] {
            let input = TOOLS
                .iter()
                .find(|t| t.name == tool)
                .map(|t| (t.input)())
                .unwrap_or_default();
            let text = input["properties"][key]["description"]
                .as_str()
                .unwrap_or_default();
            assert!(text.contains(&limit), "{tool}.{key}: {text}");
        }
    }
}
