//! Position encodings. lspgate offers servers UTF-8 as well as UTF-16 (LSP 3.17's
//! `general.positionEncodings`, and clangd's older `offsetEncoding` extension), so a
//! server that counts in bytes (clangd, rust-analyzer) need not convert; and stores
//! every position it receives in UTF-16 code units, LSP's default, so what lspgate
//! prints and emits does not depend on which encoding a server chose.

use lsp_types::{Diagnostic, Position};
use serde_json::Value;

/// The unit a server's `character` offsets count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    #[default]
    Utf16,
    Utf8,
    Utf32,
}

impl Encoding {
    /// What the server chose, from its answer to `initialize`: the LSP 3.17
    /// `capabilities.positionEncoding`, else clangd's `offsetEncoding`, else UTF-16.
    pub fn chosen(result: &Value) -> Encoding {
        let named = result
            .pointer("/capabilities/positionEncoding")
            .or_else(|| result.get("offsetEncoding"))
            .and_then(|v| v.as_str());
        match named {
            Some("utf-8") => Encoding::Utf8,
            Some("utf-32") => Encoding::Utf32,
            _ => Encoding::Utf16,
        }
    }
}

/// Convert every range of `diagnostics` (and of their related information in the
/// same file) from `from` to UTF-16, measuring against `text`, the text the server
/// analysed. Positions past a line's end are clamped as LSP says clients should.
pub fn to_utf16(diagnostics: &mut [Diagnostic], text: &str, from: Encoding) {
    if from == Encoding::Utf16 {
        return;
    }
    let lines: Vec<&str> = split_lines(text);
    let convert = |p: &mut Position| {
        let Some(line) = lines.get(p.line as usize) else {
            return;
        };
        p.character = utf16_column(line, p.character, from);
    };
    for d in diagnostics {
        convert(&mut d.range.start);
        convert(&mut d.range.end);
    }
}

/// The UTF-16 column of `column` counted in `from` units on `line`.
fn utf16_column(line: &str, column: u32, from: Encoding) -> u32 {
    let mut units_from = 0u32;
    let mut units_16 = 0u32;
    for c in line.chars() {
        if units_from >= column {
            break;
        }
        units_from += match from {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf32 => 1,
            Encoding::Utf16 => c.len_utf16() as u32,
        };
        units_16 += c.len_utf16() as u32;
    }
    units_16
}

/// Lines as LSP counts them: ended by `\n`, `\r\n` or `\r`.
fn split_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&text[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::Range;

    fn diag(line: u32, start: u32, end: u32) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, start), Position::new(line, end)),
            message: "m".into(),
            ..Default::default()
        }
    }

    #[test]
    fn utf8_columns_become_utf16() {
        // "é" is 2 bytes and 1 UTF-16 unit, "😀" 4 bytes and 2 units.
        let text = "ok\r\nx = \"é😀\"; bad\n";
        let bad_byte = "x = \"é😀\"; ".len() as u32;
        let mut d = vec![diag(1, bad_byte, bad_byte + 3)];
        to_utf16(&mut d, text, Encoding::Utf8);
        let bad_utf16 = "x = \"é😀\"; ".encode_utf16().count() as u32;
        assert_eq!(d[0].range.start.character, bad_utf16);
        assert_eq!(d[0].range.end.character, bad_utf16 + 3);
    }

    #[test]
    fn utf32_and_clamping() {
        let mut d = vec![diag(0, 2, 99)];
        to_utf16(&mut d, "😀😀z", Encoding::Utf32);
        assert_eq!(d[0].range.start.character, 4);
        assert_eq!(d[0].range.end.character, 5);
    }

    #[test]
    fn the_choice_is_read_from_either_field() {
        let lsp = serde_json::json!({ "capabilities": { "positionEncoding": "utf-8" } });
        let clangd = serde_json::json!({ "capabilities": {}, "offsetEncoding": "utf-8" });
        assert_eq!(Encoding::chosen(&lsp), Encoding::Utf8);
        assert_eq!(Encoding::chosen(&clangd), Encoding::Utf8);
        assert_eq!(Encoding::chosen(&serde_json::json!({})), Encoding::Utf16);
    }
}
