//! Layering the config files over the built-in table (built-in < user < project),
//! and the trust rule of docs/SPEC.md section 5: a project file may tune servers, but unless
//! the workspace is trusted it may not choose a program to run (`command`, `args`),
//! nor which servers run for which files (`disabled`, `role`, `extensions`...), nor
//! weaken the verdict (`fail-on`, shorter timeouts, a severity filter, a shorter
//! `quiet`...), and of a server's settings it may give only those on the server's
//! allow-list (`servers::untrusted_allow_list`). What it withholds is said in a note.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::servers::{self, Allow, Coverage, Origin, ServerSpec, WaitProfile, merge_json};

use crate::model::options::{FailOn, Severity};

use super::PROJECT_FILE;
use super::files::{
    ConfigError, FileOptions, LanguageId, RawFile, RawServer, invalid, read_file, table_to_json,
};
use super::options::env_bool;
use super::which::{is_path, which};

const TRUST_ENV: &str = "LSPGATE_TRUST_PROJECT";
const WITHOUT_ENV: &str = "LSPGATE_WITHOUT";

/// The merged configuration of one workspace.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Built-in < user < project, in preference order: servers added by the project,
    /// then by the user, then the built-ins (someone who adds a server for `.py` wants
    /// it used; the built-in stays as the fallback when theirs is not installed).
    pub servers: Vec<ServerSpec>,
    /// User < project.
    pub options: FileOptions,
    /// Keys that were read but ignored, and why; for the caller to show.
    pub notes: Vec<String>,
    /// Whether the project's commands may run.
    pub trusted: bool,
    /// The config files that exist and were read, lowest precedence first.
    pub files: Vec<PathBuf>,
}

/// Load the user config and `<workspace>/.lspgate.toml`. `trust_flag` is
/// `--trust-project`; `LSPGATE_TRUST_PROJECT` and the user's `trusted-workspaces` are
/// read here.
pub fn load(workspace: &Path, trust_flag: bool) -> Result<Loaded, ConfigError> {
    let trust_env = trust_env()?;
    let mut loaded = load_from(
        workspace,
        crate::paths::dirs().config_file.as_deref(),
        trust_flag,
        trust_env,
    )?;
    if let Ok(names) = std::env::var(WITHOUT_ENV) {
        let names: Vec<String> = names
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .collect();
        turn_off(&mut loaded.servers, &names, WITHOUT_ENV)?;
    }
    // Here rather than in `load_from`: it looks at what is installed.
    servers::fit_to_workspace(
        &mut loaded.servers,
        &canonical(workspace),
        loaded.trusted,
        &mut loaded.notes,
        &which,
    );
    Ok(loaded)
}

/// Whether `LSPGATE_TRUST_PROJECT` trusts the project (an invalid value does not).
pub fn trust_from_env() -> bool {
    trust_env().unwrap_or(false)
}

/// `LSPGATE_TRUST_PROJECT`; an invalid value is an error.
fn trust_env() -> Result<bool, ConfigError> {
    Ok(env_bool(TRUST_ENV, std::env::var(TRUST_ENV).ok())?.unwrap_or(false))
}

/// For the daemon, which acts on what a client sends: whether every server in
/// `requested` runs the command and arguments the workspace's configuration (the
/// daemon's user config, `.lspgate.toml`, and `trust_flag` from the client) gives it.
/// A bare command the client found on its `PATH` counts as that command. The first
/// one that does not, as an error line.
pub fn check_commands(
    workspace: &Path,
    trust_flag: bool,
    requested: &[ServerSpec],
) -> Result<(), String> {
    let loaded = load_from(
        workspace,
        crate::paths::dirs().config_file.as_deref(),
        trust_flag,
        false,
    )
    .map_err(|e| e.to_string())?;
    for spec in requested.iter().filter(|s| !s.disabled) {
        // What the client pinned (`servers::toolchain`), and nothing else.
        if let Some((key, _)) = spec
            .env
            .iter()
            .find(|(k, _)| !servers::toolchain::PINNED.contains(&k.as_str()))
        {
            return Err(format!(
                "server {}: {key} is not a variable lspgate sets",
                spec.name
            ));
        }
        let configured = loaded
            .servers
            .iter()
            .find(|s| s.name == spec.name && !s.disabled);
        let matches = configured.is_some_and(|c| {
            let command = c.command == spec.command
                || (!is_path(&c.command)
                    && Path::new(&spec.command).is_absolute()
                    && Path::new(&spec.command).file_name() == Some(OsStr::new(&c.command)));
            let chosen =
                servers::chosen_for_workspace(spec, c, &canonical(workspace), loaded.trusted);
            (command || chosen) && c.args == spec.args
        });
        if !matches {
            return Err(match configured {
                Some(c) => format!(
                    "server {}: `{} {}` is not the command the configuration gives it (`{} {}`)",
                    spec.name,
                    spec.command,
                    spec.args.join(" "),
                    c.command,
                    c.args.join(" ")
                ),
                None => format!(
                    "server {}: no configuration of this workspace names it",
                    spec.name
                ),
            });
        }
    }
    Ok(())
}

