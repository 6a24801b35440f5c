//! Where an edit may write. A path from the command line or from a patch becomes an
//! absolute path with its directories resolved through symlinks, and is refused
//! unless it lies inside the workspace, outside any `.git` directory, both as named
//! and once a symlink in its last component is followed. `.git` is matched as git
//! itself refuses it (`core.protectNTFS`, `core.protectHFS`): in any letter case, with
//! trailing dots or spaces, as the NTFS short name `git~1`, and with the code points
//! HFS+ ignores, since on a case-insensitive file system each names the same directory.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::EditError;

/// Symlinks followed in one path before giving up, as the kernel's `ELOOP` limit.
const MAX_LINKS: usize = 40;

/// A path an edit may touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    /// Absolute; directories resolved, a symlink in the last component kept. This is
    /// the path a plan names.
    pub path: PathBuf,
    /// `path` with the last component followed too: the file read and written.
    pub real: PathBuf,
}

/// Resolve `given` (relative to `base`, or absolute) and check that it may be written.
/// Errors name `given` as the user wrote it.
pub(super) fn resolve(workspace: &Path, base: &Path, given: &Path) -> Result<Target, EditError> {
    if given.as_os_str().is_empty() {
        return Err(EditError::path(given, "empty path"));
    }
    let joined = base.join(given);
    let io_error = |e: io::Error| EditError::path(given, e.to_string());
    let path = real_path(&joined, false).map_err(io_error)?;
    let real = real_path(&joined, true).map_err(io_error)?;
    for resolved in [&path, &real] {
        let Ok(inside) = resolved.strip_prefix(workspace) else {
            let mut message = format!("path is outside the workspace {}", workspace.display());
            if resolved == &real && path != real {
                message += &format!(" (it is a symlink to {})", super::shown(&real));
            }
            return Err(EditError::path(given, message));
        };
        if inside.as_os_str().is_empty() {
            return Err(EditError::path(given, "is the workspace directory itself"));
        }
        if inside.components().any(|c| is_dot_git(c.as_os_str())) {
            return Err(EditError::path(
                given,
                "refusing to write inside a .git directory",
            ));
        }
    }
    Ok(Target { path, real })
}

/// Whether a path component names a `.git` directory on some file system (see the
/// module documentation).
pub(super) fn is_dot_git(name: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    // Code points HFS+ drops when comparing names (git's `is_hfs_dotgit`).
    let ignorable = |c: char| matches!(c, '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}');
    let folded: String = name
        .chars()
        .filter(|&c| !ignorable(c))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    // NTFS drops trailing dots and spaces.
    let folded = folded.trim_end_matches(['.', ' ']);
    folded == ".git" || folded == "git~1"
}

/// Read the file at `target`, `None` if it does not exist. `shown` names it in errors.
pub(super) fn read_existing(target: &Target, shown: &Path) -> Result<Option<Vec<u8>>, EditError> {
    match fs::metadata(&target.real) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(EditError::path(shown, e.to_string())),
        Ok(meta) if meta.is_dir() => return Err(EditError::path(shown, "is a directory")),
        // Reading a FIFO or a device could block or never end.
        Ok(meta) if !meta.is_file() => {
            return Err(EditError::path(shown, "is not a regular file"));
        }
        Ok(_) => {}
    }
    crate::regular::read(&target.real)
        .map(Some)
        .map_err(|e| EditError::path(shown, e.to_string()))
}

/// Resolve the absolute `path` the way the kernel would (symlinks followed, `..`
/// applied to the resolved parent), except that components which do not exist yet
/// are taken lexically. With `follow_last` false, a symlink in the last component is
/// kept as it is.
///
/// Written here rather than with `fs::canonicalize` on the nearest existing ancestor,
/// because that cannot see through a dangling symlink (a link to a file the edit is
/// about to create), which must be checked like any other.
pub(super) fn real_path(path: &Path, follow_last: bool) -> io::Result<PathBuf> {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    push_components(&mut pending, path);
    let mut out = PathBuf::from("/");
    let mut links = 0;
    // Once a component is missing, the rest cannot exist either: lexical from there.
    let mut missing = false;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&name);
        if missing {
            out = next;
            continue;
        }
        let last = pending.is_empty();
        match fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() && (follow_last || !last) => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(io::Error::other("too many levels of symbolic links"));
                }
                let target = fs::read_link(&next)?;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                let mut rest = VecDeque::new();
                push_components(&mut rest, &target);
                rest.extend(pending.drain(..));
                pending = rest;
            }
            Ok(meta) if !last && !meta.is_dir() => {
                return Err(io::Error::other(format!(
                    "{} is not a directory",
                    next.display()
                )));
            }
            Ok(_) => out = next,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                missing = true;
                out = next;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

fn push_components(queue: &mut VecDeque<OsString>, path: &Path) {
    for c in path.components() {
        match c {
            Component::Normal(name) => queue.push_back(name.to_os_string()),
            Component::ParentDir => queue.push_back(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
}
