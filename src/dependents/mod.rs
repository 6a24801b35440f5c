//! Likely dependents, for servers that check only the files somebody opens: the files
//! an edit can break, found by resolving every file's imports to files of the
//! workspace and following them backwards from the edited files. (A server that
//! analyses its whole workspace finds them itself; see `check`.)
//!
//! The import graph is right by construction where the language allows it:
//! - Python: `import a.b`, `from a.b import c` (`a.b.c` when it is a module),
//!   relative imports (`from . import x`, `from ..pkg import y`), against the root
//!   and its `src/`;
//! - TypeScript and JavaScript: relative specifiers, `index` files, the extension
//!   rules of TypeScript (`./x.js` names `x.ts`), tsconfig's `baseUrl` and `paths`;
//! - C and C++: `#include`, relative to the including file, else any file of the
//!   workspace whose path ends with the included one;
//! - Go: a package's own files, and the files importing its path (`go.mod`'s module
//!   plus the directory).
//!
//! Other languages fall back to text evidence: a file that names an edited module or
//! a changed symbol.
//!
//! Breaks travel through inferred types (a file using a value whose type a second file
//! infers from the edited one), so every transitive importer is a dependent, as pyright
//! and tsserver themselves re-check them. Re-exports (a TypeScript barrel's `export *
//! from`, a Python package's `__init__`) pass through without counting as a level.
//! Ranked by evidence: direct importers using a changed symbol, then direct
//! importers, then the rest by distance. Nothing is dropped silently: what exceeds the
//! cap comes back in [`Found::dropped`]. A C or C++ header is a dependent only where what
//! the edit changed reaches its code ([`headers`]).

mod headers;
mod imports;
mod text;

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

pub use imports::Language;

/// Files larger than this are not scanned (generated code, vendored bundles).
const MAX_SCAN_BYTES: u64 = 1024 * 1024;
/// Files scanned at most, so a huge repository costs a bounded time.
const MAX_SCANNED: usize = 20_000;

/// One edited file as the scan sees it.
pub struct Edited<'a> {
    pub path: &'a Path,
    pub before: Option<&'a str>,
    pub after: Option<&'a str>,
}

/// The scan's answer.
#[derive(Debug, Default, PartialEq)]
pub struct Found {
    /// The likely dependents, most likely first, at most the cap.
    pub files: Vec<PathBuf>,
    /// Likely dependents beyond the cap, not to be checked: the caller says so.
    pub dropped: Vec<PathBuf>,
    /// Files the walk did not read (over [`MAX_SCANNED`]): their dependence is
    /// unknown.
    pub unscanned: bool,
}

