//! The dependents scan on a generated 10,000-file tree per language: how long
//! `dependents::scan` takes to walk, read, resolve every import and rank, for an edit
//! of a module many files import. Prints a table (median, min and max of the runs).
//!
//!     cargo bench --bench scan [-- --runs N --files N]
//!
//! The scan runs once per edit for servers without a project-wide analysis
//! (typescript-language-server, clangd, gopls, rust-analyzer, pyright with
//! `project-wide = false`); issue 11 asks for it under 100 ms at this size.

// A bench's output is its table.
#![allow(clippy::print_stdout)]

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use lspgate::dependents::{Edited, scan};

/// One language's tree: the edited file, its text before and after, and how to write
/// file `i` (which imports the edited module and its predecessor).
struct Tree {
    name: &'static str,
    extensions: &'static [&'static str],
    edited: &'static str,
    before: &'static str,
    after: &'static str,
    file: fn(usize) -> (String, String),
}

const TREES: &[Tree] = &[
    Tree {
        name: "Python",
        extensions: &["py"],
        edited: "pkg/core.py",
        before: "def greet(name):\n    return name\n",
        after: "def greet(name, greeting):\n    return name\n",
        file: |i| {
            (
                format!("pkg/m{}/f{i}.py", i / 100),
                format!(
                    "from pkg.core import greet\nfrom pkg.m{}.f{} import x\n\nx = greet('{i}')\n",
                    i.saturating_sub(1) / 100,
                    i.saturating_sub(1)
                ),
            )
        },
    },
    Tree {
        name: "TypeScript",
        extensions: &["ts"],
        edited: "src/core.ts",
        before: "export function greet(name: string) { return name; }\n",
        after: "export function greet(name: string, g: string) { return name; }\n",
        file: |i| {
            (
                format!("src/m{}/f{i}.ts", i / 100),
                format!(
                    "import {{ greet }} from \"../core\";\nimport {{ x as y }} from \"../m{}/f{}\";\nexport const x = greet(\"{i}\");\n",
                    i.saturating_sub(1) / 100,
                    i.saturating_sub(1)
                ),
            )
        },
    },
    Tree {
        name: "C",
        extensions: &["c", "h"],
        edited: "include/core.h",
        before: "int greet(int);\n",
        after: "int greet(int, int);\n",
        file: |i| {
            (
                format!("src/m{}/f{i}.c", i / 100),
                format!("#include \"core.h\"\nint f{i}(void) {{ return greet({i}); }}\n"),
            )
        },
    },
];

fn main() -> std::io::Result<()> {
    // `cargo test --all-targets` runs this too, without `--bench`: a smoke run then.
    let benching = std::env::args().any(|a| a == "--bench");
    let mut runs = if benching { 5 } else { 1 };
    let mut files = if benching { 10_000 } else { 200 };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(runs),
            "--files" => files = args.next().and_then(|v| v.parse().ok()).unwrap_or(files),
            // What `cargo bench` passes to every bench target.
            "--bench" => {}
            _ => {}
        }
    }
    println!("Dependents scan of a {files}-file tree, {runs} runs (ms)\n");
    println!("| language | files | dependents found | median ms | min ms | max ms |");
    println!("|---|---|---|---|---|---|");
    for tree in TREES {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        write(root, tree.edited, tree.before)?;
        for i in 0..files {
            let (rel, text) = (tree.file)(i);
            write(root, &rel, &text)?;
        }
        let edited_path = root.join(tree.edited);
        let edited = [Edited {
            path: &edited_path,
            before: Some(tree.before),
            after: Some(tree.after),
        }];
        let extensions: Vec<String> = tree.extensions.iter().map(|e| e.to_string()).collect();
        let mut times: Vec<Duration> = Vec::new();
        let mut found = 0;
        for _ in 0..runs {
            let started = Instant::now();
            let result = scan(root, &edited, &extensions, usize::MAX);
            times.push(started.elapsed());
            found = result.files.len();
        }
        times.sort();
        let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
        println!(
            "| {} | {files} | {found} | {} | {} | {} |",
            tree.name,
            ms(times[times.len() / 2]),
            ms(times[0]),
            ms(times[times.len() - 1])
        );
    }
    Ok(())
}

fn write(root: &Path, rel: &str, text: &str) -> std::io::Result<()> {
    let path = root.join(rel);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    fs::write(path, text)
}
