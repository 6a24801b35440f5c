//! One line per problem. Several servers check a file (a type checker and a linter),
//! and one server may report a problem twice: rust-analyzer says a wrong argument
//! count with its own analysis (`E0107`, at the closing parenthesis) and again with
//! rustc's from `cargo check` (`E0061`, at the function name), and sends each of
//! rustc's notes and help lines as a Hint of its own that points back at the error.
//!
//! [`merge`] makes one [`FileReport`] per file out of the servers' reports, then
//! folds:
//! - a Hint or Information that is one of another diagnostic's related locations
//!   (the other lists it in its `relatedInformation`, same place and message, or it
//!   points back at the other) into that diagnostic, across files (rustc's "function
//!   defined here" in the callee's file belongs to the error at the call);
//! - two errors (or two warnings) of different sources, both new or both old, where
//!   one lies within the other's footprint (its range and its related locations in
//!   the same file): the same problem, said twice; the more precise one (more related
//!   locations, then the longer message) stays.
//!
//! What is folded is kept in [`Reported::related`] (JSON `related`); the text prints
//! the one that stays.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_types::{Diagnostic, DiagnosticSeverity, Range};

use crate::lsp::uri;
use crate::model::{FileReport, Related, Reported, Role};

/// One report per path (the servers' diagnostics together; edited if any server's
/// report says so), then the folds of the module doc.
/// Above this many diagnostics in a run, nothing is folded: the folds compare
/// diagnostics pairwise, and a run that lists thousands is no one-line-per-problem
/// reading anyway.
const MAX_FOLDED: usize = 2000;

pub fn merge(files: Vec<FileReport>) -> Vec<FileReport> {
    let mut out: Vec<FileReport> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    for file in files {
        match index.get(&file.path) {
            Some(&i) => {
                let into = &mut out[i];
                if file.role == Role::Edited {
                    into.role = Role::Edited;
                }
                into.diagnostics.extend(file.diagnostics);
            }
            None => {
                index.insert(file.path.clone(), out.len());
                out.push(file);
            }
        }
    }
    if out.iter().map(|f| f.diagnostics.len()).sum::<usize>() > MAX_FOLDED {
        return out;
    }
    fold_hints(&mut out);
    for file in &mut out {
        fold_same_problem(file);
    }
    out
}

fn is_note(d: &Diagnostic) -> bool {
    matches!(
        d.severity,
        Some(DiagnosticSeverity::HINT) | Some(DiagnosticSeverity::INFORMATION)
    )
}

fn rank(d: &Diagnostic) -> u8 {
    match d.severity {
        Some(DiagnosticSeverity::WARNING) => 2,
        Some(DiagnosticSeverity::INFORMATION) => 3,
        Some(DiagnosticSeverity::HINT) => 4,
        _ => 1,
    }
}

/// How `note` (in `note_path`) is one of `main`'s (in `main_path`) related
/// locations: it points back at `main` (`Some(true)`, the surer sign: rustc's note
/// in a callee's file is listed by every call's error alike), or `main` lists it
/// (`Some(false)`).
fn belongs_to(
    note: &Diagnostic,
    note_path: &Path,
    main: &Diagnostic,
    main_path: &Path,
) -> Option<bool> {
    if note.source != main.source || rank(main) >= rank(note) {
        return None;
    }
    let at = |location: &lsp_types::Location, path: &Path, range: &Range| {
        location.range == *range && uri::to_path(&location.uri).as_deref() == Some(path)
    };
    let listed = main
        .related_information
        .iter()
        .flatten()
        .any(|r| r.message == note.message && at(&r.location, note_path, &note.range));
    let points_back = note.code == main.code
        && note
            .related_information
            .iter()
            .flatten()
            .any(|r| at(&r.location, main_path, &main.range));
    if points_back {
        Some(true)
    } else {
        listed.then_some(false)
    }
}

/// Fold every note that belongs to another diagnostic into it, across files.
fn fold_hints(files: &mut [FileReport]) {
    // (file, diagnostic) of every note, and of its parent.
    let mut moves: Vec<((usize, usize), (usize, usize))> = Vec::new();
    for (fi, file) in files.iter().enumerate() {
        for (di, d) in file.diagnostics.iter().enumerate() {
            if !is_note(&d.diagnostic) {
                continue;
            }
            let mut parent = None;
            for (fj, other) in files.iter().enumerate() {
                for (dj, m) in other.diagnostics.iter().enumerate() {
                    if (fi, di) == (fj, dj) {
                        continue;
                    }
                    match belongs_to(&d.diagnostic, &file.path, &m.diagnostic, &other.path) {
                        Some(true) => parent = Some(((fj, dj), true)),
                        Some(false) if parent.is_none() => parent = Some(((fj, dj), false)),
                        _ => {}
                    }
                    if matches!(parent, Some((_, true))) {
                        break;
                    }
                }
                if matches!(parent, Some((_, true))) {
                    break;
                }
            }
            let parent = parent.map(|(at, _)| at);
            if let Some(parent) = parent {
                moves.push(((fi, di), parent));
            }
        }
    }
    if moves.is_empty() {
        return;
    }
    let mut gone: Vec<(usize, usize)> = Vec::new();
    for ((fi, di), (fj, dj)) in &moves {
        let related = Related {
            path: files[*fi].path.clone(),
            diagnostic: files[*fi].diagnostics[*di].diagnostic.clone(),
        };
        let parent = &mut files[*fj].diagnostics[*dj];
        if !parent.related.contains(&related) {
            parent.related.push(related);
        }
        gone.push((*fi, *di));
    }
    gone.sort_unstable();
    for (fi, di) in gone.into_iter().rev() {
        files[fi].diagnostics.remove(di);
    }
}

