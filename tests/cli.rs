//! The command line as a person meets it: `--help` of every command, the error for an
//! unknown option, and `lspgate servers` (the list, a file's explanation, JSON, config
//! origins, version probes that must not hang, bad input).
//!
//! The help checks are snapshot-like: `COMMANDS` is the CLI's surface written out, and
//! `the_expected_surface_is_the_real_one` fails when clap's definition differs from it,
//! so adding, renaming or removing an option shows up here in review.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::Value;

use crate::support::Test;

/// The built-in servers, in preference order.
const BUILTINS: [&str; 11] = [
    "pyright",
    "basedpyright",
    "typescript-language-server",
    "gopls",
    "clangd",
    "rust-analyzer",
    "ty",
    "pyrefly",
    "tsgo",
    "ruff",
    "eslint",
];

/// The built-in linters, which run beside a file's checker.
const LINTERS: [&str; 2] = ["ruff", "eslint"];

/// The built-ins not run in an untrusted workspace (every test's, unless it trusts
/// it): pyrefly runs the Python interpreter the workspace names.
const NOT_UNTRUSTED: [&str; 1] = ["pyrefly"];

/// Options every command takes (global ones, and help).
const GLOBAL: [&str; 4] = ["-C", "--root", "--trust-project", "--help"];

/// Options of the reporting commands (write, edit, patch, check).
const REPORT: [&str; 13] = [
    "--format",
    "--startup-timeout",
    "--timeout",
    "--cross-file-timeout",
    "--all",
    "--fail-on",
    "--severity",
    "--dry-run",
    "--reject",
    "--no-daemon",
    "--max-entries",
    "--quiet",
    "--color",
];

/// Each subcommand with its own options and positional arguments (as help prints them).
const COMMANDS: [(&str, &[&str], &[&str]); 12] = [
    ("write", &["--content"], &["<PATH>"]),
    ("edit", &["--old", "--new", "--replace-all"], &["<PATH>"]),
    ("patch", &["-p", "--reverse"], &["[PATCH]"]),
    (
        "check",
        &["--staged", "--changed", "--patch"],
        &["[PATHS]..."],
    ),
    ("baseline", &[], &[]),
    ("servers", &["--format"], &["[FILE]"]),
    ("history", &["--last", "--limit", "--format"], &["[RUN]"]),
    ("daemon", &[], &["<COMMAND>"]),
    ("diagnostics", &["--format"], &["[PATH]"]),
    ("logs", &["--limit", "--level", "--format"], &[]),
    ("messages", &["--limit", "--format"], &[]),
    // The reporting options but the three that shape a printed report.
    (
        "mcp",
        &[
            "--startup-timeout",
            "--timeout",
            "--cross-file-timeout",
            "--all",
            "--fail-on",
            "--severity",
            "--dry-run",
            "--reject",
            "--no-daemon",
            "--max-entries",
        ],
        &[],
    ),
];

fn reporting(name: &str) -> bool {
    !matches!(
        name,
        "servers" | "history" | "daemon" | "diagnostics" | "logs" | "messages" | "mcp"
    )
}

/// `-s` or `--long` for each argument of `cmd` that is an option, with globals. Hidden
/// ones (`mcp`'s `--format`, accepted and ignored) are no part of the surface.
fn options_of(cmd: &clap::Command) -> Vec<String> {
    let mut options: Vec<String> = cmd
        .get_arguments()
        .filter(|arg| !arg.is_positional() && !arg.is_hide_set())
        .map(|arg| match (arg.get_long(), arg.get_short()) {
            (Some(long), _) => format!("--{long}"),
            (None, Some(short)) => format!("-{short}"),
            (None, None) => unreachable!("an option has a name"),
        })
        .collect();
    options.sort();
    options
}

#[test]
fn the_expected_surface_is_the_real_one() {
    let mut root = lspgate::cli::command();
    root.build();
    let subcommands: Vec<&str> = root
        .get_subcommands()
        // Hidden ones (an internal daemon entry) are no part of the surface.
        .filter(|sub| !sub.is_hide_set())
        .map(clap::Command::get_name)
        .filter(|name| *name != "help")
        .collect();
    let expected: Vec<&str> = COMMANDS.iter().map(|(name, _, _)| *name).collect();
    assert_eq!(subcommands, expected, "update COMMANDS in tests/cli.rs");
    for (name, own, _) in COMMANDS {
        let sub = root
            .find_subcommand(name)
            .unwrap_or_else(|| panic!("no subcommand {name}"));
        let mut expected: Vec<String> = GLOBAL
            .iter()
            .chain(if reporting(name) { &REPORT[..] } else { &[] })
            .chain(own)
            .map(|o| o.to_string())
            .collect();
        expected.sort();
        expected.dedup();
        assert_eq!(options_of(sub), expected, "options of {name}");
    }
}

