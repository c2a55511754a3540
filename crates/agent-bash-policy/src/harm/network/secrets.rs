//! Reading secrets: a credential file read, archived, served or uploaded, the environment
//! dumped, or a secret variable read by interpreter code.

use super::dumps::dumps_secrets;
use super::sending::secret_in_url;
use super::*;

/// Programs that only look at a file's name or metadata, or use a key as it is meant to be
/// used (`ssh -i KEY`).
const METADATA_ONLY: &[&str] = &[
    "ls",
    "stat",
    "test",
    "[",
    "[[",
    "chmod",
    "chown",
    "mkdir",
    "touch",
    "file",
    "du",
    "ssh-add",
    "ssh-keygen",
    "ssh",
    "git",
    "find",
    "cd",
    "pushd",
    "rm",
    "ssh-copy-id",
    "scp",
    "sftp",
    "rsync",
    "curl",
    "wget",
    "kubectl",
    "gcloud",
    "az",
    "docker",
    "helm",
    "gh",
    "echo",
    "printf",
    "export",
    "eval",
    "source",
    ".",
    "npm",
    "pip",
    "twine",
    "cargo",
    "terraform",
    "realpath",
    "readlink",
    "dirname",
    "basename",
    "wc",
];

/// Words that may name a credential: most words name none at all, so these cheap tests
/// come first.
const SECRET_HINTS: &[&str] = &[
    ".ssh",
    ".aws",
    "/secrets",
    "netrc",
    "credentials",
    ".kube",
    ".docker",
    "/gh",
    ".npmrc",
    ".pypirc",
    ".gnupg",
    ".password-store",
    "gcloud",
    ".azure",
    ".terraform",
    ".vault",
    ".pgpass",
    ".my.cnf",
    "keyrings",
    "/hub",
    ".m2",
    "rclone",
    ".s3cfg",
    ".boto",
    ".oci",
    "history",
    ".mozilla",
    "chrome",
    "shadow",
    "ssh_host",
    "environ",
    ".env",
    "identity",
];

/// Reads of an environment variable in interpreter code, each followed by the name.
const ENV_READS: &[&str] = &[
    "getenv(\"",
    "getenv('",
    "environ[\"",
    "environ['",
    "environ.get(\"",
    "environ.get('",
    "process.env.",
    "ENV[\"",
    "ENV['",
    "$ENV{",
];

/// True if `found` reads a credential file or dumps the environment as data (`cat
/// ~/.ssh/id_rsa`, `tar c ~/.aws`, `env`, `printenv`), or, for a program that sends, if a
/// credential file is what it uploads (`curl -T ~/.netrc …`, `scp ~/.ssh/id_rsa host:`).
pub(crate) fn reads_secret(found: &Found) -> bool {
    found.each_form().any(|form| form_reads_secret(found, form))
}

/// [`reads_secret`] for one form of the segment.
fn form_reads_secret(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let directory = archive_directory(&name, form, found.cwd.as_deref());
    let secret = |text: &str| names_secret(found, directory.as_deref(), text);
    let redirected = found
        .redirects
        .iter()
        .any(|redirect| redirect.op == "<" && secret(&redirect.target.text));
    if redirected || dumps_secrets(form) || exposes_secret_folder(found, &name, form) {
        return true;
    }
    // A credential added to a commit leaves with the next push.
    if &*name == "git"
        && form.iter().any(|arg| arg.text == "add")
        && form.iter().skip(1).any(|arg| secret(&arg.text))
    {
        return true;
    }
    if dumps_environment(found, &name, form) || code_reads_secret(&name, form) {
        return true;
    }
    uploads_secret(found, &name, form, &secret)
        || (!METADATA_ONLY.contains(&&*name)
            && form
                .iter()
                .skip(1)
                .any(|arg| secret(&arg.text) || arg.text.strip_prefix("if=").is_some_and(secret)))
}

