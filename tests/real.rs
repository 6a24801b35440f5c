//! End-to-end runs against the real language servers, on the tiny projects in
//! `tests/fixtures/<language>`: module `a` defines `greet(name)`, `b` and `c` call
//! it, and `c` also holds an error of its own that no edit here touches.
//!
//! Each server gets the same four stories: an error in the edited file; a change
//! to `greet` that breaks `b` and `c`, which nobody opened; `c`'s own error never
//! reported as new (also when its lines move); a fixing edit that exits 0. The
//! edit mechanics (dry run, reject, malformed and non-applying patches, a two-file
//! patch) are checked once, with pyright.
//!
//! The timeouts are generous on purpose: a cold server on a busy 2-core CI machine
//! can be slow, and these tests are about what is reported, not how fast.

use std::{
    fs,
    path::Path,
    time::{Duration, Instant},
};

use serde_json::Value;

use crate::support::{Output, Test, require_server};

mod changed;
mod configuration;
mod monorepo;
mod servers;
mod stored;

/// Cold-start friendly waits; correctness must not depend on speed.
const WAITS: [&str; 7] = [
    "--no-daemon",
    "--startup-timeout",
    "90s",
    "--timeout",
    "20s",
    "--cross-file-timeout",
    "10s",
];

/// Above the sum of the waits, so a slow run fails on its own report, not the watchdog.
const WATCHDOG: Duration = Duration::from_secs(300);

/// Replace `old` by `new` in `path` (what `lspgate edit` does).
struct Edit {
    path: &'static str,
    old: &'static str,
    new: &'static str,
}

/// One server, its fixture, and the edits and lines the stories need. Lines are
/// 1-based, as in the text report.
struct Lang {
    /// The commands that must be on PATH.
    commands: &'static [&'static str],
    fixture: &'static str,
    /// Introduces an error in module `a`, at `error_line`.
    error: Edit,
    error_line: u32,
    /// Gives `greet` a second required parameter: breaks `b` and `c` only.
    breaking: Edit,
    /// Where `b` and `c` call `greet`.
    b_call: (&'static str, u32),
    c_call: u32,
    /// `c`, and the line of its own (pre-existing) error.
    c: &'static str,
    c_error_line: u32,
    /// Inserts one line above `c`'s own error.
    c_shift: Edit,
    /// The user config of its runs (choosing this server among others).
    user_config: &'static str,
    /// Adds what the fixture needs besides its files (a `node_modules`).
    prepare: Option<fn(Test) -> Test>,
}

const PYRIGHT: Lang = Lang {
    commands: &["pyright-langserver"],
    fixture: "python",
    error: Edit {
        path: "a.py",
        old: "return \"Hello, \" + name",
        new: "return 42",
    },
    error_line: 2,
    breaking: Edit {
        path: "a.py",
        old: "def greet(name: str)",
        new: "def greet(name: str, greeting: str)",
    },
    b_call: ("b.py", 3),
    c_call: 5,
    c: "c.py",
    c_error_line: 3,
    c_shift: Edit {
        path: "c.py",
        old: "count: int =",
        new: "# moved down by one line\ncount: int =",
    },
    user_config: "",
    prepare: None,
};

const TSLS: Lang = Lang {
    commands: &["typescript-language-server"],
    fixture: "typescript",
    error: Edit {
        path: "a.ts",
        old: "return \"Hello, \" + name;",
        new: "return 42;",
    },
    error_line: 2,
    breaking: Edit {
        path: "a.ts",
        old: "greet(name: string)",
        new: "greet(name: string, greeting: string)",
    },
    b_call: ("b.ts", 3),
    c_call: 5,
    c: "c.ts",
    c_error_line: 3,
    c_shift: Edit {
        path: "c.ts",
        old: "const count",
        new: "// moved down by one line\nconst count",
    },
    user_config: "",
    prepare: None,
};

const GOPLS: Lang = Lang {
    commands: &["gopls", "go"],
    fixture: "go",
    error: Edit {
        path: "a/a.go",
        old: "return \"Hello, \" + name",
        new: "return 42",
    },
    error_line: 4,
    breaking: Edit {
        path: "a/a.go",
        old: "Greet(name string)",
        new: "Greet(name, greeting string)",
    },
    b_call: ("b/b.go", 6),
    c_call: 8,
    c: "c/c.go",
    c_error_line: 5,
    c_shift: Edit {
        path: "c/c.go",
        old: "var count",
        new: "// moved down by one line\nvar count",
    },
    user_config: "",
    prepare: None,
};

// In C the edits go to the header: that is where `greet` is declared, and every
// file including it is a dependent.
const CLANGD: Lang = Lang {
    commands: &["clangd"],
    fixture: "c",
    error: Edit {
        path: "a.h",
        old: "greet(const char *name);",
        new: "greet(const chr *name);",
    },
    error_line: 4,
    breaking: Edit {
        path: "a.h",
        old: "greet(const char *name);",
        new: "greet(const char *name, int times);",
    },
    b_call: ("b.c", 4),
    c_call: 8,
    c: "c.c",
    c_error_line: 7,
    c_shift: Edit {
        path: "c.c",
        old: "    int count = p;",
        new: "    /* moved down by one line */\n    int count = p;",
    },
    user_config: "",
    prepare: None,
};

const RUST_ANALYZER: Lang = Lang {
    commands: &["rust-analyzer", "cargo"],
    fixture: "rust",
    error: Edit {
        path: "src/a.rs",
        old: "format!(\"Hello, {name}\")",
        new: "42",
    },
    error_line: 2,
    // `_greeting`: an unused parameter would add a warning to `a` itself.
    breaking: Edit {
        path: "src/a.rs",
        old: "greet(name: &str)",
        new: "greet(name: &str, _greeting: &str)",
    },
    b_call: ("src/b.rs", 4),
    c_call: 5,
    c: "src/c.rs",
    c_error_line: 4,
    c_shift: Edit {
        path: "src/c.rs",
        old: "    let count: i32",
        new: "    // moved down by one line\n    let count: i32",
    },
    user_config: "",
    prepare: None,
};

