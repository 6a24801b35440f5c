//! Edits of the files the servers read as configuration (`go.mod`,
//! `pyrightconfig.json`, `tsconfig.json`, `package.json`, `Cargo.toml`,
//! `compile_flags.txt`), against the real servers: the errors they cause in files
//! nobody edited are reported (exit 1), a configuration a server cannot read makes
//! the run incomplete (exit 3), and a change the servers are shown in memory only
//! never passes as clean. Before, each of these said `skipped (no server)` and
//! exited 0.

use super::*;

/// `lspgate edit` of a configuration file, with the generous waits.
fn config_edit(test: Test, path: &str, old: &str, new: &str, extra: &[&str]) -> Output {
    test.args(["edit", path, "--old", old, "--new", new])
        .args(WAITS)
        .args(extra)
        .run()
}

pub(super) fn assert_note(out: &Output, needle: &str) {
    assert!(
        out.notes().iter().any(|n| n.contains(needle)),
        "no note saying {needle:?}\n{out}"
    );
}

#[test]
fn a_renamed_go_module_breaks_its_importers() {
    if !installed(&GOPLS) {
        return;
    }
    let out = config_edit(
        workspace(&GOPLS, &[]),
        "go.mod",
        "module example.com/fixture",
        "module example.com/renamed",
        &[],
    );
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "b/b.go", 3);
    assert_error_in(&out, "project_diagnostics", "c/c.go", 3);
    assert_note(&out, "go.mod configures gopls");
    assert!(
        out.file("go.mod").contains("example.com/renamed"),
        "the edit is applied"
    );
}

#[test]
fn a_renamed_go_module_through_a_warm_daemon() {
    if !installed(&GOPLS) {
        return;
    }
    let test = workspace(&GOPLS, &[]).with_daemon();
    let _guard = crate::support::process::DaemonGuard::new(&test);
    let warm = test.args(["check", "b/b.go"]).args(&WAITS[1..]).run();
    warm.assert_code(0);
    let out = warm
        .again()
        .args([
            "edit",
            "go.mod",
            "--old",
            "module example.com/fixture",
            "--new",
            "module example.com/renamed",
        ])
        .args(&WAITS[1..])
        .run();
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "b/b.go", 3);
    assert_error_in(&out, "project_diagnostics", "c/c.go", 3);
    // Put back behind the daemon's back: its gopls read the renamed module, and the
    // next run must not take the importers' errors for the project's.
    fs::write(
        out.workspace().join("go.mod"),
        "module example.com/fixture\n\ngo 1.19\n",
    )
    .expect("put go.mod back");
    let back = out
        .again()
        .args(["check", "b/b.go"])
        .args(&WAITS[1..])
        .run();
    back.assert_code(0);
    assert_nothing_at(&back, "b/b.go", 3);
}

#[test]
fn a_go_mod_gopls_cannot_load_is_not_checked() {
    if !installed(&GOPLS) {
        return;
    }
    let out = config_edit(
        workspace(&GOPLS, &[]),
        "go.mod",
        "go 1.19",
        "go 1.19\ngarbage here",
        &[],
    );
    out.assert_code(3);
    assert_note(&out, "could not load the project");
}

#[test]
fn a_go_mod_change_in_a_dry_run_is_not_checked() {
    if !installed(&GOPLS) {
        return;
    }
    let out = config_edit(
        workspace(&GOPLS, &[]),
        "go.mod",
        "module example.com/fixture",
        "module example.com/renamed",
        &["--dry-run"],
    );
    out.assert_code(3);
    assert_note(&out, "does not reach it");
    assert!(out.file("go.mod").contains("example.com/fixture"));
}

#[test]
fn a_python_version_in_pyrightconfig_breaks_annotations() {
    if !installed(&PYRIGHT) {
        return;
    }
    let out = config_edit(
        workspace(&PYRIGHT, &[]),
        "pyrightconfig.json",
        "\"typeCheckingMode\": \"standard\"",
        "\"typeCheckingMode\": \"standard\",\n  \"pythonVersion\": \"3.5\"",
        &[],
    );
    out.assert_code(1);
    // `count: int = ...` needs Python 3.6; c.py's own type error stays old.
    assert_error_in(&out, "project_diagnostics", "c.py", 3);
    let report = out.stdout.as_str();
    assert!(report.contains("3.6"), "{out}");
    assert!(
        !report.contains("not assignable"),
        "an old error as new\n{out}"
    );
}

#[test]
fn a_pyrightconfig_pyright_cannot_parse_is_not_checked() {
    if !installed(&PYRIGHT) {
        return;
    }
    let out = config_edit(
        workspace(&PYRIGHT, &[]),
        "pyrightconfig.json",
        "\"typeCheckingMode\": \"standard\"",
        "\"typeCheckingMode\": \"strict\",,,",
        &[],
    );
    out.assert_code(3);
}

