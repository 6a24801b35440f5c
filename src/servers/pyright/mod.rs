//! pyright and basedpyright (a fork that reads its own `basedpyright.*` settings
//! beside `python.*`): their entries, their waits, what an untrusted project may set
//! for them, and their project-wide mode (`diagnosticMode`), which lspgate switches.
//!
//! Versions: neither langserver has a `--version` (pyright-langserver starts node
//! for a second only to complain that no `--stdio` was given); `version` reads
//! pyright's from its npm package and basedpyright's from its PyPI distribution.

pub mod protocol;

use std::time::Duration;

use serde_json::{Value, json};

use super::{Allow, AllowList, Delivery, Origin, ServerSpec, WaitProfile, entry, languages, strs};

pub(super) const PYRIGHT: &str = "pyright";
pub(super) const BASEDPYRIGHT: &str = "basedpyright";

/// Root markers of the Python servers (pyright and basedpyright read the same
/// files; ty and pyrefly add their own).
pub(super) const PYTHON_ROOTS: &[&str] = &[
    "pyrightconfig.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
];

fn analysis() -> Value {
    json!({
        // `workspace` (see `set_project_wide`): the server's own analysis of every
        // file is the before view and finds the dependents, transitively, through
        // inferred types too.
        "diagnosticMode": "workspace",
        "autoSearchPaths": true,
        "useLibraryCodeForTypes": true,
    })
}

/// In workspace mode it publishes every file, the edited (open) one first and in
/// the same burst as the `window/workDoneProgress/create` of its re-analysis: the
/// quiet only has to see that burst through. With the project-wide mode off, it
/// answers pulls, and its answers to pulls sent after a change are final, although
/// it sends a `workspace/diagnostic/refresh` ~250 ms after every change: the
/// refresh is no news.
fn wait(name: &str) -> WaitProfile {
    WaitProfile {
        delivery: workspace_analysis(name),
        quiet: Duration::from_millis(60),
        refresh_is_news: false,
        ..WaitProfile::default()
    }
}

/// The workspace analysis of server `name` (pyright or basedpyright), its
/// project-wide mode.
///
/// Cold, its first publishes may come before the workspace analysis: the open files,
/// checked while it still lists the workspace's files (Django: 1 s without a
/// message), or the empty publishes of every file it found, some 40 ms before it
/// creates the progress of their analysis (longer on a loaded machine). The progress
/// ending is the sign that the analysis ran; a workspace small enough to be analysed
/// in one slice shows none, and is settled by the silence of `first_analysis_quiet`
/// instead.
///
/// pyright waits 250 ms for more typing after a `didChange` before it analyses
/// (`_userActivityBackoffTimeInMs` in its `analyzer/service.ts`); a `didOpen` is no
/// typing. A written file's new text is therefore sent as a close (it reads the disk,
/// finds the text changed and marks every importer for re-analysis) and an open, whose
/// version it publishes with the file's new diagnostics before it re-analyses the
/// importers under its progress. A warm edit of a Django leaf module, timed to its
/// last word: 0.31–0.34 s after a change, 0.06–0.09 s after a close and an open.
/// basedpyright, on the same fixture, publishes the closed file empty without a
/// version and never the reopened one: it keeps the change and its backoff.
fn workspace_analysis(name: &str) -> Delivery {
    Delivery::WorkspaceAnalysis {
        first_analysis_quiet: Some(Duration::from_secs(1)),
        typing_backoff: name == PYRIGHT,
        brackets_analyses: false,
    }
}

/// What pyright and basedpyright read as the configuration of the files under them:
/// the checking mode, rule severities, search paths, the Python version.
pub(super) const CONFIGURATION: &[&str] = &["pyrightconfig.json", "pyproject.toml"];

/// The monorepos pyright checks from their root: a uv workspace's members share one
/// environment (the root's `.venv`, each member installed editable), and pyright at
/// the root analyses every member in workspace mode. (A member's own `[tool.pyright]`
/// is then not read: pyright reads the root's configuration only.)
const MONOREPOS: &[crate::workspace::MonorepoKind] = &[crate::workspace::MonorepoKind::Uv];

/// What pyright and basedpyright read as configuration, and the monorepos they span.
fn coverage() -> super::Coverage {
    super::Coverage {
        configuration: strs(CONFIGURATION),
        monorepos: MONOREPOS.to_vec(),
        ..super::Coverage::default()
    }
}

pub(super) fn pyright() -> ServerSpec {
    ServerSpec {
        coverage: coverage(),
        root_markers: strs(PYTHON_ROOTS),
        settings: json!({ "python": { "analysis": analysis() } }),
        wait: wait(PYRIGHT),
        install_hint: "npm install -g pyright".into(),
        ..entry(
            PYRIGHT,
            "pyright-langserver",
            &["--stdio"],
            languages::PYTHON,
            "python",
        )
    }
}

