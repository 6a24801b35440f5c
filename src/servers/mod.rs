//! What lspgate knows about language servers: the shape of a server's entry
//! ([`ServerSpec`]) and of its waits ([`WaitProfile`]), and the built-in table,
//! assembled from one module per server family. Each family's module holds its
//! entries, its wait profiles, what an untrusted project may set for it, anything
//! special about learning its version, what it says or needs beyond the protocol
//! (its `protocol`, typescript's `tsserver`), and the one copy of each fact measured
//! about it:
//! - `pyright`: pyright and basedpyright, and their project-wide mode;
//! - [`typescript`]: typescript-language-server, TypeScript 7's server (tsgo,
//!   `tsc --lsp`) and ESLint, which of the two TypeScript servers checks a
//!   workspace, and the tsserver pinned for an untrusted one;
//! - `python_tools`: ty, pyrefly and ruff;
//! - `gopls`, `clangd`, `rust_analyzer`.
//!
//! [`quirks`] is the one value per running server through which `lsp` calls the
//! families' protocol extensions without naming a server.
//!
//! [`languages`] lists the file extensions and language ids of each language, for
//! the entries and for the dependents scan; [`version`] learns an installed
//! server's version without starting it as a server. `config` layers the user's and
//! the project's `.lspgate.toml` over the table.
//!
//! Adding a server: an entry in its family's file (a new file for a new family),
//! its place in [`builtin`], and its allow-list in [`untrusted_allow_list`]. A new
//! protocol extension goes in the family's `protocol` and is called from
//! [`quirks`]; only a new way of telling that a server is done needs `wait`.

mod clangd;
mod gopls;
pub(crate) mod languages;
mod pyright;
mod python_tools;
pub(crate) mod quirks;
mod rust_analyzer;
pub(crate) mod toolchain;
pub(crate) mod typescript;
pub(crate) mod version;

pub use clangd::{project_headers, project_units};
pub use quirks::Quirks;
pub use rust_analyzer::checks_at_start;
pub use typescript::TSGO;
pub use typescript::{files_to_pull, runs_besides};

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use languages::Extension;

/// Where a server's entry came from, for `servers` and for the trust rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    BuiltIn,
    UserConfig,
    ProjectConfig,
}

/// How a server delivers diagnostics, as far as the waits need to know. The values
/// of the built-in servers, and why, are in their families' files. What differs
/// between the ways a server can report is its [`Delivery`]; the rest holds for
/// every one of them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WaitProfile {
    /// How the server reports, and the options that mean something only so.
    pub delivery: Delivery,
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
    /// How long after a change an open file with no publish at all counts as
    /// unchanged, for a server that sends nothing when a file stays clean.
    pub unpublished_after: Duration,
    /// A `workspace/diagnostic/refresh` means pull answers may be out of date, so the
    /// wait pulls again, and lets the server settle. Off for a server whose answers to
    /// pulls sent after the change are final (an answered pull then ends a file's
    /// wait outright), whatever refreshes it sends (pyright).
    pub refresh_is_news: bool,
    /// Whether the server rechecks a dependent against the open (unsaved) text of
    /// the files it uses; without it, a change shown only in memory (--dry-run,
    /// --reject, check --staged) does not reach the files that use it (clangd).
    pub dependents_see_unsaved: bool,
    /// The server rebuilds a file sent again with its text unchanged only when it
    /// sees a reason of its own, and misses some (clangd: a header included after
    /// the file's preamble, a header it did not find; see
    /// `servers::clangd::protocol`); such a change asks it to rebuild where it would
    /// miss one. A fact about the server, whatever way it reports (moot only for one
    /// shown no document), so not a [`Delivery`]'s.
    #[serde(default)]
    pub force_rebuild_unchanged: bool,
}

