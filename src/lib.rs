//! lspgate applies an edit, lets the project's language servers check the result,
//! waits until they have reported on the edited files and on the files the edit
//! broke, and reports the new diagnostics.
//!
//! Data flows one way: `cli` (what was typed) → `config` (settings and the server
//! table) → `edit` (the plan, in memory) → `check` (servers from `lsp`, the waits
//! of `wait`, the dependents of `dependents`) → `diff` (before and after) →
//! `report` (the only writer to stdout). `mcp` serves the same runs as the tools of an
//! MCP server; its transport's writer is the one other place that writes to stdout.

pub mod check;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod dependents;
pub mod diff;
pub mod doctor;
pub mod edit;
pub mod exit;
pub mod history;
pub mod lsp;
pub mod mcp;
pub mod model;
pub mod paths;

pub mod report;
pub mod servers;
pub mod staged;
pub mod typescript;
pub mod wait;
pub mod workspace;

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;

use cli::{Cli, Command, ReportArgs};

/// How long servers get to shut down at the end of a one-shot run, at most.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// ... and at least, when the run has already spent its timeouts.
const SHUTDOWN_GRACE_MIN: Duration = Duration::from_millis(500);

/// Run lspgate with these arguments; returns the exit status.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    if let Some(code) = daemon::serve_if_asked(&args) {
        return code;
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit::OK
                }
                _ => exit::BAD_INPUT,
            };
        }
    };
    match dispatch(cli, &args) {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return exit::OK;
            }
            print_error(&format!("{e:#}"));
            exit::BAD_INPUT
        }
    }
}

/// Errors go to stderr from here only, one line each, prefixed with the program.
#[allow(clippy::print_stderr)]
pub(crate) fn print_error(message: &str) {
    eprintln!("lspgate: {message}");
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn dispatch(cli: Cli, raw_args: &[OsString]) -> anyhow::Result<i32> {
    let invocation = history::Invocation::start(cli.command.name(), raw_args);
    let cwd = std::env::current_dir()?;
    let run_dir = match &cli.dir {
        Some(d) => cwd.join(d),
        None => cwd,
    };
    let run_dir = run_dir
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("-C {}: {e}", run_dir.display()))?;
    let workspace = workspace::find_workspace(&run_dir, cli.root.as_deref())
        .map_err(|e| anyhow::anyhow!("--root: {e}"))?;

    let setting = |report| RunSetting {
        workspace: &workspace,
        run_dir: &run_dir,
        trust_project: cli.trust_project,
        args: report,
    };
    match cli.command {
        Command::Write {
            path,
            content,
            report,
        } => {
            let content = match content {
                Some(c) => c.into_bytes(),
                None => read_stdin()?,
            };
            let request = Reporting::Write { path, content };
            report_run(&setting(&report), &invocation, request, report.quiet)
        }
        Command::Edit {
            path,
            old,
            new,
            replace_all,
            report,
        } => {
            let request = Reporting::Edit {
                path,
                old,
                new,
                replace_all,
            };
            report_run(&setting(&report), &invocation, request, report.quiet)
        }
        Command::Patch {
            patch,
            strip,
            reverse,
            report,
        } => {
            let patch = read_patch(patch.as_deref(), &run_dir)?;
            let request = Reporting::Patch {
                patch,
                strip,
                reverse,
            };
            report_run(&setting(&report), &invocation, request, report.quiet)
        }
        Command::Check {
            paths,
            staged,
            patch,
            report,
        } => {
            let patch = match patch {
                Some(p) => Some(read_patch(Some(&p), &run_dir)?),
                None => None,
            };
            let request = Reporting::Check {
                paths,
                staged,
                patch,
            };
            report_run(&setting(&report), &invocation, request, report.quiet)
        }
        Command::Mcp { report } => mcp::serve(&mcp::Setup {
            workspace: workspace.clone(),
            run_dir: run_dir.clone(),
            trust_project: cli.trust_project,
            args: report,
        }),
        Command::History {
            run,
            last,
            limit,
            format,
        } => history::command(&workspace, &run_dir, run, last, limit, format),
        Command::Daemon { action } => daemon::client::command(&action, &workspace),
        Command::Diagnostics { path, format } => {
            // A file or a directory; one that no longer exists (deleted, its
            // diagnostics maybe still held) is taken as written.
            let path = path.map(|p| {
                let joined = run_dir.join(p);
                joined.canonicalize().unwrap_or(joined)
            });
            let query = daemon::protocol::CacheQuery {
                path,
                ..Default::default()
            };
            cache_command(
                &workspace,
                daemon::client::Cache::Diagnostics,
                &query,
                |out, cached| {
                    let styles = report::styles::Styles::for_choice(cli::ColorChoice::Auto);
                    match cached {
                        daemon::client::Cached::Diagnostics(files) => {
                            report::daemon::write_diagnostics(
                                out, &files, &run_dir, format, &styles,
                            )
                        }
                        daemon::client::Cached::Lines(_) => Ok(()),
                    }
                },
                format,
            )
        }
        Command::Logs {
            limit,
            level,
            format,
        } => ring_command(
            &workspace,
            daemon::client::Cache::Logs,
            limit,
            level.map(cli::LogLevel::message_type),
            format,
        ),
        Command::Messages { limit, format } => ring_command(
            &workspace,
            daemon::client::Cache::Messages,
            limit,
            None,
            format,
        ),
        Command::Servers { file, format } => {
            let doctor = doctor::gather(&workspace, &run_dir, cli.trust_project, file.as_deref())?;
            report::servers::print(&doctor, format)?;
            Ok(exit::OK)
        }
    }
}

