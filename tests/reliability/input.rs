//! Hostile and broken input.
//!
//! - Random trees and random edits of them (CRLF, mixed line endings, no final
//!   newline, empty files, creations, deletions, renames with and without changes)
//!   become a patch through real `git diff`; lspgate's planner and commit apply it
//!   to one copy and `git apply` to another, and the trees must be byte-identical.
//! - The LSP frame reader on random bytes and on mutated streams of valid frames: the
//!   bounded twin of `fuzz/fuzz_targets/frames.rs`. (The patch planner's twin is
//!   `plan_patch_never_panics` in `src/edit/tests.rs`.)
//! - A corpus of malformed patches (`tests/corpus/patches/*.diff`), each refused
//!   through the CLI with exit 2 and the tree, `.git` included, untouched.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use super::figure;
use crate::support::Test;

// ---------------------------------------------------------------------------------
// Random edits, lspgate against git apply

/// How a generated file ends its lines.
#[derive(Debug, Clone, Copy)]
enum Eol {
    Lf,
    Crlf,
    /// Each line picks its own.
    Mixed,
}

/// A generated file: its lines (without endings), their endings, and whether the last
/// line has one.
#[derive(Debug, Clone)]
struct Text {
    lines: Vec<String>,
    eol: Eol,
    /// Per line, for `Eol::Mixed`: CRLF or not.
    crlf: Vec<bool>,
    final_newline: bool,
}

impl Text {
    fn bytes(&self) -> Vec<u8> {
        let mut out = String::new();
        let n = self.lines.len();
        for (i, line) in self.lines.iter().enumerate() {
            out.push_str(line);
            if i + 1 < n || self.final_newline {
                let crlf = match self.eol {
                    Eol::Lf => false,
                    Eol::Crlf => true,
                    Eol::Mixed => self.crlf.get(i).copied().unwrap_or(false),
                };
                out.push_str(if crlf { "\r\n" } else { "\n" });
            }
        }
        out.into_bytes()
    }
}

/// What happens to one file of the tree.
#[derive(Debug, Clone)]
enum Op {
    Keep,
    Modify(Vec<(prop::sample::Index, u8, String)>),
    Delete,
    /// Rename to a fresh name, with some edits (maybe none).
    Rename(Vec<(prop::sample::Index, u8, String)>),
    /// Empty the file.
    Truncate,
    /// Flip whether the last line has a newline.
    FlipFinalNewline,
}

/// Names a tree may use; renames and creations take an unused one.
const NAMES: &[&str] = &[
    "a.txt",
    "b.py",
    "src/c.rs",
    "src/deep/d.txt",
    "e",
    "docs/f.md",
    "g.txt",
    "src/h.txt",
    "i.cfg",
    "j/k/l.txt",
];

/// Lines to build files from: repeated lines make hunks ambiguous, which is where
/// placement bugs hide.
const LINES: &[&str] = &[
    "",
    "x",
    "fn main() {",
    "}",
    "    return 1",
    "same",
    "same",
    "\t tab and spaces ",
    "é ü 😀",
    "-not a removal",
    "+not an addition",
    "@@ not a hunk @@",
    "\\ not a marker",
    "diff --git a/x b/x",
];

fn text_strategy() -> impl Strategy<Value = Text> {
    (
        prop::collection::vec(prop::sample::select(LINES), 0..24),
        prop_oneof![Just(Eol::Lf), Just(Eol::Crlf), Just(Eol::Mixed)],
        prop::collection::vec(any::<bool>(), 24),
        any::<bool>(),
    )
        .prop_map(|(lines, eol, crlf, final_newline)| Text {
            lines: lines.into_iter().map(str::to_owned).collect(),
            eol,
            crlf,
            final_newline,
        })
}

fn edits_strategy() -> impl Strategy<Value = Vec<(prop::sample::Index, u8, String)>> {
    prop::collection::vec(
        (
            any::<prop::sample::Index>(),
            0u8..3,
            prop::sample::select(LINES).prop_map(str::to_owned),
        ),
        0..6,
    )
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Keep),
        6 => edits_strategy().prop_map(Op::Modify),
        1 => Just(Op::Delete),
        2 => edits_strategy().prop_map(Op::Rename),
        1 => Just(Op::Truncate),
        1 => Just(Op::FlipFinalNewline),
    ]
}

