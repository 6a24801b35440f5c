//! The run history (docs/SPEC.md section 8): every reporting run (`write`, `edit`, `patch`,
//! `check`) recorded in a SQLite database, one per workspace, and read back by
//! `lspgate history`. This file owns the database: where it lives, its schema and
//! migrations, writing a run, reading runs, and what happens when the file is broken.
//! How runs print is `report::history`'s business; what `history --last` answers (the
//! errors runs introduced that are still on disk, not only the last run) is `gate`'s.
//!
//! Where: `$LSPGATE_DATA_DIR/history/<hash>.sqlite3`, else
//! `$XDG_DATA_HOME/lspgate/history/...`, else `~/.local/share/lspgate/history/...`;
//! `<hash>` names the canonical workspace path (the daemon's socket uses the same
//! hash; both directories are `paths::dirs`'). Directories are created `0700`: the database holds source file names and
//! the servers' messages about them.
//!
//! The gate fails closed: a run is recorded as *pending* ([`begin`]) before it can
//! change the disk, and completed ([`Pending::complete`]) once its report is printed.
//! A run killed in between, or whose completion cannot be written, stays pending, and
//! `history --last` exits 3 for it, never 0. A run that cannot be recorded as pending
//! is not made at all (the caller exits 2, nothing written) when a database exists that
//! the gate would read an older run from; with no database at all (no data directory,
//! or one that cannot be created) the gate has nothing to pass on, so the run goes
//! ahead with one `warning:` line. A failure to complete is one `warning:` line too:
//! the report is already out. A database that SQLite calls corrupt (or not a database)
//! is renamed `*.corrupt-<unix secs>` and a fresh one started. A database whose schema
//! is newer than this lspgate knows (a newer lspgate wrote it) is left alone.
//!
//! Concurrent runs wait for each other instead of dropping their record: WAL journal
//! (readers never wait for a writer), a busy timeout set before anything else on a
//! connection, every write (migrations included) inside one `BEGIN IMMEDIATE`
//! transaction, and a retry, within the same bound, of what SQLite answers "busy"
//! without calling the busy handler: the switch of a new database to WAL, which needs
//! an exclusive lock that SQLite tries once.

use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lsp_types::{DiagnosticTag, NumberOrString};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior, params};

use crate::exit::Outcome;
use crate::model::{Level, Report, Role};
use crate::model::{tag_from_name, tag_name};

mod gate;
pub use gate::{Gate, Seen, gate};

/// The schema, one migration per version: `MIGRATIONS[i]` takes a database from
/// version `i` to `i + 1` (`PRAGMA user_version`). Append; never edit a released one.
const MIGRATIONS: &[&str] = &[
    // v1: runs and their diagnostics. Paths are absolute; lines and columns 1-based,
    // as the text report prints them; times in milliseconds since the Unix epoch.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        started_at INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        command TEXT NOT NULL,
        args TEXT NOT NULL,          -- JSON array of strings
        workspace TEXT NOT NULL,
        run_dir TEXT NOT NULL,
        files TEXT NOT NULL,         -- JSON array of {path, action}
        exit_code INTEGER NOT NULL,
        summary TEXT NOT NULL,
        dry_run INTEGER NOT NULL,
        rejected INTEGER NOT NULL
    );
    CREATE TABLE diagnostics (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        role TEXT NOT NULL,          -- edited | dependent
        line INTEGER NOT NULL,
        column INTEGER NOT NULL,
        severity TEXT NOT NULL,      -- Error | Warning | Information | Hint
        code TEXT,
        source TEXT,
        message TEXT NOT NULL,
        new INTEGER NOT NULL
    );
    CREATE INDEX diagnostics_by_run ON diagnostics(run_id);",
    // v2: a diagnostic's LSP tags, comma-separated, in the server's order, named as the
    // JSON report names them (`unnecessary`, `deprecated`); '' for none, which is what
    // the rows recorded before it read.
    "ALTER TABLE diagnostics ADD COLUMN tags TEXT NOT NULL DEFAULT '';",
    // v3: whether the run got to record its outcome. A run is inserted with 0 before it
    // may change the disk and set to 1 with its outcome; the runs recorded before this
    // column existed were recorded whole, once done.
    "ALTER TABLE runs ADD COLUMN completed INTEGER NOT NULL DEFAULT 1;",
    // v4: the gate's outstanding breaks (see `gate`): each error a run reported as new in
    // a file on disk, until a later run that checked the file finds it gone. Not tied to
    // `runs` by a foreign key: a break outlives its run's record. Seeded with the new
    // errors of the newest edit that wrote, which is what the gate failed on before.
    "CREATE TABLE breaks (
        run_id INTEGER NOT NULL,     -- the run that reported it new
        path TEXT NOT NULL,
        role TEXT NOT NULL,
        line INTEGER NOT NULL,       -- where the newest run that checked the file saw it
        column INTEGER NOT NULL,
        severity TEXT NOT NULL,
        code TEXT,
        source TEXT,
        message TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX breaks_by_path ON breaks(path);
    INSERT INTO breaks (run_id, path, role, line, column, severity, code, source, message, tags)
        SELECT run_id, path, role, line, column, severity, code, source, message, tags
        FROM diagnostics
        WHERE new AND severity = 'Error' AND run_id = (
            SELECT max(id) FROM runs
            WHERE completed AND NOT dry_run AND NOT rejected AND command != 'check');",
];

