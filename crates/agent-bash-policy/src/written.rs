//! Files a command line writes and then runs: `curl -o x.sh … && sh x.sh`, `cat > run.sh
//! <<'EOF' … EOF; bash run.sh`, `echo '…' > .git/hooks/pre-commit; git commit`. What such a
//! file holds is known when the line wrote it from literal text (walked as a script), came
//! from the network (a download run), or is unknown (asks). Pure: looks at words.

use crate::commands::{self, ProgramSource, basename};
use crate::words::{Arg, Found, Stdin};

/// What a file written earlier in the line holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Content {
    /// Text the line wrote literally.
    Known(String),
    /// Bytes from the network.
    Download,
    /// A repository cloned from the network (a directory).
    Clone,
    /// Something else: output of a program, a copy of a file the line did not write.
    Unknown,
    /// A copy of (or link to) a program of the system under another name (`cp /bin/rm x`).
    Program(String),
    /// A folder of the user's moved here (`mv ~/.gnupg ~/.cache/.g`): deleting it deletes
    /// that folder.
    Moved(String),
}

/// A path as written files are compared: `./x` is `x`.
fn key(path: &str) -> String {
    let path = path.trim_start_matches("./");
    path.trim_end_matches('/').to_owned()
}

/// Programs that write files their operands name, besides downloaders and redirections.
const WRITERS: &[&str] = &[
    "git",
    "scp",
    "rsync",
    "tar",
    "bsdtar",
    "unzip",
    "cp",
    "mv",
    "install",
    "ln",
    "tee",
    "lwp-download",
];

/// The files (or directories, for clones and archives) `found` writes, with what they hold.
pub(crate) fn writes(found: &Found, earlier: &[(String, Content)]) -> Vec<(String, Content)> {
    let mut out = Vec::new();
    let writes_by_redirect = found.redirects.iter().any(|redirect| redirect.writes());
    for form in found.each_form() {
        let name = commands::program_name(form).unwrap_or_default();
        let name = name.as_ref();
        let downloads = commands::is_downloader(name) || name == "lwp-download";
        out.extend(
            code_downloads(form)
                .into_iter()
                .map(|path| (path, Content::Download)),
        );
        if !writes_by_redirect && !downloads && !WRITERS.contains(&name) {
            continue;
        }
        for redirect in found.redirects.iter().filter(|redirect| redirect.writes()) {
            let content = redirect_content(found, name, form, downloads);
            out.push((key(&redirect.target.text), content));
        }
        if downloads {
            out.extend(
                download_outputs(name, form)
                    .into_iter()
                    .map(|path| (path, Content::Download)),
            );
        }
        out.extend(operand_writes(found, name, form, earlier));
    }
    out
}

/// What a redirection of `found` (whose form `form` is the program `name`) writes: a
/// download, a here-document's text, a literal `echo`/`printf`'s text, a download piped in,
/// or something unknown.
fn redirect_content(found: &Found, name: &str, form: &[Arg], downloads: bool) -> Content {
    if downloads {
        Content::Download
    } else if let Some(body) = found.redirects.iter().find_map(|r| r.body.clone()) {
        Content::Known(body)
    } else if let Some(text) = matches!(name, "echo" | "printf")
        .then(|| crate::printed::printed_known(form))
        .flatten()
    {
        Content::Known(text)
    } else if found.stdin == Stdin::DownloadPipe {
        Content::Download
    } else {
        Content::Unknown
    }
}

/// Words that are not options nor an option's value (`install -m 755 SRC DEST`).
fn operands<'a>(name: &str, form: &'a [Arg]) -> Vec<&'a Arg> {
    form.iter()
        .enumerate()
        .skip(1)
        .filter(|(at, arg)| {
            let value_of_install_option = name == "install"
                && matches!(form[at - 1].text.as_str(), "-m" | "-o" | "-g" | "-S");
            !arg.text.starts_with('-') && !value_of_install_option
        })
        .map(|(_, arg)| arg)
        .collect()
}

