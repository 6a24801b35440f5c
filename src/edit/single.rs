//! One-file edits: `write` (whole new content) and `edit` (`--old` replaced by
//! `--new`). Both keep a CRLF file CRLF when the agent sent LF text.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::{EditError, EditPlan, FileChange, eol, paths};

pub(super) fn plan_write(
    workspace: &Path,
    base: &Path,
    given: &Path,
    content: Vec<u8>,
) -> Result<EditPlan, EditError> {
    let target = paths::resolve(workspace, base, given)?;
    let before = paths::read_existing(&target, given)?;
    let after = match &before {
        Some(old) if eol::is_crlf(old) && eol::is_lf_only(&content) => eol::to_crlf(&content),
        _ => content,
    };
    Ok(single_change(target.path, before, after))
}

pub(super) fn plan_replace(
    workspace: &Path,
    base: &Path,
    given: &Path,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<EditPlan, EditError> {
    let target = paths::resolve(workspace, base, given)?;
    let Some(bytes) = paths::read_existing(&target, given)? else {
        return Err(EditError::path(given, "no such file"));
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Err(EditError::path(
            given,
            "is not valid UTF-8; use `lspgate write` or `lspgate patch` for this file",
        ));
    };
    if old.is_empty() {
        return Err(EditError::path(given, "--old text is empty"));
    }

    // In a CRLF file (every line ending CRLF) a bare LF in `old` could never match:
    // the agent means CRLF, in `new` too.
    let (old, new) = if eol::is_crlf(&bytes) {
        (Cow::Owned(crlf_string(old)), Cow::Owned(crlf_string(new)))
    } else {
        (Cow::Borrowed(old), Cow::Borrowed(new))
    };
    let (old, new) = (old.as_ref(), new.as_ref());
    let count = text.matches(old).count();

    match count {
        0 => return Err(not_found(given, text, old)),
        1 => {}
        n if !replace_all => {
            return Err(EditError::path(
                given,
                format!("--old text occurs {n} times; use --replace-all or give more context"),
            ));
        }
        _ => {}
    }
    let after = if replace_all {
        text.replace(old, new)
    } else {
        text.replacen(old, new, 1)
    };
    Ok(single_change(target.path, Some(bytes), after.into_bytes()))
}

fn single_change(path: PathBuf, before: Option<Vec<u8>>, after: Vec<u8>) -> EditPlan {
    EditPlan {
        changes: vec![FileChange {
            path,
            renamed_from: None,
            before,
            after: Some(after),
            mode: None,
        }],
    }
}

fn crlf_string(text: &str) -> String {
    // Converting only inserts `\r` before `\n`, which keeps valid UTF-8 valid.
    String::from_utf8_lossy(&eol::to_crlf(text.as_bytes())).into_owned()
}

/// "not found", with a hint when the first line of `old` does occur: agents most
/// often get a later line, or its indentation, wrong.
fn not_found(given: &Path, text: &str, old: &str) -> EditError {
    let mut message = String::from("--old text not found");
    let first = old
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if !first.is_empty() && old.lines().count() > 1 {
        if let Some(n) = text.lines().position(|l| l.contains(first)) {
            message += &format!("\nits first line ({first:?}) occurs at line {}", n + 1);
        }
    } else if !first.is_empty() {
        let wanted: String = first.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(n) = text.lines().position(|l| {
            l.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains(&wanted)
        }) {
            message += &format!("\nit occurs at line {} with different whitespace", n + 1);
        }
    }
    EditError::path(given, message)
}