/// The schema version this lspgate writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How long a run waits for the database: for another run's write, or for the first
/// open of a new database by several runs at once. Writes take a few milliseconds; this
/// only matters when many runs start or end at once, and it bounds what a stuck lock
/// (a `sqlite3` shell left in a transaction) can cost before the run is refused.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// [`BUSY_TIMEOUT`], or in debug builds `LSPGATE_HISTORY_WAIT` (a duration), so that
/// tests of a stuck lock need not wait the full bound.
fn busy_timeout() -> Duration {
    if cfg!(debug_assertions)
        && let Ok(v) = std::env::var("LSPGATE_HISTORY_WAIT")
        && let Ok(d) = crate::config::parse_duration(&v)
    {
        return d;
    }
    BUSY_TIMEOUT
}

/// The summary of a run recorded as started and not (yet) completed.
pub const PENDING_SUMMARY: &str =
    "not completed: still running, or stopped before its outcome was recorded";

/// Runs kept per workspace; older ones (and their diagnostics) are dropped.
const KEEP_RUNS: i64 = 5000;

/// Longest argument stored, in characters: `--content` can carry a whole file.
const MAX_ARG_CHARS: usize = 2000;

/// What was typed, and when the run started: what the record needs besides the report.
pub struct Invocation {
    pub command: String,
    /// The arguments after the program name, lossily made UTF-8.
    pub args: Vec<String>,
    pub started_at: SystemTime,
    clock: Instant,
}

impl Invocation {
    /// Start the clock for a run of `command` typed as `raw` (program name first).
    pub fn start(command: &str, raw: &[OsString]) -> Invocation {
        Invocation {
            command: command.to_owned(),
            args: raw
                .iter()
                .skip(1)
                .map(|arg| clip(&arg.to_string_lossy()))
                .collect(),
            started_at: SystemTime::now(),
            clock: Instant::now(),
        }
    }
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_ARG_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A recorded run. `diagnostics` is empty in listings.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub id: i64,
    pub started_at_ms: i64,
    pub duration_ms: i64,
    pub command: String,
    pub args: Vec<String>,
    pub workspace: PathBuf,
    pub run_dir: PathBuf,
    pub files: Vec<RunFile>,
    /// The exit status it recorded (`exit::outcome_of` reads it back).
    pub exit_code: i32,
    pub summary: String,
    pub dry_run: bool,
    pub rejected: bool,
    /// Whether the run recorded its outcome; a pending run was killed, is still
    /// running, or could not write its outcome.
    pub completed: bool,
    /// New errors among the run's diagnostics: what `history --last` gates on.
    pub new_errors: usize,
    pub diagnostics: Vec<StoredDiagnostic>,
}

impl Run {
    /// What `history --last` exits with when this is the last run: 4 when it wrote
    /// part of its edit, 1 when it left a new error, 0 when it completed with neither
    /// and its own status was 0 or 1 (a new warning under `--fail-on warning` is not a
    /// new error), else 3: an incomplete check, and a run that never recorded its
    /// outcome (killed, or its record could not be completed), whatever it may have
    /// done.
    pub fn gate(&self) -> Outcome {
        let recorded = self.outcome();
        if !self.completed {
            Outcome::Incomplete
        } else if recorded == Some(Outcome::PartlyWritten) {
            Outcome::PartlyWritten
        } else if self.new_errors > 0 {
            Outcome::NewDiagnostics
        } else if matches!(recorded, Some(Outcome::Clean | Outcome::NewDiagnostics)) {
            Outcome::Clean
        } else {
            Outcome::Incomplete
        }
    }

    /// How the run ended, as its recorded exit status says; `None` for a number no
    /// run exits with.
    pub fn outcome(&self) -> Option<Outcome> {
        crate::exit::outcome_of(self.exit_code)
    }
}

/// A file of a run: what an edit did to it (`created`, `modified`, `deleted`,
/// `renamed`), or `checked` for a run that edited nothing.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunFile {
    pub path: PathBuf,
    pub action: String,
}

/// One diagnostic of a recorded run.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredDiagnostic {
    pub path: PathBuf,
    pub role: String,
    /// 1-based.
    pub line: u32,
    /// 1-based, in the server's units.
    pub column: u32,
    pub severity: String,
    pub code: Option<String>,
    pub source: Option<String>,
    pub message: String,
    pub new: bool,
    /// The LSP tags the report showed (`unnecessary`, `deprecated`), in the server's
    /// order; empty for none, and for the runs recorded before schema 2.
    pub tags: Vec<DiagnosticTag>,
}

/// Why the history could not be used.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("{0}")]
    Unavailable(String),
    #[error("{path}: written by a newer lspgate (schema {found}, this one knows {known})")]
    Newer {
        path: String,
        found: i64,
        known: i64,
    },
    #[error("{path}: {source}")]
    Sqlite {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
}

impl HistoryError {
    fn sqlite(path: &Path, source: rusqlite::Error) -> Self {
        HistoryError::Sqlite {
            path: path.display().to_string(),
            source,
        }
    }

    /// Whether SQLite says the file is damaged or not a database at all.
    fn is_corrupt(&self) -> bool {
        match self {
            HistoryError::Sqlite { source, .. } => is_corrupt(source),
            _ => false,
        }
    }

