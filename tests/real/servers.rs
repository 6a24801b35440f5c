//! Issue 13, the servers people use in 2026, against the real programs
//! (`scripts/install-servers.sh` installs them; in CI a missing one fails):
//! - the type checkers basedpyright, ty and pyrefly, each through the four stories of
//!   `real.rs` (chosen by a user config that turns the ones before them off);
//! - TypeScript 7's own server (`tsc --lsp`, `tsgo --lsp`) on a project whose
//!   `node_modules/typescript` is typescript@7: the stories, the choice `lspgate
//!   servers` explains, the project's own compiler only when trusted, a warm daemon,
//!   and a TypeScript 7 project with only TypeScript 6 at hand (exit 3);
//! - two servers on one file: pyright and ruff report one edit's problems each with its
//!   source, and ruff missing from PATH leaves pyright's report and a note; ESLint
//!   beside typescript-language-server where the project configures ESLint;
//! - rust-analyzer: one line per broken call.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::*;
use crate::support::require_server;

/// Where `scripts/install-servers.sh` puts typescript@7 as a project would have it.
fn typescript_7() -> PathBuf {
    let prefix = std::env::var_os("LSPGATE_SERVERS_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/local/lib/lspgate-servers"));
    prefix.join("typescript7/node_modules/typescript")
}

/// Whether typescript@7 is installed for the fixtures; in CI it must be.
pub(super) fn have_typescript_7() -> bool {
    let found = typescript_7().join("bin/tsc").is_file();
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "typescript@7 is not installed under {}, and in CI it must be",
            typescript_7().display()
        );
    }
    found
}

/// The TypeScript fixture as a project on typescript@7: `node_modules/typescript`
/// links to the installed package.
pub(super) fn on_typescript_7(test: Test) -> Test {
    let modules = test.path("node_modules");
    std::fs::create_dir_all(&modules).expect("mkdir node_modules");
    std::os::unix::fs::symlink(typescript_7(), modules.join("typescript")).expect("symlink");
    // As a project has it: node_modules is not the project's source.
    test.file(".gitignore", "node_modules/\n")
}

const NOT_PYRIGHT: &str = "[server.pyright]\ndisabled = true\n";
const NOT_PYRIGHT_NOR_BASED: &str =
    "[server.pyright]\ndisabled = true\n[server.basedpyright]\ndisabled = true\n";
const ONLY_PYREFLY: &str = "[server.pyright]\ndisabled = true\n[server.basedpyright]\n\
                            disabled = true\n[server.ty]\ndisabled = true\n";

pub(super) const BASEDPYRIGHT: Lang = Lang {
    commands: &["basedpyright-langserver"],
    user_config: NOT_PYRIGHT,
    ..PYRIGHT
};

pub(super) const TY: Lang = Lang {
    commands: &["ty"],
    user_config: NOT_PYRIGHT_NOR_BASED,
    ..PYRIGHT
};

/// pyrefly runs the Python interpreter a workspace names, so it runs only in a
/// trusted one.
pub(super) const PYREFLY: Lang = Lang {
    commands: &["pyrefly"],
    user_config: ONLY_PYREFLY,
    prepare: Some(Test::trust_project),
    ..PYRIGHT
};

/// The untrusted workspace's TypeScript 7 is the one installed (`tsgo`).
pub(super) const TSGO: Lang = Lang {
    commands: &["tsgo"],
    prepare: Some(on_typescript_7),
    ..TSLS
};

pub(super) fn installed_with_7(lang: &Lang) -> bool {
    installed(lang) && (lang.prepare.is_none() || have_typescript_7())
}

macro_rules! stories {
    ($lang:ident, $a:ident, $b:ident, $c:ident, $d:ident) => {
        #[test]
        fn $a() {
            if installed_with_7(&$lang) {
                reports_error_in_edited_file(&$lang);
            }
        }
        #[test]
        fn $b() {
            if installed_with_7(&$lang) {
                reports_dependent_broken_by_edit(&$lang);
            }
        }
        #[test]
        fn $c() {
            if installed_with_7(&$lang) {
                does_not_report_moved_preexisting_error(&$lang);
            }
        }
        #[test]
        fn $d() {
            if installed_with_7(&$lang) {
                fixing_edit_reports_nothing_new(&$lang);
            }
        }
    };
}

