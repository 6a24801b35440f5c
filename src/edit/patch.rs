//! `patch`: unified diffs, git or plain, parsed with diffy and applied in memory.
//!
//! Parsing is diffy's `PatchSet` (git mode when a line starts with `diff --git `,
//! else plain unified mode). Every file section is then applied, in order, to an
//! in-memory overlay of the tree, so a later section touching the same path sees the
//! earlier result; the overlay becomes the [`EditPlan`]. What `git apply` does and we
//! do too: creates, deletes, renames and copies (with or without changes), mode
//! changes, `\ No newline at end of file`, quoted names, offset search, `-p N`, and
//! `diff -N` conventions (a missing side dated at the epoch means `/dev/null`).
//! Where we are more lenient, on purpose, for patches agents write:
//! - a path that does not exist once `-p N` is stripped, while the unstripped one
//!   does, is taken unstripped (patches without `a/` `b/`), and the patch's other
//!   paths, new files included, follow;
//! - in a CRLF file, a hunk written with LF endings matches as CRLF (see `hunks`);
//! - a hunk without trailing context need not match at the end of the file.
//!
//! Refused: binary patches, symlink and submodule entries.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use diffy::patch_set::{FileMode, FileOperation, FilePatch, ParseOptions, PatchKind, PatchSet};

use super::hunks::{self, Hunk};
use super::paths::{self, Target};
use super::{EditError, EditPlan, FileChange};

/// Parse `patch` and apply it in memory against the files under `base` (the run
/// directory, where the patch's paths resolve after stripping `strip` components,
/// as `git apply -p`). Every path must lie inside `workspace`.
pub fn plan_patch(
    workspace: &Path,
    base: &Path,
    patch: &[u8],
    strip: usize,
) -> Result<EditPlan, EditError> {
    if patch.iter().all(u8::is_ascii_whitespace) {
        return Err(EditError::Patch("line 1: the patch is empty".into()));
    }
    let git = patch
        .split(|&b| b == b'\n')
        .any(|line| line.starts_with(b"diff --git "));
    let layout = Layout::scan(patch, git)?;
    let files = parse(patch, git, &layout)?;

    let mut tree = Tree::new(workspace, base);
    let unprefixed = tree.looks_unprefixed(&files, strip);
    // The plain-diff headers line up with diffy's sections only when both found the
    // same number; otherwise their dates are not used.
    let headers = (!git && layout.sections.len() == files.len()).then_some(&layout.sections);
    for (i, file) in files.iter().enumerate() {
        let section = headers.and_then(|sections| sections.get(i));
        let dates = section.map(|s| layout.epoch_dates(s)).unwrap_or_default();
        tree.apply_file(file, strip, unprefixed, dates)?;
    }
    tree.refuse_file_and_directory()?;
    Ok(tree.into_plan())
}

/// diffy's parse, with its byte offsets turned into patch line numbers.
fn parse<'a>(
    patch: &'a [u8],
    git: bool,
    layout: &Layout<'_>,
) -> Result<Vec<FilePatch<'a, [u8]>>, EditError> {
    let options = if git {
        ParseOptions::gitdiff()
    } else {
        ParseOptions::unidiff()
    };
    let mut files = Vec::new();
    for item in PatchSet::parse_bytes(patch, options) {
        match item {
            Ok(file) => files.push(file),
            Err(e) => return Err(layout.parse_error(&e.to_string(), files.len())),
        }
    }
    Ok(files)
}

// ---------------------------------------------------------------------------------
// Layout: where each file section starts. diffy keeps its error offsets relative to
// a section it does not expose, and drops plain-diff dates, so this small scanner
// mirrors its section boundaries to name patch lines in errors and read the dates.

/// One file section of the patch. Offsets are into the patch after any email
/// preamble, as diffy counts them.
struct Section {
    /// Where diffy's offsets for a failing hunk or header count from.
    body: usize,
    /// The `---` and `+++` lines (plain diffs only), as line indexes.
    old_header: Option<usize>,
    new_header: Option<usize>,
}

struct Layout<'a> {
    /// Lines of `git format-patch` email header that diffy skips.
    preamble_lines: usize,
    /// Lines after the preamble, with their offsets.
    lines: Vec<(usize, &'a [u8])>,
    sections: Vec<Section>,
}

const NO_NEWLINE: &[u8] = b"\\ No newline at end of file";

