//! Stored baselines on a real project: how long a cold run spends finding out whether
//! its before tree has one (reading the tree and hashing every file pyright reads,
//! then reading and checking the stored file), and how large the file is. Prints a
//! table (median, min and max of the runs).
//!
//!     cargo bench --bench baseline -- PROJECT_DIR [--runs N]
//!
//! PROJECT_DIR needs a baseline stored by `lspgate baseline` with the same
//! `LSPGATE_CACHE_DIR` (bench/corpus fetches real projects; Django is the largest
//! Python one). Issue 32 asks for a look-up under 50 ms and a file under 5 MB.

// A bench's output is its table.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lspgate::baseline::{Baselines, Lookup, Tree};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(10);
    let Some(project) = args
        .iter()
        .find(|a| !a.starts_with("--") && a.parse::<usize>().is_err())
    else {
        println!("usage: cargo bench --bench baseline -- PROJECT_DIR [--runs N]");
        return;
    };
    let root = match Path::new(project).canonicalize() {
        Ok(root) => root,
        Err(e) => return println!("{project}: {e}"),
    };
    let Some(spec) = lspgate::servers::builtin()
        .into_iter()
        .find(|s| s.name == "pyright")
    else {
        return println!("no built-in pyright");
    };
    let Some(baselines) = Baselines::of(&root) else {
        return println!("no cache directory");
    };
    // The key the lspgate run used (its spec is the configured one, not the built-in
    // one): from the stored file's name; the bench's own key only times the hashing.
    let Some((stored, stored_key)) = stored_file() else {
        return println!(
            "no baseline stored: run `lspgate baseline` with this LSPGATE_CACHE_DIR first"
        );
    };
    let size = std::fs::metadata(&stored)
        .map(|m| m.len())
        .unwrap_or_default();
    let mut read = Vec::new();
    let mut looked = Vec::new();
    let mut files = 0;
    for _ in 0..runs {
        let t0 = Instant::now();
        let tree = match Tree::read(&root, &spec) {
            Ok(tree) => tree,
            Err(e) => return println!("{}: {e}", root.display()),
        };
        std::hint::black_box(tree.key(&spec));
        read.push(t0.elapsed());
        files = tree.files();
        let t1 = Instant::now();
        match baselines.lookup(&spec.name, &stored_key) {
            Lookup::Found(found) => std::hint::black_box(found.files.len()),
            Lookup::Absent => return println!("{}: gone", stored.display()),
            Lookup::Unusable { path, why } => return println!("{}: {why}", path.display()),
        };
        looked.push(t1.elapsed());
    }
    let total: Vec<Duration> = read.iter().zip(&looked).map(|(a, b)| *a + *b).collect();
    println!("| project | files hashed | step | median ms | min ms | max ms |");
    println!("|---|---|---|---|---|---|");
    let name = root
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    for (step, times) in [
        ("tree read and hashed", &read),
        ("stored file read and checked", &looked),
        ("look-up in all", &total),
    ] {
        let (median, min, max) = stats(times);
        println!("| {name} | {files} | {step} | {median:.1} | {min:.1} | {max:.1} |");
    }
    println!("\nstored baseline: {:.2} MB", size as f64 / 1_000_000.0);
}

fn stats(times: &[Duration]) -> (f64, f64, f64) {
    let mut ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let median = ms.get(ms.len() / 2).copied().unwrap_or_default();
    (
        median,
        ms.first().copied().unwrap_or_default(),
        ms.last().copied().unwrap_or_default(),
    )
}

/// The one pyright baseline in `$LSPGATE_CACHE_DIR` (a bench run stores one), and
/// its key, from its name.
fn stored_file() -> Option<(PathBuf, String)> {
    let cache = PathBuf::from(std::env::var_os("LSPGATE_CACHE_DIR")?).join("baselines");
    let workspace = std::fs::read_dir(cache).ok()?.flatten().next()?.path();
    let file = std::fs::read_dir(workspace).ok()?.flatten().next()?.path();
    let name = file.file_stem()?.to_str()?;
    let key = name.strip_prefix("pyright-")?.to_string();
    Some((file, key))
}
