//! Reading a workspace file: a regular file only, and never blocking on it. Opening
//! a FIFO for reading waits for a writer and reading a device may never end; the
//! daemon reads workspace files on every run, so one FIFO named like a source file
//! would wedge it for every later run. The type is checked before anything is opened,
//! then again on the open handle, which is opened non-blocking so that a FIFO put in
//! the file's place between the two cannot block the open.
//!
//! Every read of a file whose name comes from the workspace goes through here.

use std::fs::{self, File, Metadata};
use std::io::{self, Read};
use std::path::Path;

use rustix::fs::{Mode, OFlags};

/// The bytes of the regular file at `path` (a symlink followed). A directory, FIFO,
/// socket or device is an error of kind [`io::ErrorKind::InvalidInput`], see
/// [`not_regular`].
pub fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let path = path.as_ref();
    regular(&fs::metadata(path)?)?;
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )?;
    let mut file = File::from(fd);
    let meta = file.metadata()?;
    regular(&meta)?;
    // O_NONBLOCK does not change how a regular file reads.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Write `bytes` to `path`, one of lspgate's own files (a cache entry, a baseline),
/// whole or not at all: through a temporary file in the same directory (made first if
/// need be), renamed over it, so a reader never sees half of one.
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    io::Write::write_all(&mut tmp, bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// [`read`], as UTF-8 text.
pub fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Whether `e` is [`read`]'s refusal of a file that is not regular.
pub fn not_regular(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::InvalidInput
}

/// Ok for a regular file; else the error that says what it is instead.
pub fn regular(meta: &Metadata) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "is a directory"
    } else if kind.is_fifo() {
        "is not a regular file (a FIFO)"
    } else if kind.is_socket() {
        "is not a regular file (a socket)"
    } else if kind.is_block_device() || kind.is_char_device() {
        "is not a regular file (a device)"
    } else {
        "is not a regular file"
    };
    Err(io::Error::new(io::ErrorKind::InvalidInput, what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("ff.py");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
        let e = read(&fifo).expect_err("a FIFO is not read");
        assert!(not_regular(&e), "{e}");
        assert!(e.to_string().contains("FIFO"), "{e}");

        let e = read(dir.path()).expect_err("a directory is not read");
        assert!(
            not_regular(&e) && e.to_string().contains("directory"),
            "{e}"
        );
        let e = read(dir.path().join("missing")).expect_err("missing");
        assert_eq!(e.kind(), io::ErrorKind::NotFound);

        let file = dir.path().join("a.py");
        fs::write(&file, "x = 1\n").expect("write");
        assert_eq!(read_to_string(&file).expect("read"), "x = 1\n");
    }
}
