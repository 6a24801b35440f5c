//! The command line: clap definitions only. Everything here is what was typed;
//! `model::Options` turns it (with the environment and the config files) into the
//! settings a run uses.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use crate::model::{ColorChoice, FailOn, Format, LogLevel, ReportArgs, Severity};

/// Apply an edit, let the project's language servers check it, and report the new
/// diagnostics of the edited files and of the files the edit broke.
#[derive(Debug, Parser)]
#[command(
    name = "lspgate",
    version,
    about,
    long_about = None,
    max_term_width = 100,
    after_long_help = EXIT_STATUS
)]
pub struct Cli {
    /// Run as if lspgate had been started in DIR.
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// The workspace: every written path must lie inside it [default: git top level, else DIR]
    #[arg(long, global = true, value_name = "DIR", env = "LSPGATE_ROOT")]
    pub root: Option<PathBuf>,

    /// Run server commands that the project's .lspgate.toml introduces or changes.
    #[arg(long, global = true)]
    pub trust_project: bool,

    #[command(subcommand)]
    pub command: Command,
}

/// The exit statuses of the reporting commands (docs/SPEC.md section 4), for `--help` and the
/// man page.
const EXIT_STATUS: &str = "\
Exit status (write, edit, patch, check):

0  done; no new diagnostic at or above --fail-on

1  done; new diagnostics at or above --fail-on (the edit is applied, unless --dry-run or --reject)

2  bad input, or a run the history could not record before it started; nothing was written

3  no new diagnostic, but the check is incomplete (a server missing, failed or too slow, a file \
not shown to the servers, a server turned off or not run in an untrusted workspace); the edit is applied

4  the edit was partly written: a write failed after some files had changed; the message names \
the files that changed and those that did not

When several apply, the first of 4, 2, 1, 3, 0 wins. `history --last` is the gate: it \
answers for the files on disk, 1 while an error a run introduced is not seen fixed by a later \
run that checked its file, 3 for a run that never recorded its outcome.

