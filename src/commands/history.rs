//! `lspgate history`: past runs, and the gate (`--last`).

use std::path::Path;

use crate::history;
use crate::model::Format;
use crate::report;

/// `lspgate history`: list runs, show one, or gate on the last ([`gate`]; 2 when
/// nothing was recorded).
pub fn command(
    workspace: &Path,
    run_dir: &Path,
    run: Option<i64>,
    last: bool,
    limit: usize,
    format: Format,
) -> anyhow::Result<i32> {
    let view = report::history::View { run_dir, format };
    if !last && run.is_none() {
        let runs = history::list(workspace, limit).map_err(|e| anyhow::anyhow!("history: {e}"))?;
        report::history::print_list(&runs, workspace, &view)?;
        return Ok(crate::exit::OK);
    }
    let found = history::find(workspace, run)?;
    report::history::print_run(&found, &view)?;
    Ok(if last { found.gate() } else { crate::exit::OK })
}
