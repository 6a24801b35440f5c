//! The server instances of a run: which server checks which files at which root
//! (resolve), getting each one running (connect), and bringing one back after a
//! crash (revive), once per run.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::config;
use crate::lsp::restart::NotRestarted;
use crate::lsp::{Pool, ServerId};
use crate::model::incomplete::Package;
use crate::model::{Note, RunReason, ServerReason, ServerStatus};
use crate::servers::{Dependents, Role, ServerSpec};
use crate::wait::{self, Target};
use crate::workspace;

use super::Context;
use super::files::Tracked;

/// The files of one server instance (a server at one root) and how its part of the
/// run went.
pub(super) struct Group {
    pub spec: ServerSpec,
    pub root: PathBuf,
    pub server: Option<ServerId>,
    pub cold: bool,
    /// Indexes into the run's tracked files.
    pub files: Vec<usize>,
    pub dependents: Vec<PathBuf>,
    /// Likely dependents beyond the cap: not checked, and said so.
    pub dropped: Vec<PathBuf>,
    /// Likely dependents of a server analysing its whole workspace, listed with what
    /// it says of them (`--all`), never asked about.
    pub listed: Vec<PathBuf>,
    /// The scan stopped before reading every file of the root.
    pub unscanned: bool,
    pub status: ServerStatus,
    /// Why the status is not ok (never empty when it is not).
    pub reasons: Vec<ServerReason>,
    pub primary_ms: Option<u64>,
    pub cross_file_ms: Option<u64>,
    /// The run's configuration files whose governed files this group checks, as
    /// indexes into its tracked files: its server is started afresh once the edit
    /// is written (see `configuration`).
    pub configuration: Vec<usize>,
    /// Its server was restarted in this run (see [`revive`]): never twice.
    pub revived: bool,
    /// The server the before view was taken from: not `server` once a crash during a
    /// later wait restarted it under a new id.
    pub before_server: Option<ServerId>,
    /// The monorepo its server checks from its root, if it does: mapped once, when
    /// the group is made.
    monorepo: Option<workspace::Monorepo>,
    /// Its before tree and stored before view, for a server that may use or leave a
    /// stored baseline (see `stored`).
    pub baseline: Option<crate::baseline::ForRun>,
    /// Its before view is the daemon's view of the tree `check --changed`'s baseline
    /// names, not asked of the server (`before::choose_seen`).
    pub seen: bool,
}

impl Group {
    fn new(spec: &ServerSpec, root: PathBuf, file: usize) -> Group {
        Group {
            files: vec![file],
            ..Group::without_files(spec, root)
        }
    }

    /// A group with none of the run's files (yet): one that checks what a
    /// configuration file governs.
    pub(super) fn without_files(spec: &ServerSpec, root: PathBuf) -> Group {
        let monorepo = workspace::monorepo::at(&root, &spec.coverage.monorepos)
            .into_iter()
            .next();
        Group {
            spec: spec.clone(),
            monorepo,
            root,
            server: None,
            cold: false,
            files: Vec::new(),
            configuration: Vec::new(),
            dependents: Vec::new(),
            dropped: Vec::new(),
            listed: Vec::new(),
            unscanned: false,
            status: ServerStatus::Ok,
            reasons: Vec::new(),
            primary_ms: None,
            cross_file_ms: None,
            revived: false,
            before_server: None,
            baseline: None,
            seen: false,
        }
    }
}

impl Group {
    /// Whether its before view comes from a stored baseline: its server is started
    /// only once the edit is written, and sees only the tree after it.
    pub(super) fn uses_stored_baseline(&self) -> bool {
        self.baseline
            .as_ref()
            .is_some_and(crate::baseline::ForRun::used)
    }

    /// The paths of the run's files this group checks.
    pub(super) fn paths(&self, tracked: &[Tracked]) -> Vec<PathBuf> {
        self.files
            .iter()
            .map(|&i| tracked[i].path.clone())
            .collect()
    }

    /// The monorepo this group's server checks from its root, if it does.
    pub(super) fn monorepo(&self) -> Option<&workspace::Monorepo> {
        self.monorepo.as_ref()
    }
}

