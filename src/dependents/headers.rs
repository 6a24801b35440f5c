//! C and C++ headers among an edit's dependents. A header that includes an edited one
//! is compiled only as part of the units that include it, and clangd checks it as a
//! file of its own only when it is opened: a build of its own, as costly as a unit's
//! (on Lua, 15 headers beside 18 units for one edit to `lobject.h`). And clangd 14
//! does not report a break in a header a unit includes in its preamble (its first
//! lines of directives) at all: a header that can break must be opened itself.
//!
//! A header can break only through what the edit changed: it names, in its own code
//! (not in its `#define` bodies, which are checked where they are expanded), an
//! identifier of a changed line (only the declared name of a line that is one simple
//! declaration: its type is used, not changed), or one carried from it by a macro, typedef or
//! declaration of any header (a line naming a changed identifier passes the change on
//! to what the line defines, to a fixpoint: `#define GET_X(p) ((p)->x)` carries a
//! renamed `x` to every user of `GET_X`). Such headers are opened, as are all of them
//! when the edit deletes a file or changes a directive other than a `#define` (an
//! `#include` removed takes declarations from files that name nothing changed), and
//! any header no unit includes. The rest are compiled, unopened, as part of the units
//! that include them.
//!
//! Text evidence, not a compiler's: it errs on the side of opening (a short or common
//! identifier carries the change to most headers), and where it grows past a bound
//! every header is opened.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::c_source::{self, blank_comments, directive};
use crate::servers::languages;

use super::text;

/// Whether `path` is a header (an included C-family file).
pub(super) fn is_header(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(languages::is_included)
}

/// What an edit changed, as this rule reads it.
#[derive(Debug, Default)]
pub(super) struct Change {
    /// The identifiers on the lines that differ, outside comments, keywords left out.
    pub names: BTreeSet<String>,
    /// A changed line is a directive other than `#define`, or a file was deleted:
    /// what it does to other headers is not told by names.
    pub structural: bool,
}

impl Change {
    /// Add the change from `before` to `after` (`None`: the file was deleted).
    pub(super) fn add(&mut self, before: &str, after: Option<&str>) {
        let Some(after) = after else {
            self.structural = true;
            return;
        };
        let before = blank_comments(before);
        let after = blank_comments(after);
        for line in text::changed_lines(&before, &after) {
            if directive(line).is_some() && !is_define(line) {
                self.structural = true;
            }
            if let Some(declared) = declared_alone(line) {
                self.names.insert(declared.to_string());
                continue;
            }
            self.names.extend(
                identifiers(line)
                    .filter(|w| !C_KEYWORDS.contains(w))
                    .map(str::to_string),
            );
        }
    }
}

/// The name a line declares when the line is one simple declaration and nothing
/// else: a type named once, then the declared name, an optional array size, `;`
/// (`lu_byte hotcount;`, `struct Node *next;`, `TValue k[4];`). The type on such a
/// line is used, not changed: adding or removing the line changes only what the
/// declared name means, so a header that merely uses the type is not reached (on
/// Lua, a field added to `struct Proto` opened `lstate.h`, `lparser.h` and `ltm.h`
/// for naming `lu_byte`). Any other shape (a function, a macro, several
/// declarators, a line of a longer declaration) is `None`, and every name on the
/// line counts.
fn declared_alone(line: &str) -> Option<&str> {
    let body = line.trim().strip_suffix(';')?.trim_end();
    // An array size names constants the line uses; it declares nothing.
    let body = match body.strip_suffix(']') {
        Some(sized) => sized[..sized.rfind('[')?].trim_end(),
        None => body,
    };
    let shape_ok = body
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*' || c.is_whitespace());
    let mut names = identifiers(body).filter(|w| !C_KEYWORDS.contains(w));
    let (Some(_type), Some(declared), None) = (names.next(), names.next(), names.next()) else {
        return None;
    };
    (shape_ok && body.ends_with(declared)).then_some(declared)
}

/// Identifiers carried past this many make every header count as reached.
const MAX_CARRIED: usize = 5_000;

