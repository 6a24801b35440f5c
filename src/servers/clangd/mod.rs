//! clangd: its entry, its waits, and what an untrusted project may set for it.
//!
//! Measured facts the waits and the check rely on:
//! - with `clangdFileStatus`, clangd reports each file's state
//!   (`textDocument/clangd.fileStatus`): a file with a publish of our version is done
//!   once its state is back to "idle", and the short quiet covers the rest of the
//!   burst; "idle" with nothing published waits out the full quiet (see `wait`),
//!   since "idle" also comes between the steps of a rebuild, and clangd publishes
//!   nothing when a file's text and includes did not change;
//! - clangd 14 reads included headers from the disk, not from the open documents: a
//!   change shown only in memory (--dry-run, --reject, check --staged) does not reach
//!   the files that include it (`dependents_see_unsaved: false`). clangd 15 and later
//!   read the open ones when told to (`--use-dirty-headers`), which a clangd of that
//!   version is told at its start ([`adapt_launch`]);
//! - clangd 14 skips the rebuild of a file whose text did not change unless its
//!   preamble did: a changed header it includes further down (Lua's `lstate.h`
//!   includes `lobject.h` after a typedef) leaves it silent and stale, and so does a
//!   header it did not find and that is back; such a file sent again unchanged is
//!   sent with `forceRebuild` (`force_rebuild_unchanged`, see `protocol`);
//! - clangd checks open files only and has no project-wide mode: the before view of a
//!   header's includers is a build of each, and the edit a second one. A warm daemon
//!   opens every unit of the compilation database instead (`open_units`), as an editor
//!   with the project's files open would hold it; an edit then costs clangd's one
//!   rebuild of the includers. Each open unit keeps its preamble and symbols in clangd:
//!   on Lua's 32 units, its memory went from 99 MiB (one file open) to 264 MiB; a
//!   project with more than `OPEN_UNITS` units is left to the scan.

pub mod protocol;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::{Allow, AllowList, ServerSpec, WaitProfile, entry, languages, strs};

pub(super) const CLANGD: &str = "clangd";

/// The units a warm daemon opens for clangd, at most (see the module's notes).
const OPEN_UNITS: usize = 64;

pub(super) fn clangd() -> ServerSpec {
    ServerSpec {
        root_markers: strs(&["compile_commands.json", "compile_flags.txt", ".clangd"]),
        initialization_options: Some(json!({ "clangdFileStatus": true })),
        wait: WaitProfile {
            quiet: Duration::from_millis(150),
            confirmed_quiet: Some(Duration::from_millis(15)),
            dependents_see_unsaved: false,
            force_rebuild_unchanged: true,
            ..WaitProfile::default()
        },
        install_hint: "apt-get install clangd".into(),
        coverage: super::Coverage {
            open_units: OPEN_UNITS,
            // The flags each file is compiled with.
            configuration: strs(&["compile_commands.json", "compile_flags.txt", ".clangd"]),
            ..super::Coverage::default()
        },
        ..entry(
            CLANGD,
            "clangd",
            &["--background-index=false"],
            languages::C,
            "cpp",
        )
    }
}

/// What an untrusted project may set: clangd reads only initialization options. Not
/// `fallbackFlags` (compiler flags, a `-fplugin` among them) nor
/// `compilationDatabaseChanges` (flags per file).
pub(super) const ALLOWED: AllowList = AllowList {
    settings: &[],
    initialization_options: &[
        ("clangdFileStatus", Allow::Value),
        ("compilationDatabasePath", Allow::InsidePaths),
    ],
};

/// `project-wide` for clangd: off, a daemon opens no units of its own, and the
/// includers of an edited header are opened by the run that needs them.
pub(super) fn set_project_wide(spec: &mut ServerSpec, on: bool) {
    spec.coverage.open_units = if on { OPEN_UNITS } else { 0 };
}

/// The clangd that first reads the headers a client has open rather than the disk
/// (`--use-dirty-headers`).
const DIRTY_HEADERS_SINCE: u32 = 15;

