//! Monorepos whose packages import each other by name, against the real servers: an
//! edit in one package breaks a file two packages away, and that file is reported
//! (exit 1), cold and through the daemon; where lspgate cannot map the monorepo, or a
//! package was not checked, the run says which and exits 3. Before, each breaking
//! edit here exited 0 with only the edited package checked.
//!
//! Each fixture was proved with the batch checkers first, on a copy written out by
//! hand: clean as written, and after the edit one error, in the package two away
//! (the commands and what they said are in each fixture's comment).

use super::*;
use crate::support::process::DaemonGuard;

/// `core` builds a value whose type `mid` passes on by inference and `app` reads a
/// field of: renaming the field in `core` breaks `app`, two packages away.
const CORE_TS: &str =
    "export function makeConfig(name: string) {\n  return { name, retries: 3 };\n}\n";
const RENAME: (&str, &str) = ("retries: 3", "attempts: 3");
/// A clean edit of `core` (the same field, another value).
const CLEAN_CORE: [&str; 6] = [
    "edit",
    "packages/core/src/config.ts",
    "--old",
    "retries: 3",
    "--new",
    "retries: 4",
];

/// An npm workspace of `@fx/core`, `@fx/mid` and `@fx/app` under `packages/`: one
/// tsconfig per package extending the root's base (no root tsconfig), each package's
/// `exports` pointing at its sources under the custom condition `source` (nothing
/// built), and the `node_modules/@fx` links npm makes for a workspace.
///
/// Proved with `tsc --noEmit -p packages/app` and `tsgo --noEmit -p packages/app`:
/// exit 0 as written; after [`RENAME`], `packages/app/src/index.ts(3,39): error
/// TS2339: Property 'retries' does not exist on type '{ name: string; attempts:
/// number; }'` from both. After the clean edit (`retries: 4`), `tsc --noEmit -p
/// packages/<p>` is clean for each of the three.
fn npm_workspace() -> Test {
    let base = r#"{ "compilerOptions": { "strict": true, "noEmit": true, "target": "es2022", "module": "esnext", "moduleResolution": "bundler", "customConditions": ["source"], "types": [] } }
"#;
    let manifest = |name: &str, dep: Option<&str>| {
        let deps = dep
            .map(|d| format!(", \"dependencies\": {{ \"{d}\": \"*\" }}"))
            .unwrap_or_default();
        format!(
            "{{ \"name\": \"{name}\", \"type\": \"module\", \"exports\": {{ \".\": {{ \"source\": \"./src/index.ts\", \"default\": \"./dist/index.js\" }} }}{deps} }}\n"
        )
    };
    npm_workspace_shell(base, "@fx", &["core", "mid", "app"])
        .file("packages/core/package.json", manifest("@fx/core", None))
        .file("packages/mid/package.json", manifest("@fx/mid", Some("@fx/core")))
        .file("packages/app/package.json", manifest("@fx/app", Some("@fx/mid")))
        .file("packages/core/src/index.ts", "export { makeConfig } from \"./config\";\n")
        .file("packages/core/src/config.ts", CORE_TS)
        .file(
            "packages/mid/src/index.ts",
            "import { makeConfig } from \"@fx/core\";\n\nexport const defaults = makeConfig(\"mid\");\n",
        )
        .file(
            "packages/app/src/index.ts",
            "import { defaults } from \"@fx/mid\";\n\nexport const tries: number = defaults.retries + 1;\n",
        )
}

/// The rename in `core`, as JSON.
fn rename_core(test: Test, extra: &[&str]) -> Output {
    test.args([
        "edit",
        "packages/core/src/config.ts",
        "--old",
        RENAME.0,
        "--new",
        RENAME.1,
    ])
    .args(["--format", "json"])
    .args(extra)
    .run()
}

/// The report's servers that checked every package named, from the monorepo's root.
fn assert_checked_packages(report: &Value, names: &[&str]) {
    let servers = report["servers"].as_array().expect("servers");
    let checked = servers.iter().any(|s| {
        s["root"] == "."
            && names.iter().all(|n| {
                s["packages"]
                    .as_array()
                    .is_some_and(|p| p.iter().any(|x| x == n))
            })
    });
    assert!(
        checked,
        "no server at the root checked {names:?}: {report:#}"
    );
}

