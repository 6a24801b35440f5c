//! One check, edit in, report out: resolve each file's server, take the before view,
//! apply the edit, tell the servers, wait (primary, then cross-file), compare, and
//! build the [`Report`]. The check takes a [`Pool`] of servers and does not care who
//! started them: a one-shot run passes a fresh pool, the daemon a warm one.
//!
//! [`run`] reads as the list of phases; each phase is a module of its own:
//! [`files`] (what the job touches), [`servers`] (resolve, connect, revive),
//! [`configuration`] (what an edited configuration file governs, checked by servers
//! started afresh), [`before`] (dependents and the before view), [`notify`],
//! [`waits`], [`compare`],
//! [`verdict`] (what was not checked) and [`finish`] (`--reject`, restoring a dry
//! run's view).

mod before;
mod compare;
mod configuration;
mod files;
mod finish;
pub mod merge;
mod notify;
mod servers;
mod stored;
mod verdict;
mod waits;

use std::path::PathBuf;
use std::time::Duration;

use crate::edit::{self, EditError, EditPlan};
use crate::lsp::{Pool, SeenView, ServerId};
use crate::model::Options;
use crate::model::{Applied, Report, Role, ServerReport};
use crate::servers::ServerSpec;

/// What a run is about.
#[derive(serde::Serialize, serde::Deserialize)]
pub enum Job {
    /// Apply this edit (to disk, or in memory only with --dry-run/--reject).
    Edit(EditPlan),
    /// Report on these files, unchanged. Every diagnostic counts as new.
    Check(Vec<PathBuf>),
    /// Show the servers a change in memory only, never writing it, and count as new
    /// only what it introduced: `check --staged` (HEAD → index) and `check --patch`
    /// (the working tree with the diff reversed → the working tree). Afterwards the
    /// servers' view goes back to the disk's.
    Review(EditPlan),
}

/// Everything a run needs besides the servers.
#[derive(Clone)]
pub struct Context {
    pub workspace: PathBuf,
    pub run_dir: PathBuf,
    pub servers: Vec<ServerSpec>,
    pub options: Options,
    /// The servers live for this run only (lspgate's own process, not the daemon),
    /// so a server started for it may be set up for this one edit
    /// (`servers::for_one_written_edit`).
    pub one_run: bool,
    /// The run checks the tree as it is to store its baseline (`lspgate baseline`):
    /// a server started for it alone is set up as for one written edit, so that
    /// rust-analyzer's `cargo check` of the tree is its whole view
    /// (`servers::for_one_written_edit`).
    pub makes_baseline: bool,
    /// What the run asks of the daemon's views of the tree (`lsp::SeenView`).
    pub views: Views,
    /// That view, where the daemon still holds it: the before view of each server it
    /// covers (`before::choose_seen`).
    pub seen: Option<std::sync::Arc<SeenView>>,
    /// Files a daemon opened between runs (`daemon::units`) whose word had not come
    /// when the run did. The run waits for the word of those it asks about, which is
    /// their before view, and closes the others before it shows the edit
    /// (`before::close_unasked`): idle work yields to a run at once.
    pub opened_unheard: Vec<(ServerId, PathBuf)>,
}

/// A run's ask of the daemon's views of the tree (`lsp::SeenView`): only `check
/// --changed` has one, since only its baseline names a view, and a view kept for any
/// other run (`--staged`'s ends off the disk) would only push out the baseline's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Views {
    #[default]
    None,
    /// Keep a view of the tree the run ends on; the baseline names this one, if any.
    Keep { named: Option<u64> },
}

impl Views {
    /// The view the baseline names.
    pub fn named(self) -> Option<u64> {
        match self {
            Views::Keep { named } => named,
            Views::None => None,
        }
    }
}

/// What kind of run this is, as the phases need to know.
#[derive(Clone, Copy)]
pub(super) struct Kind {
    /// An edit to apply (else a check or a review, which never write).
    pub is_edit: bool,
    /// A change to compare before and after: an edit, or a reviewed change.
    pub has_change: bool,
    /// The before texts are the disk's (a review's are HEAD's or a patch's).
    pub before_is_disk: bool,
    /// The after texts are on disk already: a review of the working tree (`check
    /// --changed`, `check --patch`), told to the servers as a written edit is, saved.
    pub after_is_disk: bool,
}

impl Kind {
    fn of(job: &Job) -> Kind {
        Kind {
            is_edit: matches!(job, Job::Edit(_)),
            has_change: !matches!(job, Job::Check(_)),
            before_is_disk: !matches!(job, Job::Review(_)),
            after_is_disk: false,
        }
    }
}

