//! The raw posix_spawn(3) primitives: a program started in a new session (or a process group
//! of its own) with its standard descriptors set and every signal at its default. At the
//! bottom: the process stage starts shells with it, the sandbox's launcher and supervisor
//! their helpers and confined shells, and neither need reach into the other for it.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::RawFd;

/// Where a child's standard descriptors come from.
pub(crate) enum Stdio<'a> {
    /// stdin from /dev/null; stdout and stderr the writing ends of the call's pipes.
    Pipes { stdout: RawFd, stderr: RawFd },
    /// All three the terminal (the slave side of a pseudo-terminal) at this path, opened
    /// after setsid(2) and without `O_NOCTTY`, so that it becomes the child's controlling
    /// terminal and the child's group its foreground group (`terminal::pty`).
    Terminal { slave: &'a CStr },
}

/// posix_spawn(3) of `argv` (its first a path, or a name looked up in PATH) as
/// `posix_spawn` does a plan's: in a new session, in `cwd`, with the environment `env`
/// (`NAME=value` each) and the standard descriptors of `stdio`, every signal at its
/// default. The supervisor starts a confined shell with it too.
pub(crate) fn spawn_program(
    argv: &[CString],
    env: &[CString],
    stdio: &Stdio<'_>,
    cwd: &CStr,
) -> io::Result<i32> {
    let null = c_string(b"/dev/null")?;
    let pointers = null_terminated(argv);
    let envp = null_terminated(env);
    let Some(program) = argv.first() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no program"));
    };
    let spawn = if program.as_bytes().contains(&b'/') {
        libc::posix_spawn
    } else {
        libc::posix_spawnp
    };
    // SAFETY: every pointer handed to libc points into `pointers`, `envp`, `cwd` or `null`,
    // all alive until the spawn returns.
    unsafe {
        spawn_prepared(spawn, &pointers, envp.as_ptr(), |actions, attr| {
            add_file_actions(actions, stdio, &null, cwd)?;
            set_attributes(attr, true)
        })
    }
}

/// posix_spawn(3) of a helper of this program (`argv[0]`, a path) in a process group of
/// its own (a new session's setsid(2) took 1 ms here, in the caller's way: the scheduler
/// makes a group for each session), in this process's environment, with /dev/null as its
/// standard descriptors and each (from, to) of `extra` placed, every signal at its default.
pub(crate) fn posix_spawn_with(argv: &[CString], extra: &[(RawFd, RawFd)]) -> io::Result<i32> {
    let null = c_string(b"/dev/null")?;
    let pointers = null_terminated(argv);
    unsafe extern "C" {
        static environ: *const *mut libc::c_char;
    }
    // SAFETY: every pointer handed to libc points into `pointers` or `null`, alive until the
    // spawn returns; `environ` is this process's environment.
    unsafe {
        spawn_prepared(libc::posix_spawn, &pointers, environ, |actions, attr| {
            set_attributes(attr, false)?;
            for number in 0..=2 {
                check(libc::posix_spawn_file_actions_addopen(
                    actions,
                    number,
                    null.as_ptr(),
                    libc::O_RDWR,
                    0,
                ))?;
            }
            for &(fd, number) in extra {
                check(libc::posix_spawn_file_actions_adddup2(actions, fd, number))?;
            }
            Ok(())
        })
    }
}

/// posix_spawn(3) or posix_spawnp(3) (`spawn`) of `argv` (null-terminated, its first the
/// program) with the environment `envp`, once `prepare` has filled the file actions and
/// the attributes; both structures are initialised before and destroyed after.
///
/// # Safety
/// `argv` and `envp` point to null-terminated arrays of NUL-terminated strings, and the
/// strings `prepare` hands to libc stay alive, until this returns.
unsafe fn spawn_prepared(
    spawn: unsafe extern "C" fn(
        *mut libc::pid_t,
        *const libc::c_char,
        *const libc::posix_spawn_file_actions_t,
        *const libc::posix_spawnattr_t,
        *const *mut libc::c_char,
        *const *mut libc::c_char,
    ) -> libc::c_int,
    argv: &[*mut libc::c_char],
    envp: *const *mut libc::c_char,
    prepare: impl FnOnce(
        &mut libc::posix_spawn_file_actions_t,
        &mut libc::posix_spawnattr_t,
    ) -> io::Result<()>,
) -> io::Result<i32> {
    // SAFETY: each structure is initialised before use and destroyed once; the pointers
    // are the caller's to keep alive.
    unsafe {
        let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        check(libc::posix_spawn_file_actions_init(&mut actions))?;
        if let Err(err) = check(libc::posix_spawnattr_init(&mut attr)) {
            libc::posix_spawn_file_actions_destroy(&mut actions);
            return Err(err);
        }
        let mut pid: libc::pid_t = 0;
        let spawned = prepare(&mut actions, &mut attr).and_then(|()| {
            check(spawn(
                &mut pid,
                argv[0],
                &actions,
                &attr,
                argv.as_ptr(),
                envp,
            ))
        });
        libc::posix_spawn_file_actions_destroy(&mut actions);
        libc::posix_spawnattr_destroy(&mut attr);
        spawned.map(|()| pid)
    }
}

