//! Before and after: which diagnostics an edit introduced, which it fixed.
//!
//! [`LineMap`] is a line diff of a file's text before and after the edit; it tells where
//! an untouched line went and which region of the new text replaced a rewritten one.
//! [`classify`] uses it to pair each diagnostic after the edit with an equal one from
//! before (docs/SPEC.md section 2, step 8).
//!
//! The line diff is `diffy`'s Myers diff with no context lines, so every hunk it returns
//! is exactly one changed region. `diffy` is already a dependency (the patch parser uses
//! it), and we need nothing `similar` would add.

use std::collections::HashMap;
use std::ops::Range;

use lsp_types::Diagnostic;

use crate::model::{Identity, Reported, effective_severity};

/// One changed region: `old` lines of the old text were replaced by `new` lines of the
/// new text (0-based, end exclusive; either may be empty).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    old: Range<u32>,
    new: Range<u32>,
}

/// Where each line of a file's old text is in its new text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineMap {
    /// Sorted, disjoint, in file order.
    hunks: Vec<Hunk>,
}

impl LineMap {
    /// A line diff of `before` and `after`.
    pub fn new(before: &str, after: &str) -> LineMap {
        if before == after {
            return LineMap::identity();
        }
        // A last line without a newline is a different diff line from the same text with
        // one; LSP counts both as the same line, so give both texts a final newline.
        let before = with_final_newline(before);
        let after = with_final_newline(after);
        let patch = diffy::DiffOptions::new()
            .set_context_len(0)
            .create_patch(&before, &after);

        let mut hunks = Vec::new();
        for hunk in patch.hunks() {
            let mut old = zero_based_start(hunk.old_range());
            let mut new = zero_based_start(hunk.new_range());
            // Walk the lines rather than trust the ranges alone: a hunk may hold several
            // changed regions separated by context if diffy ever merges them.
            let mut current: Option<Hunk> = None;
            for line in hunk.lines() {
                match line {
                    diffy::Line::Context(_) => {
                        hunks.extend(current.take());
                        old += 1;
                        new += 1;
                    }
                    diffy::Line::Delete(_) => {
                        current
                            .get_or_insert(Hunk {
                                old: old..old,
                                new: new..new,
                            })
                            .old
                            .end += 1;
                        old += 1;
                    }
                    diffy::Line::Insert(_) => {
                        current
                            .get_or_insert(Hunk {
                                old: old..old,
                                new: new..new,
                            })
                            .new
                            .end += 1;
                        new += 1;
                    }
                }
            }
            hunks.extend(current);
        }
        LineMap { hunks }
    }

    /// The map of a file the edit did not change.
    pub fn identity() -> LineMap {
        LineMap { hunks: Vec::new() }
    }

    /// Where 0-based line `old_line` of the old text is in the new text; `None` when the
    /// edit changed or removed it.
    pub fn map(&self, old_line: u32) -> Option<u32> {
        let mut delta: i64 = 0;
        for hunk in &self.hunks {
            if old_line < hunk.old.start {
                break;
            }
            if hunk.old.contains(&old_line) {
                return None;
            }
            delta = i64::from(hunk.new.end) - i64::from(hunk.old.end);
        }
        u32::try_from(i64::from(old_line) + delta).ok()
    }

    /// For a line the edit changed: the lines of the new text that replaced its changed
    /// region (possibly empty, when the region was only deleted). `None` when the line is
    /// untouched (use [`LineMap::map`]).
    pub fn changed_region(&self, old_line: u32) -> Option<Range<u32>> {
        self.hunks
            .iter()
            .find(|hunk| hunk.old.contains(&old_line))
            .map(|hunk| hunk.new.clone())
    }
}

fn with_final_newline(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_empty() || text.ends_with('\n') {
        text.into()
    } else {
        format!("{text}\n").into()
    }
}

/// A unified-diff range start is 1-based, except that an empty range names the line
/// before it; both cases give the 0-based index of the region's first line.
fn zero_based_start(range: diffy::HunkRange) -> u32 {
    let start = if range.is_empty() {
        range.start()
    } else {
        range.start().saturating_sub(1)
    };
    u32::try_from(start).unwrap_or(u32::MAX)
}

