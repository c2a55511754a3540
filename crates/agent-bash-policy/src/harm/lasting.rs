//! What outlasts the session: privileges granted, code planted to run later (cron, start-up
//! files, systemd units), and the files a command writes to get there.

use super::*;

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
];

/// True if `form` makes a file set-user-ID or set-group-ID, or gives it capabilities.
pub(crate) fn privilege(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    match &*name {
        // The password and sudo files opened to others.
        "chmod"
            if operands(form).any(|arg| {
                matches!(
                    path(&arg.text).as_str(),
                    "/etc/shadow"
                        | "/etc/gshadow"
                        | "/etc/sudoers"
                        | "/etc/passwd"
                        | "/var/run/docker.sock"
                        | "/run/docker.sock"
                )
            }) =>
        {
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
            form.iter().skip(1).any(|arg| {
                arg.text.split(',').any(|group| {
                    matches!(
                        group,
                        "sudo"
                            | "wheel"
                            | "admin"
                            | "root"
                            | "docker"
                            | "disk"
                            | "shadow"
                            | "lxd"
                            | "libvirt"
                            | "adm"
                    )
                })
            }) || (name == "useradd" && has(form, &["-o", "--non-unique"]))
                || (name == "usermod"
                    && form.windows(2).any(|pair| {
                        matches!(pair[0].text.as_str(), "-u" | "--uid") && pair[1].text == "0"
                    }))
        }
        "visudo" | "vipw" | "vigr" | "chpasswd" | "newusers" => true,
        // Administrator rights granted on a cloud account or a repository.
        "aws" | "gcloud" | "az" | "gh" => grants_admin(form),
        // A password typed into the line for a root shell (`echo pw | sudo -S su -`).
        "sudo"
            if has(form, &["-S", "--stdin"])
                && found
                    .redirects
                    .iter()
                    .any(|redirect| redirect.body.is_some())
                && commands::wrapped_command(form)
                    .and_then(|at| form.get(at))
                    .is_some_and(|program| {
                        matches!(basename(&program.text), "su" | "sudo")
                            || commands::is_shell(basename(&program.text))
                    }) =>
        {
            true
        }
        // A root shell, or the namespaces of init: root on the host.
        "pkexec" => form
            .iter()
            .skip(1)
            .any(|arg| commands::is_shell(basename(&arg.text))),
        // A shell in init's namespaces: root on the host from inside a container.
        "nsenter" => {
            let init = form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-t" | "--target") && pair[1].text == "1"
            }) || form
                .iter()
                .any(|arg| arg.text == "--target=1" || arg.text == "-t1");
            let shell = commands::wrapped_command(form)
                .and_then(|at| form.get(at))
                .is_some_and(|program| commands::is_shell(basename(&program.text)));
            init && shell
        }
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

/// True if a program named `source` put at `target` would run in place of another program:
/// `bash` as `ls`, `./evil` as `git`. Not a flavour or version of the same one (`python3`
/// as `python`, `nvim` as `vim`, `gmake` as `make`), nor a known drop-in replacement
/// (`podman` as `docker`), nor a name only known at run time (`$(which nvim)`).
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

