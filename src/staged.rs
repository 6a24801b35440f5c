//! `check --staged`: the change the next commit would make, read from git as an
//! [`EditPlan`]: for each staged file under the workspace, before = its blob in HEAD
//! (none for a new file, or before the first commit), after = its blob in the index
//! (none for a deleted file). The working tree is not read, so a file staged and then
//! edited further is checked as it will be committed.
//!
//! Git is asked twice: `git diff --cached --raw -z` for what is staged (renames
//! detected with `-M`, paths relative to the workspace with `--relative`), then one
//! `git cat-file --batch` for every blob. Git runs with the caller's environment, so a
//! pre-commit hook's `GIT_INDEX_FILE` (the temporary index of `git commit -a` or
//! `git commit PATH`) is the index read. Symbolic links and submodules are not text
//! a server checks, and are left out; an unmerged path is an error.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::edit::{EditError, EditPlan, FileChange};

/// The staged change of the repository holding `workspace`, limited to the workspace.
pub fn plan(workspace: &Path) -> Result<EditPlan, EditError> {
    let raw = git(
        workspace,
        &[
            "diff",
            "--cached",
            "--raw",
            "-z",
            "--no-abbrev",
            "-M",
            "--relative",
            "--no-ext-diff",
            "--no-color",
        ],
    )?;
    let entries = parse_raw(&raw)?;
    let mut wanted: Vec<&str> = Vec::new();
    for e in &entries {
        for side in [&e.src, &e.dst].into_iter().flatten() {
            wanted.push(&side.oid);
        }
    }
    let mut blobs = cat_blobs(workspace, &wanted)?.into_iter();
    let mut next = |side: &Option<Side>| side.as_ref().and_then(|_| blobs.next());
    let mut changes = Vec::new();
    for e in &entries {
        let before = next(&e.src);
        let after = next(&e.dst);
        if before.is_none() && after.is_none() {
            continue;
        }
        let path = workspace.join(OsStr::from_bytes(&e.path));
        let renamed_from = e
            .renamed_from
            .as_ref()
            .filter(|_| before.is_some())
            .map(|p| workspace.join(OsStr::from_bytes(p)));
        changes.push(FileChange {
            path,
            renamed_from,
            before,
            after,
            mode: None,
        });
    }
    Ok(EditPlan { changes })
}

/// One side of a staged change, when it is a regular file.
#[derive(Debug, PartialEq)]
struct Side {
    oid: String,
}

/// One line of `git diff --raw`.
#[derive(Debug, PartialEq)]
struct Entry {
    /// Where the file is in the index (for a delete: where it was).
    path: Vec<u8>,
    /// For a rename: where it was in HEAD.
    renamed_from: Option<Vec<u8>>,
    src: Option<Side>,
    dst: Option<Side>,
}

/// Parse `git diff --raw -z` output:
/// `:SRCMODE DSTMODE SRCOID DSTOID STATUS\0PATH\0`, with a second path for renames and
/// copies.
fn parse_raw(raw: &[u8]) -> Result<Vec<Entry>, EditError> {
    let bad =
        |what: &str| EditError::Other(format!("check --staged: unexpected git output: {what}"));
    let mut fields = raw.split(|&b| b == 0).filter(|f| !f.is_empty());
    let mut entries = Vec::new();
    while let Some(meta) = fields.next() {
        let meta = std::str::from_utf8(meta).map_err(|_| bad("not UTF-8"))?;
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [src_mode, dst_mode, src_oid, dst_oid, status] = parts[..] else {
            return Err(bad(meta));
        };
        let first = fields
            .next()
            .ok_or_else(|| bad("a path is missing"))?
            .to_vec();
        let letter = status.chars().next().ok_or_else(|| bad(meta))?;
        // Only regular files are text a server reads: not symlinks, not submodules.
        let side = |mode: &str, oid: &str| {
            matches!(mode, "100644" | "100755").then(|| Side {
                oid: oid.to_owned(),
            })
        };
        let (src, dst) = (side(src_mode, src_oid), side(dst_mode, dst_oid));
        let entry = match letter {
            'R' | 'C' => {
                let second = fields
                    .next()
                    .ok_or_else(|| bad("a path is missing"))?
                    .to_vec();
                if letter == 'R' {
                    Entry {
                        path: second,
                        renamed_from: Some(first),
                        src,
                        dst,
                    }
                } else {
                    // A copy is a new file; its source is unchanged.
                    Entry {
                        path: second,
                        renamed_from: None,
                        src: None,
                        dst,
                    }
                }
            }
            'U' => {
                return Err(EditError::Path {
                    path: String::from_utf8_lossy(&first).into_owned(),
                    message: "unmerged; resolve the conflict and stage the result first".into(),
                });
            }
            'A' | 'D' | 'M' | 'T' => Entry {
                path: first,
                renamed_from: None,
                src: if letter == 'A' { None } else { src },
                dst: if letter == 'D' { None } else { dst },
            },
            _ => return Err(bad(meta)),
        };
        entries.push(entry);
    }
    Ok(entries)
}

