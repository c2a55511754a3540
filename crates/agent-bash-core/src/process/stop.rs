//! The stop machine: a first signal (SIGTERM unless asked otherwise), the grace, SIGKILL,
//! then a bounded wait for the group to be gone. Calls (timeouts, cancellation), jobs
//! (`bash_kill`, a job's own timeout, the session's end) and hand-overs that fail all stop
//! a tree this way; `Pump` drives it, checking the group every `GROUP_POLL`.

use std::time::{Duration, Instant};

use rustix::process::Signal;

use super::group::GroupGuard;
use crate::plan::StopTimes;

/// How often a group being stopped is checked for survivors.
pub(crate) const GROUP_POLL: Duration = Duration::from_millis(20);

/// How long SIGKILL is given to empty a group before the stop gives up and reports who is
/// left. SIGKILL is delivered asynchronously, and a process in uninterruptible sleep (a
/// hung NFS read) dies only when it wakes; it is re-sent at every check meanwhile.
pub(crate) const KILL_SETTLE: Duration = Duration::from_secs(1);

/// The times of a stop are the plan's (it sits below this stage); how long a stop with them
/// takes is the stop machine's to say.
impl StopTimes {
    /// The longest a stop takes from its first signal to its end, whatever the tree does:
    /// the grace, then SIGKILL's settling, and one check's lateness.
    pub(crate) fn bound(self) -> Duration {
        self.grace + KILL_SETTLE + GROUP_POLL
    }
}

/// Where a stop is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Nothing asked the tree to stop.
    NotAsked,
    /// The first signal was sent; SIGKILL follows at `kill_at` unless the group empties.
    Signalled { kill_at: Instant },
    /// SIGKILL was sent; it is sent again at each check until the group is gone or
    /// `give_up`.
    Killing { give_up: Instant },
    /// The group emptied, or SIGKILL could not empty it in time (the survivors are
    /// reported by whoever looks at the group next).
    Over,
}

impl Stop {
    /// Sends `signal` to the group and starts the grace. A stop already begun goes on as
    /// it was.
    pub(crate) fn begin(&mut self, guard: &GroupGuard, signal: Signal, times: StopTimes) {
        if *self != Stop::NotAsked {
            return;
        }
        guard.signal(signal);
        *self = Stop::Signalled {
            kill_at: Instant::now() + times.grace,
        };
    }

    /// True once a stop was asked for (even if it is over).
    pub(crate) fn begun(self) -> bool {
        self != Stop::NotAsked
    }

    /// True while the group is being watched for the stop (signalled, or being killed).
    pub(crate) fn active(self) -> bool {
        matches!(self, Stop::Signalled { .. } | Stop::Killing { .. })
    }

    /// One check of the group (`alive`: whether anyone is left in it); sends SIGKILL when
    /// the grace is over. True when the stop has just ended.
    pub(crate) fn check(&mut self, guard: &GroupGuard, alive: bool) -> bool {
        let now = Instant::now();
        match *self {
            Stop::Signalled { kill_at } => {
                if !alive {
                    *self = Stop::Over;
                } else if now >= kill_at {
                    guard.signal(Signal::KILL);
                    *self = Stop::Killing {
                        give_up: now + KILL_SETTLE,
                    };
                }
            }
            Stop::Killing { give_up } => {
                if !alive || now >= give_up {
                    *self = Stop::Over;
                } else {
                    guard.signal(Signal::KILL);
                }
            }
            Stop::NotAsked | Stop::Over => return false,
        }
        *self == Stop::Over
    }
}

/// Stops the groups of `guards` together (processes a command left running, at the
/// session's end): `signal` to each, then SIGKILL to what is left after the grace. Returns
/// once every group is gone, or within `times.bound()`.
pub(crate) async fn stop_groups(guards: &[&GroupGuard], signal: Signal, times: StopTimes) {
    let mut stops: Vec<Stop> = guards
        .iter()
        .map(|guard| {
            let mut stop = Stop::NotAsked;
            stop.begin(guard, signal, times);
            stop
        })
        .collect();
    while stops.iter().any(|stop| stop.active()) {
        tokio::time::sleep(GROUP_POLL).await;
        for (stop, guard) in stops.iter_mut().zip(guards) {
            if stop.active() {
                stop.check(guard, guard.alive());
            }
        }
    }
}
