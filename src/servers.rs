//! The server table: which language server handles which files, how to start it,
//! what to answer its configuration requests with, and how it behaves while we wait
//! for its diagnostics. The built-in table covers pyright, basedpyright,
//! typescript-language-server, gopls, clangd and rust-analyzer, and ([`extra`]) ty,
//! pyrefly, TypeScript 7's own server, ruff and ESLint; `config` layers the user's and
//! the project's `.lspgate.toml` over it.

mod extra;

pub(crate) use extra::TS_EXTENSIONS;
pub use extra::TSGO;

use std::time::Duration;

use serde_json::{Value, json};

/// Where a server's entry came from, for `servers` and for the trust rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    BuiltIn,
    UserConfig,
    ProjectConfig,
}

/// How a server delivers diagnostics, as far as the waits need to know.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WaitProfile {
    /// The server echoes the document version we sent in its publishes, so a
    /// publish carrying another version is not the answer to our change.
    pub versioned_publish: bool,
    /// Silence (with no progress under way) after which the server counts as settled.
    pub quiet: Duration,
    /// The silence that is enough once every file waited for has a positive sign
    /// that the server is done with our change (a publish echoing our version, for
    /// clangd followed by "idle"; a pull answer): it only has to cover the rest of the burst
    /// the last publish came in. `None`: the same as `quiet`, for servers that
    /// publish a file more than once per change (rust-analyzer's cargo check).
    pub confirmed_quiet: Option<Duration>,
    /// typescript-language-server: ask tsserver for a file's diagnostics directly
    /// (`workspace/executeCommand typescript.tsserverRequest` with the three
    /// `*DiagnosticsSync` commands) instead of waiting for its push, which comes
    /// 300–800 ms after a change (its debounce) and not at all for a file that stays
    /// clean. Used when the server lists the command in `executeCommandProvider`.
    pub tsserver_pull: bool,
    /// How long after a change an open file with no publish at all counts as
    /// unchanged: typescript-language-server sends nothing when a file stays clean.
    pub unpublished_after: Duration,
    /// A `workspace/diagnostic/refresh` means pull answers may be out of date, so the
    /// wait pulls again, and lets the server settle. pyright sends one ~250 ms after
    /// every change in pull mode although its answers to pulls sent after the change
    /// are already final: for it, an answered pull ends a file's wait outright.
    pub refresh_is_news: bool,
    /// Whether the server rechecks a dependent against the open (unsaved) text of
    /// the files it uses. clangd 14 reads included headers from the disk, so a
    /// change shown only in memory (--dry-run, --reject, check --staged) does not
    /// reach the files that include it.
    pub dependents_see_unsaved: bool,
    /// The server analyses every file of its workspace by itself and republishes
    /// what a change affects, whether the file is open or not (pyright and
    /// basedpyright in `diagnosticMode: "workspace"`). What it published is then a
    /// complete, live before view, and the files it republishes after an edit are
    /// the edit's dependents: no scan, no opening. Such a server is told of no pull
    /// capability (pyright stops publishing when pulls are offered); it is done with
    /// a change when the files it was told of are republished and the work-done
    /// progress it created has ended (see `lsp`).
    pub workspace_analysis: bool,
}

impl WaitProfile {
    /// The silence that settles the server once every file has a positive sign.
    pub fn confirmed_quiet(&self) -> Duration {
        self.confirmed_quiet.unwrap_or(self.quiet)
    }
}

impl Default for WaitProfile {
    fn default() -> Self {
        WaitProfile {
            versioned_publish: true,
            quiet: Duration::from_millis(300),
            confirmed_quiet: None,
            tsserver_pull: false,
            unpublished_after: Duration::from_millis(1000),
            refresh_is_news: true,
            dependents_see_unsaved: true,
            workspace_analysis: false,
        }
    }
}

/// One language server and the files it covers.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ServerSpec {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    /// File extensions (without the dot) this server checks.
    pub extensions: Vec<String>,
    /// LSP languageId per extension; extensions not listed use `default_language_id`.
    pub language_ids: Vec<(String, String)>,
    pub default_language_id: String,
    /// Files or directories whose presence marks a server root.
    pub root_markers: Vec<String>,
    /// Answered to `workspace/configuration`, looked up by section path.
    pub settings: Value,
    pub initialization_options: Option<Value>,
    pub wait: WaitProfile,
    /// How to install it, for the note printed when it is missing.
    pub install_hint: String,
    /// Where its command (and arguments) came from.
    pub origin: Origin,
    /// Turned off by a config file (`disabled = true`): kept in the table so that
    /// `servers` can say so, never chosen for a file.
    pub disabled: bool,
    /// Extensions this server would check and may not, each with why: an untrusted
    /// project config turned it off for them, or it cannot be run safely. A file of one
    /// that no other server checks is reported as not checked (exit 3), not skipped
    /// (`config::stopped_check`).
    #[serde(default)]
    pub not_checked: Vec<(String, String)>,
    /// How it shares files with the other servers (checker or linter), and which
    /// files it asks about besides the edited ones.
    #[serde(default)]
    pub coverage: Coverage,
}

