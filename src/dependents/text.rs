//! Text evidence: the symbols an edit changed, the names other files use for a file,
//! and whole-word search. Used to rank importers (one that names a changed symbol is
//! the likeliest to break) and, for languages without import rules, as the evidence
//! itself.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use crate::servers::languages;

/// The names other files use to refer to `path`: its stem (`greeting` for
/// `greeting.py`; `a.h` and `a` for a header, or another file included by name), and
/// a package directory's name for `__init__.py`, `index.ts` and `mod.rs`.
pub(super) fn module_names(path: &Path) -> Vec<String> {
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
    if path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(languages::is_included)
    {
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

/// The lines that differ between `before` and `after`: those of each that the other
/// lacks (a line moved counts as unchanged).
pub(super) fn changed_lines<'a>(before: &'a str, after: &'a str) -> Vec<&'a str> {
    let old: HashSet<&str> = before.lines().collect();
    let new: HashSet<&str> = after.lines().collect();
    before
        .lines()
        .filter(|l| !new.contains(l))
        .chain(after.lines().filter(|l| !old.contains(l)))
        .collect()
}

/// Identifiers defined (or called like a function) on the lines that differ
/// between `before` and `after`.
pub(super) fn changed_symbols(before: &str, after: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in changed_lines(before, after) {
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
pub(super) fn contains_word(text: &str, needle: &str) -> bool {
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