/// The ways a server reports, each with the options that mean something in it alone,
/// so that no profile can hold a combination no server has: a switch of a server's
/// project-wide mode replaces its delivery with one its family builds
/// ([`set_project_wide`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// The server reports on the files it is shown: it pushes their diagnostics, or
    /// answers pulls (`textDocument/diagnostic`) when it offers them. Its dependents
    /// are found by lspgate and shown to it.
    OpenFiles,
    /// As [`Delivery::OpenFiles`], but a file's diagnostics are asked of tsserver
    /// directly (`workspace/executeCommand typescript.tsserverRequest` with the three
    /// `*DiagnosticsSync` commands) instead of waited for as the server's push, when
    /// the server lists the command in `executeCommandProvider`
    /// (typescript-language-server; see `typescript`).
    TsserverPull,
    /// The server analyses every file of its workspace by itself and republishes
    /// what a change affects, whether the file is open or not (pyright and
    /// basedpyright in `diagnosticMode: "workspace"`, gopls). What it published is
    /// then a complete, live before view, and the files it republishes after an edit
    /// are the edit's dependents: no scan, no opening. Such a server is told of no
    /// pull capability (pyright stops publishing when pulls are offered); it is done
    /// with a change when the files it was told of are republished and the work-done
    /// progress it created has ended (see `lsp`).
    WorkspaceAnalysis {
        /// The silence that settles a cold server that has not yet shown the
        /// progress of an analysis of its workspace, which may not have begun (see
        /// `pyright`). `None`: its `quiet`.
        first_analysis_quiet: Option<Duration>,
        /// The server waits for more typing after a `didChange` before it analyses
        /// (pyright: 250 ms, see `pyright`; basedpyright waits as well, but does not
        /// publish a file reopened so, and keeps the change). A written file's new
        /// text then goes as a close, which has it read the disk and mark the file's
        /// importers, and an open, which it takes at once. A text the disk does not
        /// hold (a dry run, a review) still goes as a change: an open alone would
        /// have it re-analyse the file but not its importers. (Answering pulls, with
        /// its analysis of the workspace off, it answers at once, backoff or not.)
        typing_backoff: bool,
        /// Every analysis it runs, the one at start-up included, is bracketed by a
        /// work-done progress that ends once the analysis has published (gopls told
        /// `verboseWorkDoneProgress`, see `gopls::protocol`). That end is the sign a
        /// cold server's before view waits for, so no file is opened to show that
        /// its analysis began, and a file the edit deletes, which says nothing after
        /// it, is not opened first: gopls diagnoses an opened file's package once
        /// more, with its analyzers (go-cmp: 0.2-0.4 s of a 1.2 s cold run).
        brackets_analyses: bool,
    },
    /// A save starts the server's check of the whole project, bracketed by a
    /// work-done progress, which pushes every file it finds a problem in and clears
    /// the rest (rust-analyzer's `cargo check`, its flycheck; see `rust_analyzer`).
    /// What it pushed is then the before view of the files nobody opened, and the
    /// files it pushes after a written edit with changed results are the edit's
    /// dependents: no scan, no opening. A change not written (a dry run, a review)
    /// is not what it checks: its dependents are scanned and opened. A server told
    /// of a save is not settled until a check that began after it has ended.
    CheckAfterSave {
        /// An answer to a pull sent after the check's end comes after every push of
        /// that check, so it ends the wait with no silence after it (rust-analyzer
        /// with one worker thread, see `rust_analyzer`).
        pushes_before_answers: bool,
        /// The server is shown no document. No file is opened, changed or closed; a
        /// written one is announced by asking for the check of every crate
        /// (`rust-analyzer/runFlycheck`) instead of a save, and a file is asked about
        /// with a pull, answered for the text on disk. For a server whose own
        /// analysis is off, reporting its check of the disk alone (rust-analyzer for
        /// one written edit, see `rust_analyzer::for_one_written_edit`).
        disk_only: bool,
    },
}

impl Delivery {
    /// A workspace analysis with nothing more known of it: the project-wide mode of
    /// a server a config adds (or gives its own command), or gopls's.
    pub const ANALYSIS: Delivery = Delivery::WorkspaceAnalysis {
        first_analysis_quiet: None,
        typing_backoff: false,
        brackets_analyses: false,
    };
}

impl WaitProfile {
    /// See [`Delivery::WorkspaceAnalysis`].
    pub fn workspace_analysis(&self) -> bool {
        matches!(self.delivery, Delivery::WorkspaceAnalysis { .. })
    }

    /// See [`Delivery::CheckAfterSave`].
    pub fn check_after_save(&self) -> bool {
        matches!(self.delivery, Delivery::CheckAfterSave { .. })
    }

    /// See [`Delivery::TsserverPull`].
    pub fn tsserver_pull(&self) -> bool {
        self.delivery == Delivery::TsserverPull
    }

