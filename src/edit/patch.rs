//! Unified diffs (git and plain) parsed and applied in memory with `diffy`.
use std::path::Path;

use super::{EditError, EditPlan};

/// Parse `patch` and apply it in memory against the files under `base` (the run
/// directory, where the patch's paths resolve after stripping `strip` components).
pub fn plan_patch(
    _workspace: &Path,
    _base: &Path,
    _patch: &[u8],
    _strip: usize,
) -> Result<EditPlan, EditError> {
    Err(EditError::Other("patch: not implemented yet".into()))
}