/// The diagnostics of one file after the edit, and what the edit fixed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Classified {
    /// Every distinct diagnostic after the edit, in the server's order, each marked new
    /// or not.
    pub diagnostics: Vec<Reported>,
    /// Diagnostics from before the edit with no equal one after it.
    pub fixed: Vec<Diagnostic>,
}

/// Mark each of `after` new unless an equal diagnostic was in `before` at the place
/// `map` moves it to; what of `before` is left unmatched was fixed.
///
/// Equal means the same severity, source, code and message (its first line: see
/// [`same_across_the_edit`]). Place means the same range
/// once the before range's lines are mapped (columns compared as they are). A before
/// diagnostic that started on a line the edit rewrote still matches an after one that
/// starts inside the region replacing it: the same problem survived the rewrite.
/// Matching is one to one, so two equal problems before excuse two after, not three.
/// Exact duplicates (servers publish them) are dropped from both sides first.
pub fn classify(before: &[Diagnostic], after: &[Diagnostic], map: &LineMap) -> Classified {
    let before = dedup(before);
    let after = dedup(after);

    let mut by_message: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, diagnostic) in after.iter().enumerate() {
        by_message
            .entry(headline(&diagnostic.message))
            .or_default()
            .push(index);
    }
    let mut after_matched = vec![false; after.len()];
    let mut before_matched = vec![false; before.len()];

    // Exact places first, so a looser match in a rewritten region cannot take an after
    // diagnostic that an untouched one needs.
    for (b, old) in before.iter().enumerate() {
        let (Some(start), Some(end)) = (map.map(old.range.start.line), map.map(old.range.end.line))
        else {
            continue;
        };
        let found = candidates(&by_message, old).find(|&a| {
            let new = after[a];
            !after_matched[a]
                && same_across_the_edit(old, new)
                && new.range.start.line == start
                && new.range.end.line == end
                && new.range.start.character == old.range.start.character
                && new.range.end.character == old.range.end.character
        });
        if let Some(a) = found {
            after_matched[a] = true;
            before_matched[b] = true;
        }
    }

    for (b, old) in before.iter().enumerate() {
        if before_matched[b] {
            continue;
        }
        // Only a start on a rewritten line earns the looser match; a start on an
        // untouched line had its exact chance above (the end may then lie anywhere).
        let Some(region) = map.changed_region(old.range.start.line) else {
            if map.map(old.range.end.line).is_some() {
                continue;
            }
            // The start survived but the end was rewritten: the start must still be
            // exactly where it was.
            let Some(start) = map.map(old.range.start.line) else {
                continue;
            };
            let found = candidates(&by_message, old).find(|&a| {
                let new = after[a];
                !after_matched[a]
                    && same_across_the_edit(old, new)
                    && new.range.start.line == start
                    && new.range.start.character == old.range.start.character
            });
            if let Some(a) = found {
                after_matched[a] = true;
                before_matched[b] = true;
            }
            continue;
        };
        let found = candidates(&by_message, old).find(|&a| {
            let new = after[a];
            !after_matched[a]
                && same_across_the_edit(old, new)
                && region.contains(&new.range.start.line)
        });
        if let Some(a) = found {
            after_matched[a] = true;
            before_matched[b] = true;
        }
    }

    Classified {
        diagnostics: after
            .iter()
            .zip(&after_matched)
            .map(|(diagnostic, &matched)| Reported::new((*diagnostic).clone(), !matched))
            .collect(),
        fixed: before
            .iter()
            .zip(&before_matched)
            .filter(|&(_, &matched)| !matched)
            .map(|(diagnostic, _)| (*diagnostic).clone())
            .collect(),
    }
}

fn candidates<'a>(
    by_message: &'a HashMap<&str, Vec<usize>>,
    old: &Diagnostic,
) -> impl Iterator<Item = usize> + 'a {
    by_message
        .get(headline(&old.message))
        .into_iter()
        .flatten()
        .copied()
}

/// Same severity (missing counts as error, as it prints), source, code and message.
/// Whether `new`, after the edit, is the problem `old` was before it: as
/// [`same_problem`], but the message compared by its first line. pyright and tsc
/// elaborate a message on further lines with the types involved ("Return type
/// mismatch: base method returns type X..."), which an edit elsewhere changes while the
/// problem stays the one that stood before; the batch checkers' own new-error rule
/// reads the first line too.
fn same_across_the_edit(old: &Diagnostic, new: &Diagnostic) -> bool {
    effective_severity(old.severity) == effective_severity(new.severity)
        && old.source == new.source
        && old.code == new.code
        && headline(&old.message) == headline(&new.message)
}

