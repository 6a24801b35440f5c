//! The before view: the diagnostics of the run's files and of their likely
//! dependents as they stood before the edit, taken before the servers see it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use lsp_types::Diagnostic;

use crate::dependents;
use crate::lsp::{Pool, SeenView, ServerId, ServerSeen};
use crate::model::Note;
use crate::wait::{self, Target};

use super::files::Tracked;
use super::servers::{Group, settle_reviving};
use super::{Context, fmt_duration};

/// Dependents opened per server and run, at most; the rest are named in a note and
/// make the check incomplete.
pub(super) const MAX_DEPENDENTS: usize = 200;

/// Diagnostics keyed by the server that said them and the file.
pub(super) type Held = HashMap<(ServerId, PathBuf), Vec<Diagnostic>>;

/// What the servers said before the edit.
#[derive(Default)]
pub(super) struct Before {
    /// The files the run asked about.
    pub asked: Held,
    /// Everything the servers held, to spot files they report on their own (gopls
    /// pushes files nobody opened).
    pub held: Held,
    /// Files whose before view did not arrive in time.
    pub missing: Vec<PathBuf>,
    /// Documents the server of a seen view has open that the view has no word on:
    /// the server first spoke of them after the change (clangd's units built once a
    /// harness had written again), so what they say cannot be told new from old.
    pub unheard: Vec<(ServerId, PathBuf)>,
    /// Servers analysing their whole workspace that had not finished by the deadline.
    pub unsettled: Vec<wait::Unsettled>,
    /// The dependents' text as shown to the servers.
    pub dependent_text: HashMap<PathBuf, String>,
}

impl Before {
    /// The before diagnostics of `path` as server `s` said them when asked.
    pub fn asked_of(&self, s: ServerId, path: &Path) -> Vec<Diagnostic> {
        self.asked
            .get(&(s, path.to_path_buf()))
            .cloned()
            .unwrap_or_default()
    }

    /// The before diagnostics of `path` as server `s` said them: asked for, else
    /// held, else none.
    pub fn of(&self, s: ServerId, path: &Path) -> Vec<Diagnostic> {
        let key = (s, path.to_path_buf());
        self.asked
            .get(&key)
            .or_else(|| self.held.get(&key))
            .cloned()
            .unwrap_or_default()
    }
}

