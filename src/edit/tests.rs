//! Tests of the edit module: `plan_patch` + `commit` against `git apply` on trees
//! built with real git, path safety, the one-file planners, commit's guarantees, and
//! a property test that no input makes `plan_patch` panic.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::*;

// ---------------------------------------------------------------------------------
// Helpers

/// A file of a test tree: path, bytes, permission bits.
type File = (&'static str, Vec<u8>, u32);

fn file(path: &'static str, content: impl Into<Vec<u8>>) -> File {
    (path, content.into(), 0o644)
}

/// `n` numbered lines, `prefix line i`.
fn numbered(prefix: &str, n: usize) -> Vec<u8> {
    (1..=n)
        .map(|i| format!("{prefix} line {i}\n"))
        .collect::<String>()
        .into_bytes()
}

/// `text` with the 1-based line `at` replaced by `by` (several lines, or none).
fn replace_line(text: &[u8], at: usize, by: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, line) in text.split_inclusive(|&b| b == b'\n').enumerate() {
        if i + 1 == at {
            out.extend_from_slice(by.as_bytes());
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

fn write_tree(dir: &Path, files: &[File]) {
    for (path, content, mode) in files {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().expect("a file has a parent")).expect("mkdir");
        fs::write(&path, content).expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(*mode)).expect("chmod");
    }
}

/// Every file under `dir` (but `.git`), with its bytes and permission bits.
fn read_tree(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        for entry in fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            let meta = fs::symlink_metadata(&path).expect("stat");
            if meta.is_dir() {
                walk(root, &path, out);
            } else {
                let name = path.strip_prefix(root).expect("under root");
                let content = fs::read(&path).expect("read");
                let mode = meta.permissions().mode() & 0o777;
                out.insert(name.to_string_lossy().into_owned(), (content, mode));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Run git with no user or system configuration, so the host's settings (prefixes,
/// renames, autocrlf) cannot change what the tests see.
fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir))
        .output()
        .expect("git runs")
}

fn git_ok(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = git(dir, args);
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// A canonical workspace directory holding `files`.
fn workspace(files: &[File]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempdir();
    let ws = dir.path().join("ws");
    fs::create_dir(&ws).expect("mkdir ws");
    write_tree(&ws, files);
    let ws = ws.canonicalize().expect("canonical");
    (dir, ws)
}

fn apply_ours(ws: &Path, patch: &[u8], strip: usize) -> Result<EditPlan, EditError> {
    let plan = plan_patch(ws, ws, patch, strip)?;
    commit(ws, &plan)?;
    Ok(plan)
}

// ---------------------------------------------------------------------------------
// plan_patch + commit against git apply

enum Diff {
    /// `git diff --cached` with these extra arguments.
    Git(&'static [&'static str]),
    /// `diff -ruN before after`.
    Plain,
}

struct Case {
    name: &'static str,
    before: Vec<File>,
    after: Vec<File>,
    /// When set, the patch is before → mid followed by mid → after.
    mid: Option<Vec<File>>,
    diff: Diff,
    /// Changes the tree the patch is applied to, after the patch was made.
    target: Option<fn(&Path)>,
    /// `-p` for `git apply`; ours always gets the default, 1.
    git_strip: usize,
    refused: bool,
}

impl Case {
    fn new(name: &'static str, before: Vec<File>, after: Vec<File>) -> Self {
        Case {
            name,
            before,
            after,
            mid: None,
            diff: Diff::Git(&["-M"]),
            target: None,
            git_strip: 1,
            refused: false,
        }
    }
}

fn make_patch(tmp: &Path, case: &Case) -> Vec<u8> {
    let mut states = vec![&case.before];
    states.extend(case.mid.as_ref());
    states.push(&case.after);
    let mut patch = Vec::new();
    for (n, pair) in states.windows(2).enumerate() {
        let (from, to) = (pair[0], pair[1]);
        match case.diff {
            Diff::Git(args) => {
                let repo = tmp.join(format!("gen{n}"));
                fs::create_dir(&repo).expect("mkdir");
                git_ok(&repo, &["init", "-q"]);
                write_tree(&repo, from);
                git_ok(&repo, &["add", "-A"]);
                git_ok(&repo, &["commit", "-q", "--allow-empty", "-m", "before"]);
                for (path, ..) in from {
                    fs::remove_file(repo.join(path)).expect("rm");
                }
                write_tree(&repo, to);
                git_ok(&repo, &["add", "-A"]);
                let mut diff = vec!["diff", "--cached", "--no-color", "--no-ext-diff"];
                diff.extend(args);
                patch.extend(git_ok(&repo, &diff));
            }
            Diff::Plain => {
                let dir = tmp.join(format!("plain{n}"));
                write_tree(&dir.join("before"), from);
                write_tree(&dir.join("after"), to);
                fs::create_dir_all(dir.join("before")).expect("mkdir");
                fs::create_dir_all(dir.join("after")).expect("mkdir");
                let out = Command::new("diff")
                    .args(["-ruN", "before", "after"])
                    .current_dir(&dir)
                    .env("TZ", "UTC")
                    .output()
                    .expect("diff runs");
                assert_eq!(out.status.code(), Some(1), "diff found differences");
                patch.extend(out.stdout);
            }
        }
    }
    patch
}

