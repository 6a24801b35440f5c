//! Configuration: the user's config file and the project's `.lspgate.toml`, layered
//! over the built-in server table (built-in < user < project), and the options of a
//! run (flag > env > file > default).
//!
//! This module owns:
//! - duration syntax (`500ms`, `2s`, `1m`, a bare number of seconds);
//! - reading and validating both config files (TOML, kebab-case keys, unknown keys are
//!   errors that name the key and the file);
//! - the trust rule of SPEC section 5: a project file may pick, disable and tune
//!   servers, but the programs it asks to run (`command`, `args`) are used only when the
//!   workspace is trusted;
//! - resolving `ReportArgs` into `Options`;
//! - choosing the server for a file, and looking a command up on `PATH`.
//!
//! Nothing here starts a server or prints: ignored keys come back as `notes` for the
//! caller to show.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::model::options::{ColorChoice, FailOn, Format, Options, ReportArgs, Severity};
use crate::servers::typescript::{self, pin_tsserver};
use crate::servers::{self, Allow, Coverage, Origin, Role, ServerSpec, WaitProfile, merge_json};

/// The project's config file, at the top of the workspace.
pub const PROJECT_FILE: &str = ".lspgate.toml";

const TRUST_ENV: &str = "LSPGATE_TRUST_PROJECT";

// ----------------------------------------------------------------------------------
// Durations

/// Parse `500ms`, `2s`, `1.5s`, `1m`, `1h`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    const USAGE: &str = "use a number followed by ms, s or m, e.g. 500ms, 2s, 1m";
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let invalid = |why: String| format!("invalid duration {s:?}: {why}");
    // `str::parse::<f64>` alone would also take "inf", "1e3" and "-1"; the split above
    // has already kept only digits and dots in `number`.
    let value: f64 = match number.parse() {
        Ok(v) if number.chars().any(|c| c.is_ascii_digit()) => v,
        _ => return Err(invalid(format!("expected a number ({USAGE})"))),
    };
    let seconds = match unit.trim_start() {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        other => return Err(invalid(format!("unknown unit {other:?} ({USAGE})"))),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| invalid("out of range".to_string()))
}

/// A duration in a config file: a string in `parse_duration` syntax, or a number of
/// seconds (TOML has no duration type, and `quiet = 0.3` reads naturally).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Dur(Duration);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#"a duration such as "500ms", "2s" or "1m", or a number of seconds"#)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Dur, E> {
                parse_duration(s).map(Dur).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Dur, E> {
                Ok(Dur(Duration::from_secs(n)))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Dur, E> {
                u64::try_from(n)
                    .map(|n| Dur(Duration::from_secs(n)))
                    .map_err(|_| E::custom(format!("invalid duration {n}: it is negative")))
            }
            fn visit_f64<E: de::Error>(self, x: f64) -> Result<Dur, E> {
                Duration::try_from_secs_f64(x)
                    .map(Dur)
                    .map_err(|_| E::custom(format!("invalid duration {x}")))
            }
        }
        d.deserialize_any(V)
    }
}

// ----------------------------------------------------------------------------------
// Errors

/// A config file or an option that cannot be used. Always names where it came from.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}{}: {message}", path.display(), location.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
    Invalid {
        path: PathBuf,
        /// 1-based line and column, when the parser knows them.
        location: Option<(usize, usize)>,
        message: String,
    },
    /// A flag or environment value, named in the message (`--timeout: ...`).
    #[error("{0}")]
    Option(String),
}

fn invalid(path: &Path, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        path: path.to_owned(),
        location: None,
        message: message.into(),
    }
}

/// Turn toml's error into `path:line:col: message`, saying "key" where serde says
/// "field", since the user wrote a key.
fn toml_error(path: &Path, text: &str, err: &toml::de::Error) -> ConfigError {
    let location = err.span().map(|span| {
        let before = text.get(..span.start).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, column)
    });
    let message = err.message().trim_end();
    let message = match message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
    {
        Some((key, rest)) => {
            let expected = rest.trim_start_matches(',').trim();
            if expected.is_empty() {
                format!("unknown key {key:?}")
            } else {
                format!("unknown key {key:?} ({expected})")
            }
        }
        None => message.to_string(),
    };
    ConfigError::Invalid {
        path: path.to_owned(),
        location,
        message,
    }
}

// ----------------------------------------------------------------------------------
// The files

/// The options a config file may set: those of `ReportArgs` except `dry-run` and
/// `reject`, which describe one run and would be surprising as a standing default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileOptions {
    pub format: Option<Format>,
    pub startup_timeout: Option<Duration>,
    pub timeout: Option<Duration>,
    pub cross_file_timeout: Option<Duration>,
    pub all: Option<bool>,
    pub fail_on: Option<FailOn>,
    pub severity: Option<Severity>,
    pub no_daemon: Option<bool>,
    pub max_entries: Option<usize>,
    pub color: Option<ColorChoice>,
}

impl FileOptions {
    /// `over`'s values where it has them, else ours.
    fn overlay(self, over: FileOptions) -> FileOptions {
        FileOptions {
            format: over.format.or(self.format),
            startup_timeout: over.startup_timeout.or(self.startup_timeout),
            timeout: over.timeout.or(self.timeout),
            cross_file_timeout: over.cross_file_timeout.or(self.cross_file_timeout),
            all: over.all.or(self.all),
            fail_on: over.fail_on.or(self.fail_on),
            severity: over.severity.or(self.severity),
            no_daemon: over.no_daemon.or(self.no_daemon),
            max_entries: over.max_entries.or(self.max_entries),
            color: over.color.or(self.color),
        }
    }
}

/// One config file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct RawFile {
    format: Option<Format>,
    startup_timeout: Option<Dur>,
    timeout: Option<Dur>,
    cross_file_timeout: Option<Dur>,
    all: Option<bool>,
    fail_on: Option<FailOn>,
    severity: Option<Severity>,
    no_daemon: Option<bool>,
    max_entries: Option<usize>,
    color: Option<ColorChoice>,
    /// User config only.
    trusted_workspaces: Option<Vec<String>>,
    /// A BTreeMap: servers a single file adds are ordered by name (toml does not keep
    /// the document order).
    #[serde(default)]
    server: BTreeMap<String, RawServer>,
}

impl RawFile {
    fn options(&self) -> FileOptions {
        FileOptions {
            format: self.format,
            startup_timeout: self.startup_timeout.map(|d| d.0),
            timeout: self.timeout.map(|d| d.0),
            cross_file_timeout: self.cross_file_timeout.map(|d| d.0),
            all: self.all,
            fail_on: self.fail_on,
            severity: self.severity,
            no_daemon: self.no_daemon,
            max_entries: self.max_entries,
            color: self.color,
        }
    }
}