/// What resolving the files' servers found besides the groups.
#[derive(Default)]
pub(super) struct Resolved {
    pub groups: Vec<Group>,
    /// Files no server covers: written, reported as skipped.
    pub skipped: Vec<PathBuf>,
    pub notes: Vec<Note>,
}

/// Each file's server and root, grouped by server instance. A server started for
/// this run alone, to check an edit `written` to disk that creates no file, or the
/// tree as it is for `baseline`, is set up for that (`servers::for_one_written_edit`).
/// A change in a monorepo lspgate cannot map (`workspace::Unmapped`) is not checked
/// in the other packages.
pub(super) fn resolve(
    ctx: &Context,
    tracked: &[Tracked],
    written: bool,
    has_change: bool,
) -> Resolved {
    let mut out = Resolved::default();
    // Manifests that cannot be mapped, each with the first changed file under it.
    let mut unmapped: Vec<(workspace::Unmapped, &std::path::Path)> = Vec::new();
    for (i, t) in tracked.iter().enumerate() {
        let specs = config::servers_for(&ctx.servers, &t.path, &ctx.workspace);
        // A project config that switched off a check a built-in would make
        // (untrusted workspace), or a project whose TypeScript no compiler at hand
        // is, leaves the file not checked, not skipped; its linters still run.
        let has_checker = specs.iter().any(|s| s.coverage.role == Role::Checker);
        if !has_checker && let Some(why) = config::stopped_check(&ctx.servers, &t.path) {
            out.notes.push(Note::Incomplete(RunReason::CheckTurnedOff {
                file: t.path.clone(),
                why,
            }));
        } else if specs.is_empty() {
            out.skipped.push(t.path.clone());
        }
        // A linter the user turned off whose checks this file would get.
        for why in config::stopped_linters(&ctx.servers, &t.path, &ctx.workspace) {
            out.notes.push(Note::Incomplete(RunReason::LinterTurnedOff {
                file: t.path.clone(),
                why,
            }));
        }
        if specs.is_empty() {
            continue;
        }
        if let Some(why) = &t.unchecked {
            // The servers cannot be shown it: an incomplete check, said as such. (Its
            // `after` is `None` like a deleted file's, and must not be taken for one.)
            out.notes.push(Note::Incomplete(RunReason::FileNotShown {
                file: t.path.clone(),
                why: why.clone(),
            }));
            continue;
        }
        // Every server of the file checks it, each in a group of its own.
        for spec in specs {
            let (root, cannot_map) = spec.root_of(&t.path, &ctx.workspace);
            if let Some(u) = cannot_map
                && has_change
                && !unmapped.iter().any(|(seen, _)| seen.manifest == u.manifest)
            {
                unmapped.push((u, &t.path));
            }
            match out
                .groups
                .iter_mut()
                .find(|g| g.spec.name == spec.name && g.root == root)
            {
                Some(g) => g.files.push(i),
                None => out.groups.push(Group::new(spec, root, i)),
            }
        }
    }
    for (u, file) in &unmapped {
        note_unmapped(ctx, u, file, &mut out);
    }
    if has_change {
        note_packages_outside(ctx, &mut out);
    }
    if ctx.one_run && (written || ctx.makes_baseline) {
        for g in &mut out.groups {
            if !g.files.iter().any(|&i| tracked[i].appears()) {
                crate::servers::for_one_written_edit(&mut g.spec, &g.root);
            }
        }
    }
    out
}

/// A monorepo manifest lspgate cannot map around a changed file: its other packages
/// may import the file and were not checked.
fn note_unmapped(
    ctx: &Context,
    u: &workspace::Unmapped,
    file: &std::path::Path,
    out: &mut Resolved,
) {
    let root = u.manifest.parent().unwrap_or(&ctx.workspace);
    out.notes
        .push(Note::Incomplete(RunReason::ManifestNotMapped {
            manifest: u.manifest.clone(),
            why: u.why.clone(),
            root: root.to_path_buf(),
            file: file.to_path_buf(),
        }));
}