/// `load` without the environment, for tests.
pub(super) fn load_from(
    workspace: &Path,
    user_config: Option<&Path>,
    trust_flag: bool,
    trust_env: bool,
) -> Result<Loaded, ConfigError> {
    let mut loaded = Loaded {
        servers: servers::builtin(),
        options: FileOptions::default(),
        notes: Vec::new(),
        trusted: trust_flag || trust_env,
        files: Vec::new(),
    };

    let user = match user_config {
        Some(path) => read_file(path)?.map(|raw| (path, raw)),
        None => None,
    };
    let mut user_without = None;
    if let Some((path, raw)) = user {
        let workspace = canonical(workspace);
        for entry in raw.trusted_workspaces.iter().flatten() {
            let listed = expand_home(entry);
            if !listed.is_absolute() {
                return Err(invalid(
                    path,
                    format!("trusted-workspaces: {entry:?} is not an absolute path"),
                ));
            }
            if canonical(&listed) == workspace {
                loaded.trusted = true;
            }
        }
        // The user's own file is trusted by definition; relative commands in it are
        // relative to the file.
        let base = path.parent().unwrap_or(Path::new("/"));
        let layer = Layer {
            path,
            base,
            origin: Origin::UserConfig,
            trusted: true,
            why_untrusted: String::new(),
        };
        layer.apply(&raw, &mut loaded)?;
        loaded.options = loaded.options.overlay(raw.options());
        loaded.files.push(path.to_owned());
        // Applied once the project had its say, which cannot undo it.
        user_without = raw
            .without
            .clone()
            .map(|names| (names, format!("without in {}", display_path(path))));
    }

    let project_path = workspace.join(PROJECT_FILE);
    if let Some(raw) = read_file(&project_path)? {
        if raw.trusted_workspaces.is_some() {
            return Err(invalid(
                &project_path,
                "trusted-workspaces is read only from the user config: a repository cannot trust itself",
            ));
        }
        if raw.without.is_some() {
            loaded.notes.push(format!(
                "{}: ignored without (read only from the user config: which servers run \
                 is the user's choice)",
                project_path.display()
            ));
        }
        let where_ = user_config
            .map(display_path)
            .unwrap_or_else(|| "the user config".to_string());
        let layer = Layer {
            path: &project_path,
            base: workspace,
            origin: Origin::ProjectConfig,
            trusted: loaded.trusted,
            why_untrusted: format!(
                "the project is not trusted; pass --trust-project, set {TRUST_ENV}=1, \
                 or add {:?} to trusted-workspaces in {where_}",
                canonical(workspace).display().to_string(),
            ),
        };
        layer.apply(&raw, &mut loaded)?;
        let options = layer.options(raw.options(), &loaded.options, &mut loaded.notes);
        loaded.options = loaded.options.overlay(options);
        loaded.files.push(project_path);
    }

    if let Some((names, source)) = user_without {
        turn_off(&mut loaded.servers, &names, &source)?;
    }
    for spec in &mut loaded.servers {
        fill_defaults(spec);
    }
    Ok(loaded)
}

