//! The launcher: one small process per engine that forks the supervisor of every
//! supervised call, so that no call pays for executing this program again.
//!
//! It is this program, single-threaded, executed once (`PROGRAM __agent-bash-supervise
//! --launcher`, its socket at descriptor 3): as the binary starts ([`start_launcher`]), or
//! when a library session first needs it. It also does what is done once, not per call:
//! the probe, the pids cgroup of the session's confined processes (the launcher joins one
//! and every supervisor it forks is born in it), the network namespace of the calls
//! without a network (an empty one, shared: creating one per call took 0.5 ms), and the
//! seccomp filters, compiled once.
//!
//! The engine talks to it over a Unix stream socket. A request is a kind byte and a length
//! (4 bytes, little-endian), with descriptors attached, then that many bytes:
//!
//! - `Q`, the probe, with the warm-up after it (`Warm`, JSON): the answer is a length and
//!   the probe's JSON.
//! - `L`, a launch (`Launch`): descriptors report, control, and stdout and stderr unless
//!   the call has a terminal. Nothing is answered on the socket: the supervisor reports on
//!   the report pipe, and the launcher writes `E` there if it cannot fork one.
//!
//! The launcher ends when the engine's end of the socket closes (the engine exited or was
//! killed); the supervisors it forked go on until their own control pipes close.

use std::ffi::{CString, OsString};
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};
use serde::{Deserialize, Serialize};

use super::decide::Confinement;
use super::kept::Kept;
use super::probe::{Probe, probe_keeping_network};
use super::supervisor::{self, Cgroup, FAILED, SUPERVISE};
use super::{ResourceLimits, SandboxConfig, confine};
use crate::error::Error;
use crate::lock;
use crate::procs;

/// The argument after `SUPERVISE` that makes this program a launcher.
pub(crate) const LAUNCHER_ARG: &str = "--launcher";
/// The launcher's socket, in an executed launcher.
const SOCKET_FD: i32 = 3;
const PROBE: u8 = b'Q';
const LAUNCH: u8 = b'L';
/// Most descriptors a request carries.
const MAX_FDS: usize = 4;
/// How long an ending launcher waits for its supervisors that are ending too, before it
/// removes its cgroup.
const LEAVING_WAIT_MS: u64 = 100;

/// What the launcher prepares after the probe, before the first call needs it.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Warm {
    /// The pids limit of the cgroup to join (0: none).
    processes: u64,
}

impl Warm {
    fn of(config: &SandboxConfig) -> Warm {
        Warm {
            processes: config.limits.processes,
        }
    }
}

// ---- The engine's side ----

/// The engine's hold on its launcher: one per process, shared by every session.
pub(crate) struct Launcher {
    channel: Mutex<Option<Channel>>,
    /// The program to execute when no launcher was started or the last one died.
    executable: Mutex<Option<PathBuf>>,
    probe: OnceLock<Probe>,
}

impl std::fmt::Debug for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Launcher")
    }
}

/// A running launcher: our end of its socket.
struct Channel {
    socket: OwnedFd,
    /// Our child, reaped once it is replaced.
    pid: i32,
    /// A probe was asked for (at the start) and its answer not read yet.
    probe_asked: bool,
}

static LAUNCHER: Launcher = Launcher {
    channel: Mutex::new(None),
    executable: Mutex::new(None),
    probe: OnceLock::new(),
};

/// Starts the launcher of supervised calls now, executing `config.supervisor`, and has it
/// probe and prepare for the sandbox the settings ask for while the caller goes on (the
/// binary does this as it starts, so that the first confined call does not wait for it).
/// Without this call, the first session that needs the launcher starts it.
///
/// The launcher is executed, not forked, even from a single-threaded program: a fork of
/// the CLI shared its pages with it, and each page either of them wrote next was copied
/// first (copy-on-write); the CLI's own set-up ran slower for it, and its first confined
/// call measured 0.1-0.2 ms later than with an executed launcher.
///
/// # Errors
/// When there is no program to execute, or it cannot be.
pub fn start_launcher(config: &crate::config::Config) -> io::Result<()> {
    let Some(program) = config.supervisor.as_deref() else {
        return Err(io::Error::other(
            "no supervisor executable (`Config::supervisor`)",
        ));
    };
    let mut channel = Channel::execute(program)?;
    if super::decide::confines(&config.sandbox, (None, None)) {
        channel.ask_probe(Warm::of(&config.sandbox))?;
    }
    if let Some(program) = &config.supervisor {
        lock(&LAUNCHER.executable).get_or_insert_with(|| program.clone());
    }
    if let Some(old) = lock(&LAUNCHER.channel).replace(channel) {
        old.reap();
    }
    Ok(())
}