    /// Whether the server is shown no document (see [`Delivery::CheckAfterSave`]).
    pub fn disk_only(&self) -> bool {
        matches!(
            self.delivery,
            Delivery::CheckAfterSave {
                disk_only: true,
                ..
            }
        )
    }

    /// Whether an answer to a pull sent after its check's end proves the check's
    /// pushes in (see [`Delivery::CheckAfterSave`]).
    pub fn pushes_before_answers(&self) -> bool {
        matches!(
            self.delivery,
            Delivery::CheckAfterSave {
                pushes_before_answers: true,
                ..
            }
        )
    }

    /// The silence that settles a cold server analysing its workspace that has not
    /// yet shown the progress of that analysis (see
    /// [`Delivery::WorkspaceAnalysis`]); `quiet` for any other.
    pub fn first_analysis_quiet(&self) -> Duration {
        match self.delivery {
            Delivery::WorkspaceAnalysis {
                first_analysis_quiet: Some(quiet),
                ..
            } => quiet,
            _ => self.quiet,
        }
    }

    /// Whether the server reports on files nobody opened by itself (a project-wide
    /// analysis, or a check of the whole project after a save): what it said is the
    /// before view of the files the run did not ask about, and it is settled before
    /// that view is taken and after the edit.
    pub fn reports_unopened(&self) -> bool {
        self.workspace_analysis() || self.check_after_save()
    }

    /// Whether the server names an edit's dependents by itself, re-checking them
    /// unopened: always when it analyses its whole workspace, when the edit is
    /// `written` if it checks the project after a save.
    pub fn finds_dependents(&self, written: bool) -> bool {
        self.workspace_analysis() || (self.check_after_save() && written)
    }

    /// Whether the server brackets every analysis it runs, its start-up's included
    /// (see [`Delivery::WorkspaceAnalysis`]'s `brackets_analyses`).
    pub fn brackets_analyses(&self) -> bool {
        matches!(
            self.delivery,
            Delivery::WorkspaceAnalysis {
                brackets_analyses: true,
                ..
            }
        )
    }

    /// Whether a written file's new text goes as a close and an open (see
    /// [`Delivery::WorkspaceAnalysis`]'s `typing_backoff`).
    pub fn reopens_written_files(&self) -> bool {
        matches!(
            self.delivery,
            Delivery::WorkspaceAnalysis {
                typing_backoff: true,
                ..
            }
        )
    }

    /// The silence that settles the server once every file has a positive sign.
    pub fn confirmed_quiet(&self) -> Duration {
        self.confirmed_quiet.unwrap_or(self.quiet)
    }

    /// A server that answers pulls (`textDocument/diagnostic`) with its final word: an
    /// answer to a pull sent after the change ends the file's wait, and no
    /// `workspace/diagnostic/refresh` is awaited (ty, pyrefly, ruff, TypeScript 7
    /// and ESLint send none).
    fn pull_final() -> WaitProfile {
        WaitProfile {
            quiet: Duration::from_millis(50),
            refresh_is_news: false,
            ..WaitProfile::default()
        }
    }
}

