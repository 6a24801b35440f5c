//! The TypeScript family: typescript-language-server (which runs TypeScript 6's
//! `tsserver.js`), TypeScript 7's own server (`tsc --lsp --stdio` from
//! `typescript@7`, `tsgo --lsp --stdio` from `@typescript/native-preview`) and
//! ESLint, which runs beside either. This file holds their entries, their waits and
//! what an untrusted project may set for them; [`choice`] decides which TypeScript
//! server checks a workspace, and pins typescript-language-server's tsserver in an
//! untrusted one; [`project`] lists the files a TypeScript 7 project is asked about,
//! and a warm daemon pulls between runs for either server.
//!
//! Measured facts the waits rely on (`research/servers-python-ts.md`):
//! - typescript-language-server publishes 300–800 ms after a change (its geterr
//!   debounce), with no versions, and not at all for a file that stays clean. So its
//!   diagnostics are asked of tsserver directly (`Delivery::TsserverPull`: the
//!   `typescript.tsserverRequest` command with the three `*DiagnosticsSync`
//!   commands, whose answer is final), and without that command an open file with no
//!   publish 900 ms after the change counts as unchanged.
//! - TypeScript 7's server is pull only (it publishes nothing for source files even
//!   unasked), a pull answer is final, and it sends no refresh; it answers a pull for
//!   a closed file of its tsconfig project exactly, in milliseconds, so every file of
//!   the project is pulled as a dependent ([`project::project_files`]).
//! - tsserver's automatic typings acquisition runs npm (through a shell, from
//!   `npmLocation`), fetches packages and writes `~/.cache/typescript`: not for a
//!   check, so it is off.

pub mod choice;
pub mod project;
pub mod tsserver;

use crate::workspace::MonorepoKind;
use std::time::Duration;

use serde_json::json;

use super::{
    Allow, AllowList, Coverage, Delivery, Dependents, Role, ServerSpec, WaitProfile, entry,
    languages, strs,
};

pub use choice::{choose, permitted, pin_tsserver};
pub use project::project_files;

/// Files a warm daemon pulls between runs, at most (`Coverage::idle_pulls`): as many
/// as a TypeScript 7 project's dependents.
const IDLE_PULLS: usize = project::MAX_PROJECT_FILES;

/// typescript-language-server's entry name.
pub(crate) const TSLS: &str = "typescript-language-server";

/// The name of the TypeScript 7 entry; [`choose`] chooses its program.
pub const TSGO: &str = "tsgo";

/// Where a TypeScript project's root is.
const ROOTS: &[&str] = &["tsconfig.json", "jsconfig.json", "package.json"];

/// What a TypeScript server reads as a project's configuration: its compiler options
/// (with the files they extend, often `tsconfig.base.json`) and the manifest that
/// resolves its imports (`exports`, `types`, `type`).
const CONFIGURATION: &[&str] = &["tsconfig*.json", "jsconfig*.json", "package.json"];

/// The monorepos a TypeScript server checks from their root: one tsserver (or
/// TypeScript 7) process holds a project per tsconfig, each package's own found from
/// the file opened, and resolves a sibling imported by name through the workspace's
/// `node_modules` links and the sibling's `exports`.
const MONOREPOS: &[MonorepoKind] = &[MonorepoKind::Node, MonorepoKind::TsReferences];

pub(super) fn typescript_language_server() -> ServerSpec {
    ServerSpec {
        root_markers: strs(ROOTS),
        // `tsserver.path` is pinned by `config` (see `pin_tsserver`) unless the
        // project is trusted.
        initialization_options: Some(json!({
            "preferences": {},
            "disableAutomaticTypingAcquisition": true,
            // One tsserver, not a syntax server beside the semantic one: lspgate asks
            // only for diagnostics, which the semantic server answers, and two
            // starting at once on two cores made a cold run of mobx 1 s slower (4.6 s
            // against 3.6 s, three runs each).
            //
            // tsserver's file watching handed to lspgate (`useClientFileWatcher`,
            // typescript-language-server 5.2 and TypeScript 5.4.4 or later): tsserver
            // then hears of a file created or deleted on disk in order with what is
            // asked after it, as the servers that register watchers do. Watching the
            // disk itself, it answered for mobx's importers before it had seen a
            // module gone (hook mode under load, exit 0). An older one watches the disk
            // itself, and a created or deleted file is never clean under it
            // (`Server::hears_the_disk_from_us`).
            "tsserver": { "useSyntaxServer": "never", "useClientFileWatcher": true },
        })),
        wait: WaitProfile {
            versioned_publish: false,
            quiet: Duration::from_millis(300),
            delivery: Delivery::TsserverPull,
            refresh_is_news: false,
            unpublished_after: Duration::from_millis(900),
            ..WaitProfile::default()
        },
        install_hint: "npm install -g typescript-language-server typescript@6".into(),
        coverage: Coverage {
            configuration: strs(CONFIGURATION),
            monorepos: MONOREPOS.to_vec(),
            idle_pulls: IDLE_PULLS,
            ..Coverage::default()
        },
        ..entry(
            TSLS,
            "typescript-language-server",
            &["--stdio"],
            languages::TYPESCRIPT,
            "typescript",
        )
    }
}

pub(super) fn tsgo() -> ServerSpec {
    ServerSpec {
        // `choose` replaces the command with the program it picked: the project's
        // `tsc` (TypeScript 7, trusted workspace) or an installed one.
        root_markers: strs(ROOTS),
        wait: WaitProfile::pull_final(),
        install_hint: "npm install -g @typescript/native-preview (TypeScript 7 as `tsgo`), \
                       or trust a project that has typescript@7"
            .into(),
        coverage: Coverage {
            dependents: Dependents::Project,
            configuration: strs(CONFIGURATION),
            monorepos: MONOREPOS.to_vec(),
            idle_pulls: IDLE_PULLS,
            ..Coverage::default()
        },
        ..entry(
            TSGO,
            "tsgo",
            &["--lsp", "--stdio"],
            languages::TYPESCRIPT,
            "typescript",
        )
    }
}

