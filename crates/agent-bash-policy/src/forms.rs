//! Every command a command line runs through wrappers (`sudo`, `env`, `timeout`, …) and
//! runners (`uv run`, `npx`, …). It joins the two and sits above both, so `commands`
//! need not call up into `runners` to find where a wrapped command starts.

use crate::commands;
use crate::runners;
use crate::words::Arg;

/// The start of every command `argv` runs through wrappers and runners, outermost first:
/// `[0, 1]` for `sudo rm -rf /`; a runner whose options are not all known may give several
/// places the command may start (`uv run --python 3.12 rm …`: `3.12` or `rm`).
pub(crate) fn forms(argv: &[Arg]) -> Vec<usize> {
    let mut forms = Vec::new();
    add_forms(argv, 0, &mut forms);
    forms
}

fn add_forms(argv: &[Arg], start: usize, forms: &mut Vec<usize>) {
    // Each step moves forward, so this ends; the bound only guards against surprises.
    if forms.len() > argv.len() || forms.contains(&start) {
        return;
    }
    forms.push(start);
    let rest = &argv[start..];
    if let Some(offset) = commands::wrapped_command(rest).filter(|offset| *offset > 0) {
        add_forms(argv, start + offset, forms);
        return;
    }
    for offset in runners::command_starts(rest) {
        if offset > 0 {
            add_forms(argv, start + offset, forms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<Arg> {
        line.split_whitespace().map(Arg::literal).collect()
    }

    fn unwrapped(line: &str) -> Vec<String> {
        let words = argv(line);
        let starts = forms(&words);
        starts
            .iter()
            .map(|start| {
                words[*start..]
                    .iter()
                    .map(|arg| arg.text.clone())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn wrappers_unwrap_to_their_command() {
        assert_eq!(
            unwrapped("sudo -u root rm -rf /"),
            ["sudo -u root rm -rf /", "rm -rf /"]
        );
        assert_eq!(
            unwrapped("env -i -u X A=1 B=2 nice -n 5 ls"),
            ["env -i -u X A=1 B=2 nice -n 5 ls", "nice -n 5 ls", "ls"]
        );
        assert_eq!(
            unwrapped("timeout -s KILL 10 make"),
            ["timeout -s KILL 10 make", "make"]
        );
        assert_eq!(
            unwrapped("xargs -0 -I{} rm {}"),
            ["xargs -0 -I{} rm {}", "rm {}"]
        );
        assert_eq!(unwrapped("xargs -n 1 rm"), ["xargs -n 1 rm", "rm"]);
        assert_eq!(unwrapped("nice -10 rm x"), ["nice -10 rm x", "rm x"]);
        assert_eq!(unwrapped("command -v rm"), ["command -v rm"]);
        assert_eq!(unwrapped("sudo -l rm"), ["sudo -l rm"]);
        assert_eq!(unwrapped("/usr/bin/env ls"), ["/usr/bin/env ls", "ls"]);
        assert_eq!(
            unwrapped("chroot /mnt rm -rf /"),
            ["chroot /mnt rm -rf /", "rm -rf /"]
        );
        assert_eq!(unwrapped("env"), ["env"]);
        assert_eq!(
            unwrapped("xargs --replace rm x"),
            ["xargs --replace rm x", "rm x"]
        );
        assert_eq!(
            unwrapped("flock -w 5 /l make"),
            ["flock -w 5 /l make", "make"]
        );
        assert_eq!(unwrapped("strace -o t -f ls"), ["strace -o t -f ls", "ls"]);
        assert_eq!(unwrapped("strace -p 12"), ["strace -p 12"]);
        assert_eq!(
            unwrapped("ip netns exec n ls"),
            ["ip netns exec n ls", "ls"]
        );
    }
}
