//! Placing hunks in a file's lines, and saying why one does not fit.
//!
//! The placement rule is diffy's (`diffy::apply_bytes`), which is `git apply`'s
//! without whitespace options: the hunk's context and removed lines must match
//! exactly; the search starts at the hunk's stated position in the partly patched
//! file and moves outwards one line at a time, nearest first; lines an earlier hunk
//! produced never match again. It is reimplemented here (about 40 lines) because
//! diffy's `ApplyError` only says "error applying hunk #N", and because a hunk may
//! need retrying with CRLF lines, which diffy's `Hunk` cannot be rebuilt to carry.

use std::borrow::Cow;
use std::cmp;

use super::eol;

/// How many expected and found lines an error shows.
const SHOWN_LINES: usize = 6;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Context,
    Delete,
    Insert,
}

/// One hunk, lines with their terminators (the last line of a file may lack one).
#[derive(Debug, Clone)]
pub(super) struct Hunk<'a> {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<(Kind, Cow<'a, [u8]>)>,
}

/// A hunk that did not apply: its 1-based number, its header, and what was expected
/// and found, ready to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Failure {
    pub number: usize,
    pub header: String,
    pub details: String,
}

impl<'a> Hunk<'a> {
    pub fn from_diffy(hunk: &diffy::Hunk<'a, [u8]>) -> Self {
        let (old, new) = (hunk.old_range(), hunk.new_range());
        let lines = hunk
            .lines()
            .iter()
            .map(|line| match *line {
                diffy::Line::Context(t) => (Kind::Context, Cow::Borrowed(t)),
                diffy::Line::Delete(t) => (Kind::Delete, Cow::Borrowed(t)),
                diffy::Line::Insert(t) => (Kind::Insert, Cow::Borrowed(t)),
            })
            .collect();
        Hunk {
            old_start: old.start(),
            old_len: old.len(),
            new_start: new.start(),
            new_len: new.len(),
            lines,
        }
    }

    /// `@@ -a,b +c,d @@`, written as git writes it (`,1` omitted).
    pub fn header(&self) -> String {
        let range = |start: usize, len: usize| {
            if len == 1 {
                start.to_string()
            } else {
                format!("{start},{len}")
            }
        };
        format!(
            "@@ -{} +{} @@",
            range(self.old_start, self.old_len),
            range(self.new_start, self.new_len)
        )
    }

    fn pre_image(&self) -> impl Iterator<Item = &[u8]> {
        self.lines
            .iter()
            .filter(|(kind, _)| *kind != Kind::Insert)
            .map(|(_, text)| text.as_ref())
    }

    /// This hunk with CRLF line endings, when all its endings are bare LF.
    fn to_crlf(&self) -> Option<Hunk<'static>> {
        let texts = || self.lines.iter().map(|(_, text)| text.as_ref());
        let has_lf = texts().any(|t| t.ends_with(b"\n") && !t.ends_with(b"\r\n"));
        let has_crlf = texts().any(|t| t.ends_with(b"\r\n"));
        if !has_lf || has_crlf {
            return None;
        }
        Some(Hunk {
            lines: self
                .lines
                .iter()
                .map(|(kind, text)| (*kind, Cow::Owned(eol::to_crlf(text))))
                .collect(),
            ..*self
        })
    }
}

/// A line of the file being patched, and whether a hunk produced it.
struct ImageLine {
    text: Vec<u8>,
    patched: bool,
}