/// `test` through a daemon warmed by a clean `check` of `file` (with `waits`): the
/// warm-up's output, for `again()`, and the guard that stops the daemon.
fn warmed(test: Test, file: &str, waits: &[&str]) -> (Output, DaemonGuard) {
    let test = test.with_daemon();
    let guard = DaemonGuard::new(&test);
    let warm = test.args(["check", file]).args(waits).run();
    warm.assert_code(0);
    (warm, guard)
}

#[test]
fn npm_workspace_an_edit_breaks_a_file_two_packages_away() {
    if !installed(&TSLS) {
        return;
    }
    let out = rename_core(npm_workspace(), &WAITS);
    out.assert_code(1);
    let report = out.json();
    let app = json_diagnostics_at(&report, "packages/app/src/index.ts", 3);
    assert!(
        app.iter()
            .any(|d| d["message"].as_str().is_some_and(|m| m.contains("retries"))),
        "the break in app is not reported: {report:#}"
    );
    assert_checked_packages(&report, &["@fx/core", "@fx/mid", "@fx/app"]);
}

#[test]
fn npm_workspace_a_clean_edit_is_silent() {
    if !installed(&TSLS) {
        return;
    }
    let out = npm_workspace().args(CLEAN_CORE).args(WAITS).run();
    out.assert_code(0);
    out.stdout_lacks("Error:");
    assert_eq!(out.notes(), Vec::<&str>::new(), "{out}");
    out.stdout_contains("checked: typescript-language-server at . for packages");
}

/// The rename as a patch (`git diff` output on stdin): the same break, in the text
/// report's `<project_diagnostics>`, never in the edited file's block.
#[test]
fn npm_workspace_a_patch_breaks_a_file_two_packages_away() {
    if !installed(&TSLS) {
        return;
    }
    let diff = "diff --git a/packages/core/src/config.ts b/packages/core/src/config.ts\n\
                --- a/packages/core/src/config.ts\n\
                +++ b/packages/core/src/config.ts\n\
                @@ -1,3 +1,3 @@\n \
                export function makeConfig(name: string) {\n\
                -  return { name, retries: 3 };\n\
                +  return { name, attempts: 3 };\n \
                }\n";
    let out = npm_workspace()
        .stdin(diff)
        .args(["patch", "-"])
        .args(WAITS)
        .run();
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "packages/app/src/index.ts", 3);
    assert!(
        out.block("file_diagnostics").is_none(),
        "the edited file has no error of its own\n{out}"
    );
    assert!(
        out.file("packages/core/src/config.ts")
            .contains("attempts: 3"),
        "patch not applied\n{out}"
    );
}

#[test]
fn npm_workspace_through_the_daemon() {
    if !installed(&TSLS) {
        return;
    }
    let (warm, _guard) = warmed(npm_workspace(), "packages/mid/src/index.ts", &WAITS[1..]);
    let broken = rename_core(warm.again(), &WAITS[1..]);
    broken.assert_code(1);
    let report = broken.json();
    assert!(
        !json_diagnostics_at(&report, "packages/app/src/index.ts", 3).is_empty(),
        "the break in app is not reported through the daemon: {report:#}"
    );
    let mended = broken
        .again()
        .args([
            "edit",
            "packages/core/src/config.ts",
            "--old",
            RENAME.1,
            "--new",
            RENAME.0,
        ])
        .args(&WAITS[1..])
        .run();
    mended.assert_code(0);
    mended.stdout_contains("fixed 1");
}

#[test]
fn npm_workspace_with_typescript_7() {
    if !installed(&TSLS) || !require_server("tsgo") || !super::servers::have_typescript_7() {
        return;
    }
    let test = super::servers::on_typescript_7(npm_workspace());
    let out = rename_core(test, &WAITS);
    out.assert_code(1);
    let report = out.json();
    assert!(
        report["servers"][0]["name"] == "tsgo",
        "not checked by TypeScript 7: {report:#}"
    );
    assert!(
        !json_diagnostics_at(&report, "packages/app/src/index.ts", 3).is_empty(),
        "the break in app is not reported by TypeScript 7: {report:#}"
    );
}