    /// Whether another connection held a lock SQLite would not wait for.
    fn is_busy(&self) -> bool {
        match self {
            HistoryError::Sqlite { source, .. } => is_busy(source),
            _ => false,
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Run `f` again while it fails with "busy", until `deadline`: for the busy answers
/// SQLite gives without calling its busy handler (see the module documentation).
fn retry_busy<T>(
    deadline: Instant,
    mut f: impl FnMut() -> Result<T, HistoryError>,
) -> Result<T, HistoryError> {
    let mut backoff = Duration::from_millis(1);
    loop {
        match f() {
            Err(e) if e.is_busy() && Instant::now() < deadline => {
                std::thread::sleep(backoff.min(deadline.saturating_duration_since(Instant::now())));
                backoff = (backoff * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

fn is_corrupt(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// The database of `workspace` (canonical), or `None` when no data directory can
/// be named (no `$HOME`).
pub fn db_path(workspace: &Path) -> Option<PathBuf> {
    let data = crate::paths::dirs().data.as_ref()?;
    let hash = crate::paths::workspace_hash(workspace);
    Some(data.join("history").join(format!("{hash}.sqlite3")))
}

/// A run recorded as started: complete it with its outcome, or discard it when
/// nothing was written. Dropped as it is, it stays pending, and the gate counts it as
/// incomplete (a run that returned early without an outcome must not pass it).
#[must_use = "a pending run is completed, marked partly written or discarded"]
pub struct Pending {
    /// The database and the row; `None` when the run is not recorded at all (no
    /// database can exist for the gate to read).
    row: Option<(PathBuf, i64)>,
}

/// Record the run as started, before it may change the disk (docs/SPEC.md section 2, step 9).
/// `Err` means the run must not be made: a database exists, and the gate would read an
/// older run from it.
pub fn begin(
    workspace: &Path,
    run_dir: &Path,
    invocation: &Invocation,
) -> Result<Pending, HistoryError> {
    let Some(path) = db_path(workspace) else {
        warn("no data directory ($HOME is not set); this run is not recorded");
        return Ok(Pending { row: None });
    };
    begin_at(&path, workspace, run_dir, invocation)
}

/// [`begin`] with the database at `path`.
pub fn begin_at(
    path: &Path,
    workspace: &Path,
    run_dir: &Path,
    invocation: &Invocation,
) -> Result<Pending, HistoryError> {
    let write = |conn: &mut Connection| insert_pending(conn, workspace, run_dir, invocation);
    match with_database(path, write) {
        Ok(id) => Ok(Pending {
            row: Some((path.to_owned(), id)),
        }),
        // Nothing for the gate to pass on: `history --last` finds no runs (exit 2).
        Err(e) if !path.exists() => {
            warn(&format!("{e}; this run is not recorded"));
            Ok(Pending { row: None })
        }
        Err(e) => Err(e),
    }
}

impl Pending {
    /// Record the run's outcome, and what it tells the gate of the tree (`seen`: what
    /// its diagnostics are of). Never fails: a problem is one warning line, and the run
    /// stays pending (the gate exits 3 for it).
    pub fn complete(self, invocation: &Invocation, report: &Report, seen: Seen) {
        let Some((path, id)) = &self.row else { return };
        let write = |conn: &mut Connection| complete_run(conn, *id, invocation, report, seen);
        if let Err(e) = with_database(path, write) {
            warn(&format!(
                "{e}; this run stays recorded as not completed, so `history --last` exits 3"
            ));
        }
    }

    /// The edit was partly written (exit 4): recorded so, with `message` as its summary.
    pub fn partly_written(self, invocation: &Invocation, message: &str) {
        let Some((path, id)) = &self.row else { return };
        let write = |conn: &mut Connection| {
            let duration_ms = elapsed_ms(invocation);
            conn.execute(
                "UPDATE runs SET duration_ms = ?2, exit_code = ?3, summary = ?4, completed = 1
                 WHERE id = ?1",
                params![
                    id,
                    duration_ms,
                    crate::exit::status(Outcome::PartlyWritten),
                    message
                ],
            )
        };
        if let Err(e) = with_database(path, write) {
            warn(&format!(
                "{e}; this run stays recorded as not completed, so `history --last` exits 3"
            ));
        }
    }

    /// Nothing was written and nothing checked (bad input found at commit time): the
    /// run is removed, as bad input is never recorded.
    pub fn discard(self) {
        let Some((path, id)) = &self.row else { return };
        let write = |conn: &mut Connection| {
            conn.execute(
                "DELETE FROM runs WHERE id = ?1 AND completed = 0",
                params![id],
            )
        };
        // Should it fail, the run stays pending: the gate then says 3, not 0.
        if let Err(e) = with_database(path, write) {
            warn(&format!("{e}; this run stays recorded as not completed"));
        }
    }
}

#[allow(clippy::print_stderr)]
fn warn(message: &str) {
    eprintln!("lspgate: warning: history: {message}");
}

/// Record a finished run in one go (a pending row and its completion), into the
/// database at `path`, moving a corrupt one aside first. For tests and tools.
#[cfg(test)]
pub fn record_at(
    path: &Path,
    invocation: &Invocation,
    report: &Report,
    seen: Seen,
) -> Result<i64, HistoryError> {
    with_database(path, |conn| {
        let id = insert_pending(conn, &report.workspace, &report.run_dir, invocation)?;
        complete_run(conn, id, invocation, report, seen)
    })
}

/// Open the database at `path` (creating it and its directory), and run `write` on it,
/// waiting for other runs' locks within [`BUSY_TIMEOUT`] and moving a corrupt database
/// aside once.
fn with_database<T>(
    path: &Path,
    mut write: impl FnMut(&mut Connection) -> rusqlite::Result<T>,
) -> Result<T, HistoryError> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| HistoryError::Unavailable(format!("{}: {e}", dir.display())))?;
    }
    let deadline = Instant::now() + busy_timeout();
    let mut attempt = || {
        retry_busy(deadline, || {
            let mut conn = open(path, true, deadline)?;
            write(&mut conn).map_err(|e| HistoryError::sqlite(path, e))
        })
    };
    match attempt() {
        Err(e) if e.is_corrupt() => {
            let aside = move_aside(path)?;
            warn(&format!(
                "{}: {e}; moved it aside to {}",
                path.display(),
                aside.display()
            ));
            attempt()
        }
        other => other,
    }
}

/// Rename a broken database (and its WAL and shared-memory files, which belong to it
/// and must not be replayed into a new one) to `*.corrupt-<unix secs>`.
fn move_aside(path: &Path) -> Result<PathBuf, HistoryError> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".corrupt-{secs}"));
    let aside = PathBuf::from(aside);
    std::fs::rename(path, &aside).map_err(|e| {
        HistoryError::Unavailable(format!(
            "{}: corrupt, and cannot be moved aside: {e}",
            path.display()
        ))
    })?;
    for suffix in ["-wal", "-shm"] {
        let mut from = path.as_os_str().to_owned();
        from.push(suffix);
        let mut to = aside.as_os_str().to_owned();
        to.push(suffix);
        // Missing is the usual case; a failure leaves a stale file SQLite would
        // replay, so remove it instead.
        if std::fs::rename(&from, &to).is_err() {
            let _ = std::fs::remove_file(&from);
        }
    }
    Ok(aside)
}

/// Open and migrate, waiting for other connections until `deadline`. With `create`
/// false a missing database is an error of kind `Unavailable`, which readers take as
/// "no runs".
fn open(path: &Path, create: bool, deadline: Instant) -> Result<Connection, HistoryError> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    } else if !path.exists() {
        return Err(HistoryError::Unavailable(format!(
            "{}: no such file",
            path.display()
        )));
    }
    let sqlite = |e| HistoryError::sqlite(path, e);
    let mut conn = Connection::open_with_flags(path, flags).map_err(sqlite)?;
    // First, before any statement: every later one waits for other connections' locks.
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    conn.busy_timeout(left).map_err(sqlite)?;
    // Before anything that writes: a newer lspgate's database is left as it is.
    let version = user_version(&conn).map_err(sqlite)?;
    if version > SCHEMA_VERSION {
        return Err(newer(path, version));
    }
    // WAL is a property of the file, set once: only a new database switches. The switch
    // takes an exclusive lock without calling the busy handler, so a busy answer is
    // tried again (by `retry_busy`, around this whole open) rather than failing the run.
    // `journal_mode` answers with the mode in force, so it is a query.
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .map_err(sqlite)?;
    if !mode.eq_ignore_ascii_case("wal") {
        let _: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(sqlite)?;
    }
    // In WAL mode NORMAL still never corrupts the database; it only may lose the
    // last runs on a power cut, and spares every edit an fsync (about 10 ms).
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(sqlite)?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(sqlite)?;
    migrate(&mut conn, path)?;
    Ok(conn)
}

/// Bring the schema to [`SCHEMA_VERSION`], all steps in one transaction; refuse a
/// newer one.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), HistoryError> {
    let sqlite = |e| HistoryError::sqlite(path, e);
    let version = user_version(conn).map_err(sqlite)?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    if version > SCHEMA_VERSION {
        return Err(newer(path, version));
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sqlite)?;
    // Another run may have migrated while this one waited for the lock.
    let version = user_version(&tx).map_err(sqlite)?;
    if version > SCHEMA_VERSION {
        return Err(newer(path, version));
    }
    let start = usize::try_from(version).unwrap_or(0);
    for sql in &MIGRATIONS[start.min(MIGRATIONS.len())..] {
        tx.execute_batch(sql).map_err(sqlite)?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(sqlite)?;
    tx.commit().map_err(sqlite)
}

fn newer(path: &Path, found: i64) -> HistoryError {
    HistoryError::Newer {
        path: path.display().to_string(),
        found,
        known: SCHEMA_VERSION,
    }
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}

fn millis(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

fn elapsed_ms(invocation: &Invocation) -> i64 {
    i64::try_from(invocation.clock.elapsed().as_millis()).unwrap_or(i64::MAX)
}

/// The row of a run that has started: exit status 3 and not completed, until
/// [`complete_run`] records its outcome.
fn insert_pending(
    conn: &mut Connection,
    workspace: &Path,
    run_dir: &Path,
    invocation: &Invocation,
) -> rusqlite::Result<i64> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(
        "INSERT INTO runs (started_at, duration_ms, command, args, workspace, run_dir,
                           files, exit_code, summary, dry_run, rejected, completed)
         VALUES (?1, 0, ?2, ?3, ?4, ?5, '[]', ?6, ?7, 0, 0, 0)",
        params![
            millis(invocation.started_at),
            invocation.command,
            to_json(&invocation.args),
            workspace.to_string_lossy(),
            run_dir.to_string_lossy(),
            crate::exit::status(Outcome::Incomplete),
            PENDING_SUMMARY,
        ],
    )?;
    let id = tx.last_insert_rowid();
    tx.execute("DELETE FROM runs WHERE id <= ?1", params![id - KEEP_RUNS])?;
    tx.commit()?;
    Ok(id)
}

