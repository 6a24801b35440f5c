//! One run, edit in, report out: resolve each file's server, take the before view,
//! apply the edit, tell the servers, wait (primary, then cross-file), diff, and
//! build the [`Report`]. The pipeline takes a [`Pool`] of servers and does not care
//! who started them: a one-shot run passes a fresh pool, the daemon a warm one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_types::Diagnostic;

use crate::config::{self, Options};
use crate::dependents;
use crate::diff::{self, LineMap};
use crate::edit::{self, Action, EditError, EditPlan};
use crate::lsp::Pool;
use crate::lsp::restart::NotRestarted;
use crate::report::{Applied, FileReport, Report, Role, ServerReport, ServerStatus};
use crate::servers::ServerSpec;
use crate::wait::{self, Target};
use crate::workspace;

/// Dependents opened per server and run, at most.
const MAX_DEPENDENTS: usize = 40;

/// Files larger than this are written but not shown to the servers: servers slow to
/// a crawl or give up on generated files of this size (tsserver stops at 4 MiB of
/// JavaScript), and every copy of the text (the plan, the document, the message)
/// would cost the CLI that much memory again.
const MAX_TEXT: usize = 8 * 1024 * 1024;

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
pub struct Context {
    pub workspace: PathBuf,
    pub run_dir: PathBuf,
    pub servers: Vec<ServerSpec>,
    pub options: Options,
}

/// One file of the run as the pipeline tracks it.
struct Tracked {
    path: PathBuf,
    renamed_from: Option<PathBuf>,
    action: Option<Action>,
    before: Option<String>,
    after: Option<String>,
    /// Why the servers cannot be shown the file's new text (not UTF-8, too large);
    /// `None` when they can, or when the file is deleted.
    unchecked: Option<String>,
}

/// The files of one server instance (a server at one root).
struct Group {
    spec: ServerSpec,
    root: PathBuf,
    server: Option<usize>,
    cold: bool,
    files: Vec<usize>,
    dependents: Vec<PathBuf>,
    status: ServerStatus,
    detail: Option<String>,
    primary_ms: Option<u64>,
    cross_file_ms: Option<u64>,
    /// Its server was restarted in this run (see [`revive`]): never twice.
    revived: bool,
    /// The slot the before view was taken from (keys `before` and `store_before`):
    /// not `server` once a crash during a later wait moved it to a new slot.
    before_server: Option<usize>,
}

