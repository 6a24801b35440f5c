//! `lspgate daemon start|stop|status|restart`.

use std::path::Path;

use crate::cli::DaemonAction;
use crate::daemon::client;
use crate::daemon::paths::Paths;
use crate::exit::Outcome;
use crate::model::Format;
use crate::report::daemon::{print, write_status, write_statuses};

/// `lspgate daemon ACTION` for `workspace`; returns the exit status.
pub fn command(action: &DaemonAction, workspace: &Path) -> anyhow::Result<Outcome> {
    let paths = Paths::for_workspace(workspace)
        .map_err(|e| anyhow::anyhow!("daemon runtime directory: {e}"))?;
    let say = |text: String| print(|out| writeln!(out, "{text}"));
    match action {
        DaemonAction::Status { all: true, format } => {
            let statuses = client::all_statuses(&paths.dir);
            match (format, statuses.is_empty()) {
                (Format::Text, true) => say("no daemon running".into())?,
                _ => print(|out| write_statuses(out, &statuses, *format))?,
            }
            Ok(if statuses.is_empty() {
                Outcome::Failed
            } else {
                Outcome::Clean
            })
        }
        DaemonAction::Status { all: false, format } => match client::status(&paths) {
            Some(status) => {
                match format {
                    Format::Json => say(serde_json::to_string(&status)?)?,
                    Format::Text => print(|out| write_status(out, &status))?,
                }
                Ok(Outcome::Clean)
            }
            None => {
                match format {
                    Format::Json => say("null".into())?,
                    Format::Text => say(format!("no daemon for {}", workspace.display()))?,
                }
                Ok(Outcome::Failed)
            }
        },
        DaemonAction::Stop => {
            say(client::stop(&paths)?)?;
            Ok(Outcome::Clean)
        }
        DaemonAction::Start => {
            say(client::start(&paths, workspace)?)?;
            Ok(Outcome::Clean)
        }
        DaemonAction::Restart => {
            client::stop(&paths)?;
            say(client::start(&paths, workspace)?)?;
            Ok(Outcome::Clean)
        }
    }
}
