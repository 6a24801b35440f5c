//! C and C++ headers among an edit's dependents. A header that includes an edited one
//! is compiled only as part of the units that include it, and clangd checks it as a
//! file of its own only when it is opened: a build of its own, as costly as a unit's
//! (on Lua, 15 headers beside 18 units for one edit to `lobject.h`). Such a header is
//! opened only where it can break by itself: its code (not its `#define` bodies, which
//! are checked where they are expanded) names an identifier on a line the edit
//! changed, or it includes a deleted file, or no unit includes it. Any other break in
//! it is still reported, by each unit that includes it, at the `#include` line
//! ("In included file"): found, at a coarser place, never missed.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::servers::languages;

/// Whether `path` is a header (an included C-family file).
pub(super) fn is_header(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(languages::is_included)
}

/// The identifiers on the lines that differ between `before` and `after`, outside
/// comments, C keywords left out.
pub(super) fn changed_identifiers(before: &str, after: &str) -> BTreeSet<String> {
    let before = code(before);
    let after = code(after);
    let old: HashSet<&str> = before.lines().collect();
    let new: HashSet<&str> = after.lines().collect();
    before
        .lines()
        .filter(|l| !new.contains(l))
        .chain(after.lines().filter(|l| !old.contains(l)))
        .flat_map(identifiers)
        .filter(|w| !C_KEYWORDS.contains(w))
        .map(str::to_string)
        .collect()
}

/// Whether header `text` names one of `names` in its own code: outside comments,
/// `#define` bodies and `#include` lines.
pub(super) fn names_in_code(text: &str, names: &BTreeSet<String>) -> bool {
    let code = code(text);
    let mut in_directive = false;
    for line in code.lines() {
        let continued = in_directive;
        in_directive = line.trim_end().ends_with('\\') && (continued || is_macro_line(line));
        if continued || is_macro_line(line) {
            continue;
        }
        if identifiers(line).any(|w| names.contains(w)) {
            return true;
        }
    }
    false
}

/// The headers of `dependents` that need not be opened (see the module docs): each
/// names no identifier of `changed`, includes no deleted file, and is included,
/// through any chain of headers, by a file that is not a header. `importers` maps a
/// file to the files that include it.
pub(super) fn covered_by_units(
    dependents: &[PathBuf],
    texts: &HashMap<PathBuf, String>,
    changed: &BTreeSet<String>,
    deleted: bool,
    importers: &HashMap<PathBuf, Vec<(PathBuf, bool)>>,
) -> HashSet<PathBuf> {
    if deleted {
        return HashSet::new();
    }
    dependents
        .iter()
        .filter(|path| is_header(path))
        .filter(|path| texts.get(*path).is_some_and(|t| !names_in_code(t, changed)))
        .filter(|path| included_by_a_unit(path, importers))
        .cloned()
        .collect()
}

/// Whether a file that is not a header includes `header`, directly or through other
/// headers.
fn included_by_a_unit(header: &Path, importers: &HashMap<PathBuf, Vec<(PathBuf, bool)>>) -> bool {
    let mut seen: HashSet<&Path> = HashSet::new();
    let mut queue: Vec<&Path> = vec![header];
    while let Some(file) = queue.pop() {
        for (importer, _) in importers.get(file).into_iter().flatten() {
            if !is_header(importer) {
                return true;
            }
            if seen.insert(importer) {
                queue.push(importer);
            }
        }
    }
    false
}

/// `#define` and `#include` lines (and `#import`, `#undef`): what they name is not
/// code of the file.
fn is_macro_line(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix('#') else {
        return false;
    };
    let rest = rest.trim_start();
    ["define", "include", "import", "undef"]
        .iter()
        .any(|d| rest.starts_with(d))
}

