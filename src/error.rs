//! The one error type of a command, and the exit status each kind means (docs/SPEC.md
//! section 4). Everything a user can cause is one of these; where it came from is in its
//! message, one line, which `lib::run` prints once.

use crate::exit::Outcome;

/// What can go wrong with a run once it is asked for, the same in this process and
/// across the daemon's socket (`daemon::protocol::Response::Failed`): classified
/// where it happens, each with the one-line message the CLI prints.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// Bad input (an unknown option, a malformed patch, a path outside the workspace,
    /// a config file that does not parse...): nothing was written. Exit 2.
    #[error("{0}")]
    BadInput(String),
    /// A write failed after changing some files and could not be undone: what changed
    /// and what did not. Exit 4.
    #[error("{0}")]
    PartlyWritten(String),
    /// The run was taken up and its outcome is unknown (the daemon stopped answering,
    /// or failed during the run): the edit may be applied. Exit 3.
    #[error("{0}")]
    Lost(String),
}

impl Failure {
    pub fn outcome(&self) -> Outcome {
        match self {
            Failure::BadInput(_) => Outcome::BadInput,
            Failure::PartlyWritten(_) => Outcome::PartlyWritten,
            Failure::Lost(_) => Outcome::Lost,
        }
    }
}

/// An edit that failed: partly written when some files had changed, else refused
/// before anything was written.
impl From<&crate::edit::EditError> for Failure {
    fn from(e: &crate::edit::EditError) -> Failure {
        if e.partly_written() {
            Failure::PartlyWritten(e.summary())
        } else {
            Failure::BadInput(e.to_string())
        }
    }
}

/// Why a command did not finish as asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Run(#[from] Failure),
    /// The run finished (an edit written and checked, or a check made, and recorded
    /// in the history) but its report could not be printed (a full disk behind
    /// stdout): never "nothing was written". Exit 1 when the run found new errors,
    /// else 3: the caller did not get the report that would let it go on.
    #[error("{message}")]
    NotPrinted { message: String, found_errors: bool },
    /// stdout was closed by the reader (`lspgate ... | head`): not a failure. Exit 0.
    #[error("broken pipe")]
    BrokenPipe,
}

impl Error {
    /// Bad input: nothing was written.
    pub fn bad_input(message: impl Into<String>) -> Error {
        Error::Run(Failure::BadInput(message.into()))
    }

    pub fn outcome(&self) -> Outcome {
        match self {
            Error::Run(failure) => failure.outcome(),
            Error::NotPrinted {
                found_errors: true, ..
            } => Outcome::NewDiagnostics,
            Error::NotPrinted { .. } => Outcome::Incomplete,
            Error::BrokenPipe => Outcome::Clean,
        }
    }
}

/// Whatever the layers below report with `anyhow` is bad input, with its whole chain
/// as the message; a closed stdout among the causes is the reader leaving.
impl From<anyhow::Error> for Error {
    fn from(e: anyhow::Error) -> Error {
        let broken_pipe = e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        });
        if broken_pipe {
            Error::BrokenPipe
        } else {
            Error::bad_input(format!("{e:#}"))
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::from(anyhow::Error::from(e))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