/// True if `text` names a credential file or folder. A relative path is read where an
/// earlier `cd` went (`cd ~/.mozilla && tar c …`), or where the program's own directory
/// option points (`directory`: `tar -C ~ -c .aws`).
fn names_secret(found: &Found, directory: Option<&str>, text: &str) -> bool {
    let joined;
    let text = match directory.or(found.cwd.as_deref()) {
        Some(dir) if !text.starts_with(['/', '~', '$', '@', '-']) => {
            joined = format!("{dir}/{text}");
            joined.as_str()
        }
        _ => text,
    };
    if !SECRET_HINTS.iter().any(|hint| text.contains(hint)) {
        return false;
    }
    let spelled = crate::paths::home_spellings(text.trim_start_matches('@'));
    let target = home_of_someone(&path(&spelled));
    // Any process's environment (`/proc/$PPID/environ`).
    if target.starts_with("/proc/") && target.ends_with("/environ") {
        return true;
    }
    !target.ends_with(".pub")
        && !target.ends_with("known_hosts")
        && !target.ends_with("/config")
            | target.starts_with("~/.kube")
            | target.starts_with("~/.aws")
        && SECRETS.iter().any(|place| under(&target, place))
}

/// True if `form` hands a whole folder of credentials to others: an image built from the
/// home directory or the root (the context holds every credential folder: `docker build
/// -t registry/x ~`), or a file server started in a credential folder (`cd ~/.ssh && php
/// -S 0.0.0.0:80`).
fn exposes_secret_folder(found: &Found, name: &str, form: &[Arg]) -> bool {
    if matches!(name, "docker" | "podman" | "buildah" | "nerdctl")
        && form
            .iter()
            .any(|arg| matches!(arg.text.as_str(), "build" | "buildx" | "bud"))
        && form
            .iter()
            .skip(2)
            .rfind(|arg| !arg.text.starts_with('-'))
            .is_some_and(|context| {
                matches!(
                    crate::paths::home_spellings(&context.text).trim_end_matches('/'),
                    "~" | "$HOME" | "${HOME}" | ""
                ) || context.text == "/"
            })
    {
        return true;
    }
    // A file server started in a credential folder (`cd ~/.ssh && php -S 0.0.0.0:80`).
    let serves_cwd = (name == "php" && form.iter().any(|arg| arg.text == "-S"))
        || form
            .windows(2)
            .any(|pair| pair[0].text == "-m" && pair[1].text == "http.server");
    serves_cwd && found.cwd.as_deref().is_some_and(is_secret_path)
}

/// True if `form` prints the environment or the secrets in it: `env` or `printenv` alone, a
/// secret variable printed or put in a URL, `set -p`/`export -p`.
fn dumps_environment(found: &Found, name: &str, form: &[Arg]) -> bool {
    if matches!(name, "env" | "printenv")
        && commands::wrapped_command(form).is_none()
        && form.len() == 1
    {
        return true;
    }
    if (name == "printenv" && form.iter().skip(1).any(|arg| is_secret_name(&arg.text)))
        || secret_in_url(found, form)
    {
        return true;
    }
    matches!(name, "set" | "export" | "declare" | "typeset")
        && form.len() <= 2
        && form
            .iter()
            .skip(1)
            .all(|arg| matches!(arg.text.as_str(), "-p" | "-x" | "-px"))
}

/// True if interpreter code reads a secret variable (`getenv("OPENAI_API_KEY")`) or opens a
/// credential file.
fn code_reads_secret(name: &str, form: &[Arg]) -> bool {
    if !commands::is_language_interpreter(name) {
        return false;
    }
    let reads_variable = form.iter().skip(1).any(|arg| {
        ENV_READS.iter().any(|access| {
            arg.text
                .match_indices(access)
                .any(|(at, _)| is_secret_name(&arg.text[at + access.len()..]))
        })
    });
    reads_variable
        || form.iter().skip(1).any(|arg| {
            SECRETS.iter().any(|place| {
                let place = place.trim_start_matches("~/").trim_end_matches('*');
                place.len() >= 4 && arg.text.contains(place)
            })
        })
}

