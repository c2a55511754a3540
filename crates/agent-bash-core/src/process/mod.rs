//! Processes: the one place a command's process tree is created, driven and stopped.
//!
//! - `spawn`: `Plan` → `Running` (posix_spawn in a new session, stdin `/dev/null`, large
//!   pipes) and the `Shell`, waited for through a pidfd.
//! - `group`: the guard that owns a command's process group and kills it when dropped.
//! - `pump`: one event loop over both pipes, the shell's exit and the group, used by calls
//!   (`collect`) and background jobs (`jobs::drive`) alike.
//! - `stop`: the stop machine (signal → grace → SIGKILL → bounded wait) and its margins.

pub(crate) mod group;
pub(crate) mod pump;
pub(crate) mod spawn;
pub(crate) mod stop;

#[cfg(test)]
mod tests;