/// A TypeScript package that imports itself by name, through its `exports`.
fn typescript_package() -> Test {
    Test::new()
        .watchdog(WATCHDOG)
        .file(
            "tsconfig.json",
            r#"{
  "compilerOptions": {
    "strict": false,
    "noEmit": true,
    "target": "es2020",
    "module": "esnext",
    "moduleResolution": "bundler",
    "types": []
  }
}
"#,
        )
        .file(
            "package.json",
            "{\n  \"name\": \"pkg\",\n  \"type\": \"module\",\n  \"exports\": { \".\": \"./a.ts\" }\n}\n",
        )
        .file(
            "a.ts",
            "export function greet(name) {\n  return \"Hello, \" + name;\n}\n",
        )
        .file(
            "b.ts",
            "import { greet } from \"pkg\";\n\nexport const fromB: string = greet(\"b\");\n",
        )
}

#[test]
fn strict_turned_on_in_tsconfig_reports_the_implicit_any() {
    if !installed(&TSLS) {
        return;
    }
    let out = config_edit(
        typescript_package(),
        "tsconfig.json",
        "\"strict\": false",
        "\"strict\": true",
        &[],
    );
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "a.ts", 1);
}

#[test]
fn an_export_moved_in_package_json_breaks_its_importer() {
    if !installed(&TSLS) {
        return;
    }
    let out = config_edit(
        typescript_package(),
        "package.json",
        "\"./a.ts\"",
        "\"./missing.ts\"",
        &[],
    );
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "b.ts", 1);
}

#[test]
fn a_tsconfig_that_is_not_json_is_not_checked() {
    if !installed(&TSLS) {
        return;
    }
    let out = config_edit(
        typescript_package(),
        "tsconfig.json",
        "\"strict\": false,",
        "\"strict\": false,,, {{",
        &[],
    );
    out.assert_code(3);
    assert_note(&out, "not well-formed");
}

#[test]
fn a_define_in_compile_flags_breaks_a_unit() {
    if !installed(&CLANGD) {
        return;
    }
    let out = config_edit(
        workspace(&CLANGD, &[]),
        "compile_flags.txt",
        "-std=c11",
        "-std=c11\n-Dhello_b=1",
        &[],
    );
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "b.c", 3);
}

#[test]
fn a_newer_edition_in_cargo_toml_breaks_a_keyword() {
    if !installed(&RUST_ANALYZER) {
        return;
    }
    let keyword = Edit {
        path: "src/a.rs",
        old: "format!(\"Hello, {name}\")\n}",
        new: "format!(\"Hello, {name}\")\n}\n\npub fn kw() -> i32 {\n    let async = 1;\n    async\n}",
    };
    let edition = Edit {
        path: "Cargo.toml",
        old: "edition = \"2021\"",
        new: "edition = \"2015\"",
    };
    let out = config_edit(
        workspace(&RUST_ANALYZER, &[&keyword, &edition]),
        "Cargo.toml",
        "edition = \"2015\"",
        "edition = \"2021\"",
        &[],
    );
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "src/a.rs", 6);
}

/// An npm workspace of two packages, `app` importing `core` by its name through the
/// workspace's `node_modules` link and `core`'s `exports`, one tsconfig per package.
fn npm_workspace() -> Test {
    let base = r#"{ "compilerOptions": { "strict": true, "noEmit": true, "target": "es2020", "module": "esnext", "moduleResolution": "bundler", "types": [] } }
"#;
    npm_workspace_shell(base, "@x", &["core", "app"])
        .file(
            "packages/core/package.json",
            "{\n  \"name\": \"@x/core\",\n  \"type\": \"module\",\n  \"exports\": { \".\": \"./src/index.ts\" }\n}\n",
        )
        .file(
            "packages/app/package.json",
            "{ \"name\": \"@x/app\", \"type\": \"module\", \"dependencies\": { \"@x/core\": \"*\" } }\n",
        )
        .file(
            "packages/core/src/index.ts",
            "export function greet(name: string): string {\n  return \"Hello, \" + name;\n}\n",
        )
        .file(
            "packages/app/src/main.ts",
            "import { greet } from \"@x/core\";\n\nexport const hello: string = greet(\"app\");\n",
        )
}

#[test]
fn an_export_moved_in_a_workspace_package_breaks_the_package_importing_it() {
    if !installed(&TSLS) {
        return;
    }
    let out = config_edit(
        npm_workspace(),
        "packages/core/package.json",
        "\"./src/index.ts\"",
        "\"./src/missing.ts\"",
        &[],
    );
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "packages/app/src/main.ts", 1);
}

/// A tsconfig other projects extend, in a directory of no TypeScript file of its own:
/// what it governs lies elsewhere, unseen by the walk of its directory. Never clean.
#[test]
fn a_base_tsconfig_extended_from_elsewhere_is_not_passed() {
    let out = config_edit(
        Test::new()
            .watchdog(WATCHDOG)
            .file(
                "config/tsconfig.base.json",
                "{ \"compilerOptions\": { \"strict\": false } }\n",
            )
            .file(
                "tsconfig.json",
                "{ \"extends\": \"./config/tsconfig.base.json\" }\n",
            )
            .file("a.ts", "export function f(x) { return x; }\n"),
        "config/tsconfig.base.json",
        "\"strict\": false",
        "\"strict\": true",
        &[],
    );
    out.assert_code(3);
    assert_note(&out, "files elsewhere may read it");
}