/// Insert (0), delete (1) or replace (2) lines at the given places.
fn edit(text: &Text, edits: &[(prop::sample::Index, u8, String)]) -> Text {
    let mut out = text.clone();
    for (at, kind, line) in edits {
        let len = out.lines.len();
        match kind {
            0 => {
                let i = at.index(len + 1);
                out.lines.insert(i, line.clone());
                out.crlf.insert(i.min(out.crlf.len()), i % 2 == 0);
            }
            _ if len == 0 => {}
            1 => {
                out.lines.remove(at.index(len));
            }
            _ => out.lines[at.index(len)] = line.clone(),
        }
    }
    out
}

/// A tree before and after, as path → bytes.
type Tree = BTreeMap<String, Vec<u8>>;

fn trees_strategy() -> impl Strategy<Value = (Tree, Tree)> {
    (
        prop::collection::vec((text_strategy(), op_strategy()), 1..5),
        prop::collection::vec(text_strategy(), 0..2),
    )
        .prop_map(|(files, created)| {
            let mut before = Tree::new();
            let mut after = Tree::new();
            let mut names = NAMES.iter();
            let mut planned = Vec::new();
            for (text, op) in files {
                let Some(name) = names.next() else { break };
                before.insert((*name).to_owned(), text.bytes());
                planned.push((*name, text, op));
            }
            for (name, text, op) in planned {
                let new = match &op {
                    Op::Keep => Some((name, text.bytes())),
                    Op::Modify(edits) => Some((name, edit(&text, edits).bytes())),
                    Op::Delete => None,
                    Op::Rename(edits) => match names.next() {
                        Some(to) => Some((*to, edit(&text, edits).bytes())),
                        None => Some((name, text.bytes())),
                    },
                    Op::Truncate => Some((name, Vec::new())),
                    Op::FlipFinalNewline => {
                        let mut t = text.clone();
                        t.final_newline = !t.final_newline;
                        Some((name, t.bytes()))
                    }
                };
                if let Some((name, bytes)) = new {
                    after.insert(name.to_owned(), bytes);
                }
            }
            for text in created {
                if let Some(name) = names.next() {
                    after.insert((*name).to_owned(), text.bytes());
                }
            }
            (before, after)
        })
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("run git")
}

