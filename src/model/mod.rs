//! The data every layer shares, and nothing that acts: a run's options, what it
//! reports, and what an edit did to a file. The bottom of the module graph: it depends
//! on no other module of lspgate (but `exit::Outcome`).

#[cfg(test)]
pub(crate) mod fixtures;
pub(crate) mod incomplete;
pub mod options;
pub(crate) mod progress;
pub mod report;
pub(crate) mod request;

pub use incomplete::{Note, Phase, Reason, RunReason, ServerReason};
pub use options::{ColorChoice, FailOn, Format, LogLevel, Options, ReportArgs, Severity};
pub use report::{
    Applied, BeforeView, Counts, FileReport, Identity, Level, Related, Report, Reported, Role,
    ServerReport, ServerStatus, effective_severity, incomplete_reasons, keep_severity, listed,
    outcome, plural, same_problem, summary_line, tag_from_name, tag_name,
};
pub use request::Reporting;

/// What an edit does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Created,
    Modified,
    Deleted,
    Renamed,
}