/// The extended header lines diffy's git parser consumes after `diff --git`.
const GIT_HEADERS: &[&[u8]] = &[
    b"rename from ",
    b"rename to ",
    b"copy from ",
    b"copy to ",
    b"old mode ",
    b"new mode ",
    b"new file mode ",
    b"deleted file mode ",
    b"index ",
    b"similarity index ",
    b"dissimilarity index ",
    b"Binary files ",
    b"GIT binary patch",
];

impl<'a> Layout<'a> {
    fn scan(patch: &'a [u8], git: bool) -> Result<Self, EditError> {
        // diffy skips a `git format-patch` mail up to its first `---` line.
        let preamble = if patch.starts_with(b"From ") {
            patch
                .windows(5)
                .position(|w| w == b"\n---\n")
                .map_or(0, |p| p + 5)
        } else {
            0
        };
        let body = &patch[preamble..];
        let mut lines = Vec::new();
        let mut offset = 0;
        for line in body.split_inclusive(|&b| b == b'\n') {
            lines.push((offset, line));
            offset += line.len();
        }
        let mut layout = Layout {
            preamble_lines: patch[..preamble].iter().filter(|&&b| b == b'\n').count(),
            lines,
            sections: Vec::new(),
        };
        let (plain, binary) = layout.scan_plain();
        if git {
            layout.sections = layout.scan_git();
            // A plain `---`/`+++` section among git ones would be skipped silently by
            // diffy's git mode: refuse rather than apply part of the patch.
            let bodies: HashSet<usize> = layout.sections.iter().map(|s| s.body).collect();
            if let Some(stray) = plain.iter().find(|s| !bodies.contains(&s.body)) {
                return Err(EditError::Patch(format!(
                    "line {}: a plain `---`/`+++` file section among `diff --git` ones; \
                     give every file a `diff --git` header or none",
                    layout.line_number(stray.body)
                )));
            }
        } else {
            if let Some(i) = binary {
                let (offset, line) = layout.lines[i];
                return Err(EditError::Patch(format!(
                    "line {}: binary patches are not supported ({})",
                    layout.line_number(offset),
                    show_line(line)
                )));
            }
            layout.sections = plain;
        }
        Ok(layout)
    }

