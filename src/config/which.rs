//! Where a server's command would run from: a path as it is, a name looked up on
//! `PATH` (never in the current directory).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Where `command` would run from: itself if it is a path, else the first executable
/// file of that name in a `PATH` directory.
pub fn which(command: &str) -> Option<PathBuf> {
    which_in(command, &std::env::var_os("PATH").unwrap_or_default())
}

fn which_in(command: &str, path_var: &OsStr) -> Option<PathBuf> {
    if command.is_empty() {
        return None;
    }
    let as_path = Path::new(command);
    if is_path(command) || as_path.is_absolute() {
        return is_executable(as_path).then(|| as_path.to_owned());
    }
    std::env::split_paths(path_var)
        // An empty entry means the current directory, where a repository could plant
        // a program of that name; no server is installed that way.
        .filter(|dir| !dir.as_os_str().is_empty())
        .flat_map(|dir| executable_names(command).map(move |name| dir.join(name)))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn executable_names(command: &str) -> impl Iterator<Item = String> {
    std::iter::once(command.to_string())
}

#[cfg(not(unix))]
fn executable_names(command: &str) -> impl Iterator<Item = String> {
    ["", ".exe", ".cmd", ".bat"]
        .into_iter()
        .map(move |ext| format!("{command}{ext}"))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Whether a server command names a file (`./bin/server`, `/opt/x/server`) rather
/// than a program to look up on PATH.
pub(super) fn is_path(command: &str) -> bool {
    Path::new(command).components().count() > 1
}

/// Why [`which`] found nothing for `command`, for a report: a path that is not an
/// executable file, or a name not on PATH.
pub fn not_found(command: &str) -> String {
    if is_path(command) {
        format!("`{command}` does not exist or is not executable")
    } else {
        format!("`{command}` is not on PATH")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn which_finds_only_executable_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).expect("mkdir");
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").expect("write");
        std::fs::write(bin.join("plain"), "").expect("write");
        std::fs::create_dir(bin.join("dir")).expect("mkdir");
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");

        let path_var =
            std::env::join_paths([dir.path().join("missing"), bin.clone()]).expect("join");
        assert_eq!(which_in("tool", &path_var), Some(tool.clone()));
        assert_eq!(which_in("plain", &path_var), None);
        assert_eq!(which_in("dir", &path_var), None);
        assert_eq!(which_in("nope", &path_var), None);
        assert_eq!(which_in("", &path_var), None);
        let tool_str = tool.display().to_string();
        assert_eq!(which_in(&tool_str, OsStr::new("")), Some(tool));
    }
}
