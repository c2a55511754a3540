//! Privilege: files made set-user-ID or given capabilities, accounts put in an admin group,
//! root shells, containers given the host, programs planted where they stand in for others.

use super::*;

/// The password, group and sudo files and the container engine's socket: opened to
/// others, they are root for anyone.
const ACCOUNT_FILES: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/passwd",
    "/var/run/docker.sock",
    "/run/docker.sock",
];

/// Groups whose members are root, or can become it.
const ADMIN_GROUPS: &[&str] = &[
    "sudo", "wheel", "admin", "root", "docker", "disk", "shadow", "lxd", "libvirt", "adm",
];

/// True if `form` makes a file set-user-ID or set-group-ID, or gives it capabilities.
pub(crate) fn privilege(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    match &*name {
        // The password and sudo files opened to others.
        "chmod" if operands(form).any(|arg| ACCOUNT_FILES.contains(&path(&arg.text).as_str())) => {
            true
        }
        "chmod" => {
            operands(form)
                .next()
                .is_some_and(|mode| sets_id_bit(&mode.text))
                || form.iter().skip(1).any(|arg| {
                    arg.text.starts_with('-')
                        && sets_id_bit(&arg.text[1..])
                        && arg.text.contains('s')
                })
        }
        "setcap" => !has(form, &["-v", "-h"]),
        "install"
            if written_paths(found, form)
                .iter()
                .any(|target| PERSISTENT_PLACES.iter().any(|place| under(target, place))) =>
        {
            true
        }
        "install" | "ginstall" => {
            form.iter().skip(1).any(|arg| {
                arg.text
                    .strip_prefix("--mode=")
                    .or_else(|| arg.text.strip_prefix("-m"))
                    .is_some_and(sets_id_bit)
            }) || form
                .windows(2)
                .any(|pair| pair[0].text == "-m" && sets_id_bit(&pair[1].text))
                || plants_a_program(found, form, &install_operands(form))
        }
        "usermod" | "gpasswd" | "adduser" | "addgroup" | "useradd" => {
            grants_admin_account(&name, form)
        }
        "visudo" | "vipw" | "vigr" | "chpasswd" | "newusers" => true,
        // Administrator rights granted on a cloud account or a repository.
        "aws" | "gcloud" | "az" | "gh" => grants_admin(form),
        // A password typed into the line for a root shell (`echo pw | sudo -S su -`).
        "sudo" if root_shell_with_typed_password(found, form) => true,
        // A root shell, or the namespaces of init: root on the host.
        "pkexec" => form
            .iter()
            .skip(1)
            .any(|arg| commands::is_shell(basename(&arg.text))),
        // A shell in init's namespaces: root on the host from inside a container.
        "nsenter" => shell_in_init_namespaces(form),
        "kubectl" | "oc" => form.iter().any(|arg| {
            let text = arg.text.replace(' ', "");
            text.contains("\"privileged\":true")
                || text.contains("\"hostPID\":true")
                || text.contains("hostPath")
                || text.contains("cluster-admin")
        }),
        "docker" | "podman" | "nerdctl" => {
            host_into_container(form)
                || form
                    .iter()
                    .any(|arg| matches!(arg.text.as_str(), "--pid=host" | "--userns=host"))
                    && form.iter().any(|arg| arg.text == "--privileged")
        }
        "passwd" => operands(form).any(|arg| arg.text == "root") || has(form, &["-d", "--delete"]),
        "ln" | "cp" | "mv" => plants_a_program(found, form, &operands(form).collect::<Vec<_>>()),
        _ => written_paths(found, form).iter().any(|target| {
            PERSISTENT_PLACES.iter().any(|place| under(target, place))
                || shadows_a_program(target)
                || (target == "/etc/hosts"
                    && written_text(found, form).is_some_and(|text| maps_away(&text)))
        }),
    }
}

/// True if an account is put in an admin group, made a second root (`useradd -o`), or
/// given root's user id.
fn grants_admin_account(name: &str, form: &[Arg]) -> bool {
    form.iter().skip(1).any(|arg| {
        arg.text
            .split(',')
            .any(|group| ADMIN_GROUPS.contains(&group))
    }) || (name == "useradd" && has(form, &["-o", "--non-unique"]))
        || (name == "usermod"
            && form
                .windows(2)
                .any(|pair| matches!(pair[0].text.as_str(), "-u" | "--uid") && pair[1].text == "0"))
}

/// True for `sudo -S` given a password on input to run a root shell (`su`, `sudo`, a
/// shell).
fn root_shell_with_typed_password(found: &Found, form: &[Arg]) -> bool {
    has(form, &["-S", "--stdin"])
        && found
            .redirects
            .iter()
            .any(|redirect| redirect.body.is_some())
        && commands::wrapped_command(form)
            .and_then(|at| form.get(at))
            .is_some_and(|program| {
                matches!(basename(&program.text), "su" | "sudo")
                    || commands::is_shell(basename(&program.text))
            })
}

