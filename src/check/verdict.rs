//! What was and was not checked: each server's status and the notes that say why a
//! check is incomplete. An incomplete check never passes as clean (exit 3).

use std::path::PathBuf;
use std::time::Duration;

use crate::lsp::{Pool, ServerId};
use crate::model::ServerStatus;
use crate::wait::{Outcome, Unsettled};

use super::Kind;
use super::before::{Before, workspace_servers};
use super::files::Tracked;
use super::notify::Targets;
use super::servers::Group;
use super::waits::Waits;
use super::{Context, fmt_duration, summarize};
use crate::paths;

/// What was not checked, all told.
pub(super) struct Verdict {
    /// A wait ran out.
    pub timed_out: bool,
    /// Something the run needed went unchecked (a server not ok, a wait out, a likely
    /// dependent not checked): exit 3 unless something new was found.
    pub incomplete: bool,
    /// Why, one note each.
    pub notes: Vec<String>,
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
    let mut timed_out = judge_servers(pool, ctx, groups, waits, has_cross);
    timed_out |= judge_baselines(ctx, groups, &before.unsettled);
    let mut notes = Vec::new();
    let mut unchecked = unchecked_dependents_notes(ctx, groups);
    if kind.has_change {
        unchecked.extend(before_missing_note(ctx, &before.missing));
    }
    if !written && kind.has_change {
        unchecked.extend(unsaved_dependents_notes(ctx, groups));
    }
    if !kind.before_is_disk {
        unchecked.extend(unresolvable_notes(pool, ctx, groups, tracked));
    }
    let incomplete =
        timed_out || !unchecked.is_empty() || groups.iter().any(|g| g.status != ServerStatus::Ok);
    notes.extend(unchecked);
    notes.extend(packages_not_checked(ctx, groups, waits));
    Verdict {
        timed_out,
        incomplete,
        notes,
    }
}

/// Set each group's status and timings from how the waits ended. Returns whether a
/// wait ran out.
fn judge_servers(
    pool: &Pool,
    ctx: &Context,
    groups: &mut [Group],
    waits: &Waits,
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
            let again = if g.revived {
                "; it crashed again after its restart"
            } else {
                ""
            };
            g.detail = Some(format!("{reason}{again}; its files were not checked"));
            continue;
        }
        if let Some(why) = server.load_failure() {
            g.status = ServerStatus::Failed;
            g.detail = Some(format!(
                "it could not load the project ({why}); its files were not checked"
            ));
            continue;
        }
        let problems: Vec<String> = [
            (&waits.primary, "timed out", opts.timeout),
            (
                &waits.cross,
                "cross-file wait timed out",
                opts.cross_file_timeout,
            ),
        ]
        .into_iter()
        .filter_map(|(outcome, label, limit)| unsettled_text(ctx, outcome, s, label, limit))
        .collect();
        let unreadable: Vec<String> = [&waits.primary, &waits.cross]
            .into_iter()
            .flat_map(|outcome| unreadable_texts(ctx, outcome, s))
            .collect();
        if !problems.is_empty() || !unreadable.is_empty() {
            // A file answered in a message too large to read is not checked: the
            // status is not ok (exit 3), though no wait ran out.
            timed_out |= !problems.is_empty();
            g.status = ServerStatus::Timeout;
            g.detail = Some([unreadable, problems].concat().join("; "));
        }
    }
    timed_out
}

/// In a monorepo checked from its root, the packages a server that is not ok left
/// unchecked, one note per server: those of the files a wait left unsettled, or every
/// package when the server did not check at all (missing, failed, crashed) or did not
/// say which files it left.
fn packages_not_checked(ctx: &Context, groups: &[Group], waits: &Waits) -> Vec<String> {
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
        notes.push(format!(
            "{}: packages of the monorepo at {} not checked: {}",
            g.spec.name,
            paths::display(&m.root, &ctx.run_dir),
            summarize(&names)
        ));
    }
    notes
}

/// What server `s` left unsettled in a wait, as a note, or `None`.
fn unsettled_text(
    ctx: &Context,
    outcome: &Outcome,
    s: ServerId,
    label: &str,
    limit: Duration,
) -> Option<String> {
    let mine: Vec<&Unsettled> = outcome
        .unsettled
        .iter()
        .filter(|u| u.server == s && !u.unreadable)
        .collect();
    if mine.is_empty() {
        return None;
    }
    let paths: Vec<String> = mine
        .iter()
        .filter_map(|u| u.path.as_ref())
        .map(|p| paths::display(p, &ctx.run_dir))
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
    Some(text)
}