/// `git` to run in `dir`. Git gives a hook `GIT_INDEX_FILE` (and may give `GIT_DIR`)
/// relative to the directory it started the hook in; `dir` may be another one (`--root`),
/// so they are made absolute first.
fn git_command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir);
    if let Ok(cwd) = std::env::current_dir() {
        for name in ["GIT_INDEX_FILE", "GIT_DIR"] {
            if let Some(value) = std::env::var_os(name).filter(|v| !v.is_empty()) {
                let path = Path::new(&value);
                if path.is_relative() {
                    cmd.env(name, cwd.join(path));
                }
            }
        }
    }
    cmd
}

/// Run git in `dir` and return its stdout; a failure is bad input, with git's words.
fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, EditError> {
    git_for("check --staged", dir, args)
}

/// `git ARGS` in `dir`, its output; failing, an error that names `who` asked.
pub(crate) fn git_for(who: &str, dir: &Path, args: &[&str]) -> Result<Vec<u8>, EditError> {
    let out = git_command(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| EditError::Other(format!("{who}: cannot run git: {e}")))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr.lines().next().unwrap_or("").trim();
        return Err(EditError::Other(format!(
            "{who}: git {} failed in {}: {first}",
            args.first().unwrap_or(&""),
            dir.display()
        )));
    }
    Ok(out.stdout)
}

/// The contents of `oids`, in order, through one `git cat-file --batch`.
fn cat_blobs(dir: &Path, oids: &[&str]) -> Result<Vec<Vec<u8>>, EditError> {
    cat_blobs_for("check --staged", dir, oids)
}

