//! `check --patch`: the change an already applied diff made. The working tree holds
//! the patch's result (the "after"); the "before" is found by reversing the patch's
//! text — `---`/`+++` and `-`/`+` swapped, hunk ranges swapped, renames, new and
//! deleted files and mode changes turned around, as `git apply -R` reads a patch — and
//! planning that with [`super::plan_patch`] against the working tree, in memory. Its
//! plan is then turned back around, so the result reads as the original patch: before
//! is the text the patch started from, after the working tree's.
//!
//! Reversing the text, rather than the parsed patch, keeps one parser and one set of
//! path rules (`-p N`, unprefixed names, offsets, CRLF) for both directions. Copies
//! cannot be reversed this way (their hunks apply to the source, not to the copy) and
//! are refused.

use super::{EditError, EditPlan, FileChange};
use std::path::Path;

const NO_NEWLINE: &[u8] = b"\\ No newline at end of file";

/// The change `patch` made, given a tree under `base` that already holds its result.
/// Paths resolve as for [`super::plan_patch`]; nothing is written.
pub fn plan_patch_reverse(
    workspace: &Path,
    base: &Path,
    patch: &[u8],
    strip: usize,
) -> Result<EditPlan, EditError> {
    if patch.iter().all(u8::is_ascii_whitespace) {
        return Err(EditError::Patch("line 1: the patch is empty".into()));
    }
    let reversed = reverse(patch)?;
    let undo = super::plan_patch(workspace, base, &reversed, strip).map_err(not_applied)?;
    let changes = undo
        .changes
        .into_iter()
        .map(|c| match c.renamed_from {
            // The undo moves the file back from where the patch put it.
            Some(now) => FileChange {
                path: now,
                renamed_from: Some(c.path),
                before: c.after,
                after: c.before,
                mode: None,
            },
            None => FileChange {
                path: c.path,
                renamed_from: None,
                before: c.after,
                after: c.before,
                mode: None,
            },
        })
        .collect();
    Ok(EditPlan { changes })
}

/// A reversed patch that does not fit the working tree means the patch is not applied
/// (or the tree has moved on since): say so, not only which hunk failed.
fn not_applied(e: EditError) -> EditError {
    const HINT: &str = "check --patch reads the working tree as the patch applied \
                        (for a patch not applied yet: lspgate patch --dry-run)";
    match e {
        EditError::Hunk {
            path,
            number,
            details,
            ..
        } => {
            let details = if details.is_empty() {
                String::new()
            } else {
                format!("\n{details}")
            };
            EditError::Other(format!(
                "{path}: hunk {number}'s result is not in the working tree; {HINT}{details}"
            ))
        }
        EditError::Path { path, message } => EditError::Path {
            path,
            message: format!("{message}; {HINT}"),
        },
        other => other,
    }
}