/// Record the outcome of pending run `id`: its files, status, summary and diagnostics,
/// and in the same transaction the gate's breaks it adds or clears ([`gate::record`]).
/// Should the row be gone (the database was moved aside meanwhile), the run is
/// recorded anew.
fn complete_run(
    conn: &mut Connection,
    id: i64,
    invocation: &Invocation,
    report: &Report,
    seen: Seen,
) -> rusqlite::Result<i64> {
    let files: Vec<RunFile> = if report.applied.is_empty() {
        report
            .files
            .iter()
            .filter(|f| f.role == Role::Edited)
            .map(|f| RunFile {
                path: f.path.clone(),
                action: "checked".to_owned(),
            })
            .collect()
    } else {
        report
            .applied
            .iter()
            .map(|a| RunFile {
                path: a.path.clone(),
                // The same lowercase word the JSON report uses.
                action: serde_json::to_value(a.action)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
            })
            .collect()
    };
    let duration_ms = elapsed_ms(invocation);

    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let outcome = params![
        id,
        duration_ms,
        to_json(&files),
        crate::exit::status(report.outcome),
        crate::model::summary_line(report),
        report.dry_run,
        report.rejected,
    ];
    let updated = tx.execute(
        "UPDATE runs SET duration_ms = ?2, files = ?3, exit_code = ?4, summary = ?5,
                         dry_run = ?6, rejected = ?7, completed = 1
         WHERE id = ?1 AND completed = 0",
        outcome,
    )?;
    let id = if updated == 1 {
        id
    } else {
        tx.execute(
            "INSERT INTO runs (started_at, duration_ms, command, args, workspace, run_dir,
                               files, exit_code, summary, dry_run, rejected, completed)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 1)",
            params![
                millis(invocation.started_at),
                duration_ms,
                invocation.command,
                to_json(&invocation.args),
                report.workspace.to_string_lossy(),
                report.run_dir.to_string_lossy(),
                to_json(&files),
                crate::exit::status(report.outcome),
                crate::model::summary_line(report),
                report.dry_run,
                report.rejected,
            ],
        )?;
        tx.last_insert_rowid()
    };
    {
        let mut stmt = tx.prepare(
            "INSERT INTO diagnostics (run_id, path, role, line, column, severity, code,
                                      source, message, new, tags)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        for file in &report.files {
            let role = match file.role {
                Role::Edited => "edited",
                Role::Dependent => "dependent",
            };
            for reported in crate::model::listed(file, true) {
                let d = &reported.diagnostic;
                let code = d.code.as_ref().map(|c| match c {
                    NumberOrString::Number(n) => n.to_string(),
                    NumberOrString::String(s) => s.clone(),
                });
                stmt.execute(params![
                    id,
                    file.path.to_string_lossy(),
                    role,
                    i64::from(d.range.start.line) + 1,
                    i64::from(d.range.start.character) + 1,
                    Level::of(d).lsp_name(),
                    code,
                    d.source,
                    d.message,
                    reported.new,
                    tags_text(d.tags.as_deref().unwrap_or_default()),
                ])?;
            }
        }
    }
    gate::record(&tx, id, report, seen)?;
    tx.commit()?;
    Ok(id)
}

