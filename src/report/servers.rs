//! Rendering of `lspgate servers [FILE]` ([`crate::doctor::Doctor`]): text for a person,
//! or one JSON object with a stable shape for a program.
//!
//! Text, without FILE: one paragraph per server in preference order (name, origin,
//! files, command, status, root markers), then the config files read and their notes.
//! With FILE: which server would handle it, why, where it would start, and the other
//! candidates.
//!
//! JSON: `{"schema", "workspace", "config_files", "trusted", "notes", "servers",
//! "file"}`; every key always present (`null` when there is nothing), as in the run
//! report's JSON. `servers` holds every server, or with FILE those covering its
//! extension; `file` is `null` without FILE.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use super::ignore_broken_pipe;
use crate::doctor::{Choice, Doctor, FileExplanation, Reason, ServerInfo};
use crate::model::Format;
use crate::paths;
use crate::servers::{Origin, Role};

/// Bumped when a key changes meaning or disappears; adding keys does not bump it.
pub const SCHEMA: u32 = 1;

/// Print on stdout; a closed stdout is not an error (see [`super::print`]).
pub fn print(doctor: &Doctor, format: Format) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    ignore_broken_pipe(render(doctor, format, &mut out).and_then(|()| out.flush()))
}

pub fn render(doctor: &Doctor, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Text => match &doctor.file {
            Some(file) => render_file(doctor, file, out),
            None => render_list(doctor, out),
        },
        Format::Json => {
            serde_json::to_writer(&mut *out, &build(doctor)).map_err(io::Error::from)?;
            writeln!(out)
        }
    }
}

// ----------------------------------------------------------------------------------
// Text

fn render_list(doctor: &Doctor, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "Servers in preference order (for an extension several cover, the first installed one is used):"
    )?;
    for server in &doctor.servers {
        writeln!(out)?;
        render_server(server, out)?;
    }
    writeln!(out)?;
    render_config(doctor, out)
}

fn render_server(server: &ServerInfo, out: &mut dyn Write) -> io::Result<()> {
    let disabled = if server.disabled { ", disabled" } else { "" };
    let linter = if server.role == Role::Linter {
        ", linter"
    } else {
        ""
    };
    writeln!(
        out,
        "{} ({}{linter}{disabled})",
        server.name,
        origin_text(server.origin)
    )?;
    if let Some(why) = &server.why {
        writeln!(out, "  here:         {why}")?;
    }
    writeln!(out, "  files:        {}", extensions(&server.extensions))?;
    writeln!(out, "  command:      {}", command_line(server))?;
    match &server.path {
        Some(path) => writeln!(out, "  status:       installed at {}", path.display())?,
        None => writeln!(
            out,
            "  status:       missing ({}); install: {}",
            crate::config::not_found(&server.command),
            server.install_hint
        )?,
    }
    // No line when the version is unknown: the server is installed, and guessing at why
    // it printed no version helps nobody.
    if let Some(version) = &server.version {
        writeln!(out, "  version:      {version}")?;
    }
    writeln!(out, "  root markers: {}", markers(&server.root_markers))
}

/// The footer: which config files shaped the table, and what they asked for in vain.
fn render_config(doctor: &Doctor, out: &mut dyn Write) -> io::Result<()> {
    let files: Vec<String> = doctor
        .config_files
        .iter()
        .map(|path| paths::display(path, &doctor.run_dir))
        .collect();
    if files.is_empty() {
        writeln!(out, "Config files: none (built-in table only)")?;
    } else {
        writeln!(out, "Config files: {}", files.join(", "))?;
    }
    writeln!(out, "Workspace: {}", doctor.workspace.display())?;
    for note in &doctor.notes {
        writeln!(out, "note: {note}")?;
    }
    Ok(())
}

