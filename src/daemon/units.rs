//! The units (and headers) a warm daemon shows clangd between runs.
//!
//! clangd checks open files only and has no project-wide mode (see `servers::clangd`):
//! the before view of a header's includers would be a build of each, and the edit a
//! second one. So after a server's first run the daemon queues every unit of its
//! project's compilation database, then, for a clangd that reads included files from
//! the disk, the headers under its root ([`headers_beside`]), at most
//! `coverage.open_units` in all, and opens them a few at a time, the next ones once
//! clangd has published the last ones: what it says of them is the baseline of the
//! next edit's dependents, and a run that comes meanwhile finds clangd busy with at
//! most [`BUILDING`] of them, not all.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::lsp::{Pool, ServerId};
use crate::servers;

/// Units opened and not yet published, at most: clangd builds as many files at once
/// as the machine has cores (2 here).
const BUILDING: usize = 2;

#[derive(Default)]
pub struct Units {
    queues: HashMap<ServerId, Queue>,
    /// Servers whose units were queued, or found not to be wanted.
    seen: HashSet<ServerId>,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<PathBuf>,
    building: Vec<PathBuf>,
}

impl Units {
    /// Queue the units of each live server that wants them and was not seen yet.
    /// Returns what to log.
    pub fn queue(&mut self, pool: &Pool) -> Vec<String> {
        let mut said = Vec::new();
        for i in pool.ids() {
            let server = pool.server(i);
            let max = server.spec().coverage.open_units;
            if max == 0 || server.is_dead() || !self.seen.insert(i) {
                continue;
            }
            match servers::project_units(server.spec(), server.root()) {
                Err(why) => said.push(format!("{}: no units to open: {why}", server.name())),
                Ok(units) if units.len() > max => said.push(format!(
                    "{}: {} units in the compilation database, more than {max}: none opened",
                    server.name(),
                    units.len()
                )),
                Ok(units) => {
                    // One that builds includers from the headers it has open (clangd
                    // 15 and later) is shown a header's old text when asked.
                    let headers = if server.dependents_see_unsaved() {
                        Vec::new()
                    } else {
                        headers_beside(server.spec(), server.root(), &units)
                    };
                    let room = max - units.len();
                    said.push(format!(
                        "{}: opening the {} units of its project and {} of its {} headers",
                        server.name(),
                        units.len(),
                        headers.len().min(room),
                        headers.len()
                    ));
                    let waiting = units
                        .into_iter()
                        .chain(headers.into_iter().take(room))
                        .filter(|u| server.doc(u).is_none())
                        .collect();
                    self.queues.insert(
                        i,
                        Queue {
                            waiting,
                            building: Vec::new(),
                        },
                    );
                }
            }
        }
        said
    }

    /// Open every unit still queued and take their publishes, until `deadline`: a
    /// view of the tree made now (a `check --changed` with nothing changed, the first
    /// of a session) then has the word on each, where the next change, written at
    /// once, would leave it without (the view learns nothing once the disk changed).
    pub fn finish(&mut self, pool: &mut Pool, deadline: Instant) {
        self.open_some(pool);
        while !self.queues.is_empty() && Instant::now() < deadline {
            pool.pump(deadline.min(Instant::now() + Duration::from_millis(100)));
            self.open_some(pool);
        }
    }

    /// A run is about to start: the units opened and not yet heard of. The run waits
    /// for the word of those it asks about (a dependent of its edit: the word is its
    /// before view, and closing it would throw away the part of its build clangd had
    /// done, lua's `lvm.c` 0.15 s of its 0.2 s) and closes the others before it shows
    /// the edit (`check::Context::opened_unheard`): a run goes first, and idle work
    /// yields at once. [`Units::open_some`] queues those closed again, first.
    pub fn unheard(&self, pool: &Pool) -> Vec<(ServerId, PathBuf)> {
        let mut unheard = Vec::new();
        for (&i, queue) in &self.queues {
            let server = pool.server(i);
            unheard.extend(
                queue
                    .building
                    .iter()
                    .filter(|u| server.doc(u).is_some() && !server.diagnostics().contains(u))
                    .map(|u| (i, u.clone())),
            );
        }
        unheard
    }

    /// Open the next queued units of each server, keeping at most [`BUILDING`] of
    /// those opened without a publish yet. A unit opened by a run meanwhile is left
    /// as the run left it.
    pub fn open_some(&mut self, pool: &mut Pool) {
        self.queues.retain(|&i, queue| {
            if pool.server(i).is_dead() {
                return false;
            }
            let server = pool.server(i);
            // One a run closed unheard (`Units::unheard`) is opened again first.
            let (open, closed): (Vec<PathBuf>, Vec<PathBuf>) = queue
                .building
                .drain(..)
                .partition(|u| server.doc(u).is_some());
            for unit in closed.into_iter().rev() {
                queue.waiting.push_front(unit);
            }
            queue.building = open
                .into_iter()
                .filter(|u| !server.diagnostics().contains(u))
                .collect();
            while queue.building.len() < BUILDING
                && let Some(unit) = queue.waiting.pop_front()
            {
                if pool.server(i).doc(&unit).is_some() {
                    continue;
                }
                if let Ok(text) = fs::read_to_string(&unit) {
                    pool.open_or_change(i, &unit, &text);
                    queue.building.push(unit);
                }
            }
            !queue.waiting.is_empty() || !queue.building.is_empty()
        });
    }
}

/// The headers under `root` (`servers::project_headers`) but any of its `units`,
/// opened after them where clangd reads included files from the disk (clangd 14):
/// what it says of a header opened is its before view, and a header including an
/// edited one is a likely dependent. Without their word held, a change behind the
/// daemon's back had every header asked with its old text, which clangd 14 built
/// from the changed disk: lua's `lzio.h` renamed a type, and 4 of the 5 files it
/// broke went unreported (exit 1, with a note); with them, 15 of 15. (clangd 19,
/// shown the old text of the header asked, was exact without them, and slower with
/// them: hook mode 1.43 s against 0.92 s.)
fn headers_beside(
    spec: &servers::ServerSpec,
    root: &std::path::Path,
    units: &[PathBuf],
) -> Vec<PathBuf> {
    servers::project_headers(spec, root)
        .unwrap_or_default()
        .into_iter()
        .filter(|f| !units.contains(f))
        .collect()
}