fn run_case(case: &Case) {
    let tmp = tempdir();
    let tmp = tmp.path();
    let patch = make_patch(tmp, case);
    let patch_file = tmp.join("patch.diff");
    fs::write(&patch_file, &patch).expect("write patch");
    let shown = String::from_utf8_lossy(&patch);

    let (ours, theirs) = (tmp.join("ours"), tmp.join("theirs"));
    for dir in [&ours, &theirs] {
        fs::create_dir(dir).expect("mkdir");
        write_tree(dir, &case.before);
        if let Some(tweak) = case.target {
            tweak(dir);
        }
    }
    let untouched = read_tree(&ours);

    let p = format!("-p{}", case.git_strip);
    let patch_arg = patch_file.to_str().expect("utf-8 temp path");
    let git_apply = git(&theirs, &["apply", &p, "--whitespace=nowarn", patch_arg]);
    let ws = ours.canonicalize().expect("canonical");
    let result = apply_ours(&ws, &patch, 1);

    let name = case.name;
    let git_err = String::from_utf8_lossy(&git_apply.stderr);
    assert_eq!(
        git_apply.status.success(),
        !case.refused,
        "{name}: git apply: {git_err}\n{shown}"
    );
    match &result {
        Ok(_) => assert!(
            !case.refused,
            "{name}: we applied what git refuses\n{shown}"
        ),
        Err(e) => assert!(case.refused, "{name}: we refused: {e}\n{shown}"),
    }
    assert_eq!(
        read_tree(&ours),
        read_tree(&theirs),
        "{name}: trees differ\n{shown}"
    );
    if case.refused {
        assert_eq!(read_tree(&ours), untouched, "{name}: a refused patch wrote");
    } else if case.target.is_none() {
        // Both agree, and on the intended result (contents; modes are git's above).
        let contents = |tree: BTreeMap<String, (Vec<u8>, u32)>| {
            tree.into_iter()
                .map(|(path, (bytes, _))| (path, bytes))
                .collect::<Vec<_>>()
        };
        let expected = tmp.join("expected");
        write_tree(&expected, &case.after);
        assert_eq!(
            contents(read_tree(&ours)),
            contents(read_tree(&expected)),
            "{name}"
        );
    }
}

fn git_cases() -> Vec<Case> {
    let mut cases = simple_git_cases();
    cases.extend(git_cases_with_options());
    cases
}

/// One patch each, applied as `git apply` would with no option.
fn simple_git_cases() -> Vec<Case> {
    let a = numbered("a", 40);
    let b = numbered("b", 40);
    let long = numbered("long", 20);
    let cases = vec![
        Case::new(
            "multi_modify",
            vec![file("a.txt", a.clone()), file("src/b.txt", b.clone())],
            vec![
                file(
                    "a.txt",
                    replace_line(&replace_line(&a, 3, "A3\n"), 30, "A30\n"),
                ),
                file(
                    "src/b.txt",
                    replace_line(&replace_line(&b, 5, ""), 35, "B35\nB36\n"),
                ),
            ],
        ),
        Case::new(
            "rename_and_modify_others",
            vec![file("old/name.txt", long.clone()), file("a.txt", a.clone())],
            vec![
                file("new/name.txt", replace_line(&long, 10, "changed\n")),
                file("a.txt", replace_line(&a, 20, "A20\n")),
            ],
        ),
        Case::new(
            "pure_rename",
            vec![file("old.txt", long.clone())],
            vec![file("deeper/new.txt", long.clone())],
        ),
        Case::new(
            "delete",
            vec![file("a.txt", a.clone()), file("gone.txt", long.clone())],
            vec![file("a.txt", a.clone())],
        ),
        Case::new(
            "new_file_in_new_dir",
            vec![file("a.txt", a.clone())],
            vec![
                file("a.txt", a.clone()),
                file("x/y/new.txt", "hello\nworld\n"),
            ],
        ),
        Case::new(
            "empty_new_file",
            vec![file("a.txt", a.clone())],
            vec![file("a.txt", a.clone()), file("empty.txt", "")],
        ),
        Case::new(
            "mode_change_add_x",
            vec![file("run.sh", "#!/bin/sh\necho hi\n")],
            vec![("run.sh", b"#!/bin/sh\necho hi\n".to_vec(), 0o755)],
        ),
        Case::new(
            "mode_change_remove_x_and_modify",
            vec![("run.sh", b"#!/bin/sh\necho hi\n".to_vec(), 0o755)],
            vec![file("run.sh", "#!/bin/sh\necho bye\n")],
        ),
        Case::new(
            "new_executable",
            vec![file("a.txt", "a\n")],
            vec![
                file("a.txt", "a\n"),
                ("bin/tool", b"#!/bin/sh\n".to_vec(), 0o755),
            ],
        ),
        Case::new(
            "rename_keeps_mode",
            vec![("tool.sh", long.clone(), 0o755)],
            vec![("bin/tool.sh", replace_line(&long, 2, "two\n"), 0o755)],
        ),
        Case::new(
            "noeol_add_line",
            vec![file("n.txt", "one\ntwo")],
            vec![file("n.txt", "one\ntwo\nthree\n")],
        ),
        Case::new(
            "noeol_remove_newline",
            vec![file("n.txt", "one\ntwo\n")],
            vec![file("n.txt", "one\ntwo")],
        ),
        Case::new(
            "crlf_file",
            vec![file("w.txt", "one\r\ntwo\r\nthree\r\n")],
            vec![file("w.txt", "one\r\n2\r\nthree\r\n")],
        ),
        Case::new(
            "space_in_name",
            vec![file("my dir/my file.txt", long.clone())],
            vec![file("my dir/my file.txt", replace_line(&long, 4, "four\n"))],
        ),
        Case::new(
            "quoted_unicode_name",
            vec![file("café.txt", long.clone()), file("tab\there.txt", "x\n")],
            vec![
                file("café.txt", replace_line(&long, 4, "four\n")),
                file("naïve/tab\there.txt", "x\n"),
            ],
        ),
    ];
    cases
}

