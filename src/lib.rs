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
pub mod c_source;
pub mod changed;
pub mod check;
pub mod cli;
pub mod commands;
pub mod config;
pub mod daemon;
pub mod dependents;
pub mod diff;
pub mod doctor;
pub mod edit;
pub mod error;
pub mod exit;
pub mod history;
pub mod invocation;
pub mod json_prefix;
pub mod lsp;
pub mod model;
pub mod paths;
pub mod regular;
pub mod report;
pub mod servers;
pub mod staged;
pub mod uri;
pub mod wait;
pub mod workspace;

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