/// Stops the launcher: closes its socket and waits for it to exit. It removes its own
/// cgroup as it goes (nothing is left in it once the supervisors it forked have ended:
/// they are not its to wait for, each ends with its tree).
pub fn stop_launcher() {
    let channel = lock(&LAUNCHER.channel).take();
    if let Some(channel) = channel {
        drop(channel.socket);
        // SAFETY: waitpid(2) on our own child, which exits when its socket closes.
        unsafe { libc::waitpid(channel.pid, std::ptr::null_mut(), 0) };
        // Where it could not leave its cgroup (v2), the cgroup is empty now.
        if let Some(dir) = LAUNCHER
            .probe
            .get()
            .and_then(|probe| probe.pids_cgroup.as_ref())
        {
            let _ = std::fs::remove_dir(dir.join(channel.pid.to_string()));
        }
    }
}

/// Lets the launcher go without waiting for it, for a program that exits next (the CLI):
/// its socket closes, and it exits on its own, its cgroup removed, a little later (a
/// thread reaps it meanwhile). Waiting for it cost the CLI 0.2 ms. Under cgroup v2 the
/// launcher cannot leave its cgroup to remove it, so this waits and removes it, as
/// `stop_launcher` does.
pub fn release_launcher() {
    let v2 = LAUNCHER
        .probe
        .get()
        .and_then(|probe| probe.pids_cgroup.as_ref())
        .is_some_and(|dir| !dir.join("tasks").exists());
    if v2 {
        return stop_launcher();
    }
    let channel = lock(&LAUNCHER.channel).take();
    if let Some(channel) = channel {
        channel.reap();
    }
}

fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

