//! What was typed, validated once: the run directory (`-C`) and the workspace
//! (`--root`, else the git top level) resolved, a patch or `--content` read, the
//! command turned into an [`Action`] the commands layer takes as it is. Everything
//! downstream takes the [`Invocation`] and never looks at the raw arguments again
//! (ripgrep's low-args → high-args step).

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::cli::{Cli, Command, DaemonAction};
use crate::error::{Error, Result};
use crate::model::{Format, ReportArgs, Reporting};
use crate::{history, workspace};

/// A command line, validated.
pub struct Invocation {
    /// Where lspgate runs (`-C`), canonical.
    pub run_dir: PathBuf,
    /// The workspace: `--root`, else the git top level of the run directory, else it.
    pub workspace: PathBuf,
    /// `--trust-project`.
    pub trust_project: bool,
    /// The command and its arguments as the history records them.
    pub record: history::Invocation,
    pub action: Action,
}

/// What to do.
pub enum Action {
    /// `write`, `edit`, `patch`, `check`.
    Report {
        request: Reporting,
        args: ReportArgs,
    },
    Mcp {
        args: ReportArgs,
    },
    History {
        run: Option<i64>,
        last: bool,
        limit: usize,
        format: Format,
    },
    Daemon(DaemonAction),
    Diagnostics {
        /// A file or a directory, absolute.
        path: Option<PathBuf>,
        format: Format,
    },
    /// `logs` (with its LSP message type, `None` for every level) and `messages`.
    Ring {
        messages: bool,
        limit: Option<usize>,
        level: Option<i32>,
        format: Format,
    },
    Servers {
        file: Option<PathBuf>,
        format: Format,
    },
}

/// Validate `cli` (parsed from `raw_args`).
pub fn validate(cli: Cli, raw_args: &[OsString]) -> Result<Invocation> {
    let record = history::Invocation::start(cli.command.name(), raw_args);
    let cwd = std::env::current_dir()?;
    let run_dir = match &cli.dir {
        Some(d) => cwd.join(d),
        None => cwd,
    };
    let run_dir = run_dir
        .canonicalize()
        .map_err(|e| Error::bad_input(format!("-C {}: {e}", run_dir.display())))?;
    let workspace = workspace::find_workspace(&run_dir, cli.root.as_deref())
        .map_err(|e| Error::bad_input(format!("--root: {e}")))?;
    let action = action(cli.command, &run_dir)?;
    Ok(Invocation {
        run_dir,
        workspace,
        trust_project: cli.trust_project,
        record,
        action,
    })
}

fn action(command: Command, run_dir: &Path) -> Result<Action> {
    let report = |request, args| Ok(Action::Report { request, args });
    match command {
        Command::Write {
            path,
            content,
            report: args,
        } => {
            let content = match content {
                Some(c) => c.into_bytes(),
                None => read_stdin()?,
            };
            report(Reporting::Write { path, content }, args)
        }
        Command::Edit {
            path,
            old,
            new,
            replace_all,
            report: args,
        } => report(
            Reporting::Edit {
                path,
                old,
                new,
                replace_all,
            },
            args,
        ),
        Command::Patch {
            patch,
            strip,
            reverse,
            report: args,
        } => {
            let patch = read_patch(patch.as_deref(), run_dir)?;
            let request = Reporting::Patch {
                patch,
                strip,
                reverse,
            };
            report(request, args)
        }
        Command::Baseline { report: args } => report(Reporting::Baseline, args),
        Command::Check {
            paths,
            staged,
            changed,
            patch,
            report: args,
        } => {
            let patch = match patch {
                Some(p) => Some(read_patch(Some(&p), run_dir)?),
                None => None,
            };
            // A file to check that is not there is bad input, said here once, before
            // any daemon is asked.
            if let Some(missing) = paths.iter().find(|p| !run_dir.join(p).exists()) {
                return Err(Error::bad_input(format!(
                    "{}: no such file",
                    missing.display()
                )));
            }
            let request = Reporting::Check {
                paths,
                staged,
                changed,
                patch,
            };
            report(request, args)
        }
        Command::Mcp { report: args } => Ok(Action::Mcp { args }),
        Command::History {
            run,
            last,
            limit,
            format,
        } => Ok(Action::History {
            run,
            last,
            limit,
            format,
        }),
        Command::Daemon { action } => Ok(Action::Daemon(action)),
        Command::Diagnostics { path, format } => {
            // A file or a directory; one that no longer exists (deleted, its
            // diagnostics maybe still held) is taken as written.
            let path = path.map(|p| {
                let joined = run_dir.join(p);
                joined.canonicalize().unwrap_or(joined)
            });
            Ok(Action::Diagnostics { path, format })
        }
        Command::Logs {
            limit,
            level,
            format,
        } => Ok(Action::Ring {
            messages: false,
            limit,
            level: level.map(crate::model::LogLevel::message_type),
            format,
        }),
        Command::Messages { limit, format } => Ok(Action::Ring {
            messages: true,
            limit,
            level: None,
            format,
        }),
        Command::Servers { file, format } => Ok(Action::Servers { file, format }),
    }
}

/// A patch from a file (relative to the run directory), or stdin for `-` or none.
fn read_patch(patch: Option<&Path>, run_dir: &Path) -> Result<Vec<u8>> {
    match patch {
        None => read_stdin(),
        Some(p) if p == Path::new("-") => read_stdin(),
        Some(p) => std::fs::read(run_dir.join(p))
            .map_err(|e| Error::bad_input(format!("{}: {e}", p.display()))),
    }
}

fn read_stdin() -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::io::stdin()
        .read_to_end(&mut buf)
        .map_err(|e| Error::bad_input(format!("stdin: {e}")))?;
    Ok(buf)
}