/// The files a writer's operands name, with what they hold: the directory `git clone`
/// makes, what `scp`/`rsync` fetch, where an archive downloaded unpacks, a copy or move's
/// target, the files `tee` writes.
fn operand_writes(
    found: &Found,
    name: &str,
    form: &[Arg],
    earlier: &[(String, Content)],
) -> Vec<(String, Content)> {
    let operands = operands(name, form);
    let mut out = Vec::new();
    match name {
        "git" if form.iter().any(|arg| arg.text == "clone") => {
            let directory = clone_directory(&operands);
            if !directory.is_empty() {
                out.push((key(&directory), Content::Clone));
            }
        }
        "scp" | "rsync" if operands.len() >= 2 => {
            let remote = operands[..operands.len() - 1]
                .iter()
                .any(|arg| arg.text.contains(':'));
            if remote && let Some(last) = operands.last() {
                out.push((key(&last.text), Content::Download));
            }
        }
        "tar" | "bsdtar" | "unzip"
            if found.stdin == Stdin::DownloadPipe || reads_written_download(form, earlier) =>
        {
            let directory = form
                .windows(2)
                .find(|pair| matches!(pair[0].text.as_str(), "-C" | "--directory" | "-d"))
                .map_or(".".to_owned(), |pair| pair[1].text.clone());
            out.push((key(&directory), Content::Download));
        }
        "cp" | "mv" | "install" | "ln" if operands.len() >= 2 => {
            out.extend(copy_write(name, &operands, earlier));
        }
        "tee" => out.extend(operands.iter().map(|arg| {
            let content = if found.stdin == Stdin::DownloadPipe {
                Content::Download
            } else {
                Content::Unknown
            };
            (key(&arg.text), content)
        })),
        _ => {}
    }
    out
}

/// The directory `git clone` makes: the one named after the URL, or else the URL's last
/// part without `.git`. Empty if there is no URL.
fn clone_directory(operands: &[&Arg]) -> String {
    let after: Vec<&&Arg> = operands
        .iter()
        .skip_while(|arg| arg.text != "clone")
        .skip(1)
        .collect();
    match after.as_slice() {
        [_, directory, ..] => directory.text.clone(),
        [url] => basename(url.text.trim_end_matches('/'))
            .trim_end_matches(".git")
            .to_owned(),
        [] => String::new(),
    }
}

/// What `cp`, `mv`, `install` or `ln` (`name`) writes at its last operand: what the line
/// wrote at the source, a system program, a folder of the user's moved, or unknown.
fn copy_write(
    name: &str,
    operands: &[&Arg],
    earlier: &[(String, Content)],
) -> Option<(String, Content)> {
    let source = key(&operands[0].text);
    let home_folder = name == "mv"
        && ["~/", "$HOME/", "${HOME}/"]
            .iter()
            .any(|home| operands[0].text.starts_with(home));
    let content = lookup(earlier, &source)
        .or_else(|| system_program(&operands[0].text).map(Content::Program))
        .or_else(|| home_folder.then(|| Content::Moved(operands[0].text.clone())))
        .unwrap_or(Content::Unknown);
    let last = operands.last()?;
    // Into a folder (`mv ~/x .`, `mv ~/x dir/`): the file keeps its name there.
    let target =
        if matches!(content, Content::Moved(_)) && (last.text == "." || last.text.ends_with('/')) {
            format!(
                "{}/{}",
                last.text.trim_end_matches('/'),
                basename(operands[0].text.trim_end_matches('/'))
            )
        } else {
            last.text.clone()
        };
    Some((key(&target), content))
}

/// Files interpreter code downloads to (`copy("http://…", "/tmp/x")` in PHP,
/// `urlretrieve(URL, "x")` in Python): the path literals of code that names a URL and a
/// call that saves one.
fn code_downloads(form: &[Arg]) -> Vec<String> {
    let Some(ProgramSource::Inline(code)) = commands::program_source(form) else {
        return Vec::new();
    };
    let code = code.text.as_str();
    let saves = [
        "copy(",
        "urlretrieve(",
        "file_put_contents(",
        "download_file(",
        "download(",
    ]
    .iter()
    .any(|call| code.contains(call));
    if !saves || !(code.contains("http://") || code.contains("https://")) {
        return Vec::new();
    }
    code.split(['"', '\''])
        .skip(1)
        .step_by(2)
        .filter(|literal| {
            (literal.starts_with('/') || literal.starts_with("./")) && !literal.contains(' ')
        })
        .map(key)
        .collect()
}

/// True if `form` reads an archive the line downloaded (`tar xf a.tgz` after `curl -o a.tgz`).
fn reads_written_download(form: &[Arg], earlier: &[(String, Content)]) -> bool {
    form.iter()
        .any(|arg| lookup(earlier, &key(&arg.text)) == Some(Content::Download))
}