/// `[server.NAME]`: every key optional, since for a built-in it overrides only what
/// it names.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct RawServer {
    command: Option<String>,
    args: Option<Vec<String>>,
    extensions: Option<Vec<String>>,
    language_id: Option<LanguageId>,
    root_markers: Option<Vec<String>>,
    settings: Option<toml::Table>,
    initialization_options: Option<toml::Table>,
    disabled: Option<bool>,
    quiet: Option<Dur>,
    versioned_publish: Option<bool>,
    project_wide: Option<bool>,
    install_hint: Option<String>,
    role: Option<Role>,
}

/// `language-id = "lua"` for every extension, or `{ ts = "typescript", ... }` per
/// extension.
#[derive(Debug)]
enum LanguageId {
    All(String),
    PerExtension(BTreeMap<String, String>),
}

impl<'de> Deserialize<'de> for LanguageId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LanguageId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a language id, or a table of extension = language id")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<LanguageId, E> {
                Ok(LanguageId::All(s.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LanguageId, A::Error> {
                BTreeMap::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(LanguageId::PerExtension)
            }
        }
        d.deserialize_any(V)
    }
}

/// Read and parse one file; a missing file is no file.
fn read_file(path: &Path) -> Result<Option<RawFile>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    toml::from_str(&text)
        .map(Some)
        .map_err(|e| toml_error(path, &text, &e))
}

fn home_dir() -> Option<PathBuf> {
    crate::paths::dirs().home.clone()
}

/// `~/x` → `$HOME/x`, for paths the user writes in their own config.
fn expand_home(s: &str) -> PathBuf {
    match (s.strip_prefix("~/"), home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if s == "~" => home_dir().unwrap_or_else(|| PathBuf::from(s)),
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

/// `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`; empty counts as unset, as clap
/// treats the env twins of the other options.
fn env_bool(name: &str, value: Option<String>) -> Result<Option<bool>, ConfigError> {
    let Some(value) = value else { return Ok(None) };
    match value.trim().to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "1" | "true" | "yes" | "on" => Ok(Some(true)),
        "0" | "false" | "no" | "off" => Ok(Some(false)),
        _ => Err(ConfigError::Option(format!(
            "{name}: expected 1 or 0, got {value:?}"
        ))),
    }
}

// ----------------------------------------------------------------------------------
// Layering and trust

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
    let trust_env = env_bool(TRUST_ENV, std::env::var(TRUST_ENV).ok())?.unwrap_or(false);
    let mut loaded = load_from(
        workspace,
        crate::paths::dirs().config_file.as_deref(),
        trust_flag,
        trust_env,
    )?;
    // Here rather than in `load_from`: it looks at what is installed.
    let workspace = canonical(workspace);
    if !loaded.trusted {
        for spec in &mut loaded.servers {
            pin_tsserver(spec, &workspace, &mut loaded.notes, &which);
        }
    }
    // After the pin: which TypeScript typescript-language-server would run counts.
    typescript::choose(
        &mut loaded.servers,
        &workspace,
        loaded.trusted,
        &mut loaded.notes,
        &which,
    );
    Ok(loaded)
}

