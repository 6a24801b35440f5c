//! The reporting commands (`write`, `edit`, `patch`, `check`, and `lspgate mcp`'s
//! tools of the same names): load the configuration, plan the job, run the check
//! through the workspace's daemon or in this process, record it in the history, and
//! (for the CLI) print the report. One function for every front, so none forks the
//! check.

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Failure};
use crate::exit::Outcome;
use crate::model::{ReportArgs, Reporting};
use crate::{
    changed, check, config, daemon, edit, exit, history, lsp, model, print_error, report, staged,
};

/// How long servers get to shut down at the end of a one-shot run, at most.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// ... and at least, when the run has already spent its timeouts.
const SHUTDOWN_GRACE_MIN: Duration = Duration::from_millis(500);

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
    /// The run was made and did not end with a report: lost (the daemon took it up
    /// and stopped answering; the edit may be applied, the run stays pending) or
    /// partly written (recorded as such). Bad input is the `Err` of [`reporting_run`].
    Failed(Failure),
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
    mut watcher: Option<Box<dyn crate::model::progress::Watcher>>,
) -> anyhow::Result<Ran> {
    let workspace = setting.workspace;
    let loaded = config::load(workspace, setting.trust_project)?;
    for note in &loaded.notes {
        print_error(note);
    }
    let mut options = config::resolve_options(setting.args, &loaded.options)?;
    // A stored baseline is made by a server started for the run alone.
    let is_baseline = matches!(request, Reporting::Baseline);
    options.no_daemon |= is_baseline;
    // What the gate may learn of the tree from this run: not the index's content.
    let seen = match request {
        Reporting::Check { staged: true, .. } => history::Seen::Index,
        _ => history::Seen::Tree,
    };
    let (job, changes) = plan(request, workspace, setting.run_dir, &loaded.servers)?;
    let loaded_servers = loaded.servers.clone();
    let ctx = check::Context {
        workspace: workspace.to_path_buf(),
        run_dir: setting.run_dir.to_path_buf(),
        servers: loaded.servers,
        options: options.clone(),
        one_run: false,
        makes_baseline: is_baseline,
        views: changes
            .as_ref()
            .map_or(check::Views::None, |c| check::Views::Keep { named: c.seen }),
        seen: None,
        opened_unheard: Vec::new(),
    };
    // Recorded before anything may change the disk: a run that is then killed, or
    // that cannot record its outcome, fails the gate instead of passing it.
    let pending = history::begin(workspace, setting.run_dir, invocation).map_err(|e| {
        anyhow::anyhow!(
            "history: {e}; this run was not made (the gate records every run before it \
             changes anything), nothing was written"
        )
    })?;
    // A review of nothing (`check --changed` with nothing changed) asks no server:
    // answered here, with no daemon to wake or start. Unless its baseline names no
    // view of the daemon's yet: then the daemon ends an empty run on that tree, and
    // the next change's before view is the servers' word on it (`lsp::SeenView`).
    let nothing = matches!(&job, check::Job::Review(plan) if plan.changes.is_empty())
        && changes
            .as_ref()
            .is_none_or(|c| c.seen.is_some() || c.since == changed::Since::Nothing);
    let in_process =
        |job, watcher| run_in_process(&ctx, job, watcher).map_err(|e| Failure::from(&e));
    let report = if options.no_daemon || nothing {
        in_process(job, watcher.take())
    } else {
        match daemon::client::run(&ctx, &job, watcher.as_mut(), setting.trust_project) {
            daemon::client::Served::Report(report) => Ok(report),
            daemon::client::Served::Failed(failure) => Err(failure),
            daemon::client::Served::Unreachable(why) => {
                print_error(&format!("note: {why}; running the servers in this process"));
                in_process(job, watcher.take())
            }
        }
    };
    // Done watching (a status line is cleared) before anything else is said.
    drop(watcher.take());
    let mut report = match report {
        Ok(report) => report,
        Err(Failure::BadInput(message)) => {
            pending.discard();
            return Err(anyhow::anyhow!(message));
        }
        Err(Failure::PartlyWritten(what)) => {
            pending.partly_written(invocation, &what);
            return Ok(Ran::Failed(Failure::PartlyWritten(what)));
        }
        // The edit may be applied: the run stays pending, and the gate says 3.
        Err(lost) => return Ok(Ran::Failed(lost)),
    };
    if is_baseline {
        as_baseline(&mut report);
    }
    let settled = changes
        .as_ref()
        .is_none_or(|c| settled_change(c, workspace, &options, &mut report));
    // A run incomplete only for what it could never know still moves the baseline.
    let known_gap = changes.as_ref().is_some_and(|c| {
        note_disk_checkers(&loaded_servers, &options, &mut report);
        c.since == changed::Since::Nothing || only_known_gaps(&report)
    });
    // Before the caller shows the report: whoever reads a report can gate on it. A slow
    // or broken history costs at most its busy timeout and never fails the run.
    pending.complete(invocation, &report, seen);
    move_baseline(
        workspace,
        changes.as_ref().filter(|_| settled),
        &report,
        known_gap,
    );
    Ok(Ran::Done {
        report: Box::new(report),
        options,
    })
}

