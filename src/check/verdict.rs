//! What was and was not checked: each server's status and the reasons a check is
//! incomplete. An incomplete check never passes as clean (exit 3).

use std::path::PathBuf;
use std::time::Duration;

use crate::lsp::{Pool, ServerId, Unknown};
use crate::model::{Note, Phase, RunReason, ServerReason, ServerStatus};
use crate::wait::{Outcome, Unsettled};

use super::Context;
use super::Kind;
use super::before::{Before, workspace_servers};
use super::files::Tracked;
use super::notify::Targets;
use super::servers::Group;
use super::waits::Waits;

/// What was not checked, all told (besides each group's own reasons).
pub(super) struct Verdict {
    /// A wait ran out.
    pub timed_out: bool,
    /// Why, one note each.
    pub notes: Vec<Note>,
}

/// Judge the run after its waits: each server's status, and the notes that say what
/// was not checked.
#[allow(clippy::too_many_arguments)]
pub(super) fn judge(
    pool: &Pool,
    ctx: &Context,
    groups: &mut [Group],
    waits: &Waits,
    before: &Before,
    targets: &Targets,
    (tracked, written): (&[Tracked], bool),
    kind: Kind,
) -> Verdict {
    let has_cross = !targets.cross.is_empty() || !workspace_servers(pool, groups).is_empty();
    let mut timed_out = judge_servers(pool, ctx, groups, waits, tracked, has_cross);
    timed_out |= judge_baselines(ctx, groups, &before.unsettled);
    let mut reasons = unchecked_dependents(groups);
    if kind.has_change {
        reasons.extend(before_missing(pool, before));
    }
    if !written && kind.has_change {
        reasons.extend(unsaved_dependents(pool, groups, kind));
    }
    if !kind.before_is_disk {
        reasons.extend(unresolvable(pool, groups, tracked, kind));
    }
    reasons.extend(packages_not_checked(groups, waits));
    Verdict {
        timed_out,
        notes: reasons.into_iter().map(Note::Incomplete).collect(),
    }
}

/// Set each group's status and timings from how the waits ended. Returns whether a
/// wait ran out.
fn judge_servers(
    pool: &Pool,
    ctx: &Context,
    groups: &mut [Group],
    waits: &Waits,
    tracked: &[Tracked],
    has_cross: bool,
) -> bool {
    let opts = &ctx.options;
    let mut timed_out = false;
    for g in groups {
        let Some(s) = g.server else { continue };
        let server = pool.server(s);
        g.primary_ms = Some(waits.primary.elapsed.as_millis() as u64);
        if has_cross {
            g.cross_file_ms = Some(waits.cross.elapsed.as_millis() as u64);
        }
        if let Some(reason) = server.dead_reason() {
            if g.revived && g.status == ServerStatus::Crashed {
                // Not restarted (crash backoff): `revive` said why.
                continue;
            }
            g.status = if server.initialized() {
                ServerStatus::Crashed
            } else {
                ServerStatus::Failed
            };
            g.reasons = vec![ServerReason::Crashed {
                server: g.spec.name.clone(),
                message: reason.to_string(),
                initialized: server.initialized(),
                again: g.revived,
                files: g.paths(tracked),
            }];
            continue;
        }
        if let Some(why) = server.load_failure() {
            g.status = ServerStatus::Failed;
            g.reasons = vec![ServerReason::ProjectNotLoaded {
                server: g.spec.name.clone(),
                message: why.to_string(),
                files: g.paths(tracked),
            }];
            continue;
        }
        let problems: Vec<ServerReason> = [
            (&waits.primary, Phase::Primary, opts.timeout),
            (&waits.cross, Phase::CrossFile, opts.cross_file_timeout),
        ]
        .into_iter()
        .filter_map(|(outcome, phase, limit)| unsettled(&g.spec.name, outcome, s, phase, limit))
        .collect();
        let unreadable: Vec<ServerReason> = [&waits.primary, &waits.cross]
            .into_iter()
            .flat_map(|outcome| unreadable(pool, &g.spec.name, outcome, s))
            .collect();
        if !problems.is_empty() || !unreadable.is_empty() {
            // A file answered in a message too large to read is not checked: the
            // status is not ok (exit 3), though no wait ran out.
            timed_out |= !problems.is_empty();
            g.status = ServerStatus::Timeout;
            g.reasons = [unreadable, problems].concat();
        }
    }
    timed_out
}

