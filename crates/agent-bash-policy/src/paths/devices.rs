//! Disk block devices: the paths under `/dev` (or globs there) that name a disk, which the
//! disk rules protect, as opposed to `/dev/null`, terminals, loop devices and the like.

use super::{normalize, shell_glob_matches};
use crate::words::Arg;

/// True for a path naming a disk block device (not `/dev/null`, `/dev/stdout`, `/dev/fd/*`,
/// `/dev/tty`, loop devices or anything else under `/dev`).
pub(crate) fn is_block_device(arg: &Arg) -> bool {
    if !arg.literal || !arg.text.starts_with('/') {
        return false;
    }
    let components = normalize(&arg.text);
    let [dev, device, rest @ ..] = components.as_slice() else {
        return false;
    };
    if *dev != "dev" {
        return false;
    }
    if arg.glob && crate::words::has_glob(device) {
        // `/dev/sd*`, `/dev/sd[a]`: a disk if the pattern can name one.
        return DISK_NAMES
            .iter()
            .any(|name| shell_glob_matches(device.as_bytes(), name.as_bytes()));
    }
    // `/dev/block/8:0`, and `/dev/VG/LV` (LVM) outside the directories of other devices.
    if !rest.is_empty() && !NON_DISK_DIRS.contains(device) {
        return true;
    }
    let numbered = |prefix: &str| {
        device
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    };
    let lettered = |prefix: &str| {
        device
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_lowercase()))
    };
    lettered("sd")
        || lettered("hd")
        || lettered("vd")
        || lettered("xvd")
        || numbered("nvme")
        || numbered("mmcblk")
        || numbered("disk")
        || numbered("rdisk")
        || numbered("dm-")
        || numbered("md")
        || numbered("nbd")
        || matches!(*device, "disk" | "mapper" | "md" | "root")
}

/// Sample names of disk devices, which a glob under `/dev` is matched against.
const DISK_NAMES: &[&str] = &[
    "sda",
    "sdb",
    "sda1",
    "hda",
    "vda",
    "vdb",
    "xvda",
    "nvme0n1",
    "nvme0n1p1",
    "mmcblk0",
    "mmcblk0p1",
    "disk0",
    "disk2",
    "rdisk0",
    "dm-0",
    "md0",
    "nbd0",
    "mapper",
    "disk",
    "root",
];

/// Directories under `/dev` that hold devices other than disks.
const NON_DISK_DIRS: &[&str] = &[
    "fd",
    "pts",
    "shm",
    "mqueue",
    "hugepages",
    "net",
    "snd",
    "input",
    "bus",
    "char",
    "cpu",
    "dri",
    "usb",
    "serial",
    "v4l",
    "vfio",
    "dma_heap",
    "hidraw",
    "tty",
    "loop",
    "vhost-net",
    "tcp",
    "udp",
];

/// True for a path naming a disk block device (see `is_block_device`).
pub(crate) fn names_disk(arg: &Arg) -> bool {
    is_block_device(arg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_devices_are_recognized() {
        for device in [
            "/dev/sda",
            "/dev/sda1",
            "/dev/nvme0n1",
            "/dev/mapper/root",
            "/dev/disk/by-id/x",
            "/dev//sdb",
            "/dev/md0",
            "/dev/mmcblk0",
            "/dev/xvda",
            "/dev/dm-0",
            "/dev/disk2",
        ] {
            assert!(is_block_device(&Arg::literal(device)), "{device}");
        }
        for other in [
            "/dev/null",
            "/dev/stdout",
            "/dev/stderr",
            "/dev/tty",
            "/dev/fd/1",
            "/dev/loop0",
            "/dev/zero",
            "/dev/shm/x",
            "./sda",
            "/dev/sd",
            "/dev/fd/3",
            "/dev/pts/0",
        ] {
            assert!(!is_block_device(&Arg::literal(other)), "{other}");
        }
        let glob = |text: &str| Arg {
            glob: true,
            ..Arg::literal(text)
        };
        assert!(is_block_device(&glob("/dev/sd*")));
        assert!(is_block_device(&glob("/dev/sd[a]")));
        assert!(!is_block_device(&glob("/dev/tty*")));
        assert!(is_block_device(&Arg::literal("/dev/block/8:0")));
        assert!(is_block_device(&Arg::literal("/dev/vg0/root")));
        assert!(shell_glob_matches(b"sd[!b-z]", b"sda"));
        assert!(!shell_glob_matches(b"sd[!a]", b"sda"));
    }
}