/// Packages of the workspace that depend on a group's package by their manifests but
/// lie outside its root, with no workspace manifest lspgate maps to put them under
/// one server (`monorepo::dependents_outside`): not checked, and said so.
fn note_packages_outside(ctx: &Context, out: &mut Resolved) {
    let mut reasons = Vec::new();
    for g in &out.groups {
        if g.spec.coverage.monorepos.is_empty() || g.monorepo().is_some() {
            continue;
        }
        let outside = workspace::monorepo::dependents_outside(
            &g.root,
            &g.spec.coverage.monorepos,
            &ctx.workspace,
        );
        if outside.is_empty() {
            continue;
        }
        let packages = outside
            .into_iter()
            .map(|(dir, name)| Package { name, dir })
            .collect();
        reasons.push(RunReason::PackagesOutside {
            server: g.spec.name.clone(),
            root: g.root.clone(),
            packages,
        });
    }
    out.notes.extend(reasons.into_iter().map(Note::Incomplete));
}

/// The dependents each group asks about, by what its server can say of them
/// (`Coverage::dependents`): none for a per-file linter; for TypeScript 7, every file
/// of the project, pulled unopened (exact, and cheaper than a scan), unless the
/// project is too large, when the scan's stand.
/// Runs before `before::find_dependents`, which scans for the groups left to it.
pub(super) fn choose_dependents(groups: &mut [Group], tracked: &[Tracked]) {
    for g in groups {
        // One started once the edit is written (its before view stored) asks about
        // its dependents all the same.
        if g.server.is_none() && !g.uses_stored_baseline() {
            continue;
        }
        match g.spec.coverage.dependents {
            Dependents::Scan | Dependents::None => {}
            Dependents::Project => {
                let edited: Vec<&std::path::Path> =
                    g.files.iter().map(|&i| tracked[i].path.as_path()).collect();
                match crate::servers::typescript::project_files(&g.root, &edited) {
                    Some(files) => g.dependents = files,
                    None => {
                        // Too large to ask about every file: the scan's likely
                        // dependents, opened, as for the other servers.
                        g.spec.coverage.dependents = Dependents::Scan;
                    }
                }
            }
        }
    }
}

/// Whether dependent `path` of group `g` is asked about by a pull without opening it:
/// every dependent of a server that pulls its project's (TypeScript 7 pulls a closed
/// file of its project exactly, cold or warm), and one its
/// server has not open and answered a pull for (a warm daemon pulls the TypeScript
/// servers' project files between runs, `daemon::pulls`): tsserver has it in a
/// project, and a pull answers for it exactly, where opening it would have tsserver
/// parse it afresh and push for it after every change.
pub(super) fn pulled_unopened(pool: &Pool, g: &Group, s: ServerId, path: &Path) -> bool {
    let server = pool.server(s);
    g.spec.coverage.dependents == Dependents::Project
        || (g.spec.coverage.idle_pulls > 0
            && server.pulls()
            && server.doc(path).is_none()
            && server.was_pulled(path))
}

/// Reuse the pool's servers, start the missing ones; a server that crashed since an
/// earlier run is restarted with its documents.
pub(super) fn connect<'a>(
    pool: &mut Pool,
    groups: impl IntoIterator<Item = &'a mut Group>,
    tracked: &[Tracked],
    notes: &mut Vec<Note>,
) {
    for g in groups {
        if let Some(i) = pool.find(&g.spec.name, &g.root) {
            if !pool.server(i).is_dead() {
                g.server = Some(i);
                // One restarted after a crash may still be starting: cold, then.
                g.cold = !pool.server(i).initialized();
                continue;
            }
            // It crashed since an earlier run (the daemon keeps a crashed server and
            // its documents for this): restarted with them, unless it crash-loops.
            if pool.crashed(i) {
                let what = "had crashed since the last run";
                g.cold = revive(pool, i, g, tracked, notes, what).is_some();
                continue;
            }
        }
        let Some(program) = config::which(&g.spec.command) else {
            g.status = ServerStatus::Missing;
            g.reasons.push(ServerReason::NotInstalled {
                server: g.spec.name.clone(),
                command: g.spec.command.clone(),
                why: config::not_found(&g.spec.command),
                install: g.spec.install_hint.clone(),
                files: g.paths(tracked),
            });
            continue;
        };
        match pool.start(&g.spec, &program, &g.root) {
            Ok(i) => {
                g.server = Some(i);
                g.cold = true;
            }
            Err(e) => {
                g.status = ServerStatus::Failed;
                g.reasons.push(ServerReason::StartFailed {
                    server: g.spec.name.clone(),
                    command: g.spec.command.clone(),
                    error: e.to_string(),
                    files: g.paths(tracked),
                });
            }
        }
    }
}