/// A server's part among the servers that cover the same files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The file's type checker or compiler: of the checkers covering a file, only
    /// the first installed one runs (pyright before basedpyright, ty, pyrefly), so
    /// two type checkers never both report the same problems.
    #[default]
    Checker,
    /// Runs beside the checker, every installed one (ruff, ESLint).
    Linter,
}

/// Which files besides the edited ones a server is asked about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dependents {
    /// The likely dependents a text scan finds (`dependents::scan`), opened.
    #[default]
    Scan,
    /// None: a per-file linter, whose findings in a file depend on that file alone.
    None,
    /// Every file of the project, pulled without opening them: TypeScript 7 answers
    /// a pull for a closed file of its tsconfig project exactly, in milliseconds.
    Project,
}

/// See [`ServerSpec::coverage`].
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Coverage {
    #[serde(default)]
    pub role: Role,
    /// Files (`NAME`, or `NAME:TEXT` for a file holding TEXT) in a file's directory
    /// or above, inside the workspace, that show the project configures this
    /// server. A linter that is missing counts (a note, exit 3) only where one is
    /// found; with `needs_config`, it runs only there.
    #[serde(default)]
    pub config_files: Vec<String>,
    /// Runs only for files under one of its `config_files` (ESLint: without a
    /// config it has no rules to apply, and errors out).
    #[serde(default)]
    pub needs_config: bool,
    #[serde(default)]
    pub dependents: Dependents,
    /// Why this server is used in this workspace, or not, when that was decided
    /// from the project (which TypeScript it is on); for `lspgate servers`.
    #[serde(default)]
    pub why: Option<String>,
}

impl ServerSpec {
    pub fn language_id(&self, ext: &str) -> &str {
        self.language_ids
            .iter()
            .find(|(e, _)| e == ext)
            .map(|(_, id)| id.as_str())
            .unwrap_or(&self.default_language_id)
    }

    /// The value of `section` (dotted path) in the settings, or null.
    pub fn setting(&self, section: Option<&str>) -> Value {
        let Some(section) = section.filter(|s| !s.is_empty()) else {
            return self.settings.clone();
        };
        let mut v = &self.settings;
        for part in section.split('.') {
            match v.get(part) {
                Some(next) => v = next,
                None => return Value::Null,
            }
        }
        v.clone()
    }
}

/// Root markers of the Python servers (pyright and basedpyright read the same files).
const PYTHON_ROOTS: &[&str] = &[
    "pyrightconfig.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
];

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The built-in table, in preference order: for an extension claimed by several
/// checkers the first one installed wins (pyright before basedpyright, ty, pyrefly;
/// typescript-language-server before TypeScript 7's server, unless the project's
/// TypeScript decides, see `typescript`); every installed linter runs beside it.
pub fn builtin() -> Vec<ServerSpec> {
    let mut table = first_six();
    table.extend(extra::builtin());
    table
}