/// `text` with its comments blanked (strings are not told apart: a `/*` inside one
/// only makes the rule open more).
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                let end = rest[b + 2..]
                    .find("*/")
                    .map_or(rest.len(), |e| b + 2 + e + 2);
                // Keep the line breaks, so that directives stay on their lines.
                out.extend(rest[b..end].chars().filter(|&c| c == '\n'));
                rest = &rest[end..];
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                let end = rest[l..].find('\n').map_or(rest.len(), |e| l + e);
                rest = &rest[end..];
            }
            _ => {
                out.push_str(rest);
                rest = "";
            }
        }
    }
    out
}

/// The words of `line` that can be identifiers.
fn identifiers(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        })
}

/// C's keywords and the C++ ones a header commonly has: every header names them.
const C_KEYWORDS: &[&str] = &[
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "class",
    "const",
    "constexpr",
    "continue",
    "default",
    "define",
    "defined",
    "do",
    "double",
    "else",
    "endif",
    "enum",
    "extern",
    "false",
    "float",
    "for",
    "goto",
    "if",
    "ifdef",
    "ifndef",
    "include",
    "inline",
    "int",
    "long",
    "namespace",
    "nullptr",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "template",
    "true",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "using",
    "void",
    "volatile",
    "while",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_gives_its_code_identifiers_not_its_comment() {
        let before = "struct P {\n  int sizeabs;  /* size of 'abs' */\n};\n";
        let after = "struct P {\n  int nabs;  /* size of 'abs' */\n};\n";
        let ids = changed_identifiers(before, after);
        assert_eq!(
            ids.into_iter().collect::<Vec<_>>(),
            ["nabs", "sizeabs"],
            "no keyword, no comment word"
        );
    }

    #[test]
    fn a_header_names_an_identifier_in_its_code_not_in_its_macros() {
        let changed: BTreeSet<String> = ["sizeabs".to_string()].into();
        let in_macro = "#include \"p.h\"\n#define SZ(p) \\\n  ((p)->sizeabs)\n/* sizeabs */\n";
        assert!(!names_in_code(in_macro, &changed));
        let in_code = "#include \"p.h\"\nstatic int f(struct P *p) { return p->sizeabs; }\n";
        assert!(names_in_code(in_code, &changed));
        let after_macro = "#define A 1 \\\n  + 2\nint sizeabs_of(void);\nint x = sizeabs;\n";
        assert!(names_in_code(after_macro, &changed), "the macro ended");
    }

    #[test]
    fn only_headers_without_evidence_and_included_by_a_unit_are_covered() {
        let p = |s: &str| PathBuf::from(format!("/w/{s}"));
        let changed: BTreeSet<String> = ["sizeabs".to_string()].into();
        let texts: HashMap<PathBuf, String> = [
            (p("quiet.h"), "#include \"p.h\"\nint g(void);\n".to_string()),
            (
                p("uses.h"),
                "#include \"p.h\"\nint u = sizeabs;\n".to_string(),
            ),
            (p("orphan.h"), "#include \"p.h\"\n".to_string()),
            (p("deep.h"), "#include \"quiet.h\"\n".to_string()),
            (p("a.c"), "#include \"deep.h\"\n".to_string()),
        ]
        .into();
        let importers: HashMap<PathBuf, Vec<(PathBuf, bool)>> = [
            (
                p("p.h"),
                vec![
                    (p("quiet.h"), false),
                    (p("uses.h"), false),
                    (p("orphan.h"), false),
                ],
            ),
            (p("quiet.h"), vec![(p("deep.h"), false)]),
            (p("deep.h"), vec![(p("a.c"), false)]),
            (p("uses.h"), vec![(p("a.c"), false)]),
        ]
        .into();
        let dependents: Vec<PathBuf> = texts.keys().cloned().collect();
        let covered = covered_by_units(&dependents, &texts, &changed, false, &importers);
        let mut covered: Vec<_> = covered.into_iter().collect();
        covered.sort();
        assert_eq!(covered, [p("deep.h"), p("quiet.h")]);
        assert!(covered_by_units(&dependents, &texts, &changed, true, &importers).is_empty());
    }
}
