//! Stored baselines in a run (docs/SPEC.md section 6, "Stored baselines"): a server
//! started for this run alone whose before tree has a stored baseline takes its
//! before view from it, and is started only once the edit is on disk, so it analyses
//! the project once; a complete run stores the after view of each server that
//! analyses its whole workspace, the before view of the next run on that tree.

use std::path::PathBuf;

use crate::baseline::{Baselines, ForRun, Lookup, Stored, Tree};
use crate::lsp::Pool;
use crate::model::Note;
use crate::paths;
use crate::servers::Dependents;

use super::before::Before;
use super::files::Tracked;
use super::servers::{self, Group};
use super::{Context, Kind};

/// Whether group `g`'s server may take or leave a stored baseline in this run: one
/// started for it alone, analysing its whole workspace, checking it after the save
/// of one written edit with rustc's word alone (rust-analyzer's `disk_only`), or able
/// to be asked about every file of its project (the TypeScript servers, clangd: a
/// run's after view is then every file's when it asked about them all, see
/// [`whole_view`]), in a run that shows it the disk or a review (a dry run's or a
/// rejected edit's after view is not the disk's), with no configuration edited (its
/// server is started afresh for that, see `configuration`).
fn eligible(ctx: &Context, g: &Group) -> bool {
    ctx.one_run
        && (g.spec.wait.workspace_analysis()
            || g.spec.wait.disk_only()
            || crate::servers::lists_its_project(&g.spec))
        && !ctx.options.dry_run
        && !ctx.options.reject
        && g.configuration.is_empty()
}

/// Read each eligible group's before tree and look up its stored baseline; a file
/// that cannot be used is named in a note and left alone.
fn look_up(
    ctx: &Context,
    groups: &mut [Group],
    tracked: &[Tracked],
    kind: Kind,
    notes: &mut Vec<Note>,
) {
    let Some(baselines) = Baselines::of(&ctx.workspace) else {
        return;
    };
    for g in groups.iter_mut().filter(|g| eligible(ctx, g)) {
        let Ok(mut tree) = Tree::read(&g.root, &g.spec) else {
            continue;
        };
        for t in tracked {
            tree.with(&t.path, t.before.as_deref().map(str::as_bytes));
        }
        let found = if kind.has_change {
            match baselines.lookup(&g.spec.name, &tree.key(&g.spec)) {
                Lookup::Found(stored) => Some(stored),
                Lookup::Absent => None,
                Lookup::Unusable { path, why } => {
                    notes.push(Note::Info(format!(
                        "the stored baseline {} of {} was not used: {why}",
                        paths::display(&path, &ctx.run_dir),
                        g.spec.name
                    )));
                    None
                }
            }
        } else {
            None
        };
        g.baseline = Some(ForRun {
            tree,
            found,
            whole: std::cell::OnceCell::new(),
        });
    }
}

/// Whether the run's after view of group `g` (one that may take or leave a stored
/// baseline) is of every file its server sees: so for a server analysing its whole
/// workspace, and for rust-analyzer checking one written edit with `cargo check
/// --workspace` alone (`disk_only`: rustc's word on every file of every crate, its
/// own analysis off); for one that can be asked about every file of its project,
/// when every file of it was a file of the run or a dependent asked about:
/// TypeScript 7's after an edit (not for a project too large to ask about whole: the
/// scan's dependents then), any such server's in `baseline`'s check of them all.
/// Worked out once a run, after its waits (it may walk the project).
pub(super) fn whole_view(g: &Group, tracked: &[Tracked]) -> bool {
    g.baseline
        .as_ref()
        .is_some_and(|b| *b.whole.get_or_init(|| asked_every_file(g, tracked)))
}

/// See [`whole_view`].
fn asked_every_file(g: &Group, tracked: &[Tracked]) -> bool {
    if g.spec.wait.workspace_analysis() || g.spec.wait.disk_only() {
        return true;
    }
    if !crate::servers::lists_its_project(&g.spec) {
        return false;
    }
    let Some(project) = crate::servers::whole_project(&g.spec, &g.root) else {
        return false;
    };
    let asked: std::collections::HashSet<&std::path::Path> = g
        .files
        .iter()
        .map(|&i| tracked[i].path.as_path())
        .chain(g.dependents.iter().map(PathBuf::as_path))
        .collect();
    project.iter().all(|f| asked.contains(f.as_path()))
}