/// The patch text turned around. Lines that are neither headers nor hunks (a mail
/// preamble, a diffstat, `diff -ru` command lines) are kept as they are.
pub(crate) fn reverse(patch: &[u8]) -> Result<Vec<u8>, EditError> {
    let lines: Vec<&[u8]> = patch.split_inclusive(|&b| b == b'\n').collect();
    let mut out: Vec<u8> = Vec::with_capacity(patch.len());
    let mut i = 0;
    // A `git format-patch` mail: its message may hold anything up to the `---` line.
    if patch.starts_with(b"From ")
        && let Some(end) = lines.iter().position(|l| trim_eol(l) == b"---")
    {
        for line in &lines[..=end] {
            out.extend_from_slice(line);
        }
        i = end + 1;
    }
    while i < lines.len() {
        let line = lines[i];
        if let Some((old, new)) = hunk_counts(line) {
            out.extend(swap_hunk_header(line));
            i = reverse_hunk_body(&lines, i + 1, old, new, &mut out);
        } else if line.starts_with(b"--- ") || line.starts_with(b"+++ ") {
            let (mut old, mut new) = (None, None);
            while let Some(l) = lines.get(i) {
                if l.starts_with(b"--- ") && old.is_none() {
                    old = Some(&l[4..]);
                } else if l.starts_with(b"+++ ") && new.is_none() {
                    new = Some(&l[4..]);
                } else {
                    break;
                }
                i += 1;
            }
            if let Some(name) = new {
                out.extend_from_slice(b"--- ");
                out.extend_from_slice(name);
            }
            if let Some(name) = old {
                out.extend_from_slice(b"+++ ");
                out.extend_from_slice(name);
            }
        } else if line.starts_with(b"diff --git ") {
            let mut block = vec![(0, reverse_diff_git(line))];
            i += 1;
            while let Some(l) = lines.get(i) {
                match reverse_git_header(l, i)? {
                    Some(rewritten) => block.push(rewritten),
                    None => break,
                }
                i += 1;
            }
            // In git's order again: old mode before new mode, from before to.
            block.sort_by_key(|(rank, _)| *rank);
            for (_, l) in block {
                out.extend(l);
            }
        } else {
            out.extend_from_slice(line);
            i += 1;
        }
    }
    Ok(out)
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The old and new line counts of a `@@ -a,b +c,d @@` line.
fn hunk_counts(line: &[u8]) -> Option<(usize, usize)> {
    let (old, new, _) = hunk_ranges(line)?;
    let count = |range: &str| {
        let (start, len) = range.split_once(',').unwrap_or((range, "1"));
        start.parse::<usize>().ok()?;
        len.parse::<usize>().ok()
    };
    Some((count(old)?, count(new)?))
}

/// `@@ -OLD +NEW @@REST` → (OLD, NEW, REST).
fn hunk_ranges(line: &[u8]) -> Option<(&str, &str, &[u8])> {
    let rest = line.strip_prefix(b"@@ -")?;
    let end = rest.windows(3).position(|w| w == b" @@")?;
    let ranges = std::str::from_utf8(&rest[..end]).ok()?;
    let (old, new) = ranges.split_once(" +")?;
    Some((old, new, &rest[end + 3..]))
}

fn swap_hunk_header(line: &[u8]) -> Vec<u8> {
    match hunk_ranges(line) {
        Some((old, new, rest)) => {
            let mut out = format!("@@ -{new} +{old} @@").into_bytes();
            out.extend_from_slice(rest);
            out
        }
        None => line.to_vec(),
    }
}

/// Copy a hunk body starting at `i` with `-` and `+` swapped, counting lines in the
/// patch's own direction as diffy does; returns the index after the body.
fn reverse_hunk_body(
    lines: &[&[u8]],
    mut i: usize,
    old: usize,
    new: usize,
    out: &mut Vec<u8>,
) -> usize {
    let (mut seen_old, mut seen_new) = (0, 0);
    while let Some(&line) = lines.get(i) {
        let complete = seen_old >= old && seen_new >= new;
        match line.first() {
            Some(b'@') => break,
            _ if line.starts_with(NO_NEWLINE) => out.extend_from_slice(line),
            Some(b' ' | b'\n') if !complete => {
                seen_old += 1;
                seen_new += 1;
                out.extend_from_slice(line);
            }
            Some(b'-') if !complete => {
                seen_old += 1;
                out.push(b'+');
                out.extend_from_slice(&line[1..]);
            }
            Some(b'+') if !complete => {
                seen_new += 1;
                out.push(b'-');
                out.extend_from_slice(&line[1..]);
            }
            _ => break,
        }
        i += 1;
    }
    i
}

/// `diff --git A B` → `diff --git B A`, when the two names can be told apart: quoted,
/// one space between them, or the same name under two prefixes. Otherwise the line is
/// kept: the `rename`/`---`/`+++` lines, which are swapped, name the files then.
fn reverse_diff_git(line: &[u8]) -> Vec<u8> {
    let body = trim_eol(line);
    let eol = &line[body.len()..];
    let names = &body[b"diff --git ".len()..];
    let Some((a, b)) = split_git_names(names) else {
        return line.to_vec();
    };
    let mut out = b"diff --git ".to_vec();
    out.extend_from_slice(b);
    out.push(b' ');
    out.extend_from_slice(a);
    out.extend_from_slice(eol);
    out
}

fn split_git_names(names: &[u8]) -> Option<(&[u8], &[u8])> {
    if names.first() == Some(&b'"') {
        // A quoted first name ends at the first unescaped quote.
        let mut escaped = false;
        for (k, &c) in names.iter().enumerate().skip(1) {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    let rest = names.get(k + 1..)?.strip_prefix(b" ")?;
                    return Some((&names[..=k], rest));
                }
                _ => {}
            }
        }
        return None;
    }
    if let Some(k) = names.windows(2).position(|w| w == b" \"") {
        return Some((&names[..k], &names[k + 1..]));
    }
    let spaces: Vec<usize> = (0..names.len()).filter(|&k| names[k] == b' ').collect();
    if let [k] = spaces[..] {
        return Some((&names[..k], &names[k + 1..]));
    }
    let without_prefix = |name: &[u8]| -> Option<Vec<u8>> {
        let slash = name.iter().position(|&c| c == b'/')?;
        Some(name[slash + 1..].to_vec())
    };
    spaces.into_iter().find_map(|k| {
        let (a, b) = (&names[..k], &names[k + 1..]);
        (without_prefix(a)? == without_prefix(b)?).then_some((a, b))
    })
}