/// Whether `LSPGATE_TRUST_PROJECT` trusts the project (an invalid value does not).
pub fn trust_from_env() -> bool {
    env_bool(TRUST_ENV, std::env::var(TRUST_ENV).ok())
        .ok()
        .flatten()
        .unwrap_or(false)
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
        let configured = loaded
            .servers
            .iter()
            .find(|s| s.name == spec.name && !s.disabled);
        let matches = configured.is_some_and(|c| {
            let command = c.command == spec.command
                || (!is_path(&c.command)
                    && Path::new(&spec.command).is_absolute()
                    && Path::new(&spec.command).file_name() == Some(OsStr::new(&c.command)));
            // The TypeScript 7 program `typescript::choose` picked for the client
            // (the project's own only in a trusted workspace).
            let typescript_7 = spec.name == servers::TSGO
                && c.origin == Origin::BuiltIn
                && typescript::permitted(&spec.command, &canonical(workspace), loaded.trusted);
            (command || typescript_7) && c.args == spec.args
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
fn load_from(
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
    }

    let project_path = workspace.join(PROJECT_FILE);
    if let Some(raw) = read_file(&project_path)? {
        if raw.trusted_workspaces.is_some() {
            return Err(invalid(
                &project_path,
                "trusted-workspaces is read only from the user config: a repository cannot trust itself",
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
        loaded.options = loaded.options.overlay(raw.options());
        loaded.files.push(project_path);
    }

    for spec in &mut loaded.servers {
        fill_defaults(spec);
    }
    Ok(loaded)
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

    /// The keys any file may set, trusted or not: they choose among servers and
    /// configure them, but never choose a program to run.
    fn tune(
        &self,
        name: &str,
        server: &RawServer,
        spec: &mut ServerSpec,
        notes: &mut Vec<String>,
    ) -> Result<(), ConfigError> {
        // What the server checks before this file has its say (see `note_stopped_checks`).
        let covered: Vec<String> = if spec.disabled {
            Vec::new()
        } else {
            spec.extensions.clone()
        };
        if let Some(extensions) = &server.extensions {
            spec.extensions = Vec::with_capacity(extensions.len());
            for ext in extensions {
                // Accept ".py" too: people write extensions both ways.
                let ext = ext.strip_prefix('.').unwrap_or(ext);
                if ext.is_empty() {
                    return Err(invalid(
                        self.path,
                        format!("server.{name}.extensions: an extension is empty"),
                    ));
                }
                spec.extensions.push(ext.to_string());
            }
        }
        match &server.language_id {
            Some(LanguageId::All(id)) => {
                spec.default_language_id = id.clone();
                spec.language_ids.clear();
            }
            Some(LanguageId::PerExtension(ids)) => {
                for (ext, id) in ids {
                    let ext = ext.strip_prefix('.').unwrap_or(ext);
                    match spec.language_ids.iter_mut().find(|(e, _)| e == ext) {
                        Some(entry) => entry.1 = id.clone(),
                        None => spec.language_ids.push((ext.to_string(), id.clone())),
                    }
                }
            }
            None => {}
        }
        if let Some(markers) = &server.root_markers {
            spec.root_markers = markers.clone();
        }
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
        if let Some(disabled) = server.disabled {
            spec.disabled = disabled;
        }
        if !self.trusted {
            self.note_stopped_checks(name, server, &covered, spec, notes);
        }
        if let Some(quiet) = server.quiet {
            spec.wait.quiet = quiet.0;
            // A quiet period set by hand is the one to keep, signs or not.
            spec.wait.confirmed_quiet = None;
        }
        if let Some(versioned) = server.versioned_publish {
            spec.wait.versioned_publish = versioned;
        }
        if let Some(on) = server.project_wide {
            servers::set_project_wide(spec, on)
                .map_err(|why| invalid(self.path, format!("server.{name}.project-wide: {why}")))?;
        }
        if let Some(hint) = &server.install_hint {
            spec.install_hint = hint.clone();
        }
        if let Some(role) = server.role {
            spec.coverage.role = role;
        }
        Ok(())
    }

    /// An untrusted project config that stops `spec` from checking files it checked
    /// (`disabled`, `extensions`) does not make those files "no server's": each such
    /// extension is recorded in `spec.not_checked`, and a file no other server checks
    /// is reported as not checked (exit 3) instead of skipped. Otherwise a generated
    /// patch to `.lspgate.toml` could switch the gate off.
    fn note_stopped_checks(
        &self,
        name: &str,
        server: &RawServer,
        covered: &[String],
        spec: &mut ServerSpec,
        notes: &mut Vec<String>,
    ) {
        let lost: Vec<&String> = covered
            .iter()
            .filter(|ext| spec.disabled || !spec.extensions.contains(ext))
            .collect();
        if lost.is_empty() {
            return;
        }
        let key = if spec.disabled && server.disabled == Some(true) {
            "disabled"
        } else {
            "extensions"
        };
        let why = format!(
            "server.{name}.{key} in the untrusted {} turns off its check",
            self.path.file_name().map_or_else(
                || self.path.display().to_string(),
                |f| f.to_string_lossy().into_owned()
            )
        );
        for ext in &lost {
            if !spec.not_checked.iter().any(|(e, _)| e == *ext) {
                spec.not_checked.push(((*ext).clone(), why.clone()));
            }
        }
        let exts: Vec<String> = lost.iter().map(|e| format!(".{e}")).collect();
        notes.push(format!(
            "{}: server.{name}.{key}: the {} files {name} would check are reported as not \
             checked (exit 3) unless another server checks them ({})",
            self.path.display(),
            exts.join(" "),
            self.why_untrusted,
        ));
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

/// Whether a server command names a file (`./bin/server`, `/opt/x/server`) rather
/// than a program to look up on PATH.
fn is_path(command: &str) -> bool {
    Path::new(command).components().count() > 1
}

/// Why [`which`] found nothing for `command`, for a report: a path that is not an
/// executable file, or a name not on PATH.
pub fn not_found(command: &str) -> String {
    if is_path(command) {
        format!("`{command}` does not exist or is not executable")
    } else {
        format!("`{command}` is not on PATH")
    }
}

fn table_to_json(table: &toml::Table) -> Value {
    Value::Object(
        table
            .iter()
            .map(|(k, v)| (k.clone(), toml_to_json(v)))
            .collect(),
    )
}

/// By hand rather than through serde: toml's datetimes would serialize as a private
/// marker table, and servers expect a string.
fn toml_to_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
        }
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => table_to_json(t),
    }
}

// ----------------------------------------------------------------------------------
// Options

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

/// Flag > env > file > default. clap has already put the env twins of the valued
/// options into `args`; the boolean flags' twins (`LSPGATE_ALL`, `LSPGATE_NO_DAEMON`,
/// `LSPGATE_DRY_RUN`, `LSPGATE_REJECT`) are read here, since clap's bool flags take none.
pub fn resolve_options(args: &ReportArgs, files: &FileOptions) -> Result<Options, ConfigError> {
    resolve_options_with(args, files, &|name| std::env::var(name).ok())
}

fn resolve_options_with(
    args: &ReportArgs,
    files: &FileOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Options, ConfigError> {
    let duration = |value: &Option<String>, flag: &str, var: &str| {
        let Some(value) = value else { return Ok(None) };
        // clap merged the two, so say which one it was when we can tell.
        let source = if env(var).as_deref() == Some(value.as_str()) {
            var
        } else {
            flag
        };
        parse_duration(value)
            .map(Some)
            .map_err(|e| ConfigError::Option(format!("{source}: {e}")))
    };
    // A flag can only turn a boolean on; when absent, an env value (0 too) outranks
    // the file.
    let boolean = |flag: bool, var: &str, file: Option<bool>| -> Result<bool, ConfigError> {
        if flag {
            return Ok(true);
        }
        Ok(env_bool(var, env(var))?.or(file).unwrap_or(false))
    };
    let d = Options::default();
    Ok(Options {
        format: args.format.or(files.format).unwrap_or(d.format),
        startup_timeout: duration(
            &args.startup_timeout,
            "--startup-timeout",
            "LSPGATE_STARTUP_TIMEOUT",
        )?
        .or(files.startup_timeout)
        .unwrap_or(d.startup_timeout),
        timeout: duration(&args.timeout, "--timeout", "LSPGATE_TIMEOUT")?
            .or(files.timeout)
            .unwrap_or(d.timeout),
        cross_file_timeout: duration(
            &args.cross_file_timeout,
            "--cross-file-timeout",
            "LSPGATE_CROSS_FILE_TIMEOUT",
        )?
        .or(files.cross_file_timeout)
        .unwrap_or(d.cross_file_timeout),
        all: boolean(args.all, "LSPGATE_ALL", files.all)?,
        fail_on: args.fail_on.or(files.fail_on).unwrap_or(d.fail_on),
        severity: args.severity.or(files.severity).unwrap_or(d.severity),
        dry_run: boolean(args.dry_run, "LSPGATE_DRY_RUN", None)?,
        reject: boolean(args.reject, "LSPGATE_REJECT", None)?,
        no_daemon: boolean(args.no_daemon, "LSPGATE_NO_DAEMON", files.no_daemon)?,
        max_entries: args
            .max_entries
            .or(files.max_entries)
            .unwrap_or(d.max_entries),
        color: args.color.or(files.color).unwrap_or(d.color),
    })
}

// ----------------------------------------------------------------------------------
// Server selection

/// The enabled servers that cover `path`'s extension, in preference order.
pub fn candidates<'a>(
    servers: &'a [ServerSpec],
    path: &Path,
) -> impl Iterator<Item = &'a ServerSpec> + use<'a> {
    let ext = path.extension().and_then(OsStr::to_str).map(str::to_owned);
    servers.iter().filter(move |s| {
        !s.disabled
            && ext
                .as_deref()
                .is_some_and(|e| s.extensions.iter().any(|x| x == e))
    })
}

/// The checker for `path`: the first enabled checker covering it whose command is
/// installed; if none is, the first that covers it, so the caller can say which one
/// is missing. Linters are [`servers_for`]'s.
pub fn server_for<'a>(servers: &'a [ServerSpec], path: &Path) -> Option<&'a ServerSpec> {
    server_for_with(servers, path, &|command| which(command).is_some())
}

fn server_for_with<'a>(
    servers: &'a [ServerSpec],
    path: &Path,
    installed: &dyn Fn(&str) -> bool,
) -> Option<&'a ServerSpec> {
    let mut covering = candidates(servers, path).filter(|s| s.coverage.role == Role::Checker);
    let first = covering.next()?;
    if installed(&first.command) {
        return Some(first);
    }
    covering.find(|s| installed(&s.command)).or(Some(first))
}