/// Turn off the servers the user named (`without` in the user config,
/// `LSPGATE_WITHOUT`): never started, and a file one of them would check is reported
/// as not checked (exit 3), not skipped: for a CI that checks an untrusted patch
/// without the servers that run the project's code (rust-analyzer's `cargo check`,
/// ESLint). `source` names where the list came from; a name no server has is an error.
pub(super) fn turn_off(
    servers: &mut [ServerSpec],
    names: &[String],
    source: &str,
) -> Result<(), ConfigError> {
    for name in names {
        let Some(spec) = servers.iter_mut().find(|s| s.name == *name) else {
            return Err(ConfigError::Option(format!(
                "{source}: no server is named {name:?} (`lspgate servers` lists them)"
            )));
        };
        let why = format!("{name} is turned off ({source})");
        spec.disabled = true;
        for ext in &spec.extensions {
            if !spec.not_checked.iter().any(|(e, _)| e == ext) {
                spec.not_checked.push((ext.clone(), why.clone()));
            }
        }
        spec.coverage.why = Some(format!("turned off ({source})"));
    }
    Ok(())
}

/// One config file being applied to the table.
struct Layer<'a> {
    path: &'a Path,
    /// Relative commands (`./tools/lsp`) resolve against this directory.
    base: &'a Path,
    origin: Origin,
    /// Whether this file's `command` and `args` may be used.
    trusted: bool,
    why_untrusted: String,
}

