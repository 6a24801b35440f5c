//! The gate (`history --last`, docs/SPEC.md section 4): it answers for the tree, not for the
//! last command. It passes only when no error a run introduced is, as far as lspgate's
//! runs have seen, still in the files on disk.
//!
//! Not the last run alone: a run that did not change the tree (a check of another file,
//! a dry run, `check --staged` with nothing staged) says nothing of the errors an
//! earlier edit left. Not "the last run that changed the tree" either: an edit of an
//! unrelated, clean file does not check the callers an earlier edit broke, and would
//! pass the gate while they stay broken. Nor a check re-run by `history --last`: a
//! check counts every error of its files as new, old ones included, and the gate would
//! start servers from a read-only command.
//!
//! So the history keeps the *breaks*: every error a run reported as new in a file as
//! it is on disk (an edit that wrote, `check PATH`, `check --patch`), each until a
//! later run that checked its file no longer reports it. Runs whose diagnostics are of
//! text that is not on disk (a dry run, a rejected edit, the index `check --staged`
//! reads) neither add breaks nor clear them. A later run still reports a break when it
//! lists an error in the file that the before/after comparison would pair with it (same
//! severity, source, code and first line of the message), not new, wherever it now is:
//! the run marked it not new because it was there before. Each such error carries one
//! break at most, and breaks take them first: when two equal errors stand and one is
//! fixed, the break stays (a false failure at worst, never a false clean). A run whose
//! check was incomplete (a server missing, failed or crashed, a wait ran out) clears
//! nothing: what it did not settle may still be there. A break in a file that no longer
//! exists is gone with it. Breaks are rows of their own, so the oldest runs' records
//! can be dropped while a break they found still stands.
//!
//! `history --last` exits with the worst, in the order 4, 1, 3, 0 of docs/SPEC.md section 4, of:
//! the last run's own verdict ([`Run::gate`]: a dry run that would add an error fails
//! the gate while it is the last attempt); 1 while a break is outstanding; and the
//! newest run that may have changed the tree (a `write`, `edit` or `patch` that was
//! neither a dry run nor rejected, or any that never recorded its outcome): 4 when it
//! was partly written, 3 when it never recorded its outcome or its check was
//! incomplete, until a later one of these settles it.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::{HistoryError, RUN_COLUMNS, Run, StoredDiagnostic, open_for_reading, run_from_row};
use super::{tags_from_text, tags_text};
use crate::exit::Outcome;
use crate::model::{Action, Level, Report, Reported, Role, listed};

/// What a run's diagnostics are of, as far as its report cannot tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// The files on disk as the run left them (unless its report says it was a dry run
    /// or a rejected edit).
    Tree,
    /// The git index (`check --staged`), which need not be what is on disk.
    Index,
}

/// An error a run reported as new, not seen fixed since.
#[derive(Debug, Clone, PartialEq)]
pub struct Break {
    /// The run that reported it new.
    pub run_id: i64,
    /// Where the newest run that checked its file saw it.
    pub diagnostic: StoredDiagnostic,
}

/// What `history --last` answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub outcome: Outcome,
    /// Every outstanding break, oldest first.
    pub outstanding: Vec<Break>,
    /// The newest run that may have changed the tree, when it is not the last run and
    /// holds the gate at 3 or 4.
    pub unsettled: Option<Run>,
    /// Why, in a few words: `it passed`, `it left new errors`, ...
    pub reason: String,
}

