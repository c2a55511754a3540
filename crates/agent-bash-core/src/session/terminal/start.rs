//! What a terminal starts with: its size, the plan its program is spawned from (the
//! session's bash and environment, a terminal's `TERM`), and the capture of its scrollback.

use std::num::NonZeroU16;
use std::path::Path;
use std::time::Duration;

use crate::error::Error;
use crate::output::{Capture, Stream};
use crate::plan::Plan;
use crate::session::Session;

/// What `Terminals::start` needs to know.
pub(super) struct Start<'a> {
    pub(super) command: &'a str,
    pub(super) cwd: &'a Path,
    /// No command was given: an interactive bash.
    pub(super) default_shell: bool,
    pub(super) rows: NonZeroU16,
    pub(super) cols: NonZeroU16,
    pub(super) max_age: Duration,
}

/// `what` (`rows`, `cols`) as asked for, or `default`, within `range`.
pub(super) fn size(
    what: &'static str,
    asked: Option<u64>,
    default: u16,
    range: (u16, u16),
) -> Result<NonZeroU16, Error> {
    let (min, max) = range;
    let value = asked.unwrap_or(u64::from(default));
    u16::try_from(value)
        .ok()
        .filter(|value| (min..=max).contains(value))
        .and_then(NonZeroU16::new)
        .ok_or(Error::TerminalSize {
            what,
            got: value,
            min,
            max,
        })
}

/// What a terminal starts: the session's bash running the command (or interactive), in
/// the session's environment without the non-interactive overrides (pagers, editors and
/// prompts work in a terminal), with a terminal's `TERM`. The same `Plan` as a call's, so
/// that the sandbox's transform applies to it alike.
///
/// # Errors
/// `Error::Sandbox` when the session's sandbox cannot confine it.
pub(super) fn plan(session: &Session, start: &Start<'_>) -> Result<Plan, Error> {
    let args: Vec<std::ffi::OsString> = if !start.default_shell {
        vec!["-c".into(), start.command.into()]
    } else if session.config.terminal.rc_files {
        vec!["-i".into()]
    } else {
        vec!["--norc".into(), "--noprofile".into(), "-i".into()]
    };
    let mut env: Vec<(String, String)> = vec![
        ("TERM".into(), "xterm-256color".into()),
        ("AGENT_BASH".into(), "1".into()),
    ];
    env.extend(session.config.env_set.iter().cloned());
    let mut env_remove = session.env_remove().to_vec();
    // The size is the terminal's (TIOCGWINSZ), not an inherited guess.
    env_remove.extend(["COLUMNS".into(), "LINES".into()]);
    // The session's sandbox, as for a call.
    let confined = crate::plan::confined(session.sandboxing((None, None))?, (None, None))?;
    Ok(Plan {
        program: session.bash().to_path_buf(),
        args,
        cwd: start.cwd.to_path_buf(),
        env_remove,
        env,
        script: None,
        limits: crate::plan::Limits {
            timeout: start.max_age,
            stop: session.stop_times(),
            io_drain: session.config.io_drain,
            background: true,
            detach_on_timeout: false,
            detach_leftovers: false,
            job_timeout: Some(start.max_age),
        },
        confined,
    })
}

/// The capture of terminal `id`'s scrollback for its answer `number`.
pub(super) fn scrollback(session: &Session, id: u64, number: u64) -> Capture {
    Capture::new(
        Stream::Stdout,
        session.config.budget,
        session.spill_dir.clone(),
        format!("terminal-{id}-{number:04}-scrollback"),
        session.config.spill_cap_bytes,
    )
    .named("scrollback")
    .redacting(&session.secrets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::terminal::{COLS, ROWS};

    #[test]
    fn sizes_are_checked() {
        assert_eq!(
            size("rows", None, 24, ROWS).map(NonZeroU16::get).ok(),
            Some(24)
        );
        assert_eq!(
            size("rows", Some(50), 24, ROWS).map(NonZeroU16::get).ok(),
            Some(50)
        );
        let err = size("cols", Some(5), 80, COLS).unwrap_err();
        assert_eq!(err.to_string(), "cols must be between 20 and 300 (got 5)");
        assert!(size("rows", Some(1 << 40), 24, ROWS).is_err());
    }
}