/// True for `nsenter` into init's namespaces (`-t 1`) running a shell.
fn shell_in_init_namespaces(form: &[Arg]) -> bool {
    let init = form
        .windows(2)
        .any(|pair| matches!(pair[0].text.as_str(), "-t" | "--target") && pair[1].text == "1")
        || form
            .iter()
            .any(|arg| arg.text == "--target=1" || arg.text == "-t1");
    let shell = commands::wrapped_command(form)
        .and_then(|at| form.get(at))
        .is_some_and(|program| commands::is_shell(basename(&program.text)));
    init && shell
}

/// True if hosts-file text maps a name to an address other than this machine's
/// (`6.6.6.6 github.com`): the name's traffic goes elsewhere for every program.
fn maps_away(text: &str) -> bool {
    text.lines().any(|line| {
        let mut words = line.split_whitespace();
        let address = words.next().unwrap_or("");
        words.next().is_some()
            && address
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| !ip.is_loopback() && !ip.is_unspecified())
    })
}

/// True if `form` grants administrator rights on a remote system: an AWS administrator or
/// IAM policy attached, a Google Cloud owner or editor role, an Azure Owner or
/// Contributor role, a repository collaborator made admin or maintainer.
fn grants_admin(form: &[Arg]) -> bool {
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let has = |word: &str| words.contains(&word);
    let mentions = |needle: &str| words.iter().any(|word| word.contains(needle));
    match &*name(form) {
        "aws" => {
            // New keys or a console password for another user: their rights, taken.
            has("iam")
                && words.iter().any(|word| {
                    matches!(
                        *word,
                        "create-access-key" | "create-login-profile" | "update-login-profile"
                    )
                })
                || has("iam")
                    && words.iter().any(|word| {
                        matches!(
                            *word,
                            "attach-user-policy" | "attach-role-policy" | "attach-group-policy"
                        )
                    })
                    && (mentions("AdministratorAccess") || mentions("IAMFullAccess"))
                || (has("iam")
                    && words
                        .iter()
                        .any(|word| word.starts_with("put-") && word.ends_with("-policy"))
                    && words
                        .iter()
                        .any(|word| word.replace(' ', "").contains("\"Action\":\"*\"")))
        }
        "gcloud" => {
            mentions("add-iam-policy-binding")
                && (mentions("roles/owner") || mentions("roles/editor"))
        }
        "az" => {
            has("role")
                && has("assignment")
                && has("create")
                && words
                    .iter()
                    .any(|word| matches!(*word, "Owner" | "Contributor" | "--role=Owner"))
        }
        "gh" => {
            has("api")
                && mentions("/collaborators/")
                && (mentions("permission=admin") || mentions("permission=maintain"))
        }
        _ => false,
    }
}

/// True if `form` runs a container given the host's root, its configuration or the
/// container engine's socket (`docker run -v /:/host …`): root on the host.
fn host_into_container(form: &[Arg]) -> bool {
    const HOST: &[&str] = &[
        "~",
        "~/.ssh",
        "~/.aws",
        "~/.gnupg",
        "~/.kube",
        "~/.docker",
        "/",
        "/etc",
        "/root",
        "/boot",
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/run/podman/podman.sock",
        "/proc",
        "/sys",
        "/dev",
        "/usr",
        "/var",
    ];
    form.windows(2).any(|pair| {
        let value = match pair[0].text.as_str() {
            "-v" | "--volume" => Some(pair[1].text.as_str()),
            _ => None,
        };
        let value = value
            .or_else(|| pair[0].text.strip_prefix("--volume="))
            .or_else(|| {
                pair[0]
                    .text
                    .strip_prefix("-v")
                    .filter(|rest| rest.starts_with('/'))
            });
        value.is_some_and(|value| {
            HOST.contains(&path(value.split(':').next().unwrap_or("")).as_str())
        })
    }) || form.iter().any(|arg| {
        arg.text.starts_with("--mount=")
            && (arg.text.contains("source=/,")
                || arg.text.contains("src=/,")
                || arg.text.ends_with("source=/")
                || arg.text.ends_with("src=/"))
    })
}

/// Programs a copy in a `PATH` directory would stand in for.
const SHADOWED: &[&str] = &[
    "git",
    "ls",
    "sudo",
    "su",
    "ssh",
    "scp",
    "cat",
    "curl",
    "wget",
    "python",
    "python3",
    "node",
    "npm",
    "npx",
    "bash",
    "sh",
    "zsh",
    "cp",
    "mv",
    "rm",
    "make",
    "cargo",
    "rustc",
    "go",
    "docker",
    "kubectl",
    "passwd",
    "id",
    "ps",
    "top",
    "vim",
    "vi",
    "nano",
    "code",
    "which",
    "env",
    "pip",
    "pip3",
    "gpg",
    "ssh-add",
    "ssh-agent",
    "tar",
    "find",
    "grep",
    "sed",
    "awk",
    "gh",
    "aws",
];

