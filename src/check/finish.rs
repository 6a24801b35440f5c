//! The end of a run: `--reject` writes only a clean, complete check; `--dry-run`
//! never writes. Whatever was shown to the servers and not written goes back to the
//! disk's text in their view.

use crate::edit::{self, EditError, EditPlan};
use crate::exit::Outcome;
use crate::lsp::Pool;
use crate::model::Note;

use super::files::Tracked;
use super::servers::Group;

/// How the edit ended on disk.
pub(super) struct Ending {
    /// The edit is on disk.
    pub written: bool,
    /// `--reject` kept it off the disk.
    pub rejected: bool,
}

/// Write a `--reject` edit when the check found nothing and was complete (an edit
/// nobody could check is not known to introduce nothing), and tell the servers of
/// the save.
pub(super) fn reject_or_write(
    workspace: &std::path::Path,
    pool: &mut Pool,
    groups: &[Group],
    tracked: &[Tracked],
    plan: &EditPlan,
    outcome: Outcome,
    notes: &mut Vec<Note>,
) -> Result<Ending, EditError> {
    if outcome != Outcome::Clean {
        if outcome == Outcome::Incomplete {
            notes.push(Note::Info(
                "--reject: the check is incomplete, so the edit was not written".into(),
            ));
        }
        return Ok(Ending {
            written: false,
            rejected: true,
        });
    }
    edit::commit(workspace, plan)?;
    for g in groups {
        if let Some(s) = g.server {
            for &i in &g.files {
                if tracked[i].after.is_some() {
                    pool.save(s, &tracked[i].path);
                }
            }
        }
    }
    Ok(Ending {
        written: true,
        rejected: false,
    })
}

/// Put the servers' view back to the disk's after a run that did not write what it
/// showed them (--dry-run, a rejected edit, a reviewed change).
pub(super) fn restore(pool: &mut Pool, groups: &[Group], tracked: &[Tracked]) {
    for g in groups {
        let Some(s) = g.server else { continue };
        let mut restored = false;
        for &i in &g.files {
            let t = &tracked[i];
            for path in std::iter::once(&t.path).chain(t.renamed_from.as_ref()) {
                match crate::regular::read_to_string(path) {
                    Ok(text) => {
                        if pool.server(s).doc(path).is_none_or(|d| d.text != text) {
                            pool.open_or_change(s, path, &text);
                            restored = true;
                        }
                    }
                    // Gone from the disk and from the server (a reviewed deletion):
                    // nothing to take back.
                    Err(_) if pool.server(s).doc(path).is_none() => {}
                    Err(_) => {
                        pool.close(s, path);
                        restored = true;
                    }
                }
            }
        }
        // The diagnostics held now are those of the text just taken back: the next
        // run (on a warm daemon) asks for them again instead of taking them as its
        // before view. Without it a --dry-run that found errors made the same edit
        // look clean next.
        if restored {
            pool.mark_changed(s);
        }
    }
}