/// Files a downloader writes: `-o F`, `-O` (the URL's last part), `--output-document=F`.
fn download_outputs(name: &str, form: &[Arg]) -> Vec<String> {
    let mut out = Vec::new();
    let url_name = || {
        form.iter()
            .find(|arg| {
                arg.text.contains("://") || arg.text.contains('.') && !arg.text.starts_with('-')
            })
            .map(|arg| key(basename(arg.text.split(['?', '#']).next().unwrap_or(""))))
    };
    let mut words = form.iter().skip(1);
    while let Some(arg) = words.next() {
        let text = arg.text.as_str();
        let value = match (name, text) {
            ("curl", "-o" | "--output")
            | ("tftp", "-l" | "-r")
            | ("wget", "-O" | "--output-document")
            | ("aria2c", "-o" | "--out") => words.next().map(|arg| arg.text.clone()),
            ("curl", "-O" | "--remote-name") => url_name(),
            ("wget", _) if text.starts_with("--output-document=") => {
                Some(text["--output-document=".len()..].to_owned())
            }
            ("curl", _) if text.starts_with("-o") && text.len() > 2 && !text.starts_with("--") => {
                Some(text[2..].to_owned())
            }
            ("curl", _)
                if text.starts_with('-') && !text.starts_with("--") && text.ends_with('O') =>
            {
                url_name()
            }
            ("curl", _)
                if text.starts_with('-') && !text.starts_with("--") && text.ends_with('o') =>
            {
                words.next().map(|arg| arg.text.clone())
            }
            ("wget", _)
                if text.starts_with('-') && !text.starts_with("--") && text.ends_with('O') =>
            {
                words.next().map(|arg| arg.text.clone())
            }
            _ => None,
        };
        out.extend(value.filter(|value| value != "-").map(|value| key(&value)));
    }
    if name == "wget"
        && !form.iter().any(|arg| {
            arg.text.starts_with("-O")
                || arg.text.starts_with("--output-document")
                || arg.text.contains("qO-")
        })
    {
        out.extend(url_name());
    }
    // `aria2c -d DIR -o NAME` writes DIR/NAME.
    if name == "aria2c"
        && let Some(dir) = form
            .windows(2)
            .find(|pair| matches!(pair[0].text.as_str(), "-d" | "--dir"))
    {
        let dir = key(&dir[1].text);
        out = out
            .into_iter()
            .map(|file| format!("{dir}/{file}"))
            .collect();
    }
    if name == "lwp-download" {
        out.extend(form.get(2).map(|arg| key(&arg.text)));
    }
    out
}

/// What an earlier write put at `path`: the file itself, or a directory holding it.
pub(crate) fn lookup(written: &[(String, Content)], path: &str) -> Option<Content> {
    let path = key(path);
    written.iter().rev().find_map(|(place, content)| {
        let inside = path == *place
            || (matches!(content, Content::Download | Content::Clone)
                && (place == "." || path.starts_with(&format!("{place}/"))))
            || (matches!(content, Content::Moved(_)) && path.starts_with(&format!("{place}/")));
        inside.then(|| content.clone())
    })
}

/// Programs that run files they are given, besides shells, interpreters and programs run by
/// their path.
const RUNS_FILES: &[&str] = &[
    "source", ".", "make", "gmake", "ssh", "git", "enable", "dpkg", "apt", "apt-get", "rpm", "dnf",
    "yum", "zypper", "pip", "pip3", "npm", "pnpm", "yarn", "gem",
];

/// Package managers: a package file they install runs its scripts.
const PACKAGE_MANAGERS: &[&str] = &[
    "dpkg", "apt", "apt-get", "rpm", "dnf", "yum", "zypper", "pip", "pip3", "npm", "pnpm", "yarn",
    "gem",
];

/// The files `found` runs as code: its program when it is a path, the script a shell or
/// interpreter reads, what `source` reads, a start-up file (`--rcfile`), a hook of
/// `.git/hooks` run by git.
pub(crate) fn runs(found: &Found) -> Vec<String> {
    let mut out = Vec::new();
    for form in found.each_form() {
        let Some(first) = form.first() else { continue };
        let name = commands::program_name(form).unwrap_or_default();
        let runs_files = first.text.contains('/')
            || commands::is_shell(&name)
            || commands::is_language_interpreter(&name)
            || RUNS_FILES.contains(&name.as_ref());
        if !runs_files {
            continue;
        }
        if first.literal && first.text.contains('/') {
            out.push(first.text.clone());
        }
        if let Some(ProgramSource::File(arg)) = commands::program_source(form) {
            out.push(arg.text.clone());
        }
        out.extend(option_files(form));
        out.extend(installed_packages(&name, form));
        out.extend(loaded_files(&name, form));
    }
    out
}

/// The start-up file, makefile or configuration a shell, `make` or `ssh` is given by an
/// option (`--rcfile F`, `-f F`, `-F F`).
fn option_files(form: &[Arg]) -> Vec<String> {
    form.windows(2)
        .filter(|pair| {
            matches!(
                pair[0].text.as_str(),
                "--rcfile" | "--init-file" | "-F" | "--file" | "-f"
            )
        })
        .filter(|_| {
            commands::program(form).is_some_and(|name| {
                commands::is_shell(&name) || matches!(name.as_ref(), "make" | "ssh")
            })
        })
        .map(|pair| pair[1].text.clone())
        .collect()
}

