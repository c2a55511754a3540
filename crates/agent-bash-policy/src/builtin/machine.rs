//! The rules that protect the machine as a whole: shutting it down or cutting it off
//! (`shutdown`, `systemctl reboot`, sysrq, `ip link … down`), and killing every process.

use super::name;
use crate::harm;
use crate::paths::normalize;
use crate::words::Arg;
use crate::words::Found;

/// systemd targets that stop, restart or suspend the machine.
const STOPPING_TARGETS: &[&str] = &[
    "poweroff.target",
    "reboot.target",
    "halt.target",
    "kexec.target",
    "soft-reboot.target",
    "rescue.target",
    "emergency.target",
    "suspend.target",
    "hibernate.target",
    "ctrl-alt-del.target",
];

pub(super) fn shutdown(found: &Found, form: &[Arg]) -> bool {
    if harm::power(form) || harm::cuts_off(form) {
        return true;
    }
    // `echo b > /proc/sysrq-trigger` reboots at once; `tee /proc/sysrq-trigger` too.
    let sysrq = |arg: &Arg| normalize(&arg.text) == ["proc", "sysrq-trigger"];
    if found
        .redirects
        .iter()
        .any(|redirect| redirect.writes() && sysrq(&redirect.target))
        || (name(form) == "tee" && form.iter().skip(1).any(sysrq))
    {
        return true;
    }
    let name = name(form);
    match &*name {
        "shutdown" | "reboot" | "halt" | "poweroff" => true,
        "systemctl" | "loginctl" => {
            let mut words = form.iter().skip(1);
            while let Some(arg) = words.next() {
                match arg.text.as_str() {
                    // Options that take a value in the next word.
                    "-H" | "-M" | "-t" | "-p" | "-n" | "-o" | "-s" | "--host" | "--machine"
                    | "--type" | "--property" | "--lines" | "--output" | "--signal" => {
                        words.next();
                    }
                    text if text.starts_with('-') => {}
                    verb => {
                        return matches!(
                            verb,
                            "poweroff"
                                | "reboot"
                                | "halt"
                                | "kexec"
                                | "soft-reboot"
                                | "suspend"
                                | "hibernate"
                                | "hybrid-sleep"
                                | "rescue"
                                | "emergency"
                        ) || (matches!(verb, "start" | "isolate" | "restart")
                            && words.any(|unit| STOPPING_TARGETS.contains(&unit.text.as_str())));
                    }
                }
            }
            false
        }
        "init" | "telinit" => form
            .get(1)
            .is_some_and(|arg| matches!(arg.text.as_str(), "0" | "6")),
        _ => false,
    }
}

pub(super) fn kill_all(_: &Found, form: &[Arg]) -> bool {
    if harm::kill_many(form) {
        return true;
    }
    if name(form) == "killall5" {
        // Signals every process (but its own session); `-0` sends nothing.
        return !form.iter().skip(1).any(|arg| arg.text == "-0");
    }
    if name(form) != "kill" {
        return false;
    }
    let mut index = 1;
    // One signal option first: `-9`, `-KILL`, `-SIGKILL`, `-s KILL`, `-n 9`; or a listing.
    let signal = match form.get(index).map(|arg| arg.text.as_str()) {
        Some("-s" | "-n" | "--signal") => {
            index += 2;
            form.get(index - 1).map(|arg| arg.text.as_str())
        }
        Some("-l" | "-L" | "--list" | "--table") => return false,
        Some(text) if text.starts_with('-') && text != "--" && text.len() > 1 => {
            index += 1;
            Some(&text[1..])
        }
        _ => None,
    };
    // Signal 0 sends nothing: `kill -0 PID` asks whether the process exists.
    if signal.is_some_and(|signal| signal.parse::<i64>() == Ok(0)) {
        return false;
    }
    if form.get(index).is_some_and(|arg| arg.text == "--") {
        index += 1;
    }
    // As bash reads a pid: `-01` is -1, `001` is 1.
    form.iter()
        .skip(index)
        .any(|arg| matches!(arg.text.parse::<i64>(), Ok(-1 | 1)))
}