impl Layer<'_> {
    fn apply(&self, raw: &RawFile, loaded: &mut Loaded) -> Result<(), ConfigError> {
        let mut added = Vec::new();
        for (name, server) in &raw.server {
            let command = server.command.as_deref().map(|c| self.resolve_command(c));
            if let Some(spec) = loaded.servers.iter_mut().find(|s| &s.name == name) {
                self.override_server(name, server, command, spec, &mut loaded.notes)?;
                continue;
            }
            let (Some(command), Some(extensions)) = (command, &server.extensions) else {
                return Err(invalid(
                    self.path,
                    format!(
                        "server.{name} is not a built-in server, so it needs both \"command\" \
                         and \"extensions\""
                    ),
                ));
            };
            if extensions.is_empty() {
                return Err(invalid(
                    self.path,
                    format!("server.{name}.extensions is empty"),
                ));
            }
            if !self.trusted {
                // Keeping it without a command would leave nothing to run; keeping it
                // with a guessed one would run what the project did not ask for.
                loaded.notes.push(format!(
                    "{}: ignored server.{name}.command, so server {name} is not used ({})",
                    self.path.display(),
                    self.why_untrusted,
                ));
                continue;
            }
            let mut spec = ServerSpec {
                name: name.clone(),
                command,
                args: Vec::new(),
                extensions: Vec::new(),
                language_ids: Vec::new(),
                // Filled by `fill_defaults` once every layer had its say.
                default_language_id: String::new(),
                root_markers: Vec::new(),
                settings: Value::Object(Default::default()),
                initialization_options: None,
                wait: WaitProfile::default(),
                install_hint: String::new(),
                origin: self.origin,
                disabled: false,
                not_checked: Vec::new(),
                env: Vec::new(),
                coverage: Coverage::default(),
            };
            spec.args = server.args.clone().unwrap_or_default();
            self.tune(name, server, &mut spec, &mut loaded.notes)?;
            added.push(spec);
        }
        added.append(&mut loaded.servers);
        loaded.servers = added;
        Ok(())
    }

    /// A `[server.NAME]` whose NAME is already in the table: only the keys given.
    fn override_server(
        &self,
        name: &str,
        server: &RawServer,
        command: Option<String>,
        spec: &mut ServerSpec,
        notes: &mut Vec<String>,
    ) -> Result<(), ConfigError> {
        // Restating the current command or arguments changes nothing, so it needs no
        // trust and deserves no note.
        let command = command.filter(|c| *c != spec.command);
        let args = server.args.as_ref().filter(|a| **a != spec.args);
        if self.trusted {
            if let Some(command) = command {
                spec.command = command;
                spec.origin = self.origin;
                // The built-in's hint installs the built-in's program, not this one;
                // `fill_defaults` writes one for the new command unless a layer does.
                spec.install_hint.clear();
            }
            if let Some(args) = args {
                spec.args = args.clone();
                spec.origin = self.origin;
            }
        } else {
            let ignored: Vec<String> =
                [command.is_some().then_some("command"), args.map(|_| "args")]
                    .into_iter()
                    .flatten()
                    .map(|key| format!("server.{name}.{key}"))
                    .collect();
            if !ignored.is_empty() {
                notes.push(format!(
                    "{}: ignored {} ({})",
                    self.path.display(),
                    ignored.join(" and "),
                    self.why_untrusted,
                ));
            }
        }
        self.tune(name, server, spec, notes)
    }

    /// The keys any file may set, trusted or not: they configure servers but never
    /// choose a program to run. Of an untrusted file, a key that would change which
    /// servers run for which files (`disabled`, `role`, `extensions`, `language-id`,
    /// `root-markers`) or weaken what they report (`quiet` shorter, `versioned-publish`
    /// off, `project-wide`), and `install-hint` (a command the user would be told to
    /// run), is withheld with a note: which servers run is the user's choice.
    fn tune(
        &self,
        name: &str,
        server: &RawServer,
        spec: &mut ServerSpec,
        notes: &mut Vec<String>,
    ) -> Result<(), ConfigError> {
        let mut kept = Kept {
            trusted: self.trusted,
            withheld: Vec::new(),
        };
        if let Some(extensions) = &server.extensions {
            let mut given = Vec::with_capacity(extensions.len());
            for ext in extensions {
                // Accept ".py" too: people write extensions both ways.
                let ext = ext.strip_prefix('.').unwrap_or(ext);
                if ext.is_empty() {
                    return Err(invalid(
                        self.path,
                        format!("server.{name}.extensions: an extension is empty"),
                    ));
                }
                given.push(ext.to_string());
            }
            if kept.may("extensions", given != spec.extensions) {
                spec.extensions = given;
            }
        }
        match &server.language_id {
            Some(LanguageId::All(id)) if kept.may("language-id", true) => {
                spec.default_language_id = id.clone();
                spec.language_ids.clear();
            }
            Some(LanguageId::PerExtension(ids)) if kept.may("language-id", true) => {
                for (ext, id) in ids {
                    let ext = ext.strip_prefix('.').unwrap_or(ext);
                    match spec.language_ids.iter_mut().find(|(e, _)| e == ext) {
                        Some(entry) => entry.1 = id.clone(),
                        None => spec.language_ids.push((ext.to_string(), id.clone())),
                    }
                }
            }
            _ => {}
        }
        if let Some(markers) = &server.root_markers
            && kept.may("root-markers", *markers != spec.root_markers)
        {
            spec.root_markers = markers.clone();
        }
        self.tune_settings(name, server, spec, notes);
        if let Some(disabled) = server.disabled
            && kept.may("disabled", disabled != spec.disabled)
        {
            spec.disabled = disabled;
        }
        if let Some(quiet) = server.quiet
            && kept.may("quiet", quiet.0 < spec.wait.quiet)
        {
            spec.wait.quiet = quiet.0;
            // A quiet period set by hand is the one to keep, signs or not.
            spec.wait.confirmed_quiet = None;
        }
        if let Some(versioned) = server.versioned_publish
            && kept.may(
                "versioned-publish",
                !versioned && spec.wait.versioned_publish,
            )
        {
            spec.wait.versioned_publish = versioned;
        }
        if let Some(on) = server.project_wide
            && kept.may("project-wide", true)
        {
            servers::set_project_wide(spec, on)
                .map_err(|why| invalid(self.path, format!("server.{name}.project-wide: {why}")))?;
        }
        if let Some(hint) = &server.install_hint
            && kept.may("install-hint", *hint != spec.install_hint)
        {
            spec.install_hint = hint.clone();
        }
        if let Some(role) = server.role
            && kept.may("role", role != spec.coverage.role)
        {
            spec.coverage.role = role;
        }
        if !kept.withheld.is_empty() {
            let keys: Vec<String> = kept
                .withheld
                .iter()
                .map(|key| format!("server.{name}.{key}"))
                .collect();
            notes.push(format!(
                "{}: ignored {} (an untrusted project may not choose which servers run for \
                 which files, nor weaken what they report; {})",
                self.path.display(),
                keys.join(", "),
                self.why_untrusted,
            ));
        }
        Ok(())
    }

    /// `settings` and `initialization-options`: of an untrusted file, only the keys on
    /// the server's allow-list.
    fn tune_settings(
        &self,
        name: &str,
        server: &RawServer,
        spec: &mut ServerSpec,
        notes: &mut Vec<String>,
    ) {
        let allowed = servers::untrusted_allow_list(name);
        let mut withheld = Vec::new();
        if let Some(settings) = &server.settings {
            let mut settings = table_to_json(settings);
            if !self.trusted {
                withhold_unlisted(
                    &mut settings,
                    "",
                    allowed.settings,
                    &format!("server.{name}.settings"),
                    &mut withheld,
                );
            }
            merge_json(&mut spec.settings, settings);
        }
        if let Some(options) = &server.initialization_options {
            let mut options = table_to_json(options);
            if !self.trusted {
                withhold_unlisted(
                    &mut options,
                    "",
                    allowed.initialization_options,
                    &format!("server.{name}.initialization-options"),
                    &mut withheld,
                );
            }
            match &mut spec.initialization_options {
                Some(current) => merge_json(current, options),
                None => spec.initialization_options = Some(options),
            }
        }
        if !withheld.is_empty() {
            notes.push(format!(
                "{}: ignored {} (settings an untrusted project may give name no program, path \
                 outside the workspace, environment, argument or plugin; {})",
                self.path.display(),
                withheld.join(", "),
                self.why_untrusted,
            ));
        }
    }

    /// The options of the file, less those of an untrusted one that would weaken the
    /// verdict against `below` (the user's, else the defaults): a laxer `fail-on`, a
    /// severity filter that lists less, a shorter timeout, fewer entries listed (0
    /// lists none). CLI flags and environment
    /// variables still outrank whatever is kept.
    fn options(
        &self,
        mut file: FileOptions,
        below: &FileOptions,
        notes: &mut Vec<String>,
    ) -> FileOptions {
        if self.trusted {
            return file;
        }
        let d = crate::model::options::Options::default();
        let mut withheld = Vec::new();
        // Warning < Error < Never: the later, the laxer.
        let lax = |f: FailOn| match f {
            FailOn::Warning => 0,
            FailOn::Error => 1,
            FailOn::Never => 2,
        };
        if file
            .fail_on
            .is_some_and(|f| lax(f) > lax(below.fail_on.unwrap_or(d.fail_on)))
        {
            file.fail_on = None;
            withheld.push("fail-on");
        }
        // Hint < Info < Warning < Error: the later, the less listed.
        let listed = |s: Severity| match s {
            Severity::Hint => 0,
            Severity::Info => 1,
            Severity::Warning => 2,
            Severity::Error => 3,
        };
        if file
            .severity
            .is_some_and(|s| listed(s) > listed(below.severity.unwrap_or(d.severity)))
        {
            file.severity = None;
            withheld.push("severity");
        }
        for (key, value, floor) in [
            (
                "startup-timeout",
                &mut file.startup_timeout,
                below.startup_timeout.unwrap_or(d.startup_timeout),
            ),
            (
                "timeout",
                &mut file.timeout,
                below.timeout.unwrap_or(d.timeout),
            ),
            (
                "cross-file-timeout",
                &mut file.cross_file_timeout,
                below.cross_file_timeout.unwrap_or(d.cross_file_timeout),
            ),
        ] {
            if value.is_some_and(|v| v < floor) {
                *value = None;
                withheld.push(key);
            }
        }
        // Fewer entries listed: what fails the run, unseen.
        if file
            .max_entries
            .is_some_and(|n| n < below.max_entries.unwrap_or(d.max_entries))
        {
            file.max_entries = None;
            withheld.push("max-entries");
        }
        if !withheld.is_empty() {
            notes.push(format!(
                "{}: ignored {} (an untrusted project may not weaken the verdict; {})",
                self.path.display(),
                withheld.join(", "),
                self.why_untrusted,
            ));
        }
        file
    }

    /// A bare name is looked up on `PATH` when run; a relative path is relative to the
    /// file that names it, not to wherever lspgate happens to run.
    fn resolve_command(&self, command: &str) -> String {
        let path = expand_home(command);
        if path.is_relative() && path.components().count() > 1 {
            let rest: PathBuf = path
                .components()
                .filter(|c| *c != std::path::Component::CurDir)
                .collect();
            self.base.join(rest).display().to_string()
        } else {
            path.display().to_string()
        }
    }
}