/// The shell of an npm workspace: a root `package.json` whose `workspaces` is
/// `packages/*`, the base tsconfig (`base`) that each of `packages` extends with a
/// `packages/<dir>/tsconfig.json` of its own (no root tsconfig), `node_modules/`
/// ignored, and the links npm makes for the workspace: `node_modules/<scope>/<dir>`
/// to `packages/<dir>`.
fn npm_workspace_shell(base: &str, scope: &str, packages: &[&str]) -> Test {
    let tsconfig = "{ \"extends\": \"../../tsconfig.base.json\", \"include\": [\"src\"] }\n";
    let mut test = Test::new()
        .watchdog(WATCHDOG)
        .file(
            "package.json",
            "{ \"name\": \"root\", \"private\": true, \"workspaces\": [\"packages/*\"] }\n",
        )
        .file("tsconfig.base.json", base)
        .file(".gitignore", "node_modules/\n");
    for dir in packages {
        test = test.file(format!("packages/{dir}/tsconfig.json"), tsconfig);
    }
    let links = test.path(format!("node_modules/{scope}"));
    fs::create_dir_all(&links).expect("node_modules/<scope>");
    for dir in packages {
        std::os::unix::fs::symlink(format!("../../packages/{dir}"), links.join(dir))
            .expect("the workspace link");
    }
    test
}

/// Whether the language's commands are on PATH; in CI (`CI=true`) a missing one fails
/// the test instead.
fn installed(lang: &Lang) -> bool {
    lang.commands.iter().all(|cmd| require_server(cmd))
}

/// A workspace holding a copy of the fixture, with `edits` already applied to it.
fn workspace(lang: &Lang, edits: &[&Edit]) -> Test {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(lang.fixture);
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    assert!(!files.is_empty(), "fixture {} is empty", root.display());
    let mut test = Test::new().watchdog(WATCHDOG).user_config(lang.user_config);
    if let Some(prepare) = lang.prepare {
        test = prepare(test);
    }
    for (rel, mut text) in files {
        for edit in edits.iter().filter(|edit| Path::new(edit.path) == rel) {
            assert_eq!(
                text.matches(edit.old).count(),
                1,
                "{:?} must occur once in {}",
                edit.old,
                edit.path
            );
            text = text.replacen(edit.old, edit.new, 1);
        }
        test = test.file(rel, text);
    }
    test
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(std::path::PathBuf, String)>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|err| panic!("read {}: {err}", dir.display()));
    for entry in entries {
        let path = entry.expect("a dir entry").path();
        if path.is_dir() {
            collect(root, &path, files);
        } else {
            let text = fs::read_to_string(&path)
                .unwrap_or_else(|err| panic!("read {}: {err}", path.display()));
            files.push((
                path.strip_prefix(root)
                    .expect("inside the fixture")
                    .to_owned(),
                text,
            ));
        }
    }
}

/// `lspgate edit` applying `edit` (or its reverse), with the generous waits.
fn edit_args(edit: &Edit, reverse: bool, extra: &[&str]) -> Vec<String> {
    let (old, new) = if reverse {
        (edit.new, edit.old)
    } else {
        (edit.old, edit.new)
    };
    let mut args: Vec<String> = ["edit", edit.path, "--old", old, "--new", new]
        .map(String::from)
        .to_vec();
    args.extend(WAITS.iter().chain(extra).map(|arg| arg.to_string()));
    args
}

/// The block's diagnostic lines for `path:line` (any column, any severity).
fn lines_at<'a>(lines: &[&'a str], path: &str, line: u32) -> Vec<&'a str> {
    let at = format!(" {path}:{line}:");
    lines.iter().copied().filter(|l| l.contains(&at)).collect()
}

/// Fails unless block `name` lists an error at `path:line`.
fn assert_error_in(out: &Output, name: &str, path: &str, line: u32) {
    let block = out
        .block(name)
        .unwrap_or_else(|| panic!("no <{name}> block\n{out}"));
    let prefix = format!("Error: {path}:{line}:");
    assert!(
        block.iter().any(|l| l.starts_with(&prefix)),
        "<{name}> lacks an error at {path}:{line}\n{out}"
    );
}

/// Fails if any diagnostic is listed at `path:line`, in any block.
fn assert_nothing_at(out: &Output, path: &str, line: u32) {
    let all: Vec<&str> = out.stdout.lines().collect();
    let found = lines_at(&all, path, line);
    assert!(
        found.is_empty(),
        "{path}:{line} is reported: {found:?}\n{out}"
    );
}

fn json_file<'a>(report: &'a Value, path: &str) -> Option<&'a Value> {
    report["files"]
        .as_array()?
        .iter()
        .find(|file| file["path"] == path)
}

/// The diagnostics of `path` in a JSON report that start on 1-based `line`.
fn json_diagnostics_at<'a>(report: &'a Value, path: &str, line: u32) -> Vec<&'a Value> {
    let Some(file) = json_file(report, path) else {
        return Vec::new();
    };
    file["diagnostics"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter(|d| d["range"]["start"]["line"] == u64::from(line - 1))
                .collect()
        })
        .unwrap_or_default()
}

// --- the four stories, per server ------------------------------------------------

/// (a) An error in the edited file is reported in `<file_diagnostics>` at its line;
/// `c`'s own error, untouched, is not reported.
fn reports_error_in_edited_file(lang: &Lang) {
    if !installed(lang) {
        return;
    }
    let out = workspace(lang, &[])
        .args(edit_args(&lang.error, false, &[]))
        .run();
    out.assert_code(1);
    assert_error_in(&out, "file_diagnostics", lang.error.path, lang.error_line);
    assert_nothing_at(&out, lang.c, lang.c_error_line);
    assert_eq!(
        out.file(lang.error.path).matches(lang.error.new).count(),
        1,
        "edit not applied\n{out}"
    );
}