/// The entries of the first release.
fn first_six() -> Vec<ServerSpec> {
    let python_analysis = json!({
        // `workspace` (see `set_project_wide`, which the table applies below): the
        // server's own analysis of every file is the before view and finds the
        // dependents, transitively, through inferred types too.
        "diagnosticMode": "workspace",
        "autoSearchPaths": true,
        "useLibraryCodeForTypes": true,
    });
    let ts_ids = vec![
        ("ts".to_string(), "typescript".to_string()),
        ("tsx".to_string(), "typescriptreact".to_string()),
        ("mts".to_string(), "typescript".to_string()),
        ("cts".to_string(), "typescript".to_string()),
        ("js".to_string(), "javascript".to_string()),
        ("jsx".to_string(), "javascriptreact".to_string()),
        ("mjs".to_string(), "javascript".to_string()),
        ("cjs".to_string(), "javascript".to_string()),
    ];
    vec![
        ServerSpec {
            name: "pyright".into(),
            command: "pyright-langserver".into(),
            args: strs(&["--stdio"]),
            extensions: strs(&["py", "pyi"]),
            language_ids: vec![],
            default_language_id: "python".into(),
            root_markers: strs(PYTHON_ROOTS),
            settings: json!({ "python": { "analysis": python_analysis.clone() } }),
            initialization_options: None,
            // In workspace mode it publishes every file, the edited (open) one first
            // and in the same burst as the `window/workDoneProgress/create` of its
            // re-analysis: the quiet only has to see that burst through. With the
            // project-wide mode off, pull answers are final (see refresh_is_news).
            wait: WaitProfile {
                quiet: Duration::from_millis(60),
                refresh_is_news: false,
                workspace_analysis: true,
                ..WaitProfile::default()
            },
            install_hint: "npm install -g pyright".into(),
            origin: Origin::BuiltIn,
            disabled: false,
            not_checked: Vec::new(),
            coverage: Coverage::default(),
        },
        ServerSpec {
            name: "basedpyright".into(),
            command: "basedpyright-langserver".into(),
            args: strs(&["--stdio"]),
            extensions: strs(&["py", "pyi"]),
            language_ids: vec![],
            default_language_id: "python".into(),
            root_markers: strs(PYTHON_ROOTS),
            settings: json!({
                "python": {},
                "basedpyright": { "analysis": python_analysis },
            }),
            initialization_options: None,
            wait: WaitProfile {
                quiet: Duration::from_millis(60),
                refresh_is_news: false,
                workspace_analysis: true,
                ..WaitProfile::default()
            },
            install_hint: "pip install basedpyright".into(),
            origin: Origin::BuiltIn,
            disabled: false,
            not_checked: Vec::new(),
            coverage: Coverage::default(),
        },
        ServerSpec {
            name: "typescript-language-server".into(),
            command: "typescript-language-server".into(),
            args: strs(&["--stdio"]),
            extensions: strs(&["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"]),
            language_ids: ts_ids,
            default_language_id: "typescript".into(),
            root_markers: strs(&["tsconfig.json", "jsconfig.json", "package.json"]),
            settings: json!({}),
            // tsserver's automatic typings acquisition runs npm (through a shell, from
            // `npmLocation`), fetches packages and writes ~/.cache/typescript: not for
            // a check. `tsserver.path` is pinned by `config` unless the project is
            // trusted.
            initialization_options: Some(json!({
                "preferences": {},
                "disableAutomaticTypingAcquisition": true,
            })),
            // Its diagnostics are pulled from tsserver (see tsserver_pull), and a
            // pull answer is final. Without that command: no versions in its
            // publishes, no publish at all when a file stays clean, and its geterr
            // runs 300 ms or more after a change.
            wait: WaitProfile {
                versioned_publish: false,
                quiet: Duration::from_millis(300),
                tsserver_pull: true,
                refresh_is_news: false,
                unpublished_after: Duration::from_millis(900),
                ..WaitProfile::default()
            },
            install_hint: "npm install -g typescript-language-server typescript@6".into(),
            origin: Origin::BuiltIn,
            disabled: false,
            not_checked: Vec::new(),
            coverage: Coverage::default(),
        },
        ServerSpec {
            name: "gopls".into(),
            command: "gopls".into(),
            args: vec![],
            extensions: strs(&["go"]),
            language_ids: vec![],
            default_language_id: "go".into(),
            root_markers: strs(&["go.work", "go.mod"]),
            // gopls diagnoses a change in two passes by default: the changed
            // packages at once, then everything (with analysis) after a 250 ms
            // debounce (`diagnosticsDelay`). With no delay it makes one full pass
            // and publishes every file in one burst, each with its document's
            // version, in a few milliseconds.
            settings: json!({ "gopls": { "diagnosticsDelay": "0s" } }),
            initialization_options: None,
            wait: WaitProfile {
                quiet: Duration::from_millis(400),
                // One pass's publishes were measured within the same millisecond.
                confirmed_quiet: Some(Duration::from_millis(10)),
                unpublished_after: Duration::from_millis(600),
                // gopls diagnoses every package of the workspace when it loads it and
                // re-diagnoses a change's reverse dependencies, open or not (measured:
                // unopened files of other packages republished in the change's pass),
                // so what it published is the before view and the dependents: opening
                // them made it reload package metadata (`go list`), 0.8 s a run on a
                // 34-file module.
                workspace_analysis: true,
                ..WaitProfile::default()
            },
            install_hint: "apt-get install gopls golang-go".into(),
            origin: Origin::BuiltIn,
            disabled: false,
            not_checked: Vec::new(),
            coverage: Coverage::default(),
        },
        ServerSpec {
            name: "clangd".into(),
            command: "clangd".into(),
            args: strs(&["--background-index=false"]),
            extensions: strs(&["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"]),
            language_ids: vec![
                ("c".to_string(), "c".to_string()),
                ("h".to_string(), "c".to_string()),
            ],
            default_language_id: "cpp".into(),
            root_markers: strs(&["compile_commands.json", "compile_flags.txt", ".clangd"]),
            settings: json!({}),
            initialization_options: Some(json!({ "clangdFileStatus": true })),
            // clangd reports each file's state (textDocument/clangd.fileStatus): a
            // file with a publish of our version is done once its state is back to
            // "idle"; the short quiet covers the rest of the burst. "idle" with
            // nothing published waits out the full quiet (see wait.rs).
            wait: WaitProfile {
                quiet: Duration::from_millis(150),
                confirmed_quiet: Some(Duration::from_millis(15)),
                dependents_see_unsaved: false,
                ..WaitProfile::default()
            },
            install_hint: "apt-get install clangd".into(),
            origin: Origin::BuiltIn,
            disabled: false,
            not_checked: Vec::new(),
            coverage: Coverage::default(),
        },
        ServerSpec {
            name: "rust-analyzer".into(),
            command: "rust-analyzer".into(),
            args: vec![],
            extensions: strs(&["rs"]),
            language_ids: vec![],
            default_language_id: "rust".into(),
            root_markers: strs(&["Cargo.toml"]),
            settings: json!({}),
            initialization_options: Some(json!({ "checkOnSave": true })),
            // cargo check runs after a save and reports through progress; between
            // its progress tokens there can be short gaps.
            wait: WaitProfile {
                quiet: Duration::from_millis(300),
                ..WaitProfile::default()
            },
            install_hint: "rustup component add rust-analyzer".into(),
            origin: Origin::BuiltIn,
            disabled: false,
            not_checked: Vec::new(),
            coverage: Coverage::default(),
        },
    ]
}

