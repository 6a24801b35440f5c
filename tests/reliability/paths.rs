//! Where lspgate may write, and what it may run, through the CLI. Every refused
//! write exits 2 and leaves the workspace (its `.git` included) and the directory
//! outside it byte for byte as they were. The planner's own unit tests are in
//! `src/edit/tests.rs` (`escaping_paths_are_refused`); these go through `main`.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::input::full_snapshot;
use crate::support::{Output, Test};

/// A workspace with a directory outside it, and links from one to the other.
struct Setup {
    test: Test,
    outside: PathBuf,
}

fn setup() -> Setup {
    let test = Test::new()
        .file("a.txt", "a\n")
        .file("inner/real.txt", "real\n");
    let outside = test.private_dir("home").join("outside");
    fs::create_dir_all(outside.join("dir")).expect("mkdir outside");
    fs::write(outside.join("secret.txt"), "secret\n").expect("write");
    let ws = test.workspace();
    symlink(outside.join("dir"), ws.join("outdir")).expect("symlink");
    symlink(outside.join("secret.txt"), ws.join("secret.txt")).expect("symlink");
    symlink(outside.join("later.txt"), ws.join("dangling.txt")).expect("symlink");
    symlink("secret.txt", ws.join("chain.txt")).expect("symlink");
    symlink(ws.join(".git"), ws.join("g")).expect("symlink");
    symlink("inner", ws.join("inlink")).expect("symlink");
    Setup { test, outside }
}

type Snapshot = BTreeMap<PathBuf, Vec<u8>>;

#[track_caller]
fn refused(out: &Output, what: &str, before: &(Snapshot, Snapshot), outside: &Path) {
    assert_eq!(out.code, Some(2), "{what}: not refused\n{out}");
    assert!(
        out.stderr.starts_with("lspgate: "),
        "{what}: no error line\n{out}"
    );
    assert!(
        full_snapshot(out.workspace()) == before.0,
        "{what}: the workspace changed\n{out}"
    );
    assert!(
        full_snapshot(outside) == before.1,
        "{what}: a file outside the workspace changed\n{out}"
    );
}

#[test]
fn writes_that_leave_the_workspace_or_enter_git_are_refused() {
    let Setup { test, outside } = setup();
    let absolute = outside.join("abs.txt").display().to_string();
    let before = (full_snapshot(test.workspace()), full_snapshot(&outside));
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("dotdot", vec!["write".into(), "../x.txt".into()]),
        (
            "dotdot inside",
            vec!["write".into(), "inner/../../x.txt".into()],
        ),
        ("absolute outside", vec!["write".into(), absolute]),
        (
            "symlinked dir outside",
            vec!["write".into(), "outdir/x.txt".into()],
        ),
        (
            "symlink to a file outside",
            vec!["write".into(), "secret.txt".into()],
        ),
        (
            "chain of symlinks outside",
            vec!["write".into(), "chain.txt".into()],
        ),
        (
            "dangling symlink outside",
            vec!["write".into(), "dangling.txt".into()],
        ),
        ("into .git", vec!["write".into(), ".git/config".into()]),
        (
            "into .git/hooks",
            vec!["write".into(), ".git/hooks/pre-commit".into()],
        ),
        (
            "through a link to .git",
            vec!["write".into(), "g/config".into()],
        ),
        (
            "a nested .git",
            vec!["write".into(), "inner/.git/config".into()],
        ),
        (
            "edit through a symlink outside",
            ["edit", "secret.txt", "--old", "secret", "--new", "x"]
                .map(String::from)
                .to_vec(),
        ),
    ];
    let mut test = test;
    for (what, args) in cases {
        let out = test.args(&args).stdin("x\n").run();
        refused(&out, what, &before, &outside);
        test = out.again();
    }
    let out = test
        .args(["write", "inner/../.git/config"])
        .stdin("x\n")
        .run();
    refused(&out, "dot-dot into .git", &before, &outside);
    assert!(!outside.join("later.txt").exists());
    assert!(!outside.join("dir/x.txt").exists());
}

