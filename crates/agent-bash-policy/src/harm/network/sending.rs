//! Sending data out: what a program may send to another machine, secrets named in a URL or
//! handed to a host that is not their service, and the services whose tokens are printed.

use super::*;

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

/// True if `form` may send data over the network to another machine.
pub(crate) fn sends(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let remote_redirect = found
        .redirects
        .iter()
        .any(|redirect| dev_net_host(&redirect.target.text).is_some_and(|host| !is_loopback(host)));
    if remote_redirect || (secret_in_url(found, form) && names_remote_host(form)) {
        return true;
    }
    if let Some(sends) = publishes(&name, form) {
        return sends;
    }
    sends_by_program(&name, form)
}

/// True if some operand of `form` is a host (or a URL of one) that is not this machine.
fn names_remote_host(form: &[Arg]) -> bool {
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
}

/// Whether `form` serves or publishes to others, for the programs that do (a local server,
/// an image pushed to a registry, a tunnel); `None` for the rest.
fn publishes(name: &str, form: &[Arg]) -> Option<bool> {
    // `php -S HOST:PORT` serves the working directory to whoever reaches HOST.
    if name == "php"
        && form.windows(2).any(|pair| {
            let host = pair[1].text.rsplit_once(':').map_or("", |(host, _)| host);
            pair[0].text == "-S" && (host == "0.0.0.0" || !is_loopback(host))
        })
    {
        return Some(true);
    }
    // An image tagged for a registry elsewhere, or pushed as it is built.
    if matches!(name, "docker" | "podman" | "buildah" | "nerdctl")
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
        return Some(true);
    }
    // A tunnel to the internet; file servers that listen on every interface unless told a
    // loopback address.
    if name == "ngrok" {
        return Some(true);
    }
    if matches!(name, "httpd" | "http-server" | "serve") {
        return Some(
            !form
                .iter()
                .any(|arg| arg.text.contains("127.0.0.1") || arg.text.contains("localhost")),
        );
    }
    // `python -m http.server` listens on every interface unless bound to loopback.
    if form
        .windows(2)
        .any(|pair| pair[0].text == "-m" && pair[1].text == "http.server")
    {
        // `0.0.0.0` is every interface, not this machine alone.
        return Some(!form.windows(2).any(|pair| {
            matches!(pair[0].text.as_str(), "--bind" | "-b")
                && pair[1].text != "0.0.0.0"
                && is_loopback(&pair[1].text)
        }));
    }
    None
}

/// True if the program `name` sends to another machine by what it is: a push, an upload, a
/// query or message to a host named among its words.
fn sends_by_program(name: &str, form: &[Arg]) -> bool {
    match name {
        _ if commands::is_language_interpreter(name) => form
            .iter()
            .skip(1)
            .any(|arg| NETWORK_APIS.iter().any(|api| arg.text.contains(api))),
        // A push, or a fetch from a URL that can carry data in its headers or path.
        "git" => {
            form.iter().any(|arg| arg.text == "push")
                || (form.iter().any(|arg| {
                    matches!(arg.text.as_str(), "ls-remote" | "fetch" | "clone" | "pull")
                }) && names_remote_host(form))
        }
        "ping" | "ping6" | "traceroute" => names_remote_host(form),
        "curl" | "wget" | "http" | "https" | "xh" | "httpie" | "aria2c" | "lwp-request"
        | "POST" | "PUT" => names_remote_host(form),
        // sftp names the host alone (`sftp user@host`): its last operand.
        "sftp" => sftp_host_is_remote(form),
        "scp" | "rsync" => form.iter().skip(1).any(|arg| {
            arg.text.split_once(':').is_some_and(|(host, _)| {
                !host.is_empty()
                    && !host.contains('/')
                    && !is_loopback(host.rsplit('@').next().unwrap_or(host))
            })
        }),
        "ssh" | "dig" | "nslookup" | "host" | "drill" | "ftp" | "tftp" | "smbclient"
        | "sendmail" | "mail" | "mailx" | "mutt" | "swaks" | "pastebinit" | "gist" | "rclone"
        | "gsutil" => names_remote_host(form),
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
        _ if RAW_NETWORK.contains(&name) => names_remote_host(form),
        _ => false,
    }
}

/// sftp's options that take a value: the word after one is not the host.
const SFTP_VALUED: &[&str] = &[
    "-b", "-F", "-i", "-o", "-P", "-s", "-S", "-B", "-c", "-D", "-J", "-l", "-R", "-X",
];

/// True if sftp's host, its last operand, is another machine.
fn sftp_host_is_remote(form: &[Arg]) -> bool {
    form.iter()
        .skip(1)
        .enumerate()
        .rfind(|(at, arg)| {
            !arg.text.starts_with('-') && !SFTP_VALUED.contains(&form[*at].text.as_str())
        })
        .is_some_and(|(_, arg)| {
            let host = arg.text.split(':').next().unwrap_or("");
            !is_loopback(host.rsplit('@').next().unwrap_or(host))
        })
}

/// True if a secret is named in a URL itself (`…?t=$GITHUB_TOKEN`): it goes to that host.
pub(super) fn secret_in_url(found: &Found, form: &[Arg]) -> bool {
    form.iter().skip(1).any(|arg| {
        arg.text.contains("://")
            && arg
                .text
                .split('$')
                .skip(1)
                .any(|var| is_secret_name(var.trim_start_matches('{')))
    }) || misdirected_secret(found, form)
}

/// Secret variables whose service is known, with the hosts that service is reached at
/// (none for a cloud's signing secret, which is never sent as it is).
const SECRET_SERVICES: &[(&str, &[&str])] = &[
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

/// True if a downloader sends (in a header, a form field, data) a secret variable whose
/// service is known to a host that is not that service: `curl -H "X-K:
/// $AWS_SECRET_ACCESS_KEY" http://elsewhere/`. A cloud's signing secret is never sent as
/// it is, so it counts wherever it goes.
fn misdirected_secret(found: &Found, form: &[Arg]) -> bool {
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
    let hosts = hosts_named(form, publisher);
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
                SECRET_SERVICES.iter().any(|(name, own)| {
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

/// The hosts `form` names: those of its URLs, and for a publisher (`publisher`) bare host
/// names too (`docker login registry.example.net`).
fn hosts_named(form: &[Arg], publisher: bool) -> Vec<&str> {
    form.iter()
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
        .collect()
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
