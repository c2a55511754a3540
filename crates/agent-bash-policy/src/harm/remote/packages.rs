//! Packages the system cannot run without, and the package managers' removals of them
//! (or removals with the safety checks forced off).

use super::*;

/// Packages the system cannot run without.
const ESSENTIAL_PACKAGES: &[&str] = &[
    "libc6",
    "libc-bin",
    "glibc",
    "glibc-common",
    "musl",
    "bash",
    "dash",
    "coreutils",
    "dpkg",
    "apt",
    "rpm",
    "yum",
    "dnf",
    "pacman",
    "systemd",
    "systemd-sysv",
    "init",
    "login",
    "passwd",
    "util-linux",
    "base-files",
    "base-passwd",
    "debianutils",
    "sed",
    "grep",
    "tar",
    "gzip",
    "findutils",
    "diffutils",
    "perl-base",
    "libpam-modules",
    "libpam-runtime",
    "sudo",
    "linux-image-generic",
    "kernel",
    "kernel-core",
    "grub-pc",
    "grub2",
    "grub-efi-amd64",
    "e2fsprogs",
    "mount",
    "ncurses-base",
    "zlib1g",
    "libselinux1",
    "libstdc++6",
    "libgcc-s1",
    "apk-tools",
    "busybox",
    "filesystem",
    "shadow",
    "shadow-utils",
    "openssl",
    "ca-certificates",
];

/// True if `form` removes a package the system needs, or removes one with the package
/// manager's safety checks forced off.
pub(crate) fn system_packages(_: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    if !matches!(
        &*name,
        "apt"
            | "apt-get"
            | "aptitude"
            | "yum"
            | "dnf"
            | "zypper"
            | "microdnf"
            | "dpkg"
            | "rpm"
            | "pacman"
            | "apk"
    ) {
        return false;
    }
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let removes = match &*name {
        "apt" | "apt-get" | "aptitude" | "yum" | "dnf" | "zypper" | "microdnf" => {
            words.iter().any(|word| {
                matches!(
                    *word,
                    "remove" | "purge" | "autoremove" | "erase" | "rm" | "-R"
                )
            })
        }
        "dpkg" => words.iter().any(|word| {
            matches!(*word, "-r" | "-P" | "--remove" | "--purge") || word.starts_with("--force-")
        }),
        "rpm" => words
            .iter()
            .any(|word| *word == "-e" || *word == "--erase" || word.starts_with("-e")),
        "pacman" => words
            .iter()
            .any(|word| word.starts_with("-R") || *word == "--remove"),
        "apk" => words.iter().any(|word| matches!(*word, "del" | "delete")),
        "snap" | "flatpak" | "brew" | "port" | "nix-env" => false,
        _ => false,
    };
    if !removes {
        return false;
    }
    let forced = words.iter().any(|word| {
        word.starts_with("--force-all")
            || word.starts_with("--force-remove-essential")
            || word.starts_with("--force-depends")
            || *word == "--allow-remove-essential"
            || *word == "--nodeps"
            || (name == "pacman" && word.starts_with("-R") && word.matches('d').count() >= 2)
    });
    forced
        || words.iter().any(|word| {
            let package = word
                .split([':', '='])
                .next()
                .unwrap_or(word)
                .trim_end_matches('*');
            ESSENTIAL_PACKAGES.contains(&package)
                || package.starts_with("linux-image")
                || package.starts_with("libc6")
                || package.starts_with("python3") && package.len() <= 10 && name != "pip"
        })
}