/// Copies, offsets, fuzz, `-p`, plain diffs: cases that need more than the defaults.
fn git_cases_with_options() -> Vec<Case> {
    let a = numbered("a", 40);
    let b = numbered("b", 40);
    let long = numbered("long", 20);
    let mut cases = Vec::new();

    let mut copy = Case::new(
        "copy",
        vec![file("orig.txt", long.clone())],
        vec![
            file("orig.txt", long.clone()),
            file("copy.txt", replace_line(&long, 1, "first\n")),
        ],
    );
    copy.diff = Diff::Git(&["-C", "-C"]);
    cases.push(copy);

    let mut offset = Case::new(
        "offset_seven_lines",
        vec![file("a.txt", a.clone())],
        vec![file("a.txt", replace_line(&a, 20, "A20\n"))],
    );
    offset.target = Some(|dir| {
        let path = dir.join("a.txt");
        let text = fs::read(&path).expect("read");
        fs::write(&path, [numbered("moved", 7), text].concat()).expect("write");
    });
    cases.push(offset);

    let mut wrong = Case::new(
        "wrong_context",
        vec![file("a.txt", a.clone())],
        vec![file("a.txt", replace_line(&a, 20, "A20\n"))],
    );
    wrong.target = Some(|dir| {
        let path = dir.join("a.txt");
        let text = fs::read(&path).expect("read");
        fs::write(&path, replace_line(&text, 19, "someone else\n")).expect("write");
    });
    wrong.refused = true;
    cases.push(wrong);

    let mut second = Case::new(
        "second_file_fails",
        vec![file("a.txt", a.clone()), file("b.txt", b.clone())],
        vec![
            file("a.txt", replace_line(&a, 10, "A10\n")),
            file("b.txt", replace_line(&b, 10, "B10\n")),
        ],
    );
    second.target = Some(|dir| {
        let path = dir.join("b.txt");
        let text = fs::read(&path).expect("read");
        fs::write(&path, replace_line(&text, 10, "conflict\n")).expect("write");
    });
    second.refused = true;
    cases.push(second);

    let mut twice = Case::new(
        "same_file_twice",
        vec![file("a.txt", a.clone())],
        vec![file(
            "a.txt",
            replace_line(&replace_line(&a, 5, "A5\n"), 30, "A30\n"),
        )],
    );
    twice.mid = Some(vec![file("a.txt", replace_line(&a, 5, "A5\n"))]);
    cases.push(twice);

    let mut no_prefix = Case::new(
        "no_prefix",
        vec![file("src/a.txt", a.clone())],
        vec![
            file("src/a.txt", replace_line(&a, 7, "A7\n")),
            file("src/new.txt", "new\n"),
        ],
    );
    no_prefix.diff = Diff::Git(&["--no-prefix"]);
    no_prefix.git_strip = 0;
    cases.push(no_prefix);

    let mut plain = Case::new(
        "plain_diff_ruN",
        vec![
            file("a.txt", a.clone()),
            file("gone.txt", long.clone()),
            file("n.txt", "one\ntwo"),
        ],
        vec![
            file("a.txt", replace_line(&a, 12, "A12\n")),
            file("sub/new.txt", "brand\nnew\n"),
            file("n.txt", "one\ntwo\nthree\n"),
        ],
    );
    plain.diff = Diff::Plain;
    cases.push(plain);

    let mut plain_crlf = Case::new(
        "plain_diff_crlf_and_empty_result",
        vec![file("w.txt", "one\r\ntwo\r\n"), file("emptied.txt", "x\n")],
        vec![file("w.txt", "one\r\nTWO\r\n"), file("emptied.txt", "")],
    );
    plain_crlf.diff = Diff::Plain;
    cases.push(plain_crlf);

    cases
}

#[test]
fn agrees_with_git_apply() {
    for case in git_cases() {
        run_case(&case);
    }
}

#[test]
fn harness_notices_a_difference() {
    // The comparison can fail: the same patch applied to a tree we changed first.
    let tmp = tempdir();
    let case = Case::new(
        "check",
        vec![file("a.txt", "a\n")],
        vec![file("a.txt", "b\n")],
    );
    let patch = make_patch(tmp.path(), &case);
    let (_dir, ws) = workspace(&case.before);
    apply_ours(&ws, &patch, 1).expect("applies");
    assert_ne!(read_tree(&ws)["a.txt"].0, b"a\n");
}

// ---------------------------------------------------------------------------------
// plan_patch: messages and leniency

#[test]
fn hunk_failure_names_file_hunk_and_lines() {
    let text = numbered("x", 20);
    let (_dir, ws) = workspace(&[file("src/a.py", text.clone())]);
    let patch = "\
--- a/src/a.py
+++ b/src/a.py
@@ -2,3 +2,3 @@
 x line 2
-x line 3
+three
 x line 4
@@ -10,4 +10,5 @@
 x line 10
-not in the file
+y
+z
 x line 12
 x line 13
";
    let err = plan_patch(&ws, &ws, patch.as_bytes(), 1).expect_err("hunk 2 fails");
    assert_eq!(
        err.summary(),
        "src/a.py: hunk 2 (@@ -10,4 +10,5 @@) does not apply"
    );
    let message = err.to_string();
    assert!(
        message.contains("expected at line 10:\n    |x line 10\n    |not in the file"),
        "{message}"
    );
    assert!(
        message.contains("found at line 10:\n    |x line 10\n   !|x line 11"),
        "{message}"
    );
    assert_eq!(fs::read(ws.join("src/a.py")).expect("read"), text);
}

#[test]
fn parse_errors_name_the_line() {
    let (_dir, ws) = workspace(&[file("a.txt", "one\ntwo\n")]);
    let empty = plan_patch(&ws, &ws, b"  \n", 1).expect_err("empty");
    assert_eq!(empty.to_string(), "patch: line 1: the patch is empty");

    let garbage = plan_patch(&ws, &ws, b"hello\nworld\n", 1).expect_err("no header");
    assert!(
        garbage
            .to_string()
            .starts_with("patch: line 1: no file header"),
        "{garbage}"
    );

    let bad_line = "\
diff --git a/a.txt b/a.txt
index 1..2 100644
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
 one
?two
";
    let err = plan_patch(&ws, &ws, bad_line.as_bytes(), 1).expect_err("bad hunk line");
    assert!(
        err.to_string()
            .starts_with("patch: line 7: unexpected line in hunk"),
        "{err}"
    );

    let counts = "\
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 one
-two
+2
";
    let err = plan_patch(&ws, &ws, counts.as_bytes(), 1).expect_err("short hunk");
    assert!(
        err.to_string()
            .starts_with("patch: line 3: the hunk's line counts"),
        "{err}"
    );
}