/// Add the breaks `report` found and clear those it saw fixed, in the transaction that
/// records run `run_id`.
pub(super) fn record(
    tx: &Transaction<'_>,
    run_id: i64,
    report: &Report,
    seen: Seen,
) -> rusqlite::Result<()> {
    if seen == Seen::Index || report.dry_run || report.rejected {
        return Ok(());
    }
    for applied in &report.applied {
        if applied.action == Action::Deleted {
            tx.execute(
                "DELETE FROM breaks WHERE path = ?1",
                params![applied.path.to_string_lossy()],
            )?;
        }
    }
    let settled = !report.incomplete();
    for file in &report.files {
        let path = file.path.to_string_lossy();
        let errors: Vec<&Reported> = listed(file, true)
            .into_iter()
            .filter(|r| Level::of(&r.diagnostic) == Level::Error)
            .collect();
        if settled {
            carry(tx, &path, &errors)?;
        }
        let role = match file.role {
            Role::Edited => "edited",
            Role::Dependent => "dependent",
        };
        // An incomplete run kept the file's breaks: one it reports new again (a `check`
        // counts every error new) is not added twice.
        for reported in errors.iter().filter(|r| r.new) {
            let d = &reported.diagnostic;
            tx.execute(
                "INSERT INTO breaks (run_id, path, role, line, column, severity, code, source,
                                     message, tags)
                 SELECT ?1, ?2, ?3, ?4, ?5, 'Error', ?6, ?7, ?8, ?9
                 WHERE NOT EXISTS (
                     SELECT 1 FROM breaks WHERE path = ?2 AND line = ?4 AND column = ?5
                         AND code IS ?6 AND source IS ?7 AND message = ?8)",
                params![
                    run_id,
                    path,
                    role,
                    i64::from(d.range.start.line) + 1,
                    i64::from(d.range.start.character) + 1,
                    code_text(d),
                    d.source,
                    d.message,
                    tags_text(d.tags.as_deref().unwrap_or_default()),
                ],
            )?;
        }
    }
    Ok(())
}

