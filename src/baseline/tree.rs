//! The tree a server sees under its root, named by one key: every file of its
//! extensions and every file it reads as configuration (each by its git blob id), the
//! lock files that pin what the project imports, what is installed where its imports
//! resolve, and the server itself (its command, version and settings). Two trees with
//! the same key give the same diagnostics; a stored baseline is looked up by it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::servers::ServerSpec;

/// Bumped whenever what goes into a key changes, so no older key is ever matched.
const KEY_FORMAT: &str = "lspgate-baseline-key 1";

/// Files that pin the packages a project imports: a change of one is a change of
/// what the server sees outside the tree (a stored baseline's key, the daemon's
/// view keys and configuration stamps).
pub const LOCK_FILES: &[&str] = &[
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "uv.lock",
    "poetry.lock",
    "Pipfile.lock",
    "pdm.lock",
    "requirements.txt",
    "Cargo.lock",
    "go.sum",
];

/// Directories no server analyses, never walked: what pyright, tsserver and gopls
/// leave out by default (hidden entries are left out as well).
const NEVER_WALKED: &[&str] = &["node_modules", "__pycache__", "target"];

/// The files of one server's tree, by path relative to its root, each with its git
/// blob id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    root: PathBuf,
    files: BTreeMap<String, String>,
}

impl Tree {
    /// The tree under `root` as `spec` sees it on disk now. `.gitignore` is not
    /// honoured (servers do not honour it either: a generated or vendored file they
    /// analyse is part of what they see).
    pub fn read(root: &Path, spec: &ServerSpec) -> std::io::Result<Tree> {
        let mut paths: Vec<(String, PathBuf)> = Vec::new();
        let walk = ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .hidden(true)
            .follow_links(false)
            .filter_entry(|e| {
                !e.file_type().is_some_and(|t| t.is_dir())
                    || !NEVER_WALKED.iter().any(|n| e.file_name() == *n)
            })
            .build();
        for entry in walk {
            let entry = entry.map_err(std::io::Error::other)?;
            let path = entry.path();
            if !entry.file_type().is_some_and(|t| t.is_file()) || !seen_by(spec, path) {
                continue;
            }
            if let Some(rel) = crate::changed::relative(root, path) {
                paths.push((rel, path.to_path_buf()));
            }
        }
        Ok(Tree {
            root: root.to_path_buf(),
            files: hashed(paths)?,
        })
    }

    /// This tree with `path` holding `text` (`None`: deleted). A path outside the
    /// root changes nothing.
    pub fn with(&mut self, path: &Path, text: Option<&[u8]>) {
        let Some(rel) = crate::changed::relative(&self.root, path) else {
            return;
        };
        match text {
            Some(bytes) => {
                self.files.insert(rel, crate::changed::oid(bytes));
            }
            None => {
                self.files.remove(&rel);
            }
        }
    }

    /// This tree with its root's lock files as they are on disk now: a server's build
    /// tool may write one while it loads the project (rust-analyzer's `cargo
    /// metadata` writes a missing `Cargo.lock`), and the view it then gave is of the
    /// tree with that file, as the next run reads it.
    pub fn with_lock_files_on_disk(&mut self) {
        for name in LOCK_FILES {
            let path = self.root.join(name);
            let bytes = crate::regular::read(&path).ok();
            self.with(&path, bytes.as_deref());
        }
    }

    /// How many files the tree holds.
    pub fn files(&self) -> usize {
        self.files.len()
    }

    /// The key of this tree as `spec` sees it: the files, what lies outside the tree
    /// that the server reads ([`environment`]), the server's identity and settings,
    /// and the root's own path (diagnostics name files by absolute URI).
    pub fn key(&self, spec: &ServerSpec) -> String {
        let mut hasher = sha1_smol::Sha1::new();
        let mut add = |part: &str| {
            hasher.update(part.as_bytes());
            hasher.update(b"\0");
        };
        add(KEY_FORMAT);
        add(&self.root.to_string_lossy());
        add(&serde_json::to_string(spec).unwrap_or_default());
        add(&server_identity(spec));
        for line in environment(&self.root, spec) {
            add(&line);
        }
        for (rel, oid) in &self.files {
            add(rel);
            add(oid);
        }
        hasher.digest().to_string()
    }
}

