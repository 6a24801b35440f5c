//! Writing beneath the workspace root through directory handles, for `commit`.
//!
//! The planners check where a path leads once, when the edit is planned; a directory
//! swapped for a symlink out of the workspace between then and the commit (while the
//! servers take the before view, seconds later) would otherwise be written through.
//! So the commit reaches every directory it writes in from a handle on the workspace
//! root, one component at a time, each opened with `O_NOFOLLOW` (and `..` refused):
//! a symlink anywhere on the way is an error, not a way out. Every create, write,
//! rename and removal is then made relative to the directory handle (`openat`,
//! `mkdirat`, `renameat`, `unlinkat`), so what the path names later does not matter.
//!
//! A directory moved out of the workspace while its handle is held is written in where
//! it went: no check on names can see that, and a rename needs write access to the
//! workspace already.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

/// The workspace root, held open.
pub(super) struct Root {
    fd: OwnedFd,
    path: PathBuf,
}

/// A directory inside the workspace, reached from the root without following a symlink.
pub(super) struct Dir {
    fd: OwnedFd,
    /// Where it was when it was opened, for messages.
    pub path: PathBuf,
}

impl Root {
    /// `workspace` must be canonical (the planners' paths start with it).
    pub(super) fn open(workspace: &Path) -> io::Result<Root> {
        let fd = rustix::fs::open(
            workspace,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Root {
            fd,
            path: workspace.to_path_buf(),
        })
    }

    /// The directory holding `path`, and `path`'s file name in it. With `created`,
    /// missing directories are made, each recorded there.
    pub(super) fn parent_of<'a>(
        &self,
        path: &'a Path,
        created: Option<&mut Vec<PathBuf>>,
    ) -> io::Result<(Dir, &'a OsStr)> {
        let mut names = self.relative(path)?;
        let name = names
            .pop()
            .ok_or_else(|| io::Error::other(format!("{}: not a file", super::shown(path))))?;
        Ok((self.walk(&names, created)?, name))
    }

    /// The directory `dir` itself (the root included).
    pub(super) fn dir(&self, dir: &Path) -> io::Result<Dir> {
        let names = self.relative(dir)?;
        self.walk(&names, None)
    }

    /// Remove the empty directory `dir`.
    pub(super) fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        let (parent, name) = self.parent_of(dir, None)?;
        rustix::fs::unlinkat(&parent.fd, name, AtFlags::REMOVEDIR)?;
        Ok(())
    }

    /// `path`'s components below the root: refused when it is not below it or has a
    /// `..` (the planners' paths have none).
    fn relative<'a>(&self, path: &'a Path) -> io::Result<Vec<&'a OsStr>> {
        let outside = || {
            io::Error::other(format!(
                "{} is outside the workspace {}",
                super::shown(path),
                self.path.display()
            ))
        };
        let rest = path.strip_prefix(&self.path).map_err(|_| outside())?;
        rest.components()
            .map(|c| match c {
                Component::Normal(name) => Ok(name),
                _ => Err(outside()),
            })
            .collect()
    }

    fn walk(&self, names: &[&OsStr], mut created: Option<&mut Vec<PathBuf>>) -> io::Result<Dir> {
        let mut fd = rustix::io::fcntl_dupfd_cloexec(&self.fd, 0)?;
        let mut at = self.path.clone();
        for name in names {
            at.push(name);
            let next = match open_dir(&fd, name) {
                Err(Errno::NOENT) if created.is_some() => {
                    rustix::fs::mkdirat(&fd, *name, Mode::from_raw_mode(0o777))?;
                    if let Some(created) = created.as_deref_mut() {
                        created.push(at.clone());
                    }
                    open_dir(&fd, name)
                }
                other => other,
            };
            fd = next.map_err(|e| not_a_directory(e, &at))?;
        }
        Ok(Dir { fd, path: at })
    }
}

fn open_dir(fd: &OwnedFd, name: &OsStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        fd,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// A component that cannot be entered: a symlink or a file where the plan had a
/// directory says so; other errors are passed on.
fn not_a_directory(e: Errno, at: &Path) -> io::Error {
    if matches!(e, Errno::LOOP | Errno::NOTDIR) {
        io::Error::other(format!(
            "{} is not a directory of the workspace any more (a symlink or a file is in \
             its place; it changed since the edit was planned)",
            super::shown(at)
        ))
    } else {
        e.into()
    }
}

/// A temporary file in a [`Dir`], removed when dropped unless renamed.
pub(super) struct Temp {
    dir: Dir,
    name: OsString,
    pub file: File,
    renamed: bool,
}

impl Dir {
    /// A new temporary file named `.lspgate-*.tmp`, created with `mode` (which the
    /// umask reduces, as `open` does).
    pub(super) fn temp_file(self, mode: u32) -> io::Result<Temp> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let pid = std::process::id();
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let name = OsString::from(format!(".lspgate-{pid}-{n}-{nanos:x}.tmp"));
            let opened = rustix::fs::openat(
                &self.fd,
                &name,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(mode),
            );
            match opened {
                Ok(fd) => {
                    return Ok(Temp {
                        dir: self,
                        name,
                        file: File::from(fd),
                        renamed: false,
                    });
                }
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Whether `name` exists here (a symlink, even dangling, does).
    pub(super) fn has(&self, name: &OsStr) -> bool {
        rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    /// Whether `name` here is a symlink.
    pub(super) fn is_symlink(&self, name: &OsStr) -> bool {
        rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink
        })
    }

    /// The permission bits of `name` here, a symlink followed.
    pub(super) fn mode_of(&self, name: &OsStr) -> io::Result<u32> {
        let st = rustix::fs::statat(&self.fd, name, AtFlags::empty())?;
        // `st_mode` is narrower than `u32` on some systems.
        #[allow(clippy::useless_conversion)]
        Ok(u32::from(st.st_mode) & 0o7777)
    }

    /// Remove the file (or symlink) `name` here.
    pub(super) fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?;
        Ok(())
    }

    /// Flush the directory's entries to disk.
    pub(super) fn sync(&self) -> io::Result<()> {
        rustix::fs::fsync(&self.fd)?;
        Ok(())
    }
}

impl Temp {
    /// Rename the temporary file to `name` in its directory, replacing what is there,
    /// or with `noclobber` failing if anything is.
    pub(super) fn persist(mut self, name: &OsStr, noclobber: bool) -> io::Result<()> {
        let fd = &self.dir.fd;
        if noclobber {
            rename_noreplace(fd, &self.name, name)?;
        } else {
            rustix::fs::renameat(fd, &self.name, fd, name)?;
        }
        self.renamed = true;
        Ok(())
    }

    /// The directory it is in.
    pub(super) fn dir(&self) -> &Dir {
        &self.dir
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = rustix::fs::unlinkat(&self.dir.fd, &self.name, AtFlags::empty());
        }
    }
}

/// `renameat` that never replaces: `RENAME_NOREPLACE` where the kernel and the file
/// system have it, else a hard link and an unlink (as `tempfile`'s `persist_noclobber`).
fn rename_noreplace(dir: &OwnedFd, from: &OsStr, to: &OsStr) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    match rustix::fs::renameat_with(dir, from, dir, to, rustix::fs::RenameFlags::NOREPLACE) {
        Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {}
        other => return Ok(other?),
    }
    rustix::fs::linkat(dir, from, dir, to, AtFlags::empty())?;
    rustix::fs::unlinkat(dir, from, AtFlags::empty())?;
    Ok(())
}