/// The breaks of `path`, which a settled run checked and found `errors` in: each one
/// an error of the run carries (see the module documentation) stays, moved to where
/// that error is; the others were fixed.
fn carry(tx: &Transaction<'_>, path: &str, errors: &[&Reported]) -> rusqlite::Result<()> {
    let breaks: Vec<(i64, Option<String>, Option<String>, String)> = {
        let mut stmt =
            tx.prepare("SELECT rowid, code, source, message FROM breaks WHERE path = ?1")?;
        stmt.query_map(params![path], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    let mut taken = vec![false; errors.len()];
    for (rowid, code, source, message) in breaks {
        let carried = errors.iter().enumerate().position(|(i, r)| {
            let d = &r.diagnostic;
            !r.new
                && !taken[i]
                && code_text(d) == code
                && d.source == source
                && headline(&d.message) == headline(&message)
        });
        match carried {
            Some(i) => {
                taken[i] = true;
                let start = errors[i].diagnostic.range.start;
                tx.execute(
                    "UPDATE breaks SET line = ?2, column = ?3 WHERE rowid = ?1",
                    params![
                        rowid,
                        i64::from(start.line) + 1,
                        i64::from(start.character) + 1
                    ],
                )?;
            }
            None => {
                tx.execute("DELETE FROM breaks WHERE rowid = ?1", params![rowid])?;
            }
        }
    }
    Ok(())
}

/// A diagnostic's code as the history stores it.
fn code_text(d: &lsp_types::Diagnostic) -> Option<String> {
    d.code.as_ref().map(|c| match c {
        lsp_types::NumberOrString::Number(n) => n.to_string(),
        lsp_types::NumberOrString::String(s) => s.clone(),
    })
}

/// A message's first line: what the before/after comparison pairs errors by.
fn headline(message: &str) -> &str {
    message.lines().next().unwrap_or("")
}

/// The gate of `workspace`, whose newest run is `last`.
pub fn gate(workspace: &Path, last: &Run) -> Result<Gate, HistoryError> {
    let (outstanding, tree_run) = match open_for_reading(workspace)? {
        Some((conn, path)) => read(&conn).map_err(|e| HistoryError::sqlite(&path, e))?,
        None => (Vec::new(), None),
    };
    Ok(decide(last, outstanding, tree_run))
}

/// The outstanding breaks of files that still exist, and the newest run that may have
/// changed the tree.
fn read(conn: &Connection) -> rusqlite::Result<(Vec<Break>, Option<Run>)> {
    let mut stmt = conn.prepare(
        "SELECT run_id, path, role, line, column, severity, code, source, message, tags
         FROM breaks ORDER BY run_id, rowid",
    )?;
    let breaks = stmt
        .query_map([], |row| {
            Ok(Break {
                run_id: row.get(0)?,
                diagnostic: StoredDiagnostic {
                    path: PathBuf::from(row.get::<_, String>(1)?),
                    role: row.get(2)?,
                    line: row.get(3)?,
                    column: row.get(4)?,
                    severity: row.get(5)?,
                    code: row.get(6)?,
                    source: row.get(7)?,
                    message: row.get(8)?,
                    new: true,
                    tags: tags_from_text(&row.get::<_, String>(9)?),
                },
            })
        })?
        .collect::<rusqlite::Result<Vec<Break>>>()?;
    // A file deleted or renamed away (by any tool) took its errors with it. A dangling
    // symlink still names a file of the tree: its break stays.
    let outstanding = breaks
        .into_iter()
        .filter(|b| std::fs::symlink_metadata(&b.diagnostic.path).is_ok())
        .collect();
    let tree_run = conn
        .query_row(
            &format!(
                "SELECT {RUN_COLUMNS} FROM runs
                 WHERE command != 'check' AND (NOT completed OR (NOT dry_run AND NOT rejected))
                 ORDER BY id DESC LIMIT 1"
            ),
            [],
            run_from_row,
        )
        .optional()?;
    Ok((outstanding, tree_run))
}

/// What the newest run that may have changed the tree leaves unsettled, whatever its
/// errors (those are breaks): 4 partly written, 3 never recorded or incomplete.
fn unsettled_by(run: &Run) -> Outcome {
    if !run.completed {
        return Outcome::Incomplete;
    }
    match run.outcome() {
        Some(outcome @ (Outcome::PartlyWritten | Outcome::Incomplete)) => outcome,
        _ => Outcome::Clean,
    }
}

/// How bad a gate status is, in the order of docs/SPEC.md section 4: 4, then 1, then 3, then 0.
fn rank(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::PartlyWritten => 3,
        Outcome::NewDiagnostics => 2,
        Outcome::Clean => 0,
        _ => 1,
    }
}

fn decide(last: &Run, outstanding: Vec<Break>, tree_run: Option<Run>) -> Gate {
    let own = last.gate();
    let unsettled = tree_run.filter(|run| run.id != last.id && unsettled_by(run) != Outcome::Clean);
    let held = unsettled.as_ref().map_or(Outcome::Clean, unsettled_by);
    let broken = if outstanding.is_empty() {
        Outcome::Clean
    } else {
        Outcome::NewDiagnostics
    };
    let outcome = [own, broken, held]
        .into_iter()
        .max_by_key(|&outcome| rank(outcome))
        .unwrap_or(own);
    let reason = if outcome == own {
        match own {
            Outcome::Clean => "it passed".to_owned(),
            Outcome::NewDiagnostics => "it left new errors".to_owned(),
            Outcome::PartlyWritten => "it was partly written".to_owned(),
            _ if !last.completed => "it was not completed".to_owned(),
            _ => "it was incomplete".to_owned(),
        }
    } else if outcome == broken {
        "errors earlier runs introduced are not seen fixed".to_owned()
    } else {
        let run = unsettled.as_ref().map_or(0, |r| r.id);
        match held {
            Outcome::PartlyWritten => {
                format!("run {run}, the last to change the tree, was partly written")
            }
            _ => format!("run {run}, the last to change the tree, was not completely checked"),
        }
    };
    Gate {
        outcome,
        outstanding,
        unsettled,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{invocation, soon};
    use super::super::{open, record_at};
    use super::*;
    use crate::model::fixtures::{diag, file, reported};

    /// A report of `files` as a run on disk left them; its exit status from them.
    fn report(files: Vec<crate::model::FileReport>) -> Report {
        let mut report = crate::model::fixtures::spec_example();
        report.applied.clear();
        report.servers.clear();
        report.timed_out = false;
        report.outcome = crate::model::outcome(&files, crate::model::FailOn::Error, false);
        report.files = files;
        report
    }

    fn error(line: u32, message: &str, new: bool) -> Reported {
        reported(
            diag(lsp_types::DiagnosticSeverity::ERROR, line, 0, message),
            new,
        )
    }

    fn breaks(path: &Path) -> Vec<(i64, String, u32, String)> {
        let conn = open(path, false, soon()).expect("open");
        let (outstanding, _) = read(&conn).expect("read");
        outstanding
            .into_iter()
            .map(|b| {
                let d = b.diagnostic;
                (b.run_id, d.path.display().to_string(), d.line, d.message)
            })
            .collect()
    }

    /// Files that exist, as breaks in deleted files are gone.
    fn files() -> (tempfile::TempDir, PathBuf, String, String) {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("h.sqlite3");
        let (b, c) = (dir.path().join("b.py"), dir.path().join("c.py"));
        std::fs::write(&b, "b").expect("write");
        std::fs::write(&c, "c").expect("write");
        let b = b.display().to_string();
        let c = c.display().to_string();
        (dir, db, b, c)
    }

    #[test]
    fn a_break_stays_until_a_run_that_checks_its_file_no_longer_reports_it() {
        let (_dir, db, b, c) = files();
        let edit = invocation("edit");
        let broke = report(vec![
            file(&b, Role::Dependent, vec![error(3, "missing", true)]),
            file(
                &c,
                Role::Dependent,
                vec![error(5, "missing", true), error(2, "own", false)],
            ),
        ]);
        let one = record_at(&db, &edit, &broke, Seen::Tree).expect("record");
        assert_eq!(breaks(&db).len(), 2);

        // Not of the disk: a dry run, a rejected edit, the index. Nothing changes.
        let mut clean = report(vec![file(&b, Role::Dependent, vec![])]);
        clean.dry_run = true;
        record_at(&db, &edit, &clean, Seen::Tree).expect("record");
        clean.dry_run = false;
        clean.rejected = true;
        record_at(&db, &edit, &clean, Seen::Tree).expect("record");
        clean.rejected = false;
        record_at(&db, &invocation("check"), &clean, Seen::Index).expect("record");
        assert_eq!(breaks(&db).len(), 2);

        // An incomplete run clears nothing, and a check of it that counts the break new
        // again does not add it twice.
        let timeout = crate::model::Note::Incomplete(crate::model::RunReason::BeforeViewMissing {
            files: vec![PathBuf::from(&b)],
        });
        let mut incomplete = clean.clone();
        incomplete.notes.push(timeout.clone());
        record_at(&db, &edit, &incomplete, Seen::Tree).expect("record");
        let mut again = report(vec![file(
            &b,
            Role::Edited,
            vec![error(3, "missing", true)],
        )]);
        again.notes.push(timeout);
        record_at(&db, &invocation("check"), &again, Seen::Tree).expect("record");
        assert_eq!(breaks(&db).len(), 2);

        // c.py's break still reported (moved, not new): it stays, at its new place; b.py's
        // is gone: fixed.
        let later = report(vec![
            file(&b, Role::Edited, vec![]),
            file(
                &c,
                Role::Dependent,
                vec![error(7, "missing", false), error(2, "own", false)],
            ),
        ]);
        record_at(&db, &edit, &later, Seen::Tree).expect("record");
        assert_eq!(breaks(&db), [(one, c.clone(), 8, "missing".to_owned())]);

        // Two equal errors, one of them the break: one fixed leaves the break standing.
        let twin = report(vec![file(
            &c,
            Role::Edited,
            vec![error(7, "missing", false), error(9, "missing", true)],
        )]);
        let two = record_at(&db, &edit, &twin, Seen::Tree).expect("record");
        assert_eq!(breaks(&db).len(), 2);
        let one_fixed = report(vec![file(
            &c,
            Role::Edited,
            vec![error(7, "missing", false)],
        )]);
        record_at(&db, &edit, &one_fixed, Seen::Tree).expect("record");
        assert_eq!(breaks(&db), [(one, c.clone(), 8, "missing".to_owned())]);
        assert_ne!(one, two);

        // Deleted: gone with its file.
        std::fs::remove_file(&c).expect("remove");
        assert_eq!(breaks(&db), []);
    }

    /// A database from before the breaks were kept: the new errors of its newest edit
    /// that wrote become breaks, so the upgrade does not pass a gate that was failing.
    #[test]
    fn an_upgraded_database_keeps_the_break_its_last_edit_left() {
        let (_dir, db, b, _c) = files();
        let conn = Connection::open(&db).expect("create");
        for sql in &super::super::MIGRATIONS[..3] {
            conn.execute_batch(sql).expect("old migration");
        }
        conn.pragma_update(None, "user_version", 3)
            .expect("version");
        conn.execute_batch(&format!(
            "INSERT INTO runs (id, started_at, duration_ms, command, args, workspace, run_dir,
                               files, exit_code, summary, dry_run, rejected)
             VALUES (1, 1, 1, 'edit', '[]', '/w', '/w', '[]', 1, 's', 0, 0),
                    (2, 2, 1, 'check', '[]', '/w', '/w', '[]', 0, 's', 0, 0);
             INSERT INTO diagnostics (run_id, path, role, line, column, severity, message, new)
             VALUES (1, '{b}', 'dependent', 3, 7, 'Error', 'missing', 1),
                    (1, '{b}', 'dependent', 1, 1, 'Error', 'old', 0);"
        ))
        .expect("old rows");
        conn.close().expect("close");
        assert_eq!(breaks(&db), [(1, b, 3, "missing".to_owned())]);
    }

    fn run(id: i64, command: &str, exit_code: i32, new_errors: usize) -> Run {
        Run {
            id,
            started_at_ms: 0,
            duration_ms: 0,
            command: command.to_owned(),
            args: Vec::new(),
            workspace: PathBuf::from("/w"),
            run_dir: PathBuf::from("/w"),
            files: Vec::new(),
            exit_code,
            summary: String::new(),
            dry_run: false,
            rejected: false,
            completed: true,
            new_errors,
            diagnostics: Vec::new(),
        }
    }

    fn a_break() -> Break {
        Break {
            run_id: 1,
            diagnostic: StoredDiagnostic {
                path: PathBuf::from("/w/b.py"),
                role: "dependent".to_owned(),
                line: 1,
                column: 1,
                severity: "Error".to_owned(),
                code: None,
                source: None,
                message: "missing".to_owned(),
                new: true,
                tags: Vec::new(),
            },
        }
    }

    #[test]
    fn the_worst_of_the_last_run_the_breaks_and_the_last_change_decides() {
        let clean_check = run(3, "check", 0, 0);
        let decided = |last: &Run, breaks: Vec<Break>, tree: Option<Run>| {
            let gate = decide(last, breaks, tree);
            (crate::exit::status(gate.outcome), gate.reason)
        };
        assert_eq!(decided(&clean_check, vec![], None).0, 0);
        assert_eq!(
            decided(&clean_check, vec![a_break()], Some(run(1, "edit", 1, 2))),
            (
                1,
                "errors earlier runs introduced are not seen fixed".to_owned()
            )
        );
        // A partly written edit holds the gate at 4 until another edit.
        assert_eq!(
            decided(&clean_check, vec![a_break()], Some(run(1, "patch", 4, 0))).0,
            4
        );
        let mut killed = run(2, "edit", 3, 0);
        killed.completed = false;
        assert_eq!(
            decided(&clean_check, vec![], Some(killed)),
            (
                3,
                "run 2, the last to change the tree, was not completely checked".to_owned()
            )
        );
        // The last run's own verdict: a dry run that would add an error.
        let mut dry = run(4, "edit", 1, 1);
        dry.dry_run = true;
        assert_eq!(
            decided(&dry, vec![], Some(run(1, "edit", 0, 0))),
            (1, "it left new errors".to_owned())
        );
        // The last run is the last change: its own verdict, not twice.
        let incomplete = run(5, "write", 3, 0);
        assert_eq!(
            decided(&incomplete, vec![], Some(incomplete.clone())),
            (3, "it was incomplete".to_owned())
        );
    }
}
