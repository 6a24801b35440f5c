//! What an untrusted workspace may not do through files lspgate does not read itself:
//! choose the toolchain (a `rust-toolchain.toml` naming a directory of planted
//! programs, which rustup's proxies would run).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::{Test, require_server};

/// A crate whose `rust-toolchain.toml` names `evil/`, holding a `rust-analyzer`, a
/// `cargo` and a `rustc` that each leave a file in `marks` when run. The test's own
/// `RUSTUP_TOOLCHAIN` (cargo's proxy sets it for the tests) is removed: with it, rustup
/// would ignore the file whatever lspgate does.
fn planted_toolchain(marks: &Path) -> Test {
    let test = Test::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"planted\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .file("src/lib.rs", "pub fn one() -> i32 {\n    1\n}\n")
        .env_remove("RUSTUP_TOOLCHAIN");
    let evil = test.path("evil/bin");
    fs::create_dir_all(&evil).expect("mkdir evil/bin");
    for program in ["rust-analyzer", "cargo", "rustc"] {
        let script = evil.join(program);
        fs::write(
            &script,
            format!(
                "#!/bin/sh\ntouch '{}'\nexit 1\n",
                marks.join(program).display()
            ),
        )
        .expect("write a planted program");
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    // Absolute, as `/proc/self/cwd/evil` is: rustup takes either.
    let toolchain = format!("[toolchain]\npath = \"{}\"\n", test.path("evil").display());
    test.file("rust-toolchain.toml", toolchain)
}

fn ran(marks: &Path) -> Vec<PathBuf> {
    fs::read_dir(marks)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// `lspgate servers` asks rust-analyzer its version, and a check starts it and its
/// `cargo check`: in an untrusted workspace, with the user's own toolchain, never the
/// programs its `rust-toolchain.toml` names. The check still finds the error.
#[test]
fn a_planted_rust_toolchain_is_never_run() {
    if !(require_server("rust-analyzer") && require_server("cargo") && require_server("rustup")) {
        return;
    }
    let marks = tempfile::tempdir().expect("tempdir");
    let out = planted_toolchain(marks.path()).args(["servers"]).run();
    out.assert_code(0);
    assert_eq!(ran(marks.path()), Vec::<PathBuf>::new(), "{out}");
    out.stdout_contains("version:      rust-analyzer 1.");

    let test = out
        .again()
        .file("src/lib.rs", "pub fn one() -> i32 {\n    \"one\"\n}\n");
    let patch = test.private_dir("home").join("break.patch");
    fs::write(
        &patch,
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn one() -> i32 {\n-    1\n+    \"one\"\n }\n",
    )
    .expect("write the patch");
    let out = test
        .args(["check", "--patch"])
        .args([&patch])
        .args(["--no-daemon", "--startup-timeout", "60s"])
        .run();
    assert_eq!(ran(marks.path()), Vec::<PathBuf>::new(), "{out}");
    out.assert_code(1).stdout_contains("E0308");
}

/// A workspace whose `.venv/bin/python` (named by `python-interpreter-path` too)
/// leaves a file in `marks` when run, then does what the real one would.
fn planted_interpreter(marks: &Path) -> Test {
    let real = ["/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .expect("a python3 for the planted one to hand over to");
    let test = Test::new()
        .file("a.py", "def one() -> int:\n    return 1\n")
        .file(
            "pyproject.toml",
            "[project]\nname = \"planted\"\nversion = \"0\"\n\n\
             [tool.pyrefly]\npython-interpreter-path = \".venv/bin/python\"\n",
        )
        .file(".venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.11.0\n");
    fs::create_dir_all(test.path(".venv/bin")).expect("mkdir .venv/bin");
    for name in ["python", "python3"] {
        let script = test.path(".venv/bin").join(name);
        fs::write(
            &script,
            format!(
                "#!/bin/sh\ntouch '{}'\nexec {real} \"$@\"\n",
                marks.join(name).display()
            ),
        )
        .expect("write the planted interpreter");
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    test
}

/// Issue 29, item 5: which Python checker runs is the user's choice. An untrusted
/// `.lspgate.toml` that makes pyrefly a linter or turns off the checkers ahead of it
/// is ignored with a note (pyright checks); a checker the user chose that would run
/// the workspace's interpreter is given the user's (basedpyright) or not run, its
/// files reported as not checked (pyrefly). The planted interpreter never runs.
#[test]
fn an_untrusted_workspace_never_runs_its_python() {
    if !(require_server("pyright-langserver")
        && require_server("basedpyright-langserver")
        && require_server("pyrefly"))
    {
        return;
    }
    let off = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("[server.{n}]\ndisabled = true\n"))
            .collect::<String>()
    };
    let cases = [
        (
            "pyrefly made a linter by the project",
            "[server.pyrefly]\nrole = \"linter\"\n".to_string(),
            String::new(),
            Some(("Pyright", "ignored server.pyrefly.role")),
        ),
        (
            "the checkers ahead of pyrefly turned off by the project",
            off(&["pyright", "basedpyright", "ty"]),
            String::new(),
            Some(("Pyright", "ignored server.pyright.disabled")),
        ),
        (
            "basedpyright chosen by the user",
            String::new(),
            off(&["pyright"]),
            Some(("basedpyright", "")),
        ),
        (
            "pyrefly chosen by the user",
            String::new(),
            off(&["pyright", "basedpyright", "ty"]),
            None,
        ),
    ];
    for (what, project, user, checked) in cases {
        let marks = tempfile::tempdir().expect("tempdir");
        let out = planted_interpreter(marks.path())
            .file(".lspgate.toml", project)
            .user_config(user)
            .args(["edit", "a.py", "--old", "return 1", "--new", "return \"x\""])
            .args(["--startup-timeout", "60s"])
            .run();
        assert_eq!(ran(marks.path()), Vec::<PathBuf>::new(), "{what}\n{out}");
        match checked {
            Some((source, note)) => {
                out.assert_code(1)
                    .stdout_contains(&format!("a.py:2:12 [{source}]"))
                    .stderr_contains(note);
            }
            None => {
                out.assert_code(3).stdout_contains(
                    "note: a.py: pyrefly is not run: it would run the Python interpreter",
                );
            }
        }
    }
}

/// Issue 29, item 6: the user (never the project) can keep servers from running:
/// `LSPGATE_WITHOUT` or `without` in the user config. A file such a server would
/// check is reported as not checked, exit 3, whether it was the file's checker or
/// a linter beside it; a name no server has is bad input.
#[test]
fn servers_the_user_turns_off_leave_their_files_not_checked() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server_in_user_config(&[])
        .env("LSPGATE_WITHOUT", "fake")
        .args(["write", "a.fake", "--content", "ERROR unseen\n"])
        .run();
    out.assert_code(3)
        .stdout_contains("note: a.fake: fake is turned off (LSPGATE_WITHOUT), not checked");
    assert!(out.fake_pids().is_empty(), "the server ran\n{out}");

    // A linter beside the checker, turned off in the user config.
    let test = Test::new()
        .file("a.fake", "one\n")
        .fake_server_in_user_config(&[]);
    let config = test.private_dir("config").join("lspgate/config.toml");
    let fake = fs::read_to_string(&config).expect("read the user config");
    let linter = fake.replace("[server.\"fake\"]", "[server.fakelint]") + "role = \"linter\"\n";
    let test = test.user_config(format!("without = [\"fakelint\"]\n{fake}{linter}"));
    let out = test.args(["write", "a.fake", "--content", "clean\n"]).run();
    out.assert_code(3)
        .stdout_contains("note: a.fake: fakelint is turned off (without in ");

    // The project cannot: its `without` is ignored with a note.
    let out = out
        .again()
        .user_config(format!("{fake}{linter}"))
        .file(".lspgate.toml", "without = [\"fake\", \"fakelint\"]\n")
        .args(["write", "a.fake", "--content", "ERROR seen\n"])
        .run();
    out.assert_code(1)
        .stdout_contains("[fake][E1] seen")
        .stderr_contains("ignored without");

    let out = out
        .again()
        .env("LSPGATE_WITHOUT", "nope")
        .args(["write", "a.fake", "--content", "two\n"])
        .run();
    out.assert_code(2)
        .stderr_contains("LSPGATE_WITHOUT: no server is named \"nope\"");
    assert_eq!(out.file("a.fake"), "ERROR seen\n");
}