/// Likely dependents of each group's files, found before the servers see the edit.
///
/// A server analysing its whole workspace, or checking it after the save of an edit
/// `written` to disk, finds them itself (see `compare`); with `list_all` (`--all`)
/// its likely dependents are scanned all the same, to be listed with what it says of
/// them now (it keeps them current; nothing is opened).
fn find_dependents(groups: &mut [Group], tracked: &[Tracked], list_all: bool, written: bool) {
    for g in groups {
        // Servers that ask about no dependents, or about the whole project, get
        // theirs from `servers::choose_dependents`.
        let listed_only = g.spec.wait.finds_dependents(written);
        // A server started once the edit is written (its before view stored) has
        // none yet, and lists what it says of the files scanned all the same.
        if (g.server.is_none() && !g.uses_stored_baseline())
            || (listed_only && !list_all)
            || !g.dependents.is_empty()
            || g.spec.coverage.dependents != crate::servers::Dependents::Scan
        {
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
        let found = dependents::scan(&g.root, &edited, &g.spec.extensions, MAX_DEPENDENTS);
        if listed_only {
            g.listed = found.files;
            continue;
        }
        g.dependents = found.files;
        g.dropped = found.dropped;
        g.unscanned = found.unscanned;
    }
}

/// Where each group's before view comes from: the dependents to ask about, or the
/// daemon's view of the baseline's tree.
pub(super) fn plan(ctx: &Context, groups: &mut [Group], tracked: &[Tracked], on_disk: bool) {
    super::servers::choose_dependents(groups, tracked);
    find_dependents(groups, tracked, ctx.options.all, on_disk);
    choose_seen(groups, ctx.seen.as_deref());
}

/// The groups whose before view is the daemon's view `seen` of the tree `check
/// --changed`'s baseline names: a warm server the view has, which had said its word
/// on every likely dependent then (one that reports on its whole workspace had said
/// it on all). Their servers are shown only the tree after the change, but for a file
/// of the run the view has no word on (a header clangd never opened): that one is
/// shown its old text and asked, as without a view. So what they may have seen of
/// the change already (an older tsserver watches the disk itself; a file another tool deleted
/// is gone for pyright; clangd reads an includer's headers from the disk) cannot leak
/// into the before view of the files it breaks.
fn choose_seen(groups: &mut [Group], seen: Option<&SeenView>) {
    let Some(seen) = seen else { return };
    for g in groups.iter_mut() {
        let Some(view) = g.server.and_then(|s| seen.server(s)) else {
            continue;
        };
        // One that reports on its whole workspace is compared on every file: its
        // view must be every file's.
        let whole = view.whole || !g.spec.wait.reports_unopened();
        g.seen = !g.cold
            && whole
            && g.configuration.is_empty()
            && !g.uses_stored_baseline()
            && view.covers(g.dependents.iter().map(PathBuf::as_path));
    }
}

/// For each file of seen group `g` its view has no word on, a target to ask: every
/// file of the change is shown its old text first (the word on one file rests on the
/// others, which the server may have read changed from the disk), and the one asked
/// is sent anew, whatever the server held of it. None when the view knows them all.
fn show_unseen(
    pool: &mut Pool,
    s: ServerId,
    g: &Group,
    tracked: &[Tracked],
    view: &ServerSeen,
) -> Vec<Target> {
    let befores = befores(g, tracked);
    if befores.iter().all(|(path, _)| view.of(path).is_some()) {
        return Vec::new();
    }
    pool.mark_changed(s);
    let mut targets = Vec::new();
    for (path, text) in befores {
        let target = sync_forced(pool, s, path, text);
        if view.of(path).is_none() {
            targets.push(target);
        }
    }
    targets
}

/// Open every existing file of the run as it is now and wait for its diagnostics.
/// On a cold server this is where the start-up budget goes. A group whose before view
/// is seen (`choose_seen`) takes it from `seen` and shows its server nothing.
pub(super) fn take(
    pool: &mut Pool,
    ctx: &Context,
    groups: &mut [Group],
    tracked: &[Tracked],
    before_is_disk: bool,
    notes: &mut Vec<Note>,
) -> Before {
    let opts = &ctx.options;
    let mut before = Before::default();
    let_busy_servers_finish(pool, groups, opts.timeout);
    let mut targets: Vec<Target> = Vec::new();
    // A dependent a warm server has never been shown may lie in a project it has not
    // loaded yet (another package of a monorepo, under tsserver): loading it is a
    // start-up, so its budget.
    let mut first_sight = false;
    for g in groups.iter() {
        let Some(s) = g.server else { continue };
        if let Some(view) = seen_view(ctx, g, s) {
            // Their text is sent again after the edit, as for a dependent asked now.
            before.dependent_text.extend(texts(&g.dependents));
            targets.extend(show_unseen(pool, s, g, tracked, view));
            continue;
        }
        // In a review, what such a server said since the last run may rest on the
        // change it saw on disk: taken for the before view, it passed mobx's
        // `rename-die-barrel` as old once (hook mode, exit 0, 41 files broken).
        if !before_is_disk && pool.server(s).answers_from_its_own_view_of_the_disk() {
            pool.mark_changed(s);
        }
        let shown = show_befores(pool, s, g, tracked, before_is_disk);
        if shown.is_empty() && g.cold && needs_a_sign(g) {
            targets.extend(probe(pool, s, g, None));
        }
        targets.extend(shown);
        for d in &g.dependents {
            if super::servers::pulled_unopened(pool, g, s, d) {
                targets.push(Target::pulled(pool, s, d));
                continue;
            }
            let Ok(text) = crate::regular::read_to_string(d) else {
                continue;
            };
            first_sight |= pool.server(s).doc(d).is_none();
            targets.push(sync(pool, s, d, &text));
            before.dependent_text.insert(d.clone(), text);
        }
        let owed = unanswered_docs(pool, ctx, s, g, &targets);
        targets.extend(owed);
    }
    close_unasked(pool, ctx, &targets);
    let any_cold = groups.iter().any(|g| g.cold);
    let deadline = Instant::now()
        + if any_cold || first_sight {
            opts.startup_timeout
        } else {
            opts.timeout
        };
    // A cold server with files to look at settles in the wait below (it waits for
    // the server too); one with none (only new files) settles here, so its start-up
    // is not charged to the primary wait.
    let cold_without_targets: Vec<ServerId> = groups
        .iter()
        .filter(|g| g.cold)
        .filter_map(|g| g.server)
        .filter(|s| !targets.iter().any(|t| t.server == *s))
        .collect();
    if !cold_without_targets.is_empty() {
        wait::settle_servers(pool, &cold_without_targets, deadline);
    }
    let outcome = settle_reviving(
        pool,
        groups,
        tracked,
        notes,
        &mut targets,
        &mut Vec::new(),
        deadline,
    );
    give_up_on_uninitialized(pool, groups, opts.startup_timeout);
    // A server analysing its whole workspace must have finished (its start-up
    // analysis, or the re-analysis of files changed since the last run) before what
    // it published is the before view: that is its start-up, so its budget.
    // Those that answered for files of the run just now need only the rest of that
    // burst; the others (nothing asked, or no answer) their full quiet.
    // A seen before view waits for nothing.
    let seen: Vec<ServerId> = groups
        .iter()
        .filter(|g| g.seen)
        .filter_map(|g| g.server)
        .collect();
    let analysing = workspace_servers(pool, groups)
        .into_iter()
        .filter(|s| !seen.contains(s));
    let (answered, others): (Vec<ServerId>, Vec<ServerId>) = analysing.partition(|s| {
        let mine = targets
            .iter()
            .zip(&outcome.fresh)
            .filter(|(t, _)| t.server == *s);
        let mut any = false;
        let all = mine.inspect(|_| any = true).all(|(_, fresh)| *fresh);
        any && all
    });
    let deadline = Instant::now() + opts.startup_timeout;
    if !answered.is_empty() {
        let settled = wait::settle_answered_servers(pool, &answered, deadline);
        before.unsettled.extend(settled.unsettled);
    }
    if !others.is_empty() {
        before
            .unsettled
            .extend(wait::settle_servers(pool, &others, deadline).unsettled);
    }
    // A cold one may have answered for its open files before its analysis of the
    // workspace began: settled only once that analysis shows it ran.
    let first: Vec<ServerId> = groups
        .iter()
        .filter(|g| g.cold && g.spec.wait.workspace_analysis())
        .filter_map(|g| g.server)
        .filter(|&s| !pool.server(s).is_dead())
        .collect();
    if !first.is_empty() {
        let settled = wait::settle_first_analysis(pool, &first, deadline);
        before.unsettled.extend(settled.unsettled);
    }
    for g in groups.iter_mut() {
        g.before_server = g.server;
    }
    for (t, fresh) in targets.iter().zip(&outcome.fresh) {
        if !fresh && !pool.server(t.server).is_dead() {
            before.missing.push(t.path.clone());
        }
        before.asked.insert(
            (t.server, t.path.clone()),
            pool.server(t.server).diagnostics_of(&t.path),
        );
    }
    record_held(pool, ctx, groups, tracked, &mut before);
    before
}

/// clangd, going over every open file after a save (files changed behind the
/// daemon's back, sent again): waiting for it to finish costs the rest of that pass;
/// asking again now (a new version of each file) would make it build every file
/// twice.
fn let_busy_servers_finish(pool: &mut Pool, groups: &[Group], timeout: std::time::Duration) {
    let busy: Vec<ServerId> = groups
        .iter()
        .filter_map(|g| g.server)
        .filter(|&s| pool.server(s).going_over_open_files())
        .collect();
    if !busy.is_empty() {
        wait::settle_servers(pool, &busy, Instant::now() + timeout);
    }
}

/// The documents server `s` has open and has said nothing of yet, but those already
/// `asked` about: their word is owed, and is their before view, so it is waited for
/// before the edit is shown. Taken as saying nothing, such a file read as broken by
/// the edit when its first publish came after it: lua's `ljumptab.h`, which is not
/// self-contained, reported two errors it always has as new for an edit of `lobject.h`
/// that breaks nothing (idle mode, exit 1, 3 runs in 105); and clangd 14, building it
/// after the edit, would have read the edited header from the disk. The units a
/// daemon opens between runs and has not heard of when a run comes are asked about
/// or closed ([`close_unasked`]); this covers what is left, a document whose word an
/// earlier run gave up waiting for.
/// Only for a server whose units a daemon opens (`coverage.open_units`): another may
/// never say anything of a file a run opened (pyright of one its configuration
/// excludes), and every later run would wait for it in vain.
fn unanswered_docs(
    pool: &mut Pool,
    ctx: &Context,
    s: ServerId,
    g: &Group,
    asked: &[Target],
) -> Vec<Target> {
    if g.spec.coverage.open_units == 0 {
        return Vec::new();
    }
    let server = pool.server(s);
    let owed: Vec<(PathBuf, String)> = server
        .docs()
        .filter(|(path, _)| {
            !server.diagnostics().contains(path)
                && !asked.iter().any(|t| t.server == s && t.path == *path)
                && !ctx.opened_unheard.iter().any(|(i, p)| *i == s && p == path)
        })
        .map(|(path, doc)| (path.to_path_buf(), doc.text.clone()))
        .collect();
    owed.iter()
        .map(|(path, text)| sync(pool, s, path, text))
        .collect()
}

/// Close the files a daemon opened between runs that had said nothing when the run
/// came and that the run does not ask about (`Context::opened_unheard`): their word is
/// no before view the run needs, and waiting for it would make the run wait for idle
/// work. One heard since is closed too: its word may rest on a change already on the
/// disk, and in a `check --changed` run it is a document the daemon's view has no word
/// on, whose saying anything makes the run incomplete (`Before::unheard`). Closed,
/// clangd publishes nothing more of them (an empty list), so nothing they say can read
/// as the edit's; the daemon opens them again after the run.
fn close_unasked(pool: &mut Pool, ctx: &Context, asked: &[Target]) {
    for (s, path) in &ctx.opened_unheard {
        if !asked.iter().any(|t| t.server == *s && t.path == *path) {
            pool.close(*s, path);
        }
    }
}

/// What each group's server holds besides the answers asked for: of the run's files
/// a server analysing its whole workspace was not asked about, and of every file (to
/// spot those it reports on by itself); a seen group's, from the view.
fn record_held(
    pool: &Pool,
    ctx: &Context,
    groups: &[Group],
    tracked: &[Tracked],
    before: &mut Before,
) {
    for g in groups.iter() {
        let Some(s) = g.server else { continue };
        if let Some(view) = seen_view(ctx, g, s) {
            from_seen(before, pool, s, g, tracked, view);
            continue;
        }
        if g.spec.wait.workspace_analysis() {
            // The run's files it was not asked about: what it published stands.
            for &i in &g.files {
                let path = &tracked[i].path;
                if tracked[i].before.is_some() {
                    before
                        .asked
                        .entry((s, path.clone()))
                        .or_insert_with(|| pool.server(s).diagnostics_of(path));
                }
            }
        }
        for p in pool.server(s).diagnostics().files() {
            before
                .held
                .insert((s, p.to_path_buf()), pool.server(s).diagnostics_of(p));
        }
    }
}

/// The view of seen group `g`'s server `s` (`choose_seen`); none for another group.
fn seen_view<'a>(ctx: &'a Context, g: &Group, s: ServerId) -> Option<&'a ServerSeen> {
    ctx.seen.as_deref()?.server(s).filter(|_| g.seen)
}

