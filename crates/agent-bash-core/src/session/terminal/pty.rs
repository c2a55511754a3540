//! The pseudo-terminal: opened here, given to the program as its controlling terminal by
//! `process::spawn` (posix_spawn in a new session, the slave opened after setsid), and read
//! by one task per terminal into its `Screen` for as long as anything holds the slave open.
//!
//! The master stays with us (close-on-exec, non-blocking); the slave is opened only by the
//! child, so the terminal hangs up (reads give EIO) once every process that had it is gone.

use std::ffi::CString;
use std::io;
use std::num::NonZeroU16;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::pty::OpenptFlags;
use tokio::io::unix::AsyncFd;
use tokio::sync::watch;

use super::screen::Screen;
use crate::error::Error;
use crate::lock;
use crate::plan::Plan;
use crate::process::group::GroupGuard;
use crate::process::spawn::{self, Shell};
use crate::spawn_raw::Stdio;

/// Bytes asked for in one read of the master (Linux hands out at most a few KiB at a time).
const READ_BYTES: usize = 64 * 1024;

/// A program started in a new terminal.
pub(crate) struct Started {
    pub(crate) shell: Shell,
    pub(crate) master: Arc<AsyncFd<OwnedFd>>,
    /// The slave's path (`/dev/pts/N`), as the program's descriptors name it in /proc.
    pub(crate) tty: PathBuf,
    pub(crate) guard: Arc<GroupGuard>,
}

/// Opens a terminal of `rows` × `cols` and starts `plan` in it, as the leader of a new
/// session whose controlling terminal it is.
///
/// # Errors
/// `Error::Terminal` when no pseudo-terminal can be had, `Error::Spawn` when the program
/// cannot be started.
pub(crate) fn start(plan: &Plan, rows: NonZeroU16, cols: NonZeroU16) -> Result<Started, Error> {
    let terminal_error = |what: &str, err: io::Error| Error::Terminal {
        reason: format!("{what}: {err}"),
    };
    let master =
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)
            .map_err(|err| terminal_error("cannot open a pseudo-terminal", err.into()))?;
    rustix::pty::grantpt(&master)
        .and_then(|()| rustix::pty::unlockpt(&master))
        .map_err(|err| terminal_error("cannot unlock the pseudo-terminal", err.into()))?;
    let slave: CString = rustix::pty::ptsname(&master, Vec::new())
        .map_err(|err| terminal_error("cannot name the pseudo-terminal", err.into()))?;
    let size = rustix::termios::Winsize {
        ws_row: rows.get(),
        ws_col: cols.get(),
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    rustix::termios::tcsetwinsize(&master, size)
        .map_err(|err| terminal_error("cannot size the terminal", err.into()))?;
    rustix::io::ioctl_fionbio(&master, true)
        .map_err(|err| terminal_error("cannot make the terminal non-blocking", err.into()))?;
    let stdio = Stdio::Terminal { slave: &slave };
    let (shell, guard) = match &plan.confined {
        None => {
            let pid = spawn::posix_spawn(plan, &stdio).map_err(|source| Error::Spawn {
                argv0: plan.program.clone(),
                source,
            })?;
            (Shell::new(pid), GroupGuard::new(Some(pid)))
        }
        // The supervisor opens the terminal without taking it; the shell's process does.
        Some(confined) => spawn::supervised_blocking(plan, confined, &stdio)?,
    };
    let guard = Arc::new(guard);
    // SAFETY: the OwnedFd moves into the AsyncFd, which keeps it open until dropped.
    let master = unsafe { AsyncFd::register(master) }
        .map_err(|err| terminal_error("cannot watch the terminal", err.into()))?;
    Ok(Started {
        shell,
        master: Arc::new(master),
        tty: PathBuf::from(std::ffi::OsStr::from_bytes(slave.as_bytes())),
        guard,
    })
}

