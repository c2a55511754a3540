//! `download-to-shell`: code fetched from the network and run as it arrives, by a shell,
//! an interpreter, a package manager or a build tool; one helper per route it can take.

use super::name;
use crate::commands::{self, ProgramSource};
use crate::harm;
use crate::words::Arg;
use crate::words::{Found, Stdin};

/// True unless `form` is Deno running a module with no permission to run programs or write
/// files (Deno confines a module to what its flags allow).
fn unconfined_remote_module(form: &[Arg]) -> bool {
    name(form) != "deno"
        || form.iter().any(|arg| {
            matches!(arg.text.as_str(), "-A" | "--allow-all")
                || arg.text.starts_with("--allow-run")
                || arg.text.starts_with("--allow-write")
                || arg.text.starts_with("--allow-ffi")
        })
}

pub(super) fn download_to_shell(found: &Found, form: &[Arg]) -> bool {
    found.runs_download
        || interpreter_runs_remote_code(form)
        || installs_from_plain_url(form)
        || downloaded_build_file(form)
        || input_code_fetches_code(found, form)
        // A makefile read from a download (`curl … | make -f -`).
        || (found.stdin == Stdin::DownloadPipe && crate::runners::stdin_makefile(form))
        || runner_given_remote_archive(form)
        || awk_pipes_download_to_shell(form)
        || shell_with_downloaded_rcfile(form)
        || unknown_program_fed_download(found, form)
        // `$(curl …)` as the command: the download's output is run.
        || form.first().is_some_and(|first| first.download)
        || reads_download_as_program(found, form)
}

/// True if `form` runs a language interpreter.
fn is_interpreter(form: &[Arg]) -> bool {
    commands::program(form).is_some_and(|name| commands::is_language_interpreter(&name))
}

/// Interpreter code that fetches code and evaluates it (`exec(urlopen(…).read())`,
/// `fetch(…).then(eval)`), or a program run from a URL (`deno run https://…`).
fn interpreter_runs_remote_code(form: &[Arg]) -> bool {
    is_interpreter(form)
        && ((harm::fetches_in_code(form)
            && form
                .iter()
                .skip(1)
                .any(|arg| harm::evaluates_code(&arg.text)))
            || (matches!(commands::program_source(form),
                Some(commands::ProgramSource::File(arg)) if arg.text.contains("://"))
                && unconfined_remote_module(form)))
}

/// A package installed from a plain-http or bare-address URL or index (`npm i -g
/// http://203.0.113.4/p.tgz`, `pip install --index-url http://…`): its install scripts
/// run as fetched, from a source anyone on the way can replace.
fn installs_from_plain_url(form: &[Arg]) -> bool {
    let python_pip = form
        .windows(2)
        .any(|pair| pair[0].text == "-m" && pair[1].text == "pip");
    (python_pip
        || matches!(
            &*name(form),
            "npm" | "pnpm" | "yarn" | "bun" | "pip" | "pip3" | "uv" | "pipx" | "gem" | "cargo"
        ))
        && form
            .iter()
            .any(|arg| matches!(arg.text.as_str(), "install" | "i" | "add"))
        && form.iter().skip(1).any(|arg| {
            let url = arg
                .text
                .split_once('=')
                .filter(|(option, _)| option.starts_with("--"))
                .map_or(arg.text.as_str(), |(_, value)| value);
            url.strip_prefix("http://").is_some_and(|rest| {
                let host = rest.split(['/', ':']).next().unwrap_or("");
                !harm::is_loopback(host)
            }) || url
                .strip_prefix("https://")
                .and_then(|rest| rest.split(['/', ':']).next())
                .is_some_and(|host| {
                    host.parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| !ip.is_loopback())
                })
        })
}

/// A build or compose file handed over as a download (`gradle -I <(curl …)`,
/// `docker compose -f <(curl …) up`).
fn downloaded_build_file(form: &[Arg]) -> bool {
    form.windows(2).any(|pair| {
        matches!(
            pair[0].text.as_str(),
            "-I" | "--init-script" | "-f" | "--file" | "-c" | "--config" | "--settings" | "-s"
        ) && pair[1].download
    })
}

/// Interpreter code fed on input that fetches code and evaluates it.
fn input_code_fetches_code(found: &Found, form: &[Arg]) -> bool {
    is_interpreter(form)
        && found
            .redirects
            .iter()
            .filter_map(|redirect| redirect.body.as_deref())
            .any(|body| {
                harm::fetches_in_code(&[Arg::literal(""), Arg::literal(body)])
                    && harm::evaluates_code(body)
            })
}