/// A `tsc -b` solution: the root tsconfig references three composite projects, each
/// importing the one before by a relative path into its sources (nothing built).
///
/// Proved with `tsc -b` at the root: exit 0 as written; after the rename in `a`,
/// `packages/c/src/main.ts(3,39): error TS2339: Property 'retries' does not exist`.
#[test]
fn project_references_an_edit_breaks_a_file_two_references_away() {
    if !installed(&TSLS) {
        return;
    }
    let options = r#""compilerOptions": { "composite": true, "strict": true, "rootDir": "src", "outDir": "dist", "module": "esnext", "moduleResolution": "bundler", "target": "es2022", "types": [] }, "include": ["src"]"#;
    let test = Test::new()
        .watchdog(WATCHDOG)
        .file(
            "tsconfig.json",
            "{ \"files\": [], \"references\": [{ \"path\": \"packages/a\" }, { \"path\": \"packages/b\" }, { \"path\": \"packages/c\" }] }\n",
        )
        .file(".gitignore", "dist/\n")
        .file("packages/a/tsconfig.json", format!("{{ {options} }}\n"))
        .file(
            "packages/b/tsconfig.json",
            format!("{{ {options}, \"references\": [{{ \"path\": \"../a\" }}] }}\n"),
        )
        .file(
            "packages/c/tsconfig.json",
            format!("{{ {options}, \"references\": [{{ \"path\": \"../b\" }}] }}\n"),
        )
        .file("packages/a/src/config.ts", CORE_TS)
        .file(
            "packages/b/src/index.ts",
            "import { makeConfig } from \"../../a/src/config\";\n\nexport const defaults = makeConfig(\"b\");\n",
        )
        .file(
            "packages/c/src/main.ts",
            "import { defaults } from \"../../b/src/index\";\n\nexport const tries: number = defaults.retries + 1;\n",
        );
    let out = test
        .args([
            "edit",
            "packages/a/src/config.ts",
            "--old",
            RENAME.0,
            "--new",
            RENAME.1,
        ])
        .args(WAITS)
        .run();
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "packages/c/src/main.ts", 3);
    out.stdout_contains("for packages packages/a, packages/b, packages/c");
}

/// A uv workspace of three members in `src/` layouts, installed editable in the root's
/// `.venv` (a `.pth` file per member, what an editable install writes).
///
/// Proved with `pyright` at the root: `0 errors` as written; after [`UV_RENAME`],
/// `packages/app/src/fxapp/main.py:3:23 - error: Cannot access attribute "retries"
/// for class "Config"`, the only one.
fn uv_workspace() -> Test {
    let test = Test::new()
        .watchdog(WATCHDOG)
        .file(
            "pyproject.toml",
            "[project]\nname = \"root\"\nversion = \"0\"\n\n[tool.uv.workspace]\nmembers = [\"packages/*\"]\n\n[tool.pyright]\nvenvPath = \".\"\nvenv = \".venv\"\n",
        )
        .file(".gitignore", ".venv/\n")
        .file(
            "packages/core/src/fxcore/config.py",
            "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    name: str\n    retries: int\n\n\ndef make_config(name: str) -> Config:\n    return Config(name, 3)\n",
        )
        .file(
            "packages/mid/src/fxmid/__init__.py",
            "from fxcore.config import make_config\n\ndefaults = make_config(\"mid\")\n",
        )
        .file(
            "packages/app/src/fxapp/main.py",
            "from fxmid import defaults\n\ntries: int = defaults.retries + 1\n",
        );
    let mut test = test;
    for member in ["core", "mid", "app"] {
        test = test
            .file(
                format!("packages/{member}/pyproject.toml"),
                format!("[project]\nname = \"fx-{member}\"\nversion = \"0\"\n"),
            )
            .file(format!("packages/{member}/src/fx{member}/py.typed"), "");
        if member != "mid" {
            test = test.file(format!("packages/{member}/src/fx{member}/__init__.py"), "");
        }
    }
    let version = python_version();
    let site = test.path(format!(".venv/lib/python{version}/site-packages"));
    fs::create_dir_all(&site).expect("site-packages");
    fs::write(test.path(".venv/pyvenv.cfg"), "home = /usr/bin\n").expect("pyvenv.cfg");
    for member in ["core", "mid", "app"] {
        let src = test.path(format!("packages/{member}/src"));
        fs::write(
            site.join(format!("_fx{member}.pth")),
            format!("{}\n", src.display()),
        )
        .expect("the editable install's .pth");
    }
    test
}

