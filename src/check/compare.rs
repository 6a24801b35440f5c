//! Before and after, per file: the run's own files (their lines mapped through the
//! edit), their likely dependents, and any other file a server reported on by
//! itself since the edit with changed results.

use std::collections::HashSet;
use std::path::PathBuf;

use crate::diff::{self, LineMap};
use crate::lsp::{Pool, ServerId};
use crate::model::{FileReport, Role};

use super::before::Before;
use super::files::Tracked;
use super::servers::Group;

/// The files of the report and how many diagnostics the edit fixed.
pub(super) struct Compared {
    pub files: Vec<FileReport>,
    pub fixed: usize,
}

pub(super) fn compare(
    pool: &Pool,
    groups: &[Group],
    tracked: &[Tracked],
    before: &Before,
    edit_clock: u64,
    has_change: bool,
) -> Compared {
    let mut out = Compared {
        files: Vec::new(),
        fixed: 0,
    };
    // By server: a file several servers check is reported by each (merged later).
    let mut reported: HashSet<(ServerId, PathBuf)> = HashSet::new();
    for g in groups {
        let Some(s) = g.server else { continue };
        // A server that died (and was not restarted) holds what it said before: not
        // this edit's diagnostics. Its files are reported as not checked.
        if pool.server(s).is_dead() {
            continue;
        }
        let sb = g.before_server.unwrap_or(s);
        // What a server says of its configuration file itself (gopls of a go.mod it
        // cannot parse, tsserver of a tsconfig option it rejects) is the edit's too.
        for &i in &g.configuration {
            let t = &tracked[i];
            if t.after.is_none() || !reported.insert((s, t.path.clone())) {
                continue;
            }
            let map = LineMap::new(
                t.before.as_deref().unwrap_or(""),
                t.after.as_deref().unwrap_or(""),
            );
            let c = classify(
                before,
                sb,
                &t.path,
                &before.of(sb, &t.path),
                &pool.server(s).diagnostics_of(&t.path),
                &map,
            );
            out.fixed += c.fixed.len();
            out.files.push(FileReport {
                path: t.path.clone(),
                role: Role::Edited,
                diagnostics: c.diagnostics,
            });
        }
        for &i in &g.files {
            let t = &tracked[i];
            let Some(after_text) = &t.after else { continue };
            let after = pool.server(s).diagnostics_of(&t.path);
            let (before_diags, map) = if has_change {
                let map = LineMap::new(t.before.as_deref().unwrap_or(""), after_text);
                (before.asked_of(sb, &t.path), map)
            } else {
                (Vec::new(), LineMap::identity())
            };
            let c = if has_change {
                classify(before, sb, &t.path, &before_diags, &after, &map)
            } else {
                diff::classify(&before_diags, &after, &map)
            };
            out.fixed += c.fixed.len();
            reported.insert((s, t.path.clone()));
            out.files.push(FileReport {
                path: t.path.clone(),
                role: Role::Edited,
                diagnostics: c.diagnostics,
            });
        }
        let mut dependents: Vec<PathBuf> = g.dependents.clone();
        // A check of files as they are has no dependents: what a server analysing its
        // workspace publishes meanwhile (its start-up analysis) is not about them.
        // A server that reports on its whole workspace, with a before view it did not
        // give in this run: every file it now says otherwise of.
        let elsewhere = g.uses_stored_baseline() || (g.seen && g.spec.wait.reports_unopened());
        if has_change && elsewhere {
            // A view the daemon held is every file's it had its word on; a stored
            // one, where the run's after view is every file's.
            let whole = !g.uses_stored_baseline() || super::stored::whole_view(g, tracked);
            dependents.extend(differing(pool, s, &g.dependents, before, whole));
            dependents.extend(g.listed.iter().cloned());
        } else if has_change {
            dependents.extend(unsolicited(pool, s, sb, &g.dependents, before, edit_clock));
            dependents.extend(g.listed.iter().cloned());
        }
        for d in dependents {
            if !reported.insert((s, d.clone())) {
                continue;
            }
            let after = pool.server(s).diagnostics_of(&d);
            let c = classify(
                before,
                sb,
                &d,
                &before.of(sb, &d),
                &after,
                &LineMap::identity(),
            );
            out.fixed += c.fixed.len();
            out.files.push(FileReport {
                path: d,
                role: Role::Dependent,
                diagnostics: c.diagnostics,
            });
        }
    }
    out
}

/// Before and after of `path`, unless its before view did not arrive, or server `sb`
/// (the one the before view was asked of) had not finished analysing its workspace
/// when it was taken: then nothing it says can be told new from old, and none of it is
/// counted as new or fixed (the run is incomplete and says so: `verdict`), never an old
/// diagnostic as new.
fn classify(
    before: &Before,
    sb: ServerId,
    path: &std::path::Path,
    before_diags: &[lsp_types::Diagnostic],
    after: &[lsp_types::Diagnostic],
    map: &LineMap,
) -> diff::Classified {
    let mut c = diff::classify(before_diags, after, map);
    let unfinished = before.unsettled.iter().any(|u| u.server == sb);
    let unheard = before.unheard.iter().any(|(u, m)| *u == sb && m == path);
    if unfinished || unheard || before.missing.iter().any(|m| m == path) {
        c.fixed.clear();
        for d in &mut c.diagnostics {
            d.new = false;
        }
    }
    c
}

/// For a server started after the edit with a stored before view (it has only seen
/// the tree after it, so everything it says is about the edit): every file whose
/// diagnostics differ from that view; where its after view is `whole` (every file's),
/// one it has nothing to say of now included. Where it is not (the scan's dependents
/// asked of typescript-language-server), a file it was not asked about is not one
/// it has nothing to say of.
fn differing(
    pool: &Pool,
    s: ServerId,
    asked: &[PathBuf],
    before: &Before,
    whole: bool,
) -> Vec<PathBuf> {
    let server = pool.server(s);
    let said = server
        .diagnostics()
        .files()
        .map(std::path::Path::to_path_buf);
    let stored = before
        .held
        .keys()
        .filter(|(b, _)| *b == s && whole)
        .map(|(_, p)| p.clone());
    let mut out: Vec<PathBuf> = said
        .chain(stored)
        .filter(|p| !asked.contains(p))
        .filter(|p| before.of(s, p) != server.diagnostics_of(p))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Files server `s` reported on by itself since the edit: every file it re-checked
/// when it analyses its whole workspace (the edit's dependents, by its own account),
/// else those whose results changed (gopls reports files nobody opened).
fn unsolicited(
    pool: &Pool,
    s: ServerId,
    sb: ServerId,
    asked: &[PathBuf],
    before: &Before,
    edit_clock: u64,
) -> Vec<PathBuf> {
    let server = pool.server(s);
    let mut out: Vec<PathBuf> = server
        .diagnostics()
        .iter()
        .filter(|(p, d)| {
            d.pushed.as_ref().is_some_and(|x| x.seq > edit_clock)
                && !asked.iter().any(|a| a == p)
                && (server.spec().wait.workspace_analysis()
                    || before
                        .held
                        .get(&(sb, p.to_path_buf()))
                        .map(|b| b != &server.diagnostics_of(p))
                        .unwrap_or(!server.diagnostics_of(p).is_empty()))
        })
        .map(|(p, _)| p.to_path_buf())
        .collect();
    out.sort();
    out
}