/// Restart the dead server `old` for group `g` (`Pool::restart`: the same
/// spec at the same root, its documents reopened with the text it had been shown;
/// refused while its crash backoff runs), and say so in a note. Once per group and
/// run, whatever the outcome. Returns the new server; when refused, the group is marked
/// crashed with the reason.
fn revive(
    pool: &mut Pool,
    old: ServerId,
    g: &mut Group,
    tracked: &[Tracked],
    notes: &mut Vec<Note>,
    what_happened: &str,
) -> Option<ServerId> {
    g.revived = true;
    let reason = pool.server(old).dead_reason().unwrap_or("").to_string();
    let docs = pool.server(old).doc_count();
    match pool.restart(old) {
        Ok(new) => {
            notes.push(Note::Info(format!(
                "{} {what_happened} ({reason}); restarted it and reopened {docs} file{}",
                g.spec.name,
                if docs == 1 { "" } else { "s" }
            )));
            g.server = Some(new);
            Some(new)
        }
        Err(NotRestarted(why)) => {
            g.status = ServerStatus::Crashed;
            g.reasons.push(ServerReason::NotRestarted {
                server: g.spec.name.clone(),
                message: reason,
                why,
                files: g.paths(tracked),
            });
            None
        }
    }
}

/// After a wait: restart each server of the run that crashed during it, unless it was
/// restarted in this run already, and move its targets in `lists` to the new server,
/// triggered by the reopening of their documents. Returns whether any was restarted,
/// that is, whether the wait must be made again.
pub(super) fn revive_crashed(
    pool: &mut Pool,
    groups: &mut [Group],
    tracked: &[Tracked],
    lists: &mut [&mut Vec<Target>],
    notes: &mut Vec<Note>,
) -> bool {
    let mut any = false;
    for g in groups.iter_mut() {
        let Some(old) = g.server else { continue };
        if g.revived || !pool.crashed(old) {
            continue;
        }
        let Some(new) = revive(pool, old, g, tracked, notes, "crashed during the run") else {
            continue;
        };
        for target in lists.iter_mut().flat_map(|l| l.iter_mut()) {
            if target.server != old {
                continue;
            }
            if let Some(doc) = pool.server(new).doc(&target.path) {
                *target = Target {
                    server: new,
                    path: target.path.clone(),
                    trigger: doc.changed_at,
                    trigger_at: Instant::now(),
                    version: Some(doc.version),
                    stands: false,
                };
            }
        }
        any = true;
    }
    any
}

/// Settle `targets` by `deadline`; a server of the run that crashes meanwhile is
/// restarted once and the wait made again, within the same deadline. `also` are
/// targets moved to the restarted server too (the next phase's).
pub(super) fn settle_reviving(
    pool: &mut Pool,
    groups: &mut [Group],
    tracked: &[Tracked],
    notes: &mut Vec<Note>,
    targets: &mut Vec<Target>,
    also: &mut Vec<Target>,
    deadline: Instant,
) -> wait::Outcome {
    let first = wait::settle_prefetching(pool, targets, also, deadline);
    if !revive_crashed(pool, groups, tracked, &mut [targets, also], notes) {
        return first;
    }
    let second = wait::settle_prefetching(pool, targets, also, deadline);
    again(first, second)
}

/// A wait made again after a restart: its result, with the time of both.
pub(super) fn again(first: wait::Outcome, second: wait::Outcome) -> wait::Outcome {
    wait::Outcome {
        elapsed: first.elapsed + second.elapsed,
        ..second
    }
}

/// A review, `--dry-run` and `--reject` show the servers texts the disk does not
/// have: the views of the disk the daemon named for them no longer hold
/// (`daemon::watch`), and answers given now are of no view.
pub(super) fn forget_views(pool: &mut Pool, groups: &[Group]) {
    for s in groups.iter().filter_map(|g| g.server) {
        pool.forget_view(s);
    }
}