/// `baseline` checked its probe files only to start their servers: what they say of
/// them is the tree's state, none of it new (nor a break for the gate), and the run
/// is clean when complete, a baseline then stored (`check::stored`).
fn as_baseline(report: &mut model::Report) {
    for reported in report
        .files
        .iter_mut()
        .flat_map(|f| f.diagnostics.iter_mut())
    {
        reported.new = false;
    }
    report.decide_outcome(model::FailOn::Never);
}

/// The CLI's reporting commands: run, then print the report.
pub(crate) fn report_run(
    setting: &RunSetting<'_>,
    invocation: &history::Invocation,
    request: Reporting,
    quiet: bool,
) -> crate::error::Result<Outcome> {
    let line = report::progress::StatusLine::for_stderr(quiet)
        .map(|line| Box::new(line) as Box<dyn crate::model::progress::Watcher>);
    match reporting_run(setting, invocation, request, line)? {
        Ran::Failed(failure) => Err(Error::Run(failure)),
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
            match report::print(&report, &render) {
                Ok(()) => Ok(report.outcome),
                Err(e) => Err(not_printed(&report, &e)),
            }
        }
    }
}

/// A report that could not be printed, classified here where it is known what the
/// run did: an edit was written (or refused by `--reject`, or kept in memory by
/// `--dry-run`) and checked before printing was tried.
fn not_printed(report: &model::Report, e: &std::io::Error) -> Error {
    let what = if !report.is_edit {
        "the check finished"
    } else if report.dry_run || report.rejected {
        "the edit was checked and not written"
    } else {
        "the edit was written and checked"
    };
    Error::NotPrinted {
        message: format!(
            "{what} (its verdict: exit status {}; recorded in the history), but its report \
             could not be printed: {e}",
            exit::status(report.outcome)
        ),
        found_errors: report.outcome == Outcome::NewDiagnostics,
    }
}

