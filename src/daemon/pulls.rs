//! The files a warm daemon asks the TypeScript servers about between runs.
//!
//! typescript-language-server and TypeScript 7 have no project-wide analysis (see
//! `servers::typescript`): asked only when an edit comes, the run pays then for the
//! before view of every dependent (mobx, the first edit after the daemon sat idle:
//! 1.55 s, as long as `tsc`). So after each run the daemon pulls, without opening
//! them, the files of their projects (at most `coverage.idle_pulls`) whose answer no
//! longer holds, [`ASKING`] at a time: a run that comes meanwhile waits behind at most
//! those (nothing is asked while a run goes: the main loop asks, and the queue is made
//! afresh after each run), and finds the answers already in as its before view.
//!
//! tsserver answers only for the files of the projects it loaded, one per tsconfig,
//! each loaded when a file of it is opened: the pull of a file of another package of a
//! monorepo fails (trpc: 62 of 143 files, one run after the first check). Once a pass
//! is done, one of the files that failed is opened, which loads its project, and the
//! others are asked again; at most [`OPENED_PER_PASS`] a pass.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

use crate::lsp::{Pool, ServerId};
use crate::servers;

use super::protocol::PullStatus;

/// Files pulled at once, at most: tsserver answers one request at a time, so two keep
/// it busy without a gap and hold a run back by at most two files' checks.
const ASKING: usize = 2;

/// Files opened a pass, at most, to load the projects of those whose pull failed.
const OPENED_PER_PASS: usize = 8;

#[derive(Default)]
pub struct IdlePulls {
    servers: HashMap<ServerId, Project>,
}

/// One server's project, as listed after the last run.
#[derive(Default)]
struct Project {
    /// Every file of it; empty when it has too many (`skipped` says why).
    files: Vec<PathBuf>,
    waiting: VecDeque<PathBuf>,
    asking: Vec<PathBuf>,
    /// Those whose pull failed this pass: in no project the server loaded.
    failed: Vec<PathBuf>,
    /// Files opened this pass to load a project.
    opened: usize,
    skipped: Option<String>,
}

impl IdlePulls {
    /// After a run: list the project of each live server that wants its files pulled,
    /// and queue those whose answer no longer holds. Returns what to log.
    pub fn queue(&mut self, pool: &Pool) -> Vec<String> {
        let mut said = Vec::new();
        self.servers.clear();
        for i in pool.ids() {
            let server = pool.server(i);
            if server.spec().coverage.idle_pulls == 0
                || server.is_dead()
                || !server.initialized()
                || !server.pulls()
            {
                continue;
            }
            let project = match servers::files_to_pull(server.spec(), server.root()) {
                Ok(files) => {
                    let waiting: VecDeque<PathBuf> = files
                        .iter()
                        .filter(|f| server.doc(f).is_none() && !server.pull_holds(f))
                        .cloned()
                        .collect();
                    if !waiting.is_empty() {
                        said.push(format!(
                            "{}: pulling {} of the {} files of its project",
                            server.name(),
                            waiting.len(),
                            files.len()
                        ));
                    }
                    Project {
                        files,
                        waiting,
                        ..Project::default()
                    }
                }
                Err(why) => {
                    said.push(format!(
                        "{}: pulling no file between runs: {why}",
                        server.name()
                    ));
                    Project {
                        skipped: Some(why),
                        ..Project::default()
                    }
                }
            };
            self.servers.insert(i, project);
        }
        said
    }

    /// Pull the next queued files of each server, keeping at most [`ASKING`] under
    /// way. A file a run opened meanwhile, or whose answer holds, is left out.
    pub fn ask_some(&mut self, pool: &mut Pool) {
        for (&i, project) in self.servers.iter_mut() {
            if pool.server(i).is_dead() {
                project.waiting.clear();
                project.asking.clear();
                continue;
            }
            let server = pool.server(i);
            let (asking, done): (Vec<_>, Vec<_>) = project
                .asking
                .drain(..)
                .partition(|f| server.pull_in_flight(f));
            project.asking = asking;
            project
                .failed
                .extend(done.into_iter().filter(|f| !server.was_pulled(f)));
            if project.waiting.is_empty() && project.asking.is_empty() {
                load_a_project(pool, i, project);
            }
            while project.asking.len() < ASKING
                && let Some(file) = project.waiting.pop_front()
            {
                let server = pool.server(i);
                if server.doc(&file).is_some()
                    || server.pull_holds(&file)
                    || server.pull_in_flight(&file)
                    || !file.is_file()
                {
                    continue;
                }
                pool.try_pull(i, &file);
                project.asking.push(file);
            }
        }
    }

    /// For `daemon status`: how much of server `i`'s project it holds an answer for.
    pub fn status(&self, pool: &Pool, i: ServerId) -> Option<PullStatus> {
        let project = self.servers.get(&i)?;
        let server = pool.server(i);
        Some(PullStatus {
            files: project.files.len(),
            held: project
                .files
                .iter()
                .filter(|f| server.pull_holds(f))
                .count(),
            waiting: project.waiting.len() + project.asking.len(),
            budget: server.spec().coverage.idle_pulls,
            skipped: project.skipped.clone(),
        })
    }
}

/// A pass over `project` is done and some of its files failed: open the first of them,
/// which has tsserver load a project that holds it, and ask the others again.
fn load_a_project(pool: &mut Pool, i: ServerId, project: &mut Project) {
    if project.failed.is_empty() || project.opened == OPENED_PER_PASS {
        return;
    }
    let first = project.failed.remove(0);
    if let Ok(text) = crate::regular::read_to_string(&first) {
        pool.open_or_change(i, &first, &text);
        project.opened += 1;
    }
    project.waiting.extend(project.failed.drain(..));
}