/// (b) A signature change breaks `b`, which nobody opened: reported in
/// `<project_diagnostics>`, and in JSON with role `dependent`. `c`'s new error is
/// reported, its old one is not.
fn reports_dependent_broken_by_edit(lang: &Lang) {
    if !installed(lang) {
        return;
    }
    let (b, b_line) = lang.b_call;
    let out = workspace(lang, &[])
        .args(edit_args(&lang.breaking, false, &[]))
        .run();
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", b, b_line);
    assert_error_in(&out, "project_diagnostics", lang.c, lang.c_call);
    assert_nothing_at(&out, lang.c, lang.c_error_line);
    let file_block = out.block("file_diagnostics").unwrap_or_default();
    assert!(
        lines_at(&file_block, b, b_line).is_empty(),
        "{b} is not an edited file\n{out}"
    );

    let out = workspace(lang, &[])
        .args(edit_args(&lang.breaking, false, &["--format", "json"]))
        .run();
    out.assert_code(1);
    let report = out.json();
    let file =
        json_file(&report, b).unwrap_or_else(|| panic!("{b} missing from the JSON files\n{out}"));
    assert_eq!(file["role"], "dependent", "{b}'s role\n{out}");
    let at_call = json_diagnostics_at(&report, b, b_line);
    assert!(
        at_call
            .iter()
            .any(|d| d["severity"] == "Error" && d["new"] == true),
        "no new error at {b}:{b_line} in JSON\n{out}"
    );
    let c_own = json_diagnostics_at(&report, lang.c, lang.c_error_line);
    assert!(
        c_own.iter().all(|d| d["new"] == false),
        "{}'s own error is marked new\n{out}",
        lang.c
    );
    assert_eq!(report["exit_code"], 1, "JSON exit_code\n{out}");
}

/// (c) An edit of `c` that moves its own error down a line reports nothing new.
fn does_not_report_moved_preexisting_error(lang: &Lang) {
    if !installed(lang) {
        return;
    }
    let out = workspace(lang, &[])
        .args(edit_args(&lang.c_shift, false, &[]))
        .run();
    out.assert_code(0);
    assert_nothing_at(&out, lang.c, lang.c_error_line);
    assert_nothing_at(&out, lang.c, lang.c_error_line + 1);
    out.stdout_lacks("Error:");
    assert!(
        out.file(lang.c).contains("moved down by one line"),
        "edit not applied\n{out}"
    );
}

/// (d) Reverting (a) reports no new error and exits 0; with `--all`, `c`'s own
/// error, which the fix leaves alone, is listed.
fn fixing_edit_reports_nothing_new(lang: &Lang) {
    if !installed(lang) {
        return;
    }
    let out = workspace(lang, &[&lang.error])
        .args(edit_args(&lang.error, true, &[]))
        .run();
    out.assert_code(0);
    out.stdout_lacks("Error:");
    assert!(
        out.block("file_diagnostics").is_none(),
        "a clean run lists nothing\n{out}"
    );
    assert_eq!(
        out.file(lang.error.path).matches(lang.error.old).count(),
        1,
        "fix not applied\n{out}"
    );

    let out = workspace(lang, &[&lang.error])
        .args(edit_args(&lang.error, true, &["--all"]))
        .run();
    out.assert_code(0);
    assert_error_in(&out, "project_diagnostics", lang.c, lang.c_error_line);
    assert_nothing_at(&out, lang.error.path, lang.error_line);
}

#[test]
fn pyright_reports_error_in_edited_file() {
    reports_error_in_edited_file(&PYRIGHT);
}

#[test]
fn pyright_reports_dependent_broken_by_edit() {
    reports_dependent_broken_by_edit(&PYRIGHT);
}

#[test]
fn pyright_does_not_report_moved_preexisting_error() {
    does_not_report_moved_preexisting_error(&PYRIGHT);
}

#[test]
fn pyright_fixing_edit_reports_nothing_new() {
    fixing_edit_reports_nothing_new(&PYRIGHT);
}

#[test]
fn tsls_reports_error_in_edited_file() {
    reports_error_in_edited_file(&TSLS);
}

#[test]
fn tsls_reports_dependent_broken_by_edit() {
    reports_dependent_broken_by_edit(&TSLS);
}

#[test]
fn tsls_does_not_report_moved_preexisting_error() {
    does_not_report_moved_preexisting_error(&TSLS);
}

#[test]
fn tsls_fixing_edit_reports_nothing_new() {
    fixing_edit_reports_nothing_new(&TSLS);
}

#[test]
fn gopls_reports_error_in_edited_file() {
    reports_error_in_edited_file(&GOPLS);
}

#[test]
fn gopls_reports_dependent_broken_by_edit() {
    reports_dependent_broken_by_edit(&GOPLS);
}

#[test]
fn gopls_does_not_report_moved_preexisting_error() {
    does_not_report_moved_preexisting_error(&GOPLS);
}

#[test]
fn gopls_fixing_edit_reports_nothing_new() {
    fixing_edit_reports_nothing_new(&GOPLS);
}

