//! The sandbox's settings (`[sandbox]`): its mode and resource limits, plain data that the
//! configuration and requests hold. Here, at the bottom, so that they need not reach up to
//! `sandbox`, which applies them (and adds `SandboxConfig::supervised`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How much a sandboxed command may write.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// No confinement.
    Off,
    /// Reads everywhere; writes in the project root, the temporary directories, the data
    /// caches of the common tools and `sandbox.writable`, but never the places that decide
    /// what runs later (see `places`). The default.
    #[default]
    WorkspaceWrite,
    /// Reads everywhere; writes nowhere (but `/dev/null` and the terminal devices).
    ReadOnly,
}

impl SandboxMode {
    /// Every mode, by its name in settings and on the command line.
    pub const NAMES: &[(&str, SandboxMode)] = &[
        ("off", SandboxMode::Off),
        ("workspace-write", SandboxMode::WorkspaceWrite),
        ("read-only", SandboxMode::ReadOnly),
    ];

    /// The mode's name, as settings write it.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, mode)| *mode == self)
            .map_or("off", |(name, _)| name)
    }

    /// The mode named `name`.
    pub fn from_name(name: &str) -> Option<SandboxMode> {
        Self::NAMES
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, mode)| *mode)
    }
}

/// The sandbox's settings (`[sandbox]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxConfig {
    /// The mode of every call (a call may ask for a stricter one).
    pub mode: SandboxMode,
    /// Whether `mode` was chosen (by a setting or a flag). The default mode, not chosen, is
    /// used only where the kernel confines writes (and the program has a supervisor): else
    /// the session runs unconfined and its first result says why. A chosen mode is always
    /// applied, its gaps said in every result (or refused, with `require`).
    pub mode_chosen: bool,
    /// Whether confined commands may use the network. Off, they get no sockets but Unix
    /// ones (it also confines a call of mode `off`).
    pub network: bool,
    /// More paths a `workspace-write` command may write.
    pub writable: Vec<PathBuf>,
    /// Whether the project's `.git` stays read-only under `workspace-write` (it needs a
    /// mount namespace; by default `.git` is writable, so that `git commit` works).
    pub protect_git: bool,
    /// Refuse to run a confined call when the kernel cannot enforce all of its mode.
    pub require: bool,
    /// Run every call under the supervisor, confined or not (the default): a daemon that
    /// leaves its session is then found and killed with the session in mode `off` too.
    /// Off, unconfined calls are spawned directly: about 0.5 ms quicker a call (see
    /// ARCHITECTURE.md, "The supervisor and the sandbox"). Supervision is best effort: a
    /// program without a supervisor (`Config::supervisor`) spawns unconfined calls directly.
    pub supervise_always: bool,
    /// Resource limits of confined commands.
    pub limits: ResourceLimits,
    /// Unix sockets of servers outside the sandbox that confined commands may still reach
    /// (paths, or directories of them). Every other listening socket outside the project is
    /// hidden: a server that takes commands (tmux, screen, D-Bus, Docker) would run them
    /// unconfined. Naming the Docker socket gives the host away.
    pub sockets: Vec<PathBuf>,
    /// Whether the ssh agent's socket (`$SSH_AUTH_SOCK`) stays reachable (so `git push`
    /// over ssh works).
    pub ssh_agent: bool,
}

impl Default for SandboxConfig {
    fn default() -> SandboxConfig {
        SandboxConfig {
            mode: SandboxMode::WorkspaceWrite,
            mode_chosen: false,
            network: true,
            writable: Vec::new(),
            protect_git: false,
            require: false,
            supervise_always: true,
            limits: ResourceLimits::default(),
            sockets: Vec::new(),
            ssh_agent: true,
        }
    }
}

/// Resource limits of a confined command's tree (`[sandbox.limits]`); 0 is no limit.
/// The defaults are far above what a large build uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceLimits {
    /// Most processes of the tree at once (a pids cgroup; RLIMIT_NPROC for a user other
    /// than root, which counts all of that user's processes).
    pub processes: u64,
    /// Largest file a process may write, in bytes (RLIMIT_FSIZE).
    pub file_size_bytes: u64,
    /// Most CPU seconds of one process (RLIMIT_CPU).
    pub cpu_secs: u64,
    /// Most open files of one process (RLIMIT_NOFILE; only ever lowered).
    pub open_files: u64,
}

impl Default for ResourceLimits {
    fn default() -> ResourceLimits {
        ResourceLimits {
            processes: 4096,
            file_size_bytes: 64 << 30,
            cpu_secs: 6 * 3600,
            open_files: 65536,
        }
    }
}
