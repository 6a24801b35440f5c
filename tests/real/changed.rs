//! `check --changed` after edits made by another process, as a harness that writes
//! files with its own tools runs it: against the real servers, each call reports
//! exactly what happened since the previous one. Before, a harness's hook ran
//! `check FILE`, which reported the written file's own diagnostics, old ones
//! included, and none of the callers it broke (exit 0).

use super::*;

/// What another process does to the workspace: `edit` (or its reverse) written
/// straight to disk.
fn write_behind(out: &Output, edit: &Edit, reverse: bool) {
    let path = out.workspace().join(edit.path);
    let text = fs::read_to_string(&path).expect("read the file to edit");
    let (old, new) = if reverse {
        (edit.new, edit.old)
    } else {
        (edit.old, edit.new)
    };
    assert_eq!(
        text.matches(old).count(),
        1,
        "{old:?} once in {}",
        edit.path
    );
    fs::write(&path, text.replacen(old, new, 1)).expect("write behind lspgate's back");
}

/// Stage every file: with no baseline yet, `check --changed` measures from git's
/// index, and a file git does not know is a new one.
fn staged(test: Test) -> Test {
    let status = std::process::Command::new("git")
        .args(["add", "-A"])
        .current_dir(test.workspace())
        .status()
        .expect("run git add");
    assert!(status.success(), "git add failed");
    test
}

fn changed(test: Test) -> Output {
    test.args(["check", "--changed"]).args(&WAITS[1..]).run()
}

/// Nothing, a breaking change, nothing again, the break mended, an error in `a`:
/// each call says what happened since the one before.
fn sequence(lang: &Lang, daemon: bool) {
    if !installed(lang) {
        return;
    }
    // As a crate has it: what cargo writes (rust-analyzer runs it) is not a change
    // of the project's.
    let mut test = staged(workspace(lang, &[]).file(".gitignore", "target/\nCargo.lock\n"));
    if daemon {
        test = test.with_daemon();
    }
    let _guard = daemon.then(|| crate::support::process::DaemonGuard::new(&test));
    let first = changed(test);
    first.assert_code(0);
    assert!(first.block("project_diagnostics").is_none(), "{first}");

    write_behind(&first, &lang.breaking, false);
    let broken = changed(first.again());
    broken.assert_code(1);
    assert_error_in(&broken, "project_diagnostics", lang.b_call.0, lang.b_call.1);
    assert_error_in(&broken, "project_diagnostics", lang.c, lang.c_call);
    assert_nothing_at(&broken, lang.c, lang.c_error_line);

    let quiet = changed(broken.again());
    quiet.assert_code(0);
    assert!(quiet.block("project_diagnostics").is_none(), "{quiet}");
    assert!(quiet.block("file_diagnostics").is_none(), "{quiet}");

    write_behind(&quiet, &lang.breaking, true);
    let mended = changed(quiet.again());
    mended.assert_code(0);
    assert!(
        mended.summary().iter().any(|l| l.contains(", fixed ")),
        "the broken calls are fixed\n{mended}"
    );

    write_behind(&mended, &lang.error, false);
    let error = changed(mended.again());
    error.assert_code(1);
    assert_error_in(&error, "file_diagnostics", lang.error.path, lang.error_line);
    assert_nothing_at(&error, lang.c, lang.c_error_line);
}

#[test]
fn pyright_reports_each_change_once() {
    sequence(&PYRIGHT, false);
}

#[test]
fn pyright_reports_each_change_once_through_the_daemon() {
    sequence(&PYRIGHT, true);
}

#[test]
fn typescript_language_server_reports_each_change_once() {
    sequence(&TSLS, false);
}

#[test]
fn gopls_reports_each_change_once() {
    sequence(&GOPLS, false);
}

#[test]
fn gopls_reports_each_change_once_through_the_daemon() {
    sequence(&GOPLS, true);
}

#[test]
fn rust_analyzer_reports_each_change_once() {
    sequence(&RUST_ANALYZER, false);
}

/// clangd reads a header from disk, not from what it is shown: the dependents of a
/// header changed on disk cannot be shown its old text for a before view, and a
/// header change is never passed as clean.
#[test]
fn clangd_never_passes_a_header_changed_on_disk() {
    if !installed(&CLANGD) {
        return;
    }
    let test = staged(workspace(&CLANGD, &[]));
    let first = changed(test);
    first.assert_code(0);
    write_behind(&first, &CLANGD.breaking, false);
    let broken = changed(first.again());
    broken.assert_code_in(&[1, 3]);
}

/// The hooks of `integrations/` replayed as the harness runs them: its recorded JSON
/// on stdin, through a shell, in the project directory, with lspgate on `PATH`.
mod hooks {
    use std::io::Write;
    use std::process::Stdio;

    use super::*;