/// clangd 15 and later are told to read the headers lspgate has open, not the disk
/// (`--use-dirty-headers`): the files that include a header then see its text as
/// lspgate shows it, a dry run's new text or the old one a review shows for its
/// before view, where clangd 14 builds them from the disk (see the module's notes).
/// Lua's `lzio.h` changed behind a warm daemon's back: the word on its including
/// headers before the change, which clangd 14 could only build from the changed disk
/// (1 of 5 breaks, exit 1 with a note), is exact with clangd 19 (5 of 5).
pub(super) fn adapt_launch(launch: &mut super::Launch, spec: &ServerSpec, program: &Path) {
    const FLAG: &str = "--use-dirty-headers";
    if launch.args.iter().any(|a| a == FLAG) {
        launch.dependents_see_unsaved = true;
        return;
    }
    let probed = super::version::probe_cached(
        program,
        &spec.env,
        super::version::PROBE_TIMEOUT,
        crate::paths::dirs().cache.as_deref(),
    );
    let major = probed.as_deref().and_then(major_version);
    if major.is_some_and(|m| m >= DIRTY_HEADERS_SINCE) {
        launch.args.push(FLAG.to_string());
        launch.dependents_see_unsaved = true;
    }
}

/// The major version in clangd's `--version` line ("Debian clangd version 19.1.7
/// (3~deb12u1)", "clangd version 14.0.6").
fn major_version(line: &str) -> Option<u32> {
    let (_, rest) = line.split_once("clangd version ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// One entry of a compilation database (`compile_commands.json`).
#[derive(Deserialize)]
struct CompileCommand {
    directory: PathBuf,
    file: PathBuf,
}

/// The translation units of the compilation database clangd reads for `root` (its
/// `compilationDatabasePath` option, relative to `root`, else `root`): each entry's
/// file, resolved against its directory, that exists inside `root`; sorted, once each.
/// Err says why there are none to open (no database, or one that does not parse).
pub fn project_units(spec: &ServerSpec, root: &Path) -> Result<Vec<PathBuf>, String> {
    let dir = spec
        .initialization_options
        .as_ref()
        .and_then(|o| o.get("compilationDatabasePath"))
        .and_then(|v| v.as_str())
        .map_or_else(|| root.to_path_buf(), |d| root.join(d));
    let path = dir.join("compile_commands.json");
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let text =
        crate::regular::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let entries: Vec<CompileCommand> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let units: BTreeSet<PathBuf> = entries
        .into_iter()
        .map(|e| dir.join(e.directory).join(e.file))
        .filter_map(|p| p.canonicalize().ok())
        .filter(|p| p.starts_with(&root) && p.is_file())
        .collect();
    Ok(units.into_iter().collect())
}

/// Whether clangd is asked about every file of its project where a run can ([`whole_project`]):
/// with `project-wide` on, as a warm daemon opens its units.
pub(super) fn lists_its_project(spec: &ServerSpec) -> bool {
    spec.name == CLANGD && spec.coverage.open_units > 0
}

/// Files under a root clangd's project may list, at most: more, and it is not
/// listed whole.
const MAX_FILES: usize = 2000;

/// Every file of clangd's project at `root`: the units of its compilation database
/// (with `compile_flags.txt` instead, every source file under the root) and every
/// header of its extensions under the root (a header's own diagnostics are what
/// clangd says of it opened). None without either, or with more than [`MAX_FILES`].
pub(super) fn whole_project(spec: &ServerSpec, root: &Path) -> Option<Vec<PathBuf>> {
    let units = match project_units(spec, root) {
        Ok(units) => units,
        Err(_) if root.join("compile_flags.txt").is_file() => {
            return files_under(spec, root, |_| true);
        }
        Err(_) => return None,
    };
    let mut files: BTreeSet<PathBuf> = project_headers(spec, root)?.into_iter().collect();
    files.extend(units);
    (files.len() <= MAX_FILES).then(|| files.into_iter().collect())
}

/// Every header of clangd's extensions under `root`, sorted; None for more than
/// [`MAX_FILES`].
pub fn project_headers(spec: &ServerSpec, root: &Path) -> Option<Vec<PathBuf>> {
    files_under(spec, root, |e| e.included)
}

/// The files under `root` of clangd's extensions that `take` takes, sorted; None for
/// more than [`MAX_FILES`].
fn files_under(
    spec: &ServerSpec,
    root: &Path,
    take: impl Fn(&languages::Extension) -> bool,
) -> Option<Vec<PathBuf>> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let wanted: Vec<&str> = languages::C
        .iter()
        .filter(|e| spec.extensions.iter().any(|x| x == e.ext) && take(e))
        .map(|e| e.ext)
        .collect();
    let mut files = BTreeSet::new();
    for entry in ignore::WalkBuilder::new(&root)
        .hidden(true)
        .build()
        .flatten()
    {
        let path = entry.path();
        let wanted = entry.file_type().is_some_and(|t| t.is_file())
            && path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| wanted.contains(&e));
        if wanted {
            files.insert(path.to_path_buf());
            if files.len() > MAX_FILES {
                return None;
            }
        }
    }
    Some(files.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_whole_project_is_its_units_and_every_header() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical temp dir");
        for f in ["a.c", "b.c", "inc/a.h", "tool.c"] {
            let path = root.join(f);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(&path, "int x;\n").expect("write");
        }
        let spec = clangd();
        assert_eq!(whole_project(&spec, &root), None, "no database, no flags");
        std::fs::write(root.join("compile_flags.txt"), "-Iinc\n").expect("write flags");
        let every = ["a.c", "b.c", "inc/a.h", "tool.c"]
            .map(|f| root.join(f))
            .to_vec();
        assert_eq!(whole_project(&spec, &root), Some(every));
        let db = json!([
            { "directory": root, "file": "a.c", "command": "cc a.c" },
            { "directory": root, "file": "b.c", "command": "cc b.c" },
        ]);
        std::fs::write(root.join("compile_commands.json"), db.to_string()).expect("write db");
        let listed = ["a.c", "b.c", "inc/a.h"].map(|f| root.join(f)).to_vec();
        assert_eq!(
            whole_project(&spec, &root),
            Some(listed),
            "tool.c is no unit"
        );
        let mut off = clangd();
        set_project_wide(&mut off, false);
        assert!(!lists_its_project(&off));
    }

    #[test]
    fn the_units_are_the_databases_files_inside_the_root_once_each() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical temp dir");
        for f in ["a.c", "src/b.c"] {
            let path = root.join(f);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(&path, "int x;\n").expect("write a unit");
        }
        let outside = tempfile::NamedTempFile::new().expect("a file outside");
        let db = json!([
            { "directory": root, "file": "a.c", "arguments": ["cc", "a.c"] },
            // Relative to the entry's directory, and listed twice (two targets).
            { "directory": root.join("src"), "file": "b.c", "command": "cc b.c" },
            { "directory": root, "file": "src/b.c", "command": "cc -DX src/b.c" },
            { "directory": root, "file": "gone.c", "command": "cc gone.c" },
            { "directory": "/", "file": outside.path(), "command": "cc" },
        ]);
        std::fs::write(root.join("compile_commands.json"), db.to_string()).expect("write db");
        let spec = clangd();
        assert_eq!(
            project_units(&spec, &root),
            Ok(vec![root.join("a.c"), root.join("src/b.c")])
        );

        // Where its option puts the database, relative to the root.
        std::fs::create_dir(root.join("build")).expect("mkdir");
        std::fs::rename(
            root.join("compile_commands.json"),
            root.join("build/compile_commands.json"),
        )
        .expect("move db");
        assert!(
            project_units(&spec, &root).is_err(),
            "no database at the root"
        );
        let mut moved = clangd();
        moved.initialization_options = Some(json!({ "compilationDatabasePath": "build" }));
        assert_eq!(project_units(&moved, &root).map(|u| u.len()), Ok(2));

        std::fs::write(root.join("build/compile_commands.json"), "[{").expect("write");
        let err = project_units(&moved, &root).expect_err("not JSON");
        assert!(err.contains("compile_commands.json"), "{err}");
    }

    #[test]
    fn project_wide_off_opens_no_units() {
        let mut spec = clangd();
        assert_eq!(spec.coverage.open_units, OPEN_UNITS);
        set_project_wide(&mut spec, false);
        assert_eq!(spec.coverage.open_units, 0);
        set_project_wide(&mut spec, true);
        assert_eq!(spec.coverage.open_units, OPEN_UNITS);
    }

    #[test]
    fn the_major_version_is_read_from_the_version_line() {
        assert_eq!(
            major_version("Debian clangd version 19.1.7 (3~deb12u1)"),
            Some(19)
        );
        assert_eq!(
            major_version("Ubuntu clangd version 14.0.0-1ubuntu1.1"),
            Some(14)
        );
        assert_eq!(major_version("clangd version 20.0.0git"), Some(20));
        assert_eq!(major_version("clangd 19"), None);
        assert_eq!(major_version("clangd version x"), None);
    }
}