/// The child's descriptors, 0 to 2 from `stdio`, and its directory.
///
/// # Safety
/// `actions` is initialised.
unsafe fn add_file_actions(
    actions: &mut libc::posix_spawn_file_actions_t,
    stdio: &Stdio<'_>,
    null: &CString,
    cwd: &CStr,
) -> io::Result<()> {
    // SAFETY: the strings outlive the actions' use (the caller's posix_spawn).
    unsafe {
        // glibc and musl run setsid before the file actions: a terminal opened here
        // becomes the controlling terminal of the new session.
        let (stdin, stdin_flags, stdout, stderr) = match stdio {
            Stdio::Pipes { stdout, stderr } => (null.as_c_str(), libc::O_RDONLY, *stdout, *stderr),
            Stdio::Terminal { slave } => (*slave, libc::O_RDWR, 0, 0),
        };
        check(libc::posix_spawn_file_actions_addopen(
            actions,
            0,
            stdin.as_ptr(),
            stdin_flags,
            0,
        ))?;
        check(libc::posix_spawn_file_actions_adddup2(actions, stdout, 1))?;
        check(libc::posix_spawn_file_actions_adddup2(actions, stderr, 2))?;
        check(libc::posix_spawn_file_actions_addchdir_np(
            actions,
            cwd.as_ptr(),
        ))?;
        Ok(())
    }
}

/// A new session (or, without `session`, a process group of its own), every signal at its
/// default, none blocked.
///
/// # Safety
/// `attr` is initialised.
unsafe fn set_attributes(attr: &mut libc::posix_spawnattr_t, session: bool) -> io::Result<()> {
    // SAFETY: sets fields of an initialised attribute structure from locals.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        every_signal(&mut all);
        libc::sigemptyset(&mut none);
        check(libc::posix_spawnattr_setsigdefault(attr, &all))?;
        check(libc::posix_spawnattr_setsigmask(attr, &none))?;
        // The constants' C types differ between libc's targets; each fits a short.
        let group = if session {
            libc::POSIX_SPAWN_SETSID as libc::c_short
        } else {
            check(libc::posix_spawnattr_setpgroup(attr, 0))?;
            libc::POSIX_SPAWN_SETPGROUP as libc::c_short
        };
        let flags = [
            group,
            libc::POSIX_SPAWN_SETSIGDEF as libc::c_short,
            libc::POSIX_SPAWN_SETSIGMASK as libc::c_short,
        ];
        let flags = flags.into_iter().fold(0, |all, flag| all | flag);
        check(libc::posix_spawnattr_setflags(attr, flags))
    }
}

/// Adds to `set` the signals sigfillset(3) leaves out: glibc keeps its internal signals
/// (32 and 33: thread cancellation and timers, setxid) out of every set it fills, and its
/// posix_spawn then sets them to *ignored* in the child unless they are in the set of
/// signals to reset, and an ignored signal stays ignored across exec. A program that uses
/// a glibc timer thread (vim waits for its terminal's answers that way before it exits)
/// then waits forever. Set directly: sigaddset refuses these signals. musl resets every
/// handled signal itself.
fn every_signal(set: &mut libc::sigset_t) {
    #[cfg(target_env = "gnu")]
    {
        let words = (set as *mut libc::sigset_t).cast::<libc::c_ulong>();
        // SAFETY: glibc's sigset_t is an array of unsigned longs, bit `n - 1` for signal
        // `n`; signals 32 and 33 are in its first 64 bits, which on every target are the
        // first word (64-bit) or the second (32-bit).
        unsafe {
            if libc::c_ulong::BITS == 64 {
                *words |= (1 << 31) | (1 << 32);
            } else {
                *words |= 1 << 31;
                *words.add(1) |= 1;
            }
        }
    }
    #[cfg(not(target_env = "gnu"))]
    let _ = set;
}

fn null_terminated(strings: &[CString]) -> Vec<*mut libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr().cast_mut())
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect()
}

/// posix_spawn's functions return the error number instead of setting errno.
fn check(code: libc::c_int) -> io::Result<()> {
    match code {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

pub(crate) fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte"))
}