/// The blob id of each file, read and hashed on every core: a cold run pays this
/// before it knows whether a stored baseline saves it an analysis.
fn hashed(paths: Vec<(String, PathBuf)>) -> std::io::Result<BTreeMap<String, String>> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let chunk = paths.len().div_ceil(cores).max(1);
    let parts: Vec<std::io::Result<Vec<(String, String)>>> = std::thread::scope(|scope| {
        let workers: Vec<_> = paths
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(rel, path)| {
                            let bytes = crate::regular::read(path)?;
                            Ok((rel.clone(), crate::changed::oid(&bytes)))
                        })
                        .collect()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("hashing failed")))
            })
            .collect()
    });
    let mut files = BTreeMap::new();
    for part in parts {
        files.extend(part?);
    }
    Ok(files)
}

/// Whether `spec` reads `path`: a file of its extensions, one it reads as
/// configuration, or a lock file.
fn seen_by(spec: &ServerSpec, path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str());
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    ext.is_some_and(|e| spec.extensions.iter().any(|x| x == e))
        || spec.configured_by(path)
        || LOCK_FILES.contains(&name)
}

/// The program that would run as the server, and those it runs besides (a pinned
/// tsserver): where each is, its size and time, and the version its package names
/// (an npm script's own file rarely changes when the package does).
fn server_identity(spec: &ServerSpec) -> String {
    let Some(path) = crate::config::which(&spec.command) else {
        return format!("{} not found", spec.command);
    };
    std::iter::once(path)
        .chain(crate::servers::runs_besides(spec))
        .map(|path| {
            let real = path.canonicalize().unwrap_or(path);
            let version = crate::servers::version::from_package(&real).unwrap_or_default();
            format!("{} {} {}", real.display(), stamp(&real), version)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the server reads outside the files of its tree, as lines: the entries of the
/// directories its imports resolve to (an installed package's directory is named by
/// the package, and a `*.dist-info` by its version; each entry's time changes when it
/// is reinstalled). Where these change, the key changes.
pub fn environment(root: &Path, spec: &ServerSpec) -> Vec<String> {
    let reads = |ext: &str| spec.extensions.iter().any(|e| e == ext);
    let mut dirs: Vec<PathBuf> = Vec::new();
    if reads("ts") || reads("js") {
        dirs.push(root.join("node_modules"));
        dirs.push(root.join("node_modules/@types"));
    }
    if reads("py") {
        for venv in [".venv", "venv"] {
            dirs.extend(site_packages(&root.join(venv)));
        }
        if let Some(python) = crate::config::which("python3").and_then(|p| p.canonicalize().ok())
            && let Some(prefix) = python.parent().and_then(Path::parent)
        {
            dirs.extend(site_packages(prefix));
            dirs.extend(site_packages(&prefix.join("local")));
        }
        if let Some(home) = crate::paths::dirs().home.as_deref() {
            dirs.extend(site_packages(&home.join(".local")));
        }
    }
    let mut lines = Vec::new();
    for dir in dirs {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .flatten()
            .map(|e| format!("{} {}", e.file_name().to_string_lossy(), stamp(&e.path())))
            .collect();
        names.sort();
        lines.push(dir.display().to_string());
        lines.extend(names);
    }
    lines
}

/// The `site-packages` and `dist-packages` directories under a Python prefix.
fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(prefix.join("lib")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("python") {
            continue;
        }
        for leaf in ["site-packages", "dist-packages"] {
            let dir = entry.path().join(leaf);
            if dir.is_dir() {
                found.push(dir);
            }
        }
    }
    found.sort();
    found
}

/// A file's size and modification time, or nothing for one that cannot be read.
fn stamp(path: &Path) -> String {
    match fs::symlink_metadata(path) {
        Ok(meta) => {
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{} {modified}", meta.len())
        }
        Err(_) => "-".into(),
    }
}
