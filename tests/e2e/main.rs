//! End-to-end tests: the real binary, real bash, real processes, and the `fx` fixture.
//!
//! One test binary; one file per behaviour. Every process-spawning test has a deadline
//! (`support::DEADLINE`), so a regression that hangs fails instead of stalling CI.

mod cli;
mod config;
mod errors;
mod jobs;
mod library;
mod output;
mod policy;
mod processes;
mod schema;
mod secrets;
mod support;