fn render_file(doctor: &Doctor, file: &FileExplanation, out: &mut dyn Write) -> io::Result<()> {
    let shown = paths::display(&file.path, &doctor.run_dir);
    let kind = match &file.extension {
        Some(ext) => format!(".{ext} files"),
        None => "files without an extension".to_string(),
    };
    let Some(choice) = &file.chosen else {
        if let Some(why) = &file.not_checked {
            writeln!(out, "{shown}: not checked: {why}")?;
            if !file.linters.is_empty() {
                writeln!(out, "  linters:    {}", linters(doctor, file))?;
            }
            writeln!(out)?;
            return render_config(doctor, out);
        }
        writeln!(out, "{shown}: no server covers {kind}.")?;
        if !file.disabled.is_empty() {
            writeln!(
                out,
                "  disabled:   {} (turned off by a config file)",
                file.disabled.join(", ")
            )?;
        }
        writeln!(
            out,
            "  An edit to it is written and reported as skipped, never as an error; a \
             [server.NAME] table in .lspgate.toml can add a server for it."
        )?;
        writeln!(out)?;
        return render_config(doctor, out);
    };
    let server = doctor.servers.iter().find(|s| s.name == choice.server);
    let missing = matches!(choice.reason, Reason::NotInstalled);
    if missing {
        writeln!(out, "{shown}: {}, but it is not installed", choice.server)?;
    } else {
        writeln!(out, "{shown}: {}", choice.server)?;
    }
    writeln!(out, "  why:        {}", why(file, choice, &kind))?;
    if let Some(here) = server.and_then(|s| s.why.as_deref()) {
        writeln!(out, "  decided:    {here}")?;
    }
    if !file.linters.is_empty() {
        writeln!(out, "  linters:    {}", linters(doctor, file))?;
    }
    let candidates: Vec<String> = file
        .candidates
        .iter()
        .map(
            |name| match doctor.servers.iter().find(|s| &s.name == name) {
                Some(server) => format!("{name} ({})", status(server)),
                None => name.clone(),
            },
        )
        .collect();
    writeln!(out, "  candidates: {}", candidates.join("; "))?;
    for name in &file.disabled {
        let why = doctor
            .servers
            .iter()
            .find(|s| &s.name == name)
            .and_then(|s| s.why.as_deref())
            .unwrap_or("turned off by a config file");
        writeln!(out, "  disabled:   {name} ({why})")?;
    }
    writeln!(out, "  root:       {}", root(choice))?;
    if let Some(server) = server {
        match &server.path {
            // Where it resolves on PATH: "why not mine" is sometimes another binary.
            Some(path) => writeln!(
                out,
                "  command:    {} (runs {})",
                command_line(server),
                path.display()
            )?,
            None => writeln!(out, "  command:    {}", command_line(server))?,
        }
        writeln!(out, "  from:       {}", origin_text(server.origin))?;
        if missing {
            writeln!(out, "  install:    {}", server.install_hint)?;
        }
    }
    writeln!(out)?;
    render_config(doctor, out)
}

fn why(file: &FileExplanation, choice: &Choice, kind: &str) -> String {
    let covered = if file.candidates.len() == 1 {
        format!("{kind} are covered by {} only", choice.server)
    } else {
        format!(
            "{kind} are covered by {} (in preference order)",
            file.candidates.join(", ")
        )
    };
    match &choice.reason {
        Reason::Preferred if file.candidates.len() == 1 => {
            format!("{covered}, and it is installed")
        }
        Reason::Preferred => format!("{covered}; {} is first and installed", choice.server),
        Reason::Fallback { missing } => format!(
            "{covered}; {} not installed, so {} is used",
            are(missing),
            choice.server
        ),
        Reason::NotInstalled => format!(
            "{covered}; none is installed, so a run reports the file as not checked (exit 3 \
             unless it finds errors elsewhere)"
        ),
    }
}