/// `names`, and the name each line of `texts` naming one of them defines (see
/// [`defined_name`]), to a fixpoint; `None` past [`MAX_CARRIED`].
fn carried(names: &BTreeSet<String>, texts: &[&str]) -> Option<HashSet<String>> {
    let code: Vec<String> = texts.iter().map(|t| logical_lines(t)).collect();
    // Each line naming something, with what it defines.
    let mut lines: Vec<Option<&str>> = Vec::new();
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for text in &code {
        let mut depth = 0usize;
        for line in text.lines() {
            let defines = defined_name(line, depth);
            // `extern "C" {` and a namespace wrap declarations, not a body.
            let wrapper = ["extern", "namespace"]
                .iter()
                .any(|w| line.trim_start().starts_with(w));
            if directive(line).is_none() && !wrapper {
                depth =
                    (depth + line.matches('{').count()).saturating_sub(line.matches('}').count());
            }
            for w in identifiers(line).filter(|w| !C_KEYWORDS.contains(w)) {
                by_name.entry(w).or_default().push(lines.len());
            }
            lines.push(defines);
        }
    }
    let mut reached: HashSet<String> = names.iter().cloned().collect();
    let mut queue: Vec<String> = reached.iter().cloned().collect();
    let mut absorbed: HashSet<usize> = HashSet::new();
    while let Some(name) = queue.pop() {
        for &i in by_name.get(name.as_str()).into_iter().flatten() {
            if !absorbed.insert(i) {
                continue;
            }
            if let Some(w) = lines[i]
                && reached.insert(w.to_string())
            {
                queue.push(w.to_string());
            }
        }
        if reached.len() > MAX_CARRIED {
            return None;
        }
    }
    Some(reached)
}

/// What a line of a header at brace `depth` defines, read as C declares: a macro's
/// name; the name before the line's first `(` (a function, a C++ method; `int (f)
/// (void)` names `f`; in a body, a call, which only carries more); else, at the top
/// level, the last name before its first `;`, `{`, `=`, `[` or `,` (a variable, a
/// typedef, a struct's tag). A field or a local whose type changed breaks no one who
/// uses it by name, and what a field's rename breaks names the field. A use of a
/// changed name on the line carries the change to what it defines.
fn defined_name(line: &str, depth: usize) -> Option<&str> {
    fn last(part: &str) -> Option<&str> {
        identifiers(part).filter(|w| !C_KEYWORDS.contains(w)).last()
    }
    if let Some((name, rest)) = directive(line) {
        if name != "define" {
            return None;
        }
        return identifiers(rest).next();
    }
    if depth > 0 && !line.contains('(') {
        return None;
    }
    match line.split_once('(') {
        Some((head, rest)) => {
            let inner = rest.split_once(')').map(|(inner, _)| inner.trim());
            match inner {
                Some(name)
                    if identifiers(name).count() == 1 && identifiers(name).next() == Some(name) =>
                {
                    Some(name)
                }
                _ => last(head),
            }
        }
        None => last(&line[..line.find([';', '{', '=', '[', ',']).unwrap_or(line.len())]),
    }
}

/// Whether header `text` names one of `names` in its own code: outside comments,
/// `#define` bodies and `#include` lines.
fn names_in_code(text: &str, names: &HashSet<String>) -> bool {
    logical_lines(text)
        .lines()
        .filter(|line| !is_define(line) && !is_include(line))
        .any(|line| identifiers(line).any(|w| names.contains(w)))
}

/// `text` as the lines the preprocessor reads: comments out (a word of a comment
/// names nothing), and a line continued with `\` joined to the next (a macro's body
/// is its definition's).
fn logical_lines(text: &str) -> String {
    blank_comments(text)
        .replace("\\\r\n", " ")
        .replace("\\\n", " ")
}