/// Each of `paths` that reads as text, with its text.
fn texts(paths: &[PathBuf]) -> impl Iterator<Item = (PathBuf, String)> + '_ {
    paths
        .iter()
        .filter_map(|p| Some((p.clone(), crate::regular::read_to_string(p).ok()?)))
}

/// The before view of group `g` (server `s`) from what the server had said when the
/// baseline's run ended: of the run's files, of their likely dependents, and of every
/// other file it had said anything of.
fn from_seen(
    before: &mut Before,
    pool: &Pool,
    s: ServerId,
    g: &Group,
    tracked: &[Tracked],
    view: &ServerSeen,
) {
    for (path, diagnostics) in &view.files {
        before.held.insert((s, path.clone()), diagnostics.clone());
    }
    // Only where documents are opened between runs (clangd's units), as for the
    // word a run waits for (`unanswered_docs`).
    let opened_between_runs = g.spec.coverage.open_units > 0;
    let of_the_run = |path: &Path| g.files.iter().any(|&i| tracked[i].path == path);
    for (path, _) in pool.server(s).docs().filter(|_| opened_between_runs) {
        if view.of(path).is_none() && !of_the_run(path) {
            before.unheard.push((s, path.to_path_buf()));
        }
    }
    let befores = befores(g, tracked).into_iter().map(|(path, _)| path);
    for path in befores.chain(g.dependents.iter().map(PathBuf::as_path)) {
        // A file it had no word on was asked (`show_unseen`).
        if let Some(diagnostics) = view.of(path) {
            before.asked.insert((s, path.to_path_buf()), diagnostics);
        }
    }
}