#[test]
fn mail_preamble_counts_in_line_numbers() {
    let (_dir, ws) = workspace(&[file("a.txt", "one\n")]);
    let mail = "\
From 1234 Mon Sep 17 00:00:00 2001
From: A <a@b>
Subject: [PATCH] x

---
 a.txt | 2 +-
diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
?one
";
    let err = plan_patch(&ws, &ws, mail.as_bytes(), 1).expect_err("bad line");
    assert!(err.to_string().starts_with("patch: line 11: "), "{err}");
}

#[test]
fn operations_check_what_exists() {
    let (_dir, ws) = workspace(&[file("a.txt", "a\n"), file("b.txt", "b\n")]);
    let refused = |patch: &str| {
        plan_patch(&ws, &ws, patch.as_bytes(), 1)
            .expect_err("refused")
            .to_string()
    };
    assert_eq!(
        refused("--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n"),
        "a.txt: already exists"
    );
    assert_eq!(
        refused("diff --git a/a.txt b/b.txt\nrename from a.txt\nrename to b.txt\n"),
        "b.txt: already exists"
    );
    assert_eq!(
        refused("--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +1 @@\n-a\n+b\n"),
        "gone.txt: no such file"
    );
    assert_eq!(
        refused("--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"),
        "a.txt: hunk 1 (@@ -1 +0,0 @@) does not apply\n  expected at line 1:\n    |x\n  found at line 1:\n   !|a"
    );
    let leaves = "diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n";
    assert_eq!(
        refused(leaves),
        "a.txt: the patch deletes this file, but its hunks leave lines in it"
    );
    let link = "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+a.txt\n\\ No newline at end of file\n";
    assert_eq!(
        refused(link),
        "l: symbolic links in patches are not supported"
    );
}

#[test]
fn binary_patches_are_refused_by_name() {
    let (_dir, ws) = workspace(&[file("a.txt", "one\n")]);
    let git = "\
diff --git a/img.png b/img.png
new file mode 100644
index 0000000..7c4530c
Binary files /dev/null and b/img.png differ
";
    let err = plan_patch(&ws, &ws, git.as_bytes(), 1).expect_err("binary");
    assert_eq!(err.to_string(), "img.png: binary patches are not supported");

    let literal = "\
diff --git a/img.png b/img.png
new file mode 100644
index 0000000..7c4530c
GIT binary patch
literal 3
KcmZ?wWMl*Y00031

literal 0
HcmV?d00001

";
    let err = plan_patch(&ws, &ws, literal.as_bytes(), 1).expect_err("binary");
    assert!(err.to_string().contains("binary"), "{err}");

    let plain = "\
diff -ruN before/a.txt after/a.txt
--- before/a.txt\t2024-01-01 00:00:00.000000000 +0000
+++ after/a.txt\t2024-01-01 00:00:00.000000000 +0000
@@ -1 +1 @@
-one
+two
Binary files before/img.png and after/img.png differ
";
    let err = plan_patch(&ws, &ws, plain.as_bytes(), 1).expect_err("binary");
    assert_eq!(
        err.to_string(),
        "patch: line 7: binary patches are not supported (\"Binary files before/img.png and after/img.png differ\")"
    );
}

#[test]
fn unprefixed_agent_patch_applies_at_p1() {
    let (_dir, ws) = workspace(&[file("src/a.py", "x = 1\ny = 2\n")]);
    let patch = "\
--- src/a.py
+++ src/a.py
@@ -1,2 +1,2 @@
 x = 1
-y = 2
+y = 3
--- /dev/null
+++ src/new.py
@@ -0,0 +1 @@
+z = 1
";
    let plan = apply_ours(&ws, patch.as_bytes(), 1).expect("applies");
    let paths: Vec<_> = plan
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.action()))
        .collect();
    assert_eq!(
        paths,
        vec![
            (ws.join("src/a.py"), Action::Modified),
            (ws.join("src/new.py"), Action::Created)
        ]
    );
    assert_eq!(
        fs::read(ws.join("src/a.py")).expect("read"),
        b"x = 1\ny = 3\n"
    );
    assert_eq!(fs::read(ws.join("src/new.py")).expect("read"), b"z = 1\n");
}

#[test]
fn unprefixed_patch_keeps_its_style_when_names_collide() {
    // `src/utils/index.ts` stripped by one is `utils/index.ts`, which exists too; the
    // patch's other file shows it is written without prefixes.
    let (_dir, ws) = workspace(&[
        file("src/app.ts", "a\n"),
        file("src/utils/index.ts", "i\n"),
        file("utils/index.ts", "i\n"),
    ]);
    let patch = "\
--- src/app.ts
+++ src/app.ts
@@ -1 +1 @@
-a
+A
--- src/utils/index.ts
+++ src/utils/index.ts
@@ -1 +1 @@
-i
+I
";
    apply_ours(&ws, patch.as_bytes(), 1).expect("applies");
    assert_eq!(
        fs::read(ws.join("src/utils/index.ts")).expect("read"),
        b"I\n"
    );
    assert_eq!(fs::read(ws.join("utils/index.ts")).expect("read"), b"i\n");
}

#[test]
fn lf_patch_applies_to_crlf_file_as_crlf() {
    // git apply refuses this; agents write it all the time.
    let (_dir, ws) = workspace(&[file("w.txt", "one\r\ntwo\r\nthree\r\n")]);
    let patch = "\
--- a/w.txt
+++ b/w.txt
@@ -1,3 +1,4 @@
 one
-two
+2
+2.5
 three
";
    apply_ours(&ws, patch.as_bytes(), 1).expect("applies");
    assert_eq!(
        fs::read(ws.join("w.txt")).expect("read"),
        b"one\r\n2\r\n2.5\r\nthree\r\n"
    );
}

