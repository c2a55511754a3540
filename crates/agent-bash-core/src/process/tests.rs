//! The process driver with real bash: the stop machine alone, then the pump and `collect`
//! on deadlines, a TERM-ignoring tree, cancellation, and a group outliving its shell.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::process::Signal;
use tokio_util::sync::CancellationToken;

use super::group::GroupGuard;
use super::pump::{Event, Pump};
use super::stop::{KILL_SETTLE, Stop};
use crate::collect::{self, Captured, Hooks, Rest};
use crate::config::{Budget, Config};
use crate::output::spill::SpillDir;
use crate::output::{Capture, Stream};
use crate::plan::StopTimes;
use crate::plan::{self, Environment, Limits};
use crate::request::Call;

const TIMES: StopTimes = StopTimes {
    grace: Duration::from_millis(300),
};

#[test]
fn the_stop_machine_kills_after_the_grace_and_gives_up_after_the_settle() {
    let nobody = GroupGuard::new(None);
    let mut stop = Stop::NotAsked;
    assert!(!stop.begun() && !stop.active());
    stop.begin(&nobody, Signal::TERM, TIMES);
    let Stop::Signalled { kill_at } = stop else {
        panic!("{stop:?}");
    };
    assert!(stop.begun() && stop.active());
    // Someone is alive before the grace is over: nothing changes.
    if Instant::now() < kill_at {
        assert!(!stop.check(&nobody, true));
        assert!(matches!(stop, Stop::Signalled { .. }), "{stop:?}");
    }
    // A second begin does not restart the grace.
    stop.begin(&nobody, Signal::INT, TIMES);
    assert_eq!(stop, Stop::Signalled { kill_at });
    // The group emptied: the stop is over at once.
    assert!(stop.check(&nobody, false));
    assert_eq!(stop, Stop::Over);
    assert!(!stop.check(&nobody, false), "an ended stop ends once");

    // Still alive at the end of the grace: SIGKILL, then given up after the settle.
    let mut stop = Stop::Signalled {
        kill_at: Instant::now(),
    };
    assert!(!stop.check(&nobody, true));
    let Stop::Killing { give_up } = stop else {
        panic!("{stop:?}");
    };
    assert!(give_up > Instant::now() + KILL_SETTLE / 2);
    let mut stuck = Stop::Killing {
        give_up: Instant::now(),
    };
    assert!(
        stuck.check(&nobody, true),
        "a stop ends even if the group does not"
    );
    assert!(TIMES.bound() >= TIMES.grace + KILL_SETTLE);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// What a test needs to start `command`: its plan's limits and a pump over it.
struct Started {
    runtime: tokio::runtime::Runtime,
    limits: Limits,
    pump: Pump,
    stdout: Capture,
    stderr: Capture,
    _dir: tempfile::TempDir,
}

fn start(command: &str, timeout: Duration, jobs_free: usize) -> Started {
    let runtime = runtime();
    let entered = runtime.enter();
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut config = Config {
        kill_grace: TIMES.grace,
        io_drain: Duration::from_millis(200),
        ..Config::default()
    };
    config.budget = Budget::default();
    let spill_dir = SpillDir::new(dir.path().to_path_buf());
    let call = Call {
        command: command.into(),
        cwd: dir.path().to_path_buf(),
        timeout,
        timeout_clamped_from: None,
        timeout_named: true,
        background: false,
        description: None,
        sandbox: (None, None),
    };
    let bash = std::path::PathBuf::from("/bin/bash");
    let environment = Environment {
        bash: &bash,
        env: &[],
        env_remove: &[],
        config: &config,
        spill_dir: &spill_dir,
        jobs_free,
        sandboxing: None,
    };
    let plan = plan::plan(&call, 1, &environment).expect("a plan");
    let limits = plan.limits;
    let pump = Pump::new(
        runtime
            .block_on(super::spawn::start(plan))
            .expect("bash starts"),
        limits.stop,
        limits.io_drain,
    );
    let capture = |stream| {
        Capture::new(
            stream,
            config.budget,
            spill_dir.clone(),
            format!("t-{stream}"),
            1 << 20,
        )
    };
    drop(entered);
    Started {
        runtime,
        limits,
        pump,
        stdout: capture(Stream::Stdout),
        stderr: capture(Stream::Stderr),
        _dir: dir,
    }
}

fn collect(started: Started, cancel: &CancellationToken) -> (Captured, Duration, Limits) {
    let Started {
        runtime,
        limits,
        pump,
        stdout,
        stderr,
        _dir,
    } = started;
    let began = Instant::now();
    let hooks = Hooks {
        cancel,
        progress: None,
    };
    let captured = runtime.block_on(collect::collect(pump, &limits, hooks, stdout, stderr));
    (captured, began.elapsed(), limits)
}

fn signal(captured: &Captured) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    captured.status.and_then(|status| status.signal())
}

#[test]
fn a_deadline_stops_the_tree_with_term() {
    let (captured, took, limits) = collect(
        start("echo begun; sleep 30", Duration::from_secs(1), 0),
        &CancellationToken::new(),
    );
    assert!(captured.timed_out && !captured.cancelled);
    assert_eq!(signal(&captured), Some(libc::SIGTERM));
    assert!(took >= limits.timeout, "{took:?}");
    assert!(took < limits.bound(), "{took:?} over {:?}", limits.bound());
    assert!(captured.left_running.is_empty());
    assert!(matches!(captured.rest, Rest::Gone));
}

