//! The non-interactive environment every command runs in.
//!
//! Commands inherit the tool's environment plus these overrides, so that nothing waits for
//! a human: pagers print, editors return at once, credential prompts fail fast. The other
//! half of "never waits on a prompt" is in `spawn`: stdin is /dev/null and the child has no
//! controlling terminal (setsid), so programs that open /dev/tty get ENXIO.

/// Variables set for every command, in this order, over the inherited environment.
pub(crate) fn noninteractive(failing_program: &str) -> Vec<(&'static str, String)> {
    let fixed: [(&'static str, &str); 16] = [
        ("PAGER", "cat"),
        ("GIT_PAGER", "cat"),
        ("MANPAGER", "cat"),
        ("SYSTEMD_PAGER", "cat"),
        ("GIT_EDITOR", "true"),
        ("EDITOR", "true"),
        ("VISUAL", "true"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GCM_INTERACTIVE", "never"),
        ("DEBIAN_FRONTEND", "noninteractive"),
        ("PIP_NO_INPUT", "1"),
        ("npm_config_yes", "true"),
        ("PYTHONUNBUFFERED", "1"),
        ("TERM", "dumb"),
        ("NO_COLOR", "1"),
        ("AGENT_BASH", "1"),
    ];
    let mut vars: Vec<(&'static str, String)> = fixed
        .iter()
        .map(|(name, value)| (*name, value.to_string()))
        .collect();
    // git and ssh run an askpass program for passwords; one that fails answers "no" at once.
    vars.push(("GIT_ASKPASS", failing_program.to_string()));
    vars.push(("SSH_ASKPASS", failing_program.to_string()));
    // Debian's bash reads ~/.bashrc even for `bash -c` when it believes sshd started it
    // (SSH_CLIENT set) and it is a top-level shell (SHLVL below 1 before its own
    // increment). A server started over ssh (a target's far side) would then run the
    // user's rc file before every command: 90 ms of `pyenv init` a call, measured. At
    // least 1 makes each command's bash a nested shell, which reads no rc file.
    let level = std::env::var("SHLVL")
        .ok()
        .and_then(|level| level.parse::<u32>().ok())
        .unwrap_or(0)
        .max(1);
    vars.push(("SHLVL", level.to_string()));
    vars
}