/// `diagnostics`, `logs` and `messages`: ask the running daemon and print its answer
/// with `write`; with no daemon, say so on stderr and print nothing (an empty list in
/// JSON). Exits 0 either way: an empty cache is not an error.
fn cache_command(
    workspace: &Path,
    what: daemon::client::Cache,
    query: &daemon::protocol::CacheQuery,
    write: impl FnOnce(&mut dyn std::io::Write, daemon::client::Cached) -> std::io::Result<()>,
    format: cli::Format,
) -> anyhow::Result<i32> {
    match daemon::client::query(workspace, what, query)? {
        Some(cached) => report::daemon::print(|out| write(out, cached))?,
        None => {
            print_error(&format!("no daemon running for {}", workspace.display()));
            if format == cli::Format::Json {
                report::daemon::print(|out| writeln!(out, "[]"))?;
            }
        }
    }
    Ok(exit::OK)
}

/// `logs` and `messages`: one of a server's message rings, from the daemon.
fn ring_command(
    workspace: &Path,
    what: daemon::client::Cache,
    limit: Option<usize>,
    level: Option<i32>,
    format: cli::Format,
) -> anyhow::Result<i32> {
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

/// What a reporting command asks for: the CLI's `write`, `edit`, `patch` and `check`,
/// and the `lspgate mcp` tools of the same names. Relative paths resolve against the
/// run directory.
pub enum Reporting {
    Write {
        path: PathBuf,
        content: Vec<u8>,
    },
    Edit {
        path: PathBuf,
        old: String,
        new: String,
        replace_all: bool,
    },
    Patch {
        patch: Vec<u8>,
        strip: usize,
        /// Apply it in reverse (`patch -R`).
        reverse: bool,
    },
    /// `paths` alone, or `staged`, or an applied `patch`.
    Check {
        paths: Vec<PathBuf>,
        staged: bool,
        patch: Option<Vec<u8>>,
    },
}

impl Reporting {
    /// The check's job, planned in memory: nothing is written here.
    fn job(self, workspace: &Path, run_dir: &Path) -> Result<check::Job, edit::EditError> {
        Ok(match self {
            Reporting::Write { path, content } => {
                check::Job::Edit(edit::plan_write(workspace, run_dir, &path, content)?)
            }
            Reporting::Edit {
                path,
                old,
                new,
                replace_all,
            } => check::Job::Edit(edit::plan_replace(
                workspace,
                run_dir,
                &path,
                &old,
                &new,
                replace_all,
            )?),
            Reporting::Patch {
                patch,
                strip,
                reverse,
            } => {
                let patch = if reverse {
                    edit::reverse_patch(&patch)?
                } else {
                    patch
                };
                check::Job::Edit(edit::plan_patch(workspace, run_dir, &patch, strip)?)
            }
            // --staged and --patch show the servers a change in memory (HEAD → index,
            // the working tree with the diff reversed → the working tree).
            Reporting::Check { staged: true, .. } => check::Job::Review(staged::plan(workspace)?),
            Reporting::Check {
                patch: Some(bytes), ..
            } => check::Job::Review(edit::plan_patch_reverse(workspace, run_dir, &bytes, 1)?),
            Reporting::Check { paths, .. } => {
                check::Job::Check(paths.iter().map(|p| run_dir.join(p)).collect())
            }
        })
    }
}

/// Where a reporting run happens and with which options.
pub struct RunSetting<'a> {
    pub workspace: &'a Path,
    pub run_dir: &'a Path,
    /// `--trust-project`.
    pub trust_project: bool,
    pub args: &'a ReportArgs,
}