/// True if a copy, link or install (`operands`: source first) writes into a place that
/// runs at login or start-up, or puts another program, or one from a scratch directory,
/// under a common program's name in a `PATH` directory.
fn plants_a_program(found: &Found, form: &[Arg], operands: &[&Arg]) -> bool {
    let from_scratch = |source: &str| {
        let source = path(&crate::paths::home_spellings(source));
        ["/tmp/", "/dev/shm/", "/var/tmp/", "~/.cache/"]
            .iter()
            .any(|place| source.starts_with(place))
    };
    let plants = |source: &str, target: &str| {
        PERSISTENT_PLACES.iter().any(|place| under(target, place))
            || ((from_scratch(source) || stands_in(basename(source), target))
                && shadows_a_program(target))
    };
    // `-t DIR` (`--target-directory`): every other operand is a source, landing in DIR.
    if let Some((at, dir)) = target_directory(form) {
        let dir = path(&crate::paths::home_spellings(&dir));
        return operands
            .iter()
            .filter(|source| !std::ptr::eq(**source, &form[at]))
            .any(|source| plants(&source.text, &format!("{dir}/{}", basename(&source.text))));
    }
    let source = operands.first().map_or("", |source| source.text.as_str());
    written_paths(found, form)
        .iter()
        .any(|target| plants(source, target))
}

/// The directory named by `-t DIR`, `--target-directory DIR` or `=DIR`, or by a cluster that
/// ends with `t` (`-st DIR`), and the index of the argument that holds it.
fn target_directory(form: &[Arg]) -> Option<(usize, String)> {
    form.iter().enumerate().skip(1).find_map(|(at, arg)| {
        let text = arg.text.as_str();
        if let Some(dir) = text.strip_prefix("--target-directory=") {
            return Some((at, dir.to_owned()));
        }
        let takes_next = text == "--target-directory"
            || (text.starts_with('-') && !text.starts_with("--") && text.ends_with('t'));
        takes_next
            .then(|| form.get(at + 1).map(|dir| (at + 1, dir.text.clone())))
            .flatten()
    })
}

/// The operands of `install`, without the values of its options (`-m 755`, `-o root`).
fn install_operands(form: &[Arg]) -> Vec<&Arg> {
    let mut operands = Vec::new();
    let mut args = form.iter().skip(1);
    while let Some(arg) = args.next() {
        match arg.text.as_str() {
            "-m" | "-o" | "-g" | "-t" | "-S" | "--mode" | "--owner" | "--group" | "--suffix"
            | "--target-directory" => {
                args.next();
            }
            text if text.starts_with('-') && text.len() > 1 => {}
            _ => operands.push(arg),
        }
    }
    operands
}

/// True if a program named `source` put at `target` would run in place of another program:
/// `bash` as `ls`, `./evil` as `git`. Not a flavour or version of the same one (`python3`
/// as `python`, `nvim` as `vim`, `gmake` as `make`), nor a known drop-in replacement
/// (`podman` as `docker`), nor a name only known at run time (`$(which nvim)`).
fn stands_in(source: &str, target: &str) -> bool {
    const DROP_IN: &[(&str, &str)] = &[
        ("podman", "docker"),
        ("nerdctl", "docker"),
        ("hub", "git"),
        ("doas", "sudo"),
        ("sudo-rs", "sudo"),
        ("busybox", ""),
        ("toybox", ""),
        ("uutils", ""),
        ("coreutils", ""),
        ("dash", "sh"),
        ("mksh", "sh"),
        ("uv", "pip"),
    ];
    let target = basename(target);
    if source.is_empty() || source.contains('$') || source.contains('`') || target.is_empty() {
        return false;
    }
    let flavour = source.contains(target) || target.contains(source);
    let drop_in = DROP_IN
        .iter()
        .any(|(from, to)| source == *from && (to.is_empty() || target == *to));
    !flavour && !drop_in
}

/// True if `target` puts a program named like a common one into a `PATH` directory
/// (`~/.local/bin/git`), where it would run instead of the real one.
fn shadows_a_program(target: &str) -> bool {
    let directory = target
        .rsplit_once('/')
        .map_or("", |(directory, _)| directory);
    [
        "~/.local/bin",
        "~/bin",
        "/usr/local/bin",
        "/usr/local/sbin",
        "/usr/bin",
        "/bin",
        "/usr/sbin",
        "/sbin",
    ]
    .contains(&directory)
        && SHADOWED.contains(&basename(target))
}

/// True if a `chmod` mode sets the set-user-ID or set-group-ID bit (`u+s`, `4755`, `+s`).
fn sets_id_bit(mode: &str) -> bool {
    if mode.bytes().all(|byte| byte.is_ascii_digit()) && mode.len() >= 4 {
        let special = mode.as_bytes()[mode.len() - 4];
        return matches!(special, b'2' | b'4' | b'6' | b'3' | b'5' | b'7');
    }
    mode.split(',').any(|clause| {
        clause
            .split_once(['+', '='])
            .is_some_and(|(who, what)| !who.contains('o') && what.contains('s'))
    })
}
