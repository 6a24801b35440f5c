//! `lspgate servers`: what lspgate knows about the language servers of a workspace, so a
//! person can answer "which server did it pick, and why not mine" without reading code.
//!
//! This module gathers; `report::servers` prints. For each server of the merged table
//! (built-in < user config < project config, `config::load`) it records the files it
//! covers, its root markers, where its entry came from, whether a config file disabled
//! it, whether its command is on `PATH`, and, when it is, its version. With a FILE it
//! also explains the choice the check would make for that file, using the check's
//! own functions (`config::candidates`, `config::server_for`, `workspace::server_root`)
//! so the explanation cannot drift from what a run does.
//!
//! It must stay fast and must never hang: only the named commands are looked up (no
//! scan of `PATH`), version probes run in parallel under one short deadline, and a
//! probe that does not finish in time is killed. What to run for a version, or where
//! to read it without running anything, is `servers::version`'s.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::config::{self, ConfigError};
use crate::paths::normalize;
use crate::servers::{Origin, Role, ServerSpec, version};

/// What `lspgate servers [FILE]` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Doctor {
    pub workspace: PathBuf,
    /// Paths print relative to this directory.
    pub run_dir: PathBuf,
    /// The config files that exist and were read, lowest precedence first.
    pub config_files: Vec<PathBuf>,
    /// Whether the project's `.lspgate.toml` may choose commands.
    pub trusted: bool,
    /// Config keys that were read but ignored, and why.
    pub notes: Vec<String>,
    /// Every server of the table in preference order; with a FILE, only those whose
    /// extensions include the file's (enabled or not).
    pub servers: Vec<ServerInfo>,
    /// The explanation for FILE, when one was given.
    pub file: Option<FileExplanation>,
}

/// One server as `servers` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    /// Without the dot.
    pub extensions: Vec<String>,
    pub root_markers: Vec<String>,
    pub origin: Origin,
    pub disabled: bool,
    /// Where the command resolves; `None` when it is not installed.
    pub path: Option<PathBuf>,
    /// The first line of its version output; `None` when it is missing or its version
    /// could not be learnt (pyright-langserver has no `--version`).
    pub version: Option<String>,
    pub install_hint: String,
    /// Checker (one per file) or linter (beside it).
    pub role: Role,
    /// Why it is used in this workspace, or not, when the project decided it (which
    /// TypeScript the project is on).
    pub why: Option<String>,
}

impl ServerInfo {
    pub fn installed(&self) -> bool {
        self.path.is_some()
    }
}

/// Why the chosen server is the one a run would use (mirrors `config::server_for`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The first enabled server for the extension, and it is installed.
    Preferred,
    /// The servers before it are not installed; this is the first one that is.
    Fallback { missing: Vec<String> },
    /// None of the candidates is installed: a run names this one as missing, with its
    /// install command, and exits 3 if nothing else was found.
    NotInstalled,
}

/// The server a run would start for the file, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub server: String,
    pub reason: Reason,
    /// The directory the server would be started at.
    pub root: PathBuf,
    /// The root marker found there; `None` when no marker was found and the root is the
    /// workspace.
    pub root_marker: Option<String>,
}

/// Which server would handle a file, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct FileExplanation {
    /// Absolute, without `.` or `..`.
    pub path: PathBuf,
    /// Without the dot; `None` for a file without one (`Makefile`).
    pub extension: Option<String>,
    /// The enabled checkers covering the extension, in preference order.
    pub candidates: Vec<String>,
    /// The linters that check it beside the chosen checker (`config::servers_for`).
    pub linters: Vec<String>,
    /// Why the file goes unchecked though a server would check it (`config::stopped_check`),
    /// when no checker covers it.
    pub not_checked: Option<String>,
    /// Servers covering the extension that a config file disabled.
    pub disabled: Vec<String>,
    /// `None` when no enabled server covers the file: a run writes it and reports it as
    /// skipped.
    pub chosen: Option<Choice>,
}

/// A FILE that `servers` cannot explain.
#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{}: outside the workspace {}", given.display(), workspace.display())]
    OutsideWorkspace { given: PathBuf, workspace: PathBuf },
    #[error("{}: is a directory, not a file", given.display())]
    Directory { given: PathBuf },
}