fn within(inner: &Range, outer: &Range) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

/// The ranges of `d` in `path`: its own, its related locations there, and those of
/// what was folded into it.
fn footprint(d: &Reported, path: &Path) -> Vec<Range> {
    let mut ranges = vec![d.diagnostic.range];
    ranges.extend(
        d.diagnostic
            .related_information
            .iter()
            .flatten()
            .filter(|r| uri::to_path(&r.location.uri).as_deref() == Some(path))
            .map(|r| r.location.range),
    );
    ranges.extend(
        d.related
            .iter()
            .filter(|r| r.path == path)
            .map(|r| r.diagnostic.range),
    );
    ranges
}

/// How much a diagnostic says: related locations, then words.
fn precision(d: &Reported) -> (usize, usize) {
    let related = d
        .diagnostic
        .related_information
        .as_ref()
        .map_or(0, Vec::len)
        + d.related.len();
    (related, d.diagnostic.message.len())
}

fn same_problem(a: &Reported, b: &Reported, path: &Path) -> bool {
    let (da, db) = (&a.diagnostic, &b.diagnostic);
    !is_note(da)
        && rank(da) == rank(db)
        && a.new == b.new
        && da.source != db.source
        && (footprint(a, path).iter().any(|r| within(&db.range, r))
            || footprint(b, path).iter().any(|r| within(&da.range, r)))
}

/// Fold each diagnostic another source says of the same problem into the more
/// precise of the two.
fn fold_same_problem(file: &mut FileReport) {
    let mut i = 0;
    while i < file.diagnostics.len() {
        let partner = (0..file.diagnostics.len()).find(|&j| {
            j != i && same_problem(&file.diagnostics[i], &file.diagnostics[j], &file.path)
        });
        let Some(j) = partner else {
            i += 1;
            continue;
        };
        let (keep, drop) = if precision(&file.diagnostics[j]) > precision(&file.diagnostics[i]) {
            (j, i)
        } else {
            (i, j)
        };
        let dropped = file.diagnostics.remove(drop);
        let keep = if keep > drop { keep - 1 } else { keep };
        let kept = &mut file.diagnostics[keep];
        kept.related.push(Related {
            path: file.path.clone(),
            diagnostic: dropped.diagnostic,
        });
        kept.related.extend(dropped.related);
        // Index `i` holds another diagnostic now (or the kept one, whose footprint
        // grew): look at it again.
    }
}

#[cfg(test)]
mod tests {
    use lsp_types::{DiagnosticRelatedInformation, Location, NumberOrString, Position};

    use super::*;

    fn range(line: u32, from: u32, to: u32) -> Range {
        Range {
            start: Position {
                line,
                character: from,
            },
            end: Position {
                line,
                character: to,
            },
        }
    }