stories!(
    BASEDPYRIGHT,
    basedpyright_reports_error_in_edited_file,
    basedpyright_reports_dependent_broken_by_edit,
    basedpyright_does_not_report_moved_preexisting_error,
    basedpyright_fixing_edit_reports_nothing_new
);
stories!(
    TY,
    ty_reports_error_in_edited_file,
    ty_reports_dependent_broken_by_edit,
    ty_does_not_report_moved_preexisting_error,
    ty_fixing_edit_reports_nothing_new
);
stories!(
    PYREFLY,
    pyrefly_reports_error_in_edited_file,
    pyrefly_reports_dependent_broken_by_edit,
    pyrefly_does_not_report_moved_preexisting_error,
    pyrefly_fixing_edit_reports_nothing_new
);
stories!(
    TSGO,
    tsgo_reports_error_in_edited_file,
    tsgo_reports_dependent_broken_by_edit,
    tsgo_does_not_report_moved_preexisting_error,
    tsgo_fixing_edit_reports_nothing_new
);

/// The server entry a JSON report says checked the run.
fn servers_of(report: &Value) -> Vec<String> {
    report["servers"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|s| s["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

// --- TypeScript 7 -----------------------------------------------------------------

/// `lspgate servers a.ts` on a typescript@7 project names TypeScript 7's server and
/// why: untrusted, the installed one (the project's compiler is project code);
/// trusted, the project's own `node_modules/typescript/bin/tsc`.
#[test]
fn tsgo_servers_says_which_typescript_and_why() {
    if !installed_with_7(&TSGO) {
        return;
    }
    let out = workspace(&TSGO, &[]).args(["servers", "a.ts"]).run();
    out.assert_code(0)
        .stdout_contains("a.ts: tsgo\n")
        .stdout_contains("the project is on TypeScript 7.")
        .stdout_contains("its own compiler is not run in an untrusted workspace")
        .stdout_contains("disabled:   typescript-language-server (not used here");
    let out = out.again().trust_project().args(["servers", "a.ts"]).run();
    out.assert_code(0)
        .stdout_contains("its own compiler")
        .stdout_contains("node_modules/typescript/bin/tsc runs it, the workspace being trusted");
}

/// An edit breaking two importers, cold (`--no-daemon`) and warm (a daemon, twice):
/// both importers are reported each time, by tsgo. Trusted, the project's own
/// compiler does the same.
#[test]
fn tsgo_breaking_edit_reports_both_importers_cold_and_warm() {
    if !installed_with_7(&TSGO) {
        return;
    }
    let check = |out: &Output| {
        out.assert_code(1);
        assert_error_in(out, "project_diagnostics", "b.ts", 3);
        assert_error_in(out, "project_diagnostics", "c.ts", 5);
    };
    let out = workspace(&TSGO, &[])
        .args(edit_args(&TSGO.breaking, false, &["--format", "json"]))
        .run();
    out.assert_code(1);
    assert_eq!(servers_of(&out.json()), ["tsgo"], "{out}");
    let out = out.again().args(edit_args(&TSGO.breaking, true, &[])).run();
    out.assert_code(0);

    // Through the daemon: the waits of WAITS without `--no-daemon`.
    let warm = |reverse: bool| {
        let mut args = edit_args(&TSGO.breaking, reverse, &[]);
        args.retain(|a| a != "--no-daemon");
        args
    };
    let test = workspace(&TSGO, &[]).with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    let out = test.args(warm(false)).run();
    check(&out);
    let out = out.again().args(warm(true)).run();
    out.assert_code(0);
    let out = out.again().args(warm(false)).run();
    check(&out);
    // The break undone behind the daemon's back, then made again through it: the
    // answers the daemon holds (the importers broken) predate the undo, so they are
    // asked for again, and the importers' errors are new again.
    let undone = out
        .file(TSGO.breaking.path)
        .replacen(TSGO.breaking.new, TSGO.breaking.old, 1);
    std::fs::write(out.workspace().join(TSGO.breaking.path), undone)
        .expect("undo behind the daemon's back");
    let out = out.again().args(warm(false)).run();
    check(&out);

    let out = workspace(&TSGO, &[])
        .trust_project()
        .args(edit_args(&TSGO.breaking, false, &[]))
        .run();
    check(&out);
}

/// A typescript@7 project where the only compiler at hand is TypeScript 6 (the user
/// turned TypeScript 7's server off): its files are not checked, a note says why,
/// exit 3; not passed as clean by another compiler.
#[test]
fn tsgo_a_typescript_7_project_with_only_typescript_6_is_not_checked() {
    if !installed_with_7(&TSGO) || !require_server("typescript-language-server") {
        return;
    }
    let out = workspace(
        &Lang {
            user_config: "[server.tsgo]\ndisabled = true\n",
            ..TSGO
        },
        &[],
    )
    .args(edit_args(&TSGO.breaking, false, &[]))
    .run();
    out.assert_code(3);
    let notes = out.notes().join("\n");
    assert!(
        notes.contains("the project is on TypeScript 7.")
            && notes.contains("another major version")
            && notes.contains("not checked"),
        "{out}"
    );
    out.stdout_lacks("Error:");
}

// --- two servers on one file ------------------------------------------------------

/// The Python fixture configured for ruff (`select = ["E", "F"]`).
fn python_with_ruff() -> Test {
    workspace(&PYRIGHT, &[]).file("ruff.toml", "[lint]\nselect = [\"E\", \"F\"]\n")
}

/// One edit with a type error (pyright) and an unused import (ruff): both reported,
/// each with its source, and in the JSON each server's own entry.
#[test]
fn pyright_and_ruff_both_report_with_their_sources() {
    if !installed(&PYRIGHT) || !require_server("ruff") {
        return;
    }
    let out = python_with_ruff()
        .args(edit_args(
            &Edit {
                path: "a.py",
                old: "return \"Hello, \" + name",
                new: "import os\n    return 42",
            },
            false,
            &[],
        ))
        .run();
    out.assert_code(1);
    let block = out.block("file_diagnostics").unwrap_or_default();
    assert!(
        block
            .iter()
            .any(|l| l.starts_with("Error: a.py:3:") && l.contains("[Pyright]")),
        "{out}"
    );
    assert!(
        block
            .iter()
            .any(|l| l.contains("a.py:2:") && l.contains("[Ruff][F401]")),
        "{out}"
    );
}

/// ruff missing from PATH (a PATH of links to node, pyright and the Python interpreter
/// only): pyright's report stands, and a note says ruff was not there to check.
#[test]
fn without_ruff_the_type_checker_reports_and_a_note_says_so() {
    if !installed(&PYRIGHT) || !require_server("ruff") {
        return;
    }
    let test = python_with_ruff();
    let bin = test.private_dir("home").join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir bin");
    for program in ["node", "pyright-langserver"] {
        let found = lspgate::config::which(program).expect("on PATH");
        std::os::unix::fs::symlink(found, bin.join(program)).expect("symlink");
    }
    // pyright with no Python on PATH never ends its analysis of the workspace: the run
    // is then incomplete (exit 3), which is not what this test is about.
    let interpreter = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let interpreter = String::from_utf8_lossy(&interpreter.stdout)
        .trim()
        .to_string();
    for name in ["python", "python3"] {
        std::os::unix::fs::symlink(&interpreter, bin.join(name)).expect("symlink");
    }
    let out = test
        .env("PATH", &bin)
        .args(edit_args(&PYRIGHT.error, false, &[]))
        .run();
    out.assert_code(1);
    assert_error_in(&out, "file_diagnostics", "a.py", PYRIGHT.error_line);
    let notes = out.notes().join("\n");
    assert!(
        notes.contains("ruff: not installed") && notes.contains("pip install ruff"),
        "{out}"
    );
}

/// ESLint beside typescript-language-server where the project has an ESLint config:
/// ESLint's finding is reported with its source; without a config, ESLint does not
/// run.
#[test]
fn eslint_reports_beside_the_compiler_where_the_project_configures_it() {
    if !require_server("vscode-eslint-language-server")
        || !require_server("eslint")
        || !require_server("typescript-language-server")
    {
        return;
    }
    let project = |config: bool| {
        let test = Test::new()
            .watchdog(WATCHDOG)
            .file(
                "package.json",
                "{\"name\": \"app\", \"type\": \"module\"}\n",
            )
            .file("a.js", "export function greet(name) {\n  return name;\n}\n");
        if config {
            test.file(
                "eslint.config.js",
                "export default [{ rules: { \"no-undef\": \"error\" } }];\n",
            )
        } else {
            test
        }
    };
    let edit = Edit {
        path: "a.js",
        old: "return name;",
        new: "return nme;",
    };
    let out = project(true)
        .args(edit_args(&edit, false, &["--format", "json"]))
        .run();
    out.assert_code(1);
    let report = out.json();
    let at = json_diagnostics_at(&report, "a.js", 2);
    assert!(
        at.iter()
            .any(|d| d["source"] == "eslint" && d["code"] == "no-undef" && d["new"] == true),
        "{out}"
    );
    let servers = servers_of(&report);
    assert!(
        servers.contains(&"eslint".to_string())
            && servers.contains(&"typescript-language-server".to_string()),
        "{out}"
    );
    let out = project(false)
        .args(edit_args(&edit, false, &["--format", "json"]))
        .run();
    assert!(
        !servers_of(&out.json()).contains(&"eslint".to_string()),
        "{out}"
    );
}

// --- one line per problem ---------------------------------------------------------

/// rust-analyzer reports a missing argument twice in a file it analyses (its own
/// E0107 and rustc's E0061) and rustc's help as separate Hints: on three broken
/// calls, three lines, each keeping the rest as `related` in the JSON.
/// A break in a test of another file, which only the check of the test target sees
/// (the check is the dependents' word: nothing else opens `d.rs`).
#[test]
fn rust_analyzer_reports_a_test_of_another_file_broken_by_the_edit() {
    if !installed(&RUST_ANALYZER) {
        return;
    }
    let d = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn greets() {\n        \
             assert!(!crate::a::greet(\"d\").is_empty());\n    }\n}\n";
    let out = workspace(&RUST_ANALYZER, &[])
        .file(
            "src/lib.rs",
            "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n",
        )
        .file("src/d.rs", d)
        .args(edit_args(&RUST_ANALYZER.breaking, false, &[]))
        .run();
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "src/d.rs", 5);
}

#[test]
fn rust_analyzer_one_line_per_broken_call() {
    if !installed(&RUST_ANALYZER) {
        return;
    }
    let b = "use crate::a::greet;\n\npub fn hello() -> String {\n    greet(\"b\")\n}\n\n\
             pub fn two() -> String {\n    greet(\"two\")\n}\n\n\
             pub fn three() -> String {\n    greet(\"three\")\n}\n";
    let out = workspace(&RUST_ANALYZER, &[])
        .file("src/b.rs", b)
        .args(edit_args(&RUST_ANALYZER.breaking, false, &[]))
        .run();
    out.assert_code(1);
    let block = out.block("project_diagnostics").unwrap_or_default();
    let b_lines: Vec<&&str> = block.iter().filter(|l| l.contains(" src/b.rs:")).collect();
    assert_eq!(b_lines.len(), 3, "{out}");
    for line in [4, 8, 12] {
        assert_eq!(lines_at(&block, "src/b.rs", line).len(), 1, "{out}");
    }
    out.stdout_lacks("Hint:");

    let out = out
        .again()
        .args(edit_args(&RUST_ANALYZER.breaking, true, &[]))
        .run();
    out.assert_code(0);
    // The break again, with b.rs edited too (a harmless rename).
    let patch = concat!(
        "--- a/src/a.rs\n",
        "+++ b/src/a.rs\n",
        "@@ -1,1 +1,1 @@\n",
        "-pub fn greet(name: &str) -> String {\n",
        "+pub fn greet(name: &str, _greeting: &str) -> String {\n",
        "--- a/src/b.rs\n",
        "+++ b/src/b.rs\n",
        "@@ -7,1 +7,1 @@\n",
        "-pub fn two() -> String {\n",
        "+pub fn two_again() -> String {\n",
    );
    // Through the daemon: a run of lspgate's own process takes rust-analyzer's
    // check alone (`servers::for_one_written_edit`), the daemon its own analysis too,
    // each of whose copies of rustc's errors is folded into rustc's.
    let mut args = vec!["patch", "-", "--format", "json"];
    args.extend(&WAITS[1..]);
    let out = out.again().with_daemon().args(args).stdin(patch).run();
    out.assert_code(1);
    let report = out.json();
    let file = json_file(&report, "src/b.rs").unwrap_or_else(|| panic!("{out}"));
    let diagnostics = file["diagnostics"].as_array().cloned().unwrap_or_default();
    assert_eq!(diagnostics.len(), 3, "{out}");
    for d in &diagnostics {
        let related = d["related"].as_array().cloned().unwrap_or_default();
        assert!(
            related.iter().any(|r| r["severity"] == "Hint"),
            "no folded hint: {d}"
        );
        assert!(
            related
                .iter()
                .any(|r| r["source"] != d["source"] && r["severity"] == "Error"),
            "no folded second source: {d}"
        );
    }
    let stopped = out.again().with_daemon().args(["daemon", "stop"]).run();
    stopped.assert_code(0);
}

/// Every server of issue 13 is listed by `lspgate servers` with a version.
#[test]
fn servers_lists_every_server_with_its_version() {
    let commands = [
        ("pyright", "pyright-langserver"),
        ("basedpyright", "basedpyright-langserver"),
        ("ty", "ty"),
        ("pyrefly", "pyrefly"),
        ("ruff", "ruff"),
        ("typescript-language-server", "typescript-language-server"),
        ("tsgo", "tsgo"),
        ("eslint", "vscode-eslint-language-server"),
        ("gopls", "gopls"),
        ("clangd", "clangd"),
        ("rust-analyzer", "rust-analyzer"),
    ];
    if !commands.iter().all(|(_, c)| require_server(c)) {
        return;
    }
    let started = Instant::now();
    let out = Test::new().args(["servers", "--format", "json"]).run();
    out.assert_code(0);
    assert!(started.elapsed() < Duration::from_secs(10), "{out}");
    let report = out.json();
    for (name, _) in commands {
        let server = report["servers"]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["name"] == name))
            .unwrap_or_else(|| panic!("{name} not listed\n{out}"));
        assert!(
            server["version"].as_str().is_some_and(|v| !v.is_empty()),
            "{name} has no version: {server}"
        );
    }
}

/// The stories above run the checker they name: the user config turns the ones
/// before it off, and `lspgate servers` (the check's own choice) agrees.
#[test]
fn python_stories_run_the_checker_they_name() {
    for (lang, name) in [
        (&BASEDPYRIGHT, "basedpyright"),
        (&TY, "ty"),
        (&PYREFLY, "pyrefly"),
    ] {
        if !installed(lang) {
            continue;
        }
        let out = workspace(lang, &[]).args(["servers", "a.py"]).run();
        out.assert_code(0)
            .stdout_contains(&format!("a.py: {name}\n"));
    }
}

/// TypeScript 7 asks about every file of the project, not the scan's likely
/// dependents: a file that reaches `greet` through two renaming re-exports (naming
/// neither `a` nor `greet`, two levels away) is reported when the edit breaks it.
#[test]
fn tsgo_reports_a_dependent_two_re_exports_away() {
    if !installed_with_7(&TSGO) {
        return;
    }
    let out = workspace(&TSGO, &[])
        .file("r1.ts", "export { greet as hello } from \"./a\";\n")
        .file("r2.ts", "export { hello as hi } from \"./r1\";\n")
        .file(
            "g.ts",
            "import { hi } from \"./r2\";\n\nexport const x: string = hi(\"g\");\n",
        )
        .args(edit_args(&TSGO.breaking, false, &[]))
        .run();
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "g.ts", 3);
    assert_error_in(&out, "project_diagnostics", "b.ts", 3);
}
