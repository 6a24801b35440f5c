//! Stored baselines (docs/SPEC.md section 6): a cold run whose before tree has one
//! takes its before view from it and has pyright analyse the project once, after the
//! edit; it is never used for another tree, and a file that cannot be used is named in
//! a note, the run right all the same.

use super::servers::{TSGO, installed_with_7};
use super::*;

/// A pyright workspace with its own cache directory (where stored baselines go).
fn python() -> (Test, std::path::PathBuf) {
    cached(&PYRIGHT)
}

/// `lang`'s workspace with its own cache directory.
fn cached(lang: &Lang) -> (Test, std::path::PathBuf) {
    let test = workspace(lang, &[]);
    let cache = test.private_dir("cache");
    (test.env("LSPGATE_CACHE_DIR", &cache), cache)
}

/// `lang`'s workspace with its own cache directory, and `lspgate baseline` run in it:
/// exit 0 (the tree's diagnostics are its state, none new), and a note that
/// `server`'s baseline was stored.
fn baseline_made(lang: &Lang, server: &str) -> Output {
    let (test, _) = cached(lang);
    let made = test.args(["baseline"]).args(&WAITS[1..]).run();
    made.assert_code(0);
    let said = format!("stored a baseline of {server}");
    assert!(made.notes().iter().any(|n| n.contains(&said)), "{made}");
    made
}

/// A patch deleting `rel` in `out`'s workspace.
fn deletion(out: &Output, rel: &str) -> String {
    let text = fs::read_to_string(out.workspace().join(rel)).expect("read the file to delete");
    let mut patch = format!("--- a/{rel}\n+++ /dev/null\n");
    patch.push_str(&format!("@@ -1,{} +0,0 @@\n", text.lines().count()));
    for line in text.lines() {
        patch.push_str(&format!("-{line}\n"));
    }
    patch
}

/// Where pyright's before view came from in a JSON report.
fn before_of(out: &Output) -> String {
    before_of_server(out, "pyright")
}

