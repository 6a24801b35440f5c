//! File paths and `file://` URIs. URIs are built with RFC 3986 encoding (the `url`
//! crate follows WHATWG and leaves `[` `]` raw, which strict servers reject) and
//! compared by path, never by string: servers re-encode (`%3A` against `:`).

use std::path::{Path, PathBuf};

use lsp_types::Url;
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

/// Everything but unreserved characters, sub-delims, `:`, `@` and `/` is encoded.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The `file://` URI of an absolute path.
pub fn from_path(path: &Path) -> Url {
    let text = path.to_string_lossy();
    let encoded = utf8_percent_encode(&text, PATH).to_string();
    Url::parse(&format!("file://{encoded}"))
        .or_else(|_| Url::from_file_path(path))
        .unwrap_or_else(|()| fallback_url())
}

fn fallback_url() -> Url {
    // Unreachable for absolute paths; a constant parse cannot fail.
    Url::parse("file:///").unwrap_or_else(|_| unreachable!())
}

/// The path of a `file://` URI, or `None` for other schemes.
pub fn to_path(uri: &Url) -> Option<PathBuf> {
    if uri.scheme() != "file" {
        return None;
    }
    uri.to_file_path().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_and_spaces_are_encoded_and_round_trip() {
        for p in [
            "/tmp/app/[slug]/page.tsx",
            "/tmp/a b/c#d.py",
            "/tmp/café/x?.go",
        ] {
            let uri = from_path(Path::new(p));
            assert!(!uri.as_str()[7..].contains(['[', ' ', '#', '?']), "{uri}");
            assert_eq!(to_path(&uri).as_deref(), Some(Path::new(p)));
        }
    }

    #[test]
    fn server_re_encodings_compare_equal_by_path() {
        let ours = from_path(Path::new("/tmp/x:y/a.py"));
        let theirs = Url::parse("file:///tmp/x%3Ay/a.py").unwrap_or_else(|_| fallback_url());
        assert_eq!(to_path(&ours), to_path(&theirs));
    }
}
