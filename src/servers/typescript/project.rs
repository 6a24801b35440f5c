//! The files a TypeScript 7 server is asked about after an edit: every file of the
//! project, pulled without opening it (TypeScript 7 answers a pull for a closed file
//! of its tsconfig project exactly, in milliseconds), up to [`MAX_PROJECT_FILES`].

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::servers::languages;

/// Files pulled at most as a TypeScript 7 project's dependents; a larger project
/// falls back to the text scan of likely dependents.
pub const MAX_PROJECT_FILES: usize = 2000;

/// The files of the TypeScript project at `root` (the directory of its
/// `tsconfig.json`) that a TypeScript 7 server is asked about after an edit: every
/// file with one of its extensions (JavaScript only when the tsconfig allows or
/// checks JavaScript, or it is a `jsconfig.json` project) under the directories the
/// tsconfig's `include` names (the whole root without one), skipping what git
/// ignores and `node_modules`; `None` when there are more than
/// [`MAX_PROJECT_FILES`]. The edited files are left out.
pub fn project_files(root: &Path, edited: &[&Path]) -> Option<Vec<PathBuf>> {
    let extensions: Vec<&str> = languages::TYPESCRIPT.iter().map(|e| e.ext).collect();
    files_of_project(root, edited, &extensions)
}

/// [`project_files`] with `extensions` for TypeScript's own (a server's, which a
/// config may have set).
pub fn project_files_with(root: &Path, extensions: &[String]) -> Option<Vec<PathBuf>> {
    let extensions: Vec<&str> = extensions.iter().map(String::as_str).collect();
    files_of_project(root, &[], &extensions)
}

fn files_of_project(root: &Path, edited: &[&Path], extensions: &[&str]) -> Option<Vec<PathBuf>> {
    let config = ["tsconfig.json", "jsconfig.json"]
        .iter()
        .map(|n| root.join(n))
        .find(|p| p.is_file());
    let text = config
        .as_ref()
        .and_then(|p| crate::regular::read_to_string(p).ok())
        .unwrap_or_default();
    let is_js_project = config
        .as_ref()
        .is_some_and(|p| p.file_name() == Some(OsStr::new("jsconfig.json")));
    // tsconfig is JSON with comments; a loose look for the two switches is enough to
    // decide whether JavaScript files belong.
    let js = is_js_project
        || text.contains("\"allowJs\": true")
        || text.contains("\"allowJs\":true")
        || text.contains("\"checkJs\": true")
        || text.contains("\"checkJs\":true");
    let extensions: Vec<&str> = extensions
        .iter()
        .copied()
        .filter(|e| js || !e.contains('j'))
        .collect();
    let dirs = include_dirs(&text)
        .into_iter()
        .map(|d| root.join(d))
        .filter(|d| d.starts_with(root))
        .collect::<Vec<_>>();
    let dirs = if dirs.is_empty() {
        vec![root.to_path_buf()]
    } else {
        dirs
    };
    let mut files = Vec::new();
    for dir in dirs {
        let walk = ignore::WalkBuilder::new(&dir)
            .hidden(true)
            .filter_entry(|e| e.file_name() != "node_modules")
            .build();
        for entry in walk.flatten() {
            let path = entry.path();
            let ok = entry.file_type().is_some_and(|t| t.is_file())
                && path
                    .extension()
                    .and_then(OsStr::to_str)
                    .is_some_and(|e| extensions.contains(&e))
                && !path.to_string_lossy().ends_with(".d.ts")
                && !edited.contains(&path);
            if ok && !files.iter().any(|f: &PathBuf| f == path) {
                files.push(path.to_path_buf());
                if files.len() > MAX_PROJECT_FILES {
                    return None;
                }
            }
        }
    }
    files.sort();
    Some(files)
}

/// The leading directories of a tsconfig's `include` patterns (`src/**/*` → `src`);
/// empty when there is no `include`, or one pattern starts with a wildcard.
fn include_dirs(tsconfig: &str) -> Vec<PathBuf> {
    let Some(value) = parse_tsconfig(tsconfig) else {
        return Vec::new();
    };
    let Some(patterns) = value.get("include").and_then(|i| i.as_array()) else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for pattern in patterns.iter().filter_map(|p| p.as_str()) {
        let fixed: PathBuf = Path::new(pattern)
            .components()
            .take_while(|c| {
                let s = c.as_os_str().to_string_lossy();
                !s.contains('*') && !s.contains('?') && !s.contains('.')
            })
            .collect();
        if fixed.as_os_str().is_empty()
            || fixed
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            // `*.ts`, `./**/*`, `../shared`: the root as a whole.
            return Vec::new();
        }
        dirs.push(fixed);
    }
    dirs
}

/// A tsconfig.json (or jsconfig.json): JSON with comments and trailing commas, as
/// TypeScript reads it. `None` when it does not parse even so.
pub fn parse_tsconfig(text: &str) -> Option<serde_json::Value> {
    jsonc_parser::parse_to_serde_value(text, &jsonc_parser::ParseOptions::default()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_directories() {
        assert_eq!(
            include_dirs("{\n // c\n \"include\": [\"src/**/*\", \"test\",],\n}"),
            vec![PathBuf::from("src"), PathBuf::from("test")]
        );
        assert!(include_dirs(r#"{"include": ["*.ts"]}"#).is_empty());
        assert!(include_dirs(r#"{"include": ["../x"]}"#).is_empty());
        assert!(include_dirs(r#"{"compilerOptions": {}}"#).is_empty());
        assert_eq!(
            parse_tsconfig("{\"a\": \"//not\", /* x */ \"b\": [1,],}"),
            Some(serde_json::json!({ "a": "//not", "b": [1] }))
        );
    }

    #[test]
    fn project_files_follow_include_and_skip_the_edited_and_node_modules() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for f in [
            "src/a.ts",
            "src/b.ts",
            "src/c.js",
            "src/d.d.ts",
            "other/x.ts",
            "node_modules/m/i.ts",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "").expect("write");
        }
        std::fs::write(root.join("tsconfig.json"), r#"{"include": ["src"]}"#).expect("write");
        let a = root.join("src/a.ts");
        let files = project_files(root, &[a.as_path()]).expect("few files");
        assert_eq!(files, vec![root.join("src/b.ts")]);
        std::fs::write(
            root.join("tsconfig.json"),
            r#"{"compilerOptions": {"allowJs": true}}"#,
        )
        .expect("write");
        let files = project_files(root, &[]).expect("few files");
        assert_eq!(
            files,
            vec![
                root.join("other/x.ts"),
                root.join("src/a.ts"),
                root.join("src/b.ts"),
                root.join("src/c.js")
            ]
        );
    }
}
