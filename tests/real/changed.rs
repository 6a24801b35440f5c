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

/// Another process gives `greet` a second parameter; the next call reports the two
/// callers it broke, and not `c`'s old error.
#[track_caller]
fn broken_behind(out: Output, lang: &Lang) -> Output {
    write_behind(&out, &lang.breaking, false);
    let broken = changed(out.again());
    broken.assert_code(1);
    assert_error_in(&broken, "project_diagnostics", lang.b_call.0, lang.b_call.1);
    assert_error_in(&broken, "project_diagnostics", lang.c, lang.c_call);
    assert_nothing_at(&broken, lang.c, lang.c_error_line);
    broken
}

/// Stage every file: with no baseline yet, `check --changed` measures from git's
/// index, and a file git does not know is a new one.
fn changed(test: Test) -> Output {
    test.args(["check", "--changed"]).args(&WAITS[1..]).run()
}

/// A warm daemon, as a harness's session has one: the files `lang`'s edits touch
/// checked once, then a call with nothing changed, which has the daemon keep its view
/// of the tree for the next call's before view.
fn warmed(lang: &Lang, test: Test) -> Output {
    let files = [lang.error.path, lang.b_call.0, lang.c];
    let warm = test.args(["check"]).args(files).args(&WAITS[1..]).run();
    changed(warm.again())
}