/// The headers of `dependents` that need not be opened (see the module docs): what
/// the edit changed reaches none of their code, and a unit includes each (one no unit
/// includes is compiled by nobody unless opened).
/// `texts` are every file read, `edited` the edited files' texts after the edit, and
/// `importers` maps a file to the files that include it.
pub(super) fn unreached(
    dependents: &[PathBuf],
    texts: &HashMap<PathBuf, String>,
    edited: &[&str],
    change: &Change,
    importers: &HashMap<PathBuf, Vec<(PathBuf, bool)>>,
) -> HashSet<PathBuf> {
    if change.structural || !dependents.iter().any(|p| is_header(p)) {
        return HashSet::new();
    }
    let headers: Vec<&str> = texts
        .iter()
        .filter(|(p, _)| is_header(p))
        .map(|(_, t)| t.as_str())
        .chain(edited.iter().copied())
        .collect();
    let Some(reached) = carried(&change.names, &headers) else {
        return HashSet::new();
    };
    dependents
        .iter()
        .filter(|path| is_header(path))
        .filter(|path| {
            texts
                .get(*path)
                .is_some_and(|t| !names_in_code(t, &reached))
        })
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

/// `#define` and `#undef`: what they name is checked where it is expanded.
fn is_define(line: &str) -> bool {
    directive(line).is_some_and(|(name, _)| matches!(name, "define" | "undef"))
}

/// `#include` and `#import`: what they name is a file.
fn is_include(line: &str) -> bool {
    directive(line).is_some_and(|(name, _)| c_source::is_include(name))
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

    fn names(words: &[&str]) -> HashSet<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_changed_line_gives_its_code_identifiers_not_its_comment() {
        let mut change = Change::default();
        change.add(
            "struct P {\n  int sizeabs;  /* size of 'abs' */\n};\n",
            Some("struct P {\n  int nabs;  /* size of 'abs' */\n};\n"),
        );
        assert_eq!(
            change.names.iter().collect::<Vec<_>>(),
            ["nabs", "sizeabs"],
            "no keyword, no comment word"
        );
        assert!(!change.structural);
        change.add("#define N 1\n", Some("#define N 2\n"));
        assert!(!change.structural, "a #define is told by its name");
        change.add("#include <a.h>\n", Some("\n"));
        assert!(change.structural, "an #include removed");
        let mut deleted = Change::default();
        deleted.add("int x;\n", None);
        assert!(deleted.structural);
    }

    #[test]
    fn a_simple_declaration_changes_its_declared_name_not_its_type() {
        let mut change = Change::default();
        change.add(
            "typedef struct Proto {\n  GCObject *gclist;\n} Proto;\n",
            Some("typedef struct Proto {\n  GCObject *gclist;\n  lu_byte hotcount;  /* new */\n} Proto;\n"),
        );
        assert_eq!(change.names.iter().collect::<Vec<_>>(), ["hotcount"]);
        for (line, declared) in [
            ("  struct Node *next;", Some("next")),
            ("TValue k[LUA_MINSTACK];", Some("k")),
            ("extern const Mbuffer *gbuf;", Some("gbuf")),
            ("typedef lu_byte ls_byte;", Some("ls_byte")),
            ("typedef int lu_byte;", None),
            ("  int (*f)(lua_State *L);", None),
            ("LUAI_FUNC Table *luaH_new (lua_State *L);", None),
            ("  Node *a, *b;", None),
            ("  lu_byte x = LIMIT;", None),
            ("  lu_byte x; \\", None),
            ("  return limit;", None),
        ] {
            assert_eq!(declared_alone(line), declared, "{line}");
        }
    }

    #[test]
    fn a_header_names_an_identifier_in_its_code_not_in_its_macros() {
        let changed = names(&["sizeabs"]);
        let in_macro = "#include \"p.h\"\n#define SZ(p) \\\n  ((p)->sizeabs)\n/* sizeabs */\n";
        assert!(!names_in_code(in_macro, &changed));
        let in_code = "#include \"p.h\"\nstatic int f(struct P *p) { return p->sizeabs; }\n";
        assert!(names_in_code(in_code, &changed));
        let after_macro = "#define A 1 \\\n  + 2\nint x = sizeabs;\n";
        assert!(names_in_code(after_macro, &changed), "the macro ended");
    }

    #[test]
    fn a_macro_or_typedef_carries_a_changed_name_to_its_users() {
        let changed: BTreeSet<String> = ["x".to_string()].into();
        let texts = [
            "#define GET_X(p) ((p)->x) /* unrelated */\n",
            "typedef struct Point Pt;\n#define PT_X(q) GET_X(q)\n",
            "int unrelated(int y);\n",
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint get(int x);\nstruct S {\n  int x;\n};\n",
        ];
        let reached = carried(&changed, &texts).unwrap_or_default();
        for w in ["x", "GET_X", "PT_X", "get"] {
            assert!(reached.contains(w), "{w}");
        }
        assert!(
            !reached.contains("p"),
            "a macro's parameter is no definition"
        );
        assert!(!reached.contains("Pt"), "a line naming nothing reached");
        assert!(!reached.contains("S"), "a field named x defines nothing");
        assert!(!reached.contains("unrelated"), "nor a comment");
    }

    #[test]
    fn a_line_defines_its_macro_function_or_declarator() {
        let top = |line| defined_name(line, 0);
        assert_eq!(top("#define GET_X(p) ((p)->x)"), Some("GET_X"));
        assert_eq!(
            top("LUAI_FUNC char *luaZ_openspace (lua_State *L, Mbuffer *buff);"),
            Some("luaZ_openspace")
        );
        assert_eq!(
            top("LUALIB_API int (luaL_loadbufferx) (lua_State *L, const char *buff,"),
            Some("luaL_loadbufferx")
        );
        assert_eq!(top("extern Mbuffer *gbuf;"), Some("gbuf"));
        assert_eq!(top("typedef struct Point Pt;"), Some("Pt"));
        assert_eq!(top("typedef struct Point {"), Some("Point"));
        assert_eq!(top("#include \"p.h\""), None);
        assert_eq!(defined_name("  Mbuffer *buff;", 1), None, "a field");
        assert_eq!(
            defined_name("  virtual Size length(Mbuffer *b) const;", 1),
            Some("length"),
            "a method"
        );
        assert_eq!(defined_name("#define IN(x) x", 1), Some("IN"));
    }

    #[test]
    fn only_headers_the_change_does_not_reach_and_a_unit_includes_go_unopened() {
        let p = |s: &str| PathBuf::from(format!("/w/{s}"));
        let texts: HashMap<PathBuf, String> = [
            (p("quiet.h"), "#include \"p.h\"\nint g(void);\n".to_string()),
            (
                p("uses.h"),
                "#include \"p.h\"\nint u = sizeabs;\n".to_string(),
            ),
            (p("macro.h"), "#define SZ(p) ((p)->sizeabs)\n".to_string()),
            (
                p("via.h"),
                "#include \"p.h\"\nint v(struct P *p) { return SZ(p); }\n".to_string(),
            ),
            (p("orphan.h"), "#include \"p.h\"\n".to_string()),
            (p("deep.h"), "#include \"quiet.h\"\n".to_string()),
            (
                p("a.c"),
                "#include \"deep.h\"\n#include \"uses.h\"\n#include \"via.h\"\n".to_string(),
            ),
        ]
        .into();
        let importers: HashMap<PathBuf, Vec<(PathBuf, bool)>> = [
            (
                p("p.h"),
                vec![
                    (p("quiet.h"), false),
                    (p("uses.h"), false),
                    (p("via.h"), false),
                    (p("orphan.h"), false),
                ],
            ),
            (p("quiet.h"), vec![(p("deep.h"), false)]),
            (p("deep.h"), vec![(p("a.c"), false)]),
            (p("uses.h"), vec![(p("a.c"), false)]),
            (p("via.h"), vec![(p("a.c"), false)]),
        ]
        .into();
        let dependents: Vec<PathBuf> = texts
            .keys()
            .filter(|k| **k != p("macro.h"))
            .cloned()
            .collect();
        let edited = ["struct P { int nabs; };\n"];
        let mut change = Change::default();
        change.add("struct P { int sizeabs; };\n", Some(edited[0]));
        let unopened = unreached(&dependents, &texts, &edited, &change, &importers);
        let mut unopened: Vec<_> = unopened.into_iter().collect();
        unopened.sort();
        assert_eq!(unopened, [p("deep.h"), p("quiet.h")]);
        change.structural = true;
        assert!(unreached(&dependents, &texts, &edited, &change, &importers).is_empty());
    }
}