/// True if a program that sends uploads a credential file (`curl -T ~/.netrc …`, `scp
/// ~/.ssh/id_rsa host:`, an sftp batch that `put`s one).
fn uploads_secret(found: &Found, name: &str, form: &[Arg], secret: &dyn Fn(&str) -> bool) -> bool {
    match name {
        "curl" => {
            form.windows(2).any(|pair| {
                matches!(
                    pair[0].text.as_str(),
                    "-d" | "--data"
                        | "--data-binary"
                        | "--data-raw"
                        | "--data-urlencode"
                        | "-F"
                        | "--form"
                        | "-T"
                        | "--upload-file"
                        | "--json"
                ) && secret(pair[1].text.rsplit(['@', '<']).next().unwrap_or(""))
            }) || form.iter().any(|arg| {
                arg.text.contains('@') && secret(arg.text.rsplit('@').next().unwrap_or(""))
            })
        }
        "wget" => {
            form.iter().any(|arg| {
                arg.text
                    .strip_prefix("--post-file=")
                    .or_else(|| arg.text.strip_prefix("--body-file="))
                    .is_some_and(secret)
            }) || form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "--post-file" | "--body-file")
                    && secret(&pair[1].text)
            })
        }
        "scp" | "rsync" => operands(form).any(|arg| secret(&arg.text)),
        // A batch (`-b FILE`, `-b -` on input) whose `put` lines upload a credential.
        "sftp" => {
            operands(form).any(|arg| secret(&arg.text))
                || sftp_batch(found, form).is_some_and(|text| {
                    text.lines().any(|line| {
                        let mut words = line.split_whitespace();
                        matches!(words.next(), Some("put" | "mput" | "reput")) && words.any(secret)
                    })
                })
        }
        // `gh api -F 'key=@FILE'` sends FILE's text.
        "gh" => operands(form).any(|arg| {
            secret(&arg.text)
                || arg
                    .text
                    .split_once("=@")
                    .is_some_and(|(_, file)| secret(file))
        }),
        _ => false,
    }
}

/// The text of sftp's batch (`-b FILE` printed on the line, or `-b -` read on input).
fn sftp_batch(found: &Found, form: &[Arg]) -> Option<String> {
    form.windows(2)
        .find(|pair| pair[0].text == "-b")
        .and_then(
            |pair| match (pair[1].text.as_str(), pair[1].printed.as_deref()) {
                (_, Some(crate::words::Printed::Text(text))) => Some(text.clone()),
                ("-", _) => found
                    .redirects
                    .iter()
                    .rev()
                    .find_map(|redirect| redirect.body.clone()),
                _ => None,
            },
        )
}

/// tar's short options that take a value (GNU tar and bsdtar): the archive, the
/// directory, the blocking factor, name lists, exclude files, volume labels…
const TAR_VALUED: &str = "fCbTXKNgLVIH";

/// The directory an archiver reads its operands from, when an option names one (`tar -C
/// DIR`, `--directory=DIR`), joined to `cwd` (where an earlier `cd` went) if relative.
fn archive_directory(name: &str, form: &[Arg], cwd: Option<&str>) -> Option<String> {
    if !matches!(name, "tar" | "gtar" | "bsdtar") {
        return None;
    }
    let dir = form.iter().enumerate().skip(1).find_map(|(at, arg)| {
        let text = arg.text.as_str();
        match text {
            "-C" | "--directory" | "--cd" => form.get(at + 1).map(|value| value.text.clone()),
            _ if text.starts_with("--") => text.strip_prefix("--directory=").map(str::to_owned),
            // A cluster of short options (`-cC ~`, `-Cdir`) as getopt reads it: the first
            // letter that takes a value takes the rest of the word, or else the next word.
            _ if text.starts_with('-') => {
                let letters = &text[1..];
                let (index, letter) = letters
                    .char_indices()
                    .find(|(_, letter)| TAR_VALUED.contains(*letter))?;
                let rest = &letters[index + letter.len_utf8()..];
                let value = match rest {
                    "" => form.get(at + 1)?.text.clone(),
                    rest => rest.to_owned(),
                };
                (letter == 'C').then_some(value)
            }
            // The old form, letters without a dash as the first word (`tar cCf ~ - .ssh`):
            // each letter that takes a value takes the next word in turn.
            _ if at == 1 && text.chars().all(|c| c.is_ascii_alphabetic()) => {
                let taken = text.chars().filter(|c| TAR_VALUED.contains(*c));
                taken
                    .enumerate()
                    .find(|(_, letter)| *letter == 'C')
                    .and_then(|(index, _)| form.get(at + 1 + index))
                    .map(|value| value.text.clone())
            }
            _ => None,
        }
    })?;
    match cwd {
        Some(cwd) if !dir.starts_with(['/', '~', '$']) => Some(format!("{cwd}/{dir}")),
        _ => Some(dir),
    }
}