/// One git extended header line after `diff --git`, reversed, with its rank in git's
/// order; `None` when the line is not one (the header block has ended).
fn reverse_git_header(line: &[u8], index: usize) -> Result<Option<(u8, Vec<u8>)>, EditError> {
    let swap = |from: &[u8], to: &[u8]| {
        let mut out = to.to_vec();
        out.extend_from_slice(&line[from.len()..]);
        out
    };
    let rewritten = if line.starts_with(b"old mode ") {
        (2, swap(b"old mode ", b"new mode "))
    } else if line.starts_with(b"new mode ") {
        (1, swap(b"new mode ", b"old mode "))
    } else if line.starts_with(b"new file mode ") {
        (3, swap(b"new file mode ", b"deleted file mode "))
    } else if line.starts_with(b"deleted file mode ") {
        (3, swap(b"deleted file mode ", b"new file mode "))
    } else if line.starts_with(b"similarity index ") || line.starts_with(b"dissimilarity index ") {
        (4, line.to_vec())
    } else if line.starts_with(b"rename from ") {
        (6, swap(b"rename from ", b"rename to "))
    } else if line.starts_with(b"rename to ") {
        (5, swap(b"rename to ", b"rename from "))
    } else if line.starts_with(b"copy from ") || line.starts_with(b"copy to ") {
        return Err(EditError::Patch(format!(
            "line {}: check --patch cannot reverse a copy (`copy from`/`copy to`); \
             make the patch without copy detection",
            index + 1
        )));
    } else if line.starts_with(b"index ") {
        (7, reverse_index(line))
    } else if line.starts_with(b"Binary files ") || line.starts_with(b"GIT binary patch") {
        // Kept: planning refuses binary patches with its own message.
        (8, line.to_vec())
    } else {
        return Ok(None);
    };
    Ok(Some(rewritten))
}