/// Writes all of `bytes` to the terminal, as typed.
///
/// # Errors
/// The write's I/O error (EIO once nothing has the terminal open).
pub(crate) async fn write(master: &AsyncFd<OwnedFd>, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        let mut ready = master.writable().await?;
        match ready.try_io(|fd| rustix::io::write(fd.get_ref(), bytes).map_err(io::Error::from)) {
            Ok(Ok(written)) => bytes = &bytes[written..],
            Ok(Err(err)) => return Err(err),
            Err(_would_block) => {}
        }
    }
    Ok(())
}

/// Reads what the program wrote; `Ok(0)` once the terminal hung up (EIO: no process has
/// it open any more).
async fn read(master: &AsyncFd<OwnedFd>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        let mut ready = master.readable().await?;
        match ready
            .try_io(|fd| rustix::io::read(fd.get_ref().as_fd(), &mut *buf).map_err(io::Error::from))
        {
            Ok(Err(err)) if err.raw_os_error() == Some(libc::EIO) => return Ok(0),
            Ok(result) => return result,
            Err(_would_block) => {}
        }
    }
}

/// What the terminal's task keeps up to date, shared with the calls that look at it.
#[derive(Debug)]
pub(crate) struct Live {
    pub(crate) inner: Mutex<Inner>,
    /// Bumped after every read, and when the program ends: wakes waiting calls.
    pub(crate) changed: watch::Sender<u64>,
}

/// The state under `Live`'s lock.
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) screen: Screen,
    /// The last output read or input written.
    pub(crate) last_activity: Instant,
    /// Reads so far.
    pub(crate) reads: u64,
    /// The program's status, once it exited.
    pub(crate) exit: Option<ExitStatus>,
    /// The program exited and what it wrote before has been read (the terminal hung up,
    /// or the drain after its exit passed).
    pub(crate) ended: bool,
}

impl Live {
    pub(crate) fn new(screen: Screen) -> Live {
        Live {
            inner: Mutex::new(Inner {
                screen,
                last_activity: Instant::now(),
                reads: 0,
                exit: None,
                ended: false,
            }),
            changed: watch::Sender::new(0),
        }
    }

    /// Feeds what the program wrote; returns what the terminal answers it (queries).
    fn output(&self, bytes: &[u8]) -> Vec<u8> {
        let (reads, replies) = {
            let mut inner = lock(&self.inner);
            inner.screen.feed(bytes);
            inner.last_activity = Instant::now();
            inner.reads += 1;
            (inner.reads, inner.screen.take_replies())
        };
        self.changed.send_replace(reads);
        replies
    }

    fn update(&self, change: impl FnOnce(&mut Inner)) {
        change(&mut lock(&self.inner));
        self.changed.send_modify(|count| *count += 1);
    }
}

/// The terminal's task: reads the master into the screen until the terminal hangs up, and
/// records the program's exit. The program has ended once it exited and the terminal hung
/// up, or `drain` after its exit while others (a background process) still hold it.
pub(crate) async fn drive(
    master: Arc<AsyncFd<OwnedFd>>,
    mut shell: Shell,
    live: Arc<Live>,
    drain: Duration,
) {
    let mut buf = vec![0u8; READ_BYTES];
    let mut drained_at: Option<tokio::time::Instant> = None;
    let mut hung_up = false;
    while !hung_up {
        let drain_over = async {
            match drained_at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            read = read(&master, &mut buf) => match read {
                Ok(n) if n > 0 => {
                    let replies = live.output(&buf[..n]);
                    // A program that asked waits for the answer; one that cannot take it
                    // (gone) does not need it.
                    if !replies.is_empty() {
                        let _ = write(&master, &replies).await;
                    }
                }
                _ => hung_up = true,
            },
            status = shell.wait(), if drained_at.is_none() && !lock(&live.inner).ended => {
                let status = status.ok();
                live.update(|inner| inner.exit = status);
                drained_at = Some(tokio::time::Instant::now() + drain);
            }
            () = drain_over => {
                drained_at = None;
                live.update(|inner| inner.ended = true);
            }
        }
    }
    if lock(&live.inner).exit.is_none() {
        let status = shell.wait().await.ok();
        live.update(|inner| inner.exit = status);
    }
    live.update(|inner| inner.ended = true);
}