/// `major.minor` of the python3 on PATH, whose site-packages layout the venv copies.
fn python_version() -> String {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')",
        ])
        .output()
        .expect("python3 runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Renames the field of `core`'s dataclass that `app` reads through `mid`.
const UV_RENAME: [&str; 6] = [
    "edit",
    "packages/core/src/fxcore/config.py",
    "--old",
    "    retries: int",
    "--new",
    "    attempts: int",
];

#[test]
fn uv_workspace_an_edit_breaks_a_member_two_members_away() {
    if !installed(&PYRIGHT) {
        return;
    }
    let out = uv_workspace().args(UV_RENAME).args(WAITS).run();
    out.assert_code(1);
    assert_error_in(
        &out,
        "project_diagnostics",
        "packages/app/src/fxapp/main.py",
        3,
    );
    out.stdout_contains("for packages fx-app, fx-core, fx-mid");
}

#[test]
fn uv_workspace_through_the_daemon() {
    if !installed(&PYRIGHT) {
        return;
    }
    let (warm, _guard) = warmed(
        uv_workspace(),
        "packages/mid/src/fxmid/__init__.py",
        &WAITS[1..],
    );
    let broken = warm.again().args(UV_RENAME).args(&WAITS[1..]).run();
    broken.assert_code(1);
    assert_error_in(
        &broken,
        "project_diagnostics",
        "packages/app/src/fxapp/main.py",
        3,
    );
}

/// A `go.work` of three modules, each with its own `go.mod` and no `require` (the
/// workspace puts them in one build; nothing is downloaded). `core` builds its
/// struct unkeyed, so renaming a field breaks only `app`, which reads it through
/// `mid`.
///
/// Proved with `GOPROXY=off go vet ./...` in each module: clean as written; after
/// [`GO_RENAME`], `core` and `mid` still clean, `app`: `./app.go:5:26:
/// mid.Defaults.Retries undefined (type core.Config has no field or method
/// Retries)`. (`GOFLAGS=-mod=mod` is refused in workspace mode.)
fn go_work() -> Test {
    let mut test = Test::new()
        .watchdog(WATCHDOG)
        .file("go.work", "go 1.19\n\nuse (\n\t./core\n\t./mid\n\t./app\n)\n")
        .file(
            "core/core.go",
            "package core\n\ntype Config struct {\n\tName    string\n\tRetries int\n}\n\nfunc MakeConfig(name string) Config { return Config{name, 3} }\n",
        )
        .file("mid/mid.go", "package mid\n\nimport \"example.com/core\"\n\nvar Defaults = core.MakeConfig(\"mid\")\n")
        .file("app/app.go", "package app\n\nimport \"example.com/mid\"\n\nvar Tries = mid.Defaults.Retries + 1\n");
    for module in ["core", "mid", "app"] {
        test = test.file(
            format!("{module}/go.mod"),
            format!("module example.com/{module}\n\ngo 1.19\n"),
        );
    }
    test
}

const GO_RENAME: [&str; 6] = [
    "edit",
    "core/core.go",
    "--old",
    "\tRetries int",
    "--new",
    "\tAttempts int",
];

#[test]
fn go_work_an_edit_breaks_a_module_two_modules_away() {
    if !installed(&GOPLS) {
        return;
    }
    let out = go_work().args(GO_RENAME).args(WAITS).run();
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "app/app.go", 5);
    assert!(
        out.block("file_diagnostics").is_none(),
        "core itself still builds\n{out}"
    );
    out.stdout_contains(
        "checked: gopls at . for packages example.com/app, example.com/core, example.com/mid",
    );
}

#[test]
fn go_work_through_the_daemon() {
    if !installed(&GOPLS) {
        return;
    }
    let (warm, _guard) = warmed(go_work(), "mid/mid.go", &WAITS[1..]);
    let broken = warm.again().args(GO_RENAME).args(&WAITS[1..]).run();
    broken.assert_code(1);
    assert_error_in(&broken, "project_diagnostics", "app/app.go", 5);
}