/// Nothing, a breaking change, nothing again, the break mended, an error in `a`:
/// each call says what happened since the one before.
fn sequence(lang: &Lang, daemon: bool) {
    if !installed(lang) {
        return;
    }
    // As a crate has it: what cargo writes (rust-analyzer runs it) is not a change
    // of the project's.
    let mut test = workspace(lang, &[])
        .file(".gitignore", "target/\nCargo.lock\nnode_modules/\n")
        .staged();
    if daemon {
        test = test.with_daemon();
    }
    let _guard = daemon.then(|| crate::support::process::DaemonGuard::new(&test));
    let first = if daemon {
        warmed(lang, test)
    } else {
        changed(test)
    };
    first.assert_code(0);
    assert!(first.block("project_diagnostics").is_none(), "{first}");

    let broken = broken_behind(first, lang);

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

/// A module deleted behind a warm daemon's back, then put back: each `check --changed`
/// call says what it could not compare (pyright reads the disk), and the call after,
/// with nothing changed since, exits 0. Before, the module put back stayed the change
/// of every later call, each exit 3.
#[test]
fn pyright_a_module_put_back_is_not_checked_again() {
    if !installed(&PYRIGHT) {
        return;
    }
    let test = workspace(&PYRIGHT, &[]).staged().with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    let first = changed(test);
    first.assert_code(0);
    let a = first.workspace().join("a.py");
    let text = fs::read_to_string(&a).expect("read a.py");
    // With a new error of its own in c.py, the call finds something (exit 1), and the
    // baseline moves past the deletion.
    fs::remove_file(&a).expect("delete a.py behind lspgate's back");
    let c = first.workspace().join("c.py");
    let c_text = fs::read_to_string(&c).expect("read c.py");
    fs::write(&c, format!("{c_text}late: int = \"not an int\"\n")).expect("write c.py");
    let deleted = changed(first.again());
    deleted.assert_code(1);
    fs::write(&a, &text).expect("put a.py back");
    fs::write(&c, &c_text).expect("put c.py back");
    let back = changed(deleted.again());
    back.assert_code_in(&[0, 3]);
    let quiet = changed(back.again());
    quiet.assert_code(0);
    assert!(quiet.block("project_diagnostics").is_none(), "{quiet}");
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
fn typescript_language_server_reports_each_change_once_through_the_daemon() {
    sequence(&TSLS, true);
}

#[test]
fn tsgo_reports_each_change_once_through_the_daemon() {
    use super::servers::{TSGO, installed_with_7};
    if installed_with_7(&TSGO) {
        sequence(&TSGO, true);
    }
}

/// The other Python checkers, each chosen by a user config, through the daemon.
#[test]
fn the_other_python_checkers_report_each_change_once_through_the_daemon() {
    use super::servers::{BASEDPYRIGHT, PYREFLY, TY};
    for lang in [&BASEDPYRIGHT, &TY, &PYREFLY] {
        sequence(lang, true);
    }
}

#[test]
fn gopls_reports_each_change_once() {
    sequence(&GOPLS, false);
}

#[test]
fn gopls_reports_each_change_once_through_the_daemon() {
    sequence(&GOPLS, true);
}

/// rust-analyzer's word comes from cargo check of the disk, which holds the change
/// before its word on the old text can be asked: without a daemon's view of the tree
/// before it, a change on disk is never passed as clean, and the note says why.
/// (Through a warm daemon the break once passed as "already there": 0 of 3 broken
/// calls reported on itertools, exit 0.)
#[test]
fn rust_analyzer_never_passes_a_change_on_disk() {
    if !installed(&RUST_ANALYZER) {
        return;
    }
    let test = workspace(&RUST_ANALYZER, &[])
        .file(".gitignore", "target/\nCargo.lock\n")
        .staged();
    let first = changed(test);
    first.assert_code(0);
    write_behind(&first, &RUST_ANALYZER.breaking, false);
    let broken = changed(first.again());
    broken.assert_code_in(&[1, 3]);
    assert!(
        broken.notes().iter().any(|n| n.contains("checks the disk")),
        "{broken}"
    );
    let quiet = changed(broken.again());
    quiet.assert_code(0);
    write_behind(&quiet, &RUST_ANALYZER.breaking, true);
    let mended = changed(quiet.again());
    mended.assert_code(3);
}

/// clangd reads a header from disk, not from what it is shown: the dependents of a
/// header changed on disk cannot be shown its old text for a before view, and a
/// header change is never passed as clean.
#[test]
fn clangd_never_passes_a_header_changed_on_disk() {
    if !installed(&CLANGD) {
        return;
    }
    let test = workspace(&CLANGD, &[]).staged();
    let first = changed(test);
    first.assert_code(0);
    write_behind(&first, &CLANGD.breaking, false);
    let broken = changed(first.again());
    broken.assert_code_in(&[1, 3]);
}

/// clangd 14 builds a header's includes from the disk. A header changed behind a
/// warm daemon's back breaks a header that includes it: that header's before view
/// is the word the daemon held (it opens the project's headers as well as its units
/// for a clangd that reads the disk), not a build from the changed disk, so its break
/// is new. Without the headers held, it was taken for old.
#[test]
fn clangd_14_a_header_changed_behind_breaks_the_header_including_it() {
    if !installed(&CLANGD_14) {
        return;
    }
    let test = workspace(&CLANGD_14, &[])
        .file("buf.h", "typedef struct Buf {\n    int n;\n} Buf;\n")
        .file(
            "inc.h",
            "#include \"buf.h\"\nstruct Holder {\n    Buf b;\n};\n",
        )
        .file(
            "x.c",
            "#include \"inc.h\"\n\nint size(struct Holder *h) { return h->b.n; }\n",
        );
    let test = test
        .compile_commands(&["a.c", "b.c", "c.c", "x.c"])
        .staged()
        .with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    let warm = test.args(["check", "x.c"]).args(&WAITS[1..]).run();
    warm.assert_code(0);
    let quiet = changed(warm.again());
    quiet.assert_code(0);
    let rename = Edit {
        path: "buf.h",
        old: "typedef struct Buf {\n    int n;\n} Buf;",
        new: "typedef struct ZBuf {\n    int n;\n} ZBuf;",
    };
    write_behind(&quiet, &rename, false);
    let broken = changed(quiet.again());
    broken.assert_code(1);
    assert_error_in(&broken, "project_diagnostics", "inc.h", 3);
}

/// The hooks of `integrations/` replayed as the harness runs them: its recorded JSON
/// on stdin, through its shell, in the project directory, with lspgate on `PATH`; then
/// what the harness hands the model is read back as the harness reads it.
mod hooks {
    use std::ffi::OsStr;
    use std::io::Write;
    use std::path::PathBuf;
    use std::process::Stdio;

    use super::*;

    fn repo_file(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
    }

    /// A harness's recorded hook input (`tests/fixtures/hooks/NAME`).
    fn recorded(name: &str) -> Vec<u8> {
        fs::read(repo_file(&format!("tests/fixtures/hooks/{name}")))
            .expect("the recorded hook input")
    }

    /// A hook's configuration file in `integrations/`.
    fn config(rel: &str) -> Value {
        serde_json::from_slice(&fs::read(repo_file(rel)).expect("the hook's configuration"))
            .expect("the configuration's JSON")
    }

    /// The command of the first hook of `event` in a Claude Code-shaped `hooks` table
    /// (Claude Code, Codex CLI and Gemini CLI share it).
    fn hook_command(config: &Value, event: &str) -> String {
        config["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .expect("the hook's command")
            .to_string()
    }

    /// The hook's matcher: a regex over the harness's tool names.
    fn hook_matcher(config: &Value, event: &str) -> String {
        config["hooks"][event][0]["matcher"]
            .as_str()
            .expect("the hook's matcher")
            .to_string()
    }

    struct Ran {
        status: i32,
        stdout: String,
        stderr: String,
    }

    /// Run `argv` in the workspace as the harness would: `input` on stdin, lspgate on
    /// `PATH`, `env` added.
    fn run_hook<S: AsRef<OsStr>>(
        test: &Test,
        argv: &[S],
        input: &[u8],
        env: &[(&str, &Path)],
    ) -> Ran {
        let bin = Path::new(env!("CARGO_BIN_EXE_lspgate"))
            .parent()
            .expect("the binary's directory")
            .to_path_buf();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![bin];
        dirs.extend(std::env::split_paths(&path));
        let mut cmd = test.command_with(&argv[0]);
        cmd.args(&argv[1..])
            .env("PATH", std::env::join_paths(dirs).expect("a PATH"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            cmd.env(key, value);
        }
        let mut child = cmd.spawn().expect("start the hook");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write the hook input");
        let out = child.wait_with_output().expect("the hook's end");
        Ran {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Each hook: nothing for the model with nothing changed; after the harness's write
    /// breaks two callers, both in what the model is handed (`hand` gives it, or None
    /// when the hook stays silent); nothing again on the next call. `setup` installs
    /// the hook's files in the project, before git's index is taken.
    fn replay(setup: impl FnOnce(Test) -> Test, hand: impl Fn(&Test) -> Option<String>) {
        if !installed(&PYRIGHT) {
            return;
        }
        let test = setup(workspace(&PYRIGHT, &[])).staged();
        assert_eq!(hand(&test), None);
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
        let report = hand(&test).expect("a report for the model");
        assert!(report.contains("b.py:3:"), "{report}");
        assert!(report.contains("c.py:5:"), "{report}");
        assert!(!report.contains("c.py:3:"), "an old error as new\n{report}");
        assert_eq!(hand(&test), None);
    }

    /// Claude Code's contract: silent and 0 when clean, the report on stderr and 2.
    fn exit_two(test: &Test, command: &str) -> Option<String> {
        let ran = run_hook(
            test,
            &["sh", "-c", command],
            &recorded("claude-code-post-tool-use.json"),
            &[],
        );
        match ran.status {
            0 => {
                assert_eq!(ran.stderr, "");
                None
            }
            2 => Some(ran.stderr),
            status => panic!("exit {status}\n{}", ran.stderr),
        }
    }

    #[test]
    fn the_post_edit_hook_script() {
        let script = repo_file("integrations/post-edit-hook.sh");
        replay(
            |test| test,
            |test| exit_two(test, &format!("sh '{}'", script.display())),
        );
    }

    #[test]
    fn the_claude_code_settings_hook() {
        let command = hook_command(
            &config("integrations/claude-code/settings.json"),
            "PostToolUse",
        );
        replay(|test| test, |test| exit_two(test, &command));
    }

    /// Codex CLI's and Gemini CLI's contract for a hook that adds context: always exit
    /// 0 (2 would replace the tool's result or fail the tool, though the edit is made),
    /// nothing on stdout or stderr when clean, else one JSON object whose
    /// `hookSpecificOutput.additionalContext` the harness adds for the model.
    fn additional_context(ran: Ran, event: &str) -> Option<String> {
        assert_eq!(ran.status, 0, "{}{}", ran.stdout, ran.stderr);
        // Gemini CLI shows a clean hook's stderr to the user as a message.
        assert_eq!(ran.stderr, "");
        if ran.stdout.is_empty() {
            return None;
        }
        let answer: Value = serde_json::from_str(&ran.stdout).expect("the hook's JSON answer");
        assert_eq!(
            answer["hookSpecificOutput"]["hookEventName"], event,
            "{answer}"
        );
        assert_eq!(
            answer.as_object().map(|o| o.len()),
            Some(1),
            "only context: {answer}"
        );
        Some(
            answer["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .expect("additionalContext")
                .to_string(),
        )
    }

    /// The shared script installed where a harness's configuration expects it.
    fn with_context_script(test: Test, rel: &str) -> Test {
        let script = fs::read(repo_file("integrations/post-edit-context.sh")).expect("the script");
        test.file(rel, script)
    }

    /// Any report reaches the model as one valid JSON string (tabs, quotes, backslashes,
    /// control characters, `%`), and a check that did not give 0 or 1 is never clean:
    /// a scripted `lspgate` stands in, for outputs the real one prints rarely.
    #[test]
    fn the_context_script_hands_over_any_report() {
        let test = Test::new();
        let script = repo_file("integrations/post-edit-context.sh");
        // (what the scripted lspgate's printf prints, its exit status, the context)
        let cases = [
            (
                r#"a\tb\\c"d\001e\r%%s\n\nend"#,
                1,
                "a\tb\\c\"d\u{1}e\r%s\n\nend",
            ),
            (
                "partial",
                3,
                "partial\nlspgate: exit 3: not everything was checked (see the note lines); \
                 this is not a clean result",
            ),
            ("bad", 2, "bad\nlspgate: exit 2: the change was not checked"),
        ];
        for (printed, status, context) in cases {
            // A directory each: an executable rewritten may be busy in a forked child.
            let bin = test.private_dir("fake").join(format!("exit-{status}"));
            fs::create_dir(&bin).expect("a directory for the scripted lspgate");
            let path = std::env::join_paths(std::iter::once(bin.clone()).chain(
                std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
            ))
            .expect("a PATH");
            let fake = bin.join("lspgate");
            fs::write(
                &fake,
                format!("#!/bin/sh\nprintf '{printed}\\n'\nexit {status}\n"),
            )
            .expect("the scripted lspgate");
            fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .expect("chmod the scripted lspgate");
            let out = test
                .command_with("sh")
                .arg(&script)
                .arg("PostToolUse")
                .env("PATH", &path)
                .stdin(Stdio::null())
                .output()
                .expect("run the script");
            let ran = Ran {
                status: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            };
            assert_eq!(
                additional_context(ran, "PostToolUse").as_deref(),
                Some(context),
                "{printed:?}, exit {status}"
            );
        }
    }

    /// Codex CLI: `.codex/hooks.json`, run after `apply_patch` (its edit tool) and
    /// `Bash`, with the project's checkout of the script.
    #[test]
    fn the_codex_hooks_json() {
        let config = config("integrations/codex/hooks.json");
        let command = hook_command(&config, "PostToolUse");
        if !require_server("node") {
            return;
        }
        let matcher = hook_matcher(&config, "PostToolUse");
        assert!(
            ["apply_patch", "Bash"]
                .iter()
                .all(|t| matches_tool(&matcher, t)),
            "{matcher}"
        );
        replay(
            |test| with_context_script(test, ".codex/hooks/post-edit-context.sh"),
            |test| {
                // Codex runs `$SHELL -lc COMMAND` in the session's directory; `-c` here,
                // as a login profile may reset the PATH that leads to this build.
                let ran = run_hook(
                    test,
                    &["sh", "-c", &command],
                    &recorded("codex-post-tool-use.json"),
                    &[],
                );
                additional_context(ran, "PostToolUse")
            },
        );
    }

    /// Gemini CLI: `.gemini/settings.json`, run after `write_file`, `replace` and
    /// `run_shell_command`, as `bash -c` with `$GEMINI_PROJECT_DIR` replaced by the
    /// quoted project directory (and also set), as Gemini CLI does.
    #[test]
    fn the_gemini_cli_settings_hook() {
        let config = config("integrations/gemini-cli/settings.json");
        let command = hook_command(&config, "AfterTool");
        if !require_server("node") {
            return;
        }
        let matcher = hook_matcher(&config, "AfterTool");
        assert!(
            ["write_file", "replace", "run_shell_command"]
                .iter()
                .all(|t| matches_tool(&matcher, t)),
            "{matcher}"
        );
        assert!(!matches_tool(&matcher, "read_file"), "{matcher}");
        replay(
            |test| with_context_script(test, ".gemini/hooks/post-edit-context.sh"),
            |test| {
                let dir = test.workspace();
                let expanded =
                    command.replace("$GEMINI_PROJECT_DIR", &format!("'{}'", dir.display()));
                let ran = run_hook(
                    test,
                    &["bash", "-c", &expanded],
                    &recorded("gemini-cli-after-tool.json"),
                    &[("GEMINI_PROJECT_DIR", dir), ("GEMINI_CWD", dir)],
                );
                additional_context(ran, "AfterTool")
            },
        );
    }

    /// opencode: the plugin loaded by node (opencode itself runs it under Bun) and its
    /// `tool.execute.after` called with the recorded `(input, output)` of an `edit`;
    /// what it leaves in `output.output` is the tool result the model reads.
    #[test]
    fn the_opencode_plugin() {
        if !require_server("node") {
            return;
        }
        replay(
            |test| test,
            |test| {
                let event: Value =
                    serde_json::from_slice(&recorded("opencode-tool-execute-after.json"))
                        .expect("the recorded event");
                let before = event["output"]["output"]
                    .as_str()
                    .expect("the tool's output");
                let after = opencode_after(test, &event);
                if after == before {
                    return None;
                }
                let report = after
                    .strip_prefix(&format!("{before}\n\n"))
                    .unwrap_or_else(|| panic!("the tool's output kept, then the report\n{after}"));
                Some(report.to_string())
            },
        );
    }

    /// A tool that writes nothing does not run the check: the change is left for the
    /// next tool that may write.
    #[test]
    fn the_opencode_plugin_skips_tools_that_write_nothing() {
        if !require_server("node") || !installed(&PYRIGHT) {
            return;
        }
        let test = workspace(&PYRIGHT, &[]).staged();
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
        let mut event: Value =
            serde_json::from_slice(&recorded("opencode-tool-execute-after.json"))
                .expect("the recorded event");
        event["input"]["tool"] = "read".into();
        assert_eq!(opencode_after(&test, &event), "Edit applied successfully.");
        event["input"]["tool"] = "edit".into();
        let after = opencode_after(&test, &event);
        assert!(after.contains("b.py:3:"), "{after}");
    }

    /// Loads the plugin as opencode does (its named export, called with the project's
    /// directory), calls its `tool.execute.after` with `event`'s `input` and `output`,
    /// and gives back `output.output` as the hook left it.
    fn opencode_after(test: &Test, event: &Value) -> String {
        const DRIVER: &str = r#"
const [plugin, event, directory] = process.argv.slice(2)
const { readFile } = await import("node:fs/promises")
const { LspgatePlugin } = await import(plugin)
const hooks = await LspgatePlugin({ directory, worktree: directory })
const { input, output } = JSON.parse(await readFile(event, "utf8"))
await hooks["tool.execute.after"](input, output)
process.stdout.write(JSON.stringify(output.output))
"#;
        let dir = test.private_dir("fake");
        // .mjs: any node reads it as a module (opencode loads the .js itself).
        let plugin = dir.join("lspgate.mjs");
        fs::copy(repo_file("integrations/opencode/lspgate.js"), &plugin).expect("the plugin");
        let driver = dir.join("driver.mjs");
        fs::write(&driver, DRIVER).expect("the driver");
        let event_file = dir.join("event.json");
        fs::write(&event_file, event.to_string()).expect("the event");
        let ran = run_hook(
            test,
            &[
                OsStr::new("node"),
                driver.as_os_str(),
                plugin.as_os_str(),
                event_file.as_os_str(),
                test.workspace().as_os_str(),
            ],
            b"",
            &[],
        );
        assert_eq!(ran.status, 0, "{}", ran.stderr);
        serde_json::from_str(&ran.stdout).expect("output.output")
    }

    /// Whether a hook's `matcher` fires for `tool`, tested as a JavaScript RegExp as
    /// Gemini CLI tests it (Codex CLI's regex reads these the same).
    fn matches_tool(matcher: &str, tool: &str) -> bool {
        let out = std::process::Command::new("node")
            .args([
                "-e",
                "process.exit(new RegExp(process.argv[1]).test(process.argv[2]) ? 0 : 1)",
                matcher,
                tool,
            ])
            .output()
            .expect("run node");
        out.status.success()
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

/// Through a warm daemon, the before view of each change is what the servers had said
/// when the call before it ended (the daemon's view of the baseline's tree), not asked
/// of a server that may have read the change from the disk already: each call is
/// exact where rust-analyzer's check (cargo reads the disk) and clangd's includers
/// (a header is read from the disk) could only say they could not tell.
#[test]
fn rust_analyzer_reports_each_change_once_through_the_daemon() {
    sequence(&RUST_ANALYZER, true);
}

#[test]
fn clangd_reports_each_header_change_once_through_the_daemon() {
    sequence(&CLANGD, true);
}

/// The JSON says where the before view came from: the daemon's view, once a call
/// through it has ended on the baseline's tree.
#[test]
fn a_call_through_the_daemon_takes_its_before_view_from_the_last_one() {
    if !installed(&PYRIGHT) {
        return;
    }
    let test = workspace(&PYRIGHT, &[]).staged().with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    // Nothing changed, and no view named yet: the daemon ends a run on the tree.
    let first = warmed(&PYRIGHT, test);
    first.assert_code(0);
    write_behind(&first, &PYRIGHT.breaking, false);
    let broken = first
        .again()
        .args(["check", "--changed", "--format", "json"])
        .args(&WAITS[1..])
        .run();
    broken.assert_code(1);
    let befores: Vec<Value> = broken.json()["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .map(|s| s["before"].clone())
        .collect();
    assert!(!befores.is_empty(), "{broken}");
    assert!(befores.iter().all(|b| b == "seen"), "{broken}");
}

/// Module `a` deleted by another process, then `check --changed` through a warm
/// daemon: its importers' broken imports are new. Before, the daemon announced the
/// deletion ahead of the check, the servers saw the importers broken before their old
/// word was asked, and the break passed as already there (exit 0). pyright's before
/// view is the daemon's view of the tree before the deletion: exact.
fn a_deleted_module_through_the_daemon(lang: &Lang, importers: &[(&str, u32)], exact: bool) {
    if !installed(lang) {
        return;
    }
    let test = workspace(lang, &[]).staged().with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    let first = warmed(lang, test);
    first.assert_code(0);
    fs::remove_file(first.workspace().join(lang.error.path)).expect("another tool deletes a");
    let broken = changed(first.again());
    if !exact {
        // pyright started after the deletion resolves imports from the disk: never
        // clean, and said why.
        broken.assert_code_in(&[1, 3]);
        assert!(
            broken.code == Some(1)
                || broken
                    .notes()
                    .iter()
                    .any(|n| n.contains("reads the disk, where")),
            "{broken}"
        );
        return;
    }
    broken.assert_code(1);
    for (path, line) in importers {
        assert_error_in(&broken, "project_diagnostics", path, *line);
    }
}

#[test]
fn pyright_a_deleted_module_through_the_daemon() {
    a_deleted_module_through_the_daemon(&PYRIGHT, &[("b.py", 1), ("c.py", 1)], true);
}

#[test]
fn typescript_language_server_a_deleted_module_through_the_daemon() {
    a_deleted_module_through_the_daemon(&TSLS, &[("b.ts", 1), ("c.ts", 1)], true);
}

/// typescript-language-server hands tsserver's file watching to lspgate: a module
/// another process creates, then deletes, and then the deletion of one its
/// neighbours import, are each told to tsserver before its word after them is asked.
/// So the clean ones are clean, exit 0, and the break is exit 1, with no note that its
/// importers could not be compared. Before, tsserver watched the disk itself and
/// could answer for the importers before it had seen the change (mobx in hook mode
/// under load, exit 0): every created or deleted file was exit 3 or a note.
#[test]
fn typescript_language_server_hears_of_files_created_and_deleted_from_the_daemon() {
    if !installed(&TSLS) {
        return;
    }
    let test = workspace(&TSLS, &[]).staged().with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    let first = warmed(&TSLS, test);
    first.assert_code(0);
    let ws = first.workspace().to_owned();
    let no_disk_note = |out: &Output| {
        assert!(
            !out.notes()
                .iter()
                .any(|n| n.contains("reads the disk, where")),
            "{out}"
        );
    };
    fs::write(ws.join("d.ts"), "export const d: number = 1;\n").expect("another tool creates d");
    let created = changed(first.again());
    created.assert_code(0);
    no_disk_note(&created);
    fs::remove_file(ws.join("d.ts")).expect("another tool deletes d");
    let deleted = changed(created.again());
    deleted.assert_code(0);
    no_disk_note(&deleted);
    // Deleted, put back, deleted again: tsserver ignored a module put back that was
    // opened before its creation was announced, and kept it missing, so the second
    // deletion's breaks were there already (mobx in hook mode, run twice: exit 0).
    let a = ws.join(TSLS.error.path);
    let text = fs::read(&a).expect("read a");
    let mut out = deleted;
    for round in 0..2 {
        fs::remove_file(&a).expect("another tool deletes a");
        let broken = changed(out.again());
        broken.assert_code(1);
        no_disk_note(&broken);
        for (path, line) in [("b.ts", 1), ("c.ts", 1)] {
            assert_error_in(&broken, "project_diagnostics", path, line);
        }
        fs::write(&a, &text).expect("another tool puts a back");
        let mended = changed(broken.again());
        mended.assert_code(0);
        assert!(
            mended.summary().iter().any(|l| l.contains(", fixed 2")),
            "round {round}: the broken imports are fixed\n{mended}"
        );
        out = mended;
    }
}

/// A dependency upgraded behind a warm daemon's back: the daemon walks no ignored
/// directory, and tsserver leaves its watching to lspgate, so it would keep the old
/// package's types. The server is started afresh (what is installed is part of its
/// configuration stamp), and an edit that calls the upgraded function the old way is
/// an error, not clean.
#[test]
fn typescript_language_server_reads_a_dependency_upgraded_behind_the_daemon() {
    if !installed(&TSLS) {
        return;
    }
    let dep = |params: &str| format!("export declare function hello({params}): string;\n");
    let manifest = r#"{"name": "dep", "version": "1.0.0", "types": "index.d.ts"}"#;
    let test = workspace(&TSLS, &[])
        .file(".gitignore", "node_modules/\n")
        .file("node_modules/dep/package.json", manifest)
        .file("node_modules/dep/index.d.ts", dep("name: string"))
        .file("node_modules/.package-lock.json", "{}\n")
        .file(
            "d.ts",
            "import { hello } from \"dep\";\nexport const said = hello(\"you\", \"hi\");\n",
        )
        .with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    let first = test.args(["check", "d.ts"]).args(&WAITS[1..]).run();
    first.assert_code(1);
    let ws = first.workspace().to_owned();
    // npm's upgrade: the package's types, and its record of what it installed.
    fs::write(
        ws.join("node_modules/dep/index.d.ts"),
        dep("name: string, greeting: string"),
    )
    .expect("another tool upgrades dep");
    fs::write(
        ws.join("node_modules/.package-lock.json"),
        "{\"upgraded\": true}\n",
    )
    .expect("npm records it");
    let mended = first
        .again()
        .args([
            "edit",
            "d.ts",
            "--old",
            "export const said",
            "--new",
            "export const greeting",
        ])
        .args(&WAITS[1..])
        .run();
    mended.assert_code(0);
    let broken = mended
        .again()
        .args([
            "edit",
            "d.ts",
            "--old",
            "hello(\"you\", \"hi\")",
            "--new",
            "hello(\"you\")",
        ])
        .args(&WAITS[1..])
        .run();
    broken.assert_code(1);
}

/// A change to a file no server has open, made by another process after the daemon
/// pulled the project's files: the server is shown it by an open, which says nothing
/// changed to the clock that tells whether a pull answer holds, so the answers pulled
/// before it were taken for the answers after it (TypeScript 7 on mobx in hook mode:
/// two breaks passed as clean, exit 0).
fn a_change_to_an_unopened_file_through_the_daemon(lang: &Lang) {
    let test = workspace(lang, &[]).staged().with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    // c.ts has an error of its own.
    let first = test.args(["check", lang.c]).args(&WAITS[1..]).run();
    first.assert_code(1);
    let pulled = pulled_between_runs(first, 3);
    let quiet = changed(pulled.again());
    quiet.assert_code(0);
    broken_behind(quiet, lang);
}

#[test]
fn typescript_language_server_a_change_to_an_unopened_file_through_the_daemon() {
    if installed(&TSLS) {
        a_change_to_an_unopened_file_through_the_daemon(&TSLS);
    }
}

#[test]
fn tsgo_a_change_to_an_unopened_file_through_the_daemon() {
    use super::servers::{TSGO, installed_with_7};
    if installed_with_7(&TSGO) {
        a_change_to_an_unopened_file_through_the_daemon(&TSGO);
    }
}

/// Only a deletion, and a before view seen by the daemon: gopls is shown nothing else,
/// and looked settled at once (go-cmp's deleted file in the corpus's hook mode: exit 0,
/// its 4 breaks unseen). The run now waits for the end of the bracket gopls owes the
/// deletion's notification (before its brackets, a file beside the deleted one was
/// opened as the sign).
#[test]
fn gopls_a_deleted_package_through_the_daemon() {
    a_deleted_module_through_the_daemon(&GOPLS, &[("b/b.go", 3), ("c/c.go", 3)], true);
}