#[test]
fn top_level_help() {
    let out = Test::new().args(["--help"]).run();
    out.assert_code(0)
        .stdout_contains("Usage: lspgate [OPTIONS] <COMMAND>")
        .stdout_contains("-V, --version");
    for (name, _, _) in COMMANDS {
        assert!(
            out.stdout
                .lines()
                .any(|line| line.trim_start().starts_with(name)),
            "help lists no {name}\n{out}"
        );
    }
    for option in GLOBAL {
        out.stdout_contains(option);
    }
    assert!(out.stderr.is_empty(), "{out}");
}

#[test]
fn every_subcommand_help_lists_its_options() {
    for (name, own, positionals) in COMMANDS {
        let out = Test::new().args([name, "--help"]).run();
        out.assert_code(0)
            .stdout_contains(&format!("Usage: lspgate {name} [OPTIONS]"));
        let report: &[&str] = if reporting(name) { &REPORT } else { &[] };
        for option in GLOBAL.iter().chain(report).chain(own) {
            // As a help line starts: `-C <DIR>`, `    --all`, `-q, --quiet`.
            assert!(
                out.stdout.lines().any(|line| {
                    let line = line.trim_start();
                    line.starts_with(&format!("{option} "))
                        || line == *option
                        || line.contains(&format!(", {option} "))
                        || line.ends_with(&format!(", {option}"))
                }),
                "{name} --help has no line for {option}\n{out}"
            );
        }
        for positional in positionals {
            out.stdout_contains(positional);
        }
    }
    // `help SUBCOMMAND` says the same.
    Test::new()
        .args(["help", "servers"])
        .run()
        .assert_code(0)
        .stdout_contains("Usage: lspgate servers [OPTIONS] [FILE]");
}

#[test]
fn unknown_option_is_one_clear_line_and_exit_2() {
    for args in [
        &["--bogus"][..],
        &["servers", "--bogus"],
        &["write", "a", "--bogus"],
    ] {
        let out = Test::new().args(args).run();
        out.assert_code(2);
        let first = out.stderr.lines().next().unwrap_or_default();
        assert_eq!(first, "error: unexpected argument '--bogus' found", "{out}");
        assert!(out.stdout.is_empty(), "{out}");
    }
    let out = Test::new().args(["servers", "--format", "yaml"]).run();
    out.assert_code(2);
    let first = out.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: invalid value 'yaml' for '--format <FORMAT>'"),
        "{out}"
    );
}

