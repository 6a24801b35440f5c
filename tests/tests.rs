mod cli;
mod daemon;
mod fake;
mod generated;
mod real;
mod support;