/// A symlinked directory that stays inside the workspace is fine: written through.
#[test]
fn a_symlinked_directory_inside_the_workspace_is_written_through() {
    let Setup { test, outside } = setup();
    let outside_before = full_snapshot(&outside);
    let out = test.args(["write", "inlink/real.txt"]).stdin("new\n").run();
    out.assert_code(0);
    assert_eq!(out.file("inner/real.txt"), "new\n");
    assert!(
        fs::symlink_metadata(out.workspace().join("inlink"))
            .expect("stat")
            .file_type()
            .is_symlink()
    );
    assert!(full_snapshot(&outside) == outside_before);
}

/// A patch that renames a file into `.git` or out of the workspace is refused too.
#[test]
fn patches_that_move_files_out_or_into_git_are_refused() {
    let Setup { test, outside } = setup();
    let before = (full_snapshot(test.workspace()), full_snapshot(&outside));
    let mut test = test;
    for (what, patch) in [
        (
            "rename into .git",
            "diff --git a/a.txt b/.git/a.txt\nsimilarity index 100%\nrename from a.txt\nrename to .git/a.txt\n",
        ),
        (
            "rename out",
            "diff --git a/a.txt b/outdir/a.txt\nsimilarity index 100%\nrename from a.txt\nrename to outdir/a.txt\n",
        ),
        (
            "delete through a symlink",
            "diff --git a/outdir/../secret.txt b/outdir/../secret.txt\ndeleted file mode 100644\n--- a/outdir/../secret.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-secret\n",
        ),
    ] {
        let out = test.args(["patch", "-"]).stdin(patch).run();
        refused(&out, what, &before, &outside);
        test = out.again();
    }
}

// ---------------------------------------------------------------------------------
// What lspgate runs

/// A server command is run as a program, never through a shell: shell syntax in the
/// command or its arguments is just a name or an argument, and nothing it would do
/// happens.
#[test]
fn server_commands_run_without_a_shell() {
    let fake = crate::support::fake_lsp().display().to_string();
    let quote = |s: &str| serde_json::to_string(s).expect("quote");
    for (what, command, args) in [
        ("command", format!("{fake}; touch pwned"), vec![]),
        ("command substitution", "$(touch pwned)".to_owned(), vec![]),
        (
            "arguments",
            fake.clone(),
            vec!["; touch pwned".to_owned(), "$(touch pwned)".to_owned()],
        ),
    ] {
        let config = format!(
            "[server.fake]\ncommand = {}\nargs = [{}]\nextensions = [\"fake\"]\n",
            quote(&command),
            args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(", ")
        );
        let out = Test::new()
            .file(".lspgate.toml", config)
            .file("a.fake", "one\n")
            .trust_project()
            .args([
                "write",
                "a.fake",
                "--content",
                "two\n",
                "--startup-timeout",
                "3s",
            ])
            .run();
        out.assert_code(3);
        assert!(
            out.notes().iter().any(|n| n.contains("fake")),
            "{what}: no note that the server did not run\n{out}"
        );
        assert!(!out.exists("pwned"), "{what}: a shell ran\n{out}");
        assert_eq!(out.file("a.fake"), "two\n");
    }
}

/// An untrusted project's `.lspgate.toml` cannot add a server command or change a
/// built-in's: lspgate says which key it ignored, and runs nothing of it.
#[test]
fn an_untrusted_project_cannot_add_or_change_a_command() {
    let config = "\
[server.evil]
command = \"/bin/sh\"
args = [\"-c\", \"touch pwned\"]
extensions = [\"fake\"]

[server.clangd]
command = \"/bin/sh\"
args = [\"-c\", \"touch pwned\"]
";
    let out = Test::new()
        .file(".lspgate.toml", config)
        .file("a.fake", "one\n")
        .file("b.c", "int main(void) { return 0; }\n")
        .args(["write", "a.fake", "--content", "ERROR two\n"])
        .run();
    // No server covers .fake: written, reported as skipped, not an error.
    out.assert_code(0);
    out.stderr_contains("ignored server.evil.command")
        .stderr_contains("ignored server.clangd.command and server.clangd.args")
        .stderr_contains("--trust-project");
    assert!(!out.exists("pwned"), "{out}");
    assert_eq!(out.file("a.fake"), "ERROR two\n");

    // clangd, if installed, is still its built-in self for C files.
    let out = out
        .again()
        .args(["check", "b.c", "--startup-timeout", "30s"])
        .run();
    assert!(!out.exists("pwned"), "{out}");
}
