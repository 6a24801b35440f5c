//! Exit statuses: the contract with scripts (docs/SPEC.md section 4). How a command
//! ended is an [`Outcome`] everywhere; [`status`] alone turns one into the number, and
//! [`outcome_of`] reads a stored number back (the history keeps the number).

/// Done; no new diagnostic at or above `--fail-on`.
const OK: i32 = 0;
/// Done; new diagnostics at or above `--fail-on`.
const NEW_DIAGNOSTICS: i32 = 1;
/// Bad input; nothing was written.
const BAD_INPUT: i32 = 2;
/// Nothing new found, but the check is incomplete.
const INCOMPLETE: i32 = 3;
/// The edit was partly written: a write failed after some files had changed. Never for
/// bad input, which is refused before anything is written.
const PARTIAL: i32 = 4;
/// Something other than a check failed: the daemon's own process, or `daemon status`
/// finding none.
const FAILED: i32 = 1;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Done: a complete check found nothing new at or above `--fail-on`, or a
    /// command other than a check did what it was asked.
    Clean,
    /// Checked: new diagnostics at or above `--fail-on`.
    NewDiagnostics,
    /// Nothing new found, but the check is incomplete.
    Incomplete,
    /// Bad input: nothing was written.
    BadInput,
    /// The edit was partly written.
    PartlyWritten,
    /// The run was taken up and its outcome is unknown (the edit may be applied).
    Lost,
    /// Not a check: the daemon's process failed, or `daemon status` found none.
    Failed,
}

/// The exit status of `outcome`: the only place the numbers are decided.
pub fn status(outcome: Outcome) -> i32 {
    match outcome {
        Outcome::Clean => OK,
        Outcome::NewDiagnostics => NEW_DIAGNOSTICS,
        Outcome::Incomplete | Outcome::Lost => INCOMPLETE,
        Outcome::BadInput => BAD_INPUT,
        Outcome::PartlyWritten => PARTIAL,
        Outcome::Failed => FAILED,
    }
}

/// The outcome a run's stored exit status stands for (a lost run reads back as
/// incomplete, which it also is); `None` for a number no run exits with.
pub fn outcome_of(status: i32) -> Option<Outcome> {
    match status {
        OK => Some(Outcome::Clean),
        NEW_DIAGNOSTICS => Some(Outcome::NewDiagnostics),
        BAD_INPUT => Some(Outcome::BadInput),
        INCOMPLETE => Some(Outcome::Incomplete),
        PARTIAL => Some(Outcome::PartlyWritten),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contract() {
        let table = [
            (Outcome::Clean, 0),
            (Outcome::NewDiagnostics, 1),
            (Outcome::BadInput, 2),
            (Outcome::Incomplete, 3),
            (Outcome::Lost, 3),
            (Outcome::PartlyWritten, 4),
            (Outcome::Failed, 1),
        ];
        for (outcome, code) in table {
            assert_eq!(status(outcome), code, "{outcome:?}");
        }
    }

    #[test]
    fn stored_statuses_read_back() {
        for outcome in [
            Outcome::Clean,
            Outcome::NewDiagnostics,
            Outcome::BadInput,
            Outcome::Incomplete,
            Outcome::PartlyWritten,
        ] {
            assert_eq!(outcome_of(status(outcome)), Some(outcome));
        }
        assert_eq!(outcome_of(status(Outcome::Lost)), Some(Outcome::Incomplete));
        assert_eq!(outcome_of(5), None);
        assert_eq!(outcome_of(-1), None);
    }
}
