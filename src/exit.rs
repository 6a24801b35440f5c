//! Exit statuses: the contract with scripts (docs/SPEC.md section 4).

/// Done; no new diagnostic at or above `--fail-on`.
pub const OK: i32 = 0;
/// Done; new diagnostics at or above `--fail-on`.
pub const NEW_DIAGNOSTICS: i32 = 1;
/// Bad input; nothing was written.
pub const BAD_INPUT: i32 = 2;
/// Nothing new found, but the check is incomplete.
pub const INCOMPLETE: i32 = 3;
/// The edit was partly written: a write failed after some files had changed. Never for
/// bad input, which is refused before anything is written.
pub const PARTIAL: i32 = 4;