/// Every server that checks `path`: its checker ([`server_for`]: one of the type
/// checkers or compilers covering it), then each linter covering it that applies
/// here: installed, and configured by the project when it needs to be; a missing one
/// only when the project configures it (its checks were asked for and are not made).
pub fn servers_for<'a>(
    servers: &'a [ServerSpec],
    path: &Path,
    workspace: &Path,
) -> Vec<&'a ServerSpec> {
    servers_for_with(servers, path, workspace, &|command| {
        which(command).is_some()
    })
}

fn servers_for_with<'a>(
    servers: &'a [ServerSpec],
    path: &Path,
    workspace: &Path,
    installed: &dyn Fn(&str) -> bool,
) -> Vec<&'a ServerSpec> {
    let mut out: Vec<&ServerSpec> = server_for_with(servers, path, installed)
        .into_iter()
        .collect();
    for linter in candidates(servers, path).filter(|s| s.coverage.role == Role::Linter) {
        let configured = || has_config(linter, path, workspace);
        let applies = if installed(&linter.command) {
            !linter.coverage.needs_config || configured()
        } else {
            configured()
        };
        if applies {
            out.push(linter);
        }
    }
    out
}

/// Whether one of `spec`'s config files (`NAME`, or `NAME:TEXT` for a file holding
/// TEXT) is in `path`'s directory or above, up to the workspace.
pub fn has_config(spec: &ServerSpec, path: &Path, workspace: &Path) -> bool {
    let markers = &spec.coverage.config_files;
    if markers.is_empty() {
        return false;
    }
    let mut dir = path.parent();
    while let Some(d) = dir {
        if !d.starts_with(workspace) {
            break;
        }
        for marker in markers {
            let (name, needle) = match marker.split_once(':') {
                Some((name, needle)) => (name, Some(needle)),
                None => (marker.as_str(), None),
            };
            let file = d.join(name);
            let found = match needle {
                None => file.exists(),
                Some(needle) => std::fs::read_to_string(&file).is_ok_and(|t| t.contains(needle)),
            };
            if found {
                return true;
            }
        }
        dir = d.parent();
    }
    false
}

/// Why `path`, which no enabled server covers, is still a file some server would check
/// (`ServerSpec::not_checked`): the caller reports it as not checked instead of
/// skipped. `None` for a file no server is for.
pub fn stopped_check(servers: &[ServerSpec], path: &Path) -> Option<String> {
    let ext = path.extension().and_then(OsStr::to_str)?;
    servers
        .iter()
        .flat_map(|s| &s.not_checked)
        .find(|(e, _)| e == ext)
        .map(|(_, why)| why.clone())
}

/// Where `command` would run from: itself if it is a path, else the first executable
/// file of that name in a `PATH` directory.
pub fn which(command: &str) -> Option<PathBuf> {
    which_in(command, &std::env::var_os("PATH").unwrap_or_default())
}