/// Run `job` with the servers of `pool`, starting the ones it lacks.
pub fn run(pool: &mut Pool, ctx: &Context, job: Job) -> Result<Report, EditError> {
    let opts = &ctx.options;
    let mut kind = Kind::of(&job);
    let (plan, tracked) = files::track(job)?;
    kind.after_is_disk = !kind.is_edit && kind.has_change && files::after_is_disk(&tracked);
    // --dry-run and --reject keep the disk as it is for now.
    let write_now = kind.is_edit && !opts.dry_run && !opts.reject;
    let mut resolved = servers::resolve(ctx, &tracked, write_now, kind.has_change);
    configuration::add_groups(ctx, &tracked, kind, write_now, &mut resolved);
    let servers::Resolved {
        mut groups,
        skipped,
        mut notes,
    } = resolved;
    stored::connect_before_edit(pool, ctx, (&mut groups, &tracked), kind, &mut notes);
    if !kind.before_is_disk || (kind.is_edit && !write_now) {
        servers::forget_views(pool, &groups);
    }
    // What the servers are told once the edit is shown: written, and saved.
    let on_disk = write_now || kind.after_is_disk;
    if kind.has_change {
        before::plan(ctx, &mut groups, &tracked, on_disk);
    }
    let mut before = before::take(
        pool,
        ctx,
        &mut groups,
        &tracked,
        kind.before_is_disk,
        &mut notes,
    );

    if write_now {
        edit::commit(&ctx.workspace, &plan)?;
    }
    stored::start_after_edit(pool, &mut groups, &tracked, &mut before, &mut notes);
    // A publish after this is about the edit (a server started afresh publishes
    // before the others are told).
    let edit = notify::Edit::now(pool, on_disk, kind.has_change);
    configuration::restart(pool, ctx, &mut groups, &tracked, &mut notes);
    let mut targets = notify::notify(pool, &groups, &tracked, &before, edit);
    let waits = waits::wait_after_edit(pool, opts, &mut groups, &mut targets, &tracked, &mut notes);
    let mut compared = compare::compare(
        pool,
        &groups,
        &tracked,
        &before,
        targets.edit_clock,
        kind.has_change,
    );
    compared.files = merge::merge(compared.files);

    let verdict = verdict::judge(
        pool,
        ctx,
        &mut groups,
        &waits,
        &before,
        &targets,
        (&tracked, write_now),
        kind,
    );
    notes.extend(verdict.notes);
    let (server_reports, incomplete) =
        server_reports(&groups, &tracked, &notes, on_disk || ctx.makes_baseline);
    let outcome = crate::model::outcome(&compared.files, opts.fail_on, incomplete);
    stored::keep(pool, ctx, (&groups, &tracked), kind, incomplete, &mut notes);
    crate::model::keep_severity(&mut compared.files, opts.severity, opts.fail_on);

    let mut ending = finish::Ending {
        written: write_now,
        rejected: false,
    };
    if kind.is_edit && opts.reject && !opts.dry_run {
        let ws = &ctx.workspace;
        ending = finish::reject_or_write(ws, pool, &groups, &tracked, &plan, outcome, &mut notes)?;
    }
    if kind.has_change && !ending.written {
        finish::restore(pool, &groups, &tracked);
    }

    Ok(Report {
        workspace: ctx.workspace.clone(),
        run_dir: ctx.run_dir.clone(),
        applied: applied(&tracked, kind),
        dry_run: opts.dry_run,
        rejected: ending.rejected,
        is_edit: kind.is_edit,
        cross_files_checked: dependents_checked(&compared.files),
        files: compared.files,
        fixed: compared.fixed,
        servers: server_reports,
        notes,
        skipped,
        cross_file_secs: waits.cross_secs,
        timed_out: verdict.timed_out,
        outcome,
        seen: None,
    })
}

/// Each group's server report, and whether the run is incomplete: it is when any
/// reason says so, in the notes or a server's report. `on_disk`: the servers checked
/// the tree on disk (an edit written, a review of it, `baseline`'s tree as it is).
fn server_reports(
    groups: &[servers::Group],
    tracked: &[files::Tracked],
    notes: &[crate::model::Note],
    on_disk: bool,
) -> (Vec<ServerReport>, bool) {
    let reports: Vec<ServerReport> = groups
        .iter()
        .map(|g| server_report(g, tracked, on_disk))
        .collect();
    let incomplete = crate::model::incomplete_reasons(notes, &reports)
        .next()
        .is_some();
    (reports, incomplete)
}

/// How many of the report's files are dependents.
fn dependents_checked(files: &[crate::model::FileReport]) -> usize {
    files.iter().filter(|f| f.role == Role::Dependent).count()
}

/// What the edit did to each file (a check or a review did nothing).
fn applied(tracked: &[files::Tracked], kind: Kind) -> Vec<Applied> {
    if !kind.is_edit {
        return Vec::new();
    }
    tracked
        .iter()
        .filter_map(|t| {
            t.action.map(|action| Applied {
                path: t.path.clone(),
                action,
            })
        })
        .collect()
}

fn server_report(g: &servers::Group, tracked: &[files::Tracked], on_disk: bool) -> ServerReport {
    ServerReport {
        name: g.spec.name.clone(),
        status: g.status,
        primary_ms: g.primary_ms,
        cross_file_ms: g.cross_file_ms,
        reasons: g.reasons.clone(),
        root: g.root.clone(),
        packages: packages_checked(g, tracked, on_disk),
        before: if g.uses_stored_baseline() {
            crate::model::BeforeView::Stored
        } else if g.seen {
            crate::model::BeforeView::Seen
        } else {
            crate::model::BeforeView::Server
        },
    }
}

/// The monorepo packages group `g` checked: those of its files and dependents, or
/// every package for a server that analyses its whole workspace, or checks it after
/// the save of an edit `on_disk` (rust-analyzer's `cargo check --workspace`). None
/// when its server did not run, or outside a monorepo.
fn packages_checked(g: &servers::Group, tracked: &[files::Tracked], on_disk: bool) -> Vec<String> {
    let Some(m) = g.monorepo() else {
        return Vec::new();
    };
    if g.server.is_none() || g.status != crate::model::ServerStatus::Ok {
        return Vec::new();
    }
    if g.spec.wait.finds_dependents(on_disk) {
        return m.names();
    }
    let files = g.files.iter().map(|&i| tracked[i].path.as_path());
    m.names_of(files.chain(g.dependents.iter().map(PathBuf::as_path)))
}

/// `5s`, or `1500ms`.
fn fmt_duration(d: Duration) -> String {
    crate::model::incomplete::fmt_millis(d.as_millis() as u64)
}
