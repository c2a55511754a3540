//! Disks and firmware: partition tables, disk devices and their firmware written, the
//! boot configuration and the firmware's own changed.

use super::*;

/// Programs that only read or describe a disk given to them.
const DISK_READERS: &[&str] = &[
    "lsblk",
    "blkid",
    "file",
    "stat",
    "ls",
    "udevadm",
    "dumpe2fs",
    "findmnt",
    "df",
    "du",
    "lsof",
    "mount",
    "umount",
    "cat",
    "head",
    "tail",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "smartctl",
    "pvs",
    "vgs",
    "lvs",
    "pvdisplay",
    "vgdisplay",
    "lvdisplay",
    "eject",
    "dd",
    "dcfldd",
    "ddrescue",
    "cmp",
    "md5sum",
    "sha256sum",
    "sha1sum",
    "b2sum",
    "readlink",
    "realpath",
    "test",
    "[",
    "[[",
    "echo",
    "printf",
    "partprobe",
    "isoinfo",
    "fsck",
    "e2fsck",
    "xfs_info",
    "iostat",
    "hdparm",
    "fdisk",
    "sfdisk",
    "gdisk",
    "sgdisk",
    "parted",
    "nvme",
    "cryptsetup",
    "tune2fs",
    "blockdev",
    "badblocks",
    "zpool",
    "losetup",
    "kpartx",
    "wipefs",
    "shred",
    "blkdiscard",
    "tee",
    "mkswap",
    "cp",
    "grep",
    "sudo",
];

/// sfdisk's options that only read or show a partition table.
const SFDISK_READS: &[&str] = &[
    "-l",
    "--list",
    "-d",
    "--dump",
    "-s",
    "--show-size",
    "-V",
    "--verify",
    "-J",
    "--json",
];

/// sgdisk's options that write the partition table.
const SGDISK_WRITES: &[&str] = &[
    "-Z",
    "--zap-all",
    "-z",
    "--zap",
    "-o",
    "--clear",
    "-n",
    "--new",
    "-d",
    "--delete",
    "-g",
    "--mbrtogpt",
    "-R",
    "--replicate",
    "-G",
    "--randomize-guids",
    "-t",
    "--typecode",
    "-l",
    "--load-backup",
];

/// parted's commands that write the disk.
const PARTED_WRITES: &[&str] = &[
    "mklabel",
    "mktable",
    "mkpart",
    "rm",
    "resizepart",
    "mkfs",
    "rescue",
    "set",
    "name",
    "move",
];

/// nvme's subcommands that write the drive, its namespaces or its firmware.
const NVME_WRITES: &[&str] = &[
    "format",
    "sanitize",
    "fw-download",
    "fw-commit",
    "write",
    "write-zeroes",
    "delete-ns",
    "ns-rescan",
];

/// True if a word of `form`, or the value of a `NAME=VALUE` word, names a disk device.
fn names_a_disk(form: &[Arg]) -> bool {
    form.iter().skip(1).any(|arg| {
        let value = arg
            .text
            .split_once('=')
            .map_or(arg.text.as_str(), |(_, v)| v);
        crate::paths::names_disk(&Arg {
            text: value.to_owned(),
            ..arg.clone()
        })
    })
}

/// True if `form` writes to a disk device named among its words, with a program that has no
/// other rule (`qemu-img convert … /dev/sda`, `pv x -o /dev/sda`, `sgdisk --zap-all /dev/sda`).
pub(crate) fn disk_write(_: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    if crate::commands::makes_file_system(&name) {
        return false;
    }
    match &*name {
        "fdisk" | "gdisk" | "cfdisk" => !has(form, &["-l", "--list"]) && names_a_disk(form),
        "sfdisk" => !has(form, SFDISK_READS) && names_a_disk(form),
        "sgdisk" => has(form, SGDISK_WRITES) && names_a_disk(form),
        "parted" => {
            form.iter()
                .skip(1)
                .any(|arg| PARTED_WRITES.contains(&arg.text.as_str()))
                && names_a_disk(form)
        }
        "hdparm" => {
            form.iter().skip(1).any(|arg| {
                let text = arg.text.as_str();
                text.starts_with("--security-")
                    || text.starts_with("--trim-sector")
                    || text.starts_with("--write-sector")
                    || text.starts_with("--fwdownload")
                    || text == "--make-bad-sector"
                    || text == "--dco-restore"
                    || text == "-N"
            }) && names_a_disk(form)
        }
        "nvme" => {
            form.get(1)
                .is_some_and(|sub| NVME_WRITES.contains(&sub.text.as_str()))
                && names_a_disk(form)
        }
        "cryptsetup" => {
            form.iter().skip(1).any(|arg| {
                matches!(
                    arg.text.as_str(),
                    "luksFormat" | "erase" | "luksErase" | "reencrypt" | "luksKillSlot"
                )
            }) && names_a_disk(form)
        }
        "badblocks" => has(form, &["-w"]) && names_a_disk(form),
        "zpool" => {
            form.get(1).is_some_and(|sub| {
                matches!(
                    sub.text.as_str(),
                    "create" | "labelclear" | "add" | "replace"
                )
            }) && names_a_disk(form)
        }
        "tune2fs" | "e2fsck" | "fsck" | "losetup" | "kpartx" => false,
        "blockdev" => false,
        _ => !DISK_READERS.contains(&&*name) && names_a_disk(form),
    }
}

/// True if `form` writes firmware or the boot configuration: `flashrom -w`, `efibootmgr`
/// creating, deleting or reordering entries, `grub-install`, `fwupdmgr install`, `bootctl`
/// changing the boot loader, `mokutil` turning off validation.
pub(crate) fn firmware(_: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let sub = form.get(1).map(|arg| arg.text.as_str()).unwrap_or("");
    match &*name {
        "flashrom" => has(form, &["-w", "--write", "-E", "--erase"]),
        "efibootmgr" => has(
            form,
            &[
                "-c",
                "--create",
                "-B",
                "--delete-bootnum",
                "-o",
                "--bootorder",
                "-a",
                "--active",
                "-A",
                "--inactive",
                "-n",
                "--bootnext",
                "-C",
                "--create-only",
            ],
        ),
        "grub-install" | "grub2-install" | "lilo" | "syslinux" | "extlinux" | "efi-updatevar"
        | "sbkeysync" => true,
        "fwupdmgr" | "fwupdtool" => matches!(
            sub,
            "install"
                | "update"
                | "downgrade"
                | "reinstall"
                | "install-blob"
                | "unlock"
                | "activate"
        ),
        "bootctl" => matches!(
            sub,
            "install" | "remove" | "update" | "set-default" | "set-oneshot"
        ),
        "mokutil" => has(
            form,
            &["--disable-validation", "--import", "--delete", "--reset"],
        ),
        "dmidecode" | "biosdecode" => false,
        _ => false,
    }
}