/// Where server `name`'s before view came from in a JSON report.
fn before_of_server(out: &Output, name: &str) -> String {
    let report = out.json();
    let server = report["servers"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no {name} in servers\n{out}"));
    server["before"].as_str().unwrap_or_default().to_string()
}

fn json_edit(edit: &Edit, reverse: bool) -> Vec<String> {
    edit_args(edit, reverse, &["--format", "json"])
}

/// The breaking edit's report is the one a run without a stored baseline gives.
fn assert_breaking_report(out: &Output) {
    assert_breaking_report_of(out, &PYRIGHT);
}

/// [`assert_breaking_report`] for `lang`'s fixture.
fn assert_breaking_report_of(out: &Output, lang: &Lang) {
    out.assert_code(1);
    let report = out.json();
    let (b, b_line) = lang.b_call;
    for (path, line) in [(b, b_line), (lang.c, lang.c_call)] {
        assert!(
            json_diagnostics_at(&report, path, line)
                .iter()
                .any(|d| d["severity"] == "Error" && d["new"] == true),
            "no new error at {path}:{line}\n{out}"
        );
    }
    assert!(
        json_diagnostics_at(&report, lang.c, lang.c_error_line)
            .iter()
            .all(|d| d["new"] == false),
        "c's own error is marked new\n{out}"
    );
}

#[test]
fn pyright_takes_its_before_view_from_a_stored_baseline_along_a_chain_of_edits() {
    if !installed(&PYRIGHT) {
        return;
    }
    let (test, _) = python();
    let first = test.args(["check", "a.py"]).args(WAITS).run();
    first.assert_code(0);

    let broken = first
        .again()
        .args(json_edit(&PYRIGHT.breaking, false))
        .run();
    assert_eq!(before_of(&broken), "stored", "{broken}");
    assert_breaking_report(&broken);

    let mended = broken
        .again()
        .args(json_edit(&PYRIGHT.breaking, true))
        .run();
    assert_eq!(before_of(&mended), "stored", "{mended}");
    mended.assert_code(0);
    assert!(
        mended.json()["summary"]["fixed"].as_u64() >= Some(2),
        "the two broken calls are fixed\n{mended}"
    );
}

/// gopls, which diagnoses every package it loads, stores its after view too: each cold
/// edit of a chain takes its before view from the one before (go-cmp in the corpus:
/// 1.26 s against 3.66 s cold without one, `go vet` 1.72 s).
#[test]
fn gopls_takes_its_before_view_from_a_stored_baseline_along_a_chain_of_edits() {
    if !installed(&GOPLS) {
        return;
    }
    let (test, _) = cached(&GOPLS);
    let first = test.args(["check", GOPLS.c]).args(WAITS).run();
    first.assert_code(1);
    stored_along_a_chain(first, &GOPLS, "gopls");
}

/// TypeScript 7, asked about every file of its project after an edit, stores that
/// view: a cold edit's after view is the next one's before view. A check of one file
/// as it is asks about that file alone, and stores nothing.
#[test]
fn typescript_7_takes_its_before_view_from_a_stored_baseline_along_a_chain_of_edits() {
    if !installed_with_7(&TSGO) {
        return;
    }
    let (test, cache) = cached(&TSGO);
    let first = test.args(["check", TSGO.c]).args(WAITS).run();
    first.assert_code(1);
    let mut files = Vec::new();
    if cache.exists() {
        collect(&cache, &cache, &mut files);
    }
    assert!(
        files.is_empty(),
        "a check of one file stored {files:?}\n{first}"
    );
    // The first edit's before view is the server's; its after view is stored.
    let broken_first = first.again().args(json_edit(&TSGO.breaking, false)).run();
    assert_eq!(
        before_of_server(&broken_first, "tsgo"),
        "server",
        "{broken_first}"
    );
    assert_breaking_report_of(&broken_first, &TSGO);
    let back = broken_first
        .again()
        .args(json_edit(&TSGO.breaking, true))
        .run();
    assert_eq!(before_of_server(&back, "tsgo"), "stored", "{back}");
    back.assert_code(0);
    stored_along_a_chain(back, &TSGO, "tsgo");
}

/// The breaking edit and its undoing, each cold with the before view stored by the
/// run before, each reported as a run without one reports it.
fn stored_along_a_chain(last: Output, lang: &Lang, server: &str) {
    let broken = last.again().args(json_edit(&lang.breaking, false)).run();
    assert_eq!(before_of_server(&broken, server), "stored", "{broken}");
    assert_breaking_report_of(&broken, lang);
    let mended = broken.again().args(json_edit(&lang.breaking, true)).run();
    assert_eq!(before_of_server(&mended, server), "stored", "{mended}");
    mended.assert_code(0);
    assert!(
        mended.json()["summary"]["fixed"].as_u64() >= Some(2),
        "the two broken calls are fixed\n{mended}"
    );
}

#[test]
fn a_stored_baseline_is_not_used_for_a_tree_one_byte_or_a_setting_away() {
    if !installed(&PYRIGHT) {
        return;
    }
    let (test, _) = python();
    let first = test.args(["check", "a.py"]).args(WAITS).run();
    first.assert_code(0);
    let b = first.workspace().join("b.py");
    let text = fs::read_to_string(&b).expect("read b.py");
    fs::write(&b, format!("{text} ")).expect("one byte more in b.py");
    let other_file = first
        .again()
        .args(json_edit(&PYRIGHT.breaking, false))
        .run();
    assert_eq!(before_of(&other_file), "server", "{other_file}");
    assert_breaking_report(&other_file);

    // The tree after that run is stored; a configuration file changed since.
    let config = other_file.workspace().join("pyrightconfig.json");
    fs::write(&config, "{\"reportMissingImports\": \"error\"}\n").expect("write config");
    let configured = other_file
        .again()
        .args(json_edit(&PYRIGHT.breaking, true))
        .run();
    assert_eq!(before_of(&configured), "server", "{configured}");
    configured.assert_code(0);
}

#[test]
fn a_stored_baseline_cut_short_or_changed_is_named_and_not_used() {
    if !installed(&PYRIGHT) {
        return;
    }
    let (test, cache) = python();
    let first = test.args(["check", "a.py"]).args(WAITS).run();
    first.assert_code(0);
    let mut files = Vec::new();
    collect(&cache, &cache, &mut files);
    assert_eq!(files.len(), 1, "one baseline stored: {files:?}");
    let stored = cache.join(&files[0].0);
    let text = files[0].1.clone();
    let mut last = first;
    assert!(text.contains("\"message\":\""), "{text}");
    let changed = text.replacen("\"message\":\"", "\"message\":\"x", 1);
    for spoiled in [text[..text.len() / 2].to_string(), changed] {
        fs::write(&stored, spoiled).expect("spoil the stored baseline");
        let out = last.again().args(json_edit(&PYRIGHT.breaking, false)).run();
        assert_eq!(before_of(&out), "server", "{out}");
        let notes = out.json()["notes"].clone();
        assert!(
            notes.as_array().is_some_and(|n| n.iter().any(|n| n
                .as_str()
                .is_some_and(|n| n.contains("stored baseline") && n.contains("not used")))),
            "a note names the baseline not used\n{out}"
        );
        assert_breaking_report(&out);
        // Back to the tree of the spoiled baseline, for the next spoiling.
        let a = out.workspace().join("a.py");
        let back = fs::read_to_string(&a)
            .expect("read a.py")
            .replace(PYRIGHT.breaking.new, PYRIGHT.breaking.old);
        fs::write(&a, back).expect("put a.py back");
        last = out;
    }
}

#[test]
fn a_module_deleted_with_a_stored_baseline_breaks_its_importers() {
    if !installed(&PYRIGHT) {
        return;
    }
    let (test, _) = python();
    let first = test.args(["check", "b.py"]).args(WAITS).run();
    first.assert_code(0);
    let patch = deletion(&first, "a.py");
    let out = first
        .again()
        .args(["patch", "-", "--format", "json"])
        .args(WAITS)
        .stdin(patch)
        .run();
    assert_eq!(before_of(&out), "stored", "{out}");
    out.assert_code(1);
    let report = out.json();
    for path in ["b.py", PYRIGHT.c] {
        assert!(
            json_diagnostics_at(&report, path, 1)
                .iter()
                .any(|d| d["new"] == true),
            "no new error at the import of {path}\n{out}"
        );
    }
}

#[test]
fn lspgate_baseline_stores_one_that_the_next_cold_edit_uses() {
    if !installed(&PYRIGHT) {
        return;
    }
    let (test, cache) = python();
    let made = test.args(["baseline"]).args(&WAITS[1..]).run();
    // c.py's own error is the tree's state, not new: stored, exit 0.
    made.assert_code(0);
    assert!(
        made.notes()
            .iter()
            .any(|n| n.contains("stored a baseline of pyright")),
        "{made}"
    );
    let mut files = Vec::new();
    collect(&cache, &cache, &mut files);
    assert_eq!(files.len(), 1, "one baseline stored: {files:?}");
    let broken = made.again().args(json_edit(&PYRIGHT.breaking, false)).run();
    assert_eq!(before_of(&broken), "stored", "{broken}");
    assert_breaking_report(&broken);
}

/// `baseline` has TypeScript 7 asked about every file of the project at the
/// workspace's top, and stores what it says: the next cold edit uses it.
#[test]
fn lspgate_baseline_stores_typescript_7s_for_the_next_cold_edit() {
    if !installed_with_7(&TSGO) {
        return;
    }
    let made = baseline_made(&TSGO, "tsgo");
    let broken = made.again().args(json_edit(&TSGO.breaking, false)).run();
    assert_eq!(before_of_server(&broken, "tsgo"), "stored", "{broken}");
    assert_breaking_report_of(&broken, &TSGO);
}

/// typescript-language-server stores one where a run asked tsserver about every file
/// of the project: `baseline`'s check of them all, or an edit whose likely dependents
/// are all the others. A cold edit asking about fewer stores nothing (the next run is
/// made as without one), and a file it did not ask about is not taken for one whose
/// old error is fixed.
#[test]
fn lspgate_baseline_stores_typescript_language_servers_for_the_cold_edits_after() {
    if !installed(&TSLS) {
        return;
    }
    let made = baseline_made(&TSLS, "typescript-language-server");
    let tsls = "typescript-language-server";
    // b.ts is nobody's import: c.ts, with its old error, is not asked about.
    let quiet = made
        .again()
        .args([
            "edit",
            "b.ts",
            "--old",
            "greet(\"b\")",
            "--new",
            "greet(\"bb\")",
        ])
        .args(["--format", "json"])
        .args(WAITS)
        .run();
    assert_eq!(before_of_server(&quiet, tsls), "stored", "{quiet}");
    quiet.assert_code(0);
    assert_eq!(
        quiet.json()["summary"]["fixed"],
        0,
        "c.ts's old error taken as fixed\n{quiet}"
    );
    let back = quiet
        .again()
        .args([
            "edit",
            "b.ts",
            "--old",
            "greet(\"bb\")",
            "--new",
            "greet(\"b\")",
        ])
        .args(["--format", "json"])
        .args(WAITS)
        .run();
    assert_eq!(
        before_of_server(&back, tsls),
        "server",
        "a view of one file stored\n{back}"
    );
    back.assert_code(0);
    // Back at the tree `baseline` stored; a.ts's likely dependents are every other
    // file, so the breaking edit's view is stored too, for its undoing.
    stored_along_a_chain(back, &TSLS, tsls);
}

/// rust-analyzer, checking one written edit with `cargo check --workspace` alone, has
/// rustc's word on every file: that view is stored, and `baseline` makes one the same
/// way (its check of the tree as it is).
#[test]
fn rust_analyzer_takes_its_before_view_from_a_stored_baseline_along_a_chain_of_edits() {
    if !installed(&RUST_ANALYZER) {
        return;
    }
    let made = baseline_made(&RUST_ANALYZER, "rust-analyzer");
    stored_along_a_chain(made, &RUST_ANALYZER, "rust-analyzer");
}

/// A module deleted in a cold run with a stored before view: rust-analyzer, started
/// once the deletion is on disk, is told of no change (it saw none) and asked for no
/// check while it loads, which it would cancel; its own check at start finds the
/// `mod` line that names the file gone.
#[test]
fn a_rust_module_deleted_with_a_stored_baseline_breaks_its_mod_line() {
    if !installed(&RUST_ANALYZER) {
        return;
    }
    let made = baseline_made(&RUST_ANALYZER, "rust-analyzer");
    let patch = deletion(&made, "src/b.rs");
    let out = made
        .again()
        .args(["patch", "-", "--format", "json"])
        .args(WAITS)
        .stdin(patch)
        .run();
    assert_eq!(before_of_server(&out, "rust-analyzer"), "stored", "{out}");
    out.assert_code(1);
    assert!(
        json_diagnostics_at(&out.json(), "src/lib.rs", 2)
            .iter()
            .any(|d| d["new"] == true),
        "no new error at `pub mod b;`\n{out}"
    );
}

/// clangd stores one where a run asked it about every file of its project (its
/// units and headers): `baseline`'s check of them all, or an edit of a header every
/// other file includes. A cold edit then builds each file it asks about once, after
/// the edit.
#[test]
fn clangd_takes_its_before_view_from_a_baseline_along_a_chain_of_edits() {
    if !installed(&CLANGD) {
        return;
    }
    let made = baseline_made(&CLANGD, "clangd");
    stored_along_a_chain(made, &CLANGD, "clangd");
}

/// A review of a header change (`check --patch`) on disk, with clangd's before view
/// stored: clangd, started on the tree after the change alone, builds the includers
/// from the disk, which is the change, and its before view is the stored one. So the
/// run is exact: a clean change exits 0, a breaking one 1, with no note that the
/// includers were not rechecked (that note, and exit 3, are for clangd 14 shown a
/// change it cannot read from the disk).
#[test]
fn clangd_reviews_a_header_change_on_disk_with_a_stored_baseline() {
    if !installed(&CLANGD) {
        return;
    }
    let made = baseline_made(&CLANGD, "clangd");
    let review = |last: Output, old: &str, new: &str| {
        let path = last.workspace().join("a.h");
        let text = fs::read_to_string(&path).expect("read a.h");
        let (at, line) = text
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains(old))
            .expect("the line to change");
        fs::write(&path, text.replacen(old, new, 1)).expect("write a.h");
        let n = at + 1;
        let patch = format!(
            "--- a/a.h\n+++ b/a.h\n@@ -{n} +{n} @@\n-{line}\n+{}\n",
            line.replacen(old, new, 1)
        );
        last.again()
            .args(["check", "--patch", "-", "--format", "json"])
            .args(WAITS)
            .stdin(patch)
            .run()
    };
    let clean = review(made, "const char *name", "const char *who");
    assert_eq!(before_of_server(&clean, "clangd"), "stored", "{clean}");
    clean.assert_code(0);
    let broken = review(clean, "const char *who)", "const char *who, int times)");
    assert_eq!(before_of_server(&broken, "clangd"), "stored", "{broken}");
    assert_breaking_report_of(&broken, &CLANGD);
}