/// Which of a file's `[server.NAME]` keys are taken: all of a trusted file's; of an
/// untrusted one's, those that change nothing [`Layer::tune`] withholds.
struct Kept {
    trusted: bool,
    withheld: Vec<&'static str>,
}

impl Kept {
    /// Whether `key` is taken, given whether it would `change` which servers run or
    /// weaken what they report.
    fn may(&mut self, key: &'static str, change: bool) -> bool {
        if self.trusted || !change {
            return true;
        }
        if !self.withheld.contains(&key) {
            self.withheld.push(key);
        }
        false
    }
}

/// Defaults for servers a config file added, decided once all layers are applied
/// (a later layer may still have set them).
fn fill_defaults(spec: &mut ServerSpec) {
    servers::reconcile_project_wide(spec);
    if spec.default_language_id.is_empty() {
        // The extension is the usual languageId (lua, zig, dart, java); where it is
        // not, `language-id` says so.
        spec.default_language_id = spec.extensions.first().cloned().unwrap_or_default();
        for ext in &spec.extensions {
            if !spec.language_ids.iter().any(|(e, _)| e == ext) {
                spec.language_ids.push((ext.clone(), ext.clone()));
            }
        }
    }
    if spec.install_hint.is_empty() {
        spec.install_hint = if is_path(&spec.command) {
            "check the command's path in the config file that sets it".to_string()
        } else {
            format!("install {} and put it on PATH", spec.command)
        };
    }
}

