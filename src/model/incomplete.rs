//! Why a check is incomplete, as data: one [`Reason`] per gap, each with what a
//! program needs to act on it (which server, which files). A run is incomplete (exit
//! status 3 unless something new was found) exactly when its report holds at least one
//! ([`super::Report::incomplete`]); nothing else decides it. The text renderer turns
//! each into today's `note:` line (`report::incomplete`), JSON into an object with a
//! `kind` (docs/SPEC.md section 3).
//!
//! Paths are absolute here; `P` lets the JSON renderer carry them relative to the run
//! directory in the same shape ([`Reason::map_paths`]).

use std::path::PathBuf;

/// A line of the report's notes: said for information, or a reason the check is
/// incomplete. In the order they happened.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Note {
    Info(String),
    Incomplete(RunReason),
}

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The wait for the run's own files (`--timeout`).
    Primary,
    /// The wait for their dependents (`--cross-file-timeout`).
    CrossFile,
}

/// A package of a monorepo by its name and directory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Package<P = PathBuf> {
    pub name: String,
    pub dir: P,
}

/// Why a check is incomplete, in JSON's `incomplete`: a server's own reason or one
/// of the run's. The same object either way, its `kind` tells them apart.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Reason<P = PathBuf> {
    Server(ServerReason<P>),
    Run(RunReason<P>),
}

impl<P> Reason<P> {
    /// The same reason with every path passed through `f`.
    pub fn map_paths<Q>(&self, f: &impl Fn(&P) -> Q) -> Reason<Q> {
        match self {
            Reason::Server(reason) => Reason::Server(reason.map_paths(f)),
            Reason::Run(reason) => Reason::Run(reason.map_paths(f)),
        }
    }
}

/// Why a server's part of the check is incomplete: its status is not `ok`. Its
/// reasons make up its `note: NAME: ...` line and its JSON `detail`. `files` are the
/// run's files the server was to check.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServerReason<P = PathBuf> {
    /// The server's command is not installed.
    NotInstalled {
        server: String,
        command: String,
        why: String,
        install: String,
        files: Vec<P>,
    },
    /// The server's command could not be started.
    StartFailed {
        server: String,
        command: String,
        error: String,
        files: Vec<P>,
    },
    /// The server died during the run: after its initialisation (crashed), or before
    /// it (failed); `again` after the restart the run gave it.
    Crashed {
        server: String,
        message: String,
        initialized: bool,
        again: bool,
        files: Vec<P>,
    },
    /// The server had died and was not restarted (its crash backoff ran).
    NotRestarted {
        server: String,
        message: String,
        why: String,
        files: Vec<P>,
    },
    /// The server says it could not load the project.
    ProjectNotLoaded {
        server: String,
        message: String,
        files: Vec<P>,
    },
    /// An edited configuration file needed the server started afresh, and it could
    /// not be.
    NotStartedAfresh {
        server: String,
        why: String,
        configuration: Vec<P>,
    },
    /// The server started afresh for an edited configuration file may not have read
    /// it (it says the project did not load, or the file is not well-formed).
    ConfigurationNotRead {
        server: String,
        why: String,
        configuration: Vec<P>,
    },
    /// A wait ran out before the server's files were settled; `why` when it did not
    /// say which files.
    TimedOut {
        server: String,
        phase: Phase,
        limit_ms: u64,
        why: Option<String>,
        files: Vec<P>,
    },
    /// The server's diagnostics of a file came in a message too large to read.
    MessageTooLarge {
        server: String,
        file: P,
        why: String,
    },
    /// The server failed the pull of a file's diagnostics (an error that asks for no
    /// retry): it said nothing of the file.
    PullFailed {
        server: String,
        file: P,
        why: String,
    },
    /// A server analysing its whole workspace had not finished before the edit: no
    /// complete before view (`--startup-timeout`).
    WorkspaceUnfinished {
        server: String,
        limit_ms: u64,
        why: String,
    },
}

