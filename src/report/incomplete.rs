//! The words of the report's notes: each [`Reason`] a check is incomplete as the
//! `note:` line (or, for a server's own, the part of its line) the text prints, and
//! the same in JSON's `notes` and a server's `detail`.

use std::path::Path;

use crate::model::incomplete::{Note, Phase, RunReason, ServerReason, fmt_millis, summarize};
use crate::paths;

/// A note's text, without the `note: `.
pub fn note_text(note: &Note, run_dir: &Path) -> String {
    match note {
        Note::Info(text) => text.clone(),
        Note::Incomplete(reason) => run_text(reason, run_dir),
    }
}

/// What a server's reasons say, joined (its `detail`); `None` when it has none.
pub fn detail(reasons: &[ServerReason], run_dir: &Path) -> Option<String> {
    (!reasons.is_empty()).then(|| {
        reasons
            .iter()
            .map(|r| server_text(r, run_dir))
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// `a.py, b.py, c.py and 2 more`.
fn list(files: &[std::path::PathBuf], run_dir: &Path) -> String {
    summarize(
        &files
            .iter()
            .map(|p| paths::display(p, run_dir))
            .collect::<Vec<_>>(),
    )
}

/// A server's reason in words, as they go after `NAME: ` in its line.
pub fn server_text(reason: &ServerReason, run_dir: &Path) -> String {
    let show = |p: &Path| paths::display(p, run_dir);
    let list = |files: &[std::path::PathBuf]| list(files, run_dir);
    match reason {
        ServerReason::NotInstalled { why, install, .. } => {
            format!("not installed ({why}; install: {install})")
        }
        ServerReason::StartFailed { command, error, .. } => {
            format!("failed to start `{command}`: {error}")
        }
        ServerReason::Crashed { message, again, .. } => {
            let again = if *again {
                "; it crashed again after its restart"
            } else {
                ""
            };
            format!("{message}{again}; its files were not checked")
        }
        ServerReason::NotRestarted { message, why, .. } => {
            format!("{message}; {why}; its files were not checked")
        }
        ServerReason::ProjectNotLoaded { message, .. } => {
            format!("it could not load the project ({message}); its files were not checked")
        }
        ServerReason::NotStartedAfresh { why, .. } => format!(
            "could not be started afresh to read the edited configuration ({why}); the files \
             it governs were not checked"
        ),
        ServerReason::ConfigurationNotRead { why, .. } => {
            format!("{why}; the files it governs were not checked with the edited configuration")
        }
        ServerReason::TimedOut {
            phase,
            limit_ms,
            why,
            files,
            ..
        } => {
            let label = match phase {
                Phase::Primary => "timed out",
                Phase::CrossFile => "cross-file wait timed out",
            };
            let mut text = format!("{label} after {}", fmt_millis(*limit_ms));
            if let Some(why) = why {
                text.push_str(&format!(" ({why})"));
            }
            if !files.is_empty() {
                text.push_str(&format!("; not checked: {}", list(files)));
            }
            text
        }
        ServerReason::MessageTooLarge { file, why, .. } => {
            let path = show(file);
            format!(
                "its diagnostics of {path} came in a message too large to read: {why}; not \
                 checked: {path}"
            )
        }
        ServerReason::PullFailed { file, why, .. } => {
            let path = show(file);
            format!("it said nothing of {path} ({why}); not checked: {path}")
        }
        ServerReason::WorkspaceUnfinished { limit_ms, why, .. } => format!(
            "its analysis of the workspace did not finish within {} (--startup-timeout; {why}), \
             so none of what it says counts as new",
            fmt_millis(*limit_ms)
        ),
    }
}

/// A run's reason in words: its `note:` line.
pub fn run_text(reason: &RunReason, run_dir: &Path) -> String {
    let show = |p: &Path| paths::display(p, run_dir);
    let list = |files: &[std::path::PathBuf]| list(files, run_dir);
    match reason {
        RunReason::CheckTurnedOff { file, why } | RunReason::FileNotShown { file, why } => {
            format!("{}: {why}, not checked", show(file))
        }
        RunReason::LinterTurnedOff { file, why } => {
            format!("{}: {why}, not checked by it", show(file))
        }
        RunReason::ManifestNotMapped {
            manifest,
            why,
            root,
            file,
        } => format!(
            "{}: a monorepo lspgate cannot map ({why}): the packages under {} that may \
             import {} were not checked",
            show(manifest),
            show(root),
            show(file)
        ),
        RunReason::PackagesOutside {
            server,
            root,
            packages,
        } => {
            let names: Vec<String> = packages
                .iter()
                .map(|p| format!("{} ({})", p.name, show(&p.dir)))
                .collect();
            format!(
                "{server}: packages that depend on {} by their manifests were not checked: {} \
                 (no workspace manifest lspgate maps puts them under one server)",
                show(root),
                summarize(&names)
            )
        }
        RunReason::ConfigurationInMemory { file, server } => format!(
            "{}: {server} reads it as configuration, from disk; a change shown to the \
             servers in memory only (--dry-run, --reject, a review) does not reach it, so \
             the files it governs were not checked",
            show(file)
        ),
        RunReason::ConfigurationElsewhere { file, server } => format!(
            "{}: {server} reads it as configuration, and no file it checks is under its \
             directory; files elsewhere may read it (a tsconfig they extend), so they were \
             not checked",
            show(file)
        ),
        RunReason::DependentsOverCap { server, cap, files } => format!(
            "{server}: {} likely dependent{} not checked (over {cap} per run): {}",
            files.len(),
            if files.len() == 1 { "" } else { "s" },
            list(files)
        ),
        RunReason::DependentsUnscanned { server, root } => format!(
            "{server}: {} has too many files to scan for dependents; some may not have been \
             checked",
            show(root)
        ),
        RunReason::BeforeViewMissing { files } => format!(
            "no before view of {} (no answer, or none before the change): what they say now \
             cannot be told new from old, so none of it counts as new; not checked: {}",
            list(files),
            list(files)
        ),
        RunReason::DependentsUnsaved { server, files } => format!(
            "{server} reads included files from disk, so the files depending on a change \
             shown to it only in memory were not rechecked: {}",
            list(files)
        ),
        RunReason::DiskAlreadyChanged { server, files } => format!(
            "{server} reads the disk, where {} already is as the change leaves it: the files \
             importing it were not compared (edit through lspgate for an exact check)",
            list(files)
        ),
        RunReason::PackagesNotChecked {
            server,
            monorepo,
            packages,
        } => format!(
            "{server}: packages of the monorepo at {} not checked: {}",
            show(monorepo),
            summarize(packages)
        ),
        RunReason::NoBaseline => {
            "check --changed: no earlier check here and no git repository, so \
                               what changed before this call cannot be known and was not \
                               checked; the tree as it is now is the baseline of the next call"
                .to_owned()
        }
        RunReason::ChangedDuringCheck { files } => format!(
            "check --changed: written again while it was checked, so not checked as it is \
             now: {}",
            files.iter().map(|p| show(p)).collect::<Vec<_>>().join(", ")
        ),
        RunReason::DiskChecker { servers } => format!(
            "check --changed: {} checks the disk, which already holds the change, so its word \
             before the change cannot be asked for and the files it checks were not compared; \
             edit through lspgate (patch, edit, write) for an exact check",
            servers.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::model::Reason;
    use crate::model::incomplete::Package;

    /// One reason in words, as its note or its server's detail says it.
    fn text(reason: &Reason, run_dir: &Path) -> String {
        match reason {
            Reason::Server(reason) => server_text(reason, run_dir),
            Reason::Run(reason) => run_text(reason, run_dir),
        }
    }

    const PYRIGHT: &str = "pyright";

    fn p(rel: &str) -> PathBuf {
        PathBuf::from("/ws").join(rel)
    }

    fn ps(rels: &[&str]) -> Vec<PathBuf> {
        rels.iter().map(|r| p(r)).collect()
    }

    /// Every kind, its `kind` in JSON, and its words: the note lines the check printed
    /// before the reasons were typed.
    fn every_kind() -> Vec<(Reason, &'static str, &'static str)> {
        let server = server_kinds()
            .into_iter()
            .map(|(r, kind, words)| (Reason::Server(r), kind, words));
        let run = run_kinds()
            .into_iter()
            .map(|(r, kind, words)| (Reason::Run(r), kind, words));
        server.chain(run).collect()
    }

    fn server_kinds() -> Vec<(ServerReason, &'static str, &'static str)> {
        let s = || "pyright".to_owned();
        vec![
            (
                ServerReason::NotInstalled {
                    server: s(),
                    command: "pyright-langserver".into(),
                    why: "pyright-langserver is not on PATH".into(),
                    install: "npm i -g pyright".into(),
                    files: ps(&["a.py"]),
                },
                "not_installed",
                "not installed (pyright-langserver is not on PATH; install: npm i -g pyright)",
            ),
            (
                ServerReason::StartFailed {
                    server: s(),
                    command: "pyright-langserver".into(),
                    error: "permission denied".into(),
                    files: ps(&["a.py"]),
                },
                "start_failed",
                "failed to start `pyright-langserver`: permission denied",
            ),
            (
                ServerReason::Crashed {
                    server: s(),
                    message: "exited with status 1".into(),
                    initialized: true,
                    again: true,
                    files: ps(&["a.py"]),
                },
                "crashed",
                "exited with status 1; it crashed again after its restart; its files were not \
                 checked",
            ),
            (
                ServerReason::NotRestarted {
                    server: s(),
                    message: "killed".into(),
                    why: "it crashed 3 times in a minute".into(),
                    files: ps(&["a.py"]),
                },
                "not_restarted",
                "killed; it crashed 3 times in a minute; its files were not checked",
            ),
            (
                ServerReason::ProjectNotLoaded {
                    server: s(),
                    message: "no go.mod".into(),
                    files: ps(&["a.go"]),
                },
                "project_not_loaded",
                "it could not load the project (no go.mod); its files were not checked",
            ),
            (
                ServerReason::NotStartedAfresh {
                    server: s(),
                    why: "backoff".into(),
                    configuration: ps(&["pyproject.toml"]),
                },
                "not_started_afresh",
                "could not be started afresh to read the edited configuration (backoff); the \
                 files it governs were not checked",
            ),
            (
                ServerReason::ConfigurationNotRead {
                    server: s(),
                    why: "tsconfig.json is not well-formed (x)".into(),
                    configuration: ps(&["tsconfig.json"]),
                },
                "configuration_not_read",
                "tsconfig.json is not well-formed (x); the files it governs were not checked \
                 with the edited configuration",
            ),
            (
                ServerReason::TimedOut {
                    server: s(),
                    phase: Phase::Primary,
                    limit_ms: 1500,
                    why: Some("no progress".into()),
                    files: ps(&["a.py", "b.py", "c.py", "d.py"]),
                },
                "timed_out",
                "timed out after 1500ms (no progress); not checked: a.py, b.py, c.py and 1 more",
            ),
            (
                ServerReason::MessageTooLarge {
                    server: s(),
                    file: p("a.py"),
                    why: "over 64 MiB".into(),
                },
                "message_too_large",
                "its diagnostics of a.py came in a message too large to read: over 64 MiB; not \
                 checked: a.py",
            ),
            (
                ServerReason::PullFailed {
                    server: s(),
                    file: p("a.py"),
                    why: "the server failed the pull: internal error".into(),
                },
                "pull_failed",
                "it said nothing of a.py (the server failed the pull: internal error); not \
                 checked: a.py",
            ),
            (
                ServerReason::WorkspaceUnfinished {
                    server: s(),
                    limit_ms: 30000,
                    why: "still analysing".into(),
                },
                "workspace_unfinished",
                "its analysis of the workspace did not finish within 30s (--startup-timeout; \
                 still analysing), so none of what it says counts as new",
            ),
        ]
    }

    fn run_kinds() -> Vec<(RunReason, &'static str, &'static str)> {
        vec![
            (
                RunReason::CheckTurnedOff {
                    file: p("a.rs"),
                    why: "rust-analyzer is turned off (LSPGATE_WITHOUT)".into(),
                },
                "check_turned_off",
                "a.rs: rust-analyzer is turned off (LSPGATE_WITHOUT), not checked",
            ),
            (
                RunReason::LinterTurnedOff {
                    file: p("a.ts"),
                    why: "eslint is turned off (user config)".into(),
                },
                "linter_turned_off",
                "a.ts: eslint is turned off (user config), not checked by it",
            ),
            (
                RunReason::FileNotShown {
                    file: p("a.py"),
                    why: "not UTF-8 text".into(),
                },
                "file_not_shown",
                "a.py: not UTF-8 text, not checked",
            ),
            (
                RunReason::ManifestNotMapped {
                    manifest: p("pnpm-workspace.yaml"),
                    why: "no packages".into(),
                    root: p(""),
                    file: p("pkg/a.ts"),
                },
                "manifest_not_mapped",
                "pnpm-workspace.yaml: a monorepo lspgate cannot map (no packages): the packages \
                 under . that may import pkg/a.ts were not checked",
            ),
            (
                RunReason::PackagesOutside {
                    server: PYRIGHT.into(),
                    root: p("lib"),
                    packages: vec![Package {
                        name: "app".into(),
                        dir: p("app"),
                    }],
                },
                "packages_outside",
                "pyright: packages that depend on lib by their manifests were not checked: app \
                 (app) (no workspace manifest lspgate maps puts them under one server)",
            ),
            (
                RunReason::ConfigurationInMemory {
                    file: p("tsconfig.json"),
                    server: "typescript".into(),
                },
                "configuration_in_memory",
                "tsconfig.json: typescript reads it as configuration, from disk; a change shown \
                 to the servers in memory only (--dry-run, --reject, a review) does not reach \
                 it, so the files it governs were not checked",
            ),
            (
                RunReason::ConfigurationElsewhere {
                    file: p("tsconfig.base.json"),
                    server: "typescript".into(),
                },
                "configuration_elsewhere",
                "tsconfig.base.json: typescript reads it as configuration, and no file it \
                 checks is under its directory; files elsewhere may read it (a tsconfig they \
                 extend), so they were not checked",
            ),
            (
                RunReason::DependentsOverCap {
                    server: PYRIGHT.into(),
                    cap: 200,
                    files: ps(&["x.py"]),
                },
                "dependents_over_cap",
                "pyright: 1 likely dependent not checked (over 200 per run): x.py",
            ),
            (
                RunReason::DependentsUnscanned {
                    server: PYRIGHT.into(),
                    root: p("big"),
                },
                "dependents_unscanned",
                "pyright: big has too many files to scan for dependents; some may not have been \
                 checked",
            ),
            (
                RunReason::BeforeViewMissing {
                    files: ps(&["a.py"]),
                },
                "before_view_missing",
                "no before view of a.py (no answer, or none before the change): what they say now \
                 cannot be told new from old, so none of it counts as new; not checked: a.py",
            ),
            (
                RunReason::DependentsUnsaved {
                    server: "clangd".into(),
                    files: ps(&["a.c", "b.c"]),
                },
                "dependents_unsaved",
                "clangd reads included files from disk, so the files depending on a change \
                 shown to it only in memory were not rechecked: a.c, b.c",
            ),
            (
                RunReason::DiskAlreadyChanged {
                    server: PYRIGHT.into(),
                    files: ps(&["gone.py"]),
                },
                "disk_already_changed",
                "pyright reads the disk, where gone.py already is as the change leaves it: the \
                 files importing it were not compared (edit through lspgate for an exact check)",
            ),
            (
                RunReason::PackagesNotChecked {
                    server: PYRIGHT.into(),
                    monorepo: p(""),
                    packages: vec!["app".into(), "lib".into()],
                },
                "packages_not_checked",
                "pyright: packages of the monorepo at . not checked: app, lib",
            ),
            (
                RunReason::NoBaseline,
                "no_baseline",
                "check --changed: no earlier check here and no git repository, so what changed \
                 before this call cannot be known and was not checked; the tree as it is now is \
                 the baseline of the next call",
            ),
            (
                RunReason::ChangedDuringCheck {
                    files: ps(&["a.py", "b.py", "c.py", "d.py"]),
                },
                "changed_during_check",
                "check --changed: written again while it was checked, so not checked as it is \
                 now: a.py, b.py, c.py, d.py",
            ),
            (
                RunReason::DiskChecker {
                    servers: vec!["rust-analyzer".into()],
                },
                "disk_checker",
                "check --changed: rust-analyzer checks the disk, which already holds the \
                 change, so its word before the change cannot be asked for and the files it \
                 checks were not compared; edit through lspgate (patch, edit, write) for an \
                 exact check",
            ),
        ]
    }

    #[test]
    fn every_kind_says_its_note_and_names_its_kind() {
        let run_dir = Path::new("/ws");
        let all = every_kind();
        let kinds: Vec<&str> = all.iter().map(|(_, kind, _)| *kind).collect();
        assert_eq!(kinds, crate::model::incomplete::KINDS);
        for (reason, kind, words) in all {
            assert_eq!(text(&reason, run_dir), words, "{kind}");
            let relative = reason.map_paths(&|p| paths::display_raw(p, run_dir));
            let value = serde_json::to_value(&relative).expect("serializable");
            assert_eq!(value["kind"], kind, "{value}");
            // What the daemon sends back reads back the same.
            let sent = serde_json::to_string(&reason).expect("json");
            let back: Reason = serde_json::from_str(&sent).expect("reads back");
            assert_eq!(back, reason);
        }
    }

    #[test]
    fn json_carries_the_data_with_relative_paths() {
        let reason = Reason::Server(ServerReason::TimedOut {
            server: "pyright".into(),
            phase: Phase::CrossFile,
            limit_ms: 5000,
            why: None,
            files: ps(&["src/b.py"]),
        });
        let relative = reason.map_paths(&|p| paths::display_raw(p, Path::new("/ws/src")));
        assert_eq!(
            serde_json::to_value(&relative).expect("serializable"),
            json!({"kind": "timed_out", "server": "pyright", "phase": "cross_file",
                   "limit_ms": 5000, "why": null, "files": ["b.py"]})
        );
    }

    #[test]
    fn a_servers_reasons_make_one_detail() {
        let run_dir = Path::new("/ws");
        assert_eq!(detail(&[], run_dir), None);
        let reasons = [
            ServerReason::WorkspaceUnfinished {
                server: "pyright".into(),
                limit_ms: 2000,
                why: "busy".into(),
            },
            ServerReason::TimedOut {
                server: "pyright".into(),
                phase: Phase::Primary,
                limit_ms: 1000,
                why: None,
                files: Vec::new(),
            },
        ];
        assert_eq!(
            detail(&reasons, run_dir).as_deref(),
            Some(
                "its analysis of the workspace did not finish within 2s (--startup-timeout; \
                 busy), so none of what it says counts as new; timed out after 1s"
            )
        );
    }
}