#[test]
fn version() {
    Test::new()
        .args(["--version"])
        .run()
        .assert_code(0)
        .stdout_contains(&format!("lspgate {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn servers_lists_every_builtin_in_preference_order() {
    let out = Test::new().args(["servers"]).run();
    out.assert_code(0);
    let headers: Vec<&str> = out
        .stdout
        .lines()
        .filter(|line| line.contains(" (built-in"))
        .collect();
    let expected: Vec<String> = BUILTINS
        .iter()
        .map(|n| {
            let role = if LINTERS.contains(n) { ", linter" } else { "" };
            let off = if NOT_UNTRUSTED.contains(n) {
                ", disabled"
            } else {
                ""
            };
            format!("{n} (built-in{role}{off})")
        })
        .collect();
    assert_eq!(headers, expected, "{out}");
    out.stdout_contains("  files:        .py .pyi\n")
        .stdout_contains("  root markers: go.work go.mod\n")
        .stdout_contains("  command:      clangd --background-index=false\n")
        // The empty user config of the harness is read, the project has none.
        .stdout_contains("Config files: ");
    // Each server says whether it is installed; a missing one, how to install it.
    assert_eq!(
        out.stdout
            .lines()
            .filter(|l| l.starts_with("  status:       "))
            .count(),
        BUILTINS.len(),
        "{out}"
    );
    for line in out.stdout.lines().filter(|l| l.contains("missing (")) {
        assert!(line.contains("; install: "), "{line}\n{out}");
    }
}

#[test]
fn servers_explains_a_python_file() {
    let out = Test::new().args(["servers", "x.py"]).run();
    out.assert_code(0);
    let first = out.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("x.py: pyright") || first.starts_with("x.py: basedpyright"),
        "{out}"
    );
    out.stdout_contains(
        "  why:        .py files are covered by pyright, basedpyright, ty (in preference order)",
    )
    .stdout_contains("  disabled:   pyrefly (not run: it would run the Python interpreter")
    .stdout_contains(&format!(
        "  root:       {} (no root marker above the file: the workspace)",
        out.workspace().display()
    ));
}

#[test]
fn servers_says_when_no_server_covers_a_file() {
    let out = Test::new().args(["servers", "README.md"]).run();
    out.assert_code(0)
        .stdout_contains("README.md: no server covers .md files.")
        .stdout_contains("reported as skipped");
    Test::new()
        .args(["servers", "Makefile"])
        .run()
        .assert_code(0)
        .stdout_contains("Makefile: no server covers files without an extension.");
}

#[test]
fn servers_root_is_the_nearest_marker() {
    let out = Test::new()
        .file("svc/api/go.mod", "module api\n")
        .args(["servers", "svc/api/cmd/main.go"])
        .run();
    out.assert_code(0).stdout_contains(&format!(
        "  root:       {} (it holds go.mod)",
        out.workspace().join("svc/api").display()
    ));
}

#[test]
fn servers_json_has_a_stable_shape() {
    let out = Test::new().args(["servers", "--format", "json"]).run();
    out.assert_code(0);
    let json = out.json();
    assert_eq!(json["schema"], 1, "{out}");
    assert_eq!(json["file"], Value::Null);
    assert_eq!(json["trusted"], false);
    assert_eq!(
        json["workspace"].as_str(),
        out.workspace().to_str(),
        "{out}"
    );
    let servers = json["servers"].as_array().expect("servers is an array");
    let names: Vec<&str> = servers.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, BUILTINS);
    for server in servers {
        let mut keys: Vec<&str> = server
            .as_object()
            .expect("a server is an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "args",
                "command",
                "disabled",
                "extensions",
                "install_hint",
                "installed",
                "name",
                "origin",
                "path",
                "role",
                "root_markers",
                "version",
                "why"
            ]
        );
        assert_eq!(server["origin"], "built-in");
        assert_eq!(server["installed"], server["path"].is_string());
        if server["version"].is_string() {
            assert_eq!(server["installed"], true, "{server}");
        }
    }

    let out = Test::new()
        .args(["servers", "src/x.py", "--format", "json"])
        .run();
    out.assert_code(0);
    let json = out.json();
    let file = &json["file"];
    assert_eq!(file["path"], "src/x.py", "{out}");
    assert_eq!(file["extension"], "py");
    assert_eq!(
        file["candidates"],
        serde_json::json!(["pyright", "basedpyright", "ty"])
    );
    let chosen = file["chosen"]["server"].as_str().unwrap_or_default();
    assert!(["pyright", "basedpyright"].contains(&chosen), "{out}");
    // With a file, only the servers that cover it: four type checkers (pyrefly
    // disabled in an untrusted workspace) and ruff.
    assert_eq!(json["servers"].as_array().map(Vec::len), Some(5), "{out}");

    let out = Test::new()
        .args(["servers", "README.md", "--format", "json"])
        .run();
    out.assert_code(0);
    assert_eq!(out.json()["file"]["chosen"], Value::Null, "{out}");
}