/// Each file of group `g` that had a text before the change, with that text.
fn befores<'a>(g: &Group, tracked: &'a [Tracked]) -> Vec<(&'a Path, &'a str)> {
    g.files
        .iter()
        .filter_map(|&i| Some((tracked[i].path.as_path(), tracked[i].before.as_deref()?)))
        .collect()
}

/// Show server `s` the before text of each of the group's files. A before text the
/// server does not hold (a reviewed change on a warm server: HEAD's text where it has
/// the disk's) changes what it sees, so the cached diagnostics of every other file no
/// longer hold: such texts are shown first, and [`sync`] asks afresh for any file
/// whose diagnostics predate them. A file it never opened counts as held when the
/// before text is the disk's, which the server has read.
fn show_befores(
    pool: &mut Pool,
    s: ServerId,
    g: &Group,
    tracked: &[Tracked],
    before_is_disk: bool,
) -> Vec<Target> {
    // A file the edit deletes says nothing after it: it is shown only as the sign
    // that a start-up analysis began, which a server bracketing its analyses gives
    // by itself (gopls would diagnose its package once more for the open).
    let shows_deleted = !g.spec.brackets_analyses();
    let befores: Vec<(&Path, &str)> = g
        .files
        .iter()
        .map(|&i| &tracked[i])
        .filter(|t| shows_deleted || t.after.is_some())
        .filter_map(|t| Some((t.path.as_path(), t.before.as_deref()?)))
        .collect();
    let (other, held): (Vec<_>, Vec<_>) =
        befores
            .iter()
            .partition(|(path, text)| match pool.server(s).doc(path) {
                Some(doc) => doc.text != *text,
                None => {
                    !before_is_disk
                        && crate::regular::read_to_string(path).map_or(true, |disk| disk != *text)
                }
            });
    if !other.is_empty() {
        pool.mark_changed(s);
    }
    // A server analysing its whole workspace has a current word on a file it holds
    // as it is on disk, open or not: nothing to send.
    let analysed = |pool: &Pool, path: &Path| {
        let server = pool.server(s);
        server.spec().wait.workspace_analysis()
            && server.doc(path).is_none()
            && server.diagnostics().contains(path)
    };
    let held: Vec<_> = held
        .into_iter()
        .filter(|(path, _)| !analysed(pool, path))
        .collect();
    other
        .into_iter()
        .chain(held)
        .map(|(path, text)| sync(pool, s, path, text))
        .collect()
}

