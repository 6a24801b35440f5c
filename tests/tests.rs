mod cli;
mod fake;
mod generated;
mod real;
mod support;