/// Gather the report. `file` is FILE as typed, relative to `run_dir`; it need not exist
/// (a file about to be created is handled the same way).
pub fn gather(
    workspace: &Path,
    run_dir: &Path,
    trust_flag: bool,
    file: Option<&Path>,
) -> Result<Doctor, DoctorError> {
    let loaded = config::load(workspace, trust_flag)?;
    let file = match file {
        Some(given) => Some(explain(
            &loaded.servers,
            workspace,
            &resolve_file(workspace, run_dir, given)?,
        )),
        None => None,
    };
    let shown: Vec<&ServerSpec> = match &file {
        // With a FILE, the servers that matter to it; enabled or not, since "why not
        // mine" is often "yours is disabled".
        Some(file) => loaded
            .servers
            .iter()
            .filter(|s| {
                file.extension
                    .as_ref()
                    .is_some_and(|ext| s.extensions.contains(ext))
            })
            .collect(),
        None => loaded.servers.iter().collect(),
    };
    let paths: Vec<Option<PathBuf>> = shown.iter().map(|s| config::which(&s.command)).collect();
    // Each in the environment it would run in (the toolchains pinned for an untrusted
    // workspace); one that no pin keeps from running what the workspace names is not
    // run for its version either.
    let probed: Vec<Option<PathBuf>> = shown
        .iter()
        .zip(&paths)
        .map(|(s, p)| {
            p.clone().filter(|_| {
                loaded.trusted || !crate::servers::toolchain::unpinned(s, &config::which)
            })
        })
        .collect();
    let envs: Vec<&[(String, String)]> = shown.iter().map(|s| s.env.as_slice()).collect();
    let versions = version::probe_versions(&probed, &envs, version::PROBE_TIMEOUT);
    let servers = shown
        .into_iter()
        .zip(paths)
        .zip(versions)
        .map(|((spec, path), version)| ServerInfo {
            name: spec.name.clone(),
            command: spec.command.clone(),
            args: spec.args.clone(),
            extensions: spec.extensions.clone(),
            root_markers: spec.root_markers.clone(),
            origin: spec.origin,
            disabled: spec.disabled,
            path,
            version,
            install_hint: spec.install_hint.clone(),
            role: spec.coverage.role,
            why: spec.coverage.why.clone(),
        })
        .collect();
    Ok(Doctor {
        workspace: workspace.to_path_buf(),
        run_dir: run_dir.to_path_buf(),
        config_files: loaded.files,
        trusted: loaded.trusted,
        notes: loaded.notes,
        servers,
        file,
    })
}

/// FILE as an absolute path inside the workspace, the way the edit commands resolve
/// theirs: relative to the run directory, symlinks resolved as far as the path exists.
fn resolve_file(workspace: &Path, run_dir: &Path, given: &Path) -> Result<PathBuf, DoctorError> {
    let joined = normalize(&run_dir.join(given));
    // Canonicalize the longest existing prefix, so a symlink pointing out of the
    // workspace is seen for what it is, and a file not created yet still resolves.
    let mut existing = joined.as_path();
    let mut rest = Vec::new();
    let path = loop {
        if let Ok(canonical) = existing.canonicalize() {
            break rest.iter().rev().fold(canonical, |p: PathBuf, c| p.join(c));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => break joined.clone(),
        }
    };
    if !path.starts_with(workspace) {
        return Err(DoctorError::OutsideWorkspace {
            given: given.to_path_buf(),
            workspace: workspace.to_path_buf(),
        });
    }
    if path.is_dir() {
        return Err(DoctorError::Directory {
            given: given.to_path_buf(),
        });
    }
    Ok(path)
}

