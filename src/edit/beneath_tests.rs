//! `commit` against a workspace changed between planning and commit: a directory
//! swapped for a symlink out of the workspace, a symlink re-pointed out. Nothing is
//! written, created or removed outside, nothing in the workspace changes, and the
//! error is bad input (nothing written), naming the path.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::{EditError, commit, plan_patch, plan_write};

/// A canonical workspace holding `sub/a.txt`, and a directory outside it holding a
/// copy of `a.txt` (so that a check of the old bytes through the swapped directory
/// passes and only the commit's own walk can refuse).
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    let (ws, outside) = (base.join("ws"), base.join("outside"));
    fs::create_dir_all(ws.join("sub")).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    fs::write(ws.join("sub/a.txt"), "a\n").expect("write");
    fs::write(outside.join("a.txt"), "a\n").expect("write");
    (dir, ws, outside)
}

/// `mv sub sub.real; ln -s OUTSIDE sub`.
fn swap(ws: &Path, outside: &Path) {
    fs::rename(ws.join("sub"), ws.join("sub.real")).expect("mv");
    symlink(outside, ws.join("sub")).expect("ln -s");
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| {
            let path = e.expect("entry").path();
            let bytes = fs::read(&path).unwrap_or_default();
            (path.display().to_string(), bytes)
        })
        .collect();
    out.sort();
    out
}

#[track_caller]
fn refused_without_a_trace(err: EditError, outside: &Path, before: &[(String, Vec<u8>)]) {
    assert!(!err.partly_written(), "{err}");
    let message = err.to_string();
    assert!(message.contains("nothing was written"), "{message}");
    assert_eq!(
        listing(outside),
        before,
        "something changed outside: {message}"
    );
}

#[test]
fn a_directory_swapped_for_a_symlink_out_after_planning_is_not_written_through() {
    let patches: [(&str, &str); 4] = [
        (
            "create",
            "--- /dev/null\n+++ b/sub/new.py\n@@ -0,0 +1 @@\n+x\n",
        ),
        (
            "create deeper",
            "--- /dev/null\n+++ b/sub/d/e/new.py\n@@ -0,0 +1 @@\n+x\n",
        ),
        (
            "modify",
            "--- a/sub/a.txt\n+++ b/sub/a.txt\n@@ -1 +1 @@\n-a\n+b\n",
        ),
        (
            "delete",
            "--- a/sub/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
        ),
    ];
    for (what, patch) in patches {
        let (_dir, ws, outside) = setup();
        let plan = plan_patch(&ws, &ws, patch.as_bytes(), 1).expect("plans");
        swap(&ws, &outside);
        let before = listing(&outside);
        let inside = listing(&ws.join("sub.real"));
        let err = commit(&ws, &plan).expect_err(what);
        assert!(err.to_string().contains("sub"), "{what}: {err}");
        refused_without_a_trace(err, &outside, &before);
        assert_eq!(listing(&ws.join("sub.real")), inside, "{what}");
    }
    // `write`, as the issue has it.
    let (_dir, ws, outside) = setup();
    let plan = plan_write(&ws, &ws, Path::new("sub/new.py"), b"x\n".to_vec()).expect("plans");
    swap(&ws, &outside);
    let before = listing(&outside);
    let err = commit(&ws, &plan).expect_err("write");
    assert!(
        err.to_string()
            .contains("is not a directory of the workspace any more"),
        "{err}"
    );
    refused_without_a_trace(err, &outside, &before);
}

#[test]
fn a_rename_through_a_swapped_directory_is_refused() {
    let (_dir, ws, outside) = setup();
    fs::create_dir(ws.join("dst")).expect("mkdir");
    let patch = "diff --git a/sub/a.txt b/dst/a.txt\nsimilarity index 100%\n\
                 rename from sub/a.txt\nrename to dst/a.txt\n";
    let plan = plan_patch(&ws, &ws, patch.as_bytes(), 1).expect("plans");
    swap(&ws, &outside);
    let before = listing(&outside);
    let err = commit(&ws, &plan).expect_err("rename");
    refused_without_a_trace(err, &outside, &before);
    assert!(!ws.join("dst/a.txt").exists(), "the rename was half made");
}

#[test]
fn a_symlink_re_pointed_out_after_planning_is_not_written_through() {
    let (_dir, ws, outside) = setup();
    symlink("sub/a.txt", ws.join("link.txt")).expect("symlink");
    let plan = plan_write(&ws, &ws, Path::new("link.txt"), b"b\n".to_vec()).expect("plans");
    fs::remove_file(ws.join("link.txt")).expect("rm");
    symlink(outside.join("a.txt"), ws.join("link.txt")).expect("symlink");
    let before = listing(&outside);
    let err = commit(&ws, &plan).expect_err("re-pointed link");
    assert!(err.to_string().contains("outside the workspace"), "{err}");
    refused_without_a_trace(err, &outside, &before);
}