/// The files server `s` answered for in a wait with a message too large to read,
/// one note each: the file, why, and that it was not checked.
fn unreadable_texts(ctx: &Context, outcome: &Outcome, s: ServerId) -> Vec<String> {
    outcome
        .unsettled
        .iter()
        .filter(|u| u.server == s && u.unreadable)
        .filter_map(|u| {
            let path = paths::display(u.path.as_ref()?, &ctx.run_dir);
            Some(format!(
                "its diagnostics of {path} came in a message too large to read: {}; not \
                 checked: {path}",
                u.reason
            ))
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
        let text = format!(
            "its analysis of the workspace did not finish within {} (--startup-timeout; {}), \
             so none of what it says counts as new",
            fmt_duration(ctx.options.startup_timeout),
            u.reason
        );
        g.status = ServerStatus::Timeout;
        g.detail = Some(match g.detail.take() {
            Some(earlier) => format!("{text}; {earlier}"),
            None => text,
        });
    }
    any
}

/// The note for files whose before view did not arrive.
fn before_missing_note(ctx: &Context, missing: &[PathBuf]) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    let paths: Vec<String> = missing
        .iter()
        .map(|p| paths::display(p, &ctx.run_dir))
        .collect();
    Some(format!(
        "no before view of {} (servers too slow): what they say now cannot be told new \
         from old, so none of it counts as new; not checked: {}",
        summarize(&paths),
        summarize(&paths)
    ))
}

/// clangd 14 builds a file's includes from the disk, not from open documents: the
/// dependents of a header change it has not seen written were re-read with the old
/// header, and their "no change" proves nothing. Returns the notes, one per server.
fn unsaved_dependents_notes(ctx: &Context, groups: &[Group]) -> Vec<String> {
    groups
        .iter()
        .filter(|g| {
            g.server.is_some() && !g.spec.wait.dependents_see_unsaved && !g.dependents.is_empty()
        })
        .map(|g| {
            let paths: Vec<String> = g
                .dependents
                .iter()
                .map(|p| paths::display(p, &ctx.run_dir))
                .collect();
            format!(
                "{} reads included files from disk, so the files depending on a change \
                 not written to disk were not rechecked: {}",
                g.spec.name,
                summarize(&paths)
            )
        })
        .collect()
}

/// A review (`check --patch`, `check --changed`, `check --staged`) of a change that
/// creates or deletes a file, shown to a server that reads the disk for itself: one
/// that analyses its whole workspace and resolves imports from the disk (pyright,
/// started after the deletion), or one that watches the disk itself (tsserver): it
/// has seen the file gone (or there) before its word on the importers without the
/// change can be asked, and a deleted module's broken imports passed as already there
/// (rich and mobx in the corpus's hook mode, exit 0). Such a group's dependents are
/// said not to be compared: one note each.
fn unresolvable_notes(
    pool: &Pool,
    ctx: &Context,
    groups: &[Group],
    tracked: &[Tracked],
) -> Vec<String> {
    groups
        .iter()
        .filter(|g| {
            g.server.is_some_and(|s| {
                g.spec.wait.workspace_analysis || !pool.server(s).hears_the_disk_from_us()
            })
        })
        .filter_map(|g| {
            let moved: Vec<String> = g
                .files
                .iter()
                .map(|&i| &tracked[i])
                .filter(|t| t.before.is_none() || t.after.is_none())
                .map(|t| paths::display(&t.path, &ctx.run_dir))
                .collect();
            (!moved.is_empty()).then(|| {
                format!(
                    "{} reads the disk, where {} already is as the change leaves it: the \
                     files importing it were not compared (edit through lspgate for an \
                     exact check)",
                    g.spec.name,
                    summarize(&moved)
                )
            })
        })
        .collect()
}

/// Likely dependents a scan found and the run did not check (beyond the cap, or in a
/// root too large to read through): one note per server. Never silent.
fn unchecked_dependents_notes(ctx: &Context, groups: &[Group]) -> Vec<String> {
    let mut notes = Vec::new();
    for g in groups.iter().filter(|g| g.server.is_some()) {
        if !g.dropped.is_empty() {
            let paths: Vec<String> = g
                .dropped
                .iter()
                .map(|p| paths::display(p, &ctx.run_dir))
                .collect();
            notes.push(format!(
                "{}: {} likely dependent{} not checked (over {} per run): {}",
                g.spec.name,
                paths.len(),
                if paths.len() == 1 { "" } else { "s" },
                g.dependents.len(),
                summarize(&paths)
            ));
        }
        if g.unscanned {
            notes.push(format!(
                "{}: {} has too many files to scan for dependents; some may not have been checked",
                g.spec.name,
                paths::display(&g.root, &ctx.run_dir)
            ));
        }
    }
    notes
}