/// In a monorepo checked from its root, the packages a server that is not ok left
/// unchecked, one note per server: those of the files a wait left unsettled, or every
/// package when the server did not check at all (missing, failed, crashed) or did not
/// say which files it left.
fn packages_not_checked(groups: &[Group], waits: &Waits) -> Vec<RunReason> {
    let mut notes = Vec::new();
    for g in groups.iter().filter(|g| g.status != ServerStatus::Ok) {
        let Some(m) = g.monorepo() else { continue };
        let unsettled: Vec<&Unsettled> = [&waits.primary, &waits.cross]
            .into_iter()
            .flat_map(|o| o.unsettled.iter())
            .filter(|u| Some(u.server) == g.server)
            .collect();
        let names = if g.status == ServerStatus::Timeout
            && unsettled.iter().all(|u| u.path.is_some())
            && !unsettled.is_empty()
        {
            m.names_of(unsettled.iter().filter_map(|u| u.path.as_deref()))
        } else {
            m.names()
        };
        if names.is_empty() {
            continue;
        }
        notes.push(RunReason::PackagesNotChecked {
            server: g.spec.name.clone(),
            monorepo: m.root.clone(),
            packages: names,
        });
    }
    notes
}

/// What server `s` left unsettled in a wait, or `None`.
fn unsettled(
    server: &str,
    outcome: &Outcome,
    s: ServerId,
    phase: Phase,
    limit: Duration,
) -> Option<ServerReason> {
    let mine: Vec<&Unsettled> = outcome
        .unsettled
        .iter()
        .filter(|u| u.server == s && !u.unreadable)
        .collect();
    if mine.is_empty() {
        return None;
    }
    Some(ServerReason::TimedOut {
        server: server.to_string(),
        phase,
        limit_ms: limit.as_millis() as u64,
        why: mine
            .iter()
            .find(|u| u.path.is_none())
            .map(|u| u.reason.clone()),
        files: mine.iter().filter_map(|u| u.path.clone()).collect(),
    })
}

/// The files server `s` answered for in a wait and said nothing of (a message too
/// large to read, a pull it failed), one reason each.
fn unreadable(pool: &Pool, server: &str, outcome: &Outcome, s: ServerId) -> Vec<ServerReason> {
    outcome
        .unsettled
        .iter()
        .filter(|u| u.server == s && u.unreadable)
        .filter_map(|u| {
            let file = u.path.clone()?;
            let cause = pool.server(s).diagnostics().unreadable(&file)?.cause;
            let (server, why) = (server.to_string(), u.reason.clone());
            Some(match cause {
                Unknown::TooLarge => ServerReason::MessageTooLarge { server, file, why },
                Unknown::PullFailed => ServerReason::PullFailed { server, file, why },
            })
        })
        .collect()
}

/// A server analysing its whole workspace that had not finished before the edit
/// gave no complete before view: its group is marked timed out, with why. Returns
/// whether any was.
fn judge_baselines(ctx: &Context, groups: &mut [Group], unsettled: &[Unsettled]) -> bool {
    let mut any = false;
    for g in groups {
        let Some(s) = g.server else { continue };
        let Some(u) = unsettled.iter().find(|u| u.server == s) else {
            continue;
        };
        any = true;
        g.status = ServerStatus::Timeout;
        g.reasons.insert(
            0,
            ServerReason::WorkspaceUnfinished {
                server: g.spec.name.clone(),
                limit_ms: ctx.options.startup_timeout.as_millis() as u64,
                why: u.reason.clone(),
            },
        );
    }
    any
}

