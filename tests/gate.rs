//! The gate around a run: the history database and `lspgate history` (with the fake
//! server, for speed), `check --staged` and `check --patch` (fake server, then a real
//! pre-commit hook on pyright), and a patch across two projects of a monorepo checked
//! by both of their servers (pyright and gopls), as the CI recipe of the README runs it.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use serde_json::Value;

use crate::support::{Output, Test, require_server};

/// Waits for the real-server tests: cold-start friendly, as in `real.rs`.
const WAITS: [&str; 7] = [
    "--no-daemon",
    "--startup-timeout",
    "90s",
    "--timeout",
    "20s",
    "--cross-file-timeout",
    "10s",
];

/// Above the sum of the waits, so a slow run fails on its own report.
const WATCHDOG: Duration = Duration::from_secs(300);

/// Bound for a git command (and a hook it runs) or a batch of concurrent runs.
const BOUND: Duration = Duration::from_secs(300);

/// Runs `cmd` to the end, killing it and failing the test if it outlives `bound`.
#[track_caller]
fn output_within(mut cmd: Command, bound: Duration) -> std::process::Output {
    let line = format!("{cmd:?}");
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {line}: {e}"));
    let pid = child.id();
    let (tx, rx) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(bound) {
        Ok(out) => out.unwrap_or_else(|e| panic!("wait for {line}: {e}")),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("{line} still running after {bound:?}, killed");
        }
    }
}

/// `git ARGS` in the test's workspace, with the environment lspgate runs get (so a
/// hook that starts lspgate uses the test's private directories).
#[track_caller]
fn git(test: &Test, args: &[&str]) -> std::process::Output {
    let template = test.to_command();
    let mut cmd = Command::new("git");
    for (key, value) in template.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    cmd.args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"])
        .args(args)
        .current_dir(test.workspace())
        .env("GIT_CONFIG_NOSYSTEM", "1");
    output_within(cmd, BOUND)
}

