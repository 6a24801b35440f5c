mod fake;
mod real;
mod support;