/// The one-shot path: a fresh pool, stopped before returning.
fn run_in_process(
    ctx: &check::Context,
    job: check::Job,
    watcher: Option<Box<dyn crate::model::progress::Watcher>>,
) -> Result<model::Report, edit::EditError> {
    let started = std::time::Instant::now();
    let ctx = &check::Context {
        one_run: true,
        views: check::Views::None,
        seen: None,
        ..ctx.clone()
    };
    let mut pool = lsp::Pool::new();
    if let Some(mut watcher) = watcher {
        pool.observer = Some(Box::new(move |servers| {
            let pids: Vec<u32> = servers
                .iter()
                .filter(|s| !s.is_dead())
                .map(lsp::Server::pid)
                .collect();
            watcher.servers(&pids);
            watcher.progress(&crate::lsp::busy(servers));
        }));
    }
    let result = check::run(&mut pool, ctx, job);
    // Dropping the observer clears the status line before the report prints.
    pool.observer = None;
    // A hung or flooding server must cost at most the timeouts (docs/SPEC.md section 2), so
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

/// After `check --changed`: what the change was measured from, in the notes; and
/// whether its files are still as they were checked. A file written again while the
/// check ran makes the report one of texts the disk no longer has: not clean (exit 3
/// unless new errors were found), and its baseline is not moved.
fn settled_change(
    changes: &changed::Changes,
    workspace: &Path,
    options: &model::Options,
    report: &mut model::Report,
) -> bool {
    report.notes.extend(changes.note());
    if changes.since == changed::Since::Nothing {
        // Nothing to measure from (`RunReason::NoBaseline`): never a clean result.
        report.decide_outcome(options.fail_on);
    }
    let moved = changes.moved_since(workspace);
    if moved.is_empty() {
        return true;
    }
    report.notes.push(model::Note::Incomplete(
        model::RunReason::ChangedDuringCheck { files: moved },
    ));
    report.decide_outcome(options.fail_on);
    false
}

/// After `check --changed`: a server whose project-wide check reads the disk
/// (`Delivery::CheckAfterSave`: rust-analyzer's cargo check) has checked the
/// change already, by the time its word before it is asked (a daemon's server checks
/// a change it hears of behind its back at once): what it says of the files before
/// the change cannot be had, and a break it found may pass as "already there" (seen on
/// itertools: 0 of 3 broken calls reported, exit 0). Never clean, then: exit 3 unless
/// new errors were found, and a note. The baseline moves all the same: the gate holds
/// the incomplete run until an edit is checked in full.
fn note_disk_checkers(
    servers: &[crate::servers::ServerSpec],
    options: &model::Options,
    report: &mut model::Report,
) {
    let disk: Vec<String> = report
        .servers
        .iter()
        // One whose before view is the daemon's view of the baseline's tree had said
        // its word without the change: what its check says now is told new from old.
        .filter(|r| r.before != model::BeforeView::Seen)
        .filter(|r| {
            servers
                .iter()
                .any(|s| s.name == r.name && s.wait.check_after_save())
        })
        .map(|r| r.name.clone())
        .collect();
    if disk.is_empty() {
        return;
    }
    report
        .notes
        .push(model::Note::Incomplete(model::RunReason::DiskChecker {
            servers: disk,
        }));
    report.decide_outcome(options.fail_on);
}

/// Whether every reason `report` is incomplete for is one that checking the same change
/// again could not remove: a server had read the change from the disk before its word
/// without it could be asked (a created or deleted file under pyright or tsserver,
/// rust-analyzer's check). Left as the baseline, such a change was checked again by
/// every later call, which then never said "nothing changed" (rich in the corpus's hook
/// mode: exit 3 with nothing changed, after a module was put back).
fn only_known_gaps(report: &model::Report) -> bool {
    report.incomplete_reasons().all(|r| {
        matches!(
            r,
            model::Reason::Run(
                model::RunReason::DiskAlreadyChanged { .. } | model::RunReason::DiskChecker { .. }
            )
        )
    })
}

/// After a run: the baseline of `check --changed` takes the tree a complete `check
/// --changed` saw (`None` for one that is not: it stays, to be checked again; one
/// incomplete only for a `known_gap` moves it), or the
/// files a run wrote. A baseline that cannot be moved is said, and checked again next
/// time.
fn move_baseline(
    workspace: &Path,
    changes: Option<&changed::Changes>,
    report: &model::Report,
    known_gap: bool,
) {
    let moved = match changes {
        Some(changes)
            if known_gap || matches!(report.outcome, Outcome::Clean | Outcome::NewDiagnostics) =>
        {
            changed::accept(workspace, changes, report.seen)
        }
        Some(_) => Ok(()),
        None if report.is_edit && !report.dry_run && !report.rejected => {
            let written: Vec<std::path::PathBuf> =
                report.applied.iter().map(|a| a.path.clone()).collect();
            changed::advance(workspace, &written)
        }
        None => Ok(()),
    };
    if let Err(e) = moved {
        print_error(&format!(
            "note: check --changed: could not record what was checked ({e}); the next call \
             checks it again"
        ));
    }
}

/// The check's job for `request`, planned in memory: nothing is written here; with
/// `check --changed`, the change found, for its baseline to move after the run.
fn plan(
    request: Reporting,
    workspace: &Path,
    run_dir: &Path,
    servers: &[crate::servers::ServerSpec],
) -> Result<(check::Job, Option<changed::Changes>), edit::EditError> {
    if let Reporting::Check { changed: true, .. } = request {
        let mut changes = changed::find(workspace, servers)?;
        let plan = std::mem::take(&mut changes.plan);
        return Ok((check::Job::Review(plan), Some(changes)));
    }
    Ok((plan_edit(request, workspace, run_dir, servers)?, None))
}

fn plan_edit(
    request: Reporting,
    workspace: &Path,
    run_dir: &Path,
    servers: &[crate::servers::ServerSpec],
) -> Result<check::Job, edit::EditError> {
    Ok(match request {
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
        Reporting::Baseline => check::Job::Check(crate::baseline::probes(workspace, servers)?),
        Reporting::Check { paths, .. } => check::Job::Check(
            paths
                .iter()
                .map(|p| edit::plan_check(workspace, run_dir, p))
                .collect::<Result<_, _>>()?,
        ),
    })
}