/// A cold run that deletes module `a`: gopls's brackets of its first diagnosis and of
/// the deletion's are what the run waits for, so `a` is never opened (an open has gopls
/// diagnose its package once more, 0.2-0.4 s of a cold go-cmp run), and its importers'
/// breaks are found all the same.
#[test]
fn gopls_a_cold_deletion_opens_nothing_and_finds_the_importers_broken() {
    if !installed(&GOPLS) {
        return;
    }
    let test = workspace(&GOPLS, &[]);
    let trace = test.private_dir("home").join("trace");
    let text = fs::read_to_string(test.path(GOPLS.error.path)).expect("read module a");
    let mut patch = format!(
        "--- a/{0}\n+++ /dev/null\n@@ -1,{1} +0,0 @@\n",
        GOPLS.error.path,
        text.lines().count()
    );
    for line in text.lines() {
        patch.push_str(&format!("-{line}\n"));
    }
    let out = test
        .env("LSPGATE_TRACE", &trace)
        .args(["patch"])
        .args(WAITS)
        .stdin(patch)
        .run();
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", GOPLS.b_call.0, 3);
    assert_error_in(&out, "project_diagnostics", GOPLS.c, 3);
    let messages = fs::read_to_string(&trace).expect("the run's trace");
    let opened: Vec<&str> = messages
        .lines()
        .filter(|l| l.contains("\"textDocument/didOpen\""))
        .collect();
    assert!(
        opened.is_empty(),
        "gopls was shown a file: {opened:?}\n{out}"
    );
    assert!(
        messages.contains("\"workspace/didChangeWatchedFiles\""),
        "the deletion was not told\n{out}"
    );
}

#[test]
fn clangd_reports_error_in_edited_file() {
    reports_error_in_edited_file(&CLANGD);
}

#[test]
fn clangd_reports_dependent_broken_by_edit() {
    reports_dependent_broken_by_edit(&CLANGD);
}

#[test]
fn clangd_does_not_report_moved_preexisting_error() {
    does_not_report_moved_preexisting_error(&CLANGD);
}

#[test]
fn clangd_fixing_edit_reports_nothing_new() {
    fixing_edit_reports_nothing_new(&CLANGD);
}

#[test]
fn rust_analyzer_reports_error_in_edited_file() {
    reports_error_in_edited_file(&RUST_ANALYZER);
}

#[test]
fn rust_analyzer_reports_dependent_broken_by_edit() {
    reports_dependent_broken_by_edit(&RUST_ANALYZER);
}

/// A dry run is never saved, so rust-analyzer's check of the crate does not see it:
/// the dependent is found by the scan and analysed open, against the edit in memory.
#[test]
fn rust_analyzer_dry_run_reports_dependent_from_the_edit_in_memory() {
    if !installed(&RUST_ANALYZER) {
        return;
    }
    let (b, b_line) = RUST_ANALYZER.b_call;
    let test = workspace(&RUST_ANALYZER, &[]);
    // Its check writes `target/` and `Cargo.lock`: the sources are what must stay.
    let sources = |snapshot: std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>| {
        snapshot
            .into_iter()
            .filter(|(path, _)| path.starts_with("src"))
            .collect::<Vec<_>>()
    };
    let before = sources(test.snapshot());
    let out = test
        .args(edit_args(&RUST_ANALYZER.breaking, false, &["--dry-run"]))
        .run();
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", b, b_line);
    assert!(
        sources(out.snapshot()) == before,
        "--dry-run changed a source\n{out}"
    );
}

#[test]
fn rust_analyzer_does_not_report_moved_preexisting_error() {
    does_not_report_moved_preexisting_error(&RUST_ANALYZER);
}

#[test]
fn rust_analyzer_fixing_edit_reports_nothing_new() {
    fixing_edit_reports_nothing_new(&RUST_ANALYZER);
}

// --- edit mechanics, with pyright ---------------------------------------------------

/// Runs (a)'s error edit with `flag` (`--dry-run`, `--reject`): the error is reported,
/// since the servers saw the new text in memory, and the disk is left byte-identical.
fn error_edit_leaves_disk_untouched(flag: &str) -> Output {
    let test = workspace(&PYRIGHT, &[]);
    let before = test.snapshot();
    let out = test.args(edit_args(&PYRIGHT.error, false, &[flag])).run();
    out.assert_code(1);
    assert_error_in(&out, "file_diagnostics", "a.py", PYRIGHT.error_line);
    assert!(out.snapshot() == before, "{flag} changed the disk\n{out}");
    out
}

#[test]
fn pyright_dry_run_leaves_disk_byte_identical() {
    if installed(&PYRIGHT) {
        error_edit_leaves_disk_untouched("--dry-run");
    }
}

#[test]
fn pyright_reject_leaves_disk_unchanged_on_new_error() {
    if !installed(&PYRIGHT) {
        return;
    }
    let out = error_edit_leaves_disk_untouched("--reject");
    // A clean edit under --reject is applied.
    let out = out
        .again()
        .args(edit_args(&PYRIGHT.c_shift, false, &["--reject"]))
        .run();
    out.assert_code(0);
    assert!(
        out.file("c.py").contains("moved down by one line"),
        "--reject refused a clean edit\n{out}"
    );
}

/// The first file of the patches below: (a)'s error edit as a git diff.
const A_PY_ERROR_DIFF: &str = concat!(
    "diff --git a/a.py b/a.py\n",
    "--- a/a.py\n",
    "+++ b/a.py\n",
    "@@ -1,2 +1,2 @@\n",
    " def greet(name: str) -> str:\n",
    "-    return \"Hello, \" + name\n",
    "+    return 42\n",
);

/// `lspgate patch -` (the patch on stdin), with the generous waits.
fn patch_args() -> Vec<&'static str> {
    let mut args = vec!["patch", "-"];
    args.extend(WAITS);
    args
}

/// A patch that is bad input exits 2, prints no report and writes nothing.
fn bad_patch_writes_nothing(patch: &str) -> Output {
    let test = workspace(&PYRIGHT, &[]);
    let before = test.snapshot();
    let out = test.args(patch_args()).stdin(patch).run();
    out.assert_code(2);
    assert!(
        out.stdout.trim().is_empty(),
        "bad input prints no report\n{out}"
    );
    assert!(
        out.snapshot() == before,
        "a bad patch changed the disk\n{out}"
    );
    out
}

