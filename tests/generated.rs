//! The committed shell completions (`completions/`) and man pages (`man/`) are generated
//! from `lspgate::cli::command()`; these tests render them in memory and fail when a
//! committed file differs, so a CLI change cannot ship with stale ones. Run
//!
//! ```text
//! UPDATE_GENERATED=1 cargo test --test integration generated
//! ```
//!
//! to rewrite them (and delete generated files nothing renders any more), then commit.
//! No build.rs and no hidden subcommand: clap_complete and clap_mangen stay
//! dev-dependencies, out of the shipped binary.
//!
//! The man pages carry no version: their header names "lspgate" without one and the
//! VERSION section clap_mangen would add is dropped, so bumping the version in
//! Cargo.toml does not rewrite `man/` (`lspgate --version` is the authority).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap_complete::Shell;

const BIN: &str = "lspgate";
const UPDATE_ENV: &str = "UPDATE_GENERATED";

/// The completion script of each shell, under the name its shell's conventions expect
/// (zsh and PowerShell look for `_lspgate`; bash-completion, fish and elvish load by
/// command name).
const COMPLETIONS: [(Shell, &str); 5] = [
    (Shell::Bash, "lspgate.bash"),
    (Shell::Zsh, "_lspgate"),
    (Shell::Fish, "lspgate.fish"),
    (Shell::Elvish, "lspgate.elv"),
    (Shell::PowerShell, "_lspgate.ps1"),
];

#[test]
fn cli_is_consistent() {
    lspgate::cli::command().debug_assert();
}

#[test]
fn completions_are_current() {
    let mut files = BTreeMap::new();
    for (shell, name) in COMPLETIONS {
        let mut cmd = lspgate::cli::command();
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut cmd, BIN, &mut buf);
        files.insert(name.to_owned(), buf);
    }
    check_dir("completions", &files);
}

#[test]
fn man_pages_are_current() {
    let mut cmd = lspgate::cli::command().disable_help_subcommand(true);
    // Building gives subcommands their display names (`lspgate-write`), which become
    // their pages' titles and file names.
    cmd.build();
    let mut files = BTreeMap::new();
    render_man(&cmd, &mut files);
    check_dir("man", &files);
}

/// `cmd`'s page and, recursively, one per visible subcommand, as `clap_mangen` lays them
/// out, without the version.
fn render_man(cmd: &clap::Command, files: &mut BTreeMap<String, Vec<u8>>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        render_man(sub, files);
    }
    let man = clap_mangen::Man::new(cmd.clone()).source(BIN);
    let mut buf = Vec::new();
    man.render(&mut buf).expect("render to a Vec");
    let text = String::from_utf8(buf).expect("roff is UTF-8");
    files.insert(
        man.get_filename(),
        without_version_section(&text).into_bytes(),
    );
}

/// The page without its `.SH VERSION` section (up to the next `.SH`, or the end).
fn without_version_section(roff: &str) -> String {
    let Some(start) = roff.find("\n.SH VERSION\n") else {
        return roff.to_owned();
    };
    let after = start + "\n.SH VERSION\n".len();
    let end = roff[after..]
        .find("\n.SH ")
        .map_or(roff.len() - 1, |i| after + i);
    format!("{}{}", &roff[..start], &roff[end..])
}

/// Compare `expected` with the files of `dir` (relative to the crate), or write them
/// when `UPDATE_GENERATED=1`. A file in `dir` that nothing renders is stale too: a
/// removed subcommand must not leave its page behind.
fn check_dir(dir: &str, expected: &BTreeMap<String, Vec<u8>>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let update = std::env::var(UPDATE_ENV).is_ok_and(|v| v == "1");
    let present = present_files(&dir);
    let mut stale = Vec::new();
    for (name, content) in expected {
        let path = dir.join(name);
        if std::fs::read(&path).ok().as_deref() == Some(content.as_slice()) {
            continue;
        }
        if update {
            std::fs::create_dir_all(&dir).expect("create the output dir");
            std::fs::write(&path, content)
                .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        } else {
            stale.push(format!("{} differs or is missing", path.display()));
        }
    }
    for path in present {
        let known = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| expected.contains_key(n));
        if known {
            continue;
        }
        if update {
            std::fs::remove_file(&path)
                .unwrap_or_else(|e| panic!("remove {}: {e}", path.display()));
        } else {
            stale.push(format!("{} is not generated any more", path.display()));
        }
    }
    assert!(
        stale.is_empty(),
        "generated files are stale:\n  {}\nrun `{UPDATE_ENV}=1 cargo test --test integration \
         generated` and commit the result",
        stale.join("\n  ")
    );
}

fn present_files(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|entry| entry.expect("a dir entry").path())
            .filter(|path| path.is_file())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("read {}: {e}", dir.display()),
    }
}

#[test]
fn version_section_removal() {
    let page = ".TH x 1\n.SH NAME\nx\n.SH VERSION\nv0.1.0\n.SH AUTHORS\nme\n";
    assert_eq!(
        without_version_section(page),
        ".TH x 1\n.SH NAME\nx\n.SH AUTHORS\nme\n"
    );
    let last = ".TH x 1\n.SH NAME\nx\n.SH VERSION\nv0.1.0\n";
    assert_eq!(without_version_section(last), ".TH x 1\n.SH NAME\nx\n");
    assert_eq!(without_version_section(".TH x 1\n"), ".TH x 1\n");
}