/// Tags as stored: the words of those LSP defines, comma-separated; others are dropped,
/// as the report drops them.
fn tags_text(tags: &[DiagnosticTag]) -> String {
    tags.iter()
        .filter_map(tag_name)
        .collect::<Vec<_>>()
        .join(",")
}

/// Tags as [`tags_text`] stored them; a word this lspgate does not know is skipped.
fn tags_from_text(text: &str) -> Vec<DiagnosticTag> {
    text.split(',').filter_map(tag_from_name).collect()
}

/// A list stored as JSON text. Serialising strings and paths cannot fail; should it,
/// an empty list is a better record than none.
fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "[]".to_owned())
}

// ---------------------------------------------------------------------------------
// Reading

/// The history of `workspace`, opened for reading: `Ok(None)` when nothing was
/// ever recorded.
fn open_for_reading(workspace: &Path) -> Result<Option<(Connection, PathBuf)>, HistoryError> {
    let path = db_path(workspace).ok_or_else(|| {
        HistoryError::Unavailable("no data directory ($HOME is not set)".to_owned())
    })?;
    if !path.exists() {
        return Ok(None);
    }
    let deadline = Instant::now() + busy_timeout();
    let conn = retry_busy(deadline, || open(&path, false, deadline))?;
    Ok(Some((conn, path)))
}

const RUN_COLUMNS: &str = "id, started_at, duration_ms, command, args, workspace, run_dir, files,
    exit_code, summary, dry_run, rejected, completed,
    (SELECT count(*) FROM diagnostics d
     WHERE d.run_id = runs.id AND d.new AND d.severity = 'Error')";

fn run_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Run> {
    let args: String = row.get(4)?;
    let files: String = row.get(7)?;
    Ok(Run {
        id: row.get(0)?,
        started_at_ms: row.get(1)?,
        duration_ms: row.get(2)?,
        command: row.get(3)?,
        args: serde_json::from_str(&args).unwrap_or_default(),
        workspace: PathBuf::from(row.get::<_, String>(5)?),
        run_dir: PathBuf::from(row.get::<_, String>(6)?),
        files: serde_json::from_str(&files).unwrap_or_default(),
        exit_code: row.get(8)?,
        summary: row.get(9)?,
        dry_run: row.get(10)?,
        rejected: row.get(11)?,
        completed: row.get(12)?,
        new_errors: usize::try_from(row.get::<_, i64>(13)?).unwrap_or(0),
        diagnostics: Vec::new(),
    })
}

/// The newest `limit` runs, newest first, without their diagnostics.
pub fn list(workspace: &Path, limit: usize) -> Result<Vec<Run>, HistoryError> {
    let Some((conn, path)) = open_for_reading(workspace)? else {
        return Ok(Vec::new());
    };
    let sqlite = |e| HistoryError::sqlite(&path, e);
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC LIMIT ?1"
        ))
        .map_err(sqlite)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let runs = stmt
        .query_map(params![limit], run_from_row)
        .map_err(sqlite)?
        .collect::<rusqlite::Result<Vec<Run>>>()
        .map_err(sqlite)?;
    Ok(runs)
}

/// One run with its diagnostics: run `id`, or the newest with `None`.
pub fn get(workspace: &Path, id: Option<i64>) -> Result<Option<Run>, HistoryError> {
    let Some((conn, path)) = open_for_reading(workspace)? else {
        return Ok(None);
    };
    let sqlite = |e| HistoryError::sqlite(&path, e);
    let run = match id {
        Some(id) => conn.query_row(
            &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"),
            params![id],
            run_from_row,
        ),
        None => conn.query_row(
            &format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC LIMIT 1"),
            [],
            run_from_row,
        ),
    }
    .optional()
    .map_err(sqlite)?;
    let Some(mut run) = run else { return Ok(None) };
    run.diagnostics = diagnostics_of(&conn, run.id).map_err(sqlite)?;
    Ok(Some(run))
}