#[test]
fn pyright_malformed_patch_exits_2_and_writes_nothing() {
    if !installed(&PYRIGHT) {
        return;
    }
    // A hunk header that promises lines the hunk does not have.
    let patch = A_PY_ERROR_DIFF.replace("@@ -1,2 +1,2 @@", "@@ -1,5 +1,5 @@");
    bad_patch_writes_nothing(&patch);
}

#[test]
fn pyright_hunk_that_does_not_apply_exits_2_and_writes_nothing() {
    if !installed(&PYRIGHT) {
        return;
    }
    // The first file's hunk applies; the second's context is not in b.py. Nothing
    // may be written, not even a.py.
    let patch = format!(
        "{A_PY_ERROR_DIFF}{}",
        concat!(
            "diff --git a/b.py b/b.py\n",
            "--- a/b.py\n",
            "+++ b/b.py\n",
            "@@ -1,3 +1,3 @@\n",
            " from a import greet\n",
            " \n",
            "-print(greet(\"not what b.py says\"))\n",
            "+print(greet(\"b\", \"x\"))\n",
        )
    );
    bad_patch_writes_nothing(&patch).stderr_contains("b.py");
}

#[test]
fn pyright_patch_with_two_files_reports_both() {
    if !installed(&PYRIGHT) {
        return;
    }
    let patch = format!(
        "{A_PY_ERROR_DIFF}{}",
        concat!(
            "diff --git a/b.py b/b.py\n",
            "index 3333333..4444444 100644\n",
            "--- a/b.py\n",
            "+++ b/b.py\n",
            "@@ -1,3 +1,3 @@\n",
            " from a import greet\n",
            " \n",
            "-print(greet(\"b\"))\n",
            "+print(greet(\"b\", \"extra\"))\n",
        )
    );
    let out = workspace(&PYRIGHT, &[])
        .args(patch_args())
        .stdin(patch)
        .run();
    out.assert_code(1);
    // Every edited file's diagnostics go in <file_diagnostics>.
    assert_error_in(&out, "file_diagnostics", "a.py", 2);
    assert_error_in(&out, "file_diagnostics", "b.py", 3);
    assert_nothing_at(&out, "c.py", PYRIGHT.c_error_line);
    assert!(
        out.file("a.py").contains("return 42"),
        "a.py not patched\n{out}"
    );
    assert!(
        out.file("b.py").contains("greet(\"b\", \"extra\")"),
        "b.py not patched\n{out}"
    );
}

/// clangd 14, whichever `clangd` is on PATH.
const CLANGD_14: Lang = Lang {
    commands: &["clangd-14"],
    user_config: "[server.clangd]\ncommand = \"clangd-14\"\n",
    ..CLANGD
};

/// clangd 19 (Debian 12 has it as `clangd-19`), told to read the headers lspgate has
/// open (`--use-dirty-headers`, clangd 15 and later).
const CLANGD_19: Lang = Lang {
    commands: &["clangd-19"],
    user_config: "[server.clangd]\ncommand = \"clangd-19\"\n",
    ..CLANGD
};

/// clangd 14 reads included headers from the disk: a header change shown to it
/// only in memory does not reach the files including it, and lspgate must say so
/// rather than report them clean.
#[test]
fn clangd_dry_run_of_a_header_says_its_dependents_were_not_rechecked() {
    if !installed(&CLANGD_14) {
        return;
    }
    let out = workspace(&CLANGD_14, &[])
        .args(edit_args(&CLANGD.breaking, false, &["--dry-run"]))
        .run();
    out.assert_code(3)
        .stdout_contains("clangd reads included files from disk")
        .stdout_contains("b.c");
    assert_eq!(
        out.file(CLANGD.breaking.path)
            .matches(CLANGD.breaking.old)
            .count(),
        1,
        "a dry run wrote the header\n{out}"
    );
}

/// clangd 15 and later, told to read the headers lspgate has open, see a header
/// change shown only in memory: its includers' breaks are reported, and nothing is
/// said to be unchecked.
#[test]
fn clangd_19_dry_run_of_a_header_reaches_its_dependents() {
    if !installed(&CLANGD_19) {
        return;
    }
    let out = workspace(&CLANGD_19, &[])
        .args(edit_args(&CLANGD.breaking, false, &["--dry-run"]))
        .run();
    out.assert_code(1)
        .stdout_lacks("reads included files from disk");
    assert_error_in(
        &out,
        "project_diagnostics",
        CLANGD.b_call.0,
        CLANGD.b_call.1,
    );
    assert_error_in(&out, "project_diagnostics", CLANGD.c, CLANGD.c_call);
    assert_eq!(
        out.file(CLANGD.breaking.path)
            .matches(CLANGD.breaking.old)
            .count(),
        1,
        "a dry run wrote the header\n{out}"
    );
}

/// clangd 14 does not rebuild a file whose text is unchanged when the header that
/// changed is included after the file's preamble (here after a typedef, as Lua's
/// `lstate.h` includes `lobject.h`): lspgate must have it rebuilt, or the header's
/// own broken line goes unreported.
#[test]
fn clangd_rebuilds_a_header_that_includes_the_edited_one_after_its_preamble() {
    if !installed(&CLANGD) {
        return;
    }
    let late = "#ifndef PAIR_H\n#define PAIR_H\ntypedef struct Pair Pair;\n#include \"size.h\"\n\
                struct Pair {\n    Size len;\n};\n#endif\n";
    let out = workspace(&CLANGD, &[])
        .file("size.h", "typedef unsigned long Size;\n")
        .file("pair.h", late)
        .file(
            "pair.c",
            "#include \"pair.h\"\n\nint pair_empty(Pair *p) { return p->len == 0; }\n",
        )
        .args(edit_args(
            &Edit {
                path: "size.h",
                old: "long Size;",
                new: "long Length;",
            },
            false,
            &[],
        ))
        .run();
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "pair.h", 6);
}