    /// Sections as diffy's unified mode finds them: from a `---` or `+++` line,
    /// through its hunks. Also the first `Binary files ... differ` line outside them.
    fn scan_plain(&self) -> (Vec<Section>, Option<usize>) {
        let lines = &self.lines;
        let mut sections = Vec::new();
        let mut binary = None;
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i].1;
            if !line.starts_with(b"--- ") && !line.starts_with(b"+++ ") {
                if binary.is_none() && line.starts_with(b"Binary files ") {
                    binary = Some(i);
                }
                i += 1;
                continue;
            }
            let start = i;
            let (mut old_header, mut new_header) = (None, None);
            while let Some(&(_, line)) = lines.get(i) {
                if line.starts_with(b"--- ") && old_header.is_none() {
                    old_header = Some(i);
                } else if line.starts_with(b"+++ ") && new_header.is_none() {
                    new_header = Some(i);
                } else {
                    break;
                }
                i += 1;
            }
            while let Some((old, new)) = lines.get(i).and_then(|l| hunk_counts(l.1)) {
                i = skip_hunk_body(lines, i + 1, old, new);
            }
            sections.push(Section {
                body: lines[start].0,
                old_header,
                new_header,
            });
        }
        (sections, binary)
    }

    /// Sections as diffy's git mode finds them: from each `diff --git` line; diffy's
    /// offsets count from the end of the extended header lines.
    fn scan_git(&self) -> Vec<Section> {
        let lines = &self.lines;
        let end = lines.last().map_or(0, |(offset, line)| offset + line.len());
        let mut sections = Vec::new();
        for (i, &(_, line)) in lines.iter().enumerate() {
            if !line.starts_with(b"diff --git ") {
                continue;
            }
            let body = lines[i + 1..]
                .iter()
                .find(|(_, l)| !GIT_HEADERS.iter().any(|h| l.starts_with(h)))
                .map_or(end, |&(offset, _)| offset);
            sections.push(Section {
                body,
                old_header: None,
                new_header: None,
            });
        }
        sections
    }

    /// Turn diffy's error text into `patch: line N: what`, pointing at the line.
    ///
    /// diffy exposes its offsets only in the message: "error parsing patches at byte N:
    /// ..." counts from the patch, "error parsing patches: error parsing patch at byte
    /// N: ..." from the failing section (the `index`-th).
    fn parse_error(&self, text: &str, index: usize) -> EditError {
        let section_body = self.sections.get(index).map(|s| s.body);
        let (offset, message) =
            if let Some(rest) = text.strip_prefix("error parsing patches at byte ") {
                split_offset(rest).map_or((None, rest), |(n, m)| (Some(n), m))
            } else {
                let rest = text.strip_prefix("error parsing patches: ").unwrap_or(text);
                match rest
                    .strip_prefix("error parsing patch at byte ")
                    .and_then(split_offset)
                {
                    Some((n, m)) => (section_body.map(|b| b + n), m),
                    None => (
                        section_body,
                        rest.strip_prefix("error parsing patch: ").unwrap_or(rest),
                    ),
                }
            };
        let message = match message {
            "no valid patches found" => "no file header (`--- a/...` and `+++ b/...`) found",
            "hunk header does not match hunk" => {
                "the hunk's line counts (@@ -a,b +c,d @@) do not match the lines that follow"
            }
            "unexpected line in hunk body" => {
                "unexpected line in hunk (hunk lines start with ' ', '-', '+' or '\\')"
            }
            other => other,
        };
        let Some(offset) = offset else {
            return EditError::Patch(format!("file {}: {message}", index + 1));
        };
        let line = self.line_number(offset);
        match self.lines.iter().find(|(o, _)| *o == offset) {
            Some((_, text)) => {
                EditError::Patch(format!("line {line}: {message}: {}", show_line(text)))
            }
            None => EditError::Patch(format!("line {line}: {message}")),
        }
    }

    /// 1-based line number, in the whole patch, of the line holding `offset` (an
    /// offset after the preamble).
    fn line_number(&self, offset: usize) -> usize {
        let within = self.lines.iter().take_while(|(o, _)| *o <= offset).count();
        self.preamble_lines + within.max(1)
    }

    /// Whether the `---`/`+++` lines of `section` carry the epoch date that `diff -N`
    /// gives a missing file: (old side missing, new side missing).
    fn epoch_dates(&self, section: &Section) -> (bool, bool) {
        let epoch = |line: Option<usize>| {
            line.and_then(|i| self.lines.get(i))
                .is_some_and(|(_, text)| header_has_epoch_date(text))
        };
        (epoch(section.old_header), epoch(section.new_header))
    }
}

/// `"N: message"` → `(N, "message")`.
fn split_offset(text: &str) -> Option<(usize, &str)> {
    let (number, message) = text.split_once(": ")?;
    Some((number.parse().ok()?, message))
}