/// Turn a server's project-wide analysis on or off (`project-wide` in a config file).
/// Only pyright and basedpyright have one that lspgate drives: `diagnosticMode`
/// `workspace` (every file analysed and published by the server) or `openFilesOnly`
/// (only the files lspgate opens, its dependents found by a scan). Costs: the whole
/// program in the server's memory, and a first analysis as long as the batch checker.
pub fn set_project_wide(spec: &mut ServerSpec, on: bool) -> Result<(), String> {
    let section = match spec.name.as_str() {
        "pyright" => "python",
        "basedpyright" => "basedpyright",
        // gopls reports unopened files by itself whatever it is told: off, lspgate
        // scans for the dependents and opens them instead.
        "gopls" => {
            spec.wait.workspace_analysis = on;
            return Ok(());
        }
        _ if spec.origin == Origin::BuiltIn => {
            return Err(format!(
                "{} has no project-wide mode lspgate can switch",
                spec.name
            ));
        }
        // A server a config adds that analyses its whole workspace by itself: only
        // the waits need to know.
        _ => {
            spec.wait.workspace_analysis = on;
            return Ok(());
        }
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
    spec.wait.workspace_analysis = on;
    Ok(())
}

/// Whether the server analyses its whole workspace, as its settings now say: a
/// config may have set pyright's `diagnosticMode` directly.
pub fn reconcile_project_wide(spec: &mut ServerSpec) {
    let section = match spec.name.as_str() {
        "pyright" => "python.analysis.diagnosticMode",
        "basedpyright" => "basedpyright.analysis.diagnosticMode",
        _ => return,
    };
    spec.wait.workspace_analysis = spec.setting(Some(section)) == "workspace";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_wide_mode_switches_pyright_between_workspace_and_open_files() {
        let mut pyright = builtin().remove(0);
        assert!(pyright.wait.workspace_analysis);
        assert_eq!(
            pyright.setting(Some("python.analysis.diagnosticMode")),
            "workspace"
        );
        assert_eq!(set_project_wide(&mut pyright, false), Ok(()));
        assert!(!pyright.wait.workspace_analysis);
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
        let mut clangd = builtin()
            .into_iter()
            .find(|s| s.name == "clangd")
            .expect("clangd is built in");
        assert!(set_project_wide(&mut clangd, true).is_err());
    }
}
