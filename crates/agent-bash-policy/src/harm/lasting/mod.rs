//! What outlasts the session: privileges granted, code planted to run later (cron, start-up
//! files, systemd units), and the files a command writes to get there. Each has a file;
//! this one holds the places whose change lasts.

use super::*;

mod environment;
mod privileges;
mod runs_later;
mod writes;

use environment::sets_environment_only;
pub(crate) use privileges::privilege;
pub(crate) use runs_later::{persistence, startup_write_unseen};
pub(crate) use writes::written_paths;
use writes::written_text;

/// Places whose change gives privileges or runs code later, for anyone or at login.
const PERSISTENT_PLACES: &[&str] = &[
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "/etc/ld.so.preload",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/crontab",
    "/etc/cron.d",
    "/etc/cron.hourly",
    "/etc/cron.daily",
    "/etc/cron.weekly",
    "/etc/cron.monthly",
    "/var/spool/cron",
    "/etc/systemd",
    "/lib/systemd/system",
    "/usr/lib/systemd",
    "/etc/init.d",
    "/etc/rc.local",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/zsh",
    "/etc/environment",
    "/etc/security",
    "/etc/pam.d",
    "/etc/ssh",
    "/etc/xdg/autostart",
    "/etc/modules",
    "/etc/modules-load.d",
    "/etc/modprobe.d",
    "/etc/udev/rules.d",
    "/etc/update-motd.d",
    "/etc/apt/apt.conf.d",
    "/etc/polkit-1",
    "/boot",
    "/etc/fstab",
    "/etc/crypttab",
    "/etc/default/grub",
    "/etc/grub.d",
    "/etc/inittab",
    "/etc/initramfs-tools",
    "/etc/cron.allow",
    "/etc/at.allow",
    "/etc/anacrontab",
    "~/.ssh/authorized_keys",
    "~/.ssh/authorized_keys2",
    "~/.ssh/rc",
    "~/.ssh/environment",
    "~/.config/systemd",
    "~/.config/autostart",
    "~/.local/share/systemd",
    "~/.config/upstart",
    "~/.pam_environment",
    "~/.config/environment.d",
    // agent-bash's own user settings: a write there loosens every later call, the
    // sandbox's and the policy's, outside this one.
    "~/.config/agent-bash",
];