/// Files whose before view did not arrive.
fn before_missing(pool: &Pool, before: &Before) -> Option<RunReason> {
    // A document the view had no word on says nothing that could be new when it
    // says nothing now.
    let unheard = before
        .unheard
        .iter()
        .filter(|(s, path)| !pool.server(*s).diagnostics_of(path).is_empty())
        .map(|(_, path)| path.clone());
    let files: Vec<PathBuf> = before.missing.iter().cloned().chain(unheard).collect();
    (!files.is_empty()).then_some(RunReason::BeforeViewMissing { files })
}

/// Whether group `g`'s server saw the tree after the change alone, as it is on disk:
/// started after it with a stored before view, in a review of the disk. What it
/// reads of the disk is then the change, and its before view never came from it.
fn after_tree_alone(g: &Group, kind: Kind) -> bool {
    g.uses_stored_baseline() && kind.after_is_disk
}

/// clangd 14 builds a file's includes from the disk, not from open documents (15 and
/// later are told to read them: `servers::Launch`): the dependents of a header change
/// it has not seen written were re-read with the old header, and their "no change"
/// proves nothing. One reason per server; none for one that saw the tree after the
/// change alone ([`after_tree_alone`]: lua's clean header change reviewed with a
/// stored baseline was exit 3 for nothing).
fn unsaved_dependents(pool: &Pool, groups: &[Group], kind: Kind) -> Vec<RunReason> {
    groups
        .iter()
        .filter(|g| {
            g.server
                .is_some_and(|s| !pool.server(s).dependents_see_unsaved())
                && !g.seen
                && !g.dependents.is_empty()
                && !after_tree_alone(g, kind)
        })
        .map(|g| RunReason::DependentsUnsaved {
            server: g.spec.name.clone(),
            files: g.dependents.clone(),
        })
        .collect()
}

/// A review (`check --patch`, `check --changed`, `check --staged`) of a change that
/// creates or deletes a file, shown to a server that reads the disk for itself: one
/// that analyses its whole workspace and resolves imports from the disk (pyright,
/// started after the deletion), or one that watches the disk itself (an older
/// tsserver, see `servers::typescript`): it
/// has seen the file gone (or there) before its word on the importers without the
/// change can be asked, and a deleted module's broken imports passed as already there
/// (rich and mobx in the corpus's hook mode, exit 0). Such a group's dependents are
/// said not to be compared: one reason each. Not for one that saw the tree after the
/// change alone ([`after_tree_alone`]), whose before view did not come from it.
fn unresolvable(pool: &Pool, groups: &[Group], tracked: &[Tracked], kind: Kind) -> Vec<RunReason> {
    groups
        .iter()
        .filter(|g| {
            // From a view the daemon held, the before view is sound, but a server that
            // watches the disk itself may answer for the importers before it has seen
            // the file gone: mobx's deleted module under a typescript-language-server
            // whose tsserver watched the disk, hook mode with two busy loops, exit 0 in
            // 1 of 2 runs.
            !after_tree_alone(g, kind)
                && g.server.is_some_and(|s| {
                    let own_watcher = !pool.server(s).hears_the_disk_from_us();
                    own_watcher || (!g.seen && g.spec.wait.workspace_analysis())
                })
        })
        .filter_map(|g| {
            let moved: Vec<PathBuf> = g
                .files
                .iter()
                .map(|&i| &tracked[i])
                .filter(|t| t.before.is_none() || t.after.is_none())
                .map(|t| t.path.clone())
                .collect();
            (!moved.is_empty()).then(|| RunReason::DiskAlreadyChanged {
                server: g.spec.name.clone(),
                files: moved,
            })
        })
        .collect()
}

/// Likely dependents a scan found and the run did not check (beyond the cap, or in a
/// root too large to read through): one reason per server. Never silent.
fn unchecked_dependents(groups: &[Group]) -> Vec<RunReason> {
    let mut reasons = Vec::new();
    for g in groups.iter().filter(|g| g.server.is_some()) {
        if !g.dropped.is_empty() {
            reasons.push(RunReason::DependentsOverCap {
                server: g.spec.name.clone(),
                cap: g.dependents.len(),
                files: g.dropped.clone(),
            });
        }
        if g.unscanned {
            reasons.push(RunReason::DependentsUnscanned {
                server: g.spec.name.clone(),
                root: g.root.clone(),
            });
        }
    }
    reasons
}