/// A Cargo workspace of `fx-core`, `fx-mid` and `fx-app`, each depending on the one
/// before by a path dependency: renaming a method of `fx-core` breaks only `fx-app`,
/// which calls it on what `fx-mid` returns.
///
/// Proved with `cargo check --offline --keep-going`: clean as written; after
/// [`CARGO_RENAME`], `error[E0599]: no method named `retries` found for struct
/// `fx_core::Config`` at `app/src/lib.rs:2:24`, nothing else.
fn cargo_workspace() -> Test {
    let mut test = Test::new()
        .watchdog(WATCHDOG)
        .file(
            "Cargo.toml",
            "[workspace]\nmembers = [\"core\", \"mid\", \"app\"]\nresolver = \"2\"\n",
        )
        .file(
            "core/src/lib.rs",
            "pub struct Config {\n    pub name: String,\n    tries: u32,\n}\n\nimpl Config {\n    pub fn retries(&self) -> u32 {\n        self.tries\n    }\n}\n\npub fn make_config(name: &str) -> Config {\n    Config { name: name.to_string(), tries: 3 }\n}\n",
        )
        .file(
            "mid/src/lib.rs",
            "pub fn defaults() -> fx_core::Config {\n    fx_core::make_config(\"mid\")\n}\n",
        )
        .file(
            "app/src/lib.rs",
            "pub fn tries() -> u32 {\n    fx_mid::defaults().retries() + 1\n}\n",
        );
    for (crate_dir, dependency) in [("core", ""), ("mid", "core"), ("app", "mid")] {
        let dependencies = if dependency.is_empty() {
            String::new()
        } else {
            format!("\n[dependencies]\nfx-{dependency} = {{ path = \"../{dependency}\" }}\n")
        };
        test = test.file(
            format!("{crate_dir}/Cargo.toml"),
            format!(
                "[package]\nname = \"fx-{crate_dir}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{dependencies}"
            ),
        );
    }
    test
}

const CARGO_RENAME: [&str; 6] = [
    "edit",
    "core/src/lib.rs",
    "--old",
    "pub fn retries",
    "--new",
    "pub fn attempts",
];

/// One rust-analyzer at the workspace's root checks every member: the break two
/// crates away is found, and the report names the members checked.
#[test]
fn cargo_workspace_an_edit_breaks_a_crate_two_crates_away() {
    if !installed(&RUST_ANALYZER) {
        return;
    }
    let out = cargo_workspace().args(CARGO_RENAME).args(WAITS).run();
    out.assert_code(1);
    assert_error_in(&out, "project_diagnostics", "app/src/lib.rs", 2);
    assert!(
        out.block("file_diagnostics").is_none(),
        "core itself still builds\n{out}"
    );
    out.stdout_contains("checked: rust-analyzer at . for packages fx-app, fx-core, fx-mid");
}