/// A message's first line.
fn headline(message: &str) -> &str {
    message.lines().next().unwrap_or("")
}

/// The distinct diagnostics of `diagnostics`, first occurrence kept, order kept.
fn dedup(diagnostics: &[Diagnostic]) -> Vec<&Diagnostic> {
    let mut seen = std::collections::HashSet::new();
    diagnostics
        .iter()
        .filter(|diagnostic| seen.insert(Identity(diagnostic)))
        .collect()
}

#[cfg(test)]
mod tests {
    use lsp_types::{DiagnosticSeverity, NumberOrString, Position};

    use super::*;

    fn diag(line: u32, character: u32, message: &str) -> Diagnostic {
        Diagnostic {
            range: lsp_types::Range {
                start: Position { line, character },
                end: Position {
                    line,
                    character: character + 3,
                },
            },
            severity: Some(DiagnosticSeverity::ERROR),
            code: Some(NumberOrString::String("reportUndefinedVariable".into())),
            source: Some("Pyright".into()),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    fn new_flags(classified: &Classified) -> Vec<(u32, bool)> {
        classified
            .diagnostics
            .iter()
            .map(|r| (r.diagnostic.range.start.line, r.new))
            .collect()
    }

    const BEFORE: &str = "import os\nx = 1\nprint(y)\nz = 2\n";

    #[test]
    fn a_problem_whose_elaboration_changed_is_not_new() {
        // pyright: the same override problem, its types changed by an edit elsewhere.
        let before = [diag(
            3,
            4,
            "\"identity\" incorrectly overrides\n  returns type A",
        )];
        let after = [
            diag(3, 4, "\"identity\" incorrectly overrides\n  returns type B"),
            diag(5, 4, "\"identity\" incorrectly overrides\n  returns type B"),
        ];
        let c = classify(&before, &after, &LineMap::identity());
        assert_eq!(new_flags(&c), [(3, false), (5, true)]);
        assert!(c.fixed.is_empty());
    }

    #[test]
    fn identity_maps_every_line_to_itself() {
        let map = LineMap::new(BEFORE, BEFORE);
        assert_eq!(map, LineMap::identity());
        for line in 0..10 {
            assert_eq!(map.map(line), Some(line));
            assert_eq!(map.changed_region(line), None);
        }
    }

    #[test]
    fn inserted_line_shifts_the_lines_below() {
        let after = "import os\nimport sys\nx = 1\nprint(y)\nz = 2\n";
        let map = LineMap::new(BEFORE, after);
        assert_eq!(map.map(0), Some(0));
        assert_eq!(map.map(1), Some(2));
        assert_eq!(map.map(2), Some(3));
        assert_eq!(map.map(3), Some(4));
        // The empty last line LSP counts after the final newline moves too.
        assert_eq!(map.map(4), Some(5));
    }

    #[test]
    fn removed_and_changed_lines_do_not_map() {
        let after = "import os\nprint(y)\nz = 3\n";
        let map = LineMap::new(BEFORE, after);
        assert_eq!(map.map(0), Some(0));
        assert_eq!(map.map(1), None, "x = 1 was removed");
        assert_eq!(map.map(2), Some(1));
        assert_eq!(map.map(3), None, "z = 2 was changed");
        assert_eq!(map.changed_region(1), Some(1..1));
        assert_eq!(map.changed_region(3), Some(2..3));
        assert_eq!(map.changed_region(2), None);
    }

    #[test]
    fn a_missing_final_newline_is_not_a_change() {
        let map = LineMap::new("a\nb", "a\nb\nc\n");
        assert_eq!(map.map(1), Some(1));
        assert_eq!(map.changed_region(1), None);
    }

    #[test]
    fn crlf_lines_diff_like_lf_lines() {
        let map = LineMap::new("a\r\nb\r\nc\r\n", "a\r\nnew\r\nb\r\nc\r\n");
        assert_eq!(map.map(1), Some(2));
        assert_eq!(map.map(2), Some(3));
    }

    #[test]
    fn from_and_to_an_empty_file() {
        let map = LineMap::new("", "a\nb\n");
        assert_eq!(map.map(0), Some(2));
        let map = LineMap::new("a\nb\n", "");
        assert_eq!(map.map(0), None);
        assert_eq!(map.map(1), None);
        assert_eq!(map.map(2), Some(0));
    }

    #[test]
    fn shifted_error_is_not_new() {
        let after = "import os\nimport sys\nx = 1\nprint(y)\nz = 2\n";
        let map = LineMap::new(BEFORE, after);
        let before = [diag(2, 6, "\"y\" is not defined")];
        let after = [diag(3, 6, "\"y\" is not defined")];
        let classified = classify(&before, &after, &map);
        assert_eq!(new_flags(&classified), [(3, false)]);
        assert!(classified.fixed.is_empty());
    }

    #[test]
    fn same_error_at_the_unshifted_place_is_new() {
        // The error stayed on line 2 although its line moved to 3: it is another one.
        let after_text = "import os\nimport sys\nx = 1\nprint(y)\nz = 2\n";
        let map = LineMap::new(BEFORE, after_text);
        let before = [diag(2, 6, "\"y\" is not defined")];
        let after = [diag(2, 6, "\"y\" is not defined")];
        let classified = classify(&before, &after, &map);
        assert_eq!(new_flags(&classified), [(2, true)]);
        assert_eq!(classified.fixed.len(), 1);
    }

    #[test]
    fn error_on_a_removed_line_is_fixed() {
        let after_text = "import os\nx = 1\nz = 2\n";
        let map = LineMap::new(BEFORE, after_text);
        let before = [diag(2, 6, "\"y\" is not defined")];
        let classified = classify(&before, &[], &map);
        assert!(classified.diagnostics.is_empty());
        assert_eq!(classified.fixed, before);
    }

    #[test]
    fn new_error_is_new() {
        let after_text = "import os\nx = 1\nprint(y)\nz = w\n";
        let map = LineMap::new(BEFORE, after_text);
        let before = [diag(2, 6, "\"y\" is not defined")];
        let after = [
            diag(2, 6, "\"y\" is not defined"),
            diag(3, 4, "\"w\" is not defined"),
        ];
        let classified = classify(&before, &after, &map);
        assert_eq!(new_flags(&classified), [(2, false), (3, true)]);
        assert!(classified.fixed.is_empty());
    }

    #[test]
    fn a_different_severity_source_code_or_message_is_new() {
        let map = LineMap::identity();
        let old = diag(2, 6, "\"y\" is not defined");
        let mut warning = old.clone();
        warning.severity = Some(DiagnosticSeverity::WARNING);
        let mut other_source = old.clone();
        other_source.source = Some("ruff".into());
        let mut other_code = old.clone();
        other_code.code = Some(NumberOrString::Number(7));
        let mut other_column = old.clone();
        other_column.range.start.character += 1;
        for after in [warning, other_source, other_code, other_column] {
            let classified = classify(std::slice::from_ref(&old), &[after], &map);
            assert_eq!(new_flags(&classified), [(2, true)]);
            assert_eq!(classified.fixed.len(), 1);
        }
    }

    #[test]
    fn missing_severity_equals_error() {
        let old = diag(2, 6, "m");
        let mut after = old.clone();
        after.severity = None;
        let classified = classify(&[old], &[after], &LineMap::identity());
        assert_eq!(new_flags(&classified), [(2, false)]);
    }

    #[test]
    fn duplicates_after_are_reported_once() {
        let d = diag(2, 6, "\"y\" is not defined");
        let classified = classify(&[], &[d.clone(), d.clone(), d], &LineMap::identity());
        assert_eq!(new_flags(&classified), [(2, true)]);
    }

    #[test]
    fn duplicates_before_do_not_count_as_fixed() {
        let d = diag(2, 6, "\"y\" is not defined");
        let classified = classify(&[d.clone(), d.clone()], &[d], &LineMap::identity());
        assert_eq!(new_flags(&classified), [(2, false)]);
        assert!(classified.fixed.is_empty());
    }

    #[test]
    fn matching_is_one_to_one() {
        // Two equal problems on rewritten lines excuse two after the rewrite, not three.
        let before_text = "a\nf(x)\ng(x)\nb\n";
        let after_text = "a\nf(x, 1)\ng(x, 1)\nh(x)\nb\n";
        let map = LineMap::new(before_text, after_text);
        assert_eq!(map.changed_region(1), Some(1..4));
        let before = [diag(1, 2, "x undefined"), diag(2, 2, "x undefined")];
        let after = [
            diag(1, 2, "x undefined"),
            diag(2, 2, "x undefined"),
            diag(3, 2, "x undefined"),
        ];
        let classified = classify(&before, &after, &map);
        assert_eq!(new_flags(&classified), [(1, false), (2, false), (3, true)]);
        assert!(classified.fixed.is_empty());
    }

    #[test]
    fn fixed_counts_every_unmatched_before() {
        let before = [
            diag(0, 0, "one"),
            diag(1, 0, "two"),
            diag(2, 0, "three"),
            diag(2, 0, "three"),
        ];
        let after = [diag(1, 0, "two")];
        let classified = classify(&before, &after, &LineMap::identity());
        assert_eq!(new_flags(&classified), [(1, false)]);
        let fixed: Vec<&str> = classified
            .fixed
            .iter()
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(fixed, ["one", "three"]);
    }

    #[test]
    fn error_on_an_edited_line_that_persists_is_not_new() {
        let after_text = "import os\nx = 1\nprint(y + 1)\nz = 2\n";
        let map = LineMap::new(BEFORE, after_text);
        let before = [diag(2, 6, "\"y\" is not defined")];
        let after = [diag(2, 6, "\"y\" is not defined")];
        let classified = classify(&before, &after, &map);
        assert_eq!(new_flags(&classified), [(2, false)]);
        assert!(classified.fixed.is_empty());
    }

    #[test]
    fn error_moved_within_a_rewritten_region_is_not_new() {
        let after_text = "import os\nx = 1\nif x:\n    print(y)\nz = 2\n";
        let map = LineMap::new(BEFORE, after_text);
        let before = [diag(2, 6, "\"y\" is not defined")];
        let after = [diag(3, 10, "\"y\" is not defined")];
        let classified = classify(&before, &after, &map);
        assert_eq!(new_flags(&classified), [(3, false)]);
    }

    #[test]
    fn error_outside_the_rewritten_region_is_new() {
        let after_text = "import os\nx = 1\nprint(1)\nz = y\n";
        let map = LineMap::new(BEFORE, after_text);
        assert_eq!(map.changed_region(2), Some(2..4));
        let before = [diag(2, 6, "\"y\" is not defined")];
        // Same problem, but on a line the edit did not touch: the old one was fixed and
        // this one is new.
        let after = [diag(0, 0, "\"y\" is not defined")];
        let classified = classify(&before, &after, &map);
        assert_eq!(new_flags(&classified), [(0, true)]);
        assert_eq!(classified.fixed.len(), 1);
    }

    #[test]
    fn equal_errors_pair_with_their_own_partners() {
        // An untouched error and a rewritten one with the same message: the untouched one
        // must keep its partner, and the rewritten one's disappearance counts as fixed.
        let before_text = "f(x)\nkeep\ng(x)\n";
        let after_text = "f(x)\nkeep\nchanged\n";
        let map = LineMap::new(before_text, after_text);
        let before = [diag(2, 2, "x undefined"), diag(0, 2, "x undefined")];
        let after = [diag(0, 2, "x undefined")];
        let classified = classify(&before, &after, &map);
        assert_eq!(new_flags(&classified), [(0, false)]);
        assert_eq!(classified.fixed.len(), 1);
        assert_eq!(classified.fixed[0].range.start.line, 2);
    }

    #[test]
    fn multi_line_range_whose_end_was_rewritten_keeps_its_start() {
        let before_text = "def f():\n    a\n    b\n";
        let after_text = "def f():\n    a\n    c\n";
        let map = LineMap::new(before_text, after_text);
        let mut old = diag(0, 4, "f is unused");
        old.range.end = Position {
            line: 2,
            character: 5,
        };
        let mut new = old.clone();
        new.range.end.character = 9;
        let classified = classify(&[old], &[new], &map);
        assert_eq!(new_flags(&classified), [(0, false)]);
    }
}