#[test]
fn plan_reports_actions_and_before_bytes() {
    let (_dir, ws) = workspace(&[file("a.txt", "a\n"), file("old.txt", "o\n")]);
    let patch = "\
diff --git a/old.txt b/new.txt
similarity index 100%
rename from old.txt
rename to new.txt
diff --git a/a.txt b/a.txt
deleted file mode 100644
--- a/a.txt
+++ /dev/null
@@ -1 +0,0 @@
-a
";
    let plan = plan_patch(&ws, &ws, patch.as_bytes(), 1).expect("plans");
    let summary: Vec<_> = plan
        .changes
        .iter()
        .map(|c| {
            (
                c.action(),
                c.path.clone(),
                c.renamed_from.clone(),
                c.before.clone(),
                c.after.clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                Action::Renamed,
                ws.join("new.txt"),
                Some(ws.join("old.txt")),
                Some(b"o\n".to_vec()),
                Some(b"o\n".to_vec())
            ),
            (
                Action::Deleted,
                ws.join("a.txt"),
                None,
                Some(b"a\n".to_vec()),
                None
            ),
        ]
    );
}

#[test]
fn section_without_hunks_is_refused() {
    let (_dir, ws) = workspace(&[file("a.txt", "a\n")]);
    let err = plan_patch(&ws, &ws, b"--- a/a.txt\n+++ b/a.txt\n", 1).expect_err("no hunks");
    assert_eq!(
        err.to_string(),
        "a.txt: the patch has no hunks for this file"
    );
}

#[test]
fn plain_section_among_git_ones_is_refused() {
    let (_dir, ws) = workspace(&[file("a.txt", "a\n"), file("b.txt", "b\n")]);
    let patch = "\
diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-a
+A
--- a/b.txt
+++ b/b.txt
@@ -1 +1 @@
-b
+B
";
    let err = plan_patch(&ws, &ws, patch.as_bytes(), 1).expect_err("mixed");
    assert!(
        err.to_string().starts_with("patch: line 7: a plain"),
        "{err}"
    );
}

#[test]
fn run_directory_is_where_patch_paths_resolve() {
    let (_dir, ws) = workspace(&[file("sub/a.txt", "a\n")]);
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n";
    let plan = plan_patch(&ws, &ws.join("sub"), patch.as_bytes(), 1).expect("plans");
    assert_eq!(plan.changes[0].path, ws.join("sub/a.txt"));
}

// ---------------------------------------------------------------------------------
// Path safety

fn assert_outside(err: EditError, shown: &str) {
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("{shown}: path is outside the workspace ")),
        "{message}"
    );
}

#[test]
fn escaping_paths_are_refused() {
    let (dir, ws) = workspace(&[file("a.txt", "a\n")]);
    let outside = dir.path().join("outside");
    fs::create_dir(&outside).expect("mkdir");
    fs::write(outside.join("secret.py"), "s\n").expect("write");
    symlink(&outside, ws.join("out")).expect("symlink");
    symlink(outside.join("secret.py"), ws.join("secret.py")).expect("symlink");
    symlink(outside.join("later.py"), ws.join("dangling.py")).expect("symlink");
    fs::create_dir(ws.join(".git")).expect("mkdir");

    let write = |path: &str| plan_write(&ws, &ws, Path::new(path), b"x\n".to_vec());
    assert_outside(write("../x.py").expect_err("dotdot"), "../x.py");
    assert_outside(
        write("sub/../../x.py").expect_err("dotdot"),
        "sub/../../x.py",
    );
    let absolute = outside.join("abs.py");
    let shown = absolute.display().to_string();
    assert_outside(write(&shown).expect_err("absolute"), &shown);
    assert_outside(write("out/x.py").expect_err("dir symlink"), "out/x.py");
    assert_outside(
        write("out/../a.txt").expect_err("through symlink"),
        "out/../a.txt",
    );
    let err = write("secret.py").expect_err("file symlink");
    assert!(err.to_string().contains("(it is a symlink to "), "{err}");
    assert_outside(write("dangling.py").expect_err("dangling"), "dangling.py");
    assert_eq!(
        write(".git/config").expect_err("git dir").to_string(),
        ".git/config: refusing to write inside a .git directory"
    );
    assert!(write(".").is_err());

    let replace = plan_replace(&ws, &ws, Path::new("secret.py"), "s", "t", false);
    assert!(replace.is_err());

    for (name, patch) in [
        (
            "create",
            "--- /dev/null\n+++ b/../escape.py\n@@ -0,0 +1 @@\n+x\n",
        ),
        (
            "modify",
            "--- a/out/../../outside/secret.py\n+++ b/out/../../outside/secret.py\n@@ -1 +1 @@\n-s\n+t\n",
        ),
        (
            "symlink dir",
            "--- /dev/null\n+++ b/out/new.py\n@@ -0,0 +1 @@\n+x\n",
        ),
        (
            "git dir",
            "--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+x\n",
        ),
        (
            "rename",
            "diff --git a/a.txt b/../moved.txt\nsimilarity index 100%\nrename from a.txt\nrename to ../moved.txt\n",
        ),
    ] {
        let result = plan_patch(&ws, &ws, patch.as_bytes(), 1);
        assert!(
            matches!(result, Err(EditError::Path { .. })),
            "{name}: {result:?}"
        );
    }
    assert!(!dir.path().join("escape.py").exists());
    assert!(!dir.path().join("moved.txt").exists());
    assert!(!outside.join("new.py").exists());
    assert!(!outside.join("later.py").exists());
    assert_eq!(fs::read(outside.join("secret.py")).expect("read"), b"s\n");
    assert!(ws.join("a.txt").exists());
}

#[test]
fn symlink_inside_workspace_is_written_through() {
    let (_dir, ws) = workspace(&[file("real.txt", "old\n")]);
    symlink("real.txt", ws.join("link.txt")).expect("symlink");
    let plan = plan_write(&ws, &ws, Path::new("link.txt"), b"new\n".to_vec()).expect("plans");
    assert_eq!(plan.changes[0].path, ws.join("link.txt"));
    assert_eq!(plan.changes[0].before.as_deref(), Some(&b"old\n"[..]));
    commit(&ws, &plan).expect("commits");
    assert!(
        fs::symlink_metadata(ws.join("link.txt"))
            .expect("stat")
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read(ws.join("real.txt")).expect("read"), b"new\n");
}

