//! The primary wait (the run's own files), then the cross-file wait (their likely
//! dependents), each bounded by its own timeout. A server that crashes during either
//! is restarted once and the wait made again for its files, within what is left of
//! the same deadline.

use std::time::Instant;

use crate::lsp::Pool;
use crate::model::{Note, Options};
use crate::wait::{self, Outcome};

use super::before::workspace_servers;
use super::files::Tracked;
use super::notify::Targets;
use super::servers::{Group, again, revive_crashed, settle_reviving};

/// How the waits after the edit ended.
pub(super) struct Waits {
    pub primary: Outcome,
    pub cross: Outcome,
    /// From the edit to the last dependent checked: the dependents are asked for
    /// during the primary wait already, so the cross-file phase alone says little.
    pub cross_secs: f64,
}

pub(super) fn wait_after_edit(
    pool: &mut Pool,
    opts: &Options,
    groups: &mut [Group],
    targets: &mut Targets,
    tracked: &[Tracked],
    notes: &mut Vec<Note>,
) -> Waits {
    let notified = Instant::now();
    let Targets { primary, cross, .. } = targets;
    // A server started after the edit (its before view stored) is cold: its start-up
    // is in this wait, so the start-up budget.
    let started: Vec<_> = groups
        .iter()
        .filter(|g| g.uses_stored_baseline())
        .filter_map(|g| g.server)
        .collect();
    let primary_deadline = Instant::now()
        + if started.is_empty() {
            opts.timeout
        } else {
            opts.startup_timeout
        };
    let mut primary_outcome = settle_reviving(
        pool,
        groups,
        tracked,
        notes,
        primary,
        cross,
        primary_deadline,
    );
    let cross_deadline = Instant::now() + opts.cross_file_timeout;
    let mut cross_outcome = if cross.is_empty() {
        Outcome::default()
    } else {
        let deadline = cross_deadline;
        let first = wait::settle(pool, cross, deadline);
        if revive_crashed(
            pool,
            groups,
            tracked,
            &mut [&mut *primary, &mut *cross],
            notes,
        ) {
            // The restarted server's primary files are settled again first: its
            // earlier answers died with it.
            let primary_again = wait::settle(pool, primary, deadline);
            let cross_again = wait::settle(pool, cross, deadline);
            primary_outcome.unsettled = primary_again.unsettled;
            again(first, cross_again)
        } else {
            first
        }
    };
    // A server analysing its whole workspace re-checks the dependents by itself:
    // done when it says so (the files it was told of republished, its progress
    // ended). One asked about every file (TypeScript 7) was done with its answers.
    let analysing_from_start: Vec<_> = started
        .iter()
        .copied()
        .filter(|&s| pool.server(s).spec().wait.workspace_analysis())
        .collect();
    if !analysing_from_start.is_empty() {
        let deadline = Instant::now() + opts.startup_timeout;
        let settled = wait::settle_first_analysis(pool, &analysing_from_start, deadline);
        cross_outcome.unsettled.extend(settled.unsettled);
    }
    let analysing = workspace_servers(pool, groups);
    if !analysing.is_empty() {
        let started = Instant::now();
        let settled = wait::settle_answered_servers(pool, &analysing, cross_deadline);
        cross_outcome.unsettled.extend(settled.unsettled);
        cross_outcome.elapsed = cross_outcome.elapsed.max(started.elapsed());
    }
    Waits {
        primary: primary_outcome,
        cross: cross_outcome,
        cross_secs: notified.elapsed().as_secs_f64(),
    }
}