pub(super) fn basedpyright() -> ServerSpec {
    ServerSpec {
        coverage: coverage(),
        root_markers: strs(PYTHON_ROOTS),
        settings: json!({
            "python": {},
            "basedpyright": { "analysis": analysis() },
        }),
        wait: wait(BASEDPYRIGHT),
        install_hint: "pip install basedpyright".into(),
        ..entry(
            BASEDPYRIGHT,
            "basedpyright-langserver",
            &["--stdio"],
            languages::PYTHON,
            "python",
        )
    }
}

/// What an untrusted project may set: the `workspace/configuration` sections (each
/// server reads its own `*.analysis`; both read `python.analysis`). Not
/// `python.pythonPath` and `venvPath`/`venv` (an interpreter pyright runs to find its
/// search paths). Neither reads initialization options.
pub(super) const ALLOWED: AllowList = AllowList {
    settings: SETTINGS,
    initialization_options: &[],
};

const SETTINGS: &[(&str, Allow)] = &[
    ("python.analysis.typeCheckingMode", Allow::Value),
    ("python.analysis.diagnosticMode", Allow::Value),
    ("python.analysis.autoSearchPaths", Allow::Value),
    ("python.analysis.useLibraryCodeForTypes", Allow::Value),
    ("python.analysis.diagnosticSeverityOverrides", Allow::Tree),
    ("python.analysis.autoImportCompletions", Allow::Value),
    ("python.analysis.logLevel", Allow::Value),
    ("python.analysis.extraPaths", Allow::InsidePaths),
    ("python.analysis.stubPath", Allow::InsidePaths),
    ("python.analysis.include", Allow::InsidePaths),
    ("python.analysis.exclude", Allow::InsidePaths),
    ("python.analysis.ignore", Allow::InsidePaths),
    ("pyright.disableLanguageServices", Allow::Value),
    ("pyright.disableOrganizeImports", Allow::Value),
    ("pyright.disableTaggedHints", Allow::Value),
    ("basedpyright.analysis.typeCheckingMode", Allow::Value),
    ("basedpyright.analysis.diagnosticMode", Allow::Value),
    ("basedpyright.analysis.autoSearchPaths", Allow::Value),
    ("basedpyright.analysis.useLibraryCodeForTypes", Allow::Value),
    (
        "basedpyright.analysis.diagnosticSeverityOverrides",
        Allow::Tree,
    ),
    ("basedpyright.analysis.autoImportCompletions", Allow::Value),
    ("basedpyright.analysis.logLevel", Allow::Value),
    ("basedpyright.analysis.extraPaths", Allow::InsidePaths),
    ("basedpyright.analysis.stubPath", Allow::InsidePaths),
    ("basedpyright.analysis.include", Allow::InsidePaths),
    ("basedpyright.analysis.exclude", Allow::InsidePaths),
    ("basedpyright.analysis.ignore", Allow::InsidePaths),
    ("basedpyright.disableLanguageServices", Allow::Value),
    ("basedpyright.disableOrganizeImports", Allow::Value),
    ("basedpyright.disableTaggedHints", Allow::Value),
];

/// basedpyright, unlike pyright, runs the interpreter of a `.venv` it finds at the
/// top of its workspace to learn its search paths, unless it is given one
/// (`python.pythonPath`, which an untrusted project may not set) or a `venv` to read
/// (which it reads without running anything). Measured: a planted
/// `.venv/bin/python` ran; with `python.pythonPath` set, it did not, and the check
/// found the same error. So in an untrusted workspace it is given the user's
/// interpreter (`python3` on `PATH`, else `python`), as pyright finds its own; with
/// none, it is not run, and a file it alone would check is reported as not checked.
pub(super) fn pin_interpreter(
    spec: &mut ServerSpec,
    which: &dyn Fn(&str) -> Option<std::path::PathBuf>,
) {
    if spec.name != BASEDPYRIGHT || spec.disabled {
        return;
    }
    if !spec.setting(Some("python.pythonPath")).is_null() {
        // The user's own config gave one.
        return;
    }
    match which("python3").or_else(|| which("python")) {
        Some(python) => {
            super::merge_json(
                &mut spec.settings,
                json!({ "python": { "pythonPath": python.display().to_string() } }),
            );
        }
        None => {
            spec.disabled = true;
            let why = "not run: it would run the Python interpreter of the workspace's \
                       .venv, no python3 is on PATH to give it instead, and the workspace \
                       is not trusted";
            for ext in &spec.extensions {
                spec.not_checked
                    .push((ext.clone(), format!("basedpyright is {why}")));
            }
            spec.coverage.why = Some(why.to_string());
        }
    }
}

/// The settings section holding a server's `analysis.diagnosticMode`.
fn mode_section(name: &str) -> Option<&'static str> {
    match name {
        PYRIGHT => Some("python"),
        BASEDPYRIGHT => Some("basedpyright"),
        _ => None,
    }
}