// ---------------------------------------------------------------------------------
// plan_write and plan_replace

#[test]
fn plan_write_keeps_crlf() {
    let (_dir, ws) = workspace(&[file("crlf.txt", "a\r\nb\r\n"), file("lf.txt", "a\nb\n")]);
    let after = |path: &str, content: &str| {
        let plan = plan_write(&ws, &ws, Path::new(path), content.into()).expect("plans");
        plan.changes[0].after.clone().expect("content")
    };
    assert_eq!(after("crlf.txt", "x\ny\n"), b"x\r\ny\r\n");
    assert_eq!(
        after("crlf.txt", "x\r\ny\n"),
        b"x\r\ny\n",
        "mixed input is kept"
    );
    assert_eq!(after("lf.txt", "x\ny\n"), b"x\ny\n");
    assert_eq!(after("new.txt", "x\ny\n"), b"x\ny\n");

    let same = plan_write(&ws, &ws, Path::new("lf.txt"), b"a\nb\n".to_vec()).expect("plans");
    assert_eq!(same.changes[0].action(), Action::Modified);
    let new = plan_write(&ws, &ws, Path::new("d/new.txt"), b"n\n".to_vec()).expect("plans");
    assert_eq!(new.changes[0].action(), Action::Created);
    assert_eq!(new.changes[0].path, ws.join("d/new.txt"));
    commit(&ws, &new).expect("commits");
    assert_eq!(fs::read(ws.join("d/new.txt")).expect("read"), b"n\n");
}

#[test]
fn plan_replace_counts_occurrences() {
    let (_dir, ws) = workspace(&[
        file("src/a.py", "x = 1\nx = 1\nx = 1\ny = 2\n"),
        file("bin.dat", b"\xff\xfe x".to_vec()),
    ]);
    let replace = |old: &str, new: &str, all: bool| {
        plan_replace(&ws, &ws, Path::new("src/a.py"), old, new, all)
    };
    assert_eq!(
        replace("z = 3", "w", false)
            .expect_err("absent")
            .to_string(),
        "src/a.py: --old text not found"
    );
    assert_eq!(
        replace("x = 1", "w", false).expect_err("three").to_string(),
        "src/a.py: --old text occurs 3 times; use --replace-all or give more context"
    );
    let all = replace("x = 1", "w = 0", true).expect("replace all");
    assert_eq!(
        all.changes[0].after.as_deref(),
        Some(&b"w = 0\nw = 0\nw = 0\ny = 2\n"[..])
    );
    let one = replace("y = 2", "y = 3", false).expect("once");
    assert_eq!(
        one.changes[0].after.as_deref(),
        Some(&b"x = 1\nx = 1\nx = 1\ny = 3\n"[..])
    );

    let hint = replace("y = 2\nq = 1", "w", false).expect_err("absent");
    assert_eq!(
        hint.to_string(),
        "src/a.py: --old text not found\nits first line (\"y = 2\") occurs at line 4"
    );
    let binary = plan_replace(&ws, &ws, Path::new("bin.dat"), "x", "y", false);
    assert!(
        binary
            .expect_err("binary")
            .to_string()
            .starts_with("bin.dat: is not valid UTF-8")
    );
    let missing = plan_replace(&ws, &ws, Path::new("nope.py"), "x", "y", false);
    assert_eq!(
        missing.expect_err("missing").to_string(),
        "nope.py: no such file"
    );
}

#[test]
fn plan_replace_matches_lf_text_in_crlf_file() {
    let (_dir, ws) = workspace(&[file("w.txt", "one\r\ntwo\r\nthree\r\n")]);
    let plan =
        plan_replace(&ws, &ws, Path::new("w.txt"), "one\ntwo\n", "1\n2\n", false).expect("matches");
    assert_eq!(
        plan.changes[0].after.as_deref(),
        Some(&b"1\r\n2\r\nthree\r\n"[..])
    );
}

// ---------------------------------------------------------------------------------
// commit

#[test]
fn commit_keeps_mode_and_crlf() {
    let (_dir, ws) = workspace(&[("run.sh", b"#!/bin/sh\r\necho hi\r\n".to_vec(), 0o755)]);
    let plan = plan_replace(
        &ws,
        &ws,
        Path::new("run.sh"),
        "echo hi\n",
        "echo bye\n",
        false,
    )
    .expect("plans");
    commit(&ws, &plan).expect("commits");
    let tree = read_tree(&ws);
    assert_eq!(
        tree["run.sh"],
        (b"#!/bin/sh\r\necho bye\r\n".to_vec(), 0o755)
    );
}

#[test]
fn commit_failure_before_renames_changes_nothing() {
    let (_dir, ws) = workspace(&[file("a.txt", "a\n")]);
    let patch = "\
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-a
+A
--- /dev/null
+++ b/newdir/x.txt
@@ -0,0 +1 @@
+x
--- /dev/null
+++ b/blocked/y.txt
@@ -0,0 +1 @@
+y
";
    let plan = plan_patch(&ws, &ws, patch.as_bytes(), 1).expect("plans");
    // After planning, `blocked` appears as a file: its directory cannot be made.
    fs::write(ws.join("blocked"), "in the way\n").expect("write");
    let before = read_tree(&ws);
    let err = commit(&ws, &plan).expect_err("cannot write blocked/y.txt");
    assert!(
        matches!(err, EditError::Write { partial: false, .. }),
        "{err:?}"
    );
    assert_eq!(
        read_tree(&ws),
        before,
        "no file changed, no temporary file left"
    );
    assert!(
        !ws.join("newdir").exists(),
        "the directory made for newdir/x.txt is gone"
    );
}

