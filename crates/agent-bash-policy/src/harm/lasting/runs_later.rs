//! Code planted to run later: jobs and services installed, global git hooks and registries
//! redirected, CI workflows and start-up files given code, interpreter start-up files.

use super::*;

/// A package manager's own configuration files: what they name as the registry or mirror
/// is where every later install comes from.
const REGISTRY_CONFIGS: &[&str] = &[
    "~/.cargo/config.toml",
    "~/.cargo/config",
    "~/.npmrc",
    "~/.yarnrc.yml",
    "~/.pypirc",
    "~/.config/pip/pip.conf",
    "~/.pip/pip.conf",
    "~/.m2/settings.xml",
    "~/.gradle/init.gradle",
];

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
        "ln" if links_from_project_or_scratch(form) => written_paths(found, form)
            .iter()
            .any(|target| STARTUP_FILES.iter().any(|place| under(target, place))),
        // A package manager's own configuration pointed at another registry or mirror, or a
        // CI workflow given a step that runs downloaded code.
        _ if redirects_tool_config(found, form) => true,
        _ => {
            startup_write(found, form) == Some(true)
                || written_paths(found, form)
                    .iter()
                    .any(|target| runs_at_interpreter_start(target))
        }
    }
}

/// True if `ln`'s source is a project's or a scratch file (relative, `$PWD`, `/tmp`).
fn links_from_project_or_scratch(form: &[Arg]) -> bool {
    operands(form).next().is_some_and(|source| {
        let text = source.text.as_str();
        ["$PWD", "${PWD}", "./", "/tmp/", "/dev/shm/", "/var/tmp/"]
            .iter()
            .any(|start| text.starts_with(start))
            || !text.starts_with(['/', '~', '$'])
    })
}

/// True if `form` writes a package manager's configuration naming another registry or
/// mirror, or a CI workflow step that pipes a download into a shell.
fn redirects_tool_config(found: &Found, form: &[Arg]) -> bool {
    written_paths(found, form).iter().any(|target| {
        let registry_config = REGISTRY_CONFIGS.contains(&target.as_str());
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
    })
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
    let Some(rest) = config_set(form) else {
        return false;
    };
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
    let Some(rest) = config_set(form) else {
        return false;
    };
    rest.iter()
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

/// The words after `config set` in a package manager's command line (`npm config set
/// registry X` → `registry X`), or `None` when it sets no configuration.
fn config_set(form: &[Arg]) -> Option<Vec<&str>> {
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let set = words
        .windows(2)
        .position(|pair| pair[0] == "config" && pair[1] == "set")?;
    Some(words[set + 2..].to_vec())
}