/// The blobs `oids` of the repository at `dir`, in order, by one `git cat-file
/// --batch`; failing, an error that names `who` asked.
pub(crate) fn cat_blobs_for(
    who: &str,
    dir: &Path,
    oids: &[&str],
) -> Result<Vec<Vec<u8>>, EditError> {
    if oids.is_empty() {
        return Ok(Vec::new());
    }
    let failed = |what: String| EditError::Other(format!("{who}: git cat-file: {what}"));
    let mut child = git_command(dir)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed(e.to_string()))?;
    let mut input: Vec<u8> = Vec::new();
    for oid in oids {
        input.extend_from_slice(oid.as_bytes());
        input.push(b'\n');
    }
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| failed("no stdin".into()))?;
    // Written from a thread: git answers while it reads, and a full output pipe would
    // otherwise stop it reading what is still to be written.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| failed("no stdout".into()))?;
    let mut reader = BufReader::new(stdout);
    let mut blobs = Vec::with_capacity(oids.len());
    let result = (|| {
        for oid in oids {
            let mut header = String::new();
            reader
                .read_line(&mut header)
                .map_err(|e| failed(e.to_string()))?;
            let mut parts = header.split_whitespace();
            let (Some(_), Some(kind), Some(size)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(failed(format!("{oid}: {}", header.trim())));
            };
            let size: usize = size
                .parse()
                .map_err(|_| failed(format!("{oid}: {}", header.trim())))?;
            if kind != "blob" {
                return Err(failed(format!("{oid} is a {kind}, not a blob")));
            }
            let mut blob = vec![0; size];
            reader
                .read_exact(&mut blob)
                .map_err(|e| failed(e.to_string()))?;
            let mut newline = [0u8; 1];
            reader
                .read_exact(&mut newline)
                .map_err(|e| failed(e.to_string()))?;
            blobs.push(blob);
        }
        Ok(())
    })();
    drop(reader);
    let _ = writer.join();
    let _ = child.wait();
    result.map(|()| blobs)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::PathBuf;

    use super::*;

    fn git_ok(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let ws = tmp.path().canonicalize().expect("canonical");
        git_ok(&ws, &["init", "-q"]);
        (tmp, ws)
    }

    fn change<'p>(plan: &'p EditPlan, ws: &Path, rel: &str) -> &'p FileChange {
        plan.changes
            .iter()
            .find(|c| c.path == ws.join(rel))
            .unwrap_or_else(|| panic!("no change of {rel} in {plan:#?}"))
    }

    #[test]
    fn reads_the_index_not_the_working_tree() {
        let (_tmp, ws) = repo();
        fs::write(ws.join("keep.py"), "same\n").expect("write");
        fs::write(ws.join("mod.py"), "head\n").expect("write");
        fs::write(ws.join("gone.py"), "bye\n").expect("write");
        fs::write(ws.join("old.py"), "a\nb\nc\nd\ne\nf\n").expect("write");
        git_ok(&ws, &["add", "-A"]);
        git_ok(&ws, &["commit", "-q", "-m", "one"]);

        fs::write(ws.join("mod.py"), "staged\n").expect("write");
        fs::write(ws.join("new.py"), "brand new\n").expect("write");
        git_ok(&ws, &["add", "mod.py", "new.py"]);
        git_ok(&ws, &["rm", "-q", "gone.py"]);
        git_ok(&ws, &["mv", "old.py", "moved.py"]);
        // Not staged: must not be seen.
        fs::write(ws.join("mod.py"), "working tree only\n").expect("write");
        fs::write(ws.join("keep.py"), "changed, unstaged\n").expect("write");

        let plan = plan(&ws).expect("plan");
        assert_eq!(plan.changes.len(), 4, "{plan:#?}");
        let m = change(&plan, &ws, "mod.py");
        assert_eq!(m.before.as_deref(), Some(&b"head\n"[..]));
        assert_eq!(m.after.as_deref(), Some(&b"staged\n"[..]));
        let n = change(&plan, &ws, "new.py");
        assert_eq!(
            (n.before.as_deref(), n.after.as_deref()),
            (None, Some(&b"brand new\n"[..]))
        );
        let g = change(&plan, &ws, "gone.py");
        assert_eq!(
            (g.before.as_deref(), g.after.as_deref()),
            (Some(&b"bye\n"[..]), None)
        );
        let r = change(&plan, &ws, "moved.py");
        assert_eq!(r.renamed_from, Some(ws.join("old.py")));
        assert_eq!(r.before, r.after);
    }

    #[test]
    fn before_the_first_commit_everything_is_new() {
        let (_tmp, ws) = repo();
        fs::create_dir(ws.join("sub")).expect("mkdir");
        fs::write(ws.join("sub/a.py"), "x = 1\n").expect("write");
        git_ok(&ws, &["add", "-A"]);
        let plan = plan(&ws).expect("plan");
        let a = change(&plan, &ws, "sub/a.py");
        assert_eq!(
            (a.before.as_deref(), a.after.as_deref()),
            (None, Some(&b"x = 1\n"[..]))
        );
        // From a subdirectory workspace, only its files, named from there.
        let sub = super::plan(&ws.join("sub")).expect("plan");
        assert_eq!(sub.changes.len(), 1);
        assert_eq!(sub.changes[0].path, ws.join("sub/a.py"));
    }

    #[test]
    fn nothing_staged_is_an_empty_plan() {
        let (_tmp, ws) = repo();
        assert!(plan(&ws).expect("plan").changes.is_empty());
    }

    #[test]
    fn outside_a_repository_is_an_error() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().canonicalize().expect("canonical");
        // GIT_CEILING_DIRECTORIES is not needed: a temp dir is not inside a repository
        // unless /tmp itself is one, which would make this test meaningless anyway.
        let err = plan(&dir).expect_err("no repository");
        assert!(
            err.to_string()
                .starts_with("check --staged: git diff failed"),
            "{err}"
        );
    }

    #[test]
    fn raw_output_parses() {
        let z = "0000000000000000000000000000000000000000";
        let a = "1111111111111111111111111111111111111111";
        let b = "2222222222222222222222222222222222222222";
        let raw = format!(
            ":100644 100644 {a} {b} M\0m.py\0\
             :000000 100644 {z} {b} A\0n.py\0\
             :100644 000000 {a} {z} D\0d.py\0\
             :100644 100644 {a} {b} R090\0from.py\0to.py\0\
             :100644 120000 {a} {b} T\0link\0\
             :160000 160000 {a} {b} M\0sub\0"
        );
        let entries = parse_raw(raw.as_bytes()).expect("parse");
        assert_eq!(entries.len(), 6);
        assert_eq!(entries[3].path, b"to.py");
        assert_eq!(entries[3].renamed_from.as_deref(), Some(&b"from.py"[..]));
        assert!(entries[1].src.is_none() && entries[1].dst.is_some());
        assert!(entries[2].src.is_some() && entries[2].dst.is_none());
        // A file turned into a symlink: only its old text is a file.
        assert!(entries[4].src.is_some() && entries[4].dst.is_none());
        assert!(entries[5].src.is_none() && entries[5].dst.is_none());
        let unmerged = format!(":000000 000000 {z} {z} U\0c.py\0");
        let err = parse_raw(unmerged.as_bytes()).expect_err("unmerged");
        assert!(err.to_string().starts_with("c.py: unmerged"), "{err}");
    }
}
