//! lspgate applies an edit, lets the project's language servers check the result,
//! waits until they have reported on the edited files and on the files the edit
//! broke, and reports the new diagnostics.
//!
//! Data flows one way: `cli` (what was typed) → `config` (settings, over the
//! server table of `servers`) → `edit` (the plan, in memory) → `check` (servers
//! from `lsp`, the waits of `wait`, the dependents of `dependents`) → `diff`
//! (before and after) → `report` (the only writer to stdout). `mcp` serves the same
//! runs as the tools of an MCP server; its transport's writer is the one other place
//! that writes to stdout.

pub mod baseline;
pub(crate) mod c_source;
pub(crate) mod changed;
pub(crate) mod check;
pub mod cli;
pub(crate) mod commands;
pub mod config;
pub mod daemon;
pub mod dependents;
pub(crate) mod diff;
pub(crate) mod doctor;
pub mod edit;
pub(crate) mod error;
pub(crate) mod exit;
pub(crate) mod history;
pub(crate) mod invocation;
pub(crate) mod json_prefix;
pub mod lsp;
pub mod model;
pub(crate) mod paths;
pub(crate) mod regular;
pub(crate) mod report;
pub mod servers;
pub(crate) mod staged;
pub(crate) mod uri;
pub(crate) mod wait;
pub(crate) mod workspace;

use std::ffi::OsString;

use clap::Parser;

use cli::Cli;

/// Run lspgate with these arguments; returns the exit status.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    if let Some(outcome) = daemon::serve_if_asked(&args) {
        return exit::status(outcome);
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit::status(exit::Outcome::Clean)
                }
                _ => exit::status(exit::Outcome::BadInput),
            };
        }
    };
    let outcome = match invocation::validate(cli, &args).and_then(commands::dispatch) {
        Ok(outcome) => outcome,
        Err(error::Error::BrokenPipe) => exit::Outcome::Clean,
        Err(e) => {
            print_error(&e.to_string());
            e.outcome()
        }
    };
    exit::status(outcome)
}

/// Errors go to stderr from here only, one line each, prefixed with the program. Names
/// in messages are quoted (`paths::quote`); no other control character gets through.
#[allow(clippy::print_stderr)]
pub(crate) fn print_error(message: &str) {
    eprintln!("lspgate: {}", paths::escape_controls(message));
}