impl Default for WaitProfile {
    fn default() -> Self {
        WaitProfile {
            delivery: Delivery::OpenFiles,
            versioned_publish: true,
            quiet: Duration::from_millis(300),
            confirmed_quiet: None,
            unpublished_after: Duration::from_millis(1000),
            refresh_is_news: true,
            dependents_see_unsaved: true,
            force_rebuild_unchanged: false,
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
    /// Variables set in the server's environment (and its version probe's): the
    /// toolchains pinned for an untrusted workspace (`toolchain`), nothing else.
    #[serde(default)]
    pub env: Vec<(String, String)>,
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
    /// Every file of the project, pulled without opening them (TypeScript 7, see
    /// `typescript`).
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
    /// Runs only for files under one of its `config_files`: without a config it has
    /// no rules to apply (ESLint).
    #[serde(default)]
    pub needs_config: bool,
    #[serde(default)]
    pub dependents: Dependents,
    /// A warm daemon opens every translation unit of the project's compilation
    /// database when it lists at most this many (0: never), so that what the server
    /// said of each is the baseline an edit's before view is taken from: for a
    /// server that checks open files only and has no project-wide mode (clangd, see
    /// `clangd::project_units`). Off with `project-wide = false`.
    #[serde(default)]
    pub open_units: usize,
    /// A warm daemon asks the server about every file of its project between runs
    /// when it has at most this many (0: never), pulled without opening them, so that
    /// the before view of an edit's dependents is already held when it comes: for a
    /// server that answers a pull for a file it has not open exactly and has no
    /// project-wide analysis (the TypeScript servers, see `typescript`). Off with
    /// `project-wide = false`.
    #[serde(default)]
    pub idle_pulls: usize,
    /// The files the server reads as the configuration of the files at and below
    /// their directory, by name (`*` stands for any run of characters): an edit of one
    /// changes what the server says of every such file without changing any of them,
    /// so the check re-checks them all with a server started afresh
    /// (`check::configuration`).
    #[serde(default)]
    pub configuration: Vec<String>,
    /// The monorepos whose packages this server checks from the monorepo's root, one
    /// server for every package (`workspace::server_root`): those whose packages
    /// import one another in its languages.
    #[serde(default)]
    pub monorepos: Vec<crate::workspace::MonorepoKind>,
    /// Why this server is used in this workspace, or not, when that was decided
    /// from the project (which TypeScript it is on); for `lspgate servers`.
    #[serde(default)]
    pub why: Option<String>,
}

impl ServerSpec {
    /// Whether the server brackets every analysis it runs, its start-up's included
    /// (see [`Delivery::WorkspaceAnalysis`]'s `brackets_analyses`): its way of
    /// reporting says so when it is told to, and it is told to (a trusted config may
    /// turn gopls's option off, and then its first analysis shows no end).
    pub fn brackets_analyses(&self) -> bool {
        self.wait.brackets_analyses() && gopls::told_to_bracket(self)
    }

    /// The root this server checks `file` at, and a monorepo manifest around it that
    /// could not be mapped (`workspace::server_root`).
    pub fn root_of(
        &self,
        file: &std::path::Path,
        workspace: &std::path::Path,
    ) -> (std::path::PathBuf, Option<crate::workspace::Unmapped>) {
        crate::workspace::server_root(
            file,
            &self.root_markers,
            &self.coverage.monorepos,
            workspace,
        )
    }

    /// Whether `path` is one of the files the server reads as configuration
    /// ([`Coverage::configuration`]).
    pub fn configured_by(&self, path: &std::path::Path) -> bool {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            return false;
        };
        self.coverage
            .configuration
            .iter()
            .any(|pattern| name_matches(pattern, name))
    }

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

/// The built-in table, in preference order: for an extension claimed by several
/// checkers the first one installed wins (pyright before basedpyright, ty, pyrefly;
/// typescript-language-server before TypeScript 7's server, unless the project's
/// TypeScript decides, see `typescript`); every installed linter runs beside it.
pub fn builtin() -> Vec<ServerSpec> {
    vec![
        pyright::pyright(),
        pyright::basedpyright(),
        typescript::typescript_language_server(),
        gopls::gopls(),
        clangd::clangd(),
        rust_analyzer::rust_analyzer(),
        python_tools::ty(),
        python_tools::pyrefly(),
        typescript::tsgo(),
        python_tools::ruff(),
        typescript::eslint(),
    ]
}

/// The table as it applies in `workspace`, once the families have looked at what is
/// installed and whether the workspace is trusted: the toolchains,
/// typescript-language-server's tsserver and basedpyright's interpreter pinned in an
/// untrusted workspace, and pyrefly, which runs the workspace's interpreter, kept
/// out of it; then (since which TypeScript it would run counts) the TypeScript
/// server chosen. Notes for the user go to `notes`; programs are looked up with
/// `which`.
pub fn fit_to_workspace(
    servers: &mut [ServerSpec],
    workspace: &Path,
    trusted: bool,
    notes: &mut Vec<String>,
    which: &dyn Fn(&str) -> Option<PathBuf>,
) {
    if !trusted {
        let env = |name: &str| std::env::var(name).ok();
        toolchain::pin(servers, toolchain::user_rust(which), &env, notes);
        for spec in servers.iter_mut() {
            typescript::pin_tsserver(spec, workspace, notes, which);
            // By name: a user's own command for them runs the same program.
            pyright::pin_interpreter(spec, which);
            python_tools::keep_out_of_untrusted(spec);
        }
    }
    typescript::choose(servers, workspace, trusted, notes, which);
}

/// Whether `requested`, a built-in server whose command differs from the
/// `configured` one, runs a program [`fit_to_workspace`] may have chosen for
/// `workspace`: the TypeScript 7 program (the project's own only when trusted). The
/// daemon's check of what a client asks it to run.
pub fn chosen_for_workspace(
    requested: &ServerSpec,
    configured: &ServerSpec,
    workspace: &Path,
    trusted: bool,
) -> bool {
    requested.name == TSGO
        && configured.origin == Origin::BuiltIn
        && typescript::permitted(&requested.command, workspace, trusted)
}

/// The part every built-in entry shares: `command args` for the files of
/// `language`, with `default_language_id` for an extension a config adds; no
/// settings, the default waits, a checker of the scanned dependents. Each family
/// overrides what differs.
fn entry(
    name: &str,
    command: &str,
    args: &[&str],
    language: &[Extension],
    default_language_id: &str,
) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        command: command.into(),
        args: strs(args),
        extensions: languages::extensions(language),
        language_ids: languages::language_ids(language),
        default_language_id: default_language_id.into(),
        root_markers: Vec::new(),
        settings: json!({}),
        initialization_options: None,
        wait: WaitProfile::default(),
        install_hint: String::new(),
        origin: Origin::BuiltIn,
        disabled: false,
        not_checked: Vec::new(),
        env: Vec::new(),
        coverage: Coverage::default(),
    }
}