/// Turn a server's project-wide analysis on or off (`project-wide` in a config file).
/// Only pyright and basedpyright have one that lspgate drives: `diagnosticMode`
/// `workspace` (every file analysed and published by the server) or `openFilesOnly`
/// (only the files lspgate opens, its dependents found by a scan). Costs: the whole
/// program in the server's memory, and a first analysis as long as the batch checker.
pub(super) fn set_project_wide(spec: &mut ServerSpec, on: bool) -> Result<(), String> {
    let Some(section) = mode_section(&spec.name) else {
        if spec.origin == Origin::BuiltIn {
            return Err(format!(
                "{} has no project-wide mode lspgate can switch",
                spec.name
            ));
        }
        // A server a config adds that analyses its whole workspace by itself: only
        // the waits need to know. One that reports unopened files already (a
        // rust-analyzer given its own command, checking after a save) keeps its
        // way; off ends a workspace analysis only.
        if on && !spec.wait.reports_unopened() {
            spec.wait.delivery = Delivery::ANALYSIS;
        } else if !on && spec.wait.workspace_analysis() {
            spec.wait.delivery = Delivery::OpenFiles;
        }
        return Ok(());
    };
    let mode = if on { "workspace" } else { "openFilesOnly" };
    let mut node = &mut spec.settings;
    for key in [section, "analysis"] {
        // A config may have put anything here; an object it must be.
        if !node.is_object() {
            *node = json!({});
        }
        node = node
            .as_object_mut()
            .map(|map| map.entry(key).or_insert(Value::Null))
            .ok_or_else(|| format!("{}: settings are not a table", spec.name))?;
    }
    if !node.is_object() {
        *node = json!({});
    }
    if let Some(map) = node.as_object_mut() {
        map.insert("diagnosticMode".into(), json!(mode));
    }
    switch(spec, on);
    Ok(())
}

/// Whether the server analyses its whole workspace, as its settings now say: a
/// config may have set pyright's `diagnosticMode` directly.
pub fn reconcile_project_wide(spec: &mut ServerSpec) {
    if let Some(section) = mode_section(&spec.name) {
        let key = format!("{section}.analysis.diagnosticMode");
        let on = spec.setting(Some(&key)) == "workspace";
        switch(spec, on);
    }
}

/// pyright or basedpyright with its workspace analysis `on` (as it was, if it was
/// on) or off (answering pulls for the files it is shown).
fn switch(spec: &mut ServerSpec, on: bool) {
    if !on {
        spec.wait.delivery = Delivery::OpenFiles;
    } else if !spec.wait.workspace_analysis() {
        spec.wait.delivery = workspace_analysis(&spec.name);
    }
}

#[cfg(test)]
mod tests {
    use super::super::builtin;
    use super::*;

    /// pyright is shown a written file as a close and an open while it pushes its
    /// workspace analysis; basedpyright, and pyright answering pulls, get changes.
    #[test]
    fn only_pyright_in_workspace_mode_reopens_written_files() {
        let mut pyright = pyright();
        assert!(pyright.wait.reopens_written_files());
        assert_eq!(set_project_wide(&mut pyright, false), Ok(()));
        assert!(!pyright.wait.reopens_written_files());
        assert!(!basedpyright().wait.reopens_written_files());
    }

    #[test]
    fn the_project_wide_mode_switches_pyright_between_workspace_and_open_files() {
        let mut pyright = builtin().remove(0);
        assert!(pyright.wait.workspace_analysis());
        assert_eq!(
            pyright.setting(Some("python.analysis.diagnosticMode")),
            "workspace"
        );
        assert_eq!(set_project_wide(&mut pyright, false), Ok(()));
        assert!(!pyright.wait.workspace_analysis());
        assert_eq!(
            pyright.setting(Some("python.analysis.diagnosticMode")),
            "openFilesOnly"
        );
        pyright.settings = json!({ "python": "not a table" });
        assert_eq!(set_project_wide(&mut pyright, true), Ok(()));
        assert_eq!(
            pyright.setting(Some("python.analysis.diagnosticMode")),
            "workspace"
        );
        let mut ruff = builtin()
            .into_iter()
            .find(|s| s.name == "ruff")
            .expect("ruff is built in");
        assert!(super::super::set_project_wide(&mut ruff, true).is_err());
        // The TypeScript servers' is the daemon's pulls between runs.
        let mut tsls = builtin()
            .into_iter()
            .find(|s| s.name == "typescript-language-server")
            .expect("typescript-language-server is built in");
        assert!(tsls.coverage.idle_pulls > 0);
        assert_eq!(super::super::set_project_wide(&mut tsls, false), Ok(()));
        assert_eq!(tsls.coverage.idle_pulls, 0);
        let mut gopls = builtin()
            .into_iter()
            .find(|s| s.name == "gopls")
            .expect("gopls is built in");
        assert_eq!(super::super::set_project_wide(&mut gopls, false), Ok(()));
        assert!(!gopls.wait.workspace_analysis());
    }
}