/// Through a daemon warmed on another member than the one edited: the same server
/// (one rust-analyzer for the workspace, not one per member started cold).
#[test]
fn cargo_workspace_through_the_daemon() {
    if !installed(&RUST_ANALYZER) {
        return;
    }
    let (warm, _guard) = warmed(cargo_workspace(), "mid/src/lib.rs", &WAITS[1..]);
    let broken = warm
        .again()
        .args(CARGO_RENAME)
        .args(["--format", "json"])
        .args(&WAITS[1..])
        .run();
    broken.assert_code(1);
    let report = broken.json();
    assert!(
        json_diagnostics_at(&report, "app/src/lib.rs", 2)
            .iter()
            .any(|d| d["new"] == true),
        "no new error in app\n{broken}"
    );
    assert_checked_packages(&report, &["fx-app", "fx-core", "fx-mid"]);
    let status = broken
        .again()
        .args(["daemon", "status", "--format", "json"])
        .run();
    let servers = status.json()["servers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let rust_analyzers = servers
        .iter()
        .filter(|s| s["name"] == "rust-analyzer")
        .count();
    assert_eq!(
        rust_analyzers, 1,
        "one rust-analyzer for the workspace\n{status}"
    );
}

/// The clean edit and the rename in `core`, each run on `test` (a workspace whose
/// manifest lspgate cannot map): each exits 3 with a note naming `manifest`. The
/// rename breaks `app`, which the server at `core`'s own root never loaded: were it
/// found anyway, the run would exit 1 with it, which is as honest.
fn assert_unmapped_never_clean(test: impl Fn() -> Test, manifest: &str) {
    let note = format!("{manifest}: a monorepo lspgate cannot map");
    let clean = test().args(CLEAN_CORE).args(WAITS).run();
    clean.assert_code(3);
    super::configuration::assert_note(&clean, &note);
    let broken = rename_core(test(), &WAITS);
    broken.assert_code_in(&[1, 3]);
    if broken.code == Some(1) {
        assert!(
            !json_diagnostics_at(&broken.json(), "packages/app/src/index.ts", 3).is_empty(),
            "exit 1 without the break in app\n{broken}"
        );
    }
    let notes: Vec<String> = broken.json()["notes"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        notes.iter().any(|n| n.contains(&note)),
        "no note saying {note:?}\n{broken}"
    );
}

/// npm's `workspaces` that is not a list of globs.
#[test]
fn a_malformed_workspaces_is_never_clean() {
    if !installed(&TSLS) {
        return;
    }
    assert_unmapped_never_clean(
        || {
            npm_workspace().file(
                "package.json",
                "{ \"name\": \"root\", \"private\": true, \"workspaces\": 3 }\n",
            )
        },
        "package.json",
    );
}

/// A workspace tool lspgate does not map: Rush (`rush.json`), with no `workspaces`
/// in the root package.json.
#[test]
fn a_rush_monorepo_is_never_clean() {
    if !installed(&TSLS) {
        return;
    }
    assert_unmapped_never_clean(
        || {
            npm_workspace()
                .file("package.json", "{ \"name\": \"root\", \"private\": true }\n")
                .file(
                    "rush.json",
                    "{ \"rushVersion\": \"5.100.0\", \"projects\": [{ \"packageName\": \"@fx/core\", \"projectFolder\": \"packages/core\" }, { \"packageName\": \"@fx/mid\", \"projectFolder\": \"packages/mid\" }, { \"packageName\": \"@fx/app\", \"projectFolder\": \"packages/app\" }] }\n",
                )
        },
        "rush.json",
    );
}

/// Packages that depend on each other by path, with no workspace manifest: the server
/// at the edited package's root does not load the other one.
#[test]
fn a_package_depending_by_its_manifest_outside_the_root_is_never_clean() {
    if !installed(&PYRIGHT) {
        return;
    }
    let out = Test::new()
        .watchdog(WATCHDOG)
        .file("libs/core/pyproject.toml", "[project]\nname = \"fx-core\"\nversion = \"0\"\n")
        .file("libs/core/fxcore/__init__.py", "def make() -> int:\n    return 3\n")
        .file(
            "apps/web/pyproject.toml",
            "[tool.poetry]\nname = \"web\"\n\n[tool.poetry.dependencies]\nfx-core = { path = \"../../libs/core\", develop = true }\n",
        )
        .file("apps/web/web/main.py", "from fxcore import make\n\nx: int = make()\n")
        .args(["edit", "libs/core/fxcore/__init__.py", "--old", "return 3", "--new", "return 4"])
        .args(WAITS)
        .run();
    out.assert_code(3);
    super::configuration::assert_note(&out, "were not checked: web (apps/web)");
}

/// A monorepo of `@fx/core` and `@fx/app` whose TypeScript server (the fake server
/// in its place) never answers for `packages/app`.
fn silent_for_app() -> Test {
    Test::new()
        .file(
            "package.json",
            "{ \"name\": \"root\", \"private\": true, \"workspaces\": [\"packages/*\"] }\n",
        )
        .file("packages/core/package.json", "{ \"name\": \"@fx/core\" }\n")
        .file("packages/app/package.json", "{ \"name\": \"@fx/app\" }\n")
        .file("packages/core/a.fake", "def greet\n")
        .file("packages/app/b.fake", "use greet\n")
        .fake_server_as(
            "typescript-language-server",
            &["--silent-under", "packages/app"],
        )
}

/// Renames what `app` uses, with short waits: the fake server answers at once or
/// never.
fn rename_greet(test: Test, cold: bool) -> Output {
    let waits = [
        "--startup-timeout",
        "3s",
        "--timeout",
        "2s",
        "--cross-file-timeout",
        "1s",
    ];
    test.args([
        "edit",
        "packages/core/a.fake",
        "--old",
        "def greet",
        "--new",
        "def greeting",
    ])
    .args(if cold { &["--no-daemon"][..] } else { &[] })
    .args(waits)
    .run()
}

/// The TypeScript server of the monorepo never answers for `packages/app`: the break
/// may be there, so the run names the package and exits 3.
#[test]
fn a_package_whose_files_time_out_is_named() {
    let out = rename_greet(silent_for_app(), true);
    out.assert_code(3);
    super::configuration::assert_note(&out, "not checked: @fx/app");
}

/// The same through the daemon, on a second run whose server is already up.
#[test]
fn a_package_whose_files_time_out_is_named_through_the_daemon() {
    let (warm, _guard) = warmed(
        silent_for_app(),
        "packages/core/a.fake",
        &["--startup-timeout", "3s", "--timeout", "2s"],
    );
    let out = rename_greet(warm.again(), false);
    out.assert_code(3);
    super::configuration::assert_note(&out, "not checked: @fx/app");
}
