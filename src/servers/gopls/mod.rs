//! gopls: its entry, its waits, what an untrusted project may set for it, and how
//! its version is asked for.

pub mod protocol;

use std::time::Duration;

use serde_json::json;

use super::{Allow, AllowList, Delivery, ServerSpec, WaitProfile, entry, languages, strs};

pub(super) const GOPLS: &str = "gopls";

/// The arguments that print its version: a `version` subcommand, since the gopls of
/// Debian 12 rejects `--version` outright.
pub(super) const VERSION_ARGS: &[&str] = &["version"];

/// What gopls reads as the configuration of a module or workspace: its module path
/// and requirements (a renamed module breaks every import of it), and the sums that
/// vouch for them.
const CONFIGURATION: &[&str] = &["go.mod", "go.sum", "go.work", "go.work.sum"];

/// gopls's project-wide way: a workspace analysis whose every diagnosis, the one of
/// its initial load included, it brackets when told [`protocol::BRACKET_OPTION`].
pub(super) const ANALYSIS: Delivery = Delivery::WorkspaceAnalysis {
    first_analysis_quiet: None,
    typing_backoff: false,
    brackets_analyses: true,
};

pub(super) fn gopls() -> ServerSpec {
    ServerSpec {
        root_markers: strs(&["go.work", "go.mod"]),
        // gopls diagnoses a change in two passes by default: the changed
        // packages at once, then everything (with analysis) after a 250 ms
        // debounce (`diagnosticsDelay`). With no delay it makes one full pass
        // and publishes every file in one burst, each with its document's
        // version, in a few milliseconds.
        settings: json!({ "gopls": { "diagnosticsDelay": "0s" } }),
        // Each diagnosis bracketed by a progress that ends once it has published:
        // the end of every bracket owed settles it (see `protocol`).
        initialization_options: Some(json!({ protocol::BRACKET_OPTION: true })),
        wait: WaitProfile {
            quiet: Duration::from_millis(400),
            // One pass's publishes were measured within the same millisecond.
            confirmed_quiet: Some(Duration::from_millis(10)),
            unpublished_after: Duration::from_millis(600),
            // gopls diagnoses every package of the workspace when it loads it and
            // re-diagnoses a change's reverse dependencies, open or not (measured:
            // unopened files of other packages republished in the change's pass),
            // so what it published is the before view and the dependents: opening
            // them made it reload package metadata (`go list`), 0.8 s a run on a
            // 34-file module.
            delivery: ANALYSIS,
            ..WaitProfile::default()
        },
        install_hint: "apt-get install gopls golang-go".into(),
        coverage: super::Coverage {
            configuration: strs(CONFIGURATION),
            // gopls at a `go.work` is one view over every module it uses: an edit in
            // one is re-diagnosed in the others that import it.
            monorepos: vec![crate::workspace::MonorepoKind::GoWork],
            ..super::Coverage::default()
        },
        ..entry(GOPLS, "gopls", &[], languages::GO, "go")
    }
}

/// Whether `spec` tells the server to bracket its diagnoses ([`protocol::BRACKET_OPTION`]
/// on in its initialization options, as built in).
pub(super) fn told_to_bracket(spec: &ServerSpec) -> bool {
    spec.initialization_options
        .as_ref()
        .and_then(|o| o.get(protocol::BRACKET_OPTION))
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}

/// The keys of [`ALLOWED`], each after `$prefix`.
macro_rules! keys {
    ($prefix:literal) => {
        &[
            (concat!($prefix, "analyses"), Allow::Tree),
            (concat!($prefix, "staticcheck"), Allow::Value),
            (concat!($prefix, "codelenses"), Allow::Tree),
            (concat!($prefix, "hints"), Allow::Tree),
            (concat!($prefix, "annotations"), Allow::Tree),
            (concat!($prefix, "semanticTokens"), Allow::Value),
            (concat!($prefix, "usePlaceholders"), Allow::Value),
            (concat!($prefix, "completeUnimported"), Allow::Value),
            (concat!($prefix, "deepCompletion"), Allow::Value),
            (concat!($prefix, "matcher"), Allow::Value),
            (concat!($prefix, "diagnosticsDelay"), Allow::Value),
            (concat!($prefix, "diagnosticsTrigger"), Allow::Value),
            (concat!($prefix, "analysisProgressReporting"), Allow::Value),
            (concat!($prefix, "gofumpt"), Allow::Value),
            (concat!($prefix, "local"), Allow::Value),
            (concat!($prefix, "directoryFilters"), Allow::Value),
            (concat!($prefix, "standaloneTags"), Allow::Value),
            (concat!($prefix, "templateExtensions"), Allow::Value),
            (concat!($prefix, "linksInHover"), Allow::Value),
            (concat!($prefix, "importShortcut"), Allow::Value),
            (concat!($prefix, "symbolMatcher"), Allow::Value),
            (concat!($prefix, "symbolStyle"), Allow::Value),
            (concat!($prefix, "symbolScope"), Allow::Value),
        ]
    };
}

/// What an untrusted project may set, under `gopls` in settings and at the top of
/// its initialization options. Not `buildFlags` (`-toolexec`), `env`,
/// `allowImplicitNetworkAccess`, `allowModfileModifications`, `vulncheck`,
/// `expandWorkspaceToModule`.
pub(super) const ALLOWED: AllowList = AllowList {
    settings: keys!("gopls."),
    initialization_options: keys!(""),
};

/// `project-wide` for gopls: it reports unopened files by itself whatever it is told;
/// off, lspgate scans for the dependents and opens them instead.
pub(super) fn set_project_wide(spec: &mut ServerSpec, on: bool) {
    spec.wait.delivery = if on { ANALYSIS } else { Delivery::OpenFiles };
}
