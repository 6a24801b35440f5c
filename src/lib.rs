//! lspgate applies an edit, lets the project's language servers check the result,
//! waits until they have reported on the edited files and on the files the edit
//! broke, and reports the new diagnostics.
//!
//! Data flows one way: `cli` (what was typed) → `config` (settings and the server
//! table) → `edit` (the plan, in memory) → `check` (servers from `lsp`, the waits
//! of `wait`, the dependents of `dependents`) → `diff` (before and after) →
//! `report` (the only writer to stdout).

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
pub mod report;
pub mod servers;
pub mod staged;
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
fn print_error(message: &str) {
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
            let build = |ws: &Path| edit::plan_write(ws, &run_dir, &path, content);
            report_run(
                &cli_trust(cli.trust_project),
                &workspace,
                &run_dir,
                &report,
                &invocation,
                |ws| Ok(check::Job::Edit(build(ws)?)),
            )
        }
        Command::Edit {
            path,
            old,
            new,
            replace_all,
            report,
        } => report_run(
            &cli_trust(cli.trust_project),
            &workspace,
            &run_dir,
            &report,
            &invocation,
            |ws| {
                Ok(check::Job::Edit(edit::plan_replace(
                    ws,
                    &run_dir,
                    &path,
                    &old,
                    &new,
                    replace_all,
                )?))
            },
        ),
        Command::Patch {
            patch,
            strip,
            report,
        } => {
            let bytes = read_patch(patch.as_deref(), &run_dir)?;
            report_run(
                &cli_trust(cli.trust_project),
                &workspace,
                &run_dir,
                &report,
                &invocation,
                |ws| {
                    Ok(check::Job::Edit(edit::plan_patch(
                        ws, &run_dir, &bytes, strip,
                    )?))
                },
            )
        }
        Command::Check {
            paths,
            staged,
            patch,
            report,
        } => {
            // --staged and --patch show the servers a change in memory (HEAD → index,
            // the working tree with the diff reversed → the working tree).
            let patch = match patch {
                Some(p) => Some(read_patch(Some(&p), &run_dir)?),
                None => None,
            };
            let paths: Vec<PathBuf> = paths.iter().map(|p| run_dir.join(p)).collect();
            report_run(
                &cli_trust(cli.trust_project),
                &workspace,
                &run_dir,
                &report,
                &invocation,
                |ws| match (staged, patch) {
                    (true, _) => Ok(check::Job::Review(staged::plan(ws)?)),
                    (false, Some(bytes)) => Ok(check::Job::Review(edit::plan_patch_reverse(
                        ws, &run_dir, &bytes, 1,
                    )?)),
                    (false, None) => Ok(check::Job::Check(paths)),
                },
            )
        }
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

struct Trust(bool);

fn cli_trust(flag: bool) -> Trust {
    Trust(flag)
}

/// Load the configuration, build the job, run the check on a fresh pool, print.
fn report_run(
    trust: &Trust,
    workspace: &Path,
    run_dir: &Path,
    args: &ReportArgs,
    invocation: &history::Invocation,
    job: impl FnOnce(&Path) -> Result<check::Job, edit::EditError>,
) -> anyhow::Result<i32> {
    let loaded = config::load(workspace, trust.0)?;
    for note in &loaded.notes {
        print_error(note);
    }
    let options = config::resolve_options(args, &loaded.options)?;
    let job = job(workspace)?;
    let ctx = check::Context {
        workspace: workspace.to_path_buf(),
        run_dir: run_dir.to_path_buf(),
        servers: loaded.servers,
        options: options.clone(),
    };
    // Recorded before anything may change the disk: a run that is then killed, or
    // that cannot record its outcome, fails the gate instead of passing it.
    let pending = history::begin(workspace, run_dir, invocation).map_err(|e| {
        anyhow::anyhow!(
            "history: {e}; this run was not made (the gate records every run before it \
             changes anything), nothing was written"
        )
    })?;
    let report = if options.no_daemon {
        run_in_process(&ctx, job, args.quiet)
    } else {
        match daemon::client::run(&ctx, &job, args.quiet, trust.0) {
            daemon::client::Served::Report(report) => Ok(report),
            daemon::client::Served::Failed(e) => Err(e),
            daemon::client::Served::Unreachable(why) => {
                print_error(&format!("note: {why}; running the servers in this process"));
                run_in_process(&ctx, job, args.quiet)
            }
            daemon::client::Served::Lost(why) => {
                // The edit may be applied: the run stays pending, and the gate says 3.
                print_error(&why);
                return Ok(exit::INCOMPLETE);
            }
        }
    };
    let report = match report {
        Ok(report) => report,
        Err(e) if e.exit_code() == exit::PARTIAL => {
            pending.partly_written(invocation, &e.summary());
            print_error(&e.summary());
            return Ok(exit::PARTIAL);
        }
        Err(e) => {
            pending.discard();
            return Err(e.into());
        }
    };
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
    // After printing: a slow or broken history never delays or fails the report.
    pending.complete(invocation, &report);
    Ok(report.exit_code)
}

/// The one-shot path: a fresh pool, stopped before returning.
fn run_in_process(
    ctx: &check::Context,
    job: check::Job,
    quiet: bool,
) -> Result<report::Report, edit::EditError> {
    let started = std::time::Instant::now();
    let mut pool = lsp::Pool::new();
    if let Some(mut line) = report::progress::StatusLine::for_stderr(quiet) {
        pool.observer = Some(Box::new(move |servers| line.update(servers)));
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
