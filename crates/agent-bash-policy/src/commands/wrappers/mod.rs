//! Wrappers, which run the command that follows their own options (`sudo`, `env`,
//! `timeout`, `xargs`, …): how their options look, and where the wrapped command starts.

use super::{is_assignment, program};
use crate::words::Arg;

mod isolation;
mod limits;
mod privilege;
mod shell;

const NONE: &[&str] = &[];

/// The wrapper table, by family; a name is in one entry only.
const FAMILIES: [&[Wrapper]; 4] = [
    shell::WRAPPERS,
    privilege::WRAPPERS,
    limits::WRAPPERS,
    isolation::WRAPPERS,
];

/// How a wrapper's own options look, so that the wrapped command can be found.
struct Wrapper {
    names: &'static [&'static str],
    /// Short options that take an argument (`-u root`, `-uroot`).
    short_with_value: &'static str,
    /// Short options whose argument, if any, is attached (`xargs -i{}`).
    short_with_attached_value: &'static str,
    /// Long options that take an argument when it is not given with `=`.
    long_with_value: &'static [&'static str],
    /// Short options that mean the wrapper runs no command (`command -v`, `sudo -l`).
    short_no_command: &'static str,
    /// Long options that mean the wrapper runs no command.
    long_no_command: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot DIR`).
    operands: usize,
    /// `NAME=value` words may come before the command (`env`, `sudo`).
    assignments: bool,
    /// `-N` (a number) is an option (`nice -10`).
    numeric_options: bool,
}

impl Wrapper {
    /// How many words `--long` (with or without `=value`) takes, itself included; `None`
    /// when it means the wrapper runs no command. GNU tools take any unambiguous
    /// abbreviation (`env --sp` is `--split-string`).
    fn long_option_words(&self, long: &str) -> Option<usize> {
        let (long_name, has_value) = match long.split_once('=') {
            Some((long_name, _)) => (long_name, true),
            None => (long, false),
        };
        let abbreviates = |long: &&str| !long_name.is_empty() && long.starts_with(long_name);
        if self.long_no_command.iter().any(abbreviates) {
            return None;
        }
        let takes_next = !has_value && self.long_with_value.iter().any(abbreviates);
        Some(1 + usize::from(takes_next))
    }

    /// How many words a cluster of short options (`-abc`, given as `abc`) takes, itself
    /// included; `None` when one of them means the wrapper runs no command.
    fn short_option_words(&self, letters: &str) -> Option<usize> {
        if self.numeric_options && letters.bytes().all(|byte| byte.is_ascii_digit()) {
            return Some(1);
        }
        for (offset, letter) in letters.char_indices() {
            if self.short_no_command.contains(letter) {
                return None;
            }
            if self.short_with_value.contains(letter) {
                // The value is the rest of the word, or the next word.
                return Some(1 + usize::from(offset + letter.len_utf8() == letters.len()));
            }
            if self.short_with_attached_value.contains(letter) {
                break;
            }
        }
        Some(1)
    }
}

/// Where the command that the wrapper `argv[0]` runs starts in `argv`, if it runs one.
pub(crate) fn wrapped_command(argv: &[Arg]) -> Option<usize> {
    let name = program(argv)?;
    // `ip [opts] netns exec NAME CMD…`
    if name == "coreutils" {
        return argv
            .get(1)
            .is_some_and(|arg| arg.text.starts_with("--coreutils-prog="))
            .then_some(1);
    }
    if name == "ip" {
        let at = argv
            .windows(2)
            .position(|pair| pair[0].text == "netns" && pair[1].text == "exec")?;
        return (argv.len() > at + 3).then_some(at + 3);
    }
    let spec = FAMILIES
        .iter()
        .flat_map(|family| family.iter())
        .find(|spec| spec.names.contains(&name.as_ref()))?;
    let mut operands_left = spec.operands;
    let mut options_done = false;
    let mut index = 1;
    while index < argv.len() {
        let arg = &argv[index];
        let text = arg.text.as_str();
        if !arg.literal {
            // `env X="$v" cmd` sets X whatever `$v` holds; `env X=$v cmd` may not (a space
            // in `$v` splits the word, and the rest becomes the command).
            if spec.assignments && !arg.splits && is_assignment(text) {
                index += 1;
                continue;
            }
            // `sudo $opts rm`: the shell decides what this is; call it the command, whose
            // name is then not literal (and so unknown).
            return Some(index);
        }
        if !options_done && text == "--" {
            options_done = true;
            index += 1;
            continue;
        }
        if !options_done && text == "-" && name == "env" {
            index += 1;
            continue;
        }
        if !options_done && let Some(long) = text.strip_prefix("--") {
            index += spec.long_option_words(long)?;
            continue;
        }
        if !options_done && text.len() > 1 && text.starts_with('-') {
            index += spec.short_option_words(&text[1..])?;
            continue;
        }
        if spec.assignments && is_assignment(text) {
            index += 1;
            continue;
        }
        if operands_left > 0 {
            operands_left -= 1;
            index += 1;
            continue;
        }
        return Some(index);
    }
    None
}