/// The diagnostics of run `run_id`, in the order they were recorded.
fn diagnostics_of(conn: &Connection, run_id: i64) -> rusqlite::Result<Vec<StoredDiagnostic>> {
    let mut stmt = conn.prepare(
        "SELECT path, role, line, column, severity, code, source, message, new, tags
         FROM diagnostics WHERE run_id = ?1 ORDER BY rowid",
    )?;
    let rows = stmt.query_map(params![run_id], |row| {
        Ok(StoredDiagnostic {
            path: PathBuf::from(row.get::<_, String>(0)?),
            role: row.get(1)?,
            line: row.get(2)?,
            column: row.get(3)?,
            severity: row.get(4)?,
            code: row.get(5)?,
            source: row.get(6)?,
            message: row.get(7)?,
            new: row.get(8)?,
            tags: tags_from_text(&row.get::<_, String>(9)?),
        })
    })?;
    rows.collect()
}

/// Run `id` with its diagnostics, or the newest with `None`; an error, with the message
/// `history` prints, when there is none.
pub fn find(workspace: &Path, id: Option<i64>) -> anyhow::Result<Run> {
    match get(workspace, id).map_err(|e| anyhow::anyhow!("history: {e}"))? {
        Some(found) => Ok(found),
        None => match id {
            Some(id) => anyhow::bail!("history: no run {id} in the history of this workspace"),
            // A gate must not pass on nothing: no run is not a passing run.
            None => anyhow::bail!("history: no runs recorded for {}", workspace.display()),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use lsp_types::DiagnosticSeverity;

    use super::*;
    use crate::model::fixtures::{diag, file, reported, spec_example, with_code};

    pub(super) fn soon() -> Instant {
        Instant::now() + BUSY_TIMEOUT
    }

    pub(super) fn invocation(command: &str) -> Invocation {
        Invocation::start(
            command,
            &[OsString::from("lspgate"), OsString::from(command)],
        )
    }

    fn tables(conn: &Connection) -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .expect("prepare");
        stmt.query_map([], |row| row.get(0))
            .expect("query")
            .collect::<rusqlite::Result<Vec<String>>>()
            .expect("rows")
    }

    #[test]
    fn an_empty_database_migrates_to_the_current_schema() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("h.sqlite3");
        // Version 0: an empty file SQLite has created, as an older setup might leave.
        Connection::open(&path)
            .expect("create")
            .close()
            .expect("close");
        let conn = open(&path, false, soon()).expect("open and migrate");
        assert_eq!(user_version(&conn).expect("version"), SCHEMA_VERSION);
        assert_eq!(
            tables(&conn),
            ["breaks", "diagnostics", "runs", "sqlite_sequence"]
        );
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |row| row.get(0))
            .expect("journal mode");
        assert_eq!(mode, "wal");
    }

    /// Each earlier version, built by applying only its migrations, reaches the
    /// current one with the rows it held intact.
    #[test]
    fn every_earlier_version_migrates_and_keeps_its_runs() {
        for version in 0..SCHEMA_VERSION {
            let dir = tempfile::tempdir().expect("tempdir");
            let path = dir.path().join("h.sqlite3");
            let conn = Connection::open(&path).expect("create");
            for sql in &MIGRATIONS[..usize::try_from(version).expect("small")] {
                conn.execute_batch(sql).expect("old migration");
            }
            conn.pragma_update(None, "user_version", version)
                .expect("set version");
            let had_runs = version >= 1;
            if had_runs {
                conn.execute(
                    "INSERT INTO runs (started_at, duration_ms, command, args, workspace,
                     run_dir, files, exit_code, summary, dry_run, rejected)
                     VALUES (1, 2, 'edit', '[]', '/w', '/w', '[]', 0, 's', 0, 0)",
                    [],
                )
                .expect("old row");
            }
            conn.close().expect("close");
            let conn = open(&path, false, soon()).expect("migrate");
            assert_eq!(user_version(&conn).expect("version"), SCHEMA_VERSION);
            let runs: i64 = conn
                .query_row("SELECT count(*) FROM runs", [], |row| row.get(0))
                .expect("count");
            assert_eq!(runs, i64::from(had_runs), "from version {version}");
        }
    }

    /// A version 1 database, made by the first migration alone, with a run and a
    /// diagnostic in it: opening it adds the `tags` column, the old row reads back with
    /// no tags, and new runs record theirs in it.
    #[test]
    fn a_version_1_database_gains_tags_and_its_rows_read_back_untagged() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("h.sqlite3");
        let conn = Connection::open(&path).expect("create");
        conn.execute_batch(MIGRATIONS[0]).expect("v1");
        conn.pragma_update(None, "user_version", 1)
            .expect("set version");
        conn.execute(
            "INSERT INTO runs (started_at, duration_ms, command, args, workspace,
             run_dir, files, exit_code, summary, dry_run, rejected)
             VALUES (1, 2, 'edit', '[]', '/w', '/w', '[]', 0, 's', 0, 0)",
            [],
        )
        .expect("old run");
        conn.execute(
            "INSERT INTO diagnostics (run_id, path, role, line, column, severity, code,
             source, message, new)
             VALUES (1, '/w/a.py', 'edited', 3, 1, 'Hint', 'reportUnusedImport',
             'Pyright', 'old hint', 1)",
            [],
        )
        .expect("old diagnostic");
        conn.close().expect("close");

        let conn = open(&path, false, soon()).expect("migrate");
        assert_eq!(user_version(&conn).expect("version"), SCHEMA_VERSION);
        let tags_column: (String, bool, String) = conn
            .query_row(
                "SELECT type, \"notnull\", dflt_value FROM pragma_table_info('diagnostics')
                 WHERE name = 'tags'",
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .expect("the tags column");
        assert_eq!(tags_column, ("TEXT".to_owned(), true, "''".to_owned()));
        let old = diagnostics_of(&conn, 1).expect("read the old run");
        assert_eq!(
            old,
            [StoredDiagnostic {
                path: PathBuf::from("/w/a.py"),
                role: "edited".to_owned(),
                line: 3,
                column: 1,
                severity: "Hint".to_owned(),
                code: Some("reportUnusedImport".to_owned()),
                source: Some("Pyright".to_owned()),
                message: "old hint".to_owned(),
                new: true,
                tags: Vec::new(),
            }]
        );
        drop(conn);

        let id =
            record_at(&path, &invocation("edit"), &tagged_report(), Seen::Tree).expect("record");
        assert_eq!(id, 2);
        let conn = open(&path, false, soon()).expect("reopen");
        let tagged: Vec<Vec<DiagnosticTag>> = diagnostics_of(&conn, id)
            .expect("read the new run")
            .into_iter()
            .map(|d| d.tags)
            .filter(|tags| !tags.is_empty())
            .collect();
        assert_eq!(
            tagged,
            [vec![DiagnosticTag::UNNECESSARY, DiagnosticTag::DEPRECATED]]
        );
    }

    /// The example run, with a hint in the edited file tagged unnecessary, deprecated
    /// and with a tag LSP does not define.
    fn tagged_report() -> Report {
        let mut report = spec_example();
        let mut hint = with_code(
            diag(DiagnosticSeverity::HINT, 2, 0, "\"os\" is not accessed"),
            "reportUnusedImport",
        );
        let invented: DiagnosticTag =
            serde_json::from_value(serde_json::json!(99)).expect("any number is a tag");
        hint.tags = Some(vec![
            DiagnosticTag::UNNECESSARY,
            invented,
            DiagnosticTag::DEPRECATED,
        ]);
        report.files[1].diagnostics.push(reported(hint, true));
        report
    }

    #[test]
    fn records_and_reads_back_tags() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("h.sqlite3");
        let id =
            record_at(&path, &invocation("edit"), &tagged_report(), Seen::Tree).expect("record");
        let conn = open(&path, false, soon()).expect("open");
        // Stored as the JSON report's words; the invented tag dropped, as reports drop it.
        let stored: Vec<String> = conn
            .prepare("SELECT tags FROM diagnostics WHERE run_id = ?1 AND tags != ''")
            .expect("prepare")
            .query_map(params![id], |row| row.get(0))
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("rows");
        assert_eq!(stored, ["unnecessary,deprecated"]);
        let diagnostics = diagnostics_of(&conn, id).expect("read");
        // 5 in cli.py, 2 in app.py and the hint.
        assert_eq!(diagnostics.len(), 8, "{diagnostics:#?}");
        let hint = diagnostics
            .iter()
            .find(|d| d.severity == "Hint")
            .expect("the hint");
        assert_eq!(
            hint.tags,
            [DiagnosticTag::UNNECESSARY, DiagnosticTag::DEPRECATED]
        );
        assert_eq!((hint.line, hint.column), (3, 1));
        assert!(
            diagnostics
                .iter()
                .filter(|d| d.severity != "Hint")
                .all(|d| d.tags.is_empty()),
            "{diagnostics:#?}"
        );
    }

    #[test]
    fn tags_as_text_and_back() {
        let both = [DiagnosticTag::DEPRECATED, DiagnosticTag::UNNECESSARY];
        assert_eq!(tags_text(&both), "deprecated,unnecessary");
        assert_eq!(tags_from_text("deprecated,unnecessary"), both);
        assert_eq!(tags_text(&[]), "");
        assert_eq!(tags_from_text(""), []);
        assert_eq!(
            tags_from_text("unnecessary,,shiny"),
            [DiagnosticTag::UNNECESSARY]
        );
    }

    #[test]
    fn a_newer_schema_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("h.sqlite3");
        let conn = Connection::open(&path).expect("create");
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .expect("set version");
        conn.close().expect("close");
        let err = record_at(&path, &invocation("edit"), &spec_example(), Seen::Tree)
            .expect_err("a newer schema is not written to");
        assert!(
            matches!(err, HistoryError::Newer { found, .. } if found == SCHEMA_VERSION + 1),
            "{err}"
        );
        assert!(err.to_string().contains("newer lspgate"), "{err}");
        let conn = Connection::open(&path).expect("reopen");
        assert_eq!(user_version(&conn).expect("version"), SCHEMA_VERSION + 1);
        assert!(tables(&conn).is_empty(), "nothing was created in it");
    }

    #[test]
    fn records_and_reads_back_a_run() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("deep/er/h.sqlite3");
        let mut report = spec_example();
        report.files.push(file(
            "/abs/root/d.py",
            Role::Dependent,
            vec![reported(
                with_code(diag(DiagnosticSeverity::WARNING, 0, 0, "w"), "W9"),
                false,
            )],
        ));
        let id = record_at(&path, &invocation("edit"), &report, Seen::Tree).expect("record");
        let conn = open(&path, false, soon()).expect("open");
        let count = |sql: &str| -> i64 { conn.query_row(sql, [], |row| row.get(0)).expect(sql) };
        assert_eq!(count("SELECT count(*) FROM runs"), 1);
        // 5 in cli.py, 2 in app.py, 1 in d.py: every diagnostic, new or not.
        assert_eq!(count("SELECT count(*) FROM diagnostics"), 8);
        assert_eq!(count("SELECT count(*) FROM diagnostics WHERE new = 0"), 2);
        let (line, column, code): (i64, i64, Option<String>) = conn
            .query_row(
                "SELECT line, column, code FROM diagnostics WHERE path = '/abs/root/src/app.py'
                 AND severity = 'Error'",
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .expect("app.py's error");
        assert_eq!(
            (line, column, code.as_deref()),
            (12, 5, Some("reportAttributeAccessIssue"))
        );
        drop(conn);
        assert!(id > 0);
    }

    #[test]
    fn a_corrupt_database_is_moved_aside_and_a_new_one_started() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("h.sqlite3");
        let garbage =
            b"this is not a database, but it is long enough to look like one. ".repeat(100);
        std::fs::write(&path, &garbage).expect("write garbage");
        record_at(&path, &invocation("write"), &spec_example(), Seen::Tree)
            .expect("recorded anyway");
        let aside: Vec<PathBuf> = std::fs::read_dir(dir.path())
            .expect("read dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.to_string_lossy().contains(".corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1, "{aside:?}");
        assert_eq!(std::fs::read(&aside[0]).expect("read aside"), garbage);
        let conn = open(&path, false, soon()).expect("the new database");
        let runs: i64 = conn
            .query_row("SELECT count(*) FROM runs", [], |row| row.get(0))
            .expect("count");
        assert_eq!(runs, 1);
    }

    #[test]
    fn an_unwritable_place_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().expect("tempdir");
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "x").expect("write");
        // The database's directory would have to be inside a regular file.
        let err = record_at(
            &blocker.join("h.sqlite3"),
            &invocation("edit"),
            &spec_example(),
            Seen::Tree,
        )
        .expect_err("cannot be created");
        assert!(matches!(err, HistoryError::Unavailable(_)), "{err}");
    }

    #[test]
    fn new_errors_count_only_new_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("h.sqlite3");
        // The example has 6 new errors and an old warning; add an old error and a new
        // warning, which must not count.
        let mut report = spec_example();
        report.files.push(file(
            "/abs/root/d.py",
            Role::Dependent,
            vec![
                reported(diag(DiagnosticSeverity::ERROR, 0, 0, "old"), false),
                reported(diag(DiagnosticSeverity::WARNING, 1, 0, "w"), true),
            ],
        ));
        record_at(&path, &invocation("edit"), &report, Seen::Tree).expect("record");
        let conn = open(&path, false, soon()).expect("open");
        let run = conn
            .query_row(&format!("SELECT {RUN_COLUMNS} FROM runs"), [], run_from_row)
            .expect("the run");
        assert_eq!(run.new_errors, 6);
    }

    /// The newest run of the database at `path`, as `history --last` reads it.
    fn last(path: &Path) -> Option<Run> {
        let conn = open(path, false, soon()).expect("open");
        conn.query_row(
            &format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC LIMIT 1"),
            [],
            run_from_row,
        )
        .optional()
        .expect("query")
    }

    #[test]
    fn a_started_run_fails_the_gate_until_its_outcome_is_recorded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("h.sqlite3");
        let (ws, inv) = (Path::new("/abs/root"), invocation("write"));
        // A clean run, then one that starts and is never completed (killed).
        let mut clean = spec_example();
        clean.files.clear();
        clean.outcome = Outcome::Clean;
        record_at(&path, &inv, &clean, Seen::Tree).expect("record");
        assert_eq!(last(&path).map(|r| r.gate()), Some(Outcome::Clean));
        let killed = begin_at(&path, ws, ws, &inv).expect("begin");
        let run = last(&path).expect("the started run");
        assert!(!run.completed && run.summary == PENDING_SUMMARY, "{run:?}");
        assert_eq!(run.gate(), Outcome::Incomplete);
        drop(killed);
        assert_eq!(last(&path).map(|r| r.gate()), Some(Outcome::Incomplete));

        // Completed: its outcome decides.
        begin_at(&path, ws, ws, &inv)
            .expect("begin")
            .complete(&inv, &spec_example(), Seen::Tree);
        let run = last(&path).expect("completed");
        assert!(run.completed);
        assert_eq!(run.gate(), Outcome::NewDiagnostics);
        // Partly written: 4, whatever it found.
        begin_at(&path, ws, ws, &inv)
            .expect("begin")
            .partly_written(&inv, "a.py: cannot replace: disk full; changed: b.py");
        let run = last(&path).expect("partly written");
        assert_eq!(
            (run.gate(), run.summary.as_str()),
            (
                Outcome::PartlyWritten,
                "a.py: cannot replace: disk full; changed: b.py"
            )
        );
        // Discarded (nothing was written): as if it never started.
        let id = run.id;
        begin_at(&path, ws, ws, &inv).expect("begin").discard();
        assert_eq!(last(&path).map(|r| r.id), Some(id));
    }

    #[test]
    fn a_run_is_refused_when_an_existing_database_cannot_record_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("h.sqlite3");
        let ws = Path::new("/abs/root");
        record_at(&path, &invocation("write"), &spec_example(), Seen::Tree).expect("record");
        let conn = Connection::open(&path).expect("open");
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .expect("a newer schema");
        let err = begin_at(&path, ws, ws, &invocation("write"))
            .err()
            .expect("refused: the gate would read the older run");
        assert!(matches!(err, HistoryError::Newer { .. }), "{err}");

        // No database, and none can be made: not recorded, but not refused either,
        // since the gate has nothing to pass on.
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "x").expect("write");
        let pending =
            begin_at(&blocker.join("h.sqlite3"), ws, ws, &invocation("write")).expect("goes ahead");
        assert!(pending.row.is_none());
    }

    #[test]
    fn long_arguments_are_clipped() {
        let long = "x".repeat(MAX_ARG_CHARS + 10);
        let inv = Invocation::start("write", &[OsString::from("lspgate"), OsString::from(&long)]);
        assert_eq!(inv.args[0].chars().count(), MAX_ARG_CHARS + 1);
        assert!(inv.args[0].ends_with('…'));
    }
}
