//! The files of a run as the check tracks them: each file's text before and after,
//! and whether the servers can be shown it at all.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::edit::{Action, EditError, EditPlan};

use super::Job;

/// Files larger than this are written but not shown to the servers: servers slow to
/// a crawl or give up on generated files of this size (tsserver stops at 4 MiB of
/// JavaScript), and every copy of the text (the plan, the document, the message)
/// would cost the CLI that much memory again.
const MAX_TEXT: usize = 8 * 1024 * 1024;

/// One file of the run.
pub(super) struct Tracked {
    pub path: PathBuf,
    pub renamed_from: Option<PathBuf>,
    pub action: Option<Action>,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Why the servers cannot be shown the file's new text (not UTF-8, too large);
    /// `None` when they can, or when the file is deleted.
    pub unchecked: Option<String>,
    /// The file's modification time before the run, if it existed.
    pub modified_before: Option<SystemTime>,
}

impl Tracked {
    /// Whether the edit brings the file into being at its path (a new file, or the
    /// new name of a renamed one).
    pub fn appears(&self) -> bool {
        self.before.is_none() || self.renamed_from.is_some()
    }

    /// Whether the edit, now on disk, changed the file's text but neither its size nor
    /// its modification time in whole seconds (a name renamed to one as long, written
    /// within the second of the previous write, as an undo and a redo are): a change
    /// clangd does not see in a header (see `lsp::Server::mark_size_kept`).
    pub fn kept_size_and_second(&self) -> bool {
        let (Some(before), Some(after)) = (&self.before, &self.after) else {
            return false;
        };
        let now = std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok();
        before != after
            && crate::servers::quirks::looks_unchanged(
                (before.len() as u64, self.modified_before),
                (after.len() as u64, now),
            )
    }
}

/// Whether every file's after text is the disk's now (a deleted one gone): a review of
/// the working tree, whose change needs no writing to be on disk.
pub(super) fn after_is_disk(tracked: &[Tracked]) -> bool {
    tracked.iter().all(|t| match &t.after {
        Some(text) => crate::regular::read(&t.path).is_ok_and(|b| b == text.as_bytes()),
        None => std::fs::symlink_metadata(&t.path).is_err(),
    })
}

/// The plan and the per-file view of it.
pub(super) fn track(job: Job) -> Result<(EditPlan, Vec<Tracked>), EditError> {
    match job {
        Job::Edit(plan) | Job::Review(plan) => {
            let tracked = plan
                .changes
                .iter()
                .map(|c| Tracked {
                    path: c.path.clone(),
                    renamed_from: c.renamed_from.clone(),
                    action: Some(c.action()),
                    before: c.before.as_deref().and_then(|b| as_text(b).ok()),
                    after: c.after.as_deref().and_then(|b| as_text(b).ok()),
                    unchecked: c.after.as_deref().and_then(|b| as_text(b).err()),
                    modified_before: modified(&c.path),
                })
                .collect();
            Ok((plan, tracked))
        }
        Job::Check(paths) => {
            let mut tracked = Vec::new();
            for path in paths {
                let text = crate::regular::read(&path).map_err(|e| EditError::Path {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?;
                let (text, unchecked) = match as_text(&text) {
                    Ok(text) => (Some(text), None),
                    Err(why) => (None, Some(why)),
                };
                let modified_before = modified(&path);
                tracked.push(Tracked {
                    path,
                    renamed_from: None,
                    action: None,
                    before: text.clone(),
                    after: text,
                    unchecked,
                    modified_before,
                });
            }
            Ok((EditPlan::default(), tracked))
        }
    }
}

/// A file's bytes as text the servers can be shown, or why they cannot.
fn as_text(bytes: &[u8]) -> Result<String, String> {
    if bytes.len() > MAX_TEXT {
        return Err(format!(
            "too large to show the servers ({} MiB, over {} MiB)",
            bytes.len().div_ceil(1024 * 1024),
            MAX_TEXT / (1024 * 1024)
        ));
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| "not UTF-8 text".to_string())
}

fn modified(path: &std::path::Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_over_the_limit_is_not_shown_to_the_servers() {
        let big = vec![b'a'; MAX_TEXT + 1];
        assert!(as_text(&big).is_err_and(|why| why.contains("too large")));
        assert_eq!(as_text(b"ok").as_deref(), Ok("ok"));
        assert_eq!(as_text(&[0xff, 0xfe]), Err("not UTF-8 text".to_string()));
    }
}
