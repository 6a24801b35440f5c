mod cli;
mod daemon;
mod fake;
mod gate;
mod generated;
mod real;
mod reliability;
mod support;