/// A package file installed runs its scripts (`dpkg -i x.deb`, `pip install x.whl`).
fn installed_packages(name: &str, form: &[Arg]) -> Vec<String> {
    let installs = PACKAGE_MANAGERS.contains(&name)
        && form.iter().any(|arg| {
            matches!(
                arg.text.as_str(),
                "-i" | "--install" | "install" | "-U" | "localinstall" | "add"
            )
        });
    if !installs {
        return Vec::new();
    }
    form.iter()
        .skip(1)
        .filter(|arg| {
            [".deb", ".rpm", ".whl", ".tar.gz", ".tgz", ".gem", ".zip"]
                .iter()
                .any(|end| arg.text.ends_with(end))
        })
        .map(|arg| arg.text.clone())
        .collect()
}

/// Files `form` loads or has run besides its script: a builtin (`enable -f FILE`), the
/// makefile of `make -C DIR`, the hooks git runs (`.git/hooks/`).
fn loaded_files(name: &str, form: &[Arg]) -> Vec<String> {
    let mut out = Vec::new();
    // `enable -f FILE`: bash loads the shared object as a builtin.
    if name == "enable" {
        out.extend(
            form.windows(2)
                .filter(|pair| pair[0].text == "-f")
                .map(|pair| pair[1].text.clone()),
        );
    }
    // `make -C DIR`: the makefile of DIR.
    if matches!(name, "make" | "gmake") {
        out.extend(
            form.windows(2)
                .filter(|pair| matches!(pair[0].text.as_str(), "-C" | "--directory"))
                .map(|pair| format!("{}/Makefile", pair[1].text.trim_end_matches('/'))),
        );
    }
    if commands::program(form).as_deref() == Some("git")
        && form.iter().any(|arg| {
            matches!(
                arg.text.as_str(),
                "commit" | "push" | "checkout" | "merge" | "rebase" | "am" | "switch" | "pull"
            )
        })
    {
        out.push(".git/hooks/".to_owned());
    }
    out
}

/// What runs when git runs a hook: any hook the line wrote.
pub(crate) fn hooks(written: &[(String, Content)]) -> Vec<Content> {
    written
        .iter()
        .filter(|(place, _)| place.starts_with(".git/hooks/") || place.contains("/.git/hooks/"))
        .map(|(_, content)| content.clone())
        .collect()
}

/// True if a file holding `text` runs as a shell script in `found`: given to a
/// shell or `source`, or run by its path with no `#!` line naming another interpreter.
pub(crate) fn is_shell_script(found: &Found, text: &str) -> bool {
    let by_interpreter = found.each_form().any(|form| {
        commands::program(form).is_some_and(|name| commands::is_language_interpreter(&name))
    });
    if by_interpreter {
        return false;
    }
    let shebang = text.lines().next().filter(|line| line.starts_with("#!"));
    shebang.is_none_or(|line| {
        let interpreter = line.split_whitespace().last().unwrap_or("");
        commands::is_shell(basename(interpreter)) || line.contains("/sh") || line.contains("bash")
    })
}

/// The program a copy's source names: an absolute path in a system directory (`/bin/rm`) or
/// a lookup (`$(command -v kill)`).
fn system_program(source: &str) -> Option<String> {
    let looked_up = source
        .strip_prefix("$(")
        .and_then(|rest| rest.strip_suffix(')'))
        .and_then(|inner| {
            let words: Vec<&str> = inner.split_whitespace().collect();
            match words.as_slice() {
                ["command", "-v", name] | ["which", name] | ["type", "-P", name] => {
                    Some((*name).to_owned())
                }
                _ => None,
            }
        });
    let system = [
        "/bin/",
        "/sbin/",
        "/usr/bin/",
        "/usr/sbin/",
        "/usr/local/bin/",
    ]
    .iter()
    .any(|dir| source.starts_with(dir))
    .then(|| basename(source).to_owned());
    looked_up.or(system)
}

/// Commands an ssh configuration runs: `Match exec`, `ProxyCommand`, `LocalCommand`,
/// `KnownHostsCommand`.
pub(crate) fn ssh_config_commands(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let lower = line.to_ascii_lowercase();
            let at = [
                "match exec ",
                "proxycommand ",
                "localcommand ",
                "knownhostscommand ",
            ]
            .iter()
            .find_map(|key| lower.find(key).map(|at| at + key.len()))?;
            Some(line[at..].trim().trim_matches('"').to_owned())
        })
        .collect()
}