#[track_caller]
fn git_ok(test: &Test, args: &[&str]) -> String {
    let out = git(test, args);
    assert!(
        out.status.success(),
        "git {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn write(test: &Test, rel: &str, text: &str) {
    let path = test.path(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("mkdir");
    }
    fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn read(test: &Test, rel: &str) -> String {
    fs::read_to_string(test.path(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// Copies `tests/fixtures/NAME` into the workspace under `under`.
pub(crate) fn with_fixture(mut test: Test, name: &str, under: &str) -> Test {
    fn walk(root: &Path, dir: &Path, files: &mut Vec<(PathBuf, Vec<u8>)>) {
        for entry in fs::read_dir(dir).expect("read the fixture") {
            let path = entry.expect("a dir entry").path();
            if path.is_dir() {
                walk(root, &path, files);
            } else {
                let bytes = fs::read(&path).expect("read a fixture file");
                files.push((path.strip_prefix(root).expect("inside").to_owned(), bytes));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    assert!(!files.is_empty(), "fixture {name} is empty");
    for (rel, bytes) in files {
        test = test.file(Path::new(under).join(rel), bytes);
    }
    test
}

// ---------------------------------------------------------------------------------
// History, with the fake server

/// The history database files of a test (its private data dir).
fn history_files(test: &Test) -> Vec<PathBuf> {
    let dir = test.private_dir("data").join("lspgate/history");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|entries| entries.map(|e| e.expect("entry").path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn history_lists_runs_newest_first_and_shows_one() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&[])
        .args(["write", "a.fake", "--content", "one\nx ERROR boom\n"])
        .run();
    out.assert_code(1);
    let out = out
        .again()
        .args(["edit", "a.fake", "--old", "x ERROR boom", "--new", "fine"])
        .run();
    out.assert_code(0);

    let out = out.again().args(["history"]).run();
    out.assert_code(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "a header and two runs\n{out}");
    assert!(lines[0].starts_with("ID  STARTED"), "{out}");
    // Newest first: the fixing edit, then the write.
    let fields = |line: &str| {
        line.split_whitespace()
            .take(4)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(fields(lines[1])[2..], ["edit", "0"], "{out}");
    assert_eq!(fields(lines[2])[2..], ["write", "1"], "{out}");
    assert!(
        lines[2].ends_with("New: 1 error, 0 warnings (edit applied)"),
        "{out}"
    );
    let write_id = fields(lines[2])[0].clone();

    let out = out.again().args(["history", &write_id]).run();
    out.assert_code(0)
        .stdout_contains(&format!("Run {write_id}: write at "))
        .stdout_contains("Command: lspgate -C ")
        .stdout_contains("write a.fake --content $'one\\nx ERROR boom\\n'")
        .stdout_contains("Files: a.fake (modified)")
        .stdout_contains("New:\nError: a.fake:2:1 [fake][E1] boom\n");

    let out = out
        .again()
        .args(["history", "--format", "json", "--limit", "1"])
        .run();
    out.assert_code(0);
    let json = out.json();
    assert_eq!(json["schema"], 1, "{out}");
    assert_eq!(json["workspace"], out.workspace().display().to_string());
    let runs = json["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "--limit 1\n{out}");
    assert_eq!(runs[0]["command"], "edit");
    assert_eq!(runs[0]["exit_code"], 0);
    assert_eq!(runs[0]["new_errors"], 0);
    assert!(runs[0]["duration_ms"].as_i64().is_some_and(|ms| ms >= 0));
    assert!(runs[0].get("diagnostics").is_none(), "{out}");

    let out = out.again().args(["history", "999"]).run();
    out.assert_code(2).stderr_contains("no run 999");
}

#[test]
fn history_last_is_a_gate() {
    let test = Test::new().file("a.fake", "one\n").fake_server(&[]);
    // Nothing recorded: a gate must not pass on nothing.
    let out = test.args(["history", "--last"]).run();
    out.assert_code(2).stderr_contains("no runs recorded");
    assert!(out.stdout.is_empty(), "{out}");

    let out = out
        .again()
        .args(["write", "a.fake", "--content", "ERROR bad\n"])
        .run();
    out.assert_code(1);
    let out = out.again().args(["history", "--last"]).run();
    out.assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] bad");

    // A new warning is not a new error.
    let out = out
        .again()
        .args(["write", "a.fake", "--content", "WARN careful\n"])
        .run();
    out.assert_code(0);
    let out = out.again().args(["history", "--last"]).run();
    out.assert_code(0)
        .stdout_contains("Warn: a.fake:1:1 [fake][W1] careful");

    // A dry run that would add an error fails the gate too: the last attempt did not pass.
    let out = out
        .again()
        .args(["write", "a.fake", "--dry-run", "--content", "ERROR again\n"])
        .run();
    out.assert_code(1);
    let out = out
        .again()
        .args(["history", "--last", "--format", "json"])
        .run();
    out.assert_code(1);
    let run = &out.json()["run"];
    assert_eq!(run["dry_run"], true, "{out}");
    assert_eq!(run["new_errors"], 1, "{out}");
    let diagnostics = run["diagnostics"].as_array().expect("diagnostics");
    assert!(
        diagnostics.iter().any(|d| d["path"] == "a.fake"
            && d["line"] == 1
            && d["column"] == 1
            && d["severity"] == "Error"
            && d["code"] == "E1"
            && d["source"] == "fake"
            && d["message"] == "again"
            && d["new"] == true),
        "{out}"
    );
    // Bad input is not a run: nothing is recorded, the gate still sees the dry run.
    let out = out
        .again()
        .args(["edit", "a.fake", "--old", "absent", "--new", "x"])
        .run();
    out.assert_code(2);
    out.again()
        .args(["history", "--last"])
        .run()
        .assert_code(1)
        .stdout_contains("dry run, not written");
}

/// `runs` runs at once on a new history database, each writing its own file: every one
/// is recorded, none with a history warning. The first ones race to create the database
/// and switch it to WAL, which SQLite answers "busy" for without waiting.
fn concurrent_runs(runs: usize) {
    let mut test = Test::new();
    for i in 0..runs {
        test = test.file(format!("f{i}.fake"), "one\n");
    }
    let test = test.fake_server(&[]);
    let children: Vec<_> = (0..runs)
        .map(|i| {
            let mut cmd = test.to_command();
            cmd.args(["write", &format!("f{i}.fake"), "--content", "ERROR x\n"]);
            thread::spawn(move || output_within(cmd, BOUND))
        })
        .collect();
    for child in children {
        let out = child.join().expect("a run's thread");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(!stderr.contains("history"), "a history warning: {stderr}");
    }
    let out = test
        .args(["history", "--format", "json", "--limit", "100"])
        .run();
    out.assert_code(0);
    let json = out.json();
    let runs_json = json["runs"].as_array().expect("runs");
    assert_eq!(runs_json.len(), runs, "{out}");
    let mut ids: Vec<i64> = runs_json.iter().filter_map(|r| r["id"].as_i64()).collect();
    ids.dedup();
    assert_eq!(ids.len(), runs, "distinct ids\n{out}");
    assert!(
        runs_json
            .iter()
            .all(|r| r["new_errors"] == 1 && r["completed"] == true),
        "{out}"
    );
}

#[test]
fn concurrent_runs_are_all_recorded() {
    concurrent_runs(6);
}

#[test]
fn sixteen_concurrent_runs_are_all_recorded() {
    concurrent_runs(16);
}

/// Issue 10, case 5: another process holds a write transaction on the history for
/// longer than a run waits. The run must not be made unrecorded (the gate would then
/// pass on the older clean run while the disk holds an unchecked edit): it is refused,
/// exit 2, nothing written. Once the lock is gone, runs are recorded again.
#[test]
fn a_run_the_history_cannot_record_is_not_made() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&[])
        .args(["write", "a.fake", "--content", "clean\n"])
        .run();
    out.assert_code(0);
    let test = out.again();
    let db = history_files(&test)
        .into_iter()
        .find(|p| p.extension() == Some(OsStr::new("sqlite3")))
        .expect("the history database");
    let holder = rusqlite::Connection::open(&db).expect("open the history");
    holder
        .execute_batch("BEGIN IMMEDIATE; UPDATE runs SET summary = summary;")
        .expect("hold a write lock");

    let out = test
        .env("LSPGATE_HISTORY_WAIT", "300ms")
        .args(["write", "a.fake", "--content", "ERROR unrecorded\n"])
        .run();
    out.assert_code(2)
        .stderr_contains("database is locked")
        .stderr_contains("nothing was written");
    assert_eq!(out.file("a.fake"), "clean\n", "the edit was made\n{out}");
    assert!(out.stdout.is_empty(), "{out}");
    holder.execute_batch("COMMIT").expect("release the lock");

    // The gate describes the disk: the clean run, the last one made.
    let out = out.again().args(["history", "--last"]).run();
    out.assert_code(0);
    let out = out
        .again()
        .args(["write", "a.fake", "--content", "ERROR recorded\n"])
        .run();
    out.assert_code(1);
    out.again()
        .args(["history", "--last"])
        .run()
        .assert_code(1)
        .stdout_contains("recorded");
}

#[test]
fn a_corrupt_history_is_moved_aside_and_never_fails_the_edit() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&[])
        .args(["write", "a.fake", "--content", "two\n"])
        .run();
    out.assert_code(0);
    let test = out.again();
    let files = history_files(&test);
    let db = files
        .iter()
        .find(|p| p.extension() == Some(OsStr::new("sqlite3")))
        .unwrap_or_else(|| panic!("no database among {files:?}"))
        .clone();
    for file in &files {
        fs::remove_file(file).expect("remove");
    }
    fs::write(&db, b"garbage, not SQLite ".repeat(500)).expect("corrupt it");

    let out = test
        .args(["write", "a.fake", "--content", "ERROR three\n"])
        .run();
    out.assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] three")
        .stderr_contains("lspgate: warning: history: ")
        .stderr_contains("moved it aside to ");
    assert_eq!(out.file("a.fake"), "ERROR three\n");
    let test = out.again();
    assert!(
        history_files(&test)
            .iter()
            .any(|p| p.to_string_lossy().contains(".sqlite3.corrupt-")),
        "{:?}",
        history_files(&test)
    );
    // The new database holds the run that found the old one broken.
    test.args(["history", "--last"])
        .run()
        .assert_code(1)
        .stdout_contains("three");
}

#[test]
fn an_unwritable_history_is_a_warning_only() {
    let test = Test::new().file("a.fake", "one\n").fake_server(&[]);
    // The data directory would have to be inside a regular file.
    let blocker = test.private_dir("home").join("not-a-dir");
    fs::write(&blocker, "x").expect("write");
    let out = test
        .env("LSPGATE_DATA_DIR", &blocker)
        .args(["write", "a.fake", "--content", "ERROR four\n"])
        .run();
    out.assert_code(1)
        .stdout_contains("Error: a.fake:1:1 [fake][E1] four")
        .stderr_contains("lspgate: warning: history: ")
        .stderr_contains("this run is not recorded");
    let warnings = out.stderr.lines().filter(|l| l.contains("history")).count();
    assert_eq!(warnings, 1, "one line\n{out}");
    assert_eq!(out.file("a.fake"), "ERROR four\n");
}

#[test]
fn history_is_per_workspace() {
    let one = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&[])
        .args(["write", "a.fake", "--content", "ERROR x\n"])
        .run();
    one.assert_code(1);
    // Another workspace with the same private data directory sees none of it.
    let data = one.again().private_dir("data");
    let other = Test::new()
        .env("XDG_DATA_HOME", &data)
        .args(["history", "--last"])
        .run();
    other.assert_code(2).stderr_contains("no runs recorded");
}

// ---------------------------------------------------------------------------------
// check --staged and check --patch, with the fake server

/// A committed fake-server project: `a.fake` defines `greet`, `b.fake` uses it, and
/// `c.fake` has an error of its own.
fn committed_greet(test: Test) -> Test {
    let test = test
        .file("a.fake", "def greet\n")
        .file("b.fake", "use greet\n")
        .file("c.fake", "ERROR old\n")
        .fake_server(&[]);
    git_ok(&test, &["add", "-A"]);
    git_ok(&test, &["commit", "-q", "-m", "one"]);
    test
}

#[test]
fn check_staged_reads_the_index_not_the_working_tree() {
    let test = committed_greet(Test::new());
    // Staged: a change that breaks b.fake. Working tree: back as committed.
    write(&test, "a.fake", "def hello\n");
    git_ok(&test, &["add", "a.fake"]);
    write(&test, "a.fake", "def greet\n");
    let before = test.snapshot();
    let out = test.args(["check", "--staged"]).run();
    out.assert_code(1)
        .stdout_contains("Error: b.fake:1:1 [fake][E2] unknown name greet")
        .stdout_lacks("old");
    assert_eq!(out.snapshot(), before, "check --staged wrote to the disk");
    assert!(
        out.summary().iter().any(|l| l.contains("(no edit")),
        "{out}"
    );

    // Staged: a clean change (c.fake's old error stays, and is not new). Working
    // tree: broken.
    let test = out.again();
    git_ok(&test, &["reset", "-q"]);
    write(&test, "c.fake", "ERROR old\ndef extra\n");
    git_ok(&test, &["add", "c.fake"]);
    write(&test, "a.fake", "def hello\n");
    let out = test.args(["check", "--staged"]).run();
    out.assert_code(0).stdout_lacks("Error:");

    // Nothing staged: nothing to check, and that passes.
    let test = out.again();
    git_ok(&test, &["reset", "-q"]);
    test.args(["check", "--staged"]).run().assert_code(0);
}

#[test]
fn check_staged_outside_git_and_with_paths_is_bad_input() {
    let out = Test::new().args(["check", "--staged", "a.fake"]).run();
    out.assert_code(2).stderr_contains("cannot be used with");
    let test = Test::new().file("a.fake", "x\n");
    fs::remove_dir_all(test.path(".git")).expect("remove .git");
    let out = test
        .env("GIT_CEILING_DIRECTORIES", "/")
        .args(["check", "--staged"])
        .run();
    out.assert_code(2)
        .stderr_contains("check --staged: git diff failed");
}

#[test]
fn check_patch_counts_only_what_the_diff_introduced() {
    let test = committed_greet(Test::new());
    write(&test, "a.fake", "def hello\n");
    write(&test, "c.fake", "ERROR old\nERROR new\n");
    write(&test, "d.fake", "ERROR created\n");
    git_ok(&test, &["add", "-A"]);
    // The diff is applied: the working tree holds its result.
    let diff = git_ok(&test, &["diff", "--cached"]);
    let patch_file = test.private_dir("home").join("change.diff");
    fs::write(&patch_file, &diff).expect("write the patch");
    let before = test.snapshot();

    let out = test.args(["check", "--patch"]).args([&patch_file]).run();
    out.assert_code(1)
        .stdout_contains("Error: b.fake:1:1 [fake][E2] unknown name greet")
        .stdout_contains("Error: c.fake:2:1 [fake][E1] new")
        .stdout_contains("Error: d.fake:1:1 [fake][E1] created")
        .stdout_lacks("c.fake:1:1");
    assert_eq!(out.snapshot(), before, "check --patch wrote\n{out}");

    // From stdin, in JSON: the same three, and only they, are new.
    let out = out
        .again()
        .stdin(&diff)
        .args(["check", "--patch", "-", "--format", "json", "--all"])
        .run();
    out.assert_code(1);
    let json = out.json();
    let mut new: Vec<String> = Vec::new();
    let mut old: Vec<String> = Vec::new();
    for f in json["files"].as_array().expect("files") {
        for d in f["diagnostics"].as_array().expect("diagnostics") {
            let entry = format!("{}:{}", f["path"].as_str().unwrap_or("?"), d["message"]);
            if d["new"] == true {
                new.push(entry);
            } else {
                old.push(entry);
            }
        }
    }
    new.sort();
    assert_eq!(
        new,
        [
            "b.fake:\"unknown name greet\"",
            "c.fake:\"new\"",
            "d.fake:\"created\""
        ],
        "{out}"
    );
    assert_eq!(old, ["c.fake:\"old\""], "{out}");
    assert_eq!(out.snapshot(), before, "check --patch wrote\n{out}");
}

#[test]
fn check_patch_not_applied_says_so() {
    let test = committed_greet(Test::new());
    write(&test, "a.fake", "def hello\n");
    let diff = git_ok(&test, &["diff"]);
    git_ok(&test, &["checkout", "--", "a.fake"]);
    let out = test.stdin(diff).args(["check", "--patch", "-"]).run();
    out.assert_code(2)
        .stderr_contains("a.fake: hunk 1")
        .stderr_contains("lspgate patch --dry-run");
    assert_eq!(out.file("a.fake"), "def greet\n");
}

// ---------------------------------------------------------------------------------
// Real servers: a pre-commit hook, and a monorepo patch

#[test]
fn pre_commit_hook_refuses_a_commit_that_breaks_an_unopened_caller() {
    if !require_server("pyright-langserver") {
        return;
    }
    let test = with_fixture(Test::new().watchdog(WATCHDOG), "python", "");
    git_ok(&test, &["add", "-A"]);
    git_ok(&test, &["commit", "-q", "-m", "fixture"]);
    let head = git_ok(&test, &["rev-parse", "HEAD"]);
    let hook = test.path(".git/hooks/pre-commit");
    fs::create_dir_all(hook.parent().expect("hooks dir")).expect("mkdir hooks");
    let mut script = format!(
        "#!/bin/sh\n# lspgate as a plain pre-commit hook\nexec '{}' check --staged",
        env!("CARGO_BIN_EXE_lspgate")
    );
    for arg in WAITS {
        script.push(' ');
        script.push_str(arg);
    }
    script.push('\n');
    fs::write(&hook, script).expect("write the hook");
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).expect("chmod the hook");

    // greet gets a second required parameter: b.py and c.py, which nobody opened,
    // break. Staged only: the working tree goes back to the committed text, so the
    // hook must read the index.
    let original = read(&test, "a.py");
    write(
        &test,
        "a.py",
        &original.replace(
            "def greet(name: str)",
            "def greet(name: str, greeting: str)",
        ),
    );
    git_ok(&test, &["add", "a.py"]);
    write(&test, "a.py", &original);
    let refused = git(&test, &["commit", "-m", "break the callers"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&refused.stdout),
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(
        !refused.status.success(),
        "the commit went through:\n{said}"
    );
    assert_eq!(git_ok(&test, &["rev-parse", "HEAD"]), head, "{said}");
    assert!(said.contains("<project_diagnostics>"), "{said}");
    assert!(said.contains("Error: b.py:3:"), "{said}");
    assert!(said.contains("Error: c.py:5:"), "{said}");
    // c.py's own error was there before: not new, not listed.
    assert!(!said.contains("c.py:3:"), "{said}");
    let test = gate(test, 1);

    // A clean change is committed.
    git_ok(&test, &["reset", "-q"]);
    write(
        &test,
        "a.py",
        &format!("{original}\n\ndef bye(name: str) -> str:\n    return \"Bye, \" + name\n"),
    );
    git_ok(&test, &["add", "a.py"]);
    let accepted = git(&test, &["commit", "-m", "a clean change"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&accepted.stdout),
        String::from_utf8_lossy(&accepted.stderr)
    );
    assert!(accepted.status.success(), "the commit was refused:\n{said}");
    assert_ne!(git_ok(&test, &["rev-parse", "HEAD"]), head, "{said}");
    let _ = gate(test, 0);
}

/// `history --last` must exit `code`; gives the test back.
#[track_caller]
fn gate(test: Test, code: i32) -> Test {
    let out = test.args(["history", "--last"]).run();
    out.assert_code(code);
    out.again()
}

/// Each of the two projects' `greet` gets a second required parameter.
const PY_BREAK: (&str, &str, &str) = (
    "py/a.py",
    "def greet(name: str)",
    "def greet(name: str, greeting: str)",
);
const GO_BREAK: (&str, &str, &str) = (
    "go/a/a.go",
    "Greet(name string)",
    "Greet(name, greeting string)",
);

#[test]
fn a_monorepo_patch_is_checked_by_both_projects_servers() {
    let installed = ["pyright-langserver", "gopls", "go"]
        .iter()
        .filter(|cmd| !require_server(cmd))
        .count()
        == 0;
    if !installed {
        return;
    }
    let test = with_fixture(Test::new().watchdog(WATCHDOG), "python", "py");
    let test = with_fixture(test, "go", "go");
    git_ok(&test, &["add", "-A"]);
    git_ok(&test, &["commit", "-q", "-m", "two projects"]);
    for (path, old, new) in [PY_BREAK, GO_BREAK] {
        let text = read(&test, path);
        assert_eq!(text.matches(old).count(), 1, "{old} in {path}");
        write(&test, path, &text.replacen(old, new, 1));
    }
    let diff = git_ok(&test, &["diff"]);
    git_ok(&test, &["checkout", "--", "."]);
    let before = test.snapshot();

    // The CI recipe: a generated patch, checked before it is applied.
    let out = test
        .stdin(&diff)
        .args(["patch", "--dry-run", "--format", "json"])
        .args(WAITS)
        .run();
    out.assert_code(1);
    assert_eq!(out.snapshot(), before, "--dry-run wrote\n{out}");
    let json = out.json();
    assert_both_projects_broken(&json, &out);
    assert_eq!(json["dry_run"], true, "{out}");

    // The same diff once applied, checked with check --patch.
    let test = out.again();
    let patch_file = test.private_dir("home").join("change.diff");
    fs::write(&patch_file, &diff).expect("write the patch");
    let patch_arg = patch_file.to_str().expect("a UTF-8 temp path");
    git_ok(&test, &["apply", patch_arg]);
    let out = test
        .args(["check", "--patch", patch_arg, "--format", "json"])
        .args(WAITS)
        .run();
    out.assert_code(1);
    assert_both_projects_broken(&out.json(), &out);
}

/// Both servers ran, and each project's unopened caller is reported broken, while
/// `c`'s own old error is not new.
#[track_caller]
fn assert_both_projects_broken(json: &Value, out: &Output) {
    let servers: Vec<&str> = json["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(servers.contains(&"pyright"), "{servers:?}\n{out}");
    assert!(servers.contains(&"gopls"), "{servers:?}\n{out}");
    for server in json["servers"].as_array().expect("servers") {
        assert_eq!(server["status"], "ok", "{server}\n{out}");
    }
    let file = |path: &str| {
        json["files"]
            .as_array()
            .and_then(|files| files.iter().find(|f| f["path"] == path))
            .unwrap_or_else(|| panic!("no {path} in the report\n{out}"))
    };
    let new_error_on = |path: &str, line: u64| {
        file(path)["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|d| {
                d["severity"] == "Error" && d["new"] == true && d["range"]["start"]["line"] == line
            })
    };
    // 0-based lines: py/b.py:3 and go/b/b.go:6 in the text report.
    assert!(new_error_on("py/b.py", 2), "py/b.py\n{out}");
    assert_eq!(file("py/b.py")["role"], "dependent", "{out}");
    assert!(new_error_on("go/b/b.go", 5), "go/b/b.go\n{out}");
    assert_eq!(file("go/b/b.go")["role"], "dependent", "{out}");
    for f in json["files"].as_array().expect("files") {
        for d in f["diagnostics"].as_array().into_iter().flatten() {
            let own_error = (f["path"] == "py/c.py" && d["range"]["start"]["line"] == 2)
                || (f["path"] == "go/c/c.go" && d["range"]["start"]["line"] == 4);
            assert!(!own_error, "an old error reported: {d}\n{out}");
        }
    }
}

/// The pre-commit framework's manifest names the hook the README documents and the
/// test above runs: `lspgate check --staged`, with no file names appended.
#[test]
fn pre_commit_manifest_runs_check_staged() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml");
    let text = fs::read_to_string(&path).expect("read .pre-commit-hooks.yaml");
    let keys: Vec<(&str, &str)> = text
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .filter_map(|line| line.trim_start_matches("- ").trim().split_once(": "))
        .collect();
    for expected in [
        ("id", "lspgate"),
        ("entry", "lspgate check --staged"),
        ("language", "system"),
        ("pass_filenames", "false"),
    ] {
        assert!(keys.contains(&expected), "{expected:?} missing: {keys:?}");
    }
    assert_eq!(text.matches("- id:").count(), 1, "one hook\n{text}");
}

/// `git commit -a` stages into a temporary index that git names in `GIT_INDEX_FILE`
/// for the hook: the hook must check that one, with the change nobody `git add`ed.
#[test]
fn a_hook_checks_what_commit_a_commits() {
    let test = committed_greet(Test::new());
    let hook = test.path(".git/hooks/pre-commit");
    fs::create_dir_all(hook.parent().expect("hooks dir")).expect("mkdir hooks");
    let script = format!(
        "#!/bin/sh\nexec '{}' --trust-project check --staged\n",
        env!("CARGO_BIN_EXE_lspgate")
    );
    fs::write(&hook, script).expect("write the hook");
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).expect("chmod the hook");
    let head = git_ok(&test, &["rev-parse", "HEAD"]);

    write(&test, "a.fake", "def hello\n");
    let refused = git(&test, &["commit", "-a", "-m", "break b"]);
    let said = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(!refused.status.success(), "committed:\n{said}");
    assert!(
        said.contains("Error: b.fake:1:1 [fake][E2] unknown name greet"),
        "{said}"
    );
    assert_eq!(git_ok(&test, &["rev-parse", "HEAD"]), head);

    write(&test, "b.fake", "use hello\n");
    let accepted = git(&test, &["commit", "-a", "-m", "rename greet, and its use"]);
    let said = String::from_utf8_lossy(&accepted.stderr).into_owned();
    assert!(accepted.status.success(), "refused:\n{said}");
    assert_ne!(git_ok(&test, &["rev-parse", "HEAD"]), head);
}

/// Stops the test's daemon when dropped, pass or fail.
struct DaemonGuard(Command);

impl DaemonGuard {
    fn new(test: &Test) -> DaemonGuard {
        let mut stop = test.to_command();
        stop.args(["daemon", "stop"]);
        DaemonGuard(stop)
    }
}

impl Drop for DaemonGuard {
    fn drop(&mut self) {
        let mut stop = Command::new(self.0.get_program());
        stop.args(self.0.get_args());
        for (key, value) in self.0.get_envs() {
            match value {
                Some(value) => stop.env(key, value),
                None => stop.env_remove(key),
            };
        }
        let _ = output_within(stop, Duration::from_secs(30));
    }
}

/// On a warm daemon the servers hold the disk's text, which is the change's result:
/// the before view (HEAD's text, or the diff undone) must not reuse the dependents'
/// diagnostics computed for it, or nothing would ever be new. Every run sees the
/// break again. The fake server publishes promptly; pyright, below, is where a stale
/// result would be taken.
#[test]
fn check_staged_and_patch_through_the_daemon() {
    let test = committed_greet(Test::new()).with_daemon();
    let _guard = DaemonGuard::new(&test);
    write(&test, "a.fake", "def hello\n");
    git_ok(&test, &["add", "a.fake"]);
    let diff = git_ok(&test, &["diff", "--cached"]);
    let mut test = test;
    for args in [
        &["check", "--staged"][..],
        &["check", "--staged"],
        &["check", "--patch", "-"],
    ] {
        let out = test.stdin(&diff).args(args).run();
        out.assert_code(1)
            .stdout_contains("Error: b.fake:1:1 [fake][E2] unknown name greet");
        test = out.again();
    }
}

#[test]
fn check_staged_on_a_warm_pyright_finds_the_break_every_time() {
    if !require_server("pyright-langserver") {
        return;
    }
    let test = with_fixture(Test::new().watchdog(WATCHDOG), "python", "").with_daemon();
    let _guard = DaemonGuard::new(&test);
    git_ok(&test, &["add", "-A"]);
    git_ok(&test, &["commit", "-q", "-m", "fixture"]);
    let (path, old, new) = (
        "a.py",
        "def greet(name: str)",
        "def greet(name: str, greeting: str)",
    );
    write(&test, path, &read(&test, path).replacen(old, new, 1));
    git_ok(&test, &["add", path]);
    let mut test = test;
    let waits = &WAITS[1..]; // the daemon's warm servers, not --no-daemon
    for _ in 0..4 {
        let out = test.args(["check", "--staged"]).args(waits).run();
        out.assert_code(1);
        assert!(out.stdout.contains("Error: b.py:3:"), "{out}");
        assert!(out.stdout.contains("Error: c.py:5:"), "{out}");
        test = out.again();
    }
}

// ---------------------------------------------------------------------------------
// The gate answers for the tree (issue 29), on pyright

/// The outstanding breaks of `history --last --format json`, as `path:line`; asserts
/// the gate's `code`.
#[track_caller]
fn outstanding(test: Test, code: i32) -> (Test, Vec<String>) {
    let out = test.args(["history", "--last", "--format", "json"]).run();
    out.assert_code(code);
    let json = out.json();
    assert_eq!(json["gate"], code, "{out}");
    let breaks = json["outstanding"]
        .as_array()
        .unwrap_or_else(|| panic!("no outstanding list\n{out}"))
        .iter()
        .map(|b| format!("{}:{}", b["path"].as_str().unwrap_or("?"), b["line"]))
        .collect();
    (out.again(), breaks)
}

/// An edit breaks b.py and c.py. Then runs that do not change the tree (a check of a
/// clean file, a dry run, `check --staged` with nothing staged) must not pass the gate,
/// and neither may edits that are clean themselves while a break stands: one that fixes
/// b.py (`fixed 1`, exit 0) leaves c.py broken, and one of an unrelated file checks
/// neither. Only when c.py is fixed too does `history --last` exit 0.
#[test]
fn the_gate_fails_while_a_break_stands_whatever_ran_since() {
    if !require_server("pyright-langserver") {
        return;
    }
    let test =
        with_fixture(Test::new().watchdog(WATCHDOG), "python", "").file("d.py", "x: int = 1\n");
    git_ok(&test, &["add", "-A"]);
    git_ok(&test, &["commit", "-q", "-m", "fixture"]);
    let out = test
        .args(["edit", "a.py", "--old", "def greet(name: str)"])
        .args(["--new", "def greet(name: str, greeting: str)"])
        .args(WAITS)
        .run();
    out.assert_code(1)
        .stdout_contains("Error: b.py:3:")
        .stdout_contains("Error: c.py:5:");
    let mut test = gate(out.again(), 1);

    let unchanging: [&[&str]; 3] = [
        &["check", "d.py"],
        &[
            "edit",
            "d.py",
            "--old",
            "x: int = 1",
            "--new",
            "x: int = 2",
            "--dry-run",
        ],
        &["check", "--staged"],
    ];
    for args in unchanging {
        let out = test.args(args).args(WAITS).run();
        out.assert_code(0);
        // The exit status first: it is the gate.
        let (next, breaks) = outstanding(gate(out.again(), 1), 1);
        assert_eq!(breaks, ["b.py:3", "c.py:5"], "after {args:?}");
        test = next;
    }
    assert_eq!(read(&test, "d.py"), "x: int = 1\n");

    let out = test
        .args([
            "edit",
            "b.py",
            "--old",
            "greet(\"b\")",
            "--new",
            "greet(\"b\", \"hi\")",
        ])
        .args(WAITS)
        .run();
    out.assert_code(0).stdout_contains("fixed 1");
    let (test, breaks) = outstanding(gate(out.again(), 1), 1);
    assert_eq!(breaks, ["c.py:5"]);

    let out = test
        .args(["edit", "d.py", "--old", "x: int = 1", "--new", "x: int = 3"])
        .args(WAITS)
        .run();
    out.assert_code(0);
    let (test, breaks) = outstanding(gate(out.again(), 1), 1);
    assert_eq!(breaks, ["c.py:5"]);
    let out = test.args(["history", "--last"]).run();
    out.assert_code(1)
        .stdout_contains("Error: c.py:5:7 [Pyright][reportCallIssue] Argument missing for parameter \"greeting\" (run 1)")
        .stdout_contains("gate: 1 (errors earlier runs introduced are not seen fixed)");

    let out = out
        .again()
        .args([
            "edit",
            "c.py",
            "--old",
            "greet(\"c\")",
            "--new",
            "greet(\"c\", \"hi\")",
        ])
        .args(WAITS)
        .run();
    out.assert_code(0).stdout_contains("fixed 1");
    let (test, breaks) = outstanding(out.again(), 0);
    assert!(breaks.is_empty(), "{breaks:?}");
    test.args(["history", "--last"])
        .run()
        .assert_code(0)
        .stdout_contains("gate: 0 (it passed)");
}