/// The linters that check the file beside its checker, each with its state.
fn linters(doctor: &Doctor, file: &FileExplanation) -> String {
    file.linters
        .iter()
        .map(
            |name| match doctor.servers.iter().find(|s| &s.name == name) {
                Some(server) => format!("{name} ({})", status(server)),
                None => name.clone(),
            },
        )
        .collect::<Vec<_>>()
        .join("; ")
}

/// `a is` / `a and b are`.
fn are(names: &[String]) -> String {
    match names {
        [one] => format!("{one} is"),
        _ => format!("{} are", names.join(" and ")),
    }
}

/// Absolute: a relative root would often print as `.`, which explains nothing.
fn root(choice: &Choice) -> String {
    let shown = choice.root.display();
    match &choice.root_marker {
        Some(marker) => format!("{shown} (it holds {marker})"),
        None => format!("{shown} (no root marker above the file: the workspace)"),
    }
}

fn origin_text(origin: Origin) -> &'static str {
    match origin {
        Origin::BuiltIn => "built-in",
        Origin::UserConfig => "user config",
        Origin::ProjectConfig => "project config",
    }
}

fn extensions(extensions: &[String]) -> String {
    let dotted: Vec<String> = extensions.iter().map(|e| format!(".{e}")).collect();
    dotted.join(" ")
}

fn markers(markers: &[String]) -> String {
    if markers.is_empty() {
        "none (starts at the workspace)".to_string()
    } else {
        markers.join(" ")
    }
}

fn command_line(server: &ServerInfo) -> String {
    std::iter::once(&server.command)
        .chain(&server.args)
        .map(|word| quote(word))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A word as a shell would need it, so a command with spaces reads unambiguously.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A candidate's state in one phrase, for the FILE explanation.
fn status(server: &ServerInfo) -> String {
    let disabled = if server.disabled { ", disabled" } else { "" };
    match (&server.path, &server.version) {
        (Some(_), Some(version)) => format!("installed, {version}{disabled}"),
        (Some(_), None) => format!("installed{disabled}"),
        (None, _) => format!("missing{disabled}; install: {}", server.install_hint),
    }
}

// ----------------------------------------------------------------------------------
// JSON

#[derive(Serialize)]
struct JsonDoctor<'a> {
    schema: u32,
    workspace: String,
    config_files: Vec<String>,
    trusted: bool,
    notes: &'a [String],
    servers: Vec<JsonServer<'a>>,
    file: Option<JsonFile<'a>>,
}

#[derive(Serialize)]
struct JsonServer<'a> {
    name: &'a str,
    origin: Origin,
    disabled: bool,
    command: &'a str,
    args: &'a [String],
    extensions: &'a [String],
    root_markers: &'a [String],
    installed: bool,
    path: Option<String>,
    version: Option<&'a str>,
    install_hint: &'a str,
    role: Role,
    why: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    path: String,
    extension: Option<&'a str>,
    candidates: &'a [String],
    linters: &'a [String],
    not_checked: Option<&'a str>,
    disabled: &'a [String],
    chosen: Option<JsonChoice<'a>>,
}

#[derive(Serialize)]
struct JsonChoice<'a> {
    server: &'a str,
    installed: bool,
    /// `preferred`, `fallback` or `not-installed`.
    reason: &'static str,
    /// The candidates before it that are not installed (for `fallback`).
    skipped: &'a [String],
    root: String,
    root_marker: Option<&'a str>,
}

