use std::fs;
use std::path::Path;

use super::*;

fn write(root: &Path, files: &[(&str, &str)]) -> std::io::Result<()> {
    for (rel, text) in files {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        fs::write(path, text)?;
    }
    Ok(())
}

fn exts(list: &[&str]) -> Vec<String> {
    list.iter().map(|e| e.to_string()).collect()
}

fn rels(root: &Path, files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
        .collect()
}

/// The dependents of editing `rel` from `before` to `after` (None: deleted).
fn dependents(root: &Path, rel: &str, before: &str, after: Option<&str>, list: &[&str]) -> Found {
    let path = root.join(rel);
    let edited = [Edited {
        path: &path,
        before: Some(before),
        after,
    }];
    scan(root, &edited, &exts(list), 100)
}

#[test]
fn python_importers_relative_ones_included_and_theirs_transitively() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    write(
        root,
        &[
            ("pkg/__init__.py", "from .core import greet\n"),
            ("pkg/core.py", "def greet(name):\n    return name\n"),
            ("pkg/user.py", "from . import core\nx = core.greet('b')\n"),
            (
                "pkg/deep/far.py",
                "from ..user import x\nprint(x.upper())\n",
            ),
            ("app.py", "from pkg import greet\ngreet('a')\n"),
            ("alone.py", "print('greet is just a word here')\n"),
            ("notes.txt", "from pkg.core import greet\n"),
        ],
    )?;
    let found = dependents(
        root,
        "pkg/core.py",
        "def greet(name):\n    return name\n",
        Some("def greet(name, g):\n    return name\n"),
        &["py"],
    );
    assert_eq!(
        rels(root, &found.files),
        [
            // Direct, naming the changed symbol (app.py through the package's
            // re-export), then direct, then one level further.
            "app.py",
            "pkg/__init__.py",
            "pkg/user.py",
            "pkg/deep/far.py",
        ]
    );
    assert!(found.dropped.is_empty());
    Ok(())
}

#[test]
fn script_barrels_pass_their_modules_on() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    write(
        root,
        &[
            (
                "src/errors.ts",
                "export function die(m: string): never { throw m }\n",
            ),
            (
                "src/internal.ts",
                "export * from \"./errors\"\nexport * from './other'\n",
            ),
            ("src/other.ts", "export const o = 1\n"),
            (
                "src/api/a.ts",
                "import { die } from \"../internal\"\ndie('x')\n",
            ),
            (
                "src/api/b.ts",
                "import { o } from '../internal'\nexport const b = o\n",
            ),
            ("src/c.js", "const { b } = require('./api/b.js')\n"),
            ("src/d.ts", "import { x } from '@/util'\n"),
            ("src/util/index.ts", "export const x = 1\n"),
            (
                "tsconfig.json",
                "{ // paths\n \"compilerOptions\": { \"baseUrl\": \"src\", \"paths\": { \"@/*\": [\"*\"] } } }\n",
            ),
        ],
    )?;
    let found = dependents(
        root,
        "src/errors.ts",
        "export function die(m: string): never { throw m }\n",
        Some("export function fail(m: string): never { throw m }\n"),
        &["ts", "js"],
    );
    assert_eq!(
        rels(root, &found.files),
        [
            "src/api/a.ts",
            "src/api/b.ts",
            "src/internal.ts",
            "src/c.js"
        ],
        "the barrel's importers are direct importers; c.js one level on"
    );
    let util = dependents(
        root,
        "src/util/index.ts",
        "export const x = 1\n",
        Some("export const y = 1\n"),
        &["ts", "js"],
    );
    assert_eq!(
        rels(root, &util.files),
        ["src/d.ts"],
        "through tsconfig paths"
    );
    Ok(())
}

#[test]
fn a_deleted_module_breaks_its_importers() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    write(root, &[("b.py", "import gone\n"), ("c.py", "x = 1\n")])?;
    let found = dependents(root, "gone.py", "def f(): pass\n", None, &["py"]);
    assert_eq!(rels(root, &found.files), ["b.py"]);
    Ok(())
}

