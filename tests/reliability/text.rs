//! Text the servers cannot be shown, and columns on non-ASCII lines.
//!
//! - A file that is not UTF-8 is written as asked, and the report says it was not
//!   checked; a very large one too (over the size lspgate shows servers).
//! - Positions: lspgate offers servers only the UTF-16 position encoding, LSP's
//!   default and the one every server must support, so every range it receives, and
//!   so every range it prints or emits, is in UTF-16 code units. A real server
//!   (pyright) reports an error after `é` and an emoji at the UTF-16 column, which
//!   differs from both the byte and the character column.

use super::{figure, measured};
use crate::support::{Test, require_server};

/// Latin-1 `é` and a lone continuation byte: not UTF-8.
const LATIN1: &[u8] = b"caf\xe9 ERROR boom\n\x80\n";

#[test]
fn a_file_that_is_not_utf8_is_written_and_said_unchecked() {
    let out = Test::new()
        .file("a.fake", "one\n")
        .fake_server(&[])
        .args(["write", "a.fake"])
        .stdin(LATIN1)
        .run();
    assert!(
        out.notes()
            .iter()
            .any(|n| n.contains("a.fake") && n.contains("not UTF-8")),
        "no note that a.fake was not checked\n{out}"
    );
    out.assert_code(3);
    assert_eq!(
        std::fs::read(out.workspace().join("a.fake")).expect("read"),
        LATIN1
    );
}

/// 40 MB of text: written, not shown to the server, and said so; the CLI's memory
/// stays bounded (a few copies of the file at most, none of them parsed).
#[test]
fn a_very_large_file_is_written_and_said_unchecked() {
    let big = "plain line of a generated file\n".repeat(40_000_000 / 31);
    let test = Test::new().file("a.fake", "one\n").fake_server(&[]).args([
        "write",
        "big.fake",
        "--timeout",
        "2s",
    ]);
    let run = measured(&test, big.as_bytes());
    figure(&format!(
        "40 MB file: exit {:?} in {} ms, peak RSS {} KiB",
        run.code,
        run.elapsed.as_millis(),
        run.peak_kib
    ));
    assert!(
        run.notes()
            .iter()
            .any(|n| n.contains("big.fake") && n.contains("too large")),
        "no note that big.fake was not checked\n{run}"
    );
    run.assert_code(3);
    assert!(
        run.peak_kib < 200 * 1024,
        "peak RSS {} KiB for a 40 MB file\n{run}",
        run.peak_kib
    );
    assert_eq!(
        std::fs::metadata(test.path("big.fake"))
            .map(|m| m.len())
            .ok(),
        Some(big.len() as u64)
    );
}

/// pyright's column for a name after `é` and `😀`: UTF-16 offset 15 (bytes: 18,
/// characters: 14), printed 1-based as 16.
#[test]
fn columns_after_non_ascii_text_are_utf16_with_a_real_server() {
    if !require_server("pyright-langserver") {
        return;
    }
    let out = Test::new()
        .file("m.py", "x = 1\n")
        .args([
            "write",
            "m.py",
            "--content",
            "x = \"é😀\"; y = undefined_name\n",
            "--format",
            "json",
            "--startup-timeout",
            "60s",
            "--timeout",
            "20s",
        ])
        .run();
    out.assert_code(1);
    let report = out.json();
    let diagnostics = report["files"][0]["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let undefined = diagnostics
        .iter()
        .find(|d| {
            d["message"]
                .as_str()
                .is_some_and(|m| m.contains("undefined_name"))
        })
        .unwrap_or_else(|| panic!("no diagnostic for undefined_name\n{out}"));
    assert_eq!(
        undefined["range"]["start"],
        serde_json::json!({"line": 0, "character": 15}),
        "{out}"
    );
    assert_eq!(
        undefined["range"]["end"],
        serde_json::json!({"line": 0, "character": 29}),
        "{out}"
    );
    // The same run as text: 1-based, the same unit.
    let out = out
        .again()
        .args([
            "check",
            "m.py",
            "--startup-timeout",
            "60s",
            "--timeout",
            "20s",
        ])
        .run();
    out.stdout_contains("m.py:1:16 ");
}

/// clangd answers `offsetEncoding: utf-8` to the offer lspgate makes, and counts in
/// bytes: the columns lspgate emits are still UTF-16, converted through the text.
#[test]
fn a_server_that_chose_utf8_is_converted_to_utf16() {
    if !require_server("clangd") {
        return;
    }
    let line = "    const char *s = \"é😀\"; int x = s;";
    let out = Test::new()
        .file("compile_flags.txt", "-std=c11\n")
        .file("m.c", "int main(void) {\n    return 0;\n}\n")
        .args([
            "write",
            "m.c",
            "--content",
            &format!("int main(void) {{\n{line}\n    return x;\n}}\n"),
            "--format",
            "json",
            "--startup-timeout",
            "60s",
            "--timeout",
            "20s",
        ])
        .run();
    let report = out.json();
    let diagnostics = report["files"][0]["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let conversion = diagnostics
        .iter()
        .find(|d| {
            d["message"]
                .as_str()
                .is_some_and(|m| m.contains("pointer to integer"))
        })
        .unwrap_or_else(|| panic!("no diagnostic for the conversion\n{out}"));
    // clang points at `x`: UTF-16 column 31 (in bytes it would be 34).
    let x = line.find("x =").unwrap_or_default();
    let utf16 = line[..x].encode_utf16().count();
    assert_ne!(utf16, x, "the line must make bytes and UTF-16 differ");
    assert_eq!(
        conversion["range"]["start"],
        serde_json::json!({"line": 1, "character": utf16}),
        "{out}"
    );
}