/// True if `form` installs a job that runs later: `crontab FILE` or `crontab -` (not
/// `-l`), `at`, `batch`, `systemctl enable` of a user or system unit written elsewhere.
pub(crate) fn persistence(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    match &*name {
        "crontab" => !has(form, &["-l", "-r", "-e", "-V", "--help"]) || has(form, &["-"]),
        "at" | "batch" => !has(form, &["-l", "-d", "-r", "-c", "-V"]),
        "systemctl" => {
            let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
            words.iter().any(|word| matches!(*word, "link" | "preset"))
                || (words.contains(&"enable") && words.contains(&"--now"))
                || words.iter().any(|word| {
                    word.ends_with(".service") && (word.starts_with('/') || word.starts_with('.'))
                }) && words.contains(&"enable")
        }
        "loginctl" => form.get(1).is_some_and(|sub| sub.text == "enable-linger"),
        "git" => sets_global_hooks(form) || redirects_git(form),
        "npm" | "pnpm" | "yarn" => sets_package_manager_shell(form) || redirects_registry(form),
        "pip" | "pip3" => redirects_registry(form),
        // Go's module proxy set elsewhere, or its checksum database turned off.
        "go" => {
            form.iter().any(|arg| arg.text == "env")
                && form.iter().any(|arg| arg.text == "-w")
                && form.iter().any(|arg| {
                    arg.text == "GOSUMDB=off"
                        || arg.text.starts_with("GOINSECURE=")
                        || arg.text.starts_with("GOPROXY=")
                            && !arg.text.contains("proxy.golang.org")
                            && arg.text != "GOPROXY=direct"
                })
        }
        "launchctl" => form.iter().any(|arg| {
            matches!(
                arg.text.as_str(),
                "load" | "bootstrap" | "enable" | "submit"
            )
        }),
        // A start-up file made a link to a project's or a scratch file: what runs at login
        // is whatever that file holds then (a dotfiles folder's link asks, as any unseen
        // start-up text does).
        "ln" if operands(form).next().is_some_and(|source| {
            let text = source.text.as_str();
            ["$PWD", "${PWD}", "./", "/tmp/", "/dev/shm/", "/var/tmp/"]
                .iter()
                .any(|start| text.starts_with(start))
                || !text.starts_with(['/', '~', '$'])
        }) =>
        {
            written_paths(found, form)
                .iter()
                .any(|target| STARTUP_FILES.iter().any(|place| under(target, place)))
        }
        // A package manager's own configuration pointed at another registry or mirror, or a
        // CI workflow given a step that runs downloaded code.
        _ if written_paths(found, form).iter().any(|target| {
            let registry_config = [
                "~/.cargo/config.toml",
                "~/.cargo/config",
                "~/.npmrc",
                "~/.yarnrc.yml",
                "~/.pypirc",
                "~/.config/pip/pip.conf",
                "~/.pip/pip.conf",
                "~/.m2/settings.xml",
                "~/.gradle/init.gradle",
            ]
            .contains(&target.as_str());
            let workflow = target.contains(".github/workflows/")
                || target.ends_with(".gitlab-ci.yml")
                || target.contains(".circleci/");
            let text = written_text(found, form).unwrap_or_else(|| {
                form.iter()
                    .skip(1)
                    .map(|arg| arg.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            (registry_config
                && ["replace-with", "registry", "index-url", "<mirror", "proxy"]
                    .iter()
                    .any(|key| text.contains(key)))
                || (workflow
                    && (text.contains("curl") || text.contains("wget"))
                    && ["| sh", "|sh", "| bash", "|bash"]
                        .iter()
                        .any(|pipe| text.contains(pipe)))
        }) =>
        {
            true
        }
        _ => {
            startup_write(found, form) == Some(true)
                || written_paths(found, form)
                    .iter()
                    .any(|target| runs_at_interpreter_start(target))
        }
    }
}

/// True for `git config --global|--system core.hooksPath DIR`: the hooks there run in every
/// repository of the user (or of the machine).
fn sets_global_hooks(form: &[Arg]) -> bool {
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    words.contains(&"config")
        && words
            .iter()
            .any(|word| matches!(*word, "--global" | "--system"))
        && words
            .iter()
            .any(|word| word.eq_ignore_ascii_case("core.hooksPath"))
}

/// True for `git config --global` (or `--system`) settings that hand git's traffic or the
/// user's credentials to someone else: `url.X.insteadOf`, `http(s).proxy`, a
/// `credential.helper` that is a shell snippet.
fn redirects_git(form: &[Arg]) -> bool {
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let global = words
        .iter()
        .any(|word| matches!(*word, "--global" | "--system"));
    let Some(at) = words.iter().position(|word| {
        let key = word.to_ascii_lowercase();
        (key.starts_with("url.")
            && (key.ends_with(".insteadof") || key.ends_with(".pushinsteadof")))
            || matches!(
                key.as_str(),
                "http.proxy" | "https.proxy" | "credential.helper"
            )
    }) else {
        return false;
    };
    let key = words[at].to_ascii_lowercase();
    let value = words.get(at + 1).copied().unwrap_or("");
    // A proxy at a bare address (a corporate proxy has a name); a shell-snippet helper.
    let to_address = || {
        let host = value.split("://").last().unwrap_or("");
        let host = host.rsplit('@').next().unwrap_or(host);
        host.split([':', '/']).next().is_some_and(|host| {
            host.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| !ip.is_loopback())
        })
    };
    let harmful = match key.as_str() {
        "credential.helper" => value.starts_with('!'),
        "http.proxy" | "https.proxy" => to_address(),
        _ => true,
    };
    words.contains(&"config") && global && harmful
}

/// True for a package manager told to fetch from another registry or index over plain
/// http or a bare address (`npm config set registry http://203.0.113.4:4873/`, `pip config
/// set global.index-url …`): every later install comes from there.
fn redirects_registry(form: &[Arg]) -> bool {
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let Some(set) = words
        .windows(2)
        .position(|pair| pair[0] == "config" && pair[1] == "set")
    else {
        return false;
    };
    let rest = &words[set + 2..];
    let key = rest
        .first()
        .map_or("", |key| key.split('=').next().unwrap_or(""));
    let value = rest
        .first()
        .and_then(|key| key.split_once('=').map(|(_, value)| value))
        .or_else(|| rest.get(1).copied())
        .unwrap_or("");
    let redirecting = matches!(key, "registry" | "proxy" | "https-proxy")
        || key.ends_with("index-url")
        || key.ends_with(":registry");
    redirecting
        && !value.contains("registry.npmjs.org")
        && !value.contains("pypi.org")
        && !value.contains("yarnpkg.com")
}

/// True for `npm config set script-shell X` (and `shell`, `node-options`, `git`): every
/// later `npm run` (or package install) goes through the program set there.
fn sets_package_manager_shell(form: &[Arg]) -> bool {
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let Some(set) = words
        .windows(2)
        .position(|pair| pair[0] == "config" && pair[1] == "set")
    else {
        return false;
    };
    words[set + 2..]
        .iter()
        .filter(|word| !word.starts_with('-'))
        .take(1)
        .any(|key| {
            let key = key.split('=').next().unwrap_or("");
            matches!(
                key,
                "script-shell" | "shell" | "node-options" | "git" | "scriptShell" | "nodeOptions"
            )
        })
}

/// True for a file an interpreter runs whenever it starts, wherever it is installed:
/// Python's `usercustomize.py`/`sitecustomize.py` and `.pth` files in a packages directory
/// (a line starting with `import` runs).
fn runs_at_interpreter_start(target: &str) -> bool {
    let file = basename(target);
    matches!(file, "usercustomize.py" | "sitecustomize.py")
        || (file.ends_with(".pth")
            && (target.contains("-packages") || target.contains("$(") || target.contains('`')))
}

/// For a command writing a shell start-up file: `Some(true)` if what it writes does more
/// than set the environment (`export`, `alias`, `source`, assignments, comments), `Some(false)`
/// if that is all it does, `None` if it writes none or what it writes is not known.
fn startup_write(found: &Found, form: &[Arg]) -> Option<bool> {
    let targets = written_paths(found, form);
    // A project's `.envrc` runs on every `cd` into it once direnv allows it.
    if !targets.iter().any(|target| {
        STARTUP_FILES.iter().any(|place| under(target, place)) || basename(target) == ".envrc"
    }) {
        return None;
    }
    let text = written_text(found, form)?;
    Some(!text.lines().all(sets_environment_only))
}

/// What `form` writes when it is known: `echo`/`printf` words, or a here-document's text.
fn written_text(found: &Found, form: &[Arg]) -> Option<String> {
    if let Some(body) = found
        .redirects
        .iter()
        .find_map(|redirect| redirect.body.clone())
    {
        return Some(body);
    }
    if let Some((_, text)) = sql_copies(found, form).into_iter().next() {
        return text;
    }
    // `sed -i '1i TEXT'` / `'$a TEXT'`: the lines sed adds.
    if name(form) == "sed"
        && let Some(added) = form.iter().skip(1).find_map(|arg| {
            let script = arg
                .text
                .trim_start_matches(|c: char| c.is_ascii_digit() || c == '$');
            script
                .strip_prefix("i ")
                .or_else(|| script.strip_prefix("a "))
                .or_else(|| script.strip_prefix("i\\"))
                .or_else(|| script.strip_prefix("a\\"))
        })
    {
        return Some(added.to_owned());
    }
    match &*name(form) {
        "echo" | "printf" => Some(
            form.iter()
                .skip(1)
                .filter(|arg| !arg.text.starts_with('-'))
                .map(|arg| arg.text.replace("\\n", "\n"))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

/// Hidden home folders that tools install programs into, so a `PATH` led by them is
/// everyday set-up.
const TOOL_FOLDERS: &[&str] = &[
    "cargo",
    "local",
    "npm-global",
    "npm",
    "pyenv",
    "rbenv",
    "nodenv",
    "goenv",
    "bun",
    "deno",
    "yarn",
    "poetry",
    "volta",
    "asdf",
    "sdkman",
    "jenv",
    "fnm",
    "go",
    "krew",
    "dotnet",
    "rd",
    "linuxbrew",
    "nix-profile",
    "opam",
    "pulumi",
    "tfenv",
    "rvm",
    "gem",
    "composer",
    "config",
    "mix",
    "ghcup",
    "cabal",
    "elan",
    "wasmer",
    "wasmtime",
    "foundry",
    "juliaup",
    "pixi",
    "rye",
    "fly",
    "docker",
    "kube",
    "istioctl",
    "nvm",
    "cargo-target",
    "rustup",
    "platformio",
    "pub-cache",
];

/// True for a start-up line that only sets the environment or loads a file.
fn sets_environment_only(line: &str) -> bool {
    let line = line.trim();
    let first = line.split_whitespace().next().unwrap_or("");
    // Variables whose value makes every later program or prompt run code.
    const HOOKS: &[&str] = &[
        "LD_PRELOAD",
        "LD_AUDIT",
        "PROMPT_COMMAND",
        "BASH_ENV",
        "StrictHostKeyChecking=no",
        "UserKnownHostsFile=/dev/null",
        "PS0=",
        "NODE_OPTIONS",
        "PYTHONSTARTUP",
        "PERL5OPT",
        "RUBYOPT",
        "trap ",
    ];
    if HOOKS.iter().any(|hook| line.contains(hook)) {
        return false;
    }
    // A file sourced from a scratch or cache place, or a hidden one: code, not settings.
    if matches!(first, "source" | ".")
        && line.split_whitespace().nth(1).is_some_and(|sourced| {
            let sourced = sourced.trim_matches(['"', '\'']);
            [
                "/tmp/",
                "/dev/shm/",
                "/var/tmp/",
                "~/.cache/",
                "$HOME/.cache/",
            ]
            .iter()
            .any(|place| sourced.starts_with(place))
                || basename(sourced).starts_with('.') && !basename(sourced).ends_with("rc")
        })
    {
        return false;
    }
    // `PATH` led by a hidden home folder that no tool would name so (`~/.x/bin`, a cache or
    // scratch folder): every command name can be taken over from there.
    if line.contains("PATH=")
        && let Some(value) = line.split("PATH=").nth(1)
        && let Some(first_dir) = value.trim_matches(['"', '\'']).split(':').next()
        && let Some(hidden) = first_dir
            .strip_prefix("$HOME/.")
            .or_else(|| first_dir.strip_prefix("${HOME}/."))
            .or_else(|| first_dir.strip_prefix("~/."))
        && let Some(folder) = hidden.split('/').next()
        && !TOOL_FOLDERS.contains(&folder)
        && (folder.len() <= 2 || folder.contains("cache") || folder.contains("tmp"))
    {
        return false;
    }
    // `PATH` led by a scratch folder anyone can write to.
    if line.contains("PATH=")
        && let Some(value) = line.split("PATH=").nth(1)
        && ["/tmp/", "/dev/shm/", "/var/tmp/"]
            .iter()
            .any(|scratch| value.trim_matches(['"', '\'']).starts_with(scratch))
    {
        return false;
    }
    // An alias that takes the name of a program people trust with passwords or keys.
    if let Some(name) = line
        .strip_prefix("alias ")
        .and_then(|rest| rest.split('=').next())
        && matches!(
            name.trim(),
            "sudo"
                | "su"
                | "ssh"
                | "scp"
                | "git"
                | "passwd"
                | "gpg"
                | "doas"
                | "pkexec"
                | "aws"
                | "kubectl"
                | "docker"
                | "ls"
                | "cd"
        )
    {
        return false;
    }
    line.is_empty()
        || line.starts_with('#')
        || matches!(
            first,
            "export"
                | "alias"
                | "source"
                | "."
                | "unalias"
                | "set"
                | "shopt"
                | "umask"
                | "bind"
                | "complete"
                | "fpath+=("
                | "setopt"
                | "autoload"
        )
        || (commands::is_assignment(first)
            && !line.contains("$(")
            && !line.contains('`')
            && !line.contains(';'))
        || (line.starts_with("eval \"$(")
            && line.contains(" init")
            && !line.contains("curl")
            && !line.contains("wget"))
        || (line.starts_with("[ -") && line.contains("] && . ")
            || line.starts_with("[ -") && line.contains("] && source "))
}

/// Files a database shell writes with SQL's `COPY (SELECT 'text') TO 'path'` (DuckDB,
/// PostgreSQL) or `.output path` (SQLite): each path, with the text when one literal is
/// all the query selects.
fn sql_copies(found: &Found, form: &[Arg]) -> Vec<(String, Option<String>)> {
    if !matches!(&*name(form), "duckdb" | "sqlite3" | "psql") {
        return Vec::new();
    }
    let texts = form.iter().skip(1).map(|arg| arg.text.as_str()).chain(
        found
            .redirects
            .iter()
            .filter_map(|redirect| redirect.body.as_deref()),
    );
    let quoted = |text: &str| {
        let rest = text.trim_start().strip_prefix('\'')?;
        rest.split_once('\'').map(|(inside, _)| inside.to_owned())
    };
    let mut out = Vec::new();
    for text in texts {
        let upper = text.to_ascii_uppercase();
        if let Some(copy) = upper.find("COPY")
            && let Some(to) = upper[copy..].find(" TO ")
            && let Some(target) = quoted(&text[copy + to + 4..])
        {
            let selected = upper[copy..copy + to]
                .find("SELECT")
                .and_then(|at| quoted(&text[copy + at + 6..]));
            out.push((crate::paths::home_spellings(&target).into_owned(), selected));
        }
        for line in text.lines() {
            if let Some(target) = line
                .trim_start()
                .strip_prefix(".output ")
                .or_else(|| line.trim_start().strip_prefix(".once "))
            {
                out.push((target.trim().to_owned(), None));
            }
        }
    }
    out
}

/// A reason to ask when `form` writes a shell start-up file with text that is not known.
pub(crate) fn startup_write_unseen(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let targets = written_paths(found, form);
        let startup = targets.iter().any(|target| STARTUP_FILES.iter().any(|place| under(target, place)));
        (startup && written_text(found, form).is_none()).then(|| {
            "this changes a shell start-up or tool configuration file with text that cannot be seen here; it would run in later sessions".to_owned()
        })
    })
}

/// Paths `form` writes: redirections, `tee`, the last operand of `cp`/`mv`/`install`/`ln`,
/// `dd of=`, `sed -i` files, `truncate`.
pub(crate) fn written_paths(found: &Found, form: &[Arg]) -> Vec<String> {
    const WRITERS: &[&str] = &[
        "tee", "truncate", "touch", "sponge", "cp", "mv", "install", "ginstall", "ln", "rsync",
        "scp", "dd", "sed", "perl", "find", "sort", "yq",
    ];
    let copies = sql_copies(found, form);
    if !copies.is_empty() {
        return copies
            .into_iter()
            .map(|(target, _)| home_of_someone(&path(&target)))
            .collect();
    }
    if !found.redirects.iter().any(|redirect| redirect.writes())
        && form
            .first()
            .is_none_or(|first| !WRITERS.contains(&basename(&first.text)))
    {
        return Vec::new();
    }
    let spelled = |text: &str| home_of_someone(&path(&crate::paths::home_spellings(text)));
    let mut paths: Vec<String> = found
        .redirects
        .iter()
        .filter(|redirect| redirect.writes())
        .map(|redirect| spelled(&redirect.target.text))
        .collect();
    let name = name(form);
    let operands: Vec<&Arg> = operands(form).collect();
    match &*name {
        "tee" | "truncate" | "touch" | "sponge" => {
            paths.extend(operands.iter().map(|arg| spelled(&arg.text)))
        }
        "yq" if form
            .iter()
            .any(|arg| arg.text == "-i" || arg.text == "--inplace") =>
        {
            paths.extend(operands.iter().skip(1).map(|arg| spelled(&arg.text)));
        }
        "sort" => paths.extend(
            form.windows(2)
                .filter(|pair| pair[0].text == "-o")
                .map(|pair| spelled(&pair[1].text)),
        ),
        "cp" | "mv" | "install" | "ginstall" | "ln" | "rsync" | "scp" if operands.len() >= 2 => {
            if let Some(last) = operands.last() {
                paths.push(path(&last.text));
            }
        }
        "dd" => paths.extend(
            form.iter()
                .filter_map(|arg| arg.text.strip_prefix("of="))
                .map(path),
        ),
        // `find -fprint FILE` (and -fls, -fprintf, -fprint0) empties FILE and writes it.
        "find" => paths.extend(
            form.windows(2)
                .filter(|pair| {
                    matches!(
                        pair[0].text.as_str(),
                        "-fprint" | "-fprint0" | "-fls" | "-fprintf"
                    )
                })
                .map(|pair| spelled(&pair[1].text)),
        ),
        "sed" | "perl"
            if form.iter().any(|arg| {
                arg.text.starts_with("-i")
                    || arg.text == "--in-place"
                    || (arg.text.starts_with('-')
                        && !arg.text.starts_with("--")
                        && arg.text.contains('i'))
            }) =>
        {
            paths.extend(operands.iter().skip(1).map(|arg| path(&arg.text)));
        }
        _ => {}
    }
    paths
}
