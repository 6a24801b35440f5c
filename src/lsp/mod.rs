//! The LSP client: a [`Pool`] of running language servers, each a [`Server`] with
//! its documents, the diagnostics it published or answered, and its progress.
//!
//! The pool owns every server's state and is driven by one thread: [`Pool::pump`]
//! takes the next message from any server, answers the server's requests at once,
//! and records what it said. Waiting (in `wait`) is pumping until a condition over
//! this state holds or a deadline passes, so nothing here blocks without a bound.
//!
//! The files, each depending only on those above it:
//!
//! - `transport`: a server process (or a peer in memory) and the threads that frame
//!   its messages onto the pool's channel;
//! - `protocol`: typed requests and notifications over `lsp_types`, error codes;
//!   `encoding`: positions as UTF-16 (and `uri`, paths as URIs, is the crate's);
//! - `diagnostics`: the per-file store of what a server pushed and answered, and the
//!   publishes a workspace-analysis server owes; `cache` bounds it;
//! - `server`: one server, its private state and lifecycle (initializing, ready,
//!   dead, retired), what it sends (`server/incoming`) and the `initialize` exchange
//!   (`server/initialize`);
//! - `restart`: what counts as a crash and how long a crash-looping server waits;
//! - `pool`: [`ServerId`], every server, the clock, and every change to a server;
//! - `seen`: what the servers had said when a run ended, kept apart from the live
//!   store ([`SeenView`]).
//!
//! `lsp` knows nothing of checks, waits, the daemon or reports: they read servers
//! through `&Server` and change them through the pool.

mod cache;
pub(crate) mod diagnostics;
pub(crate) mod encoding;
mod pool;
pub(crate) mod protocol;
pub(crate) mod restart;
pub(crate) mod seen;
mod server;
pub mod transport;
pub(crate) use crate::uri;

pub use diagnostics::{FileDiagnostics, Published, Pulled, Store, Unknown};
pub use lsp_types::FileChangeType;
pub use pool::{Observer, Pool, ServerId};
pub use seen::{SeenView, SeenViews, ServerSeen};
pub use server::{Document, Lifecycle, Progress, Server};

/// What a daemon streams to a CLI drawing the status line, and what an in-process
/// run's watcher gets: the live servers and the first progress of each.
pub fn busy(servers: &[Server]) -> Vec<crate::model::progress::Busy> {
    servers
        .iter()
        .filter(|s| !s.is_dead())
        .map(|s| crate::model::progress::Busy {
            server: s.name().to_string(),
            progress: s.progress().next().cloned(),
        })
        .collect()
}