/// Look up the groups' stored baselines ([`look_up`]), and connect the servers of
/// every group but those whose before view is stored: they start once the edit is
/// written ([`start_after_edit`]).
pub(super) fn connect_before_edit(
    pool: &mut Pool,
    ctx: &Context,
    (groups, tracked): (&mut [Group], &[Tracked]),
    kind: Kind,
    notes: &mut Vec<Note>,
) {
    look_up(ctx, groups, tracked, kind, notes);
    let now = groups.iter_mut().filter(|g| !g.uses_stored_baseline());
    servers::connect(pool, now, tracked, notes);
}

/// Once the edit is on disk: start the server of each group whose before view is
/// stored, and put that view in `before` under it. The server sees only the tree
/// after the edit: `notify` opens the run's files with their new text, and the waits
/// wait for its start-up analysis as for any cold server's.
pub(super) fn start_after_edit(
    pool: &mut Pool,
    groups: &mut [Group],
    tracked: &[Tracked],
    before: &mut Before,
    notes: &mut Vec<Note>,
) {
    let started = groups.iter_mut().filter(|g| g.uses_stored_baseline());
    servers::connect(pool, started, tracked, notes);
    for g in groups.iter_mut().filter(|g| g.uses_stored_baseline()) {
        let (Some(s), Some(found)) = (g.server, g.baseline.as_ref().and_then(|b| b.found.as_ref()))
        else {
            continue;
        };
        for (rel, diagnostics) in &found.files {
            before
                .held
                .insert((s, g.root.join(rel)), diagnostics.clone());
        }
        for &i in &g.files {
            let path = &tracked[i].path;
            if tracked[i].before.is_some() {
                before
                    .asked
                    .insert((s, path.clone()), found.of(&g.root, path));
            }
        }
        // The scan's dependents are shown as they are, and asked about after the
        // edit (`notify`), as in a run without a stored view.
        if g.spec.coverage.dependents == Dependents::Scan {
            for d in &g.dependents {
                if let Ok(text) = crate::regular::read_to_string(d) {
                    before.dependent_text.insert(d.clone(), text);
                }
            }
        }
        g.before_server = Some(s);
    }
}

/// After a complete run (not `incomplete`): store what each eligible group's server
/// now says of every file of its tree, as the baseline of the tree after the edit. A
/// baseline that cannot be stored is a note; the run's verdict stands.
pub(super) fn keep(
    pool: &Pool,
    ctx: &Context,
    (groups, tracked): (&[Group], &[Tracked]),
    kind: Kind,
    incomplete: bool,
    notes: &mut Vec<Note>,
) {
    let has_change = kind.has_change;
    let Some(baselines) = Baselines::of(&ctx.workspace).filter(|_| !incomplete) else {
        return;
    };
    for g in groups {
        let (Some(s), Some(b)) = (g.server, g.baseline.as_ref()) else {
            continue;
        };
        let server = pool.server(s);
        if server.is_dead() || server.diagnostics().any_unreadable() {
            continue;
        }
        if !whole_view(g, tracked) {
            continue;
        }
        let mut tree = b.tree.clone();
        for t in tracked {
            tree.with(&t.path, t.after.as_deref().map(str::as_bytes));
        }
        tree.with_lock_files_on_disk();
        let mut stored = Stored::default();
        for path in server.diagnostics().files() {
            let diagnostics = server.diagnostics_of(path);
            let rel = path.strip_prefix(&g.root).ok().and_then(|r| r.to_str());
            if let Some(rel) = rel.filter(|_| !diagnostics.is_empty()) {
                stored.files.insert(rel.to_owned(), diagnostics);
            }
        }
        let files = stored.files.len();
        match baselines.store(&g.spec.name, &tree.key(&g.spec), stored) {
            // Said for a check of files as they are (`baseline` is one).
            Ok(_) if !has_change => notes.push(Note::Info(format!(
                "stored a baseline of {} for {} ({files} file{} with diagnostics) for later \
                 cold runs",
                g.spec.name,
                paths::display(&g.root, &ctx.run_dir),
                if files == 1 { "" } else { "s" }
            ))),
            Ok(_) => {}
            Err(e) => notes.push(Note::Info(format!(
                "the baseline of {} could not be stored for later runs: {e}",
                g.spec.name
            ))),
        }
    }
}