/// How a reporting run ended, when it was not refused.
pub enum Ran {
    /// The report (recorded in the history), and the options that say how to render it.
    Done {
        report: Box<model::Report>,
        options: model::Options,
    },
    /// The daemon took the run up and stopped answering: why. There is no report, the
    /// edit may have been applied, and the run stays pending (exit status 3).
    Lost(String),
    /// A write failed after changing some files (exit status 4): what changed and
    /// what did not.
    PartlyWritten(String),
}

/// One reporting run, whoever asked for it (the CLI, or an `lspgate mcp` tool): load
/// the configuration, plan the job, run it through the workspace's daemon (or in this
/// process), and record it in the history. Rendering is the caller's.
///
/// `watcher` follows the run while it waits (the status line on stderr, an MCP
/// client's progress). An `Err` is bad input (exit status 2): nothing was written, and
/// its `{:#}` is the one-line message the CLI prints.
pub fn reporting_run(
    setting: &RunSetting<'_>,
    invocation: &history::Invocation,
    request: Reporting,
    mut watcher: Option<Box<dyn report::progress::Watcher>>,
) -> anyhow::Result<Ran> {
    let workspace = setting.workspace;
    let loaded = config::load(workspace, setting.trust_project)?;
    for note in &loaded.notes {
        print_error(note);
    }
    let options = config::resolve_options(setting.args, &loaded.options)?;
    let job = request.job(workspace, setting.run_dir)?;
    let ctx = check::Context {
        workspace: workspace.to_path_buf(),
        run_dir: setting.run_dir.to_path_buf(),
        servers: loaded.servers,
        options: options.clone(),
    };
    // Recorded before anything may change the disk: a run that is then killed, or
    // that cannot record its outcome, fails the gate instead of passing it.
    let pending = history::begin(workspace, setting.run_dir, invocation).map_err(|e| {
        anyhow::anyhow!(
            "history: {e}; this run was not made (the gate records every run before it \
             changes anything), nothing was written"
        )
    })?;
    let report = if options.no_daemon {
        run_in_process(&ctx, job, watcher.take())
    } else {
        match daemon::client::run(&ctx, &job, watcher.as_mut(), setting.trust_project) {
            daemon::client::Served::Report(report) => Ok(report),
            daemon::client::Served::Failed(e) => Err(e),
            daemon::client::Served::Unreachable(why) => {
                print_error(&format!("note: {why}; running the servers in this process"));
                run_in_process(&ctx, job, watcher.take())
            }
            // The edit may be applied: the run stays pending, and the gate says 3.
            daemon::client::Served::Lost(why) => return Ok(Ran::Lost(why)),
        }
    };
    // Done watching (a status line is cleared) before anything else is said.
    drop(watcher.take());
    let report = match report {
        Ok(report) => report,
        Err(e) if e.exit_code() == exit::PARTIAL => {
            pending.partly_written(invocation, &e.summary());
            return Ok(Ran::PartlyWritten(e.summary()));
        }
        Err(e) => {
            pending.discard();
            return Err(e.into());
        }
    };
    // Before the caller shows the report: whoever reads a report can gate on it. A slow
    // or broken history costs at most its busy timeout and never fails the run.
    pending.complete(invocation, &report);
    Ok(Ran::Done {
        report: Box::new(report),
        options,
    })
}