/// clangd 14 reports nothing of a break in a header a unit includes in its preamble,
/// so a header that can break is opened itself: here one uses a renamed field only
/// through another header's macro. A header naming nothing the change reaches is not
/// opened, only compiled as part of its units (each header opened is a build of its
/// own).
#[test]
fn clangd_a_header_broken_through_a_macro_is_opened_and_a_quiet_one_is_not() {
    if !installed(&CLANGD) {
        return;
    }
    let out = workspace(&CLANGD, &[])
        .file("point.h", "struct Point {\n    int x;\n};\n")
        .file("get.h", "#define GET_X(p) ((p)->x)\n")
        .file(
            "norm.h",
            "#include \"point.h\"\n#include \"get.h\"\n\
             static inline int norm(struct Point *p) { return GET_X(p); }\n",
        )
        .file("quiet.h", "#include \"point.h\"\nint count(void);\n")
        .file(
            "main.c",
            "#include \"norm.h\"\n#include \"quiet.h\"\n\nint main(void) { return count(); }\n",
        )
        .args(edit_args(
            &Edit {
                path: "point.h",
                old: "int x;",
                new: "int left;",
            },
            false,
            &["--format", "json"],
        ))
        .run();
    out.assert_code(1);
    let report = out.json();
    let at_use = json_diagnostics_at(&report, "norm.h", 3);
    assert!(
        at_use
            .iter()
            .any(|d| d["severity"] == "Error" && d["new"] == true),
        "norm.h's own line\n{out}"
    );
    assert!(
        json_file(&report, "quiet.h").is_none(),
        "quiet.h names nothing the change reaches: not opened\n{out}"
    );
}

/// clangd 14 takes a header for unchanged when its size and its modification time
/// in whole seconds are: a header put back behind the daemon's back at the same
/// size within the same second (here the very same time, set explicitly) leaves
/// every preamble built on it in place. The daemon has clangd rebuild what it sends
/// afresh, so the next run says what the disk says, not the last edit's break.
#[test]
fn clangd_a_header_put_back_at_the_same_size_and_time_is_seen() {
    if !installed(&CLANGD) {
        return;
    }
    let test = Test::new()
        .watchdog(WATCHDOG)
        .file("compile_flags.txt", "-std=c11\n")
        .file("point.h", "struct Point {\n    int x;\n};\n")
        .file(
            "use.c",
            "#include \"point.h\"\n\nint get(struct Point *p) { return p->x; }\n",
        )
        .with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    let broken = test
        .args(["edit", "point.h", "--old", "int x;", "--new", "int y;"])
        .args(&WAITS[1..])
        .run();
    broken.assert_code(1);
    assert_error_in(&broken, "project_diagnostics", "use.c", 3);
    let header = broken.workspace().join("point.h");
    let stamp = fs::metadata(&header)
        .and_then(|m| m.modified())
        .expect("the header's time");
    fs::write(&header, "struct Point {\n    int x;\n};\n").expect("put the header back");
    fs::File::options()
        .write(true)
        .open(&header)
        .and_then(|f| f.set_modified(stamp))
        .expect("the header's old time");
    let back = broken
        .again()
        .args(["check", "use.c"])
        .args(&WAITS[1..])
        .run();
    back.assert_code(0);
    assert_nothing_at(&back, "use.c", 3);
}

/// clangd checks open files only: a warm daemon opens every unit of the project's
/// compilation database after its first run, so that the next edit's before view of
/// them is what clangd already said (`lspgate diagnostics` lists them as open). A
/// header edit then reports what it broke in a unit nobody asked about, and not the
/// error that unit had before.
#[test]
fn clangd_daemon_opens_every_unit_and_their_old_errors_stay_old() {
    if !installed(&CLANGD) {
        return;
    }
    let test = Test::new()
        .watchdog(WATCHDOG)
        .file("point.h", "struct Point {\n    int x;\n};\n")
        .file(
            "a.c",
            "#include \"point.h\"\n\nint get(struct Point *p) { return p->x; }\n",
        )
        .file(
            "b.c",
            "#include \"point.h\"\n\nint old(void) { return missing; }\n\
             int twice(struct Point *p) { return 2 * p->x; }\n",
        )
        .compile_commands(&["a.c", "b.c"])
        .with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    let first = test.args(["check", "a.c"]).args(&WAITS[1..]).run();
    first.assert_code(0);
    // clangd builds the units the daemon opened in its own time: what the daemon
    // holds is asked again until b.c is in it, with its error, or the bound passes.
    let (opened, held) = first.once_the_daemon_reports("b.c", Duration::from_secs(30));
    assert!(
        opened,
        "b.c not opened by the daemon, or clangd said nothing of it\n{held}"
    );
    let edit = held
        .again()
        .args(["edit", "point.h", "--old", "int x;", "--new", "int left;"])
        .args(&WAITS[1..])
        .run();
    edit.assert_code(1);
    assert_error_in(&edit, "project_diagnostics", "b.c", 4);
    assert_nothing_at(&edit, "b.c", 3);
}

/// tsserver watches the disk itself and sees a module deleted or put back behind
/// the daemon's back in its own time (a module it failed to find stays not found
/// until its watcher fires): the daemon has it reload its projects, so the next run
/// reports what the disk now says. As in mobx, the module is re-exported by a
/// barrel, and its user imports the barrel.
#[test]
fn tsls_a_module_deleted_and_put_back_behind_the_daemons_back_is_seen_at_once() {
    if !installed(&TSLS) {
        return;
    }
    let test = Test::new()
        .watchdog(WATCHDOG)
        .file("tsconfig.json", "{\"compilerOptions\": {\"strict\": true}, \"include\": [\"src\"]}\n")
        .file("src/types/signal.ts", "export interface Signal {\n    aborted: boolean\n}\n")
        .file("src/internal.ts", "export * from \"./types/signal\"\n")
        .file(
            "src/use.ts",
            "import { Signal } from \"./internal\"\n\nexport function stop(s: Signal): boolean {\n    return s.aborted\n}\n",
        )
        .with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    let first = test.args(["check", "src/use.ts"]).args(&WAITS[1..]).run();
    first.assert_code(0);
    let module = first.workspace().join("src/types/signal.ts");
    let text = fs::read_to_string(&module).expect("the module");
    fs::remove_file(&module).expect("delete the module");
    let gone = first
        .again()
        .args(["check", "src/use.ts"])
        .args(&WAITS[1..])
        .run();
    gone.assert_code(1).stdout_contains("Signal");
    fs::write(&module, text).expect("put the module back");
    let back = gone
        .again()
        .args(["check", "src/use.ts"])
        .args(&WAITS[1..])
        .run();
    back.assert_code(0);
}

