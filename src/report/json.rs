//! json rendering of a [`super::Report`].
