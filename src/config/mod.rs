//! Configuration: the user's config file and the project's `.lspgate.toml`, layered
//! over the built-in server table (built-in < user < project), and the options of a
//! run (flag > env > file > default). One job per file:
//! - `files`: reading and validating a file (TOML, kebab-case keys, unknown keys
//!   are errors that name the key and the file), durations;
//! - `layers`: layering the files over the table, and the trust rule (which keys an
//!   untrusted project may set; the allow-lists themselves are each server family's,
//!   in `servers`);
//! - `options`: resolving `ReportArgs` into `Options`;
//! - `select`: choosing the servers for a file;
//! - `which`: looking a command up on `PATH`.
//!
//! Where the user's config file is comes from `paths::dirs`. Nothing here starts a
//! server or prints: ignored keys come back as `notes` for the caller to show.

mod files;
mod layers;
mod options;
mod select;
mod which;

#[cfg(test)]
mod tests;

pub use files::{ConfigError, FileOptions, parse_duration};
pub use layers::{Loaded, check_commands, load, trust_from_env};
pub use options::resolve_options;
pub use select::{candidates, has_config, server_for, servers_for, stopped_check, stopped_linters};
pub use which::{not_found, which};

/// The project's config file, at the top of the workspace.
pub const PROJECT_FILE: &str = ".lspgate.toml";