#[test]
fn nothing_beyond_the_cap_is_dropped_silently() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    for i in 0..5 {
        write(root, &[(&format!("u{i}.py"), "import a\n")])?;
    }
    let path = root.join("a.py");
    let edited = [Edited {
        path: &path,
        before: Some("x = 1\n"),
        after: Some("y = 1\n"),
    }];
    let found = scan(root, &edited, &exts(&["py"]), 3);
    assert_eq!(found.files.len(), 3);
    assert_eq!(rels(root, &found.dropped), ["u3.py", "u4.py"]);
    Ok(())
}

#[test]
fn c_dependents_are_includers_transitively_not_namesakes() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    write(
        root,
        &[
            ("a.h", "int greet(int);\n"),
            ("a.c", "#include \"a.h\"\nint greet(int n) { return n; }\n"),
            ("lib/b.h", "#include <a.h>\n"),
            ("b.c", "  #  include \"lib/b.h\"\nint x = 1;\n"),
            ("c.c", "int greet(int);\nint y(void) { return greet(1); }\n"),
            ("d.c", "#include \"data.h\" // not a.h\n"),
            (
                "lib/u.h",
                "#include \"../a.h\"\nstatic int u(void) { return greet(1); }\n",
            ),
            ("u.c", "#include \"lib/u.h\"\n"),
        ],
    )?;
    let found = dependents(
        root,
        "a.h",
        "int greet(int);\n",
        Some("int greet(int, int);\n"),
        &["c", "h"],
    );
    // lib/b.h names nothing the edit changed: b.c, which includes it, checks it.
    assert_eq!(rels(root, &found.files), ["a.c", "lib/u.h", "b.c", "u.c"]);
    let source = dependents(
        root,
        "a.c",
        "int greet(int n) { return n; }\n",
        Some("int greet(int n) { return n + 1; }\n"),
        &["c", "h"],
    );
    assert!(
        source.files.is_empty(),
        "a source file nobody includes breaks no other file: {:?}",
        source.files
    );
    Ok(())
}

#[test]
fn go_packages_and_their_importers() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    write(
        root,
        &[
            ("go.mod", "module example.com/m\n\ngo 1.19\n"),
            (
                "a/a.go",
                "package a\n\nfunc Greet() string { return \"\" }\n",
            ),
            ("a/a2.go", "package a\n\nvar X = Greet()\n"),
            (
                "b/b.go",
                "package b\n\nimport (\n\t\"example.com/m/a\"\n)\n\nvar Y = a.Greet()\n",
            ),
            (
                "c/c.go",
                "package c\n\nimport \"example.com/m/b\"\n\nvar Z = b.Y\n",
            ),
            ("d/d.go", "package d\n\nfunc Greet() {}\n"),
        ],
    )?;
    let found = dependents(
        root,
        "a/a.go",
        "package a\n\nfunc Greet() string { return \"\" }\n",
        Some("package a\n\nfunc Greet() int { return 0 }\n"),
        &["go"],
    );
    assert_eq!(rels(root, &found.files), ["a/a2.go", "b/b.go", "c/c.go"]);
    Ok(())
}

#[test]
fn other_languages_fall_back_to_names() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    write(
        root,
        &[
            ("src/greeting.rs", "pub fn greet() {}\n"),
            (
                "src/main.rs",
                "mod greeting;\nfn main() { greeting::greet(); }\n",
            ),
            ("src/other.rs", "fn nothing() {}\n"),
        ],
    )?;
    let found = dependents(
        root,
        "src/greeting.rs",
        "pub fn greet() {}\n",
        Some("pub fn greet(x: u8) {}\n"),
        &["rs"],
    );
    assert_eq!(rels(root, &found.files), ["src/main.rs"]);
    Ok(())
}

#[test]
fn changed_symbols_are_the_definitions_on_changed_lines() {
    let s = text::changed_symbols(
        "def greet(name):\n    pass\n",
        "def greet(name, greeting):\n    pass\n",
    );
    assert!(s.contains("greet"), "{s:?}");
    assert!(!s.contains("name"), "{s:?}");
    assert!(text::contains_word(
        "from greeting import greet",
        "greeting"
    ));
    assert!(!text::contains_word("from greetings import x", "greeting"));
}

