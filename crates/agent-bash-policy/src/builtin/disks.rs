//! The rules that protect disks: a file system made, `dd` or a redirection onto a disk
//! device, `shred`/`wipefs`/`blkdiscard`/… of one; and a file system made on a device only
//! named at run time, which is unknown.

use super::{long_option_is, name, short_cluster_has, split_options};
use crate::commands;
use crate::paths::is_block_device;
use crate::words::Arg;
use crate::words::Found;

/// Why the command is unknown if it makes a file system on a device named at run time
/// (`mkfs.ext4 $DEV`): the `mkfs` rule denies it on a disk, and which one it is cannot be seen.
pub(crate) fn file_system_on_unknown_device(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let name = name(form);
        if !commands::makes_file_system(&name) {
            return None;
        }
        let device = split_options(form).1.into_iter().find(|arg| !arg.literal)?;
        Some(format!(
            "`{name}` makes a file system on `{}`, which is only known when the shell runs it",
            device.text
        ))
    })
}

/// A file system made on a disk device: an image file (`mkfs.ext4 disk.img`) or no operand
/// at all (`mkfs --help`) erases nothing.
pub(super) fn mkfs(_: &Found, form: &[Arg]) -> bool {
    commands::makes_file_system(&name(form))
        && split_options(form).1.into_iter().any(is_block_device)
}

pub(super) fn dd_block_device(_: &Found, form: &[Arg]) -> bool {
    matches!(&*name(form), "dd" | "dcfldd")
        && form.iter().skip(1).any(|arg| {
            arg.text.strip_prefix("of=").is_some_and(|path| {
                is_block_device(&Arg {
                    text: path.to_owned(),
                    ..arg.clone()
                })
            })
        })
}

pub(super) fn redirect_block_device(found: &Found, _: &[Arg]) -> bool {
    found
        .redirects
        .iter()
        .any(|redirect| redirect.writes() && is_block_device(&redirect.target))
}

pub(super) fn wipe_block_device(_: &Found, form: &[Arg]) -> bool {
    let (_, operands) = split_options(form);
    match &*name(form) {
        "shred" | "blkdiscard" | "tee" | "mkswap" => operands.into_iter().any(is_block_device),
        "wipefs" => wipefs_erases(form) && operands.into_iter().any(is_block_device),
        "ddrescue" => operands.get(1).is_some_and(|out| is_block_device(out)),
        "cp" => operands.last().is_some_and(|last| is_block_device(last)),
        _ => false,
    }
}

/// True if `wipefs` erases (`-a`, `--all`, `-o`, `--offset`) rather than lists, and not
/// with `-n`/`--no-act`.
fn wipefs_erases(form: &[Arg]) -> bool {
    let (options, _) = split_options(form);
    let has = |letter: char, long: &str| {
        options
            .iter()
            .any(|option| short_cluster_has(option, letter) || long_option_is(option, long, 3))
    };
    (has('a', "--all") || has('o', "--offset")) && !has('n', "--no-act")
}