/// A patch line for a message: without its line ending, cut to a readable length.
fn show_line(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches(['\n', '\r']);
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// The old and new line counts of a `@@ -a,b +c,d @@` line.
fn hunk_counts(line: &[u8]) -> Option<(usize, usize)> {
    let text = std::str::from_utf8(line.strip_prefix(b"@@ ")?).ok()?;
    let (ranges, _) = text.split_once(" @@")?;
    let (old, new) = ranges.split_once(' ')?;
    let count = |range: &str| {
        let (start, len) = range.split_once(',').unwrap_or((range, "1"));
        start.parse::<usize>().ok()?;
        len.parse::<usize>().ok()
    };
    Some((
        count(old.strip_prefix('-')?)?,
        count(new.strip_prefix('+')?)?,
    ))
}

/// The index of the first line after a hunk body starting at `i`, counted as diffy
/// counts: until the header's old and new counts are reached.
fn skip_hunk_body(lines: &[(usize, &[u8])], mut i: usize, old: usize, new: usize) -> usize {
    let (mut seen_old, mut seen_new) = (0, 0);
    while let Some(&(_, line)) = lines.get(i) {
        let complete = seen_old >= old && seen_new >= new;
        match line.first() {
            Some(b'@') => break,
            _ if line.starts_with(NO_NEWLINE) => {}
            Some(b' ' | b'\n') if !complete => {
                seen_old += 1;
                seen_new += 1;
            }
            Some(b'-') if !complete => seen_old += 1,
            Some(b'+') if !complete => seen_new += 1,
            _ => break,
        }
        i += 1;
    }
    i
}

/// Whether a `---`/`+++` line ends in the epoch date (`1970-01-01 00:00:00 +0000`,
/// or the same instant in another zone), which `diff -N` gives a missing file and
/// `git apply` reads as `/dev/null`.
fn header_has_epoch_date(line: &[u8]) -> bool {
    let Some(tab) = line.iter().position(|&b| b == b'\t') else {
        return false;
    };
    let Ok(date) = std::str::from_utf8(&line[tab + 1..]) else {
        return false;
    };
    let mut parts = date.split_whitespace();
    let (Some(day), Some(time), Some(zone)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let day_minutes: i64 = match day {
        "1970-01-01" => 0,
        "1969-12-31" => -24 * 60,
        _ => return false,
    };
    let (clock, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut clock = clock.split(':').map(str::parse::<i64>);
    let (Some(Ok(hours)), Some(Ok(minutes)), Some(Ok(0)), None) =
        (clock.next(), clock.next(), clock.next(), clock.next())
    else {
        return false;
    };
    let (sign, zone) = match zone.split_at_checked(1) {
        Some(("+", rest)) => (1, rest),
        Some(("-", rest)) => (-1, rest),
        _ => return false,
    };
    let zone = zone.replace(':', "");
    let (Some(zone_hours), Some(zone_minutes)) = (
        zone.get(..2).and_then(|h| h.parse::<i64>().ok()),
        zone.get(2..).and_then(|m| m.parse::<i64>().ok()),
    ) else {
        return false;
    };
    fraction.bytes().all(|b| b == b'0')
        && day_minutes + hours * 60 + minutes == sign * (zone_hours * 60 + zone_minutes)
}

/// `path` without its first `n` components, as `git apply -p n` strips them
/// (repeated slashes count as one); `None` when nothing would be left.
///
/// Not diffy's `FileOperation::strip_prefix`: that keeps the last component when too
/// few remain, where git refuses, and strips `rename from` names like the others.
fn strip_components(path: &[u8], n: usize) -> Option<&[u8]> {
    let mut rest = path;
    for _ in 0..n {
        let slash = rest.iter().position(|&b| b == b'/')?;
        rest = &rest[slash + 1..];
        while let Some(more) = rest.strip_prefix(b"/") {
            rest = more;
        }
    }
    (!rest.is_empty()).then_some(rest)
}

/// A name `-p strip` leaves nothing of, which a patch creates: `git apply` refuses the
/// patch, and so do we, nothing written (`b/run.sh` at `-p3` must not become
/// `b/run.sh`). A bare name (`new.py`, no directory), as a patch written without
/// prefixes has, and any name of a patch that names its files unprefixed, is taken as
/// it is: the leniency for agents' patches (see the module documentation).
fn unstrippable(name: &[u8], strip: usize, unprefixed: bool) -> Result<&[u8], EditError> {
    if unprefixed || !name.contains(&b'/') {
        return Ok(name);
    }
    Err(EditError::path(
        as_path(name),
        format!("too few path components for -p {strip} (git apply refuses it too)"),
    ))
}

fn as_path(name: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(name))
}

// ---------------------------------------------------------------------------------
// The overlay: every path the patch touches, on disk and as the patch leaves it.

/// One path of the overlay.
struct Slot {
    target: Target,
    /// The path as the patch names it (after `-p`), for messages.
    shown: PathBuf,
    disk: Option<Vec<u8>>,
    disk_mode: Option<u32>,
    current: Option<Vec<u8>>,
    /// Permission bits the patch sets (see [`FileChange::mode`]).
    mode: Option<u32>,
    /// When the patch first changed this path (the plan's order); `None` if it only
    /// looked at it.
    touched: Option<usize>,
}

struct Tree<'w> {
    workspace: &'w Path,
    base: &'w Path,
    slots: Vec<Slot>,
    /// Paths touched so far, to number the next one.
    touches: usize,
    index: HashMap<PathBuf, usize>,
    /// (from, to) slot pairs of renames, in patch order.
    renames: Vec<(usize, usize)>,
}

impl<'w> Tree<'w> {
    fn new(workspace: &'w Path, base: &'w Path) -> Self {
        Tree {
            workspace,
            base,
            slots: Vec::new(),
            index: HashMap::new(),
            touches: 0,
            renames: Vec::new(),
        }
    }

    /// The slot for `name` (a patch path after `-p`), read from disk the first time.
    fn slot(&mut self, name: &[u8]) -> Result<usize, EditError> {
        let shown = as_path(name).to_path_buf();
        let target = paths::resolve(self.workspace, self.base, &shown)?;
        if let Some(&i) = self.index.get(&target.path) {
            return Ok(i);
        }
        let disk = paths::read_existing(&target, &shown)?;
        let disk_mode = match disk {
            Some(_) => std::fs::metadata(&target.real)
                .ok()
                .map(|meta| meta.permissions().mode() & 0o7777),
            None => None,
        };
        self.index.insert(target.path.clone(), self.slots.len());
        self.slots.push(Slot {
            target,
            shown,
            current: disk.clone(),
            disk,
            disk_mode,
            mode: None,
            touched: None,
        });
        Ok(self.slots.len() - 1)
    }

    /// Whether `name` names a file, now, in the overlay. Paths that may not be
    /// written count as missing; using one reports why.
    fn exists(&mut self, name: &[u8]) -> bool {
        match self.slot(name) {
            Ok(i) => self.slots[i].current.is_some(),
            Err(_) => false,
        }
    }

    /// Whether the patch names existing files without the `-p` prefix: some file it
    /// modifies or deletes exists only unstripped. New files then follow suit.
    fn looks_unprefixed(&mut self, files: &[FilePatch<'_, [u8]>], strip: usize) -> bool {
        if strip == 0 {
            return false;
        }
        files.iter().any(|file| match file.operation() {
            FileOperation::Modify { original: name, .. } | FileOperation::Delete(name) => {
                let stripped = strip_components(name, strip);
                !stripped.is_some_and(|s| self.exists(s)) && self.exists(name)
            }
            _ => false,
        })
    }

    /// The existing file that `names` (most likely first) mean, stripped by `strip`
    /// or, failing that, not stripped at all; unstripped first when the patch as a
    /// whole names its files without prefixes, so that all its files agree.
    fn existing(
        &mut self,
        names: &[&[u8]],
        strip: usize,
        unprefixed: bool,
    ) -> Result<usize, EditError> {
        let levels = if unprefixed { [0, strip] } else { [strip, 0] };
        for level in levels {
            for name in names {
                let Some(stripped) = strip_components(name, level) else {
                    continue;
                };
                if self.exists(stripped) {
                    return self.slot(stripped);
                }
            }
        }
        let name = names.first().copied().unwrap_or_default();
        let shown = strip_components(name, strip).unwrap_or(name);
        // Resolving again reports a path that may not be written as such.
        let i = self.slot(shown)?;
        Err(EditError::path(&self.slots[i].shown, "no such file"))
    }

    /// The path a new file gets. `-p N` applies, except to a name without the usual
    /// `a/`/`b/` prefix when the patch names its other files unprefixed, or when the
    /// unstripped name's directory exists (`src/new.py`, written by an agent).
    fn new_file_name<'n>(
        &self,
        name: &'n [u8],
        strip: usize,
        unprefixed: bool,
    ) -> Result<&'n [u8], EditError> {
        if strip == 0 {
            return Ok(name);
        }
        let Some(stripped) = strip_components(name, strip) else {
            return unstrippable(name, strip, unprefixed);
        };
        if name.starts_with(b"a/") || name.starts_with(b"b/") {
            return Ok(stripped);
        }
        let parent_exists = name
            .iter()
            .rposition(|&b| b == b'/')
            .is_some_and(|slash| self.base.join(as_path(&name[..slash])).is_dir());
        Ok(if unprefixed || parent_exists {
            name
        } else {
            stripped
        })
    }

    fn apply_file(
        &mut self,
        file: &FilePatch<'_, [u8]>,
        strip: usize,
        unprefixed: bool,
        (old_missing, new_missing): (bool, bool),
    ) -> Result<(), EditError> {
        let operation = file.operation();
        let named = || {
            let (name, level) = match operation {
                FileOperation::Create(name) | FileOperation::Delete(name) => (name, strip),
                FileOperation::Modify { modified, .. } => (modified, strip),
                FileOperation::Rename { to, .. } | FileOperation::Copy { to, .. } => {
                    (to, strip.saturating_sub(1))
                }
            };
            as_path(strip_components(name, level).unwrap_or(name)).to_path_buf()
        };
        let PatchKind::Text(text) = file.patch() else {
            return Err(EditError::path(
                &named(),
                "binary patches are not supported",
            ));
        };
        for mode in [file.old_mode(), file.new_mode()].into_iter().flatten() {
            let refused = match mode {
                FileMode::Symlink => "symbolic links in patches are not supported",
                FileMode::Gitlink => "submodule changes are not supported",
                FileMode::Regular | FileMode::Executable => continue,
            };
            return Err(EditError::path(&named(), refused));
        }
        let hunks: Vec<Hunk<'_>> = text.hunks().iter().map(Hunk::from_diffy).collect();
        let new_mode = file.new_mode().copied();

        match operation {
            FileOperation::Create(name) => {
                let name = self.new_file_name(name, strip, unprefixed)?;
                self.create(name, &hunks, new_mode)
            }
            FileOperation::Delete(name) => {
                let i = self.existing(&[name], strip, unprefixed)?;
                self.delete(i, &hunks)
            }
            // `diff -N` marks the missing side with the epoch date, not /dev/null.
            FileOperation::Modify { modified, .. } if old_missing && !new_missing => {
                let name = self.new_file_name(modified, strip, unprefixed)?;
                self.create(name, &hunks, new_mode)
            }
            FileOperation::Modify { original, .. } if new_missing && !old_missing => {
                let i = self.existing(&[original], strip, unprefixed)?;
                self.delete(i, &hunks)
            }
            FileOperation::Modify { original, modified } => {
                let names = modify_candidates(original, modified, strip);
                match self.existing(&names, strip, unprefixed) {
                    Ok(i) => self.modify(i, &hunks, new_mode),
                    // A plain diff of a new file whose old side is not /dev/null.
                    Err(_) if creates_from_nothing(&hunks) => {
                        let name = self.new_file_name(modified, strip, unprefixed)?;
                        self.create(name, &hunks, new_mode)
                    }
                    Err(e) => Err(e),
                }
            }
            // `rename from`/`copy from` lines carry no `a/` prefix: git strips one
            // component less from them.
            FileOperation::Rename { from, to } => {
                self.rename(from, to, strip.saturating_sub(1), &hunks, new_mode, false)
            }
            FileOperation::Copy { from, to } => {
                self.rename(from, to, strip.saturating_sub(1), &hunks, new_mode, true)
            }
        }
    }

    fn patched(&self, i: usize, base: &[u8], hunks: &[Hunk<'_>]) -> Result<Vec<u8>, EditError> {
        hunks::apply(base, hunks).map_err(|failure| EditError::Hunk {
            path: super::shown(&self.slots[i].shown),
            number: failure.number,
            header: failure.header,
            details: failure.details,
        })
    }

    fn modify(
        &mut self,
        i: usize,
        hunks: &[Hunk<'_>],
        new_mode: Option<FileMode>,
    ) -> Result<(), EditError> {
        if hunks.is_empty() && new_mode.is_none() {
            return Err(EditError::path(
                &self.slots[i].shown,
                "the patch has no hunks for this file",
            ));
        }
        let current = self.slots[i].current.as_deref().unwrap_or_default();
        let after = self.patched(i, current, hunks)?;
        let mode = new_mode.map(|m| with_mode(self.effective_mode(i), m));
        let slot = self.set(i, Some(after));
        slot.mode = mode.or(slot.mode);
        Ok(())
    }

    fn create(
        &mut self,
        name: &[u8],
        hunks: &[Hunk<'_>],
        new_mode: Option<FileMode>,
    ) -> Result<(), EditError> {
        let i = self.slot(name)?;
        if self.slots[i].current.is_some() {
            return Err(EditError::path(&self.slots[i].shown, "already exists"));
        }
        let after = self.patched(i, b"", hunks)?;
        // As `git apply`: 0o777 or 0o666, reduced by the umask when written.
        self.set(i, Some(after)).mode = (new_mode == Some(FileMode::Executable)).then_some(0o777);
        Ok(())
    }

    fn delete(&mut self, i: usize, hunks: &[Hunk<'_>]) -> Result<(), EditError> {
        let current = self.slots[i].current.as_deref().unwrap_or_default();
        let left = self.patched(i, current, hunks)?;
        if !left.is_empty() {
            return Err(EditError::path(
                &self.slots[i].shown,
                "the patch deletes this file, but its hunks leave lines in it",
            ));
        }
        self.set(i, None);
        Ok(())
    }

    fn rename(
        &mut self,
        from: &[u8],
        to: &[u8],
        strip: usize,
        hunks: &[Hunk<'_>],
        new_mode: Option<FileMode>,
        copy: bool,
    ) -> Result<(), EditError> {
        let f = self.existing(&[from], strip, false)?;
        if self.slots[f].target.path != self.slots[f].target.real {
            let message = "renaming or copying a symbolic link is not supported";
            return Err(EditError::path(&self.slots[f].shown, message));
        }
        let to = match strip_components(to, strip) {
            Some(stripped) => stripped,
            // `rename to` names carry no prefix: `-p N` strips N - 1 of their components.
            None => unstrippable(to, strip + 1, false)?,
        };
        let t = self.slot(to)?;
        if t == f {
            return self.modify(f, hunks, new_mode);
        }
        if self.slots[t].current.is_some() {
            return Err(EditError::path(&self.slots[t].shown, "already exists"));
        }
        let current = self.slots[f].current.as_deref().unwrap_or_default();
        let after = self.patched(f, current, hunks)?;
        let old_mode = self.effective_mode(f);
        if !copy {
            self.set(f, None);
            self.renames.push((f, t));
        }
        self.set(t, Some(after)).mode = Some(new_mode.map_or(old_mode, |m| with_mode(old_mode, m)));
        Ok(())
    }

    /// Record what the patch leaves at slot `i`.
    fn set(&mut self, i: usize, content: Option<Vec<u8>>) -> &mut Slot {
        let slot = &mut self.slots[i];
        slot.current = content;
        if slot.touched.is_none() {
            slot.touched = Some(self.touches);
            self.touches += 1;
        }
        slot
    }

    fn effective_mode(&self, i: usize) -> u32 {
        let slot = &self.slots[i];
        slot.mode.or(slot.disk_mode).unwrap_or(0o644)
    }

    /// Refuse a patch that leaves a path both a file and the directory of another
    /// file (`d/x` and `d/x/y`, in either order), as `git apply` does, before anything
    /// is written: the commit could only fail half-way. (A file on disk in the way, or
    /// a directory on disk where the patch puts a file, is refused when the path is
    /// resolved.)
    fn refuse_file_and_directory(&self) -> Result<(), EditError> {
        for inner in self.slots.iter().filter(|s| s.current.is_some()) {
            let mut ancestor = inner.target.path.parent();
            while let Some(dir) = ancestor.filter(|d| d.starts_with(self.workspace)) {
                if let Some(&i) = self.index.get(dir)
                    && self.slots[i].current.is_some()
                {
                    return Err(EditError::path(
                        &self.slots[i].shown,
                        format!(
                            "the patch leaves it a file and also creates {} inside it",
                            super::shown(&inner.shown)
                        ),
                    ));
                }
                ancestor = dir.parent();
            }
        }
        Ok(())
    }

    /// The plan: one change per touched path whose state differs from the disk, a
    /// rename where a file moved in one piece.
    fn into_plan(self) -> EditPlan {
        let mut renamed_to: HashMap<usize, usize> = HashMap::new();
        let mut renamed_from: HashSet<usize> = HashSet::new();
        for &(f, t) in &self.renames {
            let (from, to) = (&self.slots[f], &self.slots[t]);
            let moved = from.disk.is_some()
                && from.current.is_none()
                && to.disk.is_none()
                && to.current.is_some();
            if moved && !renamed_from.contains(&f) && !renamed_to.contains_key(&t) {
                renamed_to.insert(t, f);
                renamed_from.insert(f);
            }
        }
        let mut order: Vec<(usize, usize)> = (self.slots.iter().enumerate())
            .filter_map(|(i, slot)| Some((slot.touched?, i)))
            .collect();
        order.sort_unstable();
        let mut changes = Vec::new();
        for (_, i) in order {
            let slot = &self.slots[i];
            if renamed_from.contains(&i) {
                continue;
            }
            let (renamed, before) = match renamed_to.get(&i) {
                Some(&f) => (
                    Some(self.slots[f].target.path.clone()),
                    self.slots[f].disk.clone(),
                ),
                None => (None, slot.disk.clone()),
            };
            if before.is_none() && slot.current.is_none() {
                continue;
            }
            changes.push(FileChange {
                path: slot.target.path.clone(),
                renamed_from: renamed,
                before,
                after: slot.current.clone(),
                mode: slot.mode,
            });
        }
        EditPlan { changes }
    }
}

/// For a modify whose two names differ once stripped, the name git would use first:
/// the shorter when it is a prefix of the other (`x` for `x` → `x.new`), else the new
/// one (`x` for `x.orig` → `x`); the other name next. Names are returned unstripped.
fn modify_candidates<'n>(original: &'n [u8], modified: &'n [u8], strip: usize) -> Vec<&'n [u8]> {
    let (old, new) = (
        strip_components(original, strip),
        strip_components(modified, strip),
    );
    let old_first = match (old, new) {
        (Some(old), Some(new)) => old.len() < new.len() && new.starts_with(old),
        (Some(_), None) => true,
        _ => false,
    };
    match (old_first, original == modified) {
        (_, true) => vec![original],
        (true, false) => vec![original, modified],
        (false, false) => vec![modified, original],
    }
}

/// Whether every hunk adds to an empty file (`@@ -0,0 +1,N @@`), as `diff -N` writes
/// a new file.
fn creates_from_nothing(hunks: &[Hunk<'_>]) -> bool {
    !hunks.is_empty() && hunks.iter().all(|h| h.old_start == 0 && h.old_len == 0)
}

/// `old` permission bits after a git mode line: `100755` adds 0o755, `100644`
/// removes the execute bits.
fn with_mode(old: u32, mode: FileMode) -> u32 {
    match mode {
        FileMode::Executable => old | 0o755,
        FileMode::Regular => old & !0o111,
        FileMode::Symlink | FileMode::Gitlink => old,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_dates_in_any_zone() {
        let epoch = |line: &str| header_has_epoch_date(line.as_bytes());
        assert!(epoch("+++ b/x\t1970-01-01 00:00:00.000000000 +0000\n"));
        assert!(epoch("--- a/x\t1970-01-01 00:00:00 +0000\n"));
        assert!(epoch("--- a/x\t1969-12-31 19:00:00.000000000 -0500\n"));
        assert!(epoch("--- a/x\t1970-01-01 05:30:00 +05:30\n"));
        assert!(!epoch("--- a/x\t1970-01-01 00:00:01 +0000\n"));
        assert!(!epoch("--- a/x\t1970-01-01 00:00:00.5 +0000\n"));
        assert!(!epoch("--- a/x\t2024-05-01 00:00:00 +0000\n"));
        assert!(!epoch("--- a/x\t1969-12-31 19:00:00 +0000\n"));
        assert!(!epoch("--- a/x 1970-01-01 00:00:00 +0000\n"));
        assert!(!epoch("--- a/x\t1970-01-01\n"));
    }

    #[test]
    fn strips_like_git_apply() {
        let strip = |path: &str, n| strip_components(path.as_bytes(), n).map(<[u8]>::to_vec);
        assert_eq!(strip("a/src/x.rs", 1), Some(b"src/x.rs".to_vec()));
        assert_eq!(strip("a//src/x.rs", 1), Some(b"src/x.rs".to_vec()));
        assert_eq!(strip("a/src/x.rs", 2), Some(b"x.rs".to_vec()));
        assert_eq!(strip("a/src/x.rs", 0), Some(b"a/src/x.rs".to_vec()));
        assert_eq!(strip("x.rs", 1), None);
        assert_eq!(strip("a/", 1), None);
    }

    #[test]
    fn modify_prefers_names_as_git_does() {
        let pick = |old: &str, new: &str| {
            modify_candidates(old.as_bytes(), new.as_bytes(), 1)
                .into_iter()
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(pick("a/x", "b/x"), ["b/x", "a/x"]);
        assert_eq!(pick("a/x", "a/x"), ["a/x"]);
        assert_eq!(pick("a/x.orig", "b/x"), ["b/x", "a/x.orig"]);
        assert_eq!(pick("a/x", "b/x.new"), ["a/x", "b/x.new"]);
    }

    #[test]
    fn hunk_counts_and_body() {
        assert_eq!(hunk_counts(b"@@ -1,3 +1,4 @@ fn x\n"), Some((3, 4)));
        assert_eq!(hunk_counts(b"@@ -1 +0,0 @@\n"), Some((1, 0)));
        assert_eq!(hunk_counts(b"@@ -x +1 @@\n"), None);
        let lines: Vec<(usize, &[u8])> = [
            &b" a\n"[..],
            b"-b\n",
            b"\\ No newline at end of file\n",
            b"+c\n",
            b"-- \n",
        ]
        .into_iter()
        .enumerate()
        .collect();
        assert_eq!(skip_hunk_body(&lines, 0, 2, 2), 4);
    }
}