/// Why the check is incomplete besides a server's status: a `note:` line each.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunReason<P = PathBuf> {
    /// The user (or an untrusted workspace) turned off the check of this file.
    CheckTurnedOff { file: P, why: String },
    /// A linter this file would get is turned off.
    LinterTurnedOff { file: P, why: String },
    /// The file cannot be shown to a server (not UTF-8, too large).
    FileNotShown { file: P, why: String },
    /// A monorepo manifest lspgate cannot map: the packages under `root` that may
    /// import `file` were not checked.
    ManifestNotMapped {
        manifest: P,
        why: String,
        root: P,
        file: P,
    },
    /// Packages depending on the server's root by their manifests, outside it.
    PackagesOutside {
        server: String,
        root: P,
        packages: Vec<Package<P>>,
    },
    /// A configuration file changed in memory only: the server reads it from disk.
    ConfigurationInMemory { file: P, server: String },
    /// A configuration file no checked file is under, that files elsewhere may read.
    ConfigurationElsewhere { file: P, server: String },
    /// Likely dependents beyond the per-run cap.
    DependentsOverCap {
        server: String,
        cap: usize,
        files: Vec<P>,
    },
    /// The root has too many files to scan for dependents.
    DependentsUnscanned { server: String, root: P },
    /// No before view of these files: nothing they say counts as new.
    BeforeViewMissing { files: Vec<P> },
    /// The server reads included files from disk, and the change was not written.
    DependentsUnsaved { server: String, files: Vec<P> },
    /// A review of a change that creates or deletes files, shown to a server that
    /// reads the disk: their importers were not compared.
    DiskAlreadyChanged { server: String, files: Vec<P> },
    /// Packages of a monorepo a server that is not ok left unchecked.
    PackagesNotChecked {
        server: String,
        monorepo: P,
        packages: Vec<String>,
    },
    /// `check --changed` with no earlier check and no git repository.
    NoBaseline,
    /// `check --changed`: files written again while they were checked.
    ChangedDuringCheck { files: Vec<P> },
    /// `check --changed`: servers whose check reads the disk, which already held the
    /// change.
    DiskChecker { servers: Vec<String> },
}

/// Every [`Reason`]'s `kind`, in the order of the enum (the MCP output schema lists
/// them).
pub const KINDS: [&str; 27] = [
    "not_installed",
    "start_failed",
    "crashed",
    "not_restarted",
    "project_not_loaded",
    "not_started_afresh",
    "configuration_not_read",
    "timed_out",
    "message_too_large",
    "pull_failed",
    "workspace_unfinished",
    "check_turned_off",
    "linter_turned_off",
    "file_not_shown",
    "manifest_not_mapped",
    "packages_outside",
    "configuration_in_memory",
    "configuration_elsewhere",
    "dependents_over_cap",
    "dependents_unscanned",
    "before_view_missing",
    "dependents_unsaved",
    "disk_already_changed",
    "packages_not_checked",
    "no_baseline",
    "changed_during_check",
    "disk_checker",
];

impl<P> ServerReason<P> {
    /// The same reason with every path passed through `f`.
    pub fn map_paths<Q>(&self, f: &impl Fn(&P) -> Q) -> ServerReason<Q> {
        let all = |files: &[P]| files.iter().map(f).collect::<Vec<Q>>();
        match self {
            ServerReason::NotInstalled {
                server,
                command,
                why,
                install,
                files,
            } => ServerReason::NotInstalled {
                server: server.clone(),
                command: command.clone(),
                why: why.clone(),
                install: install.clone(),
                files: all(files),
            },
            ServerReason::StartFailed {
                server,
                command,
                error,
                files,
            } => ServerReason::StartFailed {
                server: server.clone(),
                command: command.clone(),
                error: error.clone(),
                files: all(files),
            },
            ServerReason::Crashed {
                server,
                message,
                initialized,
                again,
                files,
            } => ServerReason::Crashed {
                server: server.clone(),
                message: message.clone(),
                initialized: *initialized,
                again: *again,
                files: all(files),
            },
            ServerReason::NotRestarted {
                server,
                message,
                why,
                files,
            } => ServerReason::NotRestarted {
                server: server.clone(),
                message: message.clone(),
                why: why.clone(),
                files: all(files),
            },
            ServerReason::ProjectNotLoaded {
                server,
                message,
                files,
            } => ServerReason::ProjectNotLoaded {
                server: server.clone(),
                message: message.clone(),
                files: all(files),
            },
            ServerReason::NotStartedAfresh {
                server,
                why,
                configuration,
            } => ServerReason::NotStartedAfresh {
                server: server.clone(),
                why: why.clone(),
                configuration: all(configuration),
            },
            ServerReason::ConfigurationNotRead {
                server,
                why,
                configuration,
            } => ServerReason::ConfigurationNotRead {
                server: server.clone(),
                why: why.clone(),
                configuration: all(configuration),
            },
            ServerReason::TimedOut {
                server,
                phase,
                limit_ms,
                why,
                files,
            } => ServerReason::TimedOut {
                server: server.clone(),
                phase: *phase,
                limit_ms: *limit_ms,
                why: why.clone(),
                files: all(files),
            },
            ServerReason::MessageTooLarge { server, file, why } => ServerReason::MessageTooLarge {
                server: server.clone(),
                file: f(file),
                why: why.clone(),
            },
            ServerReason::PullFailed { server, file, why } => ServerReason::PullFailed {
                server: server.clone(),
                file: f(file),
                why: why.clone(),
            },
            ServerReason::WorkspaceUnfinished {
                server,
                limit_ms,
                why,
            } => ServerReason::WorkspaceUnfinished {
                server: server.clone(),
                limit_ms: *limit_ms,
                why: why.clone(),
            },
        }
    }
}

