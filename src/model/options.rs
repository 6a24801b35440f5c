//! The options of a reporting run as plain data: the value types the command line,
//! the environment and the config files share, and [`Options`], every value decided
//! (the invocation step resolves them; the check and the renderers read them).
//! [`ReportArgs`] is what was typed for them, as clap reads it: the command line
//! and the MCP tools share it.

use std::time::Duration;

use clap::{Args, ValueEnum};

pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
pub const DEFAULT_CROSS_FILE_TIMEOUT: Duration = Duration::from_secs(60);
pub const DEFAULT_MAX_ENTRIES: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    Error,
    Warning,
    Never,
}

/// The lowest severity the blocks list (`--severity`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    #[default]
    Hint,
}

/// A server log message's level (LSP's `MessageType`), most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    Error,
    Warning,
    Info,
    Log,
}

impl LogLevel {
    /// The LSP `MessageType` number: 1 error ... 4 log.
    pub fn message_type(self) -> i32 {
        match self {
            LogLevel::Error => 1,
            LogLevel::Warning => 2,
            LogLevel::Info => 3,
            LogLevel::Log => 4,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// The settings of one reporting run, every value decided.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Options {
    pub format: Format,
    pub startup_timeout: Duration,
    pub timeout: Duration,
    pub cross_file_timeout: Duration,
    pub all: bool,
    pub fail_on: FailOn,
    /// The lowest severity listed (`--severity`).
    #[serde(default)]
    pub severity: Severity,
    pub dry_run: bool,
    pub reject: bool,
    pub no_daemon: bool,
    pub max_entries: usize,
    pub color: ColorChoice,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: Format::Text,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
            cross_file_timeout: DEFAULT_CROSS_FILE_TIMEOUT,
            all: false,
            fail_on: FailOn::Error,
            severity: Severity::Hint,
            dry_run: false,
            reject: false,
            no_daemon: false,
            max_entries: DEFAULT_MAX_ENTRIES,
            color: ColorChoice::Auto,
        }
    }
}

/// Options shared by the reporting commands (write, edit, patch, check).
#[derive(Debug, Clone, Default, Args)]
pub struct ReportArgs {
    /// Output form [default: text]
    #[arg(long, value_enum, env = "LSPGATE_FORMAT")]
    pub format: Option<Format>,
    /// How long a cold server may take to start and finish its initial analysis [default: 60s]
    #[arg(long, value_name = "DUR", env = "LSPGATE_STARTUP_TIMEOUT")]
    pub startup_timeout: Option<String>,
    /// Primary wait, for the edited files' fresh diagnostics [default: 5s]
    #[arg(long, value_name = "DUR", env = "LSPGATE_TIMEOUT")]
    pub timeout: Option<String>,
    /// Cross-file wait, after the primary wait, for other files' diagnostics; it ends when the servers say they are done [default: 60s]
    #[arg(long, value_name = "DUR", env = "LSPGATE_CROSS_FILE_TIMEOUT")]
    pub cross_file_timeout: Option<String>,
    /// Report every diagnostic of the touched and dependent files, not only new ones.
    #[arg(long)]
    pub all: bool,
    /// Exit 1 when a new diagnostic at or above this severity exists [default: error]
    #[arg(long, value_enum, env = "LSPGATE_FAIL_ON")]
    pub fail_on: Option<FailOn>,
    /// List diagnostics at or above this severity, and always those at --fail-on
    /// (`warning` hides infos and hints) [default: hint]
    #[arg(long, value_enum, env = "LSPGATE_SEVERITY")]
    pub severity: Option<Severity>,
    /// Never touch the disk: the servers see the new text in memory only.
    #[arg(long)]
    pub dry_run: bool,
    /// Apply the edit only if it introduces no diagnostic at --fail-on.
    #[arg(long)]
    pub reject: bool,
    /// Run the servers inside this process and stop them at exit.
    #[arg(long)]
    pub no_daemon: bool,
    /// Cap per block; the rest is counted in a `... and N more` line [default: 20]
    #[arg(long, value_name = "N", env = "LSPGATE_MAX_ENTRIES")]
    pub max_entries: Option<usize>,
    /// Show no progress line on stderr while waiting.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]
    #[arg(long, value_enum, env = "LSPGATE_COLOR")]
    pub color: Option<ColorChoice>,
}
