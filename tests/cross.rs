//! The breaks an edit causes in other files, with real servers, on the projects in
//! `tests/fixtures/cross/<language>`: through a re-export barrel, through a relative
//! import, through a type inferred two files away from the edit (the broken file names
//! nothing the edit changed), and through a deleted module. Each run is cold
//! (`--no-daemon`), so the before view and the dependents come from scratch.
//!
//! pyright finds the dependents by its own workspace analysis and rust-analyzer by its
//! check of the crate after the save; typescript-language-server's are found by
//! lspgate's scan and opened.

use std::{fs, path::Path, time::Duration};

use serde_json::Value;

use crate::support::{Output, Test, require_server};

const WAITS: [&str; 8] = [
    "--no-daemon",
    "--format",
    "json",
    "--startup-timeout",
    "90s",
    "--timeout",
    "20s",
    "--cross-file-timeout",
];

fn project(language: &str) -> Test {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cross")
        .join(language);
    let mut test = Test::new().watchdog(Duration::from_secs(300));
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(&root).expect("under the fixture");
            let text = fs::read_to_string(&path).expect("fixture text");
            test = test.file(rel, text);
        }
    }
    test
}

/// The files holding a new error, and the report is complete (exit 1).
#[track_caller]
fn broken_files(out: &Output) -> Vec<String> {
    out.assert_code(1);
    let report: Value = out.json();
    let mut files: Vec<String> = report["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| {
            f["diagnostics"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|d| d["new"] == true && d["severity"] == "Error")
        })
        .filter_map(|f| f["path"].as_str().map(str::to_string))
        .collect();
    files.sort();
    files
}

fn edit(language: &str, path: &str, old: &str, new: &str) -> Output {
    project(language)
        .args(["edit", path, "--old", old, "--new", new])
        .args(WAITS)
        .args(["30s"])
        .run()
}

fn delete(language: &str, path: &str) -> Output {
    let text = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cross")
            .join(language)
            .join(path),
    )
    .expect("the file to delete");
    let lines = text.lines().count();
    let mut patch = format!("--- a/{path}\n+++ /dev/null\n@@ -1,{lines} +0,0 @@\n");
    for line in text.lines() {
        patch.push('-');
        patch.push_str(line);
        patch.push('\n');
    }
    project(language)
        .args(["patch"])
        .args(WAITS)
        .args(["30s"])
        .stdin(patch)
        .run()
}

mod python {
    use super::*;

    fn ready() -> bool {
        require_server("pyright-langserver")
    }

    #[test]
    fn a_rename_behind_a_package_barrel_breaks_its_importers() {
        if !ready() {
            return;
        }
        let out = edit("python", "pkg/errors.py", "def fail(", "def failed(");
        assert_eq!(
            broken_files(&out),
            ["app/use_fail.py", "pkg/__init__.py"],
            "{out}"
        );
    }

    /// An error that stood before the edit is old, even in a file the edit reaches
    /// (pyright re-checks it), and a harmless edit exits 0.
    #[test]
    fn an_error_that_stood_before_is_not_new() {
        if !ready() {
            return;
        }
        let out = edit("python", "app/helpers.py", "return 1", "return 1 + 0");
        out.assert_code(0);
        let report: Value = out.json();
        let new = report["files"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|f| f["diagnostics"].as_array().into_iter().flatten())
            .filter(|d| d["new"] == true)
            .count();
        assert_eq!(new, 0, "{out}");
    }

    #[test]
    fn a_relative_import_is_a_dependent() {
        if !ready() {
            return;
        }
        let out = edit(
            "python",
            "app/helpers.py",
            "def helper() -> int:\n    return 1",
            "def helper() -> str:\n    return \"1\"",
        );
        assert_eq!(broken_files(&out), ["app/rel.py"], "{out}");
    }

    #[test]
    fn a_break_travels_two_files_through_an_inferred_type() {
        if !ready() {
            return;
        }
        let out = edit(
            "python",
            "pkg/shapes.py",
            "-> int:\n    return w * h",
            "-> str:\n    return str(w * h)",
        );
        // report.py names nothing of shapes.py: measure.py's total() infers its
        // type from area().
        assert_eq!(broken_files(&out), ["app/report.py"], "{out}");
    }

    #[test]
    fn a_deleted_module_breaks_its_importers() {
        if !ready() {
            return;
        }
        let out = delete("python", "gone.py");
        assert_eq!(broken_files(&out), ["app/uses_gone.py"], "{out}");
    }
}

mod typescript {
    use super::*;

    fn ready() -> bool {
        require_server("typescript-language-server")
    }

    #[test]
    fn a_rename_behind_a_barrel_breaks_the_barrels_importers() {
        if !ready() {
            return;
        }
        let out = edit(
            "typescript",
            "src/errors.ts",
            "function fail(",
            "function failed(",
        );
        assert_eq!(broken_files(&out), ["src/use-fail.ts"], "{out}");
    }

    #[test]
    fn a_relative_import_from_another_directory_is_a_dependent() {
        if !ready() {
            return;
        }
        let out = edit(
            "typescript",
            "src/lib/helpers.ts",
            "helper(): number {\n  return 1;",
            "helper(): string {\n  return \"1\";",
        );
        assert_eq!(broken_files(&out), ["src/lib/rel.ts"], "{out}");
    }

    #[test]
    fn a_break_travels_two_files_through_an_inferred_type() {
        if !ready() {
            return;
        }
        let out = edit(
            "typescript",
            "src/shapes.ts",
            "): number {\n  return w * h;",
            "): string {\n  return String(w * h);",
        );
        assert_eq!(broken_files(&out), ["src/report.ts"], "{out}");
    }

    #[test]
    fn a_deleted_module_breaks_its_importers() {
        if !ready() {
            return;
        }
        let out = delete("typescript", "src/gone.ts");
        assert_eq!(broken_files(&out), ["src/uses-gone.ts"], "{out}");
    }
}

mod rust {
    use super::*;

    fn ready() -> bool {
        require_server("rust-analyzer") && require_server("cargo")
    }

    #[test]
    fn a_changed_signature_breaks_a_caller() {
        if !ready() {
            return;
        }
        let out = edit(
            "rust",
            "src/shapes.rs",
            "area(w: u32, h: u32)",
            "area(w: u32, h: u32, d: u32)",
        );
        assert_eq!(broken_files(&out), ["src/report.rs"], "{out}");
    }

    #[test]
    fn a_deleted_module_breaks_its_declaration() {
        if !ready() {
            return;
        }
        // No file is saved: the check of the crate is asked for.
        let out = delete("rust", "src/gone.rs");
        assert!(
            broken_files(&out).contains(&"src/lib.rs".to_string()),
            "{out}"
        );
    }
}