impl Launcher {
    /// The launcher of this process, after noting `executable` as the program that can be
    /// executed as one.
    ///
    /// # Errors
    /// `Error::Sandbox` when there is no launcher and no program to start one.
    pub(crate) fn get(executable: Option<&Path>) -> Result<&'static Launcher, Error> {
        let launcher = &LAUNCHER;
        let mut known = lock(&launcher.executable);
        if known.is_none() {
            known.clone_from(&executable.map(Path::to_path_buf));
        }
        if known.is_none() && lock(&launcher.channel).is_none() {
            return Err(Error::Sandbox {
                reason: "no supervisor executable: a program that embeds the engine sets \
                         `Config::supervisor` to itself and calls \
                         `sandbox::supervise_if_asked` first in `main`"
                    .into(),
            });
        }
        Ok(launcher)
    }

    /// What the kernel enforces, probed once by the launcher, which then prepares what
    /// `config` will need.
    ///
    /// # Errors
    /// `Error::Sandbox` when no launcher can be started or it does not answer.
    pub(crate) fn probe(&'static self, config: &SandboxConfig) -> Result<&'static Probe, Error> {
        if let Some(probe) = self.probe.get() {
            return Ok(probe);
        }
        let answer = self.with_channel(|channel| {
            if !channel.probe_asked {
                channel.ask_probe(Warm::of(config))?;
            }
            channel.read_probe()
        });
        let probe = answer.map_err(|err| Error::Sandbox {
            reason: format!("the sandbox's launcher could not probe the kernel: {err}"),
        })?;
        Ok(self.probe.get_or_init(|| probe))
    }

    /// Asks the launcher to fork the supervisor of `launch`, with `fds` (report, control,
    /// and stdout and stderr unless the call has a terminal).
    pub(crate) fn launch(&self, launch: &Launch, fds: &[BorrowedFd<'_>]) -> io::Result<()> {
        let payload = launch.encode()?;
        self.with_channel(|channel| channel.send(LAUNCH, &payload, fds))
    }

    /// Drops the launcher if it is gone (its socket's other end closed), so that the next
    /// request starts another; returns whether it was.
    pub(crate) fn forget_if_gone(&self) -> bool {
        let mut channel = lock(&self.channel);
        let gone = channel.as_ref().is_some_and(|running| {
            let mut fd = libc::pollfd {
                fd: running.socket.as_raw_fd(),
                events: libc::POLLRDHUP,
                revents: 0,
            };
            // SAFETY: poll(2) without waiting, of one descriptor we own.
            let ready = unsafe { libc::poll(&mut fd, 1, 0) };
            ready > 0 && fd.revents & (libc::POLLHUP | libc::POLLRDHUP) != 0
        });
        if gone && let Some(dead) = channel.take() {
            dead.reap();
        }
        gone
    }

    /// Runs `act` on the running launcher; when it fails because the launcher is gone, on
    /// a new one (executed), once.
    fn with_channel<T>(&self, act: impl Fn(&mut Channel) -> io::Result<T>) -> io::Result<T> {
        let mut channel = lock(&self.channel);
        if let Some(running) = channel.as_mut() {
            match act(running) {
                Err(err) if gone(&err) => {}
                done => return done,
            }
        }
        if let Some(dead) = channel.take() {
            dead.reap();
        }
        let executable = lock(&self.executable).clone().ok_or_else(|| {
            io::Error::other("the launcher is gone, and there is no program to start another")
        })?;
        let running = channel.insert(Channel::execute(&executable)?);
        act(running)
    }
}

/// Whether `err` says that the launcher is gone.
fn gone(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EPIPE | libc::ECONNRESET | libc::ENOTCONN)
    ) || err.kind() == io::ErrorKind::UnexpectedEof
}

impl Channel {
    /// Executes `program` as a launcher, with posix_spawn(3): a fork of this process
    /// would not be safe if it runs threads, and would make every page it writes next
    /// copy-on-write.
    fn execute(program: &Path) -> io::Result<Channel> {
        let (ours, theirs) = socket_pair()?;
        let argv = [
            program.as_os_str().as_bytes(),
            SUPERVISE.as_bytes(),
            LAUNCHER_ARG.as_bytes(),
        ]
        .map(CString::new)
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| io::Error::other("the supervisor's path holds a NUL byte"))?;
        let pid = crate::spawn_raw::posix_spawn_with(&argv, &[(theirs.as_raw_fd(), SOCKET_FD)])?;
        drop(theirs);
        Ok(Channel {
            socket: ours,
            pid,
            probe_asked: false,
        })
    }

    fn ask_probe(&mut self, warm: Warm) -> io::Result<()> {
        let payload = serde_json::to_vec(&warm).map_err(io::Error::other)?;
        self.send(PROBE, &payload, &[])?;
        self.probe_asked = true;
        Ok(())
    }

    fn read_probe(&mut self) -> io::Result<Probe> {
        self.probe_asked = false;
        let mut length = [0u8; 4];
        read_exact(&self.socket, &mut length)?;
        let mut json = vec![0u8; u32::from_le_bytes(length) as usize];
        read_exact(&self.socket, &mut json)?;
        serde_json::from_slice(&json).map_err(io::Error::other)
    }

    fn send(&self, kind: u8, payload: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
        let length = u32::try_from(payload.len())
            .map_err(|_| io::Error::other("a launch request over 4 GiB"))?;
        let mut header = [kind, 0, 0, 0, 0];
        header[1..].copy_from_slice(&length.to_le_bytes());
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        if !fds.is_empty() {
            control.push(SendAncillaryMessage::ScmRights(fds));
        }
        let sent = rustix::net::sendmsg(
            &self.socket,
            &[IoSlice::new(&header)],
            &mut control,
            SendFlags::NOSIGNAL,
        )?;
        write_all(&self.socket, &header[sent..])?;
        write_all(&self.socket, payload)
    }

    /// Waits for the launcher, which is ending (its socket is closed), in a thread.
    fn reap(self) {
        let pid = self.pid;
        drop(self.socket);
        let _ = std::thread::Builder::new()
            .name("agent-bash-reap".into())
            .spawn(move || {
                let mut status = 0;
                // SAFETY: waitpid(2) on our own child, writing to a local.
                unsafe { libc::waitpid(pid, &mut status, 0) };
            });
    }
}

