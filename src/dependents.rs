//! Likely dependents: the files an edit can break, found by a fast text scan of the
//! workspace that honours .gitignore. Most servers only report files somebody
//! opened, so these are the files the waits open and ask about.
//!
//! A file is a candidate when it names an edited module (its file stem: Python and
//! TypeScript imports, Rust `mod`/`use`) or a symbol the edit defined or removed, or
//! (Go) shares the edited file's package directory. Importers of those importers
//! follow, one level, because breaks travel through inferred types.
//!
//! C and C++ differ: a file is checked against the files it includes and nothing
//! else, so the candidates of an edited C-family file are the files that `#include`
//! it, and the files including those (one level). A source file nobody includes
//! breaks no other file, whatever symbols they share (that is the linker's business).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

/// Files larger than this are not scanned (generated code, vendored bundles).
const MAX_SCAN_BYTES: u64 = 1024 * 1024;
/// Files scanned at most, so a huge repository costs a bounded time.
const MAX_SCANNED: usize = 20_000;

/// One edited file as the scan sees it.
pub struct Edited<'a> {
    pub path: &'a Path,
    pub before: Option<&'a str>,
    pub after: Option<&'a str>,
}

/// Up to `cap` files under `root` with one of `extensions` that may depend on the
/// edited files, most likely first. The edited files themselves are excluded.
pub fn scan(root: &Path, edited: &[Edited<'_>], extensions: &[String], cap: usize) -> Vec<PathBuf> {
    if cap == 0 || edited.is_empty() {
        return Vec::new();
    }
    let edited_paths: HashSet<&Path> = edited.iter().map(|e| e.path).collect();
    let files = walk(root, extensions, &edited_paths);

    let mut stems: BTreeSet<String> = BTreeSet::new();
    let mut symbols: BTreeSet<String> = BTreeSet::new();
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    // File names of edited C-family files, as an `#include` names them.
    let mut included: BTreeSet<String> = BTreeSet::new();
    for e in edited {
        if is_c_family(e.path) {
            included.extend(file_name(e.path));
            continue;
        }
        stems.extend(module_names(e.path));
        symbols.extend(changed_symbols(
            e.before.unwrap_or(""),
            e.after.unwrap_or(""),
        ));
        if e.path.extension().is_some_and(|x| x == "go")
            && let Some(d) = e.path.parent()
        {
            dirs.insert(d.to_path_buf());
        }
    }

    // Score: same Go package 3, names an edited module 2, names a changed symbol 1.
    let mut scores: BTreeMap<PathBuf, u32> = BTreeMap::new();
    let mut texts: BTreeMap<PathBuf, String> = BTreeMap::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut score = 0;
        if path.parent().is_some_and(|d| dirs.contains(d)) {
            score = 3;
        } else if included.iter().any(|f| includes(&text, f))
            || stems.iter().any(|s| contains_word(&text, s))
        {
            score = 2;
        } else if symbols.iter().any(|s| contains_word(&text, s)) {
            score = 1;
        }
        if score > 0 {
            scores.insert(path.clone(), score);
        }
        texts.insert(path, text);
    }

    // One more level: files that import the direct importers.
    let level1: Vec<PathBuf> = scores
        .iter()
        .filter(|(_, s)| **s >= 2)
        .map(|(p, _)| p.clone())
        .collect();
    let (c_level1, other_level1): (Vec<&PathBuf>, Vec<&PathBuf>) =
        level1.iter().partition(|p| is_c_family(p));
    let second: BTreeSet<String> = other_level1.iter().flat_map(|p| module_names(p)).collect();
    let second_included: BTreeSet<String> = c_level1.iter().filter_map(|p| file_name(p)).collect();
    if !second.is_empty() || !second_included.is_empty() {
        for (path, text) in &texts {
            if scores.contains_key(path) {
                continue;
            }
            if second_included.iter().any(|f| includes(text, f))
                || (!is_c_family(path) && second.iter().any(|s| contains_word(text, s)))
            {
                scores.insert(path.clone(), 1);
            }
        }
    }

    let mut ranked: Vec<(PathBuf, u32)> = scores.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.into_iter().take(cap).map(|(p, _)| p).collect()
}

