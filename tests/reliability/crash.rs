//! Crash safety: `lspgate patch` killed with SIGKILL at random moments while it
//! commits a large multi-file patch. The random delay is the fault being injected,
//! not a way of waiting for something.
//!
//! The guarantee tested (stated in `RELIABILITY.md` and in `src/edit/commit.rs`):
//! - per file, atomic: every file is entirely its old bytes or entirely its new ones,
//!   never a mix, never truncated;
//! - across files, not atomic (as with `git apply`), but ordered: the files already
//!   replaced are a prefix of the patch's writes in patch order, and a file the patch
//!   deletes (or renames away) is removed only once every write is done.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{figure, kill};
use crate::support::Test;

const FILES: usize = 12;
const LINES: usize = 4000;
const KILLS: usize = 30;
/// Kills that must land while lspgate runs; more are made, up to `MAX_KILLS`, until
/// they have (on a loaded machine a commit's length varies from run to run).
const MIN_INTERRUPTED: usize = 3;
const MAX_KILLS: usize = 300;

/// A small xorshift: reproducible delays from a printed seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn content(i: usize, version: &str) -> String {
    (0..LINES)
        .map(|n| {
            if n % 500 == 7 {
                format!("file {i} line {n} {version}\n")
            } else {
                format!("file {i} line {n} unchanged text to make the file larger\n")
            }
        })
        .collect()
}

fn name(i: usize) -> String {
    format!("f{i:02}.txt")
}

/// The files before and after the patch, in the patch's order: modifications of
/// every `fNN.txt`, then a new file, a deletion and a rename (git's order is by path,
/// so the names are chosen to sort that way).
fn states() -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let mut before = BTreeMap::new();
    let mut after = BTreeMap::new();
    for i in 0..FILES {
        before.insert(name(i), content(i, "old"));
        after.insert(name(i), content(i, "new"));
    }
    before.insert("x-deleted.txt".into(), content(90, "old"));
    after.insert("x-created.txt".into(), content(91, "new"));
    before.insert("y-renamed-from.txt".into(), content(92, "old"));
    after.insert("y-renamed-to.txt".into(), content(92, "new"));
    (before, after)
}

fn git(dir: &std::path::Path, args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}");
    out.stdout
}