/// Run `job` with the servers of `pool`, starting the ones it lacks.
pub fn run(pool: &mut Pool, ctx: &Context, job: Job) -> Result<Report, EditError> {
    let opts = &ctx.options;
    let started = Instant::now();
    let is_edit = matches!(job, Job::Edit(_));
    // A review's before texts are HEAD's or a patch's, not necessarily the disk's.
    let before_is_disk = !matches!(job, Job::Review(_));
    // A change to compare before and after: an edit, or a reviewed change.
    let has_change = !matches!(job, Job::Check(_));
    let (plan, tracked) = track(job)?;

    // 1. Resolve each file's server and root.
    let mut groups: Vec<Group> = Vec::new();
    let mut skipped = Vec::new();
    let mut notes = Vec::new();
    let mut unchecked_files = false;
    for (i, t) in tracked.iter().enumerate() {
        let Some(spec) = config::server_for(&ctx.servers, &t.path) else {
            if let Some(why) = config::stopped_check(&ctx.servers, &t.path) {
                notes.push(format!(
                    "{}: {why}, not checked",
                    rel(&ctx.run_dir, &t.path)
                ));
                unchecked_files = true;
            } else {
                skipped.push(t.path.clone());
            }
            continue;
        };
        if let Some(why) = &t.unchecked {
            // The servers cannot be shown it: an incomplete check, said as such. (Its
            // `after` is `None` like a deleted file's, and must not be taken for one.)
            notes.push(format!(
                "{}: {why}, not checked",
                rel(&ctx.run_dir, &t.path)
            ));
            unchecked_files = true;
            continue;
        }
        let root = workspace::server_root(&t.path, &spec.root_markers, &ctx.workspace);
        match groups
            .iter_mut()
            .find(|g| g.spec.name == spec.name && g.root == root)
        {
            Some(g) => g.files.push(i),
            None => groups.push(Group {
                spec: spec.clone(),
                root,
                server: None,
                cold: false,
                files: vec![i],
                dependents: Vec::new(),
                status: ServerStatus::Ok,
                detail: None,
                primary_ms: None,
                cross_file_ms: None,
                revived: false,
                before_server: None,
            }),
        }
    }

    // 2. Connect: reuse the pool's servers, start the missing ones.
    for g in &mut groups {
        if let Some(i) = pool.find(&g.spec.name, &g.root) {
            if !pool.servers[i].is_dead() {
                g.server = Some(i);
                // One restarted after a crash may still be starting: cold, then.
                g.cold = pool.servers[i].ready_at.is_none();
                continue;
            }
            // It crashed since an earlier run (the daemon keeps a crashed server and
            // its documents for this): restarted with them, unless it crash-loops.
            if pool.crashed(i) {
                g.cold = revive(pool, i, g, &mut notes, "had crashed since the last run").is_some();
                continue;
            }
        }
        let Some(program) = config::which(&g.spec.command) else {
            g.status = ServerStatus::Missing;
            g.detail = Some(format!(
                "not installed ({}; install: {})",
                config::not_found(&g.spec.command),
                g.spec.install_hint
            ));
            continue;
        };
        match pool.start(&g.spec, &program, &g.root) {
            Ok(i) => {
                g.server = Some(i);
                g.cold = true;
            }
            Err(e) => {
                g.status = ServerStatus::Failed;
                g.detail = Some(format!("failed to start `{}`: {e}", g.spec.command));
            }
        }
    }

    // 3. Likely dependents, found before the servers see the edit.
    if has_change {
        for g in &mut groups {
            if g.server.is_none() {
                continue;
            }
            let edited: Vec<dependents::Edited<'_>> = g
                .files
                .iter()
                .map(|&i| dependents::Edited {
                    path: &tracked[i].path,
                    before: tracked[i].before.as_deref(),
                    after: tracked[i].after.as_deref(),
                })
                .collect();
            g.dependents = dependents::scan(&g.root, &edited, &g.spec.extensions, MAX_DEPENDENTS);
        }
    }

    // 4. Before view: open every existing file of the run as it is now and wait for
    //    its diagnostics. On a cold server this is where the start-up budget goes.
    let mut before_targets: Vec<Target> = Vec::new();
    let mut dependent_text: HashMap<PathBuf, String> = HashMap::new();
    for g in &groups {
        let Some(s) = g.server else { continue };
        // A before text the server does not hold (a reviewed change on a warm
        // server: HEAD's text where it has the disk's) changes what it sees, so
        // the cached diagnostics of every other file no longer hold: such texts are
        // shown first, and `sync` asks afresh for any file whose diagnostics predate
        // them. A file it never opened counts as held when the before text is the
        // disk's, which the server has read.
        let befores: Vec<(&Path, &str)> = g
            .files
            .iter()
            .filter_map(|&i| Some((tracked[i].path.as_path(), tracked[i].before.as_deref()?)))
            .collect();
        let (other, held): (Vec<_>, Vec<_>) =
            befores
                .iter()
                .partition(|(path, text)| match pool.servers[s].docs.get(*path) {
                    Some(doc) => doc.text != *text,
                    None => {
                        !before_is_disk
                            && std::fs::read_to_string(path).map_or(true, |disk| disk != *text)
                    }
                });
        if !other.is_empty() {
            pool.mark_changed(s);
        }
        for (path, text) in other.into_iter().chain(held) {
            before_targets.push(sync(pool, s, path, text));
        }
        for d in &g.dependents {
            let Ok(text) = std::fs::read_to_string(d) else {
                continue;
            };
            before_targets.push(sync(pool, s, d, &text));
            dependent_text.insert(d.clone(), text);
        }
    }
    let any_cold = groups.iter().any(|g| g.cold);
    let before_deadline = Instant::now()
        + if any_cold {
            opts.startup_timeout
        } else {
            opts.timeout
        };
    // A cold server with files to look at settles in the before wait below (it
    // waits for the server too); one with none (only new files) settles here, so
    // its start-up is not charged to the primary wait.
    let cold_without_targets: Vec<usize> = groups
        .iter()
        .filter(|g| g.cold)
        .filter_map(|g| g.server)
        .filter(|s| !before_targets.iter().any(|t| t.server == *s))
        .collect();
    if !cold_without_targets.is_empty() {
        wait::settle_servers(pool, &cold_without_targets, before_deadline);
    }
    let mut before_outcome = wait::settle(pool, &before_targets, before_deadline);
    if revive_crashed(pool, &mut groups, &mut [&mut before_targets], &mut notes) {
        before_outcome = again(
            before_outcome,
            wait::settle(pool, &before_targets, before_deadline),
        );
    }
    // A server that has not answered `initialize` within the start-up budget is
    // given up on now, not waited for again in every later phase.
    for g in &groups {
        if let Some(s) = g.server
            && g.cold
            && pool.servers[s].ready_at.is_none()
            && !pool.servers[s].is_dead()
        {
            pool.kill(
                s,
                format!(
                    "did not answer initialize within {} (--startup-timeout)",
                    fmt_duration(opts.startup_timeout)
                ),
            );
        }
    }
    for g in &mut groups {
        g.before_server = g.server;
    }
    let mut before: HashMap<(usize, PathBuf), Vec<Diagnostic>> = HashMap::new();
    let mut before_missing: Vec<PathBuf> = Vec::new();
    for (t, fresh) in before_targets.iter().zip(&before_outcome.fresh) {
        if !fresh && !pool.servers[t.server].is_dead() {
            before_missing.push(t.path.clone());
        }
        before.insert((t.server, t.path.clone()), current(pool, t.server, &t.path));
    }
    // Everything the servers hold, to spot files they report on their own (gopls
    // pushes files nobody opened).
    let store_before: HashMap<(usize, PathBuf), Vec<Diagnostic>> = snapshot(pool, &groups);

    // 5. Apply. --dry-run and --reject keep the disk as it is for now.
    let write_now = is_edit && !opts.dry_run && !opts.reject;
    if write_now {
        edit::commit(&plan)?;
    }

    // 6. Notify, as an editor would.
    let edit_clock = pool.clock;
    let mut primary: Vec<Target> = Vec::new();
    let mut cross: Vec<Target> = Vec::new();
    for g in &groups {
        let Some(s) = g.server else { continue };
        let mut watched: Vec<(PathBuf, u8)> = Vec::new();
        for &i in &g.files {
            let t = &tracked[i];
            if let Some(old) = &t.renamed_from {
                pool.close(s, old);
                watched.push((old.clone(), 3));
            }
            match &t.after {
                Some(text) => {
                    if t.before.is_none() || t.renamed_from.is_some() {
                        watched.push((t.path.clone(), 1));
                    }
                    primary.push(sync_forced(pool, s, &t.path, text));
                    if write_now {
                        pool.save(s, &t.path);
                    }
                }
                None => {
                    pool.close(s, &t.path);
                    watched.push((t.path.clone(), 3));
                }
            }
        }
        pool.watched(s, &watched);
        if has_change {
            // The dependents' text did not change, but their diagnostics may have:
            // a change with a new version makes the server publish (or answer) for
            // them again, and tells us which publish is the fresh one.
            for d in &g.dependents {
                if let Some(text) = dependent_text.get(d) {
                    cross.push(sync_forced(pool, s, d, text));
                }
            }
        }
    }

    // 7. Primary wait, then cross-file wait. A server that crashes during either is
    //    restarted once (`revive_crashed`) and the wait made again for its files,
    //    within what is left of the same deadline.
    let edit_notified = Instant::now();
    let primary_deadline = Instant::now() + opts.timeout;
    let mut primary_outcome = wait::settle_prefetching(pool, &primary, &cross, primary_deadline);
    if revive_crashed(
        pool,
        &mut groups,
        &mut [&mut primary, &mut cross],
        &mut notes,
    ) {
        primary_outcome = again(
            primary_outcome,
            wait::settle_prefetching(pool, &primary, &cross, primary_deadline),
        );
    }
    let cross_deadline = Instant::now() + opts.cross_file_timeout;
    let mut cross_outcome = if cross.is_empty() {
        wait::Outcome::default()
    } else {
        wait::settle(pool, &cross, cross_deadline)
    };
    if !cross.is_empty()
        && revive_crashed(
            pool,
            &mut groups,
            &mut [&mut primary, &mut cross],
            &mut notes,
        )
    {
        // The restarted server's primary files are settled again first: its earlier
        // answers died with it.
        let primary_again = wait::settle(pool, &primary, cross_deadline);
        let cross_again = wait::settle(pool, &cross, cross_deadline);
        primary_outcome.unsettled = primary_again.unsettled;
        cross_outcome = again(cross_outcome, cross_again);
    }
    // From the edit to the last dependent checked: the dependents are asked for
    // during the primary wait already, so the cross-file phase alone says little.
    let cross_secs = edit_notified.elapsed().as_secs_f64();

    // 8. Diff before and after.
    let mut files: Vec<FileReport> = Vec::new();
    let mut fixed = 0;
    let mut reported: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    for g in &groups {
        let Some(s) = g.server else { continue };
        // A server that died (and was not restarted) holds what it said before: not
        // this edit's diagnostics. Its files are reported as not checked (step 9).
        if pool.servers[s].is_dead() {
            continue;
        }
        let sb = g.before_server.unwrap_or(s);
        for &i in &g.files {
            let t = &tracked[i];
            let Some(after_text) = &t.after else { continue };
            let after = current(pool, s, &t.path);
            let (before_diags, map) = if !has_change {
                (Vec::new(), LineMap::identity())
            } else {
                let b = before
                    .get(&(sb, t.path.clone()))
                    .cloned()
                    .unwrap_or_default();
                let m = LineMap::new(t.before.as_deref().unwrap_or(""), after_text);
                (b, m)
            };
            let c = diff::classify(&before_diags, &after, &map);
            fixed += c.fixed.len();
            reported.insert(t.path.clone());
            files.push(FileReport {
                path: t.path.clone(),
                role: Role::Edited,
                diagnostics: c.diagnostics,
            });
        }
        let mut dependent_paths: Vec<PathBuf> = g.dependents.clone();
        // Files the server reported on by itself since the edit, with changed results.
        let server = &pool.servers[s];
        let mut unsolicited: Vec<PathBuf> = server
            .diagnostics
            .iter()
            .filter(|(p, d)| {
                d.pushed.as_ref().is_some_and(|x| x.seq > edit_clock)
                    && !dependent_paths.contains(p)
                    && store_before
                        .get(&(sb, (*p).clone()))
                        .map(|b| b != &server.diagnostics_of(p))
                        .unwrap_or(!server.diagnostics_of(p).is_empty())
            })
            .map(|(p, _)| p.clone())
            .collect();
        unsolicited.sort();
        dependent_paths.extend(unsolicited);
        for d in dependent_paths {
            if reported.contains(&d) {
                continue;
            }
            let after = current(pool, s, &d);
            let before_diags = before
                .get(&(sb, d.clone()))
                .or_else(|| store_before.get(&(sb, d.clone())))
                .cloned()
                .unwrap_or_default();
            let c = diff::classify(&before_diags, &after, &LineMap::identity());
            fixed += c.fixed.len();
            reported.insert(d.clone());
            files.push(FileReport {
                path: d,
                role: Role::Dependent,
                diagnostics: c.diagnostics,
            });
        }
    }

    // 9. What was and was not checked.
    let mut timed_out = false;
    for g in &mut groups {
        let Some(s) = g.server else { continue };
        let server = &pool.servers[s];
        g.primary_ms = Some(primary_outcome.elapsed.as_millis() as u64);
        if !cross.is_empty() {
            g.cross_file_ms = Some(cross_outcome.elapsed.as_millis() as u64);
        }
        if let Some(reason) = server.dead_reason() {
            if g.revived && g.status == ServerStatus::Crashed {
                // Not restarted (crash backoff): `revive` said why.
                continue;
            }
            g.status = if server.ready_at.is_some() {
                ServerStatus::Crashed
            } else {
                ServerStatus::Failed
            };
            let again = if g.revived {
                "; it crashed again after its restart"
            } else {
                ""
            };
            g.detail = Some(format!("{reason}{again}; its files were not checked"));
            continue;
        }
        let mut problems: Vec<String> = Vec::new();
        for (outcome, label, limit) in [
            (&primary_outcome, "timed out", opts.timeout),
            (
                &cross_outcome,
                "cross-file wait timed out",
                opts.cross_file_timeout,
            ),
        ] {
            let mine: Vec<&wait::Unsettled> =
                outcome.unsettled.iter().filter(|u| u.server == s).collect();
            if mine.is_empty() {
                continue;
            }
            let paths: Vec<String> = mine
                .iter()
                .filter_map(|u| u.path.as_ref())
                .map(|p| rel(&ctx.run_dir, p))
                .collect();
            let why = mine
                .iter()
                .find(|u| u.path.is_none())
                .map(|u| u.reason.clone());
            let mut text = format!("{label} after {}", fmt_duration(limit));
            if let Some(why) = why {
                text.push_str(&format!(" ({why})"));
            }
            if !paths.is_empty() {
                text.push_str(&format!("; not checked: {}", summarize(&paths)));
            }
            problems.push(text);
        }
        if !problems.is_empty() {
            timed_out = true;
            g.status = ServerStatus::Timeout;
            g.detail = Some(problems.join("; "));
        }
    }
    if !before_missing.is_empty() && has_change {
        let paths: Vec<String> = before_missing
            .iter()
            .map(|p| rel(&ctx.run_dir, p))
            .collect();
        notes.push(format!(
            "no before view of {} (servers too slow): their old diagnostics may show as new",
            summarize(&paths)
        ));
    }

    // clangd 14 builds a file's includes from the disk, not from open documents:
    // the dependents of a header change it has not seen written were re-read with
    // the old header, and their "no change" proves nothing.
    if !write_now && has_change {
        for g in &groups {
            if g.server.is_some() && !g.spec.wait.dependents_see_unsaved && !g.dependents.is_empty()
            {
                let paths: Vec<String> =
                    g.dependents.iter().map(|p| rel(&ctx.run_dir, p)).collect();
                notes.push(format!(
                    "{} reads included files from disk, so the files depending on a change \
                     not written to disk were not rechecked: {}",
                    g.spec.name,
                    summarize(&paths)
                ));
                unchecked_files = true;
            }
        }
    }
    let incomplete =
        timed_out || unchecked_files || groups.iter().any(|g| g.status != ServerStatus::Ok);
    let exit_code = crate::report::exit_code(&files, opts.fail_on, incomplete);

    // 10. --reject writes only a clean edit; --dry-run never writes. Either way the
    //     servers' view goes back to the disk's.
    let mut rejected = false;
    let mut written = write_now;
    if is_edit && opts.reject && !opts.dry_run {
        // Written only when the check found nothing and was complete: an edit
        // nobody could check is not known to introduce nothing.
        if exit_code != crate::exit::OK {
            rejected = true;
            if exit_code == crate::exit::INCOMPLETE {
                notes.push("--reject: the check is incomplete, so the edit was not written".into());
            }
        } else if let Err(e) = edit::commit(&plan) {
            return Err(e);
        } else {
            written = true;
            for g in &groups {
                if let Some(s) = g.server {
                    for &i in &g.files {
                        if tracked[i].after.is_some() {
                            pool.save(s, &tracked[i].path);
                        }
                    }
                }
            }
        }
    }
    if has_change && !written {
        restore(pool, &groups, &tracked);
    }

    let applied = if is_edit {
        tracked
            .iter()
            .filter_map(|t| {
                t.action.map(|action| Applied {
                    path: t.path.clone(),
                    action,
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    let cross_files_checked = files.iter().filter(|f| f.role == Role::Dependent).count();
    let _ = started;
    Ok(Report {
        workspace: ctx.workspace.clone(),
        run_dir: ctx.run_dir.clone(),
        applied,
        dry_run: opts.dry_run,
        rejected,
        is_edit,
        files,
        fixed,
        servers: groups
            .iter()
            .map(|g| ServerReport {
                name: g.spec.name.clone(),
                status: g.status,
                primary_ms: g.primary_ms,
                cross_file_ms: g.cross_file_ms,
                detail: g.detail.clone(),
            })
            .collect(),
        notes,
        skipped,
        cross_files_checked,
        cross_file_secs: cross_secs,
        timed_out,
        exit_code,
    })
}

/// Restart the dead server in slot `old` for group `g` (`Pool::restart`: the same
/// spec at the same root, its documents reopened with the text it had been shown;
/// refused while its crash backoff runs), and say so in a note. Once per group and
/// run, whatever the outcome. Returns the new slot; when refused, the group is marked
/// crashed with the reason.
fn revive(
    pool: &mut Pool,
    old: usize,
    g: &mut Group,
    notes: &mut Vec<String>,
    what_happened: &str,
) -> Option<usize> {
    g.revived = true;
    let reason = pool.servers[old].dead_reason().unwrap_or("").to_string();
    let docs = pool.servers[old].docs.len();
    match pool.restart(old) {
        Ok(new) => {
            notes.push(format!(
                "{} {what_happened} ({reason}); restarted it and reopened {docs} file{}",
                g.spec.name,
                if docs == 1 { "" } else { "s" }
            ));
            g.server = Some(new);
            Some(new)
        }
        Err(NotRestarted(why)) => {
            g.status = ServerStatus::Crashed;
            g.detail = Some(format!("{reason}; {why}; its files were not checked"));
            None
        }
    }
}

/// After a wait: restart each server of the run that crashed during it, unless it was
/// restarted in this run already, and move its targets in `lists` to the new slot,
/// triggered by the reopening of their documents. Returns whether any was restarted,
/// that is, whether the wait must be made again.
fn revive_crashed(
    pool: &mut Pool,
    groups: &mut [Group],
    lists: &mut [&mut Vec<Target>],
    notes: &mut Vec<String>,
) -> bool {
    let mut any = false;
    for g in groups.iter_mut() {
        let Some(old) = g.server else { continue };
        if g.revived || !pool.crashed(old) {
            continue;
        }
        let Some(new) = revive(pool, old, g, notes, "crashed during the run") else {
            continue;
        };
        for target in lists.iter_mut().flat_map(|l| l.iter_mut()) {
            if target.server != old {
                continue;
            }
            if let Some(doc) = pool.servers[new].docs.get(&target.path) {
                *target = Target {
                    server: new,
                    path: target.path.clone(),
                    trigger: doc.changed_at,
                    trigger_at: Instant::now(),
                    version: Some(doc.version),
                };
            }
        }
        any = true;
    }
    any
}

/// A wait made again after a restart: its result, with the time of both.
fn again(first: wait::Outcome, second: wait::Outcome) -> wait::Outcome {
    wait::Outcome {
        elapsed: first.elapsed + second.elapsed,
        ..second
    }
}

/// The plan and the per-file view of it.
fn track(job: Job) -> Result<(EditPlan, Vec<Tracked>), EditError> {
    match job {
        Job::Edit(plan) | Job::Review(plan) => {
            let tracked = plan
                .changes
                .iter()
                .map(|c| Tracked {
                    path: c.path.clone(),
                    renamed_from: c.renamed_from.clone(),
                    action: Some(c.action()),
                    before: c.before.as_deref().and_then(|b| as_text(b).ok()),
                    after: c.after.as_deref().and_then(|b| as_text(b).ok()),
                    unchecked: c.after.as_deref().and_then(|b| as_text(b).err()),
                })
                .collect();
            Ok((plan, tracked))
        }
        Job::Check(paths) => {
            let mut tracked = Vec::new();
            for path in paths {
                let text = std::fs::read(&path).map_err(|e| EditError::Path {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?;
                let (text, unchecked) = match as_text(&text) {
                    Ok(text) => (Some(text), None),
                    Err(why) => (None, Some(why)),
                };
                tracked.push(Tracked {
                    path,
                    renamed_from: None,
                    action: None,
                    before: text.clone(),
                    after: text,
                    unchecked,
                });
            }
            Ok((EditPlan::default(), tracked))
        }
    }
}

/// A file's bytes as text the servers can be shown, or why they cannot.
fn as_text(bytes: &[u8]) -> Result<String, String> {
    if bytes.len() > MAX_TEXT {
        return Err(format!(
            "too large to show the servers ({} MiB, over {} MiB)",
            bytes.len().div_ceil(1024 * 1024),
            MAX_TEXT / (1024 * 1024)
        ));
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| "not UTF-8 text".to_string())
}

/// Make the server's view of `path` equal `text`, sending nothing if it already
/// is and the diagnostics it holds for it still hold (nothing it sees changed
/// since, outside a run's own edit); the target's trigger is the last change the
/// server saw.
fn sync(pool: &mut Pool, s: usize, path: &Path, text: &str) -> Target {
    let server = &pool.servers[s];
    if let Some(doc) = server.docs.get(path)
        && doc.text == text
        && server.diagnostics_hold(path)
    {
        return Target {
            server: s,
            path: path.to_path_buf(),
            trigger: doc.changed_at,
            // When the server got this text, not now: on a warm daemon that is an
            // earlier run, and the server's silence about the file since then already
            // says its diagnostics did not change (typescript-language-server publishes
            // nothing for a file that stays clean). Counting from now made every warm
            // run wait `unpublished_after` for such files before the edit was applied.
            trigger_at: doc.changed_instant,
            version: Some(doc.version),
        };
    }
    sync_forced(pool, s, path, text)
}

/// Open or change `path` to `text` with a new version, always.
fn sync_forced(pool: &mut Pool, s: usize, path: &Path, text: &str) -> Target {
    let version = pool.open_or_change(s, path, text);
    Target {
        server: s,
        path: path.to_path_buf(),
        trigger: pool.clock,
        trigger_at: Instant::now(),
        version: Some(version),
    }
}

fn current(pool: &Pool, s: usize, path: &Path) -> Vec<Diagnostic> {
    pool.servers[s].diagnostics_of(path)
}

fn snapshot(pool: &Pool, groups: &[Group]) -> HashMap<(usize, PathBuf), Vec<Diagnostic>> {
    let mut out = HashMap::new();
    for g in groups {
        let Some(s) = g.server else { continue };
        for p in pool.servers[s].diagnostics.keys() {
            out.insert((s, p.clone()), pool.servers[s].diagnostics_of(p));
        }
    }
    out
}

/// Put the servers' view back to the disk's after a run that did not write what it
/// showed them (--dry-run, a rejected edit, a reviewed change).
fn restore(pool: &mut Pool, groups: &[Group], tracked: &[Tracked]) {
    for g in groups {
        let Some(s) = g.server else { continue };
        let mut restored = false;
        for &i in &g.files {
            let t = &tracked[i];
            for path in std::iter::once(&t.path).chain(t.renamed_from.as_ref()) {
                match std::fs::read_to_string(path) {
                    Ok(text) => {
                        if pool.servers[s]
                            .docs
                            .get(path)
                            .is_none_or(|d| d.text != text)
                        {
                            pool.open_or_change(s, path, &text);
                            restored = true;
                        }
                    }
                    Err(_) => {
                        pool.close(s, path);
                        restored = true;
                    }
                }
            }
        }
        // The diagnostics held now are those of the text just taken back: the next
        // run (on a warm daemon) asks for them again instead of taking them as its
        // before view. Without it a --dry-run that found errors made the same edit
        // look clean next.
        if restored {
            pool.mark_changed(s);
        }
    }
}

/// `path` relative to `base` for messages.
pub fn rel(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(p) => p.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

fn summarize(paths: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut s = paths
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        s.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    s
}

fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}
