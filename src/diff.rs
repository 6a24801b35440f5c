//! Before and after: which diagnostics an edit introduced, which it fixed.