/// The first file under `root` with one of `extensions` (the walk's order), if any.
pub fn any_file(root: &Path, extensions: &[String]) -> Option<PathBuf> {
    ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .build()
        .flatten()
        .find(|entry| {
            entry.file_type().is_some_and(|t| t.is_file())
                && entry
                    .path()
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| extensions.iter().any(|x| x == e))
        })
        .map(|entry| entry.into_path())
}

fn walk(root: &Path, extensions: &[String], skip: &HashSet<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .build();
    for entry in walker.flatten() {
        if out.len() >= MAX_SCANNED {
            break;
        }
        let path = entry.path();
        let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
            continue;
        };
        if !extensions.iter().any(|x| x == ext) {
            continue;
        }
        if skip.contains(path) || !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if entry
            .metadata()
            .map(|m| m.len() > MAX_SCAN_BYTES)
            .unwrap_or(true)
        {
            continue;
        }
        out.push(path.to_path_buf());
    }
    out
}

/// C and C++ sources and headers (and Objective-C, which clangd also checks).
fn is_c_family(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some(
            "c" | "h"
                | "cc"
                | "cpp"
                | "cxx"
                | "c++"
                | "hpp"
                | "hh"
                | "hxx"
                | "h++"
                | "ipp"
                | "inl"
                | "tpp"
                | "m"
                | "mm"
        )
    )
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
}

/// Whether `text` has an `#include` (or `#import`) of a file named `name`, by itself
/// or at the end of a path: `"a.h"`, `<lib/a.h>`.
fn includes(text: &str, name: &str) -> bool {
    text.lines().any(|line| {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            return false;
        };
        let rest = rest.trim_start();
        let Some(rest) = rest
            .strip_prefix("include")
            .or_else(|| rest.strip_prefix("import"))
        else {
            return false;
        };
        let target = rest
            .trim_start()
            .trim_start_matches(['"', '<'])
            .split(['"', '>'])
            .next()
            .unwrap_or("");
        target == name || target.ends_with(&format!("/{name}"))
    })
}

/// The names other files use to refer to `path`: its stem (`greeting` for
/// `greeting.py`, `a.h` and `a` for a header), and a package directory's name for
/// `__init__.py`, `index.ts` and `mod.rs`.
fn module_names(path: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let file = path.file_name().and_then(|s| s.to_str()).unwrap_or("");
    if matches!(stem, "__init__" | "index" | "mod" | "lib" | "main") {
        if let Some(dir) = path
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|d| d.to_str())
        {
            names.push(dir.to_string());
        }
    } else if !stem.is_empty() {
        names.push(stem.to_string());
    }
    if matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("h" | "hpp" | "hh" | "hxx")
    ) {
        names.push(file.to_string());
    }
    names
}

/// Keywords that introduce a definition in the languages we know; the identifier
/// after one on a changed line is a symbol other files may use.
const DEFINERS: &[&str] = &[
    "def",
    "class",
    "function",
    "func",
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "interface",
    "const",
    "let",
    "var",
    "export",
    "typedef",
    "union",
    "static",
    "pub",
    "async",
    "impl",
];

/// Identifiers defined (or called like a function) on the lines that differ
/// between `before` and `after`.
fn changed_symbols(before: &str, after: &str) -> BTreeSet<String> {
    let old: HashSet<&str> = before.lines().collect();
    let new: HashSet<&str> = after.lines().collect();
    let changed = before
        .lines()
        .filter(|l| !new.contains(l))
        .chain(after.lines().filter(|l| !old.contains(l)));
    let mut out = BTreeSet::new();
    for line in changed {
        let words = identifiers(line);
        for (i, (w, next)) in words.iter().enumerate() {
            if w.len() < 3 || DEFINERS.contains(&w.as_str()) || is_keyword(w) {
                continue;
            }
            let after_definer = i > 0 && DEFINERS.contains(&words[i - 1].0.as_str());
            if after_definer || *next == Some('(') {
                out.insert(w.clone());
            }
        }
        if out.len() > 40 {
            break;
        }
    }
    out
}

