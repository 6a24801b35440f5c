//! rust-analyzer: its entry, its waits, and what an untrusted project may set for it.

use std::time::Duration;

use serde_json::json;

use super::{Allow, AllowList, ServerSpec, WaitProfile, entry, languages, strs};

pub(super) const RUST_ANALYZER: &str = "rust-analyzer";

pub(super) fn rust_analyzer() -> ServerSpec {
    ServerSpec {
        root_markers: strs(&["Cargo.toml"]),
        initialization_options: Some(json!({ "checkOnSave": true })),
        // cargo check runs after a save and reports through progress; between
        // its progress tokens there can be short gaps. It publishes a file more than
        // once per change, so a publish of our version is no sign that it is done
        // (no `confirmed_quiet`).
        wait: WaitProfile {
            quiet: Duration::from_millis(300),
            ..WaitProfile::default()
        },
        install_hint: "rustup component add rust-analyzer".into(),
        ..entry(RUST_ANALYZER, "rust-analyzer", &[], languages::RUST, "rust")
    }
}

/// The keys of [`ALLOWED`], each after `$prefix`.
macro_rules! keys {
    ($prefix:literal) => {
        &[
            (concat!($prefix, "checkOnSave"), Allow::Value),
            (concat!($prefix, "check.allTargets"), Allow::Value),
            (concat!($prefix, "check.features"), Allow::Value),
            (concat!($prefix, "check.noDefaultFeatures"), Allow::Value),
            (concat!($prefix, "check.workspace"), Allow::Value),
            (concat!($prefix, "cargo.features"), Allow::Value),
            (concat!($prefix, "cargo.noDefaultFeatures"), Allow::Value),
            (concat!($prefix, "cargo.allTargets"), Allow::Value),
            (concat!($prefix, "cargo.cfgs"), Allow::Tree),
            (concat!($prefix, "cargo.buildScripts.enable"), Allow::Value),
            (concat!($prefix, "procMacro.enable"), Allow::Value),
            (
                concat!($prefix, "procMacro.attributes.enable"),
                Allow::Value,
            ),
            (concat!($prefix, "procMacro.ignored"), Allow::Tree),
            (concat!($prefix, "diagnostics.enable"), Allow::Value),
            (concat!($prefix, "diagnostics.disabled"), Allow::Value),
            (
                concat!($prefix, "diagnostics.experimental.enable"),
                Allow::Value,
            ),
            (
                concat!($prefix, "diagnostics.styleLints.enable"),
                Allow::Value,
            ),
            (concat!($prefix, "diagnostics.warningsAsHint"), Allow::Value),
            (concat!($prefix, "diagnostics.warningsAsInfo"), Allow::Value),
            (concat!($prefix, "cachePriming.enable"), Allow::Value),
            (concat!($prefix, "cachePriming.numThreads"), Allow::Value),
            (concat!($prefix, "numThreads"), Allow::Value),
            (concat!($prefix, "files.exclude"), Allow::InsidePaths),
            (concat!($prefix, "files.watcher"), Allow::Value),
        ]
    };
}

/// What an untrusted project may set, under `rust-analyzer` in settings and at the
/// top of its initialization options. Not `*.overrideCommand`, `*.extraArgs`,
/// `*.extraEnv`, `check.command`, `cargo.targetDir`, `cargo.sysroot*`,
/// `cargo.target`/`check.targets` (a target may be a path to a JSON spec),
/// `procMacro.server`, `server.*`, `linkedProjects` (a project JSON can name
/// proc-macro libraries), `workspace.discoverConfig`.
pub(super) const ALLOWED: AllowList = AllowList {
    settings: keys!("rust-analyzer."),
    initialization_options: keys!(""),
};
