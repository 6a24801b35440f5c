//! `diagnostics`, `logs` and `messages`: what the workspace's warm daemon holds.

use std::path::Path;

use crate::model::Format;
use crate::{daemon, exit, print_error, report};

/// `diagnostics`, `logs` and `messages`: ask the running daemon and print its answer
/// with `write`; with no daemon, say so on stderr and print nothing (an empty list in
/// JSON). Exits 0 either way: an empty cache is not an error.
pub(crate) fn cache_command(
    workspace: &Path,
    what: daemon::client::Cache,
    query: &daemon::protocol::CacheQuery,
    write: impl FnOnce(&mut dyn std::io::Write, daemon::client::Cached) -> std::io::Result<()>,
    format: Format,
) -> anyhow::Result<exit::Outcome> {
    match daemon::client::query(workspace, what, query)? {
        Some(cached) => report::daemon::print(|out| write(out, cached))?,
        None => {
            print_error(&format!("no daemon running for {}", workspace.display()));
            if format == Format::Json {
                report::daemon::print(|out| writeln!(out, "[]"))?;
            }
        }
    }
    Ok(exit::Outcome::Clean)
}

/// `logs` and `messages`: one of a server's message rings, from the daemon.
pub(crate) fn ring_command(
    workspace: &Path,
    what: daemon::client::Cache,
    limit: Option<usize>,
    level: Option<i32>,
    format: Format,
) -> anyhow::Result<exit::Outcome> {
    let query = daemon::protocol::CacheQuery {
        limit,
        level,
        ..Default::default()
    };
    cache_command(
        workspace,
        what,
        &query,
        |out, cached| match cached {
            daemon::client::Cached::Lines(lines) => {
                report::daemon::write_lines(out, &lines, workspace, format)
            }
            daemon::client::Cached::Diagnostics(_) => Ok(()),
        },
        format,
    )
}