fn build(doctor: &Doctor) -> JsonDoctor<'_> {
    let absolute = |path: &Path| path.display().to_string();
    JsonDoctor {
        schema: SCHEMA,
        workspace: absolute(&doctor.workspace),
        config_files: doctor.config_files.iter().map(|p| absolute(p)).collect(),
        trusted: doctor.trusted,
        notes: &doctor.notes,
        servers: doctor
            .servers
            .iter()
            .map(|server| JsonServer {
                name: &server.name,
                origin: server.origin,
                disabled: server.disabled,
                command: &server.command,
                args: &server.args,
                extensions: &server.extensions,
                root_markers: &server.root_markers,
                installed: server.installed(),
                path: server.path.as_deref().map(absolute),
                version: server.version.as_deref(),
                install_hint: &server.install_hint,
                role: server.role,
                why: server.why.as_deref(),
            })
            .collect(),
        file: doctor.file.as_ref().map(|file| JsonFile {
            path: paths::display_raw(&file.path, &doctor.run_dir),
            extension: file.extension.as_deref(),
            candidates: &file.candidates,
            linters: &file.linters,
            not_checked: file.not_checked.as_deref(),
            disabled: &file.disabled,
            chosen: file.chosen.as_ref().map(|choice| {
                let (reason, skipped): (_, &[String]) = match &choice.reason {
                    Reason::Preferred => ("preferred", &[]),
                    Reason::Fallback { missing } => ("fallback", missing),
                    Reason::NotInstalled => ("not-installed", &[]),
                };
                JsonChoice {
                    server: &choice.server,
                    installed: !matches!(choice.reason, Reason::NotInstalled),
                    reason,
                    skipped,
                    root: absolute(&choice.root),
                    root_marker: choice.root_marker.as_deref(),
                }
            }),
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn server(name: &str, installed: bool, version: Option<&str>) -> ServerInfo {
        ServerInfo {
            name: name.into(),
            command: format!("{name}-ls"),
            args: vec!["--stdio".into()],
            extensions: vec!["py".into(), "pyi".into()],
            root_markers: vec!["pyproject.toml".into()],
            origin: Origin::BuiltIn,
            disabled: false,
            path: installed.then(|| PathBuf::from(format!("/usr/bin/{name}-ls"))),
            version: version.map(str::to_owned),
            install_hint: format!("npm install -g {name}"),
            role: Role::Checker,
            why: None,
        }
    }

    fn doctor(file: Option<FileExplanation>) -> Doctor {
        let mut off = server("off", true, None);
        off.disabled = true;
        off.origin = Origin::ProjectConfig;
        Doctor {
            workspace: PathBuf::from("/ws"),
            run_dir: PathBuf::from("/ws"),
            config_files: vec![PathBuf::from("/ws/.lspgate.toml")],
            trusted: false,
            notes: vec!["ignored server.x.command".into()],
            servers: vec![
                server("pyright", true, Some("1.1.414")),
                server("basedpyright", false, None),
                off,
            ],
            file,
        }
    }

    fn render_text(doctor: &Doctor) -> String {
        let mut out = Vec::new();
        render(doctor, Format::Text, &mut out).expect("write to a Vec");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn list_text() {
        let text = render_text(&doctor(None));
        assert!(
            text.contains(
                "pyright (built-in)\n  files:        .py .pyi\n  command:      pyright-ls --stdio\n  \
                 status:       installed at /usr/bin/pyright-ls\n  version:      1.1.414\n  \
                 root markers: pyproject.toml\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "status:       missing (`basedpyright-ls` is not on PATH); \
                 install: npm install -g basedpyright\n  root markers"
            ),
            "{text}"
        );
        assert!(text.contains("off (project config, disabled)\n"), "{text}");
        assert!(text.contains("Config files: .lspgate.toml\n"), "{text}");
        assert!(text.ends_with("note: ignored server.x.command\n"), "{text}");
    }

    fn explanation(chosen: Option<Choice>) -> FileExplanation {
        FileExplanation {
            path: PathBuf::from("/ws/src/a.py"),
            extension: Some("py".into()),
            candidates: vec!["basedpyright".into(), "pyright".into()],
            linters: Vec::new(),
            not_checked: None,
            disabled: vec!["off".into()],
            chosen,
        }
    }

    #[test]
    fn file_text_fallback() {
        let choice = Choice {
            server: "pyright".into(),
            reason: Reason::Fallback {
                missing: vec!["basedpyright".into()],
            },
            root: PathBuf::from("/ws/src"),
            root_marker: Some("pyproject.toml".into()),
        };
        let text = render_text(&doctor(Some(explanation(Some(choice)))));
        assert!(text.starts_with("src/a.py: pyright\n"), "{text}");
        assert!(
            text.contains(
                "  why:        .py files are covered by basedpyright, pyright (in preference \
                 order); basedpyright is not installed, so pyright is used\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  root:       /ws/src (it holds pyproject.toml)\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "  candidates: basedpyright (missing; install: npm install -g basedpyright); \
                 pyright (installed, 1.1.414)\n"
            ),
            "{text}"
        );
        assert!(text.contains("  disabled:   off"), "{text}");
        assert!(!text.contains("install:    "), "{text}");
        assert!(
            text.contains("  command:    pyright-ls --stdio (runs /usr/bin/pyright-ls)\n"),
            "{text}"
        );
    }

    #[test]
    fn file_text_not_installed_and_uncovered() {
        let choice = Choice {
            server: "basedpyright".into(),
            reason: Reason::NotInstalled,
            root: PathBuf::from("/ws"),
            root_marker: None,
        };
        let text = render_text(&doctor(Some(explanation(Some(choice)))));
        assert!(
            text.starts_with("src/a.py: basedpyright, but it is not installed\n"),
            "{text}"
        );
        assert!(
            text.contains("  install:    npm install -g basedpyright\n"),
            "{text}"
        );
        assert!(
            text.contains("(no root marker above the file: the workspace)"),
            "{text}"
        );

        let mut none = explanation(None);
        none.path = PathBuf::from("/ws/README.md");
        none.extension = Some("md".into());
        none.candidates.clear();
        none.disabled.clear();
        let text = render_text(&doctor(Some(none)));
        assert!(
            text.starts_with("README.md: no server covers .md files.\n"),
            "{text}"
        );
    }

    #[test]
    fn json_shape_is_stable() {
        let mut out = Vec::new();
        render(&doctor(None), Format::Json, &mut out).expect("write to a Vec");
        let value: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
        let mut keys: Vec<&str> = value
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "config_files",
                "file",
                "notes",
                "schema",
                "servers",
                "trusted",
                "workspace"
            ]
        );
        assert_eq!(value["file"], serde_json::Value::Null);
        assert_eq!(
            value["servers"][1],
            serde_json::json!({
                "name": "basedpyright", "origin": "built-in", "disabled": false,
                "command": "basedpyright-ls", "args": ["--stdio"], "extensions": ["py", "pyi"],
                "root_markers": ["pyproject.toml"], "installed": false, "path": null,
                "version": null, "install_hint": "npm install -g basedpyright",
                "role": "checker", "why": null,
            })
        );
        assert_eq!(value["servers"][2]["origin"], "project-config");

        let choice = Choice {
            server: "pyright".into(),
            reason: Reason::Fallback {
                missing: vec!["basedpyright".into()],
            },
            root: PathBuf::from("/ws/src"),
            root_marker: Some("pyproject.toml".into()),
        };
        let mut out = Vec::new();
        render(
            &doctor(Some(explanation(Some(choice)))),
            Format::Json,
            &mut out,
        )
        .expect("write to a Vec");
        let value: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
        assert_eq!(
            value["file"],
            serde_json::json!({
                "path": "src/a.py", "extension": "py",
                "candidates": ["basedpyright", "pyright"], "linters": [],
                "not_checked": null, "disabled": ["off"],
                "chosen": {"server": "pyright", "installed": true, "reason": "fallback",
                    "skipped": ["basedpyright"], "root": "/ws/src",
                    "root_marker": "pyproject.toml"},
            })
        );
    }

    #[test]
    fn commands_quote_words_that_need_it() {
        assert_eq!(quote("--stdio"), "--stdio");
        assert_eq!(quote("/opt/my ls/bin"), "'/opt/my ls/bin'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }
}