/// The files under `root` with one of `extensions` that may depend on the edited
/// files, most likely first, at most `cap` of them. The edited files themselves are
/// excluded.
pub fn scan(root: &Path, edited: &[Edited<'_>], extensions: &[String], cap: usize) -> Found {
    if edited.is_empty() {
        return Found::default();
    }
    let edited_paths: HashSet<&Path> = edited.iter().map(|e| e.path).collect();
    let (texts, unscanned) = read_all(root, extensions);
    // Hashed, not sorted: the ranking below orders the result (comparing paths
    // component by component was a tenth of a 10,000-file scan).
    let texts: HashMap<PathBuf, String> = texts
        .into_iter()
        .filter(|(p, _)| !edited_paths.contains(p.as_path()))
        .collect();
    // Imports resolve to the files as they are after the edit, plus the edited ones
    // even when the edit deletes them: their importers are the ones it breaks.
    let mut known: HashSet<PathBuf> = texts.keys().cloned().collect();
    known.extend(edited.iter().map(|e| e.path.to_path_buf()));
    let resolver = imports::Resolver::new(root, &known);

    let symbols: BTreeSet<String> = edited
        .iter()
        .flat_map(|e| text::changed_symbols(e.before.unwrap_or(""), e.after.unwrap_or("")))
        .collect();
    let mut importers: HashMap<PathBuf, Vec<(PathBuf, bool)>> = HashMap::new();
    let mut fallback: Vec<PathBuf> = Vec::new();
    let stems: BTreeSet<String> = edited
        .iter()
        .flat_map(|e| text::module_names(e.path))
        .collect();
    for (path, body) in &texts {
        match Language::of(path) {
            Some(language) => {
                for import in resolver.imports(language, path, body) {
                    importers
                        .entry(import.target)
                        .or_default()
                        .push((path.clone(), import.reexport));
                }
            }
            // No import rules: a file naming an edited module or a changed symbol.
            None => {
                if stems
                    .iter()
                    .chain(&symbols)
                    .any(|w| text::contains_word(body, w))
                {
                    fallback.push(path.clone());
                }
            }
        }
    }
    let distance = reverse_distances(edited, &importers);
    let unreached = unreached_headers(edited, &distance, &texts, &importers);
    let mut ranked: Vec<(u8, u32, PathBuf)> = distance
        .into_iter()
        .filter(|(p, _)| !edited_paths.contains(p.as_path()) && !unreached.contains(p))
        .map(|(path, d)| {
            // A barrel of an edited module is as near as its direct importers.
            let d = d.max(1);
            // Only direct importers are told apart by what they use.
            let uses = d == 1
                && texts
                    .get(&path)
                    .is_some_and(|t| symbols.iter().any(|s| text::contains_word(t, s)));
            let tier = match (d, uses) {
                (1, true) => 0,
                (1, false) => 1,
                _ => 2,
            };
            (tier, d, path)
        })
        .collect();
    ranked.extend(fallback.into_iter().map(|p| (3, u32::MAX, p)));
    ranked.sort();
    ranked.dedup_by(|a, b| a.2 == b.2);
    let mut found = Found {
        unscanned,
        ..Found::default()
    };
    for (i, (_, _, path)) in ranked.into_iter().enumerate() {
        if i < cap {
            found.files.push(path);
        } else {
            found.dropped.push(path);
        }
    }
    found
}

/// The C and C++ headers among the dependents at `distance` that what the edit
/// changed does not reach: not opened (see [`headers`]).
fn unreached_headers(
    edited: &[Edited<'_>],
    distance: &HashMap<PathBuf, u32>,
    texts: &HashMap<PathBuf, String>,
    importers: &HashMap<PathBuf, Vec<(PathBuf, bool)>>,
) -> HashSet<PathBuf> {
    let c_family: Vec<&Edited<'_>> = edited
        .iter()
        .filter(|e| Language::of(e.path) == Some(Language::C))
        .collect();
    if c_family.is_empty() {
        return HashSet::new();
    }
    let mut change = headers::Change::default();
    for e in &c_family {
        change.add(e.before.unwrap_or(""), e.after);
    }
    let after: Vec<&str> = c_family.iter().filter_map(|e| e.after).collect();
    let dependents: Vec<PathBuf> = distance.keys().cloned().collect();
    headers::unreached(&dependents, texts, &after, &change, importers)
}

/// How many import steps each file is from an edited one, following `importers`
/// backwards; a re-export is no step (a barrel passes its module's names on).
fn reverse_distances(
    edited: &[Edited<'_>],
    importers: &HashMap<PathBuf, Vec<(PathBuf, bool)>>,
) -> HashMap<PathBuf, u32> {
    let mut distance: HashMap<PathBuf, u32> = HashMap::new();
    // 0-1 BFS: re-exports weigh 0, imports 1.
    let mut queue: VecDeque<(PathBuf, u32)> =
        edited.iter().map(|e| (e.path.to_path_buf(), 0)).collect();
    let mut settled: HashSet<PathBuf> = HashSet::new();
    while let Some((file, d)) = queue.pop_front() {
        if !settled.insert(file.clone()) {
            continue;
        }
        for (importer, reexport) in importers.get(&file).into_iter().flatten() {
            let next = if *reexport { d } else { d + 1 };
            let known = distance.get(importer).copied().unwrap_or(u32::MAX);
            if next < known && !settled.contains(importer) {
                distance.insert(importer.clone(), next);
                if next == d {
                    queue.push_front((importer.clone(), next));
                } else {
                    queue.push_back((importer.clone(), next));
                }
            }
        }
    }
    distance
}

/// The text of every file under `root` with one of `extensions`, .gitignore
/// honoured, and whether the walk stopped at [`MAX_SCANNED`]. Walked and read on
/// every core: reading is most of a scan's time.
fn read_all(root: &Path, extensions: &[String]) -> (Vec<(PathBuf, String)>, bool) {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let found: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());
    let count = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .build_parallel()
        .run(|| {
            Box::new(|entry| {
                use ignore::WalkState;
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                let path = entry.path();
                let wanted = path
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|ext| extensions.iter().any(|x| x == ext))
                    && entry.file_type().is_some_and(|t| t.is_file())
                    && entry.metadata().is_ok_and(|m| m.len() <= MAX_SCAN_BYTES);
                if !wanted {
                    return WalkState::Continue;
                }
                if count.fetch_add(1, Ordering::Relaxed) >= MAX_SCANNED {
                    stopped.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                if let Ok(text) = crate::regular::read_to_string(path) {
                    let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
                    found.push((path.to_path_buf(), text));
                }
                WalkState::Continue
            })
        });
    let found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    (found, stopped.into_inner())
}

/// The files under `root` with one of `extensions`, .gitignore honoured and
/// installed packages (`node_modules`) skipped, at most `cap` of them, and whether
/// there were more.
pub fn files_under(root: &Path, extensions: &[String], cap: usize) -> (Vec<PathBuf>, bool) {
    let mut found = Vec::new();
    for entry in files_of(root, extensions, true) {
        if found.len() == cap {
            return (found, true);
        }
        found.push(entry.into_path());
    }
    found.sort();
    (found, false)
}

/// The files under `root` with one of `extensions` (as [`files_under`]) whose text
/// names one of `needles`, at most `cap` of them, and whether the walk stopped early.
pub fn files_naming(
    root: &Path,
    extensions: &[String],
    needles: &[String],
    cap: usize,
) -> (Vec<PathBuf>, bool) {
    let (files, more) = files_under(root, extensions, MAX_SCANNED);
    let mut found: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| {
            crate::regular::read_to_string(f)
                .is_ok_and(|t| needles.iter().any(|n| t.contains(n.as_str())))
        })
        .collect();
    let over = found.len() > cap;
    found.truncate(cap);
    (found, more || over)
}

/// The first file under `root` with one of `extensions` (the walk's order), if any.
pub fn any_file(root: &Path, extensions: &[String]) -> Option<PathBuf> {
    files_of(root, extensions, false)
        .next()
        .map(|entry| entry.into_path())
}

/// The walk of the files under `root` with one of `extensions`, .gitignore honoured,
/// hidden entries skipped, and `node_modules` too with `skip_packages`.
fn files_of<'a>(
    root: &Path,
    extensions: &'a [String],
    skip_packages: bool,
) -> impl Iterator<Item = ignore::DirEntry> + 'a {
    ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .filter_entry(move |e| !skip_packages || e.file_name() != "node_modules")
        .build()
        .flatten()
        .filter(|entry| {
            entry.file_type().is_some_and(|t| t.is_file())
                && entry
                    .path()
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| extensions.iter().any(|x| x == e))
        })
}

#[cfg(test)]
mod tests;
