//! `lspgate daemon start|stop|status|restart`.

use std::path::Path;

use crate::cli::DaemonAction;
use crate::daemon::client;
use crate::daemon::paths::Paths;
use crate::model::Format;
use crate::report::daemon::{print, write_status, write_statuses};

/// `lspgate daemon ACTION` for `workspace`; returns the exit status.
pub fn command(action: &DaemonAction, workspace: &Path) -> anyhow::Result<i32> {
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
                1
            } else {
                crate::exit::OK
            })
        }
        DaemonAction::Status { all: false, format } => match client::status(&paths) {
            Some(status) => {
                match format {
                    Format::Json => say(serde_json::to_string(&status)?)?,
                    Format::Text => print(|out| write_status(out, &status))?,
                }
                Ok(crate::exit::OK)
            }
            None => {
                match format {
                    Format::Json => say("null".into())?,
                    Format::Text => say(format!("no daemon for {}", workspace.display()))?,
                }
                Ok(1)
            }
        },
        DaemonAction::Stop => {
            say(client::stop(&paths)?)?;
            Ok(crate::exit::OK)
        }
        DaemonAction::Start => {
            say(client::start(&paths, workspace)?)?;
            Ok(crate::exit::OK)
        }
        DaemonAction::Restart => {
            client::stop(&paths)?;
            say(client::start(&paths, workspace)?)?;
            Ok(crate::exit::OK)
        }
    }
}
