//! What an untrusted workspace may not do through files lspgate does not read itself:
//! choose the toolchain (a `rust-toolchain.toml` naming a directory of planted
//! programs, which rustup's proxies would run).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::{Test, require_server};

/// A crate whose `rust-toolchain.toml` names `evil/`, holding a `rust-analyzer`, a
/// `cargo` and a `rustc` that each leave a file in `marks` when run. The test's own
/// `RUSTUP_TOOLCHAIN` (cargo's proxy sets it for the tests) is removed: with it, rustup
/// would ignore the file whatever lspgate does.
fn planted_toolchain(marks: &Path) -> Test {
    let test = Test::new()
        .file(
            "Cargo.toml",
            "[package]\nname = \"planted\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .file("src/lib.rs", "pub fn one() -> i32 {\n    1\n}\n")
        .env_remove("RUSTUP_TOOLCHAIN");
    let evil = test.path("evil/bin");
    fs::create_dir_all(&evil).expect("mkdir evil/bin");
    for program in ["rust-analyzer", "cargo", "rustc"] {
        let script = evil.join(program);
        fs::write(
            &script,
            format!(
                "#!/bin/sh\ntouch '{}'\nexit 1\n",
                marks.join(program).display()
            ),
        )
        .expect("write a planted program");
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    // Absolute, as `/proc/self/cwd/evil` is: rustup takes either.
    let toolchain = format!("[toolchain]\npath = \"{}\"\n", test.path("evil").display());
    test.file("rust-toolchain.toml", toolchain)
}

fn ran(marks: &Path) -> Vec<PathBuf> {
    fs::read_dir(marks)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// `lspgate servers` asks rust-analyzer its version, and a check starts it and its
/// `cargo check`: in an untrusted workspace, with the user's own toolchain, never the
/// programs its `rust-toolchain.toml` names. The check still finds the error.
#[test]
fn a_planted_rust_toolchain_is_never_run() {
    if !(require_server("rust-analyzer") && require_server("cargo") && require_server("rustup")) {
        return;
    }
    let marks = tempfile::tempdir().expect("tempdir");
    let out = planted_toolchain(marks.path()).args(["servers"]).run();
    out.assert_code(0);
    assert_eq!(ran(marks.path()), Vec::<PathBuf>::new(), "{out}");
    out.stdout_contains("version:      rust-analyzer 1.");

    let test = out
        .again()
        .file("src/lib.rs", "pub fn one() -> i32 {\n    \"one\"\n}\n");
    let patch = test.private_dir("home").join("break.patch");
    fs::write(
        &patch,
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn one() -> i32 {\n-    1\n+    \"one\"\n }\n",
    )
    .expect("write the patch");
    let out = test
        .args(["check", "--patch"])
        .args([&patch])
        .args(["--no-daemon", "--startup-timeout", "60s"])
        .run();
    assert_eq!(ran(marks.path()), Vec::<PathBuf>::new(), "{out}");
    out.assert_code(1).stdout_contains("E0308");
}