The contract: docs/SPEC.md in lspgate's source; the details: its README.";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write PATH (new content from --content, else stdin) and report.
    Write {
        /// The file to write, created if missing.
        path: PathBuf,
        /// The new content; read from stdin when absent.
        #[arg(long)]
        content: Option<String>,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Replace --old by --new in PATH and report.
    Edit {
        /// The file to edit.
        path: PathBuf,
        /// The exact text to replace; it must occur once unless --replace-all.
        #[arg(long, allow_hyphen_values = true)]
        old: String,
        /// The replacement text.
        #[arg(long, allow_hyphen_values = true)]
        new: String,
        /// Replace every occurrence of --old.
        #[arg(long)]
        replace_all: bool,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Apply a unified diff (git or plain, several files) and report.
    Patch {
        /// The patch file; `-` or absent reads stdin.
        patch: Option<PathBuf>,
        /// Strip N leading components from the paths in the patch, as `git apply -p`.
        #[arg(short = 'p', value_name = "N", default_value_t = 1)]
        strip: usize,
        /// Apply the patch in reverse, as `git apply -R`: undo a patch applied before.
        #[arg(short = 'R', long)]
        reverse: bool,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Report on files without editing them.
    Check {
        /// The files to check.
        paths: Vec<PathBuf>,
        /// Check the staged content of the git index (not the working tree), counting as
        /// new only what it changes from HEAD.
        #[arg(long, conflicts_with_all = ["paths", "patch"])]
        staged: bool,
        /// Check what changed on disk since lspgate last looked (the last `check
        /// --changed` or written edit here; the first time, the git index), counting as
        /// new only what that change introduced, in the changed files and the files it
        /// broke. For harnesses that write files themselves: run it after each write.
        #[arg(long, conflicts_with_all = ["paths", "patch", "staged"])]
        changed: bool,
        /// Check the files an applied diff touches, counting as new only what it introduced.
        #[arg(long, value_name = "FILE|-", conflicts_with = "paths")]
        patch: Option<PathBuf>,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Store the diagnostics of the tree as it is, for later cold runs: a run whose
    /// before tree has a stored baseline has its servers analyse the project once,
    /// after the edit (a CI cache keyed on the base commit holds one). For the servers
    /// that analyse or check their whole workspace (pyright, basedpyright, gopls,
    /// rust-analyzer) and the TypeScript servers and clangd (every file of the
    /// project asked about); always without a daemon.
    Baseline {
        #[command(flatten)]
        report: ReportArgs,
    },
    /// List the known servers, which are installed, and the files they cover.
    Servers {
        /// Explain which server would handle this file, and why.
        file: Option<PathBuf>,
        /// Output form.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// List past runs of this workspace, show one, or gate on the last.
    History {
        /// Show this run and its diagnostics.
        run: Option<i64>,
        /// Show the most recent run and the gate; exit 1 while an error a run introduced
        /// is not seen fixed (or the last run left one), 4 when the last edit was partly
        /// written, 3 when a run was incomplete, 2 when no run is recorded.
        #[arg(long, conflicts_with = "run")]
        last: bool,
        /// How many runs to list, newest first.
        #[arg(long, value_name = "N", default_value_t = 20)]
        limit: usize,
        /// Output form.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Start, stop or inspect the warm daemon that keeps this workspace's servers running.
    Daemon {
        #[command(subcommand)]
        action: DaemonAction,
    },
    /// Print the diagnostics the warm servers hold now, for every file or for PATH.
    ///
    /// Asks this workspace's running daemon and starts none: with no daemon running it
    /// prints nothing (`[]` with --format json), says "no daemon running for WORKSPACE" on
    /// stderr and exits 0. Files whose diagnostics are empty are listed in JSON only when
    /// a server has them open. Ranges in JSON are 0-based, as LSP sends them.
    Diagnostics {
        /// Only this file, or the files under this directory.
        path: Option<PathBuf>,
        /// Output form: diagnostic lines as in the report, or a JSON list of
        /// {uri, diagnostics: [{message, severity, range, source, code}]}.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print the servers' recent log messages (window/logMessage; the daemon keeps the
    /// last 100 of each server).
    ///
    /// Asks this workspace's running daemon and starts none: with no daemon running it
    /// prints nothing (`[]` with --format json), says so on stderr and exits 0.
    Logs {
        /// Only the last N messages of each server.
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Only messages at this level or more severe.
        #[arg(long, value_enum)]
        level: Option<LogLevel>,
        /// Output form.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print the messages the servers showed the user (window/showMessage; the daemon
    /// keeps the last 50 of each server).
    ///
    /// Asks this workspace's running daemon and starts none: with no daemon running it
    /// prints nothing (`[]` with --format json), says so on stderr and exits 0.
    Messages {
        /// Only the last N messages of each server.
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Output form.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Serve the commands as the tools of an MCP (Model Context Protocol) server on stdio.
    ///
    /// Tools: write, edit, patch, check, diagnostics, logs, messages, history. MCP's stdio
    /// transport: newline-delimited JSON-RPC 2.0 on stdin and stdout, revisions
    /// 2024-11-05 to 2025-11-25, negotiated in `initialize`. Runs go through the workspace's daemon as
    /// the commands' do (with --no-daemon, each call starts its servers and stops them).
    /// The options apply to every call, and a call's `dry_run`, `reject` and `all` can
    /// turn those on, as flags do; --format, --color and --quiet have no effect (a result
    /// holds the text report, uncoloured, and the JSON one). Closing stdin ends the
    /// server and the language servers it runs. Errors and notes go to stderr.
    #[command(
        mut_arg("format", |a| a.hide(true)),
        mut_arg("color", |a| a.hide(true)),
        mut_arg("quiet", |a| a.hide(true))
    )]
    Mcp {
        #[command(flatten)]
        report: ReportArgs,
    },
}

impl Command {
    /// The subcommand's name, as typed and as the history records it.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Write { .. } => "write",
            Command::Edit { .. } => "edit",
            Command::Patch { .. } => "patch",
            Command::Check { .. } => "check",
            Command::Baseline { .. } => "baseline",
            Command::Servers { .. } => "servers",
            Command::History { .. } => "history",
            Command::Daemon { .. } => "daemon",
            Command::Diagnostics { .. } => "diagnostics",
            Command::Logs { .. } => "logs",
            Command::Messages { .. } => "messages",
            Command::Mcp { .. } => "mcp",
        }
    }
}

/// What `daemon` does.
#[derive(Debug, Clone, Subcommand)]
pub enum DaemonAction {
    /// Start the daemon unless it is running.
    Start,
    /// Stop the daemon and its servers.
    Stop,
    /// Show the daemon's pid, uptime, memory and servers; exit 1 when none is running.
    Status {
        /// Every daemon of this user, whatever its workspace (JSON: a list).
        #[arg(long)]
        all: bool,
        /// Output form.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Stop the daemon, then start a new one.
    Restart,
}

/// The clap command, for completions, man pages and tests.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}