/// A package runner handed an archive straight from a URL (`npx --yes https://…/x.tgz`):
/// its install scripts and its binary run as downloaded.
fn runner_given_remote_archive(form: &[Arg]) -> bool {
    matches!(
        &*name(form),
        "npx" | "bunx" | "pnpx" | "uvx" | "pipx" | "pnpm" | "yarn" | "npm"
    ) && form.iter().skip(1).any(|arg| {
        let text = arg
            .text
            .trim_start_matches("--from=")
            .trim_start_matches("--package=");
        (text.starts_with("http://") || text.starts_with("https://"))
            && [".tgz", ".tar.gz", ".whl", ".zip"]
                .iter()
                .any(|end| text.ends_with(end))
    }) && !form
        .iter()
        .any(|arg| matches!(arg.text.as_str(), "install" | "add" | "i"))
}

/// awk reading a download (a command string it runs, or a file from `<(curl …)`) and
/// printing to a shell (`print | "sh"`).
fn awk_pipes_download_to_shell(form: &[Arg]) -> bool {
    matches!(&*name(form), "awk" | "gawk" | "mawk" | "nawk")
        && form.iter().skip(1).any(|arg| {
            arg.text.contains("| \"sh\"")
                || arg.text.contains("|\"sh\"")
                || arg.text.contains("| \"bash\"")
                || arg.text.contains("|\"bash\"")
        })
        && form.iter().skip(1).any(|arg| {
            arg.download
                || ["\"curl ", "\"wget ", "\"fetch "]
                    .iter()
                    .any(|start| arg.text.contains(start))
        })
}

/// A shell started with a downloaded start-up file (`bash --rcfile <(curl …)`).
fn shell_with_downloaded_rcfile(form: &[Arg]) -> bool {
    commands::program(form).is_some_and(|name| commands::is_shell(&name))
        && form.windows(2).any(|pair| {
            matches!(pair[0].text.as_str(), "--rcfile" | "--init-file") && pair[1].download
        })
}

/// A command whose name is only known at run time, fed a download (`curl … | "$SHELL"`).
fn unknown_program_fed_download(found: &Found, form: &[Arg]) -> bool {
    found.stdin == Stdin::DownloadPipe
        && commands::program(form).is_none()
        && form.first().is_some_and(|first| !first.literal)
}

/// `eval` of a download, or a program read from one: the script argument or file is a
/// download, or a reader of its input (a shell, an interpreter, a database shell) is fed one.
fn reads_download_as_program(found: &Found, form: &[Arg]) -> bool {
    if name(form) == "eval" {
        return form.iter().skip(1).any(|arg| arg.download);
    }
    let reads_stdin = match commands::program_source(form) {
        // Database shells run their input's shell escapes (`.shell`, `\!`, `system`).
        None if commands::input_reaches_shell(&name(form))
            && !form
                .iter()
                .any(|arg| matches!(arg.text.as_str(), "-c" | "-e" | "--command" | "-f")) =>
        {
            true
        }
        // `bash /dev/fd/3 3< <(curl …)`: the script is what the redirection of fd 3 reads.
        Some(ProgramSource::File(arg)) if fd_path(&arg.text).is_some() => {
            let fd = fd_path(&arg.text);
            return found
                .redirects
                .iter()
                .any(|redirect| redirect.fd == fd && redirect.target.download);
        }
        Some(ProgramSource::Inline(arg) | ProgramSource::File(arg)) => return arg.download,
        Some(ProgramSource::Stdin) => true,
        None => commands::shell_reads_stdin(form),
    };
    // From a pipe after a download, a here-document holding `$(curl …)`, or `< <(curl …)`.
    reads_stdin
        && (found.stdin == Stdin::DownloadPipe
            || found.redirects.iter().any(|redirect| {
                (redirect.body.is_some() || redirect.op == "<") && redirect.target.download
            }))
}

/// The descriptor `/dev/fd/N` or `/proc/self/fd/N` names.
fn fd_path(text: &str) -> Option<i32> {
    text.strip_prefix("/dev/fd/")
        .or_else(|| text.strip_prefix("/proc/self/fd/"))
        .and_then(|n| n.parse().ok())
}