/// A workspace with an executable script at `rel`.
fn with_script(test: Test, rel: &str, body: &str) -> Test {
    let test = test.file(rel, format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(test.path(rel), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    test
}

#[test]
fn servers_shows_configured_servers_their_origin_and_version() {
    let test = with_script(
        Test::new(),
        "tools/mylsp",
        "[ \"$1\" = --version ] && echo 'mylsp 9.9.9' && exit 0; exit 1",
    )
    .file(
        ".lspgate.toml",
        "[server.mylsp]\ncommand = \"./tools/mylsp\"\nextensions = [\"my\"]\n\
         root-markers = [\"my.toml\"]\n\n[server.rust-analyzer]\ndisabled = true\n",
    )
    .file("user.toml", "[server.gopls]\nroot-markers = [\"go.mod\"]\n");
    let user = test.path("user.toml");
    let out = test
        .env("LSPGATE_CONFIG", &user)
        .trust_project()
        .args(["servers"])
        .run();
    out.assert_code(0)
        .stdout_contains("mylsp (project config)\n  files:        .my\n")
        .stdout_contains("  version:      mylsp 9.9.9\n")
        .stdout_contains("  root markers: my.toml\n")
        .stdout_contains("rust-analyzer (built-in, disabled)\n")
        // A user setting that changes no command keeps the entry built-in.
        .stdout_contains("gopls (built-in)\n  files:        .go\n")
        .stdout_contains("Config files: user.toml, .lspgate.toml\n");
    // A project server comes first: it was added to be used.
    let at = |header: &str| {
        out.stdout
            .find(header)
            .unwrap_or_else(|| panic!("no {header:?}\n{out}"))
    };
    assert!(at("mylsp (") < at("pyright ("), "{out}");

    let out = out.again().args(["servers", "lib/a.my"]).run();
    out.assert_code(0)
        .stdout_contains("lib/a.my: mylsp\n")
        .stdout_contains("  why:        .my files are covered by mylsp only, and it is installed\n")
        .stdout_contains("  from:       project config\n");

    let out = out.again().args(["servers", "src/main.rs"]).run();
    out.assert_code(0)
        .stdout_contains("src/main.rs: no server covers .rs files.\n")
        .stdout_contains("  disabled:   rust-analyzer (turned off by a config file)\n");
}

#[test]
fn servers_in_an_untrusted_project_says_what_it_ignored() {
    let out = Test::new()
        .file(".lspgate.toml", "[server.gopls]\ncommand = \"./evil\"\n")
        .args(["servers"])
        .run();
    out.assert_code(0)
        .stdout_contains("gopls (built-in)\n")
        .stdout_contains("  command:      gopls\n")
        .stdout_contains("note: ")
        .stdout_contains("ignored server.gopls.command");
}

#[test]
fn servers_names_the_install_command_of_a_missing_server() {
    let out = Test::new()
        .file(
            ".lspgate.toml",
            "[server.ghost]\ncommand = \"lspgate-test-no-such-server\"\nextensions = [\"gh\"]\n\
             install-hint = \"cargo install ghost-ls\"\n",
        )
        .trust_project()
        .args(["servers", "a.gh"])
        .run();
    out.assert_code(0)
        .stdout_contains("a.gh: ghost, but it is not installed\n")
        .stdout_contains("  install:    cargo install ghost-ls\n");
}

#[test]
fn servers_does_not_hang_on_a_version_probe() {
    // `exec`, so the probe's kill reaches sleep itself and nothing outlives the test.
    let out = with_script(Test::new(), "tools/stuck", "exec sleep 60")
        .file(
            ".lspgate.toml",
            "[server.stuck]\ncommand = \"./tools/stuck\"\nextensions = [\"st\"]\n",
        )
        .trust_project()
        .args(["servers"])
        .run();
    // The probes' bound is 30 s; the stuck one would run 60.
    out.assert_code(0)
        .assert_elapsed_below(Duration::from_secs(45))
        .stdout_contains(&format!(
            "stuck (project config)\n  files:        .st\n  command:      {}\n  \
             status:       installed at {0}\n  root markers: none",
            out.workspace().join("tools/stuck").display()
        ));
}

#[test]
fn servers_refuses_a_file_outside_the_workspace_or_a_directory() {
    let out = Test::new().args(["servers", "../elsewhere.py"]).run();
    out.assert_code(2)
        .stderr_contains("lspgate: ../elsewhere.py: outside the workspace");
    assert!(out.stdout.is_empty(), "{out}");
    Test::new()
        .file("src/a.py", "")
        .args(["servers", "src"])
        .run()
        .assert_code(2)
        .stderr_contains("lspgate: src: is a directory, not a file");
}

/// `patch -R` undoes a patch, as `git apply -R`: the same diff applied, then reversed,
/// gives the file back; a reversed patch that does not apply is bad input (exit 2).
#[test]
fn patch_reverse_undoes_a_patch() {
    let diff = concat!(
        "--- a/notes.txt\n",
        "+++ b/notes.txt\n",
        "@@ -1,2 +1,2 @@\n",
        " one\n",
        "-two\n",
        "+deux\n",
    );
    let out = Test::new()
        .file("notes.txt", "one\ntwo\n")
        .args(["patch", "-"])
        .stdin(diff)
        .run();
    out.assert_code(0);
    assert_eq!(out.file("notes.txt"), "one\ndeux\n", "{out}");
    let out = out.again().args(["patch", "-R", "-"]).stdin(diff).run();
    out.assert_code(0);
    assert_eq!(out.file("notes.txt"), "one\ntwo\n", "{out}");
    // Reversed again on the original text: its `+deux` is not there to remove.
    let out = out
        .again()
        .args(["patch", "--reverse", "-"])
        .stdin(diff)
        .run();
    out.assert_code(2);
    assert_eq!(out.file("notes.txt"), "one\ntwo\n", "{out}");
}

/// A file to check that is not there is bad input, one line naming it, before any
/// daemon or server is asked (there is none: the run would have started one).
#[test]
fn checking_a_missing_file_is_bad_input() {
    let out = Test::new()
        .file("a.py", "x = 1\n")
        .args(["check", "a.py", "gone.py"])
        .run();
    out.assert_code(2);
    assert_eq!(out.stderr.trim(), "lspgate: gone.py: no such file", "{out}");
    assert!(out.stdout.is_empty(), "{out}");
}