/// `index A..B[ MODE]` → `index B..A[ MODE]`.
fn reverse_index(line: &[u8]) -> Vec<u8> {
    let body = trim_eol(line);
    let eol = &line[body.len()..];
    let rest = &body[b"index ".len()..];
    let (hashes, mode) = match rest.iter().position(|&c| c == b' ') {
        Some(k) => (&rest[..k], &rest[k..]),
        None => (rest, &b""[..]),
    };
    let Some(dots) = hashes.windows(2).position(|w| w == b"..") else {
        return line.to_vec();
    };
    let mut out = b"index ".to_vec();
    out.extend_from_slice(&hashes[dots + 2..]);
    out.extend_from_slice(b"..");
    out.extend_from_slice(&hashes[..dots]);
    out.extend_from_slice(mode);
    out.extend_from_slice(eol);
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::*;

    type Tree = BTreeMap<&'static str, Vec<u8>>;

    fn tree(files: &[(&'static str, &str)]) -> Tree {
        files
            .iter()
            .map(|(p, t)| (*p, t.as_bytes().to_vec()))
            .collect()
    }

    fn write(dir: &Path, tree: &Tree) {
        for (path, bytes) in tree {
            let path = dir.join(path);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, bytes).expect("write");
        }
    }

    fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(["-c", "core.autocrlf=false"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// `git diff --cached -M` (git: true) or `diff -ruN` from `before` to `after`.
    fn make_patch(tmp: &Path, before: &Tree, after: &Tree, git_diff: bool) -> Vec<u8> {
        if git_diff {
            let repo = tmp.join("gen");
            fs::create_dir(&repo).expect("mkdir");
            git(&repo, &["init", "-q"]);
            write(&repo, before);
            git(&repo, &["add", "-A"]);
            git(&repo, &["commit", "-q", "--allow-empty", "-m", "before"]);
            for path in before.keys() {
                fs::remove_file(repo.join(path)).expect("rm");
            }
            write(&repo, after);
            git(&repo, &["add", "-A"]);
            git(
                &repo,
                &["diff", "--cached", "--no-color", "--no-ext-diff", "-M"],
            )
        } else {
            let dir = tmp.join("plain");
            for (name, t) in [("before", before), ("after", after)] {
                fs::create_dir_all(dir.join(name)).expect("mkdir");
                write(&dir.join(name), t);
            }
            let out = Command::new("diff")
                .args(["-ruN", "before", "after"])
                .current_dir(&dir)
                .env("TZ", "UTC")
                .output()
                .expect("diff runs");
            out.stdout
        }
    }

    /// Applies `before` → `after` (already in the working tree) in reverse, and checks
    /// that the plan reads as the forward change: each file's before and after text,
    /// and which file a rename came from.
    fn check(before: Tree, after: Tree, git_diff: bool) -> EditPlan {
        let tmp = tempfile::tempdir().expect("tempdir");
        let patch = make_patch(tmp.path(), &before, &after, git_diff);
        let ws = tmp.path().join("ws");
        fs::create_dir(&ws).expect("mkdir");
        write(&ws, &after);
        let ws = ws.canonicalize().expect("canonical");
        let shown = String::from_utf8_lossy(&patch).into_owned();
        let plan = plan_patch_reverse(&ws, &ws, &patch, 1)
            .unwrap_or_else(|e| panic!("reverse failed: {e}\n{shown}"));
        let rel = |p: &PathBuf| {
            p.strip_prefix(&ws)
                .expect("inside")
                .to_string_lossy()
                .into_owned()
        };
        assert!(!plan.changes.is_empty(), "{shown}");
        for change in &plan.changes {
            let path = rel(&change.path);
            let from = change.renamed_from.as_ref().map(rel);
            assert_eq!(
                change.after.as_deref(),
                after.get(path.as_str()).map(Vec::as_slice),
                "after of {path}\n{shown}"
            );
            let old_name = from.clone().unwrap_or(path.clone());
            assert_eq!(
                change.before.as_deref(),
                before.get(old_name.as_str()).map(Vec::as_slice),
                "before of {path}\n{shown}"
            );
            if let Some(from) = from {
                assert!(!after.contains_key(from.as_str()), "{from} left\n{shown}");
            }
        }
        // Every file that differs is in the plan.
        let named: Vec<String> = plan
            .changes
            .iter()
            .flat_map(|c| std::iter::once(&c.path).chain(c.renamed_from.as_ref()))
            .map(rel)
            .collect();
        for path in before.keys().chain(after.keys()) {
            if before.get(path) != after.get(path) {
                assert!(named.iter().any(|n| n == path), "{path} missing\n{shown}");
            }
        }
        // Planning reads, never writes: the working tree is as it was.
        for (path, bytes) in &after {
            assert_eq!(&fs::read(ws.join(path)).expect("read"), bytes);
        }
        plan
    }

    fn numbered(prefix: &str, n: usize) -> String {
        (1..=n).map(|i| format!("{prefix} line {i}\n")).collect()
    }

    #[test]
    fn modify_several_hunks_and_files() {
        let a = numbered("a", 40);
        let b = numbered("b", 10);
        for git_diff in [true, false] {
            check(
                tree(&[("a.txt", &a), ("src/b.txt", &b)]),
                tree(&[
                    (
                        "a.txt",
                        &a.replace("a line 3\n", "A3\n").replace("a line 30\n", ""),
                    ),
                    ("src/b.txt", &b.replace("b line 5\n", "B5\nB5b\n")),
                ]),
                git_diff,
            );
        }
    }

    #[test]
    fn created_and_deleted_files() {
        for git_diff in [true, false] {
            let plan = check(
                tree(&[("gone.txt", "one\ntwo\n"), ("keep.txt", "k\n")]),
                tree(&[("new/made.txt", "fresh\n"), ("keep.txt", "k\n")]),
                git_diff,
            );
            assert_eq!(plan.changes.len(), 2);
        }
    }

    #[test]
    fn rename_with_a_change() {
        let long = numbered("long", 20);
        let plan = check(
            tree(&[("old/name.txt", &long)]),
            tree(&[("new/name.txt", &long.replace("long line 10\n", "ten\n"))]),
            true,
        );
        assert_eq!(plan.changes.len(), 1);
        assert!(plan.changes[0].renamed_from.is_some());
    }

    #[test]
    fn missing_newline_at_end_of_file() {
        for git_diff in [true, false] {
            check(
                tree(&[("a.txt", "one\ntwo")]),
                tree(&[("a.txt", "one\nTWO\nthree")]),
                git_diff,
            );
            check(
                tree(&[("b.txt", "one\ntwo")]),
                tree(&[("b.txt", "one\ntwo\n")]),
                git_diff,
            );
        }
    }

    #[test]
    fn a_patch_not_applied_is_explained() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let before = tree(&[("a.txt", "one\ntwo\nthree\n")]);
        let after = tree(&[("a.txt", "one\n2\nthree\n")]);
        let patch = make_patch(tmp.path(), &before, &after, true);
        let ws = tmp.path().join("ws");
        fs::create_dir(&ws).expect("mkdir");
        // The tree still holds the text before the patch.
        write(&ws, &before);
        let ws = ws.canonicalize().expect("canonical");
        let err = plan_patch_reverse(&ws, &ws, &patch, 1).expect_err("not applied");
        let text = err.to_string();
        assert!(text.starts_with("a.txt: hunk 1"), "{text}");
        assert!(text.contains("patch --dry-run"), "{text}");
    }

    #[test]
    fn copies_are_refused() {
        let patch = b"diff --git a/x b/y\nsimilarity index 90%\ncopy from x\ncopy to y\n";
        let err = reverse(patch).expect_err("refused");
        assert!(err.to_string().contains("line 3"), "{err}");
    }

    #[test]
    fn headers_turn_around() {
        let patch = b"diff --git a/old b/new\n\
            old mode 100644\n\
            new mode 100755\n\
            similarity index 90%\n\
            rename from old\n\
            rename to new\n\
            index 1111111..2222222\n\
            --- a/old\n\
            +++ b/new\n\
            @@ -1,2 +1,3 @@ fn\n \
            a\n\
            -b\n\
            +c\n\
            +d\n";
        let reversed = reverse(patch).expect("reversed");
        assert_eq!(
            String::from_utf8(reversed).expect("utf-8"),
            "diff --git b/new a/old\n\
             old mode 100755\n\
             new mode 100644\n\
             similarity index 90%\n\
             rename from new\n\
             rename to old\n\
             index 2222222..1111111\n\
             --- b/new\n\
             +++ a/old\n\
             @@ -1,3 +1,2 @@ fn\n \
             a\n\
             +b\n\
             -c\n\
             -d\n"
        );
        assert_eq!(
            reverse(&reverse(patch).expect("once")).expect("twice"),
            patch.to_vec(),
            "reversing twice gives the patch back"
        );
    }

    #[test]
    fn diff_git_names() {
        let split = |s: &str| {
            split_git_names(s.as_bytes()).map(|(a, b)| {
                (
                    String::from_utf8_lossy(a).into_owned(),
                    String::from_utf8_lossy(b).into_owned(),
                )
            })
        };
        let pair = |a: &str, b: &str| Some((a.to_owned(), b.to_owned()));
        assert_eq!(split("a/x b/x"), pair("a/x", "b/x"));
        assert_eq!(split("a/x y b/x y"), pair("a/x y", "b/x y"));
        assert_eq!(
            split("\"a/x\\\"y\" \"b/z\""),
            pair("\"a/x\\\"y\"", "\"b/z\"")
        );
        assert_eq!(split("a/x \"b/y z\""), pair("a/x", "\"b/y z\""));
        assert_eq!(split("a/x y b/z w"), None);
    }
}