/// Whether file name `name` matches `pattern`, where one `*` stands for any run of
/// characters (`tsconfig*.json`); without one, the name itself.
fn name_matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail)
        }
        None => pattern == name,
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// ----------------------------------------------------------------------------------
// What an untrusted project may set

/// How an untrusted project's setting on an allow-list is taken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Allow {
    /// As given: the setting cannot name a program, a path, an environment, arguments
    /// or a plugin, whatever its value.
    Value,
    /// Every key under it, as given (severity overrides, formatting preferences...).
    Tree,
    /// A path, or a list of them, each relative to the workspace and staying inside it
    /// (no `..`, not absolute, no `~`); anything else is withheld.
    InsidePaths,
}

/// The settings and initialization options an untrusted project may give a server,
/// by dotted key (`python.analysis.typeCheckingMode`).
#[derive(Debug, Clone, Copy)]
pub struct AllowList {
    pub settings: &'static [(&'static str, Allow)],
    pub initialization_options: &'static [(&'static str, Allow)],
}

impl AllowList {
    const NOTHING: AllowList = AllowList {
        settings: &[],
        initialization_options: &[],
    };
}

/// What an untrusted project may set for server `name`: by allow-list, per built-in
/// server, since a deny-list of key names always misses one (`npmLocation`,
/// `check.extraArgs`); nothing for a server a config adds, whose settings lspgate
/// cannot know, nor yet for ty, pyrefly, TypeScript 7, ruff and ESLint.
pub fn untrusted_allow_list(name: &str) -> AllowList {
    match name {
        pyright::PYRIGHT | pyright::BASEDPYRIGHT => pyright::ALLOWED,
        typescript::TSLS => typescript::TSLS_ALLOWED,
        gopls::GOPLS => gopls::ALLOWED,
        clangd::CLANGD => clangd::ALLOWED,
        rust_analyzer::RUST_ANALYZER => rust_analyzer::ALLOWED,
        _ => AllowList::NOTHING,
    }
}

/// Deep merge, table over table; anything else in `over` replaces.
pub fn merge_json(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(current) => merge_json(current, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, over) => *base = over,
    }
}

/// Turn a server's project-wide analysis on or off (`project-wide` in a config file):
/// pyright's and basedpyright's `diagnosticMode`, gopls's reporting of unopened files
/// taken as such or not, rust-analyzer's check, the units a daemon opens for clangd,
/// or what a server a config adds does. Any other built-in has none. A built-in given
/// another command by a config is still its family (it was taken for a server a
/// config adds: clangd, given its own command and `project-wide = true`, was told it
/// analyses its workspace, and its includers of an edited header went unchecked).
pub fn set_project_wide(spec: &mut ServerSpec, on: bool) -> Result<(), String> {
    match spec.name.as_str() {
        gopls::GOPLS => gopls::set_project_wide(spec, on),
        rust_analyzer::RUST_ANALYZER => rust_analyzer::set_project_wide(spec, on),
        clangd::CLANGD => clangd::set_project_wide(spec, on),
        typescript::TSLS | typescript::TSGO => typescript::set_project_wide(spec, on),
        _ => return pyright::set_project_wide(spec, on),
    }
    Ok(())
}