    fn diag(
        severity: DiagnosticSeverity,
        source: &str,
        code: &str,
        r: Range,
        message: &str,
    ) -> Diagnostic {
        Diagnostic {
            range: r,
            severity: Some(severity),
            source: Some(source.into()),
            code: Some(NumberOrString::String(code.into())),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    fn related(path: &Path, r: Range, message: &str) -> DiagnosticRelatedInformation {
        DiagnosticRelatedInformation {
            location: Location {
                uri: uri::from_path(path),
                range: r,
            },
            message: message.into(),
        }
    }

    /// rust-analyzer on one call missing an argument, as it publishes it: rustc's
    /// error with two help lines as related locations, each help again as a Hint
    /// pointing back, "function defined here" as a Hint in the callee's file, and its
    /// own E0107 at the closing parenthesis.
    fn one_broken_call(line: u32) -> (Vec<Reported>, Vec<Reported>) {
        let a = Path::new("/w/src/a.rs");
        let b = Path::new("/w/src/b.rs");
        let args = range(line, 9, 14);
        let mut rustc = diag(
            DiagnosticSeverity::ERROR,
            "rustc",
            "E0061",
            range(line, 4, 9),
            "this function takes 2 arguments but 1 argument was supplied",
        );
        rustc.related_information = Some(vec![
            related(b, args, "argument #2 of type `&str` is missing"),
            related(a, range(0, 7, 12), "function defined here"),
            related(b, args, "provide the argument"),
        ]);
        let back = vec![related(b, rustc.range, "original diagnostic")];
        let hint = |r: Range, m: &str| {
            let mut h = diag(DiagnosticSeverity::HINT, "rustc", "E0061", r, m);
            h.related_information = Some(back.clone());
            Reported::new(h, true)
        };
        let ra = diag(
            DiagnosticSeverity::ERROR,
            "rust-analyzer",
            "E0107",
            range(line, 13, 14),
            "expected 2 arguments, found 1",
        );
        (
            vec![
                Reported::new(rustc.clone(), true),
                Reported::new(ra, true),
                hint(args, "argument #2 of type `&str` is missing"),
                hint(args, "provide the argument"),
            ],
            vec![hint(range(0, 7, 12), "function defined here")],
        )
    }

    #[test]
    fn three_broken_calls_are_three_lines() {
        let mut b_diags = Vec::new();
        let mut a_diags = Vec::new();
        for line in [3, 7, 11] {
            let (b, a) = one_broken_call(line);
            b_diags.extend(b);
            a_diags.extend(a);
        }
        let files = vec![
            FileReport {
                path: "/w/src/a.rs".into(),
                role: Role::Edited,
                diagnostics: a_diags,
            },
            FileReport {
                path: "/w/src/b.rs".into(),
                role: Role::Dependent,
                diagnostics: b_diags,
            },
        ];
        let merged = merge(files);
        let a = &merged[0];
        assert!(a.diagnostics.is_empty(), "{:#?}", a.diagnostics);
        let b = &merged[1];
        assert_eq!(b.diagnostics.len(), 3, "{:#?}", b.diagnostics);
        for d in &b.diagnostics {
            assert_eq!(d.diagnostic.source.as_deref(), Some("rustc"));
            // Two help Hints, the callee's note, rust-analyzer's own error.
            assert_eq!(d.related.len(), 4, "{:#?}", d.related);
            assert!(d.related.iter().any(|r| r.path == Path::new("/w/src/a.rs")));
            assert!(
                d.related
                    .iter()
                    .any(|r| r.diagnostic.source.as_deref() == Some("rust-analyzer"))
            );
        }
    }

    #[test]
    fn different_problems_stay_apart() {
        let p = Path::new("/w/a.py");
        let error = diag(
            DiagnosticSeverity::ERROR,
            "Pyright",
            "x",
            range(1, 0, 10),
            "m",
        );
        // Another source, same place, but a warning: not the same problem.
        let warning = diag(
            DiagnosticSeverity::WARNING,
            "Ruff",
            "F401",
            range(1, 0, 10),
            "n",
        );
        // Same severity, another line.
        let elsewhere = diag(DiagnosticSeverity::ERROR, "Ruff", "E9", range(2, 0, 1), "o");
        // Same severity and place, but one new and one old.
        let old = diag(
            DiagnosticSeverity::ERROR,
            "Ruff",
            "F821",
            range(1, 2, 3),
            "p",
        );
        let files = vec![FileReport {
            path: p.into(),
            role: Role::Edited,
            diagnostics: vec![
                Reported::new(error.clone(), true),
                Reported::new(warning, true),
                Reported::new(elsewhere, true),
                Reported::new(old, false),
            ],
        }];
        let merged = merge(files);
        assert_eq!(merged[0].diagnostics.len(), 4);
        // Same source twice at one place: two problems the server told apart.
        let twice = diag(
            DiagnosticSeverity::ERROR,
            "Pyright",
            "y",
            range(1, 2, 3),
            "q",
        );
        let merged = merge(vec![FileReport {
            path: p.into(),
            role: Role::Edited,
            diagnostics: vec![
                Reported::new(error.clone(), true),
                Reported::new(twice, true),
            ],
        }]);
        assert_eq!(merged[0].diagnostics.len(), 2);
        // Another source inside its range: folded into the more precise.
        let ruff = diag(
            DiagnosticSeverity::ERROR,
            "Ruff",
            "F821",
            range(1, 2, 3),
            "Undefined name `x`",
        );
        let merged = merge(vec![FileReport {
            path: p.into(),
            role: Role::Edited,
            diagnostics: vec![Reported::new(error, true), Reported::new(ruff, true)],
        }]);
        assert_eq!(merged[0].diagnostics.len(), 1);
        assert_eq!(
            merged[0].diagnostics[0].diagnostic.source.as_deref(),
            Some("Ruff")
        );
        assert_eq!(merged[0].diagnostics[0].related.len(), 1);
    }

    #[test]
    fn one_report_per_path_edited_wins() {
        let d = |s: &str| {
            Reported::new(
                diag(DiagnosticSeverity::ERROR, s, "c", range(0, 0, 1), s),
                true,
            )
        };
        let merged = merge(vec![
            FileReport {
                path: "/w/x.py".into(),
                role: Role::Dependent,
                diagnostics: vec![d("one")],
            },
            FileReport {
                path: "/w/x.py".into(),
                role: Role::Edited,
                diagnostics: vec![],
            },
        ]);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].role, Role::Edited);
        assert_eq!(merged[0].diagnostics.len(), 1);
    }
}
