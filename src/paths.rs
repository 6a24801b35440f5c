//! Paths as lspgate shows them (one way to make a path relative to the directory a
//! command ran in, for every message, note and report), and the name lspgate gives a
//! workspace in the per-user directories (its daemon's socket, its history).

use std::path::{Component, Path, PathBuf};

/// `path` as the user should read it: relative to `run_dir`, with `../` when it lies
/// outside; absolute when the two share nothing but the root (`/usr/lib/...` reads
/// better than `../../../usr/lib/...`) or lie on different roots (Windows drives).
pub fn display(path: &Path, run_dir: &Path) -> String {
    if path.is_relative() {
        return path.display().to_string();
    }
    let mut path_components = path.components().peekable();
    let mut dir_components = run_dir.components().peekable();
    let mut shared_normal = false;
    while let (Some(a), Some(b)) = (path_components.peek(), dir_components.peek()) {
        if a != b {
            break;
        }
        shared_normal |= matches!(a, Component::Normal(_));
        path_components.next();
        dir_components.next();
    }
    if !shared_normal {
        return path.display().to_string();
    }
    let mut relative = PathBuf::new();
    for _ in dir_components {
        relative.push("..");
    }
    relative.extend(path_components);
    if relative.as_os_str().is_empty() {
        ".".to_owned()
    } else {
        relative.display().to_string()
    }
}

/// A stable 64-bit FNV-1a hash of the path's bytes, as 16 hex digits. Stable across
/// builds and versions (std's hasher is not), so every lspgate finds the same socket.
pub fn workspace_hash(workspace: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in workspace.as_os_str().as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}