/// typescript-language-server's diagnostics are pulled from tsserver
/// (`typescript.tsserverRequest`); the pull must say exactly what the server pushes
/// for the same text, or the before and after of a run would differ for nothing. On
/// a file with an error, an unused parameter (a suggestion with a tag) and a related
/// location, the pulled list and the next push are compared field by field.
#[test]
fn tsls_pull_through_tsserver_equals_its_push() {
    use lspgate::lsp::Pool;
    use std::time::Instant;

    if !installed(&TSLS) {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().canonicalize().expect("canonical temp dir");
    fs::write(
        root.join("tsconfig.json"),
        r#"{ "compilerOptions": { "strict": true, "noEmit": true, "types": [] } }"#,
    )
    .expect("write tsconfig");
    let path = root.join("a.ts");
    let text = "export function f(unused: number): string {\n  return 1;\n}\n\
                const o: { a: string } = { a: 1 };\nexport { o };\nf();\n";
    fs::write(&path, text).expect("write a.ts");

    let spec = lspgate::servers::builtin()
        .into_iter()
        .find(|s| s.name == "typescript-language-server")
        .expect("built-in entry");
    let program = lspgate::config::which(&spec.command).expect("on PATH");
    let mut pool = Pool::new();
    let s = pool.start(&spec, &program, &root).expect("start");
    pool.open_or_change(s, &path, text);
    let deadline = Instant::now() + Duration::from_secs(60);
    let has = |pool: &Pool, pulled: bool| {
        pool.server(s).diagnostics().get(&path).is_some_and(|d| {
            if pulled {
                d.pulled.is_some()
            } else {
                d.pushed.is_some()
            }
        })
    };
    while Instant::now() < deadline && !(pool.server(s).pulls() && has(&pool, false)) {
        pool.pump(Instant::now() + Duration::from_millis(50));
    }
    assert!(
        pool.server(s).pulls(),
        "typescript.tsserverRequest was not offered"
    );
    pool.pull(s, &path);
    while Instant::now() < deadline && !has(&pool, true) {
        pool.pump(Instant::now() + Duration::from_millis(50));
    }
    let key = |d: &lsp_types::Diagnostic| serde_json::to_string(d).expect("serialise");
    let sorted = |list: &[lsp_types::Diagnostic]| {
        let mut keys: Vec<String> = list.iter().map(key).collect();
        keys.sort();
        keys
    };
    let lists = |pool: &Pool| {
        let held = pool
            .server(s)
            .diagnostics()
            .get(&path)
            .expect("diagnostics");
        let pulled = held.pulled.as_ref().expect("pull answered");
        let pushed = held.pushed.as_ref().expect("pushed");
        (sorted(&pulled.diagnostics), sorted(&pushed.diagnostics))
    };
    // A cold server pushes what it has after 50 ms (only the syntax check, say), then
    // again when the rest is in: its last push is the one to compare.
    while Instant::now() < deadline && {
        let (pulled, pushed) = lists(&pool);
        pulled != pushed
    } {
        pool.pump(Instant::now() + Duration::from_millis(50));
    }
    let (pulled, pushed) = lists(&pool);
    pool.shutdown_all(Duration::from_secs(5));
    assert!(
        pulled.len() >= 3,
        "expected two errors and a hint: {pulled:#?}"
    );
    assert!(
        pulled.iter().any(|d| d.contains("\"tags\":[1]")),
        "no tagged suggestion: {pulled:#?}"
    );
    assert!(
        pulled.iter().any(|d| d.contains("relatedInformation")),
        "no related location: {pulled:#?}"
    );
    assert_eq!(pulled, pushed, "pulled and pushed diagnostics differ");
}

// --- issue 10: what checking an untrusted change may run ------------------------

/// A workspace `node_modules/typescript` whose tsserver, when node loads it, writes
/// `marker` and exits: what a change could add to have its JavaScript run.
fn planted_tsserver(test: Test, marker: &Path) -> Test {
    let script = format!(
        "require('fs').writeFileSync({:?}, 'the workspace tsserver ran');\nprocess.exit(1);\n",
        marker.display().to_string()
    );
    test.file(
        "node_modules/typescript/package.json",
        "{\"name\": \"typescript\", \"version\": \"5.9.9\"}\n",
    )
    .file("node_modules/typescript/lib/tsserver.js", script)
}

/// The command lines of every process under `pid`.
fn descendants(pid: u32) -> Vec<String> {
    let mut found = Vec::new();
    let mut parents = vec![pid];
    while let Some(parent) = parents.pop() {
        for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(child) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let stat = fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if ppid == Some(parent) {
                parents.push(child);
                let cmdline = fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
                found.push(String::from_utf8_lossy(&cmdline).replace('\0', " "));
            }
        }
    }
    found
}

