//! Where a workspace's daemon lives: the per-user runtime directory (created `0700`,
//! its owner checked), and in it, named by a hash of the canonical workspace path, the
//! socket, the lock that makes the daemon single, and its log.
//!
//! The directory is `paths::dirs().runtime`: `$LSPGATE_RUNTIME_DIR` (tests), else
//! `$XDG_RUNTIME_DIR/lspgate`, else `/tmp/lspgate-<uid>`. Names are hashes, never
//! paths: `sun_path` holds 108 bytes on Linux and 104 on macOS.

use std::fs::{self, DirBuilder, File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The files of one workspace's daemon.
#[derive(Debug, Clone)]
pub struct Paths {
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub lock: PathBuf,
    pub log: PathBuf,
}

impl Paths {
    /// The directory of the file system watcher's markers (`watcher`), beside the
    /// socket.
    pub fn watch_markers(&self) -> PathBuf {
        self.socket.with_extension("watch")
    }

    /// The paths for `workspace` (canonical), creating and checking the directory.
    pub fn for_workspace(workspace: &Path) -> io::Result<Paths> {
        let dir = crate::paths::dirs().runtime.clone();
        ensure_private_dir(&dir)?;
        let hash = crate::paths::workspace_hash(workspace);
        Ok(Paths {
            socket: dir.join(format!("{hash}.sock")),
            lock: dir.join(format!("{hash}.lock")),
            log: dir.join(format!("{hash}.log")),
            dir,
        })
    }
}

pub fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// Create `dir` with mode `0700` if missing; refuse it unless it is a real directory
/// owned by us. Under `/tmp` anyone could have created it first, with a socket of
/// their own in it: the owner check is what makes the socket trustworthy.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent() {
                fs::create_dir_all(parent)?;
            }
            match DirBuilder::new().mode(0o700).create(dir) {
                Ok(()) => {}
                // Another run created it at the same moment: check theirs below.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
            fs::symlink_metadata(dir)?
        }
        Err(e) => return Err(e),
    };
    if !meta.file_type().is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a directory",
            dir.display()
        )));
    }
    if meta.uid() != uid() {
        return Err(io::Error::other(format!(
            "{} belongs to uid {}, not to us (uid {})",
            dir.display(),
            meta.uid(),
            uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        // Ours, but open to others (an umask, or created by hand): close it.
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Take the exclusive lock on `path`, creating it. `Ok(None)` when another process
/// holds it. The lock is held as long as the returned file is open.
pub fn try_lock(path: &Path) -> io::Result<Option<File>> {
    // An exiting daemon unlinks its lock file: a file opened just before that is
    // locked in vain, since the next process creates and locks a new one. So the
    // locked file must still be the one at `path`; if not, start over.
    for _ in 0..10 {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Ok(None),
            Err(TryLockError::Error(e)) => return Err(e),
        }
        let held = file.metadata()?;
        match fs::metadata(path) {
            Ok(now) if now.ino() == held.ino() && now.dev() == held.dev() => {
                return Ok(Some(file));
            }
            _ => continue,
        }
    }
    Err(io::Error::other(format!(
        "{}: the lock file keeps being replaced",
        path.display()
    )))
}

/// Whether `pid` is a running process (a zombie is not: it has exited, and a
/// container's init may never reap it).
pub fn process_alive(pid: u32) -> bool {
    if let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) state ...`; comm may hold spaces and parentheses.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next());
        return state.is_some_and(|s| s != "Z" && s != "X");
    }
    if Path::new("/proc/self/stat").exists() {
        return false;
    }
    // No procfs (macOS): signal 0 tells whether the pid exists.
    rustix::process::Pid::from_raw(pid as i32)
        .is_some_and(|p| rustix::process::test_kill_process(p).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_stable_and_short() {
        assert_eq!(
            crate::paths::workspace_hash(Path::new("")),
            "cbf29ce484222325"
        );
        let a = crate::paths::workspace_hash(Path::new("/home/me/project"));
        assert_eq!(a.len(), 16);
        assert_eq!(
            a,
            crate::paths::workspace_hash(Path::new("/home/me/project"))
        );
        assert_ne!(
            a,
            crate::paths::workspace_hash(Path::new("/home/me/project2"))
        );
    }

    #[test]
    fn private_dir_is_created_0700_and_tightened() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("a/b");
        ensure_private_dir(&dir).expect("create");
        let mode = fs::metadata(&dir).expect("stat").mode() & 0o777;
        assert_eq!(mode, 0o700);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
        ensure_private_dir(&dir).expect("tighten");
        assert_eq!(fs::metadata(&dir).expect("stat").mode() & 0o777, 0o700);
    }

    #[test]
    fn a_symlink_is_not_a_private_dir() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path(), &link).expect("symlink");
        assert!(ensure_private_dir(&link).is_err());
    }

    #[test]
    fn lock_is_exclusive() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("x.lock");
        let first = try_lock(&path).expect("lock");
        assert!(first.is_some());
        assert!(try_lock(&path).expect("second lock").is_none());
        drop(first);
        assert!(try_lock(&path).expect("after release").is_some());
    }

    #[test]
    fn own_process_is_alive() {
        assert!(process_alive(std::process::id()));
    }
}