/// How a server's program is started: its arguments, and what they change about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub args: Vec<String>,
    /// The files that include an edited one see its text as shown, saved or not
    /// ([`WaitProfile::dependents_see_unsaved`]).
    pub dependents_see_unsaved: bool,
}

/// How to start `spec`'s program, found at `program`: its arguments, with those its
/// version calls for (clangd 15 and later read the headers lspgate has open:
/// `clangd::adapt_launch`).
pub fn launch(spec: &ServerSpec, program: &Path) -> Launch {
    let mut launch = Launch {
        args: spec.args.clone(),
        dependents_see_unsaved: spec.wait.dependents_see_unsaved,
    };
    if spec.name == clangd::CLANGD {
        clangd::adapt_launch(&mut launch, spec, program);
    }
    launch
}

/// Whether `spec`'s server can be asked about every file of its project by listing
/// them ([`whole_project`]): the TypeScript servers, and clangd with `project-wide` on.
pub fn lists_its_project(spec: &ServerSpec) -> bool {
    typescript::lists_its_project(spec) || clangd::lists_its_project(spec)
}

/// Every file of `root`'s project `spec`'s server can be asked about, where it
/// lists them ([`lists_its_project`]): a TypeScript project's files, clangd's units
/// and the headers beside them. None where it does not, or there are more than it
/// asks about.
pub fn whole_project(spec: &ServerSpec, root: &Path) -> Option<Vec<PathBuf>> {
    if !lists_its_project(spec) {
        return None;
    }
    if spec.name == clangd::CLANGD {
        clangd::whole_project(spec, root)
    } else {
        typescript::whole_project(spec, root)
    }
}

/// Set up `spec` for a server at `root` that lives for one run of an edit written to
/// disk that creates no file (lspgate's own process): rust-analyzer then reports its
/// cargo check alone (see `rust_analyzer::for_one_written_edit`).
pub fn for_one_written_edit(spec: &mut ServerSpec, root: &Path) {
    if spec.origin == Origin::BuiltIn && spec.name == rust_analyzer::RUST_ANALYZER {
        rust_analyzer::for_one_written_edit(spec, root);
    }
}

/// Whether the server analyses its whole project, as its settings now say once every
/// config layer is applied (pyright's `diagnosticMode`, rust-analyzer's
/// `checkOnSave`).
pub fn reconcile_project_wide(spec: &mut ServerSpec) {
    pyright::reconcile_project_wide(spec);
    rust_analyzer::reconcile_project_wide(spec);
}

#[cfg(test)]
mod configuration_tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn each_family_knows_its_configuration_files() {
        let table = builtin();
        let by = |file: &str| -> Vec<String> {
            table
                .iter()
                .filter(|s| s.configured_by(Path::new("/ws/pkg").join(file).as_path()))
                .map(|s| s.name.clone())
                .collect()
        };
        assert!(by("go.mod").contains(&"gopls".to_string()));
        assert!(by("go.work").contains(&"gopls".to_string()));
        assert!(by("pyrightconfig.json").contains(&"pyright".to_string()));
        assert!(by("pyproject.toml").contains(&"pyright".to_string()));
        assert!(by("tsconfig.json").contains(&"typescript-language-server".to_string()));
        assert!(by("tsconfig.build.json").contains(&"tsgo".to_string()));
        assert!(by("package.json").contains(&"typescript-language-server".to_string()));
        assert!(by("compile_flags.txt").contains(&"clangd".to_string()));
        assert!(by("Cargo.toml").contains(&"rust-analyzer".to_string()));
        assert!(by("README.md").is_empty());
        assert!(by("go.mod.orig").is_empty());
    }

    #[test]
    fn a_star_stands_for_any_run_of_characters() {
        assert!(name_matches("tsconfig*.json", "tsconfig.json"));
        assert!(name_matches("tsconfig*.json", "tsconfig.base.json"));
        assert!(!name_matches("tsconfig*.json", "tsconfig.jso"));
        assert!(!name_matches("tsconfig*.json", "my-tsconfig.json"));
        assert!(name_matches("go.mod", "go.mod"));
        assert!(!name_matches("go.mod", "go.sum"));
    }
}