fn which_in(command: &str, path_var: &OsStr) -> Option<PathBuf> {
    if command.is_empty() {
        return None;
    }
    let as_path = Path::new(command);
    if is_path(command) || as_path.is_absolute() {
        return is_executable(as_path).then(|| as_path.to_owned());
    }
    std::env::split_paths(path_var)
        // An empty entry means the current directory, where a repository could plant
        // a program of that name; no server is installed that way.
        .filter(|dir| !dir.as_os_str().is_empty())
        .flat_map(|dir| executable_names(command).map(move |name| dir.join(name)))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn executable_names(command: &str) -> impl Iterator<Item = String> {
    std::iter::once(command.to_string())
}

#[cfg(not(unix))]
fn executable_names(command: &str) -> impl Iterator<Item = String> {
    ["", ".exe", ".cmd", ".bat"]
        .into_iter()
        .map(move |ext| format!("{command}{ext}"))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Ok(secs(2.0)));
        assert_eq!(parse_duration("1m"), Ok(secs(60.0)));
        assert_eq!(parse_duration("1.5s"), Ok(secs(1.5)));
        assert_eq!(parse_duration("3"), Ok(secs(3.0)));
        assert_eq!(parse_duration(" 250 ms "), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in ["", "s", "5x", "-1s", "1e3", "inf", "1.2.3s", ".", "5 sec"] {
            let err = parse_duration(bad).expect_err(bad);
            assert!(
                err.starts_with(&format!("invalid duration {bad:?}")),
                "{err}"
            );
        }
        assert!(
            parse_duration("5x")
                .expect_err("5x")
                .contains("unknown unit \"x\"")
        );
    }

    /// A workspace and a user config directory, each in its own temp dir.
    struct Fixture {
        workspace: tempfile::TempDir,
        home: tempfile::TempDir,
    }

    impl Fixture {
        fn new() -> Fixture {
            Fixture {
                workspace: tempfile::tempdir().expect("tempdir"),
                home: tempfile::tempdir().expect("tempdir"),
            }
        }
        fn project(self, text: &str) -> Fixture {
            std::fs::write(self.workspace.path().join(PROJECT_FILE), text).expect("write");
            self
        }
        fn user(self, text: &str) -> Fixture {
            std::fs::write(self.user_path(), text).expect("write");
            self
        }
        fn user_path(&self) -> PathBuf {
            self.home.path().join("config.toml")
        }
        fn load(&self, trust_flag: bool, trust_env: bool) -> Result<Loaded, ConfigError> {
            load_from(
                self.workspace.path(),
                Some(&self.user_path()),
                trust_flag,
                trust_env,
            )
        }
        fn loaded(&self) -> Loaded {
            self.load(false, false).expect("config loads")
        }
    }

    fn server<'a>(loaded: &'a Loaded, name: &str) -> Option<&'a ServerSpec> {
        loaded.servers.iter().find(|s| s.name == name)
    }

    const FAKE: &str = "[server.fake]\ncommand = \"fake-lsp\"\nextensions = [\"fk\"]\n";

    #[test]
    fn no_files_gives_the_builtin_table() {
        let loaded = Fixture::new().loaded();
        assert_eq!(loaded.servers, servers::builtin());
        assert_eq!(loaded.options, FileOptions::default());
        assert!(loaded.notes.is_empty() && loaded.files.is_empty() && !loaded.trusted);
    }

    #[test]
    fn unknown_key_names_key_and_file() {
        let f = Fixture::new().project("format = \"json\"\ntimout = \"5s\"\n");
        let err = f.load(false, false).expect_err("unknown key").to_string();
        assert!(
            err.contains(".lspgate.toml:2:1: unknown key \"timout\""),
            "{err}"
        );

        let f = Fixture::new().user("[server.gopls]\ncomand = \"gopls\"\n");
        let err = f.load(false, false).expect_err("unknown key").to_string();
        assert!(
            err.contains("config.toml:2:1: unknown key \"comand\""),
            "{err}"
        );
    }

    #[test]
    fn bad_values_name_the_file() {
        let f = Fixture::new().project("timeout = \"5x\"\n");
        let err = f.load(false, false).expect_err("bad duration").to_string();
        assert!(
            err.contains(".lspgate.toml:1:") && err.contains("invalid duration \"5x\""),
            "{err}"
        );

        let f = Fixture::new().project("format = \"yaml\"\n");
        let err = f.load(false, false).expect_err("bad format").to_string();
        assert!(
            err.contains(".lspgate.toml:1:") && err.contains("yaml"),
            "{err}"
        );

        let f = Fixture::new().project("[server.gopls\n");
        let err = f.load(false, false).expect_err("bad toml").to_string();
        assert!(err.contains(".lspgate.toml:1:"), "{err}");
    }

    #[test]
    fn options_layer_project_over_user() {
        let f = Fixture::new()
            .user("format = \"json\"\ntimeout = \"3s\"\nmax-entries = 7\n")
            .project("timeout = 4\nquiet-unused = 1\n");
        // An unknown key anywhere fails the whole load.
        assert!(f.load(false, false).is_err());

        let f = Fixture::new()
            .user("format = \"json\"\ntimeout = \"3s\"\nmax-entries = 7\n")
            .project("timeout = 4\ncross-file-timeout = \"250ms\"\nall = true\n");
        let loaded = f.loaded();
        assert_eq!(loaded.files.len(), 2);
        assert_eq!(
            loaded.options,
            FileOptions {
                format: Some(Format::Json),
                timeout: Some(secs(4.0)),
                cross_file_timeout: Some(Duration::from_millis(250)),
                all: Some(true),
                max_entries: Some(7),
                ..FileOptions::default()
            }
        );
    }

    #[test]
    fn servers_layer_and_settings_merge_deeply() {
        let f = Fixture::new()
            .user(
                "[server.gopls]\nquiet = \"1s\"\nroot-markers = [\"go.mod\"]\n\
                 [server.gopls.settings.gopls]\nstaticcheck = true\nhints = { a = 1 }\n\
                 [server.rust-analyzer]\ndisabled = true\n",
            )
            .project(
                "[server.gopls]\nquiet = \"2s\"\n\
                 [server.gopls.settings.gopls]\nhints = { b = 2 }\n\
                 [server.pyright.settings.python.analysis]\ntypeCheckingMode = \"strict\"\n\
                 [server.rust-analyzer]\ndisabled = false\n\
                 [server.rust-analyzer.initialization-options]\ncargo = { features = \"all\" }\n",
            );
        let loaded = f.loaded();
        assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);

        let gopls = server(&loaded, "gopls").expect("gopls");
        assert_eq!(gopls.wait.quiet, secs(2.0));
        assert_eq!(gopls.root_markers, ["go.mod"]);
        assert_eq!(
            gopls.settings,
            json!({ "gopls": {
                "diagnosticsDelay": "0s", "staticcheck": true, "hints": { "a": 1, "b": 2 }
            } })
        );
        assert_eq!(gopls.origin, Origin::BuiltIn);

        let pyright = server(&loaded, "pyright").expect("pyright");
        assert_eq!(
            pyright.setting(Some("python.analysis.typeCheckingMode")),
            json!("strict")
        );
        // The built-in keys beside it survive.
        assert_eq!(
            pyright.setting(Some("python.analysis.diagnosticMode")),
            json!("workspace")
        );

        let ra = server(&loaded, "rust-analyzer").expect("rust-analyzer");
        assert!(!ra.disabled);
        assert_eq!(
            ra.initialization_options,
            Some(json!({ "checkOnSave": true, "cargo": { "features": "all" } }))
        );
    }

    #[test]
    fn user_adds_a_server_ahead_of_the_builtins() {
        let f = Fixture::new().user(
            "[server.pylsp]\ncommand = \"pylsp\"\nextensions = [\".py\"]\n\
             language-id = \"python\"\nsettings = { when = 1979-05-27T07:32:00Z }\n",
        );
        let loaded = f.loaded();
        let first = &loaded.servers[0];
        assert_eq!(first.name, "pylsp");
        assert_eq!(first.origin, Origin::UserConfig);
        assert_eq!(first.extensions, ["py"]);
        assert_eq!(first.language_id("py"), "python");
        assert_eq!(first.settings, json!({ "when": "1979-05-27T07:32:00Z" }));
        assert_eq!(first.wait, WaitProfile::default());
        assert!(!first.install_hint.is_empty());
        assert_eq!(loaded.servers.len(), servers::builtin().len() + 1);
    }

    #[test]
    fn language_id_defaults_to_the_extension_and_takes_a_table() {
        let f = Fixture::new().user(
            "[server.multi]\ncommand = \"multi-lsp\"\nextensions = [\"a\", \"b\", \"c\"]\n\
             language-id = { b = \"bee\" }\n",
        );
        let loaded = f.loaded();
        let multi = server(&loaded, "multi").expect("multi");
        assert_eq!(
            ["a", "b", "c"].map(|e| multi.language_id(e)),
            ["a", "bee", "c"]
        );
    }

    #[test]
    fn a_new_server_needs_command_and_extensions() {
        for text in [
            "[server.fake]\nextensions = [\"fk\"]\n",
            "[server.fake]\ncommand = \"fake-lsp\"\n",
        ] {
            let err = Fixture::new()
                .user(text)
                .load(false, false)
                .expect_err(text)
                .to_string();
            assert!(
                err.contains("server.fake") && err.contains("\"command\""),
                "{err}"
            );
            // Trust does not matter: the file is wrong either way.
            let err = Fixture::new()
                .project(text)
                .load(false, false)
                .expect_err(text)
                .to_string();
            assert!(err.contains(".lspgate.toml: server.fake"), "{err}");
        }
    }

    #[test]
    fn untrusted_project_settings_that_run_programs_are_withheld() {
        let project = "[server.rust-analyzer.settings.rust-analyzer.check]\n\
                       overrideCommand = [\"sh\", \"-c\", \"evil\"]\nallTargets = false\n\
                       [server.gopls.settings.gopls]\nbuildFlags = [\"-toolexec=/tmp/x\"]\n\
                       staticcheck = true\n\
                       [server.pyright.initialization-options]\npythonPath = \"/tmp/py\"\n";
        let loaded = Fixture::new().project(project).loaded();
        let ra = server(&loaded, "rust-analyzer").expect("rust-analyzer");
        assert_eq!(
            ra.settings,
            json!({ "rust-analyzer": { "check": { "allTargets": false } } })
        );
        let gopls = server(&loaded, "gopls").expect("gopls");
        assert_eq!(
            gopls.settings,
            json!({ "gopls": { "diagnosticsDelay": "0s", "staticcheck": true } })
        );
        let pyright = server(&loaded, "pyright").expect("pyright");
        assert_eq!(pyright.initialization_options, Some(json!({})));
        let notes = loaded.notes.join("\n");
        for key in [
            "server.rust-analyzer.settings.rust-analyzer.check.overrideCommand",
            "server.gopls.settings.gopls.buildFlags",
            "server.pyright.initialization-options.pythonPath",
        ] {
            assert!(notes.contains(key), "{key} not in {notes}");
        }

        // Trusted, they apply.
        let loaded = Fixture::new()
            .project(project)
            .load(true, false)
            .expect("loads");
        let ra = server(&loaded, "rust-analyzer").expect("rust-analyzer");
        assert!(
            ra.settings
                .pointer("/rust-analyzer/check/overrideCommand")
                .is_some()
        );
    }

    /// Issue 10, cases 1 and 3: settings of an untrusted project pass by allow-list,
    /// per server. What names a program (`npmLocation`, which tsserver's typings
    /// installer runs through a shell), extra arguments (`check.extraArgs`), a path
    /// outside the workspace (`cargo.targetDir`, `extraPaths = ["../x"]`), an
    /// environment or a plugin is withheld, with a note naming the key.
    #[test]
    fn untrusted_settings_pass_by_allow_list() {
        let project = r#"
[server.typescript-language-server.initialization-options]
npmLocation = "$(touch $HOME/PWNED)"
disableAutomaticTypingAcquisition = false
plugins = [{ name = "evil", location = "/tmp" }]
tsserver = { path = "node_modules/typescript/lib/tsserver.js" }
preferences = { quotePreference = "single" }
[server.rust-analyzer.initialization-options]
"check.extraArgs" = ["--config", "build.rustc-wrapper='tools/w.sh'"]
cargo = { targetDir = "/tmp/out", features = "all" }
[server.rust-analyzer.settings.rust-analyzer.check]
extraArgs = ["--config", "build.rustc-wrapper='tools/w.sh'"]
allTargets = false
[server.gopls.settings.gopls]
env = { GOFLAGS = "-toolexec=/tmp/x" }
staticcheck = true
[server.pyright.settings.python]
pythonPath = "/tmp/py"
analysis = { extraPaths = ["../outside", "src"], stubPath = "typings", typeCheckingMode = "strict" }
[server.clangd.initialization-options]
fallbackFlags = ["-fplugin=/tmp/x.so"]
compilationDatabasePath = "build"
[server.mine.settings]
anything = 1
"#;
        let user = "[server.mine]\ncommand = \"mine-lsp\"\nextensions = [\"mn\"]\n";
        let loaded = Fixture::new().user(user).project(project).loaded();
        let ts = server(&loaded, "typescript-language-server").expect("ts");
        assert_eq!(
            ts.initialization_options,
            Some(json!({
                "preferences": { "quotePreference": "single" },
                "disableAutomaticTypingAcquisition": true,
            }))
        );
        let ra = server(&loaded, "rust-analyzer").expect("rust-analyzer");
        assert_eq!(
            ra.initialization_options,
            Some(json!({ "checkOnSave": true, "cargo": { "features": "all" } }))
        );
        assert_eq!(
            ra.settings,
            json!({ "rust-analyzer": { "check": { "allTargets": false } } })
        );
        let gopls = server(&loaded, "gopls").expect("gopls");
        assert_eq!(
            gopls.settings,
            json!({ "gopls": { "diagnosticsDelay": "0s", "staticcheck": true } })
        );
        let pyright = server(&loaded, "pyright").expect("pyright");
        assert_eq!(
            pyright.setting(Some("python.analysis.stubPath")),
            json!("typings")
        );
        assert_eq!(pyright.setting(Some("python.pythonPath")), Value::Null);
        assert_eq!(
            pyright.setting(Some("python.analysis.extraPaths")),
            Value::Null
        );
        let clangd = server(&loaded, "clangd").expect("clangd");
        assert_eq!(
            clangd.initialization_options,
            Some(json!({ "clangdFileStatus": true, "compilationDatabasePath": "build" }))
        );
        let mine = server(&loaded, "mine").expect("mine");
        assert_eq!(mine.settings, json!({}));

        let notes = loaded.notes.join("\n");
        for key in [
            "server.typescript-language-server.initialization-options.npmLocation",
            "server.typescript-language-server.initialization-options.disableAutomaticTypingAcquisition",
            "server.typescript-language-server.initialization-options.plugins",
            "server.typescript-language-server.initialization-options.tsserver",
            "server.rust-analyzer.initialization-options.check.extraArgs",
            "server.rust-analyzer.initialization-options.cargo.targetDir",
            "server.rust-analyzer.settings.rust-analyzer.check.extraArgs",
            "server.gopls.settings.gopls.env",
            "server.pyright.settings.python.pythonPath",
            "server.pyright.settings.python.analysis.extraPaths",
            "server.clangd.initialization-options.fallbackFlags",
            "server.mine.settings.anything",
        ] {
            assert!(notes.contains(key), "{key} not in {notes}");
        }
        for kept in [
            "quotePreference",
            "allTargets",
            "staticcheck",
            "stubPath",
            "compilationDatabasePath",
        ] {
            assert!(!notes.contains(kept), "{kept} in {notes}");
        }

        // Trusted, all of it applies.
        let loaded = Fixture::new()
            .user(user)
            .project(project)
            .load(true, false)
            .expect("loads");
        assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
        let ts = server(&loaded, "typescript-language-server").expect("ts");
        assert_eq!(
            ts.initialization_options
                .as_ref()
                .and_then(|o| o.get("npmLocation")),
            Some(&json!("$(touch $HOME/PWNED)"))
        );
    }

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

    /// Issue 10, case 4: an untrusted project config that turns off the check of a
    /// file a built-in would check does not make it "no server's": the file is
    /// reported as not checked. Trusted, it is the project's choice.
    #[test]
    fn an_untrusted_project_cannot_turn_a_check_off_silently() {
        let py = Path::new("a.py");
        // Every type checker for .py (pyright, basedpyright, ty, pyrefly): with one
        // left, the file is still checked.
        let all = |key: &str| {
            ["pyright", "basedpyright", "ty", "pyrefly"]
                .map(|name| format!("[server.{name}]\n{key}\n"))
                .concat()
        };
        for project in [all("disabled = true"), all("extensions = [\"nope\"]")] {
            let project = project.as_str();
            let loaded = Fixture::new().project(project).loaded();
            assert!(server_for(&loaded.servers, py).is_none(), "{project}");
            let why = stopped_check(&loaded.servers, py).expect("a reason");
            assert!(
                why.starts_with("server.pyright.")
                    && why.ends_with("in the untrusted .lspgate.toml turns off its check"),
                "{why}"
            );
            assert!(
                loaded
                    .notes
                    .iter()
                    .any(|n| n.contains("reported as not checked")),
                "{:?}",
                loaded.notes
            );
            assert_eq!(stopped_check(&loaded.servers, Path::new("README.md")), None);
            let trusted = Fixture::new()
                .project(project)
                .load(true, false)
                .expect("loads");
            assert_eq!(stopped_check(&trusted.servers, py), None, "{project}");
        }
        // Disabled in the user's own config: a choice, not a gap.
        let loaded = Fixture::new()
            .user("[server.pyright]\ndisabled = true\n[server.basedpyright]\ndisabled = true\n")
            .loaded();
        assert_eq!(stopped_check(&loaded.servers, py), None);
    }

    #[test]
    fn untrusted_project_commands_are_ignored_with_a_note() {
        let f = Fixture::new().project(&format!(
            "{FAKE}[server.gopls]\ncommand = \"/tmp/evil\"\nargs = [\"-x\"]\nquiet = 1\n\
             [server.clangd]\ncommand = \"clangd\"\n"
        ));
        let loaded = f.loaded();
        assert!(!loaded.trusted);
        assert!(server(&loaded, "fake").is_none());

        let gopls = server(&loaded, "gopls").expect("gopls");
        assert_eq!(gopls.command, "gopls");
        assert!(gopls.args.is_empty());
        assert_eq!(gopls.origin, Origin::BuiltIn);
        // The keys that run nothing still apply.
        assert_eq!(gopls.wait.quiet, secs(1.0));

        assert_eq!(loaded.notes.len(), 2, "{:?}", loaded.notes);
        let fake = &loaded.notes[0];
        assert!(
            fake.contains(".lspgate.toml: ignored server.fake.command"),
            "{fake}"
        );
        assert!(
            fake.contains("--trust-project") && fake.contains("trusted-workspaces"),
            "{fake}"
        );
        let gopls = &loaded.notes[1];
        assert!(
            gopls.contains(
                "ignored server.gopls.command and server.gopls.args (the project is not trusted"
            ),
            "{gopls}"
        );
        // clangd's command was restated unchanged: nothing to ignore, nothing to say.
    }

    fn assert_project_trusted(loaded: &Loaded, workspace: &Path) {
        assert!(loaded.trusted);
        assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
        let fake = &loaded.servers[0];
        assert_eq!(
            (fake.name.as_str(), fake.origin),
            ("fake", Origin::ProjectConfig)
        );
        let gopls = server(loaded, "gopls").expect("gopls");
        assert_eq!(
            gopls.command,
            workspace.join("tools/gopls").display().to_string()
        );
        assert_eq!(gopls.origin, Origin::ProjectConfig);
    }

    const TRUSTED_PROJECT: &str = "[server.gopls]\ncommand = \"./tools/gopls\"\n";

    #[test]
    fn trust_by_flag() {
        let f = Fixture::new().project(&format!("{FAKE}{TRUSTED_PROJECT}"));
        let loaded = f.load(true, false).expect("loads");
        assert_project_trusted(&loaded, f.workspace.path());
    }

    #[test]
    fn trust_by_env() {
        let f = Fixture::new().project(&format!("{FAKE}{TRUSTED_PROJECT}"));
        let loaded = f.load(false, true).expect("loads");
        assert_project_trusted(&loaded, f.workspace.path());
    }

    #[test]
    fn trust_by_user_trusted_workspaces() {
        let f = Fixture::new().project(&format!("{FAKE}{TRUSTED_PROJECT}"));
        // Listed through a non-canonical spelling: compared after canonicalizing.
        let listed = f.workspace.path().join("sub").join("..");
        std::fs::create_dir(f.workspace.path().join("sub")).expect("mkdir");
        let f = f.user(&format!(
            "trusted-workspaces = [\"/nonexistent/elsewhere\", {:?}]\n",
            listed.display().to_string()
        ));
        let loaded = f.loaded();
        assert_project_trusted(&loaded, f.workspace.path());

        let f = Fixture::new().user("trusted-workspaces = [\"relative/path\"]\n");
        let err = f.load(false, false).expect_err("relative").to_string();
        assert!(err.contains("not an absolute path"), "{err}");
    }

    #[test]
    fn a_project_cannot_trust_itself() {
        let f = Fixture::new().project(&format!("trusted-workspaces = [\"/\"]\n{FAKE}"));
        let err = f.load(false, false).expect_err("self-trust").to_string();
        assert!(
            err.contains(".lspgate.toml: trusted-workspaces is read only from the user config"),
            "{err}"
        );
    }

    #[test]
    fn user_commands_need_no_trust() {
        let f =
            Fixture::new().user("[server.gopls]\ncommand = \"~/bin/gopls\"\nargs = [\"serve\"]\n");
        let loaded = f.loaded();
        let gopls = server(&loaded, "gopls").expect("gopls");
        assert_eq!(gopls.origin, Origin::UserConfig);
        assert!(gopls.command.ends_with("bin/gopls") && !gopls.command.starts_with('~'));
        assert_eq!(gopls.args, ["serve"]);
        assert_eq!(
            gopls.install_hint, "check the command's path in the config file that sets it",
            "the built-in's apt hint does not install a program at a path"
        );
        assert!(not_found(&gopls.command).ends_with("does not exist or is not executable"));
        let pyright = server(&loaded, "pyright").expect("pyright");
        assert_eq!(pyright.install_hint, "npm install -g pyright");
        assert_eq!(
            not_found(&pyright.command),
            "`pyright-langserver` is not on PATH"
        );
    }

    #[test]
    fn a_renamed_command_gets_its_own_install_hint() {
        let loaded = Fixture::new()
            .user("[server.pyright]\ncommand = \"my-pyright\"\n")
            .loaded();
        let pyright = server(&loaded, "pyright").expect("pyright");
        assert_eq!(
            pyright.install_hint,
            "install my-pyright and put it on PATH"
        );
        let loaded = Fixture::new()
            .user("[server.pyright]\ncommand = \"my-pyright\"\ninstall-hint = \"ask ops\"\n")
            .loaded();
        let pyright = server(&loaded, "pyright").expect("pyright");
        assert_eq!(pyright.install_hint, "ask ops");
    }

    fn spec(name: &str, command: &str, ext: &str) -> ServerSpec {
        ServerSpec {
            name: name.into(),
            command: command.into(),
            extensions: vec![ext.into()],
            origin: Origin::UserConfig,
            ..servers::builtin().remove(0)
        }
    }

    #[test]
    fn server_for_prefers_installed_then_first() {
        let table = vec![
            spec("a", "a-lsp", "py"),
            spec("b", "b-lsp", "py"),
            spec("c", "c-lsp", "go"),
        ];
        let py = Path::new("src/x.py");
        let name = |installed: &[&str]| {
            server_for_with(&table, py, &|c| installed.contains(&c)).map(|s| s.name.clone())
        };
        assert_eq!(name(&["a-lsp", "b-lsp"]).as_deref(), Some("a"));
        assert_eq!(name(&["b-lsp"]).as_deref(), Some("b"));
        assert_eq!(name(&[]).as_deref(), Some("a"));
        assert!(server_for_with(&table, Path::new("x.rs"), &|_| true).is_none());
        assert!(server_for_with(&table, Path::new("Makefile"), &|_| true).is_none());

        let mut table = table;
        table[0].disabled = true;
        let first = server_for_with(&table, py, &|_| false).map(|s| s.name.as_str());
        assert_eq!(first, Some("b"));
    }

    #[test]
    fn project_disables_a_builtin() {
        let f = Fixture::new().project("[server.pyright]\ndisabled = true\n");
        let loaded = f.loaded();
        let chosen = server_for_with(&loaded.servers, Path::new("a.py"), &|_| true);
        assert_eq!(chosen.map(|s| s.name.as_str()), Some("basedpyright"));
    }

    #[cfg(unix)]
    #[test]
    fn which_finds_only_executable_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).expect("mkdir");
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").expect("write");
        std::fs::write(bin.join("plain"), "").expect("write");
        std::fs::create_dir(bin.join("dir")).expect("mkdir");
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");

        let path_var =
            std::env::join_paths([dir.path().join("missing"), bin.clone()]).expect("join");
        assert_eq!(which_in("tool", &path_var), Some(tool.clone()));
        assert_eq!(which_in("plain", &path_var), None);
        assert_eq!(which_in("dir", &path_var), None);
        assert_eq!(which_in("nope", &path_var), None);
        assert_eq!(which_in("", &path_var), None);
        let tool_str = tool.display().to_string();
        assert_eq!(which_in(&tool_str, OsStr::new("")), Some(tool));
    }

    #[test]
    fn options_precedence_flag_env_file_default() {
        let no_env = |_: &str| None;
        let files = FileOptions {
            timeout: Some(secs(3.0)),
            format: Some(Format::Json),
            all: Some(true),
            ..FileOptions::default()
        };

        let defaults =
            resolve_options_with(&ReportArgs::default(), &FileOptions::default(), &no_env)
                .expect("defaults");
        assert_eq!(defaults, Options::default());
        assert_eq!(defaults.timeout, secs(5.0));
        assert_eq!(defaults.startup_timeout, secs(60.0));
        assert_eq!(defaults.cross_file_timeout, secs(60.0));
        assert_eq!(defaults.max_entries, 20);

        let from_file =
            resolve_options_with(&ReportArgs::default(), &files, &no_env).expect("file");
        assert_eq!(
            (from_file.timeout, from_file.format, from_file.all),
            (secs(3.0), Format::Json, true)
        );

        let args = ReportArgs {
            timeout: Some("1s".into()),
            format: Some(Format::Text),
            max_entries: Some(3),
            ..ReportArgs::default()
        };
        let from_flag = resolve_options_with(&args, &files, &no_env).expect("flag");
        assert_eq!(
            (from_flag.timeout, from_flag.format, from_flag.max_entries),
            (secs(1.0), Format::Text, 3)
        );

        // Boolean env twins: on, and off outranking the file.
        let env = |name: &str| match name {
            "LSPGATE_NO_DAEMON" => Some("1".to_string()),
            "LSPGATE_ALL" => Some("0".to_string()),
            _ => None,
        };
        let from_env = resolve_options_with(&ReportArgs::default(), &files, &env).expect("env");
        assert!(from_env.no_daemon && !from_env.all);
        let all = ReportArgs {
            all: true,
            ..ReportArgs::default()
        };
        assert!(resolve_options_with(&all, &files, &env).expect("flag").all);

        let bad_env = |_: &str| Some("maybe".to_string());
        let err =
            resolve_options_with(&ReportArgs::default(), &files, &bad_env).expect_err("bad env");
        assert!(
            err.to_string().contains("LSPGATE_ALL: expected 1 or 0"),
            "{err}"
        );
    }

    #[test]
    fn invalid_duration_names_the_option() {
        let args = ReportArgs {
            timeout: Some("5x".into()),
            ..ReportArgs::default()
        };
        let err = resolve_options_with(&args, &FileOptions::default(), &|_| None)
            .expect_err("5x")
            .to_string();
        assert!(
            err.starts_with("--timeout: invalid duration \"5x\""),
            "{err}"
        );

        let env = |name: &str| (name == "LSPGATE_TIMEOUT").then(|| "5x".to_string());
        let err = resolve_options_with(&args, &FileOptions::default(), &env)
            .expect_err("5x")
            .to_string();
        assert!(
            err.starts_with("LSPGATE_TIMEOUT: invalid duration \"5x\""),
            "{err}"
        );
    }
}
