//! Telling the servers about the edit as an editor would: the new text of each file
//! (open or change, save when written), created and deleted files announced, and the
//! likely dependents pulled again, or sent again to a server that pushes, so that
//! their diagnostics are said again.

use std::path::{Path, PathBuf};

use crate::lsp::{FileChangeType, Pool, ServerId};
use crate::wait::Target;

use super::before::{Before, sync, sync_forced};
use super::files::Tracked;
use super::servers::Group;

/// What the waits wait for after the servers were told.
pub(super) struct Targets {
    /// The run's own files.
    pub primary: Vec<Target>,
    /// Their likely dependents.
    pub cross: Vec<Target>,
    /// The pool clock when the edit was shown: a publish after it is about the edit.
    pub edit_clock: u64,
}

/// What the servers are told of.
pub(super) struct Edit {
    /// The pool clock when the edit was made.
    pub clock: u64,
    /// The edit is on disk (so the servers are told of the save).
    pub written: bool,
    /// The run changes something whose dependents must be said again.
    pub has_change: bool,
}

impl Edit {
    /// The edit as made now, at the pool's clock.
    pub fn now(pool: &Pool, written: bool, has_change: bool) -> Edit {
        Edit {
            clock: pool.clock(),
            written,
            has_change,
        }
    }
}

/// Notify every group's server of its files' new text.
pub(super) fn notify(
    pool: &mut Pool,
    groups: &[Group],
    tracked: &[Tracked],
    before: &Before,
    edit: Edit,
) -> Targets {
    let Edit {
        clock,
        written,
        has_change,
    } = edit;
    let mut targets = Targets {
        primary: Vec::new(),
        cross: Vec::new(),
        edit_clock: clock,
    };
    for g in groups {
        let Some(s) = g.server else { continue };
        let mut saved = false;
        // clangd may not see that a file changed (see
        // `Server::mark_size_kept`): every file sent from here on is rebuilt afresh.
        // A save has it go over every open file again without that, and its newest
        // request for a file replaces an older one: the saves go first, so that
        // the forced rebuilds are the newest.
        let saves_first = written
            && g.spec.wait.force_rebuild_unchanged
            && g.files.iter().any(|&i| tracked[i].kept_size_and_second());
        if saves_first {
            pool.mark_size_kept(s);
            for &i in &g.files {
                let path = &tracked[i].path;
                if tracked[i].after.is_some() && pool.server(s).doc(path).is_some() {
                    pool.save(s, path);
                    saved = true;
                }
            }
        }
        // One started after the edit (its before view stored) has seen no file
        // other than as it is now: nothing changed on disk for it, and its check at
        // start is of the tree after the edit. A check asked for while it loads was
        // cancelled and restarted by rust-analyzer, and its end taken for the check's
        // (itertools' deleted module passed as clean: exit 0, its error unseen).
        let tells_the_disk = !g.uses_stored_baseline();
        // A created file is announced before it is opened, as it came: tsserver
        // ignores the creation of a file already open, which then stays out of its
        // tsconfig project, and a module put back after a deletion stayed missing to
        // its importers (mobx's deleted module in hook mode, run twice: exit 0).
        let created: Vec<(PathBuf, FileChangeType)> = g
            .files
            .iter()
            .map(|&i| &tracked[i])
            .filter(|t| has_change && t.after.is_some() && t.appears() && tells_the_disk)
            .map(|t| (t.path.clone(), FileChangeType::CREATED))
            .collect();
        pool.watched(s, &created);
        let mut watched: Vec<(PathBuf, FileChangeType)> = Vec::new();
        for &i in &g.files {
            let t = &tracked[i];
            if let Some(old) = &t.renamed_from {
                pool.close(s, old);
                watched.push((old.clone(), FileChangeType::DELETED));
            }
            match &t.after {
                Some(text) if !has_change => {
                    targets.primary.extend(unchanged(pool, g, s, &t.path, text));
                }
                Some(text) => {
                    // pyright (workspace mode) takes an opened file's text for the
                    // disk's and re-analyses nothing else on an open: a file it has
                    // not open is opened as it was, then changed, as an editor would.
                    // One started after the edit has only ever seen the new text.
                    if let Some(before) = &t.before
                        && g.spec.wait.workspace_analysis()
                        && !g.uses_stored_baseline()
                        && pool.server(s).doc(&t.path).is_none()
                    {
                        pool.open_or_change(s, &t.path, before);
                    }
                    targets.primary.push(sync_forced(pool, s, &t.path, text));
                    if written && !saves_first {
                        pool.save(s, &t.path);
                        saved = true;
                    }
                }
                None => {
                    pool.close(s, &t.path);
                    watched.push((t.path.clone(), FileChangeType::DELETED));
                }
            }
        }
        if !tells_the_disk {
            watched.clear();
        }
        pool.watched(s, &watched);
        if written && !saved && !watched.is_empty() {
            // Only deletions: no save to start the check a save would (rust-analyzer).
            pool.run_check(s);
        }
        if has_change {
            pool.saw_edit(s);
            // The dependents' text did not change, but their diagnostics may have:
            // a pull sent now answers for the edit; a server that pushes is sent the
            // text again, with a new version, which makes it publish for them again
            // and tells us which publish is the fresh one.
            for d in &g.dependents {
                let text = before.dependent_text.get(d);
                if super::servers::pulled_unopened(pool, g, s, d) || holds_to_pull(pool, s, d, text)
                {
                    targets.cross.push(Target::pulled(pool, s, d));
                } else if let Some(text) = text {
                    targets.cross.push(sync_forced(pool, s, d, text));
                }
            }
        }
        // A server started after the edit with no file of it to open (it only deleted
        // files) is shown one of its root, as a cold one is for a before view: the
        // positive sign that its start-up analysis has begun. So is a warm one whose
        // before view was seen: nothing else shows it busy since (gopls, told only of
        // go-cmp's deleted file, looked settled at once: exit 0, its 4 breaks unseen),
        // unless it brackets its analyses: then the end of the one it owes is the sign.
        let asked_nothing = g.uses_stored_baseline() || g.seen;
        if asked_nothing
            && !g.spec.brackets_analyses()
            && !targets.primary.iter().any(|t| t.server == s)
        {
            let near = g.files.first().map(|&i| tracked[i].path.as_path());
            targets
                .primary
                .extend(super::before::probe(pool, s, g, near));
        }
    }
    targets
}

/// Whether server `s` pulls and holds `path` open with `text`: then a pull after the
/// edit answers for it, and its text is not sent again. Sent again, every such file
/// is parsed afresh: tsserver (typescript-language-server) re-parsed mobx's 53
/// dependents of a changed module at each run.
fn holds_to_pull(pool: &Pool, s: ServerId, path: &Path, text: Option<&String>) -> bool {
    let server = pool.server(s);
    server.pulls() && text.is_some_and(|t| server.doc(path).is_some_and(|d| &d.text == t))
}

/// A file a check looks at unchanged: the server's word on the text it holds, just
/// asked for in the before view, stands, so nothing is sent unless its view differs.
/// Sending the same text again makes a server analysing its workspace re-check every
/// importer (pyright: 4 s of a 12 s cold check of a 78-module package). A file such a
/// server analysed without having it open needs no target at all.
fn unchanged(pool: &mut Pool, g: &Group, s: ServerId, path: &Path, text: &str) -> Option<Target> {
    let server = pool.server(s);
    if g.spec.wait.workspace_analysis()
        && server.doc(path).is_none()
        && server.diagnostics().contains(path)
    {
        return None;
    }
    Some(sync(pool, s, path, text))
}
