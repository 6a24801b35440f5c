//! C-family source text as the preprocessor reads it, for the places that read it
//! without a compiler: clangd's preamble (`servers::clangd::protocol`), which files include which
//! and which headers an edit can break (`dependents`). Written here because what they
//! need is a few small rules, not a C parser.

/// `text` with each comment turned into a space, its line breaks kept, so that every
/// line stays where it was. String literals are not parsed: a `/*` inside one only
/// makes more of the text look like a comment.
pub fn blank_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                let end = rest[b + 2..]
                    .find("*/")
                    .map_or(rest.len(), |e| b + 2 + e + 2);
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

/// The directive on `line`, if it is one: its name (`include`, `define`, ...) and
/// what follows the name.
pub fn directive(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(rest.split_at(end))
}

/// Whether directive `name` includes a file.
pub fn is_include(name: &str) -> bool {
    matches!(name, "include" | "include_next" | "import")
}

/// The files `text` includes: the name in quotes or angle brackets after each
/// include directive (see [`is_include`]).
pub fn included_files(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let (_, rest) = directive(line).filter(|(name, _)| is_include(name))?;
            let rest = rest.trim_start();
            let close = match rest.chars().next()? {
                '"' => '"',
                '<' => '>',
                _ => return None,
            };
            let body = &rest[1..];
            Some(body[..body.find(close)?].to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_is_a_space_and_keeps_its_lines() {
        let text = "int a;/* one\ntwo */int/**/b; // three\n#define X 1\n";
        let blank = blank_comments(text);
        assert_eq!(blank, "int a; \nint b; \n#define X 1\n");
        assert_eq!(blank.lines().count(), text.lines().count());
    }

    #[test]
    fn a_directive_is_its_name_and_the_rest() {
        assert_eq!(
            directive("  #  include \"a.h\""),
            Some(("include", " \"a.h\""))
        );
        assert_eq!(
            directive("#define GET_X(p) x"),
            Some(("define", " GET_X(p) x"))
        );
        assert_eq!(directive("int x;"), None);
        assert!(is_include("include_next"));
        assert!(!is_include("define"));
    }

    #[test]
    fn the_files_included_are_named_in_quotes_or_brackets() {
        let text = "#include \"a.h\"\n  #  include <lib/b.h>\n#import \"c.h\"\n\
                    #include_next <d.h>\n#define X \"e.h\"\n#include MACRO\n";
        assert_eq!(included_files(text), ["a.h", "lib/b.h", "c.h", "d.h"]);
    }
}
