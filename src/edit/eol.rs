//! Line endings. Patches, `--content` and `--old/--new` written by agents nearly
//! always use LF, while the files they edit may use CRLF; these helpers let the
//! planners keep a CRLF file CRLF.

/// Whether `text` is a CRLF file: it has at least one line ending, and every one is
/// CRLF. A file mixing both is left as it is by the callers.
pub(super) fn is_crlf(text: &[u8]) -> bool {
    let mut seen = false;
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' {
            if i == 0 || text[i - 1] != b'\r' {
                return false;
            }
            seen = true;
        }
    }
    seen
}

/// Whether `text` has at least one line ending and none of them is CRLF.
pub(super) fn is_lf_only(text: &[u8]) -> bool {
    text.contains(&b'\n') && !text.windows(2).any(|w| w == b"\r\n")
}

/// `text` with every bare LF turned into CRLF.
pub(super) fn to_crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' && (i == 0 || text[i - 1] != b'\r') {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_line_endings() {
        assert!(is_crlf(b"a\r\nb\r\n"));
        assert!(is_crlf(b"a\r\nb"));
        assert!(!is_crlf(b"a\r\nb\n"));
        assert!(!is_crlf(b"no newline"));
        assert!(is_lf_only(b"a\nb\n"));
        assert!(!is_lf_only(b"a\r\nb\n"));
        assert!(!is_lf_only(b"none"));
        assert_eq!(to_crlf(b"\na\nb\r\nc"), b"\r\na\r\nb\r\nc");
    }
}