/// Apply `hunks`, in order, to `base`.
///
/// In a CRLF file, a hunk whose lines all end in bare LF (an agent's patch) is first
/// tried with CRLF endings, then as written.
pub(super) fn apply(base: &[u8], hunks: &[Hunk<'_>]) -> Result<Vec<u8>, Failure> {
    let crlf_file = eol::is_crlf(base);
    let mut image: Vec<ImageLine> = base
        .split_inclusive(|&b| b == b'\n')
        .map(|line| ImageLine {
            text: line.to_vec(),
            patched: false,
        })
        .collect();

    for (i, hunk) in hunks.iter().enumerate() {
        let converted = if crlf_file { hunk.to_crlf() } else { None };
        let placed = converted
            .as_ref()
            .and_then(|h| find_position(&image, h).map(|pos| (h, pos)))
            .or_else(|| find_position(&image, hunk).map(|pos| (hunk, pos)));
        let Some((hunk, pos)) = placed else {
            return Err(Failure {
                number: i + 1,
                header: hunk.header(),
                details: explain(&image, hunk),
            });
        };
        let removed = hunk.pre_image().count();
        let inserted = hunk
            .lines
            .iter()
            .filter(|(kind, _)| *kind != Kind::Delete)
            .map(|(_, text)| ImageLine {
                text: text.to_vec(),
                patched: true,
            });
        image.splice(pos..pos + removed, inserted);
    }
    Ok(image.into_iter().flat_map(|line| line.text).collect())
}

/// Where `hunk` fits: its stated position first, then alternately one line earlier
/// and one later, as diffy and `git apply` search.
fn find_position(image: &[ImageLine], hunk: &Hunk<'_>) -> Option<usize> {
    let start = cmp::min(hunk.new_start.saturating_sub(1), image.len());
    let farthest = cmp::max(start, image.len() - start);
    let around = (1..=farthest).flat_map(|d| {
        let later = start + d;
        [start.checked_sub(d), (later < image.len()).then_some(later)]
    });
    std::iter::once(start)
        .chain(around.flatten())
        .find(|&pos| matches_at(image, hunk, pos))
}

fn matches_at(image: &[ImageLine], hunk: &Hunk<'_>, pos: usize) -> bool {
    let len = hunk.pre_image().count();
    let Some(window) = image.get(pos..pos.saturating_add(len)) else {
        return false;
    };
    window.iter().all(|line| !line.patched)
        && window
            .iter()
            .map(|line| line.text.as_slice())
            .eq(hunk.pre_image())
}

/// The expected lines and the file's lines at the hunk's stated position.
fn explain(image: &[ImageLine], hunk: &Hunk<'_>) -> String {
    let expected: Vec<&[u8]> = hunk.pre_image().collect();
    let mut out = String::new();
    if expected.is_empty() {
        return out;
    }
    let line_no = hunk.old_start.max(1);
    out += &format!("  expected at line {line_no}:\n");
    for text in expected.iter().take(SHOWN_LINES) {
        out += &format!("    |{}\n", show(text));
    }
    if expected.len() > SHOWN_LINES {
        out += &format!("    ... {} more\n", expected.len() - SHOWN_LINES);
    }
    let start = hunk.new_start.saturating_sub(1);
    let found: Vec<&[u8]> = image
        .iter()
        .skip(start)
        .take(cmp::max(expected.len(), 1).min(SHOWN_LINES))
        .map(|line| line.text.as_slice())
        .collect();
    if found.is_empty() {
        let plural = if image.len() == 1 { "" } else { "s" };
        out += &format!("  found: the file has only {} line{plural}", image.len());
        return out;
    }
    out += &format!("  found at line {line_no}:\n");
    for (i, text) in found.iter().enumerate() {
        let mark = if expected.get(i) == Some(text) {
            ' '
        } else {
            '!'
        };
        out += &format!("   {mark}|{}\n", show(text));
    }
    let only_eol_differs = found
        .iter()
        .zip(&expected)
        .all(|(f, e)| strip_eol(f) == strip_eol(e));
    if only_eol_differs && found.len() >= expected.len().min(SHOWN_LINES) {
        out += "  (the lines differ only in their line endings)\n";
    }
    out.truncate(out.trim_end().len());
    out
}

fn strip_eol(text: &[u8]) -> &[u8] {
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    text.strip_suffix(b"\r").unwrap_or(text)
}

fn show(text: &[u8]) -> String {
    String::from_utf8_lossy(strip_eol(text)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(new_start: usize, lines: &[(Kind, &'static str)]) -> Hunk<'static> {
        let old_len = lines.iter().filter(|l| l.0 != Kind::Insert).count();
        let new_len = lines.iter().filter(|l| l.0 != Kind::Delete).count();
        Hunk {
            old_start: new_start,
            old_len,
            new_start,
            new_len,
            lines: lines
                .iter()
                .map(|(k, t)| (*k, Cow::Borrowed(t.as_bytes())))
                .collect(),
        }
    }

    #[test]
    fn searches_nearest_position_first() {
        // "x" occurs at lines 2 and 6; the hunk says line 5, so line 6 wins.
        let base = b"a\nx\nb\nc\nd\nx\ne\n";
        let h = hunk(5, &[(Kind::Context, "x\n"), (Kind::Insert, "new\n")]);
        let out = apply(base, &[h]).map_err(|f| f.details);
        assert_eq!(out.as_deref(), Ok(&b"a\nx\nb\nc\nd\nx\nnew\ne\n"[..]));
    }

    #[test]
    fn crlf_file_takes_lf_hunk_as_crlf() {
        let base = b"one\r\ntwo\r\n";
        let h = hunk(
            1,
            &[
                (Kind::Context, "one\n"),
                (Kind::Delete, "two\n"),
                (Kind::Insert, "2\n"),
            ],
        );
        let out = apply(base, &[h]).map_err(|f| f.details);
        assert_eq!(out.as_deref(), Ok(&b"one\r\n2\r\n"[..]));
    }

    #[test]
    fn failure_past_the_end_says_how_long_the_file_is() {
        let h = hunk(10, &[(Kind::Context, "z\n"), (Kind::Insert, "new\n")]);
        let failure = apply(b"a\n", &[h]).expect_err("the hunk must not apply");
        assert_eq!(
            failure.details,
            "  expected at line 10:\n    |z\n  found: the file has only 1 line"
        );
    }

    #[test]
    fn failure_shows_expected_and_found() {
        let base = b"a\nb\nc\n";
        let h = hunk(2, &[(Kind::Context, "b\n"), (Kind::Delete, "z\n")]);
        let Err(failure) = apply(base, &[h]) else {
            panic!("the hunk must not apply");
        };
        assert_eq!(failure.number, 1);
        assert_eq!(failure.header, "@@ -2,2 +2 @@");
        assert_eq!(
            failure.details,
            "  expected at line 2:\n    |b\n    |z\n  found at line 2:\n    |b\n   !|c"
        );
    }
}