/// Issue 10, case 8: `.git` in another letter case (or with what NTFS and HFS+ drop)
/// names the same directory on a case-insensitive file system, as git knows.
#[test]
fn dot_git_is_refused_in_any_spelling() {
    let (_dir, ws) = workspace(&[file("a.txt", "a\n")]);
    for path in [
        ".GIT/hooks/pre-commit",
        ".Git/config",
        "sub/.gIt/config",
        ".git./config",
        ".git /config",
        "GIT~1/config",
        ".g\u{200c}it/config",
    ] {
        let err = plan_write(&ws, &ws, Path::new(path), b"x\n".to_vec())
            .expect_err(path)
            .to_string();
        assert!(
            err.ends_with("refusing to write inside a .git directory"),
            "{err}"
        );
        let patch = format!("--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n");
        assert!(plan_patch(&ws, &ws, patch.as_bytes(), 1).is_err(), "{path}");
    }
    // Names that merely start like it are files like any other.
    for path in [".gitignore", ".github/workflows/ci.yml", "x.git/config"] {
        assert!(
            plan_write(&ws, &ws, Path::new(path), b"x\n".to_vec()).is_ok(),
            "{path}"
        );
    }
}

/// Issue 10, case 6: a patch that makes `d/x.txt` a file and also creates
/// `d/x.txt/y.txt` is refused while planning, in either order, naming both.
#[test]
fn a_path_both_file_and_directory_is_refused_while_planning() {
    let (_dir, ws) = workspace(&[file("a.txt", "a\n")]);
    let file_x = "--- /dev/null\n+++ b/d/x.txt\n@@ -0,0 +1 @@\n+x\n";
    let file_y = "--- /dev/null\n+++ b/d/x.txt/y.txt\n@@ -0,0 +1 @@\n+y\n";
    for patch in [format!("{file_y}{file_x}"), format!("{file_x}{file_y}")] {
        let err = plan_patch(&ws, &ws, patch.as_bytes(), 1).expect_err("conflict");
        assert_eq!(
            err.to_string(),
            "d/x.txt: the patch leaves it a file and also creates d/x.txt/y.txt inside it",
        );
        assert!(!err.partly_written());
    }
    // A file replaced by a directory of that name is refused too (when resolved).
    let patch = "--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n\
                 --- /dev/null\n+++ b/a.txt/y.txt\n@@ -0,0 +1 @@\n+y\n";
    assert!(plan_patch(&ws, &ws, patch.as_bytes(), 1).is_err());
    assert!(!ws.join("d").exists());
}

/// A failure in the middle of the renames (injected: root cannot be kept from renaming
/// by permissions) leaves an edit partly written: exit 4, and the message names the
/// files that changed and those that did not. No temporary file is left.
#[test]
fn a_commit_failing_part_way_names_what_changed() {
    let (_dir, ws) = workspace(&[
        file("a.txt", "a\n"),
        file("b.txt", "b\n"),
        file("c.txt", "c\n"),
    ]);
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n\
                 --- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n\
                 --- a/c.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-c\n";
    let plan = plan_patch(&ws, &ws, patch.as_bytes(), 1).expect("plans");
    let err = commit::commit_failing_at(&ws, &plan, Some(1)).expect_err("injected");
    assert!(err.partly_written());
    let (a, b, c) = (ws.join("a.txt"), ws.join("b.txt"), ws.join("c.txt"));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: cannot replace: injected fault (LSPGATE_FAULT_COMMIT); the edit is partly \
             written: changed {}; not changed {}, {}",
            b.display(),
            a.display(),
            b.display(),
            c.display()
        )
    );
    let tree = read_tree(&ws);
    let names: Vec<&String> = tree.keys().collect();
    assert_eq!(
        names,
        ["a.txt", "b.txt", "c.txt"],
        "no temporary file is left"
    );
    assert_eq!(tree["a.txt"].0, b"A\n");
    assert_eq!(tree["b.txt"].0, b"b\n");

    // Failing at the first change: nothing was written, bad input as before (exit 2).
    let (_dir, ws) = workspace(&[file("a.txt", "a\n")]);
    let plan = plan_write(&ws, &ws, Path::new("a.txt"), b"A\n".to_vec()).expect("plans");
    let err = commit::commit_failing_at(&ws, &plan, Some(0)).expect_err("injected");
    assert!(!err.partly_written());
    assert!(err.to_string().ends_with("; nothing was written"), "{err}");
}

#[test]
fn commit_refuses_a_file_changed_since_planning() {
    let (_dir, ws) = workspace(&[file("a.txt", "a\n"), file("b.txt", "b\n")]);
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n";
    let plan = plan_patch(&ws, &ws, patch.as_bytes(), 1).expect("plans");
    fs::write(ws.join("b.txt"), "edited meanwhile\n").expect("write");
    let err = commit(&ws, &plan).expect_err("stale plan");
    assert!(
        err.to_string()
            .contains("changed on disk since the edit was planned"),
        "{err}"
    );
    assert_eq!(fs::read(ws.join("a.txt")).expect("read"), b"a\n");
    assert_eq!(
        fs::read(ws.join("b.txt")).expect("read"),
        b"edited meanwhile\n"
    );
}

// ---------------------------------------------------------------------------------
// No input makes plan_patch panic

const VALID_PATCH: &str = "\
diff --git a/a.txt b/a.txt
index 1111111..2222222 100644
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 one
-two
+2
 three
diff --git a/old.txt b/new.txt
similarity index 90%
rename from old.txt
rename to new.txt
--- a/old.txt
+++ b/new.txt
@@ -1,2 +1,2 @@
-o
+O
 p
\\ No newline at end of file
diff --git a/w.txt b/w.txt
old mode 100644
new mode 100755
diff --git a/made.txt b/made.txt
new file mode 100644
--- /dev/null
+++ b/made.txt
@@ -0,0 +1,2 @@
+x
+y
";