/// Issue 10, cases 1 and 2, in an untrusted workspace: `npmLocation` (which tsserver's
/// typings installer runs through a shell) is withheld with a note `servers` shows too,
/// typings acquisition is off, and tsserver is the installed one, not the
/// `node_modules/typescript` the workspace holds. Checked on the tsservers the warm
/// daemon keeps running: their command lines say which file and which flags.
#[test]
fn tsls_an_untrusted_workspace_runs_neither_its_tsserver_nor_its_npm() {
    if !require_server("typescript-language-server") {
        return;
    }
    let test = Test::new().watchdog(WATCHDOG);
    let marker = test.private_dir("home").join("TSSERVER-RAN");
    let npm_marker = test.private_dir("home").join("PWNED");
    let toml = format!(
        "[server.typescript-language-server.initialization-options]\n\
         npmLocation = \"$(touch {})\"\n",
        npm_marker.display()
    );
    let test = planted_tsserver(test, &marker)
        .file("package.json", "{\"name\": \"app\"}\n")
        .file(
            "a.js",
            "const _ = require(\"lodash\");\nmodule.exports = 1;\n",
        )
        .file(".lspgate.toml", toml)
        .with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);

    let out = test.args(["servers", "a.js"]).run();
    out.assert_code(0);
    assert!(
        format!("{}{}", out.stdout, out.stderr)
            .contains("server.typescript-language-server.initialization-options.npmLocation"),
        "`servers` does not name the withheld key\n{out}"
    );
    let out = out
        .again()
        .args(["edit", "a.js", "--old", "= 1;", "--new", "= 2;"])
        .args(&WAITS[1..])
        .run();
    out.assert_code(0)
        .stderr_contains("initialization-options.npmLocation");
    let daemons = crate::support::process::daemon_pids(out.workspace());
    assert_eq!(daemons.len(), 1, "{out}");
    let tsservers: Vec<String> = descendants(daemons[0])
        .into_iter()
        .filter(|c| c.contains("tsserver"))
        .collect();
    assert!(!tsservers.is_empty(), "no tsserver under the daemon\n{out}");
    let workspace = out.workspace().display().to_string();
    for tsserver in &tsservers {
        assert!(
            !tsserver.contains(&workspace),
            "the workspace's tsserver: {tsserver}"
        );
        assert!(
            tsserver.contains("--disableAutomaticTypingAcquisition"),
            "typings acquisition is on: {tsserver}"
        );
        assert!(!tsserver.contains("--npmLocation"), "{tsserver}");
    }
    assert!(!marker.exists(), "the workspace's tsserver.js ran");
}

/// Issue 10, case 2, as the issue ran it: a commit adds a tsserver to
/// `node_modules/typescript` and breaks a file; `git diff HEAD~1 | lspgate check
/// --patch - --no-daemon` finds the break with the installed tsserver and never loads
/// the planted one.
#[test]
fn tsls_check_patch_never_loads_a_tsserver_the_change_adds() {
    if !require_server("typescript-language-server") {
        return;
    }
    let test = workspace(&TSLS, &[]);
    let marker = test.private_dir("home").join("TSSERVER-RAN");
    let git = |test: &Test, args: &[&str]| {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(test.workspace())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&test, &["add", "-A"]);
    git(&test, &["commit", "-q", "-m", "base"]);
    let test = planted_tsserver(test, &marker);
    let a = fs::read_to_string(test.path(TSLS.error.path)).expect("read");
    let test = test.file(
        TSLS.error.path,
        a.replacen(TSLS.error.old, TSLS.error.new, 1),
    );
    git(&test, &["add", "-A", "-f"]);
    git(&test, &["commit", "-q", "-m", "change"]);
    let diff = git(&test, &["diff", "HEAD~1"]);
    assert!(
        diff.contains("node_modules/typescript/lib/tsserver.js"),
        "{diff}"
    );

    let out = test
        .stdin(diff)
        .args(["check", "--patch", "-"])
        .args(WAITS)
        .run();
    out.assert_code(1);
    assert_error_in(&out, "file_diagnostics", TSLS.error.path, TSLS.error_line);
    assert!(
        !marker.exists(),
        "the tsserver.js the change added ran\n{out}"
    );
}

/// Issue 32: a warm daemon pulls typescript-language-server's project files between
/// runs (`daemon::pulls`). The first edit after a check then finds the before view of
/// its dependents held, asks tsserver about them after the edit without opening them,
/// and is exact: the two broken callers, nothing old.
#[test]
fn typescript_language_server_dependents_are_pulled_between_runs() {
    if !installed(&TSLS) {
        return;
    }
    let test = workspace(&TSLS, &[]).with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    let first = test.args(["check", "a.ts"]).args(&WAITS[1..]).run();
    first.assert_code(0);

    // a.ts asked by the check, b.ts and c.ts pulled since.
    let out = pulled_between_runs(first, 3);

    let breaking = &TSLS.breaking;
    let edited = out
        .again()
        .args([
            "edit",
            breaking.path,
            "--old",
            breaking.old,
            "--new",
            breaking.new,
        ])
        .args(&WAITS[1..])
        .run();
    edited.assert_code(1);
    assert_error_in(&edited, "project_diagnostics", TSLS.b_call.0, TSLS.b_call.1);
    assert_error_in(&edited, "project_diagnostics", TSLS.c, TSLS.c_call);
    assert_nothing_at(&edited, TSLS.c, TSLS.c_error_line);

    let status = edited
        .again()
        .args(["daemon", "status", "--format", "json"])
        .run();
    status.assert_code(0);
    assert_eq!(
        status.json()["servers"][0]["open_documents"],
        1,
        "a dependent was opened\n{status}"
    );
}

/// Polls `daemon status` until its first server holds an answer for each of the
/// `files` files of its project, pulled between runs (`daemon::pulls`).
#[track_caller]
fn pulled_between_runs(out: Output, files: usize) -> Output {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut out = out;
    loop {
        let status = out
            .again()
            .args(["daemon", "status", "--format", "json"])
            .run();
        status.assert_code(0);
        let json = status.json();
        out = status;
        let pulls = &json["servers"][0]["between_runs"];
        if pulls["files"] == files && pulls["held"] == files {
            return out;
        }
        assert!(
            Instant::now() < deadline,
            "the project's files were never all pulled: {pulls}\n{out}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