#[test]
fn monorepo_packages_imported_by_name_through_exports_conditions() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    let exports = r#"{"name": "@fx/NAME", "exports": {".": {"source": "./src/index.ts", "default": "./dist/index.js"}, "./util": {"source": "./src/util.ts"}}}"#;
    write(
        &root,
        &[
            ("package.json", r#"{"workspaces": ["packages/*"]}"#),
            (
                "packages/core/package.json",
                &exports.replace("NAME", "core"),
            ),
            ("packages/core/src/index.ts", "export * from './config';\n"),
            (
                "packages/core/src/config.ts",
                "export const make = () => ({ retries: 3 });\n",
            ),
            ("packages/core/src/util.ts", "export const u = 1;\n"),
            ("packages/mid/package.json", &exports.replace("NAME", "mid")),
            (
                "packages/mid/src/index.ts",
                "import { make } from '@fx/core';\nexport const d = make();\n",
            ),
            ("packages/app/package.json", &exports.replace("NAME", "app")),
            (
                "packages/app/src/main.ts",
                "import { d } from '@fx/mid';\nexport const n = d.retries;\n",
            ),
            (
                "packages/app/src/other.ts",
                "import { u } from '@fx/core/util';\nexport const v = u;\n",
            ),
            (
                "packages/app/src/alone.ts",
                "import { x } from 'not-ours';\nexport const y = x;\n",
            ),
        ],
    )?;
    let found = dependents(
        &root,
        "packages/core/src/config.ts",
        "export const make = () => ({ retries: 3 });\n",
        Some("export const make = () => ({ attempts: 3 });\n"),
        &["ts"],
    );
    let mut got = rels(&root, &found.files);
    got.sort();
    assert_eq!(
        got,
        [
            "packages/app/src/main.ts",
            "packages/core/src/index.ts",
            "packages/mid/src/index.ts"
        ]
    );
    let util = dependents(
        &root,
        "packages/core/src/util.ts",
        "export const u = 1;\n",
        Some("export const u = '1';\n"),
        &["ts"],
    );
    assert_eq!(rels(&root, &util.files), ["packages/app/src/other.ts"]);
    Ok(())
}

#[test]
fn each_package_resolves_paths_of_its_own_tsconfig_and_what_it_extends() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    write(
        &root,
        &[
            (
                "tsconfig.base.json",
                r#"{"compilerOptions": {"paths": {"~core/*": ["libs/core/src/*"]}}}"#,
            ),
            (
                "libs/core/tsconfig.json",
                r#"{"extends": "../../tsconfig.base.json"}"#,
            ),
            ("libs/core/src/a.ts", "export const a = 1;\n"),
            (
                "apps/web/tsconfig.json",
                r#"{"extends": "../../tsconfig.base"}"#,
            ),
            (
                "apps/web/src/main.ts",
                "import { a } from '~core/a';\nexport const b = a;\n",
            ),
            (
                "apps/cli/tsconfig.json",
                r#"{"compilerOptions": {"baseUrl": ".", "paths": {"@lib/*": ["../../libs/core/src/*"]}}}"#,
            ),
            (
                "apps/cli/src/main.ts",
                "import { a } from '@lib/a';\nexport const c = a;\n",
            ),
        ],
    )?;
    let found = dependents(
        &root,
        "libs/core/src/a.ts",
        "export const a = 1;\n",
        Some("export const a = '1';\n"),
        &["ts"],
    );
    let mut got = rels(&root, &found.files);
    got.sort();
    assert_eq!(got, ["apps/cli/src/main.ts", "apps/web/src/main.ts"]);
    Ok(())
}

#[test]
fn uv_workspace_members_import_one_another() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    write(
        &root,
        &[
            (
                "pyproject.toml",
                "[tool.uv.workspace]\nmembers = [\"packages/*\"]\n",
            ),
            (
                "packages/core/pyproject.toml",
                "[project]\nname = \"fx-core\"\n",
            ),
            ("packages/core/src/fxcore/__init__.py", ""),
            (
                "packages/core/src/fxcore/config.py",
                "def make():\n    return 3\n",
            ),
            (
                "packages/app/pyproject.toml",
                "[project]\nname = \"fx-app\"\n",
            ),
            (
                "packages/app/fxapp/main.py",
                "from fxcore.config import make\nx = make()\n",
            ),
        ],
    )?;
    let found = dependents(
        &root,
        "packages/core/src/fxcore/config.py",
        "def make():\n    return 3\n",
        Some("def make(a):\n    return 3\n"),
        &["py"],
    );
    assert_eq!(rels(&root, &found.files), ["packages/app/fxapp/main.py"]);
    Ok(())
}
