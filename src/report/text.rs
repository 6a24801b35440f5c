//! text rendering of a [`super::Report`].