#[test]
fn a_tree_ignoring_term_is_killed_after_the_grace() {
    // An ignored signal stays ignored across exec: `sleep` ignores TERM too.
    let (captured, took, limits) = collect(
        start("trap '' TERM; sleep 30", Duration::from_secs(1), 0),
        &CancellationToken::new(),
    );
    assert!(captured.timed_out);
    assert_eq!(signal(&captured), Some(libc::SIGKILL));
    assert!(took >= limits.timeout + TIMES.grace, "{took:?}");
    assert!(took < limits.bound(), "{took:?} over {:?}", limits.bound());
}

#[test]
fn cancellation_stops_the_tree_and_keeps_what_was_printed() {
    let cancel = CancellationToken::new();
    cancel.cancel();
    let (captured, took, limits) = collect(
        start("echo one; sleep 30", Duration::from_secs(60), 0),
        &cancel,
    );
    assert!(captured.cancelled && !captured.timed_out);
    assert_eq!(signal(&captured), Some(libc::SIGTERM));
    assert!(took < TIMES.bound() + limits.io_drain, "{took:?}");
    // Cancelled at once: the shell may not have printed yet, but what it printed is kept.
    assert!(
        matches!(captured.stdout.raw_bytes(), 0 | 4),
        "{}",
        captured.stdout.raw_bytes()
    );
}

#[test]
fn a_group_outliving_its_shell_is_listed_then_handed_over_or_kept() {
    // No job place: the processes are listed and kept under the guard.
    let (captured, took, limits) = collect(
        start("sleep 30 & echo started", Duration::from_secs(60), 0),
        &CancellationToken::new(),
    );
    assert_eq!(captured.status.and_then(|status| status.code()), Some(0));
    assert!(took >= limits.io_drain && took < limits.timeout, "{took:?}");
    let sleeper = captured.left_running.first().map(|process| process.pid);
    assert!(
        captured
            .left_running
            .iter()
            .any(|process| process.command.contains("sleep 30")),
        "{:?}",
        captured.left_running
    );
    let Rest::Leftovers(guard) = captured.rest else {
        panic!("not kept: {:?}", captured.rest);
    };
    assert!(guard.alive());
    // The last owner lets go: the group is killed.
    drop(guard);
    let gone = (0..250).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        sleeper.is_none_or(|pid| !alive(pid))
    });
    assert!(gone, "the leftover outlived its guard");

    // With a job place, the same processes are handed over.
    let (captured, _, _) = collect(
        start("sleep 30 & echo started", Duration::from_secs(60), 1),
        &CancellationToken::new(),
    );
    let Rest::Detached(detached) = captured.rest else {
        panic!("not handed over: {:?}", captured.rest);
    };
    assert_eq!(detached.origin, crate::jobs::JobOrigin::Leftover);
    assert!(detached.pump.exited());
}

/// True if `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().to_string())
        })
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

#[test]
fn a_watched_pump_follows_leftovers_to_their_end() {
    let Started {
        runtime,
        mut pump,
        mut stdout,
        mut stderr,
        _dir,
        ..
    } = start(
        "(sleep 0.3; echo late) & echo early",
        Duration::from_secs(60),
        0,
    );
    pump.watch_group();
    let events = runtime.block_on(async {
        let mut events = Vec::new();
        while !pump.finished() {
            events.push(pump.next(&mut stdout, &mut stderr).await);
        }
        events
    });
    let position = |wanted: Event| events.iter().position(|event| *event == wanted);
    let exited = position(Event::Exited).expect("the shell's exit");
    let closed = position(Event::Closed(Stream::Stdout)).expect("stdout's end");
    assert!(exited < closed, "{events:?}");
    // The group is seen empty once the subshell is gone, which can be before its last
    // line is read from the pipe (both are ready at once under load): any order after the
    // shell's exit holds.
    let empty = position(Event::GroupEmpty).unwrap_or_else(|| panic!("no GroupEmpty: {events:?}"));
    assert!(exited < empty, "{events:?}");
    assert!(pump.status().is_some());
    stdout.close();
    assert_eq!(stdout.lines_so_far(), 2, "early and late: {events:?}");
}

#[test]
fn a_stopped_pump_reports_the_end_of_the_stop() {
    let Started {
        runtime,
        mut pump,
        mut stdout,
        mut stderr,
        _dir,
        ..
    } = start(
        "trap '' TERM; sleep 30 & echo ready; sleep 30",
        Duration::from_secs(60),
        0,
    );
    let guard: Arc<GroupGuard> = pump.guard().clone();
    let mut began = Instant::now();
    let last = runtime.block_on(async {
        // Stopped once the shell said it ignores TERM.
        while pump.next(&mut stdout, &mut stderr).await != Event::Output(Stream::Stdout) {}
        pump.stop(Signal::TERM);
        began = Instant::now();
        loop {
            let event = pump.next(&mut stdout, &mut stderr).await;
            if event == Event::Stopped {
                return event;
            }
        }
    });
    assert_eq!(last, Event::Stopped);
    assert!(
        began.elapsed() >= TIMES.grace
            && began.elapsed() < TIMES.bound() + Duration::from_millis(200)
    );
    assert!(pump.pipes_closed());
    assert!(!guard.alive(), "the tree survived its stop");
}