#[track_caller]
fn git_ok(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = git(dir, args);
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn write_tree(dir: &Path, tree: &Tree) {
    for (name, bytes) in tree {
        let path = dir.join(name);
        fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        fs::write(path, bytes).expect("write");
    }
}

/// Every file under `dir` but `.git`, with its bytes. Empty directories are left out:
/// `git apply` removes the directories a delete empties, lspgate keeps them (see
/// `src/edit/commit.rs`), and neither holds a file.
fn read_tree(dir: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        for entry in fs::read_dir(dir).expect("read_dir").flatten() {
            let path = entry.path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("inside").to_string_lossy();
                out.insert(rel.into_owned(), fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = Tree::new();
    walk(dir, dir, &mut out);
    out
}

/// The patch `git diff` makes from `before` to `after` (renames detected unless
/// `no_renames`).
fn git_diff(tmp: &Path, before: &Tree, after: &Tree, no_renames: bool) -> Vec<u8> {
    let repo = tmp.join("gen");
    fs::create_dir_all(&repo).expect("mkdir");
    git_ok(&repo, &["init", "-q"]);
    write_tree(&repo, before);
    git_ok(&repo, &["add", "-A"]);
    git_ok(&repo, &["commit", "-q", "--allow-empty", "-m", "before"]);
    for name in before.keys() {
        fs::remove_file(repo.join(name)).expect("rm");
    }
    write_tree(&repo, after);
    git_ok(&repo, &["add", "-A"]);
    let renames = if no_renames { "--no-renames" } else { "-M" };
    git_ok(
        &repo,
        &["diff", "--cached", "--no-color", "--no-ext-diff", renames],
    )
}

/// One case: both appliers on copies of `before`, trees compared.
fn agree(before: &Tree, after: &Tree, no_renames: bool) -> Result<(), TestCaseError> {
    // No change, no patch: both appliers refuse an empty one.
    prop_assume!(before != after);
    let tmp = tempfile::tempdir().expect("tempdir");
    let tmp = tmp.path().canonicalize().expect("canonical");
    let patch = git_diff(&tmp, before, after, no_renames);
    let shown = String::from_utf8_lossy(&patch).into_owned();
    let (ours, theirs) = (tmp.join("ours"), tmp.join("theirs"));
    for dir in [&ours, &theirs] {
        fs::create_dir(dir).expect("mkdir");
        write_tree(dir, before);
    }
    let patch_file = tmp.join("patch.diff");
    fs::write(&patch_file, &patch).expect("write the patch");
    let applied = git(
        &theirs,
        &[
            "apply",
            "--whitespace=nowarn",
            patch_file.to_str().expect("utf-8"),
        ],
    );
    prop_assert!(
        applied.status.success(),
        "git apply refused git's own diff: {}\n{shown}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let plan = lspgate::edit::plan_patch(&ours, &ours, &patch, 1);
    let plan = plan.map_err(|e| TestCaseError::fail(format!("lspgate refused: {e}\n{shown}")))?;
    lspgate::edit::commit(&ours, &plan)
        .map_err(|e| TestCaseError::fail(format!("lspgate's commit failed: {e}\n{shown}")))?;
    let (got, want) = (read_tree(&ours), read_tree(&theirs));
    prop_assert_eq!(&got, &want, "trees differ\n{}", shown);
    prop_assert_eq!(&got, after, "not the intended result\n{}", shown);
    Ok(())
}

/// Bounded so that it runs in seconds: each case runs git half a dozen times.
/// `LSPGATE_PATCH_CASES=N` runs more.
fn patch_cases() -> u32 {
    std::env::var("LSPGATE_PATCH_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(64)
}

#[test]
fn random_edits_apply_as_git_apply_applies_them() {
    let started = Instant::now();
    let cases = patch_cases();
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    runner
        .run(
            &(trees_strategy(), any::<bool>()),
            |((before, after), no_renames)| agree(&before, &after, no_renames),
        )
        .expect("lspgate and git apply agree on every generated patch");
    figure(&format!(
        "patch vs git apply: {cases} random trees agree byte for byte in {} ms",
        started.elapsed().as_millis()
    ));
}

/// The comparison can fail: a tree that differs in one byte is caught.
#[test]
fn the_comparison_notices_a_difference() {
    let before = Tree::from([("a.txt".to_owned(), b"one\r\ntwo\r\n".to_vec())]);
    let after = Tree::from([("a.txt".to_owned(), b"one\r\nTWO\r\n".to_vec())]);
    assert!(agree(&before, &after, false).is_ok());
    let wrong = Tree::from([("a.txt".to_owned(), b"one\r\nTWO\n".to_vec())]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let patch = git_diff(tmp.path(), &before, &after, false);
    let ws = tmp.path().join("ws");
    fs::create_dir(&ws).expect("mkdir");
    write_tree(&ws, &before);
    let ws = ws.canonicalize().expect("canonical");
    let plan = lspgate::edit::plan_patch(&ws, &ws, &patch, 1).expect("plans");
    lspgate::edit::commit(&ws, &plan).expect("commits");
    assert_ne!(read_tree(&ws), wrong);
    assert_eq!(read_tree(&ws), after);
}

// ---------------------------------------------------------------------------------
// The LSP frame reader on hostile bytes

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

const BODIES: &[&str] = &[
    r#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///a","diagnostics":[]}}"#,
    r#"{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}}"#,
    r#"{"jsonrpc":"2.0","id":"s1","method":"workspace/configuration","params":{"items":[{}]}}"#,
    r#"{"jsonrpc":"2.0","method":"$/progress","params":{"token":1,"value":{"kind":"end"}}}"#,
];

/// Random bytes, and valid streams with random damage, never panic the reader, and an
/// undamaged stream reads back exactly.
#[test]
fn the_frame_reader_survives_random_and_damaged_streams() {
    let started = Instant::now();
    let config = Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config.clone());
    runner
        .run(&any::<Vec<u8>>(), |bytes| {
            let _ = lspgate::lsp::transport::fuzz_frames(&bytes);
            Ok(())
        })
        .expect("random bytes never panic the reader");

    let piece = prop::sample::select(vec![
        &b"Content-Length: 18446744073709551615\r\n"[..],
        b"Content-Length: -1\r\n",
        b"Content-Length: 99999999999999999999999\r\n",
        b"Content-Length: 0\r\n\r\n",
        b"content-length:3\n\n{}}",
        b"Content-Type: x\r\n",
        b"\r\n",
        b"\n",
        b"\xff\xfe\xc3",
        b"{\"jsonrpc\":\"2.0\"",
        b"\0\0\0",
        b"Content-Length: 5\r\nContent-Length: 7\r\n\r\n",
    ]);
    let damage = prop::collection::vec(
        (
            0u8..4,
            any::<prop::sample::Index>(),
            piece,
            any::<Vec<u8>>(),
        ),
        0..4,
    );
    let stream = prop::collection::vec(prop::sample::select(BODIES), 1..6);
    let mut runner = TestRunner::new(config);
    runner
        .run(&(stream, damage), |(bodies, damage)| {
            let mut input: Vec<u8> = bodies.iter().flat_map(|b| frame(b)).collect();
            if damage.is_empty() {
                let got = lspgate::lsp::transport::fuzz_frames(&input);
                prop_assert_eq!(got, (bodies.len(), 0));
                return Ok(());
            }
            for (kind, at, piece, bytes) in damage {
                let i = at.index(input.len() + 1);
                match kind {
                    0 => {
                        input.splice(i..i, piece.iter().copied());
                    }
                    1 => {
                        input.splice(i..i, bytes);
                    }
                    2 => input.truncate(i),
                    _ => {
                        let end = (i + bytes.len()).min(input.len());
                        input.drain(i..end);
                    }
                }
            }
            let _ = lspgate::lsp::transport::fuzz_frames(&input);
            Ok(())
        })
        .expect("damaged streams never panic the reader");
    figure(&format!(
        "frame reader: 4000 random and damaged streams, no panic, in {} ms",
        started.elapsed().as_millis()
    ));
}

// ---------------------------------------------------------------------------------
// The corpus of malformed patches

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/patches")
}

/// Every file under `dir`, `.git` included (a patch must not write there either),
/// with its bytes; symlinks as their target.
pub(super) fn full_snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in fs::read_dir(dir).expect("read_dir").flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).expect("inside").to_path_buf();
            let meta = fs::symlink_metadata(&path).expect("stat");
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).expect("readlink");
                out.insert(rel, target.into_os_string().into_encoded_bytes());
            } else if meta.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                walk(root, &path, out);
            } else {
                out.insert(rel, fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The tree every corpus patch is tried against.
fn corpus_workspace() -> Test {
    let numbered: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    Test::new()
        .file("a.txt", "one\ntwo\nthree\n")
        .file("b.txt", numbered)
        .file("crlf.txt", "one\r\ntwo\r\n")
        .file("sub/c.txt", "c\n")
}

#[test]
fn every_malformed_patch_is_refused_with_exit_2_and_an_untouched_tree() {
    let mut patches: Vec<PathBuf> = fs::read_dir(corpus_dir())
        .expect("the corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "diff"))
        .collect();
    patches.sort();
    assert!(patches.len() >= 20, "the corpus shrank: {patches:?}");
    let test = corpus_workspace();
    let outside = test.private_dir("home").join("outside");
    fs::create_dir_all(&outside).expect("mkdir outside");
    std::os::unix::fs::symlink(&outside, test.path("out")).expect("symlink out");
    let before = full_snapshot(test.workspace());
    let outside_before = full_snapshot(&outside);
    let started = Instant::now();
    let mut test = test;
    for patch in &patches {
        let name = patch.file_name().expect("a name").to_string_lossy();
        let out = test.args(["patch"]).args([patch]).run();
        assert_eq!(out.code, Some(2), "{name}: not refused\n{out}");
        assert!(
            out.stderr.lines().any(|l| l.starts_with("lspgate: ")),
            "{name}: no error message\n{out}"
        );
        assert_eq!(
            out.stdout, "",
            "{name}: a report for a refused patch\n{out}"
        );
        assert!(
            full_snapshot(out.workspace()) == before,
            "{name}: the tree changed\n{out}"
        );
        assert!(
            full_snapshot(&outside) == outside_before,
            "{name}: a file outside the workspace changed\n{out}"
        );
        test = out.again();
    }
    figure(&format!(
        "malformed patch corpus: {} patches refused with exit 2, tree untouched, in {} ms",
        patches.len(),
        started.elapsed().as_millis()
    ));
}
