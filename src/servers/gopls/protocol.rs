//! gopls: what it says beyond the protocol.
//!
//! A workspace it cannot load (a `go.mod` it cannot parse, a module it cannot find)
//! is shown as a work-done progress titled "Error loading workspace" that begins and
//! stays open until the error is mended (gopls's `showCriticalErrorStatus`, with
//! the error as its message): a standing report, not work under way. Waiting for its
//! end ran out every timeout of the run.

/// The title of gopls's progress that reports a workspace it could not load.
pub const WORKSPACE_LOAD_FAILURE: &str = "Error loading workspace";