/// `project-wide` for the TypeScript servers, which have no project-wide analysis:
/// off, a warm daemon pulls no file between runs, and an edit's dependents are asked
/// when it comes.
pub(super) fn set_project_wide(spec: &mut ServerSpec, on: bool) {
    spec.coverage.idle_pulls = if on { IDLE_PULLS } else { 0 };
}

/// The files of `root`'s project a warm daemon pulls between runs (see
/// `Coverage::idle_pulls`): a TypeScript 7 project's dependents, at most
/// `idle_pulls` of them.
pub fn files_to_pull(
    spec: &ServerSpec,
    root: &std::path::Path,
) -> Result<Vec<std::path::PathBuf>, String> {
    let max = spec.coverage.idle_pulls;
    match whole_project(spec, root) {
        Some(files) if files.len() <= max => Ok(files),
        _ => Err(format!("more than {max} files in its project")),
    }
}

/// Every file of `root`'s project that `spec`'s server is asked about when it asks
/// about the whole project (`Dependents::Project`), or `None` when there are more
/// than it asks about (the scan's dependents stand then).
pub(super) fn whole_project(
    spec: &ServerSpec,
    root: &std::path::Path,
) -> Option<Vec<std::path::PathBuf>> {
    project::project_files_with(root, &spec.extensions)
}

/// Whether `spec`'s server can be asked about every file of its project by listing
/// them ([`whole_project`]): TypeScript 7, whose dependents are its project's files,
/// and typescript-language-server, whose tsserver a warm daemon pulls them from
/// between runs (`project-wide` off: neither).
pub(super) fn lists_its_project(spec: &ServerSpec) -> bool {
    spec.coverage.dependents == Dependents::Project || spec.coverage.idle_pulls > 0
}

/// The programs `spec`'s server runs besides its command, whose version decides what
/// it says: typescript-language-server's pinned tsserver (`pin_tsserver`).
pub fn runs_besides(spec: &ServerSpec) -> Vec<std::path::PathBuf> {
    spec.initialization_options
        .as_ref()
        .and_then(|o| o.pointer("/tsserver/path"))
        .and_then(|p| p.as_str())
        .map(std::path::PathBuf::from)
        .into_iter()
        .collect()
}

/// ESLint's configuration files, flat and legacy.
const ESLINT_CONFIGS: &[&str] = &[
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    "eslint.config.mts",
    "eslint.config.cts",
    ".eslintrc",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yaml",
    ".eslintrc.yml",
    "package.json:\"eslintConfig\"",
];

/// ESLint's configuration files by name, and `package.json`: where its root is, and
/// what it reads as its configuration.
fn eslint_files() -> Vec<String> {
    ESLINT_CONFIGS
        .iter()
        .filter(|m| !m.contains(':'))
        .chain(&["package.json"])
        .map(|s| s.to_string())
        .collect()
}

/// ESLint, a linter beside the TypeScript server, only where the project configures
/// it: without a config it has no rules to apply, and errors out. Pull only, like
/// TypeScript 7.
pub(super) fn eslint() -> ServerSpec {
    ServerSpec {
        root_markers: eslint_files(),
        // vscode-eslint-language-server asks for section "" (the whole object)
        // per document, and fails a document whose settings lack these keys.
        settings: json!({
            "validate": "on",
            "run": "onType",
            "packageManager": "npm",
            "useESLintClass": false,
            "experimental": {},
            "nodePath": null,
            "workingDirectory": { "mode": "location" },
            "problems": { "shortenToSingleLine": false },
            "rulesCustomizations": [],
            "quiet": false,
            "onIgnoredFiles": "off",
            "options": {},
            "format": false,
            "codeAction": {
                "disableRuleComment": { "enable": false, "location": "separateLine" },
                "showDocumentation": { "enable": false },
            },
            "codeActionOnSave": { "enable": false, "mode": "all" },
        }),
        wait: WaitProfile::pull_final(),
        install_hint: "npm install -g vscode-langservers-extracted eslint".into(),
        coverage: Coverage {
            role: Role::Linter,
            config_files: strs(ESLINT_CONFIGS),
            configuration: eslint_files(),
            needs_config: true,
            dependents: Dependents::None,
            ..Coverage::default()
        },
        ..entry(
            "eslint",
            "vscode-eslint-language-server",
            &["--stdio"],
            languages::TYPESCRIPT,
            "javascript",
        )
    }
}

/// What an untrusted project may set for typescript-language-server. Not
/// `tsserver.*` (which tsserver runs, its log files), `npmLocation` (run through a
/// shell by tsserver's typings installer), `disableAutomaticTypingAcquisition` (the
/// installer fetches and writes outside the workspace), `plugins`,
/// `maxTsServerMemory` (an argument of node).
pub(super) const TSLS_ALLOWED: AllowList = AllowList {
    settings: &[
        ("typescript.format", Allow::Tree),
        ("javascript.format", Allow::Tree),
        ("typescript.inlayHints", Allow::Tree),
        ("javascript.inlayHints", Allow::Tree),
        ("typescript.preferences", Allow::Tree),
        ("javascript.preferences", Allow::Tree),
        ("implicitProjectConfiguration", Allow::Tree),
        ("diagnostics.ignoredCodes", Allow::Value),
        ("completions.completeFunctionCalls", Allow::Value),
    ],
    initialization_options: &[
        ("preferences", Allow::Tree),
        ("locale", Allow::Value),
        ("completionDisableFilterText", Allow::Value),
    ],
};
