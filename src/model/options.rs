//! The options of a reporting run as plain data: the value types the command line,
//! the environment and the config files share, and [`Options`], every value decided
//! (the invocation step resolves them; the check and the renderers read them).

use std::time::Duration;

use clap::ValueEnum;

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