/// Whether a server analysing its whole workspace needs a file opened ([`probe`]) as
/// the sign that an analysis began: not one that brackets every analysis, whose
/// start-up analysis's end, or a change's, is that sign.
pub(super) fn needs_a_sign(g: &Group) -> bool {
    g.spec.wait.workspace_analysis() && !g.spec.brackets_analyses()
}

/// A cold server analysing its whole workspace, with none of the run's files to show
/// it (only new or deleted files): one file of its root, opened, is the positive sign
/// that its start-up analysis has begun (pyright publishes open files first, in the same
/// burst as the progress of the rest). Without any file, it has nothing to analyse.
///
/// `near`: a file of the run (a deleted one): a file beside it is taken first, which
/// the change concerns (its package, for gopls).
pub(super) fn probe(
    pool: &mut Pool,
    s: ServerId,
    g: &Group,
    near: Option<&Path>,
) -> Option<Target> {
    let beside = near
        .and_then(Path::parent)
        .filter(|dir| dir.starts_with(&g.root))
        .and_then(|dir| dependents::any_file(dir, &g.spec.extensions));
    let path = beside.or_else(|| dependents::any_file(&g.root, &g.spec.extensions))?;
    let text = crate::regular::read_to_string(&path).ok()?;
    Some(sync_forced(pool, s, &path, &text))
}

