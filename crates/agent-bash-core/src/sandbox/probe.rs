//! What this kernel can enforce: Landlock (and its ABI), seccomp, user, mount and network
//! namespaces, a writable pids cgroup. Each is tried, not read from a version number: a
//! namespace is created in a child process, which then exits.
//!
//! `probe` forks, so it runs in a single-threaded process: the CLI before its runtime
//! starts, or the launcher, once per process.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Where the pids cgroups of confined calls are made, under a pids hierarchy.
pub(crate) const CGROUP_DIR: &str = "agent-bash";

/// What the kernel enforces, as found by trying it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// The Landlock ABI version (0: none). 1 confines writes, 4 adds TCP, 6 adds signal and
    /// abstract-socket scopes.
    pub landlock_abi: u32,
    /// Whether a seccomp filter can be installed.
    pub seccomp: bool,
    /// Whether this user can create a user namespace.
    pub user_namespaces: bool,
    /// Whether this user can create a mount namespace (root directly, others in a user
    /// namespace).
    pub mount_namespaces: bool,
    /// Whether this user can create a network namespace.
    pub network_namespaces: bool,
    /// A pids cgroup directory this user can create cgroups in, if any.
    pub pids_cgroup: Option<PathBuf>,
    /// Whether this process runs as root (which RLIMIT_NPROC does not limit).
    pub root: bool,
}

/// Tries each feature. Forks: call it only from a single-threaded process.
pub fn probe() -> Probe {
    let root = rustix::process::geteuid().is_root();
    let user = if root { 0 } else { libc::CLONE_NEWUSER };
    Probe {
        landlock_abi: landlock_abi(),
        seccomp: in_child(&seccomp_works),
        user_namespaces: in_child(&|| unshare(libc::CLONE_NEWUSER)),
        mount_namespaces: in_child(&|| unshare(user | libc::CLONE_NEWNS)),
        network_namespaces: in_child(&|| unshare(user | libc::CLONE_NEWNET)),
        pids_cgroup: pids_cgroup(),
        root,
    }
}

/// The Landlock ABI version, asked of the kernel (0 when it has none).
fn landlock_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute and the VERSION flag, the call only returns a number.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).unwrap_or(0)
}

fn unshare(flags: libc::c_int) -> bool {
    // SAFETY: unshare(2) changes only this (child) process.
    unsafe { libc::unshare(flags) == 0 }
}

fn seccomp_works() -> bool {
    let filter = seccompiler::SeccompFilter::new(
        std::collections::BTreeMap::new(),
        seccompiler::SeccompAction::Allow,
        seccompiler::SeccompAction::Errno(libc::EPERM as u32),
        super::confine::ARCH,
    );
    let Ok(program) = filter.and_then(seccompiler::BpfProgram::try_from) else {
        return false;
    };
    seccompiler::apply_filter(&program).is_ok()
}

/// Runs `test` in a forked child and returns what it returned.
fn in_child(test: &dyn Fn() -> bool) -> bool {
    // SAFETY: the child runs `test` (system calls of its own) and exits without unwinding;
    // the caller is single-threaded, so the child's copy of the heap is consistent.
    match unsafe { libc::fork() } {
        -1 => false,
        0 => {
            let code = if test() { 0 } else { 1 };
            // SAFETY: leaves the child at once, running nothing of the parent's.
            unsafe { libc::_exit(code) }
        }
        pid => {
            let mut status = 0;
            // SAFETY: waits for the child just forked.
            let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
            waited == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
        }
    }
}

/// A pids cgroup hierarchy where this user can make a cgroup: cgroup v1's `pids`
/// controller, or v2's own cgroup when it hands `pids` to its children. Stale cgroups of
/// supervisors that were killed are removed on the way.
fn pids_cgroup() -> Option<PathBuf> {
    let v1 = PathBuf::from("/sys/fs/cgroup/pids");
    std::iter::once(v1)
        .chain(own_v2_cgroup())
        .find_map(|hierarchy| {
            if !hierarchy.join("cgroup.procs").exists() {
                return None;
            }
            let v2 = hierarchy.join("cgroup.subtree_control");
            if v2.exists() && !std::fs::read_to_string(&v2).is_ok_and(|c| c.contains("pids")) {
                return None;
            }
            let dir = hierarchy.join(CGROUP_DIR);
            std::fs::create_dir_all(&dir).ok()?;
            remove_stale(&dir);
            let test = dir.join(format!("probe-{}", std::process::id()));
            std::fs::create_dir(&test).ok()?;
            let works = test.join("pids.max").exists();
            let _ = std::fs::remove_dir(&test);
            works.then_some(dir)
        })
}

fn own_v2_cgroup() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = text.lines().find_map(|line| line.strip_prefix("0::"))?;
    Some(Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/')))
}

/// Removes the cgroups whose supervisor is gone (an empty cgroup can be removed).
fn remove_stale(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|name| name.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

impl Probe {
    /// The probe as a person reads it (`agent-bash sandbox probe`).
    pub fn report(&self) -> String {
        let yes = |on: bool| if on { "yes" } else { "no" };
        let mut text = String::new();
        let landlock = match self.landlock_abi {
            0 => "no".to_string(),
            abi => format!("ABI {abi}"),
        };
        let lines = [
            ("landlock", landlock),
            ("seccomp", yes(self.seccomp).into()),
            ("user namespaces", yes(self.user_namespaces).into()),
            ("mount namespaces", yes(self.mount_namespaces).into()),
            ("network namespaces", yes(self.network_namespaces).into()),
            (
                "pids cgroup",
                self.pids_cgroup
                    .as_ref()
                    .map_or("no".into(), |dir| dir.display().to_string()),
            ),
            ("root", yes(self.root).into()),
        ];
        for (name, value) in lines {
            text.push_str(&format!("{name:<20}{value}\n"));
        }
        text
    }
}
