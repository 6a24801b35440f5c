//! styles rendering of a [`super::Report`].