impl<P> RunReason<P> {
    /// The same reason with every path passed through `f`.
    pub fn map_paths<Q>(&self, f: &impl Fn(&P) -> Q) -> RunReason<Q> {
        let all = |files: &[P]| files.iter().map(f).collect::<Vec<Q>>();
        match self {
            RunReason::CheckTurnedOff { file, why } => RunReason::CheckTurnedOff {
                file: f(file),
                why: why.clone(),
            },
            RunReason::LinterTurnedOff { file, why } => RunReason::LinterTurnedOff {
                file: f(file),
                why: why.clone(),
            },
            RunReason::FileNotShown { file, why } => RunReason::FileNotShown {
                file: f(file),
                why: why.clone(),
            },
            RunReason::ManifestNotMapped {
                manifest,
                why,
                root,
                file,
            } => RunReason::ManifestNotMapped {
                manifest: f(manifest),
                why: why.clone(),
                root: f(root),
                file: f(file),
            },
            RunReason::PackagesOutside {
                server,
                root,
                packages,
            } => RunReason::PackagesOutside {
                server: server.clone(),
                root: f(root),
                packages: packages
                    .iter()
                    .map(|p| Package {
                        name: p.name.clone(),
                        dir: f(&p.dir),
                    })
                    .collect(),
            },
            RunReason::ConfigurationInMemory { file, server } => RunReason::ConfigurationInMemory {
                file: f(file),
                server: server.clone(),
            },
            RunReason::ConfigurationElsewhere { file, server } => {
                RunReason::ConfigurationElsewhere {
                    file: f(file),
                    server: server.clone(),
                }
            }
            RunReason::DependentsOverCap { server, cap, files } => RunReason::DependentsOverCap {
                server: server.clone(),
                cap: *cap,
                files: all(files),
            },
            RunReason::DependentsUnscanned { server, root } => RunReason::DependentsUnscanned {
                server: server.clone(),
                root: f(root),
            },
            RunReason::BeforeViewMissing { files } => {
                RunReason::BeforeViewMissing { files: all(files) }
            }
            RunReason::DependentsUnsaved { server, files } => RunReason::DependentsUnsaved {
                server: server.clone(),
                files: all(files),
            },
            RunReason::DiskAlreadyChanged { server, files } => RunReason::DiskAlreadyChanged {
                server: server.clone(),
                files: all(files),
            },
            RunReason::PackagesNotChecked {
                server,
                monorepo,
                packages,
            } => RunReason::PackagesNotChecked {
                server: server.clone(),
                monorepo: f(monorepo),
                packages: packages.clone(),
            },
            RunReason::NoBaseline => RunReason::NoBaseline,
            RunReason::ChangedDuringCheck { files } => {
                RunReason::ChangedDuringCheck { files: all(files) }
            }
            RunReason::DiskChecker { servers } => RunReason::DiskChecker {
                servers: servers.clone(),
            },
        }
    }
}

/// Up to three names, and how many more: how a note lists files and packages.
pub fn summarize(names: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut s = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    s
}

/// `5s`, or `1500ms` when not a whole number of seconds.
pub fn fmt_millis(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}