/// The check's choice for `path`, with the reasons behind it.
fn explain(servers: &[ServerSpec], workspace: &Path, path: &Path) -> FileExplanation {
    let extension = path.extension().and_then(OsStr::to_str).map(str::to_owned);
    let candidates: Vec<&ServerSpec> = config::candidates(servers, path)
        .filter(|s| s.coverage.role == Role::Checker)
        .collect();
    let linters: Vec<String> = config::servers_for(servers, path, workspace)
        .into_iter()
        .filter(|s| s.coverage.role == Role::Linter)
        .map(|s| s.name.clone())
        .collect();
    let disabled = servers
        .iter()
        .filter(|s| {
            s.disabled
                && extension
                    .as_ref()
                    .is_some_and(|ext| s.extensions.contains(ext))
        })
        .map(|s| s.name.clone())
        .collect();
    let chosen = config::server_for(servers, path).map(|spec| {
        let installed = |s: &ServerSpec| config::which(&s.command).is_some();
        let reason = if !installed(spec) {
            Reason::NotInstalled
        } else {
            let missing: Vec<String> = candidates
                .iter()
                .take_while(|c| c.name != spec.name)
                .map(|c| c.name.clone())
                .collect();
            if missing.is_empty() {
                Reason::Preferred
            } else {
                Reason::Fallback { missing }
            }
        };
        let (root, _) = spec.root_of(path, workspace);
        let root_marker = spec
            .root_markers
            .iter()
            .find(|m| root.join(m).exists())
            .cloned();
        Choice {
            server: spec.name.clone(),
            reason,
            root,
            root_marker,
        }
    });
    FileExplanation {
        path: path.to_path_buf(),
        extension,
        candidates: candidates.iter().map(|s| s.name.clone()).collect(),
        linters,
        not_checked: if chosen.is_none() {
            config::stopped_check(servers, path)
        } else {
            None
        },
        disabled,
        chosen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers;
    use crate::servers::version::script;
    use std::time::{Duration, Instant};

    #[test]
    fn versions_first_line_failure_timeout_and_duplicates() {
        let dir = tempfile::tempdir().expect("tempdir");
        let good = script(dir.path(), "good", "echo; echo '  good 1.2.3  '; echo more");
        let on_stderr = script(dir.path(), "on-stderr", "echo 'err 4.5' >&2");
        let fails = script(dir.path(), "fails", "echo 'no --version here'; exit 1");
        // `exec` so the kill reaches sleep itself and nothing outlives the test.
        let hangs = script(dir.path(), "hangs", "exec sleep 30");
        let paths = vec![
            Some(good.clone()),
            None,
            Some(on_stderr),
            Some(fails),
            Some(hangs),
            Some(good),
        ];
        let started = Instant::now();
        let versions = version::probe_versions(&paths, &[], Duration::from_millis(500));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            versions,
            [
                Some("good 1.2.3".to_string()),
                None,
                Some("err 4.5".to_string()),
                None,
                None,
                Some("good 1.2.3".to_string()),
            ]
        );
    }

    fn spec(name: &str, command: &str, ext: &str) -> ServerSpec {
        ServerSpec {
            name: name.into(),
            command: command.into(),
            extensions: vec![ext.into()],
            root_markers: vec!["marker.txt".into()],
            origin: Origin::UserConfig,
            ..servers::builtin().remove(0)
        }
    }

    #[test]
    fn explain_reasons_and_roots() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().canonicalize().expect("canonical");
        let installed = script(&ws, "installed-lsp", "exit 0").display().to_string();
        std::fs::create_dir_all(ws.join("sub/deep")).expect("mkdir");
        std::fs::write(ws.join("sub/marker.txt"), "").expect("marker");
        let missing = ws.join("missing-lsp").display().to_string();

        let mut disabled = spec("off", &installed, "py");
        disabled.disabled = true;
        let table = vec![
            disabled,
            spec("first", &missing, "py"),
            spec("second", &installed, "py"),
            spec("third", &missing, "go"),
        ];

        let py = explain(&table, &ws, &ws.join("sub/deep/a.py"));
        assert_eq!(py.extension.as_deref(), Some("py"));
        assert_eq!(py.candidates, ["first", "second"]);
        assert_eq!(py.disabled, ["off"]);
        let chosen = py.chosen.expect("a server");
        assert_eq!(chosen.server, "second");
        assert_eq!(
            chosen.reason,
            Reason::Fallback {
                missing: vec!["first".into()]
            }
        );
        assert_eq!(chosen.root, ws.join("sub"));
        assert_eq!(chosen.root_marker.as_deref(), Some("marker.txt"));

        let go = explain(&table, &ws, &ws.join("b.go"));
        let chosen = go.chosen.expect("a server");
        assert_eq!(
            (chosen.server.as_str(), chosen.reason),
            ("third", Reason::NotInstalled)
        );
        assert_eq!((chosen.root, chosen.root_marker), (ws.clone(), None));

        let md = explain(&table, &ws, &ws.join("README.md"));
        assert!(md.chosen.is_none() && md.candidates.is_empty());
        let bare = explain(&table, &ws, &ws.join("Makefile"));
        assert_eq!((bare.extension, bare.chosen), (None, None));
    }

    #[test]
    fn file_resolution() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().canonicalize().expect("canonical").join("ws");
        std::fs::create_dir_all(ws.join("src")).expect("mkdir");
        let resolve = |given: &str| resolve_file(&ws, &ws.join("src"), Path::new(given));

        assert_eq!(resolve("new/a.py").expect("ok"), ws.join("src/new/a.py"));
        assert_eq!(resolve("../b.py").expect("ok"), ws.join("b.py"));
        assert_eq!(resolve("./../src/./c.rs").expect("ok"), ws.join("src/c.rs"));
        assert!(matches!(
            resolve("../../x.py"),
            Err(DoctorError::OutsideWorkspace { .. })
        ));
        assert!(matches!(resolve("."), Err(DoctorError::Directory { .. })));
        std::os::unix::fs::symlink(dir.path(), ws.join("out")).expect("symlink");
        assert!(matches!(
            resolve("../out/x.py"),
            Err(DoctorError::OutsideWorkspace { .. })
        ));
    }
}