#[test]
fn plan_patch_never_panics() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    let (_dir, ws) = workspace(&[
        file("a.txt", "one\ntwo\nthree\n"),
        file("old.txt", "o\np"),
        file("w.txt", "w\r\nx\r\n"),
    ]);
    plan_patch(&ws, &ws, VALID_PATCH.as_bytes(), 1).expect("the seed patch applies");

    let config = Config {
        cases: 400,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config.clone());
    let random = (
        prop::option::of(Just("diff --git a/a.txt b/a.txt\n")),
        any::<Vec<u8>>(),
    );
    runner
        .run(&random, |(prefix, bytes)| {
            let input = [prefix.unwrap_or("").as_bytes(), &bytes].concat();
            let _ = plan_patch(&ws, &ws, &input, 1);
            Ok(())
        })
        .expect("random bytes never panic");

    // Mutations of the valid patch: a line dropped, repeated or replaced, bytes
    // inserted, numbers changed, the end cut off.
    let piece = prop::sample::select(vec![
        "@@ -1,3 +1,3 @@\n",
        "@@ -0,0 +1 @@\n",
        "@@ -99999999999999999999,1 +1 @@\n",
        "@@ -18446744073709551615,1 +1,18446744073709551615 @@\n",
        "\\ No newline at end of file\n",
        "-",
        "+",
        " ",
        "\n",
        "\r\n",
        "--- ",
        "+++ ",
        "/dev/null",
        "diff --git ",
        "rename from ",
        "new mode 120000\n",
        "GIT binary patch\n",
        "\"a/\\303\\251\"",
        "a/../../x",
        "0",
        "9",
    ]);
    let mutation = (
        0u8..6,
        any::<prop::sample::Index>(),
        piece,
        any::<Vec<u8>>(),
    );
    let mutations = prop::collection::vec(mutation, 1..6);
    let mut runner = TestRunner::new(config);
    runner
        .run(&mutations, |mutations| {
            let mut lines: Vec<Vec<u8>> = VALID_PATCH
                .as_bytes()
                .split_inclusive(|&b| b == b'\n')
                .map(<[u8]>::to_vec)
                .collect();
            for (kind, at, piece, bytes) in mutations {
                if lines.is_empty() {
                    break;
                }
                let i = at.index(lines.len());
                match kind {
                    0 => {
                        lines.remove(i);
                    }
                    1 => lines.insert(i, lines[i].clone()),
                    2 => lines[i] = piece.as_bytes().to_vec(),
                    3 => {
                        let j = at.index(lines[i].len() + 1);
                        lines[i].splice(j..j, piece.bytes());
                    }
                    4 => lines.insert(i, bytes),
                    _ => lines.truncate(i),
                }
            }
            let _ = plan_patch(&ws, &ws, &lines.concat(), 1);
            Ok(())
        })
        .expect("mutated patches never panic");
}

// ---------------------------------------------------------------------------------
// Issue 29, item 14: `-p N` that leaves nothing of a name, and a file rewritten while
// its replacement is staged

/// `git apply -p3` refuses a patch creating `b/run.sh` (the name has two components);
/// so must we, nothing planned, rather than create `b/run.sh`. A bare name, as a patch
/// written without prefixes has, is still taken as it is.
#[test]
fn a_new_name_that_p_strips_to_nothing_is_refused() {
    let (_dir, ws) = workspace(&[file("x.txt", "x\n")]);
    let plain = "--- /dev/null\n+++ b/run.sh\n@@ -0,0 +1 @@\n+echo hi\n";
    let git = "diff --git a/run.sh b/run.sh\nnew file mode 100644\n--- /dev/null\n\
               +++ b/run.sh\n@@ -0,0 +1 @@\n+echo hi\n";
    let renamed = "diff --git a/x.txt b/y/z.txt\nsimilarity index 100%\nrename from x.txt\n\
                   rename to y/z.txt\n";
    for (patch, name) in [(plain, "b/run.sh"), (git, "b/run.sh"), (renamed, "y/z.txt")] {
        let err = plan_patch(&ws, &ws, patch.as_bytes(), 3).expect_err("too few components");
        assert!(!err.partly_written(), "{err}");
        assert_eq!(
            err.to_string(),
            format!("{name}: too few path components for -p 3 (git apply refuses it too)")
        );
    }
    assert!(!ws.join("b").exists() && !ws.join("y").exists());

    let bare = "--- /dev/null\n+++ run.sh\n@@ -0,0 +1 @@\n+echo hi\n";
    let plan = plan_patch(&ws, &ws, bare.as_bytes(), 1).expect("a bare name");
    assert_eq!(plan.changes[0].path, ws.join("run.sh"));
    let plan = plan_patch(&ws, &ws, plain.as_bytes(), 1).expect("-p1 leaves run.sh");
    assert_eq!(plan.changes[0].path, ws.join("run.sh"));
}

/// Another process rewrites a file after the commit's first check, while the commit
/// writes its temporary files: the commit must not replace it. Nothing is written (exit
/// 2), the other process's bytes stay, and no temporary file is left.
#[test]
fn commit_refuses_a_file_rewritten_while_it_stages() {
    for rewritten in ["a.txt", "b.txt"] {
        let (_dir, ws) = workspace(&[file("a.txt", "a\n"), file("b.txt", "b\n")]);
        let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n\
                     --- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n\
                     --- /dev/null\n+++ b/new/c.txt\n@@ -0,0 +1 @@\n+c\n";
        let plan = plan_patch(&ws, &ws, patch.as_bytes(), 1).expect("plans");
        let other = ws.join(rewritten);
        commit::after_staging::set(move || {
            fs::write(&other, "the other process's\n").expect("rewrite");
        });
        let err = commit(&ws, &plan).expect_err("a file changed while staging");
        assert!(!err.partly_written(), "{err}");
        assert_eq!(
            err.to_string(),
            format!(
                "{}: changed on disk since the edit was planned; nothing was written",
                ws.join(rewritten).display()
            )
        );
        let tree = read_tree(&ws);
        let names: Vec<&str> = tree.keys().map(String::as_str).collect();
        assert_eq!(names, ["a.txt", "b.txt"], "no temporary file, no new/");
        let expect = |name: &str, original: &str| {
            if name == rewritten {
                "the other process's\n".to_owned()
            } else {
                original.to_owned()
            }
        };
        assert_eq!(tree["a.txt"].0, expect("a.txt", "a\n").into_bytes());
        assert_eq!(tree["b.txt"].0, expect("b.txt", "b\n").into_bytes());
    }
}