fn is_keyword(w: &str) -> bool {
    matches!(
        w,
        "return"
            | "if"
            | "else"
            | "for"
            | "while"
            | "print"
            | "self"
            | "this"
            | "None"
            | "null"
            | "true"
            | "false"
            | "True"
            | "False"
            | "int"
            | "str"
            | "string"
            | "void"
            | "char"
            | "new"
            | "await"
            | "sizeof"
            | "printf"
            | "len"
            | "range"
            | "super"
            | "from"
            | "import"
            | "include"
            | "use"
            | "mod"
            | "crate"
    )
}

/// Identifiers of a line, each with the next non-space character after it.
fn identifiers(line: &str) -> Vec<(String, Option<char>)> {
    let mut out = Vec::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_alphabetic() || chars[i] == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let next = chars[i..].iter().find(|c| !c.is_whitespace()).copied();
            out.push((word, next));
        } else {
            i += 1;
        }
    }
    out
}

/// `needle` occurs in `text` with no identifier character on either side.
fn contains_word(text: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(pos) = text[from..].find(needle) {
        let start = from + pos;
        let end = start + needle.len();
        let before_ok = text[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !is_ident(c));
        let after_ok = text[end..].chars().next().is_none_or(|c| !is_ident(c));
        if before_ok && after_ok {
            return true;
        }
        from = end;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_boundaries() {
        assert!(contains_word("from greeting import greet", "greeting"));
        assert!(!contains_word("from greetings import x", "greeting"));
        assert!(contains_word("#include \"a.h\"", "a.h"));
        assert!(!contains_word("int aa;", "a"));
    }

    #[test]
    fn c_dependents_are_includers_not_namesakes() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        std::fs::write(root.join("a.h"), "int greet(int);\n")?;
        std::fs::write(
            root.join("a.c"),
            "#include \"a.h\"\nint greet(int n) { return n; }\n",
        )?;
        std::fs::write(root.join("b.h"), "#include <lib/a.h>\n")?;
        std::fs::write(root.join("b.c"), "  #  include \"b.h\"\nint x = 1;\n")?;
        std::fs::write(
            root.join("c.c"),
            "int greet(int);\nint y(void) { return greet(1); }\n",
        )?;
        std::fs::write(root.join("d.c"), "#include \"data.h\" // not a.h\n")?;
        let exts: Vec<String> = ["c", "h"].iter().map(|e| e.to_string()).collect();
        let header = root.join("a.h");
        let edited = [Edited {
            path: &header,
            before: Some("int greet(int);\n"),
            after: Some("int greet(int, int);\n"),
        }];
        let got = scan(root, &edited, &exts, 10);
        assert_eq!(
            got,
            vec![root.join("a.c"), root.join("b.h"), root.join("b.c")],
            "includers first, then the includers of an including header"
        );
        let source = root.join("a.c");
        let edited = [Edited {
            path: &source,
            before: Some("int greet(int n) { return n; }\n"),
            after: Some("int greet(int n) { return n + 1; }\n"),
        }];
        assert!(
            scan(root, &edited, &exts, 10).is_empty(),
            "a source file nobody includes breaks no other file"
        );
        Ok(())
    }

    #[test]
    fn symbols_of_changed_definitions() {
        let s = changed_symbols(
            "def greet(name):\n    pass\n",
            "def greet(name, greeting):\n    pass\n",
        );
        assert!(s.contains("greet"), "{s:?}");
        assert!(!s.contains("name"), "{s:?}");
    }

    #[test]
    fn finds_importers_and_their_importers_but_not_strangers() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        std::fs::write(root.join("a.py"), "def greet(name):\n    return name\n")?;
        std::fs::write(root.join("b.py"), "from a import greet\nx = greet('b')\n")?;
        std::fs::write(root.join("c.py"), "import b\nprint(b.x)\n")?;
        std::fs::write(root.join("d.py"), "print('alone')\n")?;
        std::fs::write(root.join("e.txt"), "from a import greet\n")?;
        let a = root.join("a.py");
        let edited = [Edited {
            path: &a,
            before: Some("def greet(name):\n    return name\n"),
            after: Some("def greet(name, g):\n    return name\n"),
        }];
        let got = scan(root, &edited, &["py".to_string()], 10);
        assert_eq!(got, vec![root.join("b.py"), root.join("c.py")]);
        Ok(())
    }
}