#[cfg(test)]
mod delivery_tests {
    use std::path::Path;

    use super::*;

    fn named(name: &str) -> ServerSpec {
        builtin()
            .into_iter()
            .find(|s| s.name == name)
            .expect("a built-in server")
    }

    /// Each family's way of reporting, as built in.
    #[test]
    fn each_family_reports_its_own_way() {
        let delivery = |name: &str| named(name).wait.delivery;
        assert!(matches!(
            delivery(pyright::PYRIGHT),
            Delivery::WorkspaceAnalysis {
                first_analysis_quiet: Some(_),
                typing_backoff: true,
                brackets_analyses: false,
            }
        ));
        assert!(matches!(
            delivery(pyright::BASEDPYRIGHT),
            Delivery::WorkspaceAnalysis {
                typing_backoff: false,
                ..
            }
        ));
        assert_eq!(delivery(gopls::GOPLS), gopls::ANALYSIS);
        assert_eq!(
            delivery(rust_analyzer::RUST_ANALYZER),
            Delivery::CheckAfterSave {
                pushes_before_answers: true,
                disk_only: false,
            }
        );
        assert_eq!(delivery(typescript::TSLS), Delivery::TsserverPull);
        assert_eq!(delivery(clangd::CLANGD), Delivery::OpenFiles);
        assert_eq!(delivery(TSGO), Delivery::OpenFiles);
    }

    /// Off and on again, each family gets back the way it reports when on, its
    /// options with it.
    #[test]
    fn the_project_wide_mode_switched_back_on_restores_the_familys_way() {
        for name in [
            pyright::PYRIGHT,
            pyright::BASEDPYRIGHT,
            gopls::GOPLS,
            rust_analyzer::RUST_ANALYZER,
        ] {
            let built_in = named(name);
            let mut spec = built_in.clone();
            assert_eq!(set_project_wide(&mut spec, false), Ok(()));
            assert_eq!(spec.wait.delivery, Delivery::OpenFiles, "{name}");
            assert!(!spec.wait.reports_unopened(), "{name}");
            assert_eq!(set_project_wide(&mut spec, true), Ok(()));
            assert_eq!(spec.wait, built_in.wait, "{name}");
        }
    }

    /// A server a config adds (or a built-in given its own command) switched on
    /// analyses its workspace with nothing more known of it; one that checks after a
    /// save keeps that way.
    #[test]
    fn a_configured_servers_project_wide_mode_is_a_plain_workspace_analysis() {
        let mut added = named(clangd::CLANGD);
        added.name = "zls".into();
        added.origin = Origin::UserConfig;
        assert_eq!(set_project_wide(&mut added, true), Ok(()));
        assert_eq!(added.wait.delivery, Delivery::ANALYSIS);
        assert!(added.wait.force_rebuild_unchanged, "the rest kept");
        assert_eq!(set_project_wide(&mut added, false), Ok(()));
        assert_eq!(added.wait.delivery, Delivery::OpenFiles);

        let mut own = named(rust_analyzer::RUST_ANALYZER);
        own.origin = Origin::UserConfig;
        let check = own.wait.delivery.clone();
        assert_eq!(set_project_wide(&mut own, true), Ok(()));
        assert_eq!(own.wait.delivery, check);
    }

    /// The waits cross the daemon's socket inside a server's entry.
    #[test]
    fn every_entry_crosses_the_wire_unchanged() {
        let mut table = builtin();
        let mut one_edit = named(rust_analyzer::RUST_ANALYZER);
        let root = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(root.path().join("Cargo.toml"), "").expect("Cargo.toml written");
        for_one_written_edit(&mut one_edit, Path::new(root.path()));
        assert!(one_edit.wait.disk_only());
        table.push(one_edit);
        for spec in table {
            let text = serde_json::to_string(&spec).expect("an entry serializes");
            let back: ServerSpec = serde_json::from_str(&text).expect("and reads back");
            assert_eq!(back, spec);
        }
    }
}
