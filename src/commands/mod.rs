//! The commands: each takes the validated [`Invocation`] and does one job by calling
//! the layers below (the check, the daemon's client, the history, the doctor) and a
//! renderer of `report`. This is the one place that decides what a command prints.

pub mod cache;
pub mod daemon;
pub mod history;
pub mod mcp;
pub mod run;

use crate::error::Result;
use crate::exit::Outcome;
use crate::invocation::{Action, Invocation};
use crate::{daemon as daemon_client, doctor, report};

/// Do what `invocation` asks; returns how it ended.
pub fn dispatch(invocation: Invocation) -> Result<Outcome> {
    let Invocation {
        run_dir,
        workspace,
        trust_project,
        record,
        action,
    } = invocation;
    match action {
        Action::Report { request, args } => {
            let setting = run::RunSetting {
                workspace: &workspace,
                run_dir: &run_dir,
                trust_project,
                args: &args,
            };
            run::report_run(&setting, &record, request, args.quiet)
        }
        Action::Mcp { args } => Ok(mcp::serve(&mcp::Setup {
            workspace,
            run_dir,
            trust_project,
            args,
        })?),
        Action::History {
            run,
            last,
            limit,
            format,
        } => Ok(history::command(
            &workspace, &run_dir, run, last, limit, format,
        )?),
        Action::Daemon(action) => Ok(daemon::command(&action, &workspace)?),
        Action::Diagnostics { path, format } => {
            let query = daemon_client::protocol::CacheQuery {
                path,
                ..Default::default()
            };
            Ok(cache::cache_command(
                &workspace,
                daemon_client::client::Cache::Diagnostics,
                &query,
                |out, cached| {
                    let styles =
                        report::styles::Styles::for_choice(crate::model::ColorChoice::Auto);
                    match cached {
                        daemon_client::client::Cached::Diagnostics(files) => {
                            report::daemon::write_diagnostics(
                                out, &files, &run_dir, format, &styles,
                            )
                        }
                        daemon_client::client::Cached::Lines(_) => Ok(()),
                    }
                },
                format,
            )?)
        }
        Action::Ring {
            messages,
            limit,
            level,
            format,
        } => {
            let what = if messages {
                daemon_client::client::Cache::Messages
            } else {
                daemon_client::client::Cache::Logs
            };
            Ok(cache::ring_command(&workspace, what, limit, level, format)?)
        }
        Action::Servers { file, format } => {
            let doctor = doctor::gather(&workspace, &run_dir, trust_project, file.as_deref())
                .map_err(anyhow::Error::from)?;
            report::servers::print(&doctor, format)?;
            Ok(Outcome::Clean)
        }
    }
}