/// The CLI's reporting commands: run, then print the report.
fn report_run(
    setting: &RunSetting<'_>,
    invocation: &history::Invocation,
    request: Reporting,
    quiet: bool,
) -> anyhow::Result<i32> {
    let line = report::progress::StatusLine::for_stderr(quiet)
        .map(|line| Box::new(line) as Box<dyn report::progress::Watcher>);
    match reporting_run(setting, invocation, request, line)? {
        Ran::Lost(why) => {
            print_error(&why);
            Ok(exit::INCOMPLETE)
        }
        Ran::PartlyWritten(what) => {
            print_error(&what);
            Ok(exit::PARTIAL)
        }
        Ran::Done { report, options } => {
            let render = report::RenderOptions {
                format: options.format,
                all: options.all,
                max_entries: options.max_entries,
                styles: if report::styles::should_colorize(options.color) {
                    report::styles::Styles::colorized()
                } else {
                    report::styles::Styles::default()
                },
            };
            report::print(&report, &render)?;
            Ok(report.exit_code)
        }
    }
}

/// The one-shot path: a fresh pool, stopped before returning.
fn run_in_process(
    ctx: &check::Context,
    job: check::Job,
    watcher: Option<Box<dyn report::progress::Watcher>>,
) -> Result<model::Report, edit::EditError> {
    let started = std::time::Instant::now();
    let mut pool = lsp::Pool::new();
    if let Some(mut watcher) = watcher {
        pool.observer = Some(Box::new(move |servers| {
            let pids: Vec<u32> = servers
                .iter()
                .filter(|s| !s.is_dead())
                .map(lsp::Server::pid)
                .collect();
            watcher.servers(&pids);
            watcher.progress(&report::progress::busy(servers));
        }));
    }
    let result = check::run(&mut pool, ctx, job);
    // Dropping the observer clears the status line before the report prints.
    pool.observer = None;
    // A hung or flooding server must cost at most the timeouts (SPEC section 2), so
    // the shutdown grace comes out of what the run left of them: a run that ended
    // early still gives its servers the full grace, one that spent its timeouts on a
    // server that stopped answering gives it only the minimum before killing it.
    let opts = &ctx.options;
    let budget = opts.startup_timeout + opts.timeout + opts.cross_file_timeout;
    let grace = budget
        .saturating_sub(started.elapsed())
        .clamp(SHUTDOWN_GRACE_MIN, SHUTDOWN_GRACE);
    pool.shutdown_all(grace);
    result
}

/// A patch from a file (relative to the run directory), or stdin for `-` or none.
fn read_patch(patch: Option<&Path>, run_dir: &Path) -> anyhow::Result<Vec<u8>> {
    match patch {
        None => read_stdin(),
        Some(p) if p == Path::new("-") => read_stdin(),
        Some(p) => {
            std::fs::read(run_dir.join(p)).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))
        }
    }
}

fn read_stdin() -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::io::stdin()
        .read_to_end(&mut buf)
        .map_err(|e| anyhow::anyhow!("stdin: {e}"))?;
    Ok(buf)
}