    fn repo_file(rel: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
    }

    /// Claude Code's `PostToolUse` input after its `Edit` tool, as recorded.
    fn recorded_input() -> Vec<u8> {
        fs::read(repo_file(
            "tests/fixtures/hooks/claude-code-post-tool-use.json",
        ))
        .expect("the recorded hook input")
    }

    /// Run `command` through `sh -c` as the harness would; its status and stderr.
    fn run_hook(test: &Test, command: &str) -> (i32, String) {
        let bin = Path::new(env!("CARGO_BIN_EXE_lspgate"))
            .parent()
            .expect("the binary's directory")
            .to_path_buf();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![bin];
        dirs.extend(std::env::split_paths(&path));
        let mut child = test
            .command_with("sh")
            .args(["-c", command])
            .env("PATH", std::env::join_paths(dirs).expect("a PATH"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the hook");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(&recorded_input())
            .expect("write the hook input");
        let out = child.wait_with_output().expect("the hook's end");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Each hook: silent and 0 with nothing changed; after the harness's write breaks
    /// two callers, 2 with both on stderr; silent again on the next call.
    fn replay(command: &str) {
        if !installed(&PYRIGHT) {
            return;
        }
        let test = staged(workspace(&PYRIGHT, &[]));
        assert_eq!(run_hook(&test, command), (0, String::new()));
        let a = test.path("a.py");
        let text = fs::read_to_string(&a).expect("a.py");
        fs::write(
            &a,
            text.replace(
                "def greet(name: str)",
                "def greet(name: str, greeting: str)",
            ),
        )
        .expect("the harness's write");
        let (status, stderr) = run_hook(&test, command);
        assert_eq!(status, 2, "{stderr}");
        assert!(stderr.contains("b.py:3:"), "{stderr}");
        assert!(stderr.contains("c.py:5:"), "{stderr}");
        assert!(!stderr.contains("c.py:3:"), "an old error as new\n{stderr}");
        assert_eq!(run_hook(&test, command), (0, String::new()));
    }

    #[test]
    fn the_post_edit_hook_script() {
        let script = repo_file("integrations/post-edit-hook.sh");
        replay(&format!("sh '{}'", script.display()));
    }

    #[test]
    fn the_claude_code_settings_hook() {
        let settings: Value = serde_json::from_slice(
            &fs::read(repo_file("integrations/claude-code/settings.json")).expect("settings"),
        )
        .expect("settings JSON");
        let command = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .expect("the hook's command");
        replay(command);
    }
}

/// A warm daemon in a tree of many files learns of a change made behind its back: the
/// quick-start story of a caller updated after another tool changed the callee.
/// Before, past 10,000 entries the daemon stopped looking, and the correct edit was
/// reported as an error (exit 1).
mod large_tree {
    use super::*;

    fn story(assets: usize, watch_limit: Option<&str>) {
        if !installed(&PYRIGHT) {
            return;
        }
        let mut test = workspace(&PYRIGHT, &[]).with_daemon();
        if let Some(limit) = watch_limit {
            test = test.env("LSPGATE_WATCH_LIMIT", limit);
        }
        let dir = test.path("assets");
        for i in 0..assets {
            let sub = dir.join(format!("d{}", i / 1000));
            if i % 1000 == 0 {
                fs::create_dir_all(&sub).expect("mkdir");
            }
            fs::write(sub.join(format!("f{i}.txt")), "").expect("an asset");
        }
        let _guard = crate::support::process::DaemonGuard::new(&test);
        let warm = test.args(["check", "c.py"]).args(&WAITS[1..]).run();
        warm.assert_code(1);
        let a = warm.workspace().join("a.py");
        let text = fs::read_to_string(&a).expect("a.py");
        fs::write(
            &a,
            text.replace(
                "def greet(name: str)",
                "def greet(name: str, greeting: str)",
            ),
        )
        .expect("another tool's write");
        let edit = warm
            .again()
            .args([
                "edit",
                "b.py",
                "--old",
                "greet(\"b\")",
                "--new",
                "greet(\"b\", \"hi\")",
            ])
            .args(&WAITS[1..])
            .run();
        edit.assert_code(0);
        assert!(
            edit.summary().iter().any(|l| l.contains("fixed 1")),
            "the call is mended\n{edit}"
        );
        if watch_limit.is_some() {
            assert!(
                edit.notes()
                    .iter()
                    .any(|n| n.contains("walks it before every run")),
                "a root not watched is said\n{edit}"
            );
        }
    }

    #[test]
    fn ten_thousand_files() {
        story(10_001, None);
    }

    #[test]
    fn a_hundred_thousand_files() {
        story(100_000, None);
    }

    #[test]
    fn a_tree_past_the_watch_limit_is_walked_and_said() {
        story(10_001, Some("5"));
    }
}