fn home_dir() -> Option<&'static Path> {
    crate::paths::dirs().home.as_deref()
}

/// `~/x` → `$HOME/x`, for paths the user writes in their own config.
fn expand_home(s: &str) -> PathBuf {
    match (s.strip_prefix("~/"), home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if s == "~" => home_dir().map_or_else(|| PathBuf::from(s), Path::to_owned),
        _ => PathBuf::from(s),
    }
}

/// `~` instead of the home directory, to keep notes short.
fn display_path(p: &Path) -> String {
    match home_dir().and_then(|h| p.strip_prefix(h).ok().map(Path::to_owned)) {
        Some(rest) => Path::new("~").join(rest).display().to_string(),
        None => p.display().to_string(),
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned())
}

/// Remove (and list, as `shown.key`) every key of `value` not on `allowed`. `at` is
/// the dotted key of `value` itself ("" at the top). A key holding dots (TOML's
/// `"python.analysis.x" = ...`) is matched as the dotted path it spells.
fn withhold_unlisted(
    value: &mut Value,
    at: &str,
    allowed: &[(&str, Allow)],
    shown: &str,
    withheld: &mut Vec<String>,
) {
    let Value::Object(map) = value else { return };
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        let dotted = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        let here = format!("{shown}.{key}");
        let rule = allowed.iter().find(|(k, _)| *k == dotted).map(|(_, a)| *a);
        let under_tree = allowed
            .iter()
            .any(|(k, a)| *a == Allow::Tree && dotted.starts_with(&format!("{k}.")));
        let above_allowed = allowed
            .iter()
            .any(|(k, _)| k.starts_with(&format!("{dotted}.")));
        let keep = match rule {
            Some(Allow::Value | Allow::Tree) => true,
            Some(Allow::InsidePaths) => map.get(&key).is_some_and(inside_paths),
            None => under_tree,
        };
        if keep {
            continue;
        }
        match map.get_mut(&key) {
            Some(inner @ Value::Object(_)) if above_allowed => {
                withhold_unlisted(inner, &dotted, allowed, &here, withheld);
            }
            _ => {
                map.remove(&key);
                withheld.push(here);
            }
        }
    }
}

/// Whether `value` is a path or a list of paths that stay inside the workspace they
/// are relative to.
fn inside_paths(value: &Value) -> bool {
    let inside = |v: &Value| {
        v.as_str().is_some_and(|p| {
            let path = Path::new(p);
            !p.is_empty()
                && !p.starts_with('~')
                && path.is_relative()
                && path.components().all(|c| {
                    matches!(
                        c,
                        std::path::Component::Normal(_) | std::path::Component::CurDir
                    )
                })
        })
    };
    match value {
        Value::Array(items) => items.iter().all(inside),
        other => inside(other),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn inside_paths_stay_inside() {
        for good in [json!("src"), json!(["a/b", "./c"])] {
            assert!(inside_paths(&good), "{good}");
        }
        for bad in [
            json!("../x"),
            json!("/etc"),
            json!("~/x"),
            json!(["ok", "a/../../x"]),
            json!(""),
            json!(1),
            json!({"a": "b"}),
        ] {
            assert!(!inside_paths(&bad), "{bad}");
        }
    }
}
