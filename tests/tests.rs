mod fake;
mod support;
