//! `lspgate history`: past runs, and the gate (`--last`).

use std::path::Path;

use crate::history;
use crate::model::Format;
use crate::report;

/// `lspgate history`: list runs, show one, or gate on the last ([`history::gate`]: the
/// tree's outstanding breaks as well as the last run; 2 when nothing was recorded).
pub fn command(
    workspace: &Path,
    run_dir: &Path,
    run: Option<i64>,
    last: bool,
    limit: usize,
    format: Format,
) -> anyhow::Result<crate::exit::Outcome> {
    let view = report::history::View { run_dir, format };
    if !last && run.is_none() {
        let runs = history::list(workspace, limit).map_err(|e| anyhow::anyhow!("history: {e}"))?;
        report::history::print_list(&runs, workspace, &view)?;
        return Ok(crate::exit::Outcome::Clean);
    }
    let found = history::find(workspace, run)?;
    if !last {
        report::history::print_run(&found, None, &view)?;
        return Ok(crate::exit::Outcome::Clean);
    }
    let gate = history::gate(workspace, &found).map_err(|e| anyhow::anyhow!("history: {e}"))?;
    report::history::print_run(&found, Some(&gate), &view)?;
    Ok(gate.outcome)
}