/// The live servers of `groups` that analyse their whole workspace, or check it
/// after a save.
pub(super) fn workspace_servers(pool: &Pool, groups: &[Group]) -> Vec<ServerId> {
    groups
        .iter()
        .filter(|g| g.spec.wait.reports_unopened())
        .filter_map(|g| g.server)
        .filter(|&s| !pool.server(s).is_dead())
        .collect()
}

/// A server that has not answered `initialize` within the start-up budget is given
/// up on now, not waited for again in every later phase.
fn give_up_on_uninitialized(pool: &mut Pool, groups: &[Group], budget: std::time::Duration) {
    for g in groups {
        if let Some(s) = g.server
            && g.cold
            && !pool.server(s).initialized()
            && !pool.server(s).is_dead()
        {
            pool.kill(
                s,
                format!(
                    "did not answer initialize within {} (--startup-timeout)",
                    fmt_duration(budget)
                ),
            );
        }
    }
}

/// Make the server's view of `path` equal `text`, sending nothing if it already
/// is and the diagnostics it holds for it still hold (nothing it sees changed
/// since, outside a run's own edit); the target's trigger is the last change the
/// server saw.
pub(super) fn sync(pool: &mut Pool, s: ServerId, path: &Path, text: &str) -> Target {
    let server = pool.server(s);
    // A server analysing its whole workspace keeps every file's word current by
    // itself; for the others, a change elsewhere may have made it stale.
    let holds = server.spec().wait.workspace_analysis()
        || server.diagnostics_hold(path)
        || server.doc_postdates_changes(path);
    if let Some(doc) = server.doc(path)
        && doc.text == text
        && holds
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
            stands: server.says_unchanged(path),
        };
    }
    sync_forced(pool, s, path, text)
}

/// Open or change `path` to `text` with a new version, always.
pub(super) fn sync_forced(pool: &mut Pool, s: ServerId, path: &Path, text: &str) -> Target {
    let version = pool.open_or_change(s, path, text);
    Target {
        server: s,
        path: path.to_path_buf(),
        trigger: pool.clock(),
        trigger_at: Instant::now(),
        version: Some(version),
        stands: false,
    }
}