#[test]
fn a_killed_patch_never_leaves_a_half_written_file() {
    let (before, after) = states();
    // The patch, from real git.
    let gen_dir = tempfile::tempdir().expect("tempdir");
    let gen_dir = gen_dir.path();
    git(gen_dir, &["init", "-q"]);
    for (path, text) in &before {
        fs::write(gen_dir.join(path), text).expect("write");
    }
    git(gen_dir, &["add", "-A"]);
    git(gen_dir, &["commit", "-q", "-m", "before"]);
    for path in before.keys() {
        fs::remove_file(gen_dir.join(path)).expect("rm");
    }
    for (path, text) in &after {
        fs::write(gen_dir.join(path), text).expect("write");
    }
    git(gen_dir, &["add", "-A"]);
    let patch = git(gen_dir, &["diff", "--cached", "-M"]);
    let order: Vec<String> = String::from_utf8_lossy(&patch)
        .lines()
        .filter_map(|l| l.strip_prefix("+++ b/").map(str::to_owned))
        .collect();
    assert!(order.len() > FILES, "{order:?}");

    let test = Test::new();
    let reset = || {
        for entry in fs::read_dir(test.workspace()).expect("ls").flatten() {
            if entry.file_name() != ".git" {
                fs::remove_file(entry.path()).expect("rm");
            }
        }
        for (path, text) in &before {
            fs::write(test.path(path), text).expect("write");
        }
    };
    let has_temp = || {
        fs::read_dir(test.workspace()).is_ok_and(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(".lspgate-"))
        })
    };
    // Runs the patch; with a delay, waits for the commit to begin (the first
    // temporary file), then SIGKILLs lspgate that long after. Returns whether the
    // kill landed while it ran, and how long the commit took when not killed.
    let run = |delay: Option<Duration>| {
        let mut cmd = test.to_command();
        cmd.args(["patch", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn lspgate");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(&patch).expect("send the patch");
        drop(stdin);
        // Polled tightly: the commit may last only a few milliseconds.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut commit_started = None;
        while Instant::now() < deadline {
            if has_temp() {
                commit_started = Some(Instant::now());
                break;
            }
            if !matches!(child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        if let (Some(delay), Some(_)) = (delay, commit_started) {
            // Fault injection: a kill at an arbitrary moment of the commit.
            std::thread::sleep(delay);
            kill(child.id());
        }
        let status = child.wait().expect("wait");
        let commit = commit_started.map(|t| t.elapsed()).unwrap_or_default();
        (status, commit)
    };

    // Full runs: they must apply, and they tell how long a commit takes here (the
    // shortest of three, so a slow moment does not spread the kills past most commits).
    let mut commit = Duration::MAX;
    for _ in 0..3 {
        reset();
        let (status, took) = run(None);
        assert_eq!(status.code(), Some(0), "the patch applies");
        for (path, text) in &after {
            assert_eq!(&fs::read_to_string(test.path(path)).expect("read"), text);
        }
        commit = commit.min(took);
    }
    // Kills fall anywhere in the commit, and a little after it.
    let span = (commit.as_micros() as u64 * 3 / 2).max(1000);

    let seed = std::env::var("LSPGATE_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1234_abcd_u64);
    let mut rng = Rng(seed);
    let (mut untouched, mut complete, mut partial, mut leftovers) = (0, 0, 0, 0);
    let mut interrupted = 0;
    let mut kills = 0;
    while kills < KILLS || (interrupted < MIN_INTERRUPTED && kills < MAX_KILLS) {
        kills += 1;
        reset();
        let delay = Duration::from_micros(rng.next() % span);
        let (status, _) = run(Some(delay));
        if status.code().is_none() {
            interrupted += 1;
        }
        // Every file: entirely before or entirely after.
        let mut replaced = Vec::new();
        for path in &order {
            let now = fs::read_to_string(test.path(path)).ok();
            let old = before.get(path);
            let new = after.get(path);
            assert!(
                now.as_ref() == old || now.as_ref() == new,
                "{path} is neither its old nor its new content after a kill at {delay:?} \
                 (seed {seed})"
            );
            replaced.push(now.as_ref() == new && new != old);
        }
        // Writes in patch order: the replaced files are a prefix.
        let writes: Vec<bool> = order
            .iter()
            .zip(&replaced)
            .filter(|(path, _)| after.contains_key(*path))
            .map(|(_, r)| *r)
            .collect();
        let done = writes.iter().take_while(|r| **r).count();
        assert!(
            writes[done..].iter().all(|r| !r),
            "files replaced out of patch order after a kill at {delay:?} (seed {seed}): {writes:?}"
        );
        // Removals only after every write.
        for gone in ["x-deleted.txt", "y-renamed-from.txt"] {
            if !test.path(gone).exists() {
                assert_eq!(done, writes.len(), "{gone} removed before the writes ended");
            }
        }
        let temps = fs::read_dir(test.workspace())
            .expect("ls")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".lspgate-"))
            .count();
        leftovers += temps;
        match (status.code(), done) {
            (Some(0), _) => complete += 1,
            (_, 0) if before.keys().all(|p| test.path(p).exists()) => untouched += 1,
            _ if done == writes.len() && !test.path("x-deleted.txt").exists() => complete += 1,
            _ => partial += 1,
        }
    }
    figure(&format!(
        "crash safety: {kills} SIGKILLs within {} ms of the commit's start (a commit takes \
         {} ms) of a {}-file, {} KB patch; {interrupted} interrupted lspgate: \
         {untouched} left the tree untouched, {complete} complete, {partial} part-way \
         (every file whole, in patch order), {leftovers} temporary files left behind \
         (seed {seed})",
        span / 1000,
        commit.as_millis(),
        order.len() + 1,
        patch.len() / 1024,
    ));
    // The kills must have hit lspgate while it committed, or nothing was shown.
    assert!(interrupted > 0, "no kill landed during a commit");
    assert!(untouched + complete + partial == kills);
}