fn write_all(socket: &OwnedFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match rustix::net::send(socket, bytes, SendFlags::NOSIGNAL) {
            Ok(sent) => bytes = &bytes[sent..],
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}

fn read_exact(socket: &OwnedFd, mut buffer: &mut [u8]) -> io::Result<()> {
    while !buffer.is_empty() {
        match rustix::io::read(socket, &mut *buffer) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(count) => buffer = &mut buffer[count..],
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}

/// One supervised call, as the launcher gets it.
#[derive(Debug)]
pub(crate) struct Launch {
    pub(crate) confinement: Confinement,
    pub(crate) cwd: CString,
    /// The terminal's path, when the call runs in one (it is then stdin, stdout and
    /// stderr).
    pub(crate) terminal: Option<CString>,
    /// The program and its arguments.
    pub(crate) argv: Vec<CString>,
    /// `NAME=value`, each.
    pub(crate) env: Vec<CString>,
}

impl Launch {
    /// NUL-terminated fields: the confinement (JSON), the directory, the terminal (empty
    /// for none), the number of arguments, the arguments, and the environment to the end.
    fn encode(&self) -> io::Result<Vec<u8>> {
        let confinement = serde_json::to_vec(&self.confinement).map_err(io::Error::other)?;
        let terminal = self.terminal.as_ref().map_or(&[][..], |t| t.as_bytes());
        let count = self.argv.len().to_string();
        let mut bytes = Vec::new();
        let fields = [
            &confinement[..],
            self.cwd.as_bytes(),
            terminal,
            count.as_bytes(),
        ]
        .into_iter()
        .chain(self.argv.iter().map(|arg| arg.as_bytes()))
        .chain(self.env.iter().map(|var| var.as_bytes()));
        for field in fields {
            bytes.extend_from_slice(field);
            bytes.push(0);
        }
        Ok(bytes)
    }

    fn decode(bytes: &[u8]) -> Result<Launch, String> {
        let bad = || "a malformed launch request".to_string();
        let mut fields = bytes.strip_suffix(&[0]).ok_or_else(bad)?.split(|&b| b == 0);
        let mut next = || fields.next().ok_or_else(bad);
        let confinement = serde_json::from_slice(next()?).map_err(|err| err.to_string())?;
        let c = |field: &[u8]| CString::new(field).map_err(|_| bad());
        let cwd = c(next()?)?;
        let terminal = Some(next()?).filter(|t| !t.is_empty()).map(c).transpose()?;
        let count: usize = std::str::from_utf8(next()?)
            .ok()
            .and_then(|count| count.parse().ok())
            .ok_or_else(bad)?;
        let argv = (0..count)
            .map(|_| next().and_then(c))
            .collect::<Result<Vec<_>, _>>()?;
        if argv.is_empty() {
            return Err(bad());
        }
        let env = fields.map(c).collect::<Result<Vec<_>, _>>()?;
        Ok(Launch {
            confinement,
            cwd,
            terminal,
            argv,
            env,
        })
    }
}

// ---- The launcher's side ----

/// Runs this process as an executed launcher (`__agent-bash-supervise --launcher`).
pub(super) fn serve_executed() -> ! {
    // SAFETY: the engine placed the socket at this number for this process alone.
    let socket = unsafe { OwnedFd::from_raw_fd(SOCKET_FD) };
    // SAFETY: marks our own descriptor close-on-exec.
    unsafe { libc::fcntl(SOCKET_FD, libc::F_SETFD, libc::FD_CLOEXEC) };
    become_launcher(socket)
}

/// The launcher's state: what it prepared once for every call.
struct State {
    socket: OwnedFd,
    /// SIGCHLD, read through a signalfd: the supervisors it forked are reaped.
    children: OwnedFd,
    probe: Option<Probe>,
    /// The pids cgroup this process joined, and its limit: the supervisors it forks are
    /// born in it.
    cgroup: Option<(Cgroup, u64)>,
    /// The shared network namespace of calls without a network: the empty one the probe
    /// made (root only; others make one per call, in their user namespace).
    offline: Option<OwnedFd>,
    /// The mount namespaces kept for confined calls.
    kept: Kept,
    /// The supervisors forked and not yet reaped.
    supervisors: Vec<i32>,
}

/// Serves the engine on `socket` until its end closes; then exits.
fn become_launcher(socket: OwnedFd) -> ! {
    // A process group of its own, which a terminal's Ctrl-C is not for (a session of its
    // own would do the same, but setsid(2) took 1 ms here: the scheduler makes a group for
    // each session). No descriptor of the engine's but the socket: its standard ones are
    // /dev/null, so that whoever reads the engine's output sees it end with the engine,
    // not with the launcher.
    // SAFETY: setpgid, dup2 and close_range on this process's own descriptors.
    unsafe {
        libc::setpgid(0, 0);
        if let Ok(null) = std::fs::File::options()
            .read(true)
            .write(true)
            .open("/dev/null")
        {
            for fd in 0..=2 {
                libc::dup2(null.as_raw_fd(), fd);
            }
        }
        // close_range(2) through syscall(2): musl's libc has no wrapper for it.
        let close_range = |first: u32, last: u32| {
            libc::syscall(libc::SYS_close_range, first, last, 0u32);
        };
        let socket_fd = socket.as_raw_fd().cast_unsigned();
        if socket_fd > 3 {
            close_range(3, socket_fd - 1);
        }
        close_range(socket_fd + 1, u32::MAX);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        // The tree of a supervisor that is killed (by a person, or the OOM killer) comes
        // here, not to init: `reap` kills it, as the supervisor would have.
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
    let Ok(children) = supervisor::child_signals() else {
        // SAFETY: leaves at once; the engine sees the socket close.
        unsafe { libc::_exit(1) }
    };
    let mut state = State {
        socket,
        children,
        probe: None,
        cgroup: None,
        offline: None,
        kept: Kept::default(),
        supervisors: Vec::new(),
    };
    state.serve();
    // The engine is gone or let go. The supervisors go on, each until its control pipe
    // closes; those that are ending are waited for (briefly), then this process leaves its
    // cgroup and removes it, so that the engine need not wait for it. A cgroup that cannot
    // be removed yet (a supervisor still runs, or cgroup v2 would not take this process
    // back) is removed by the next probe once its launcher is gone.
    if let Some((cgroup, _)) = state.cgroup.take() {
        state.wait_for_children(LEAVING_WAIT_MS);
        cgroup.leave();
    }
    // SAFETY: leaves without unwinding into the caller's frames.
    unsafe { libc::_exit(0) }
}

impl State {
    /// Reaps the supervisors as they end, for up to `wait_ms`, until none is left.
    fn wait_for_children(&self, wait_ms: u64) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(wait_ms);
        loop {
            // SAFETY: waitpid(2) on any child, without waiting.
            let reaped = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
            if reaped < 0 {
                return;
            }
            if reaped > 0 {
                continue;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            let mut fd = libc::pollfd {
                fd: self.children.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let wait = i32::try_from(left.as_millis()).unwrap_or(i32::MAX).max(1);
            // SAFETY: poll(2) of one descriptor we own.
            unsafe { libc::poll(&mut fd, 1, wait) };
            supervisor::drain(&self.children);
        }
    }

    fn serve(&mut self) {
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: self.socket.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.children.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: poll(2) over two descriptors we own, held in a local array.
            if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
                continue;
            }
            if fds[1].revents != 0 {
                supervisor::drain(&self.children);
                self.reap();
            }
            if fds[0].revents != 0 && !self.request() {
                return;
            }
        }
    }

    /// Serves one request; false when the engine is gone.
    fn request(&mut self) -> bool {
        let mut header = [0u8; 5];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let received = rustix::net::recvmsg(
            &self.socket,
            &mut [IoSliceMut::new(&mut header)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        );
        let count = match received {
            Ok(message) if message.bytes > 0 => message.bytes,
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => return true,
            _ => return false,
        };
        let mut fds: Vec<OwnedFd> = Vec::new();
        for message in control.drain() {
            if let RecvAncillaryMessage::ScmRights(received) = message {
                fds.extend(received);
            }
        }
        if read_exact(&self.socket, &mut header[count..]).is_err() {
            return false;
        }
        let length = u32::from_le_bytes([header[1], header[2], header[3], header[4]]);
        let mut payload = vec![0u8; length as usize];
        if read_exact(&self.socket, &mut payload).is_err() {
            return false;
        }
        match header[0] {
            PROBE => self.answer_probe(&payload),
            LAUNCH => {
                self.launch(&payload, fds);
                true
            }
            _ => false,
        }
    }

    /// Probes, answers, then prepares what the warm-up asks for.
    fn answer_probe(&mut self, payload: &[u8]) -> bool {
        let warm: Warm = serde_json::from_slice(payload).unwrap_or_default();
        if self.probe.is_none() {
            // The cgroup is joined while the probe's child works.
            let mut joined = None;
            let (probe, offline) = probe_keeping_network(|dir| {
                if let Some(dir) = dir.filter(|_| warm.processes > 0) {
                    joined = join(dir, warm.processes);
                }
            });
            self.cgroup = self.cgroup.take().or(joined);
            self.probe = Some(probe);
            self.offline = offline;
        }
        let probe = self.probe.clone().unwrap_or_default();
        let json = serde_json::to_vec(&probe).unwrap_or_default();
        let length = u32::try_from(json.len()).unwrap_or(0).to_le_bytes();
        if write_all(&self.socket, &length)
            .and_then(|()| write_all(&self.socket, &json))
            .is_err()
        {
            return false;
        }
        true
    }

    /// Joins a pids cgroup of its own with `processes` as its limit, once.
    fn join_cgroup(&mut self, dir: &Path, processes: u64) {
        if self.cgroup.is_none() {
            self.cgroup = join(dir, processes);
        }
    }

    /// Forks the supervisor of one call; a failure is reported on its report pipe.
    fn launch(&mut self, payload: &[u8], fds: Vec<OwnedFd>) {
        if fds.len() < 2 {
            return;
        }
        let launch = match Launch::decode(payload) {
            Ok(launch) => launch,
            Err(why) => return report_failure(&fds[0], &why),
        };
        let spec = &launch.confinement;
        // A cgroup of its own for the call, unless it is born in the launcher's.
        let limit = spec
            .limits
            .map_or(0, |limits: ResourceLimits| limits.processes);
        if let Some(dir) = &spec.layers.pids_cgroup {
            self.join_cgroup(dir, limit);
        }
        let own_cgroup = spec.layers.pids_cgroup.is_some()
            && self
                .cgroup
                .as_ref()
                .is_none_or(|(_, joined)| *joined != limit);
        let offline = if spec.layers.net_ns && !spec.layers.user_ns {
            self.offline.as_ref().map(AsRawFd::as_raw_fd)
        } else {
            None
        };
        let mount = self.kept.namespace(spec).map(|fd| fd.as_raw_fd());
        confine::prepare(spec);
        // SAFETY: this process is single-threaded, so the child may allocate; the child
        // never returns (`supervisor::run` ends in `_exit`).
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let socket = self.socket.as_raw_fd();
            let children = self.children.as_raw_fd();
            // SAFETY: the child closes its copies of the launcher's own descriptors.
            unsafe {
                libc::close(socket);
                libc::close(children);
            }
            // SAFETY: the namespaces' descriptors stay open in this child, which never
            // frees the state that owns them.
            let borrow = |fd: RawFd| unsafe { BorrowedFd::borrow_raw(fd) };
            let entered = confine::Entered {
                offline: offline.map(borrow),
                mount: mount.map(borrow),
            };
            supervisor::run(launch, fds, own_cgroup, entered);
        }
        if pid < 0 {
            let why = format!("fork: {}", io::Error::last_os_error());
            report_failure(&fds[0], &why);
        } else {
            self.supervisors.push(pid);
        }
    }

    /// Reaps every child that ended. A supervisor ends on its own only once its tree has;
    /// one killed by a signal left its tree behind, and that tree's processes are now
    /// children of this one: they are killed. So is a tree whose orphan is reaped here
    /// (a process it forked meanwhile came here when its parent died).
    fn reap(&mut self) {
        let mut orphaned = false;
        loop {
            let mut status = 0;
            // SAFETY: waitpid(2) on any child, without waiting, writing to a local.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                break;
            }
            match self.supervisors.iter().position(|&known| known == pid) {
                Some(at) => {
                    self.supervisors.swap_remove(at);
                    orphaned |= libc::WIFSIGNALED(status);
                }
                None => orphaned = true,
            }
        }
        if orphaned {
            self.kill_orphans();
        }
    }

    /// SIGKILL to every process of this one's tree that is not a live supervisor's.
    fn kill_orphans(&self) {
        let mut orphans = procs::descendants(std::process::id().cast_signed());
        for &supervisor in &self.supervisors {
            let theirs = procs::descendants(supervisor);
            orphans.retain(|pid| *pid != supervisor && !theirs.contains(pid));
        }
        for pid in orphans {
            // SAFETY: kill(2) of a process of this one's own tree.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// A pids cgroup of this process's own under `dir`, with `processes` as its limit, joined.
fn join(dir: &Path, processes: u64) -> Option<(Cgroup, u64)> {
    let cgroup = Cgroup::create(dir, processes).ok()?;
    match cgroup.join() {
        Ok(()) => Some((cgroup, processes)),
        Err(_) => {
            cgroup.remove();
            None
        }
    }
}

fn report_failure(report: &OwnedFd, why: &str) {
    let mut message = vec![FAILED];
    message.extend_from_slice(why.as_bytes());
    let _ = rustix::io::write(report, &message);
}

/// The arguments of this process after `SUPERVISE`, if it was executed as a launcher.
pub(super) fn asked(rest: &[OsString]) -> bool {
    rest.first()
        .is_some_and(|first| first.as_bytes() == LAUNCHER_ARG.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_request_decodes_to_what_was_encoded() {
        let launch = Launch {
            confinement: Confinement {
                mode: super::super::SandboxMode::ReadOnly,
                writable: Some(vec!["/tmp".into()]),
                read_only: Vec::new(),
                hide_sockets: false,
                reachable: vec!["/r".into()],
                network: false,
                limits: None,
                layers: super::super::decide::Layers::default(),
                gaps: Vec::new(),
            },
            cwd: CString::new("/work dir").unwrap(),
            terminal: None,
            argv: ["/bin/bash", "-c", "echo 'a b'; echo \"\""]
                .map(|arg| CString::new(arg).unwrap())
                .to_vec(),
            env: vec![
                CString::new("A=1=2").unwrap(),
                CString::new("EMPTY=").unwrap(),
            ],
        };
        let decoded = Launch::decode(&launch.encode().unwrap()).unwrap();
        assert_eq!(decoded.confinement, launch.confinement);
        assert_eq!(decoded.cwd, launch.cwd);
        assert_eq!(decoded.terminal, None);
        assert_eq!(decoded.argv, launch.argv);
        assert_eq!(decoded.env, launch.env);
        let terminal = Launch {
            terminal: Some(CString::new("/dev/pts/7").unwrap()),
            env: Vec::new(),
            ..launch
        };
        let decoded = Launch::decode(&terminal.encode().unwrap()).unwrap();
        assert_eq!(decoded.terminal, terminal.terminal);
        assert!(decoded.env.is_empty());
    }

    #[test]
    fn a_malformed_launch_request_is_refused() {
        for bytes in [&b""[..], b"{}", b"not json\0/\0\x000\0", b"null\0/\0\0x\0"] {
            assert!(Launch::decode(bytes).is_err(), "{bytes:?}");
        }
    }
}
