//! Where a session's commands run: this machine, or a target reached through an engine the
//! user already runs (OpenSSH, Docker, Podman, kubectl). Only the address is here: the MCP
//! crate connects to it and drives agent-bash there.
//!
//! Every part of an address ends up as an argument of `ssh`, `docker` or `kubectl`, so each
//! is checked against the names those tools accept, and none may start with `-` (it would be
//! read as an option: `ssh://-oProxyCommand=…`).

use std::fmt;

/// A session's target (setting `target`).
///
/// ```
/// use agent_bash_core::Target;
///
/// let ssh = Target::parse("ssh://dev@build-box:2222").unwrap();
/// assert_eq!(ssh.to_string(), "ssh://dev@build-box:2222");
/// let pod = Target::parse("k8s://ci/runner-7/main").unwrap();
/// assert_eq!(pod, Target::Kubernetes {
///     namespace: Some("ci".into()), pod: "runner-7".into(), container: Some("main".into()),
/// });
/// assert!(Target::parse("ssh://-oProxyCommand=sh").is_err());
/// assert!(Target::parse("ftp://host").is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// This machine.
    #[default]
    Local,
    /// `ssh://[user@]host[:port]`, through the system's OpenSSH client.
    Ssh {
        /// The login name; `None`: ssh's own choice (`~/.ssh/config`, then the local user).
        user: Option<String>,
        /// A host name, an alias of `~/.ssh/config`, or an address (`[::1]` for IPv6).
        host: String,
        /// `None`: ssh's own choice.
        port: Option<u16>,
    },
    /// `docker://CONTAINER`: a running container, through `docker exec`.
    Docker {
        /// Its name or id.
        container: String,
    },
    /// `podman://CONTAINER`: a running container, through `podman exec`.
    Podman {
        /// Its name or id.
        container: String,
    },
    /// `k8s://[NAMESPACE/]POD[/CONTAINER]`: a running pod, through `kubectl exec`.
    Kubernetes {
        /// `None`: kubectl's current namespace.
        namespace: Option<String>,
        /// The pod's name.
        pod: String,
        /// `None`: the pod's default container.
        container: Option<String>,
    },
}

impl Target {
    /// Reads a target address: `local`, `ssh://…`, `docker://…`, `podman://…` or `k8s://…`.
    ///
    /// # Errors
    /// What is wrong with the address, and the forms there are.
    pub fn parse(uri: &str) -> Result<Target, String> {
        if uri == "local" || uri.is_empty() {
            return Ok(Target::Local);
        }
        let Some((scheme, rest)) = uri.split_once("://") else {
            return Err(format!("`{uri}` is not a target; {FORMS}"));
        };
        let target = match scheme {
            "ssh" => ssh(rest)?,
            "docker" => Target::Docker {
                container: container_name(rest)?,
            },
            "podman" => Target::Podman {
                container: container_name(rest)?,
            },
            "k8s" | "kubernetes" => kubernetes(rest)?,
            other => return Err(format!("unknown target kind `{other}://`; {FORMS}")),
        };
        Ok(target)
    }

    /// True for this machine.
    pub fn is_local(&self) -> bool {
        *self == Target::Local
    }
}

/// The forms of an address, for error messages.
const FORMS: &str = "a target is `local`, `ssh://[user@]host[:port]`, `docker://CONTAINER`, \
                     `podman://CONTAINER` or `k8s://[NAMESPACE/]POD[/CONTAINER]`";

fn ssh(rest: &str) -> Result<Target, String> {
    let (user, host_port) = match rest.rsplit_once('@') {
        Some((user, host_port)) => (Some(word(user, "user name")?), host_port),
        None => (None, rest),
    };
    let (host, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
        // An IPv6 address: `[::1]` or `[::1]:22`.
        let (address, after) = bracketed
            .split_once(']')
            .ok_or_else(|| format!("`{host_port}`: an IPv6 address ends with `]`"))?;
        let port =
            match after {
                "" => None,
                after => Some(after.strip_prefix(':').ok_or_else(|| {
                    format!("`{host_port}`: a port follows the address after `:`")
                })?),
            };
        if address.is_empty() || !address.chars().all(|c| c.is_ascii_hexdigit() || c == ':') {
            return Err(format!("`{address}` is not an IPv6 address"));
        }
        (address.to_string(), port)
    } else {
        match host_port.split_once(':') {
            Some((host, port)) => (word(host, "host")?, Some(port)),
            None => (word(host_port, "host")?, None),
        }
    };
    let port = port
        .map(|port| {
            port.parse::<u16>()
                .ok()
                .filter(|port| *port > 0)
                .ok_or_else(|| format!("`{port}` is not a port (1 to 65535)"))
        })
        .transpose()?;
    Ok(Target::Ssh { user, host, port })
}

fn kubernetes(rest: &str) -> Result<Target, String> {
    let parts: Vec<&str> = rest.split('/').collect();
    let (namespace, pod, container) = match parts.as_slice() {
        [pod] => (None, *pod, None),
        [namespace, pod] => (Some(*namespace), *pod, None),
        [namespace, pod, container] => (Some(*namespace), *pod, Some(*container)),
        _ => return Err(format!("`k8s://{rest}`: {FORMS}")),
    };
    let name = |name: &str, what: &str| -> Result<String, String> {
        let valid = !name.is_empty()
            && name.len() <= 253
            && name.starts_with(|c: char| c.is_ascii_alphanumeric())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
        if valid {
            Ok(name.to_string())
        } else {
            Err(format!(
                "`{name}` is not a Kubernetes {what} name (lower-case letters, digits, `-`, `.`)"
            ))
        }
    };
    Ok(Target::Kubernetes {
        namespace: namespace.map(|ns| name(ns, "namespace")).transpose()?,
        pod: name(pod, "pod")?,
        container: container.map(|c| name(c, "container")).transpose()?,
    })
}

/// A container's name or id, as Docker and Podman accept them.
fn container_name(name: &str) -> Result<String, String> {
    let valid = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if valid {
        Ok(name.to_string())
    } else {
        Err(format!(
            "`{name}` is not a container name (letters, digits, `_`, `.`, `-`; first a letter or digit)"
        ))
    }
}

/// A user or host name: letters, digits, `.`, `_`, `-`, not first a `-`.
fn word(text: &str, what: &str) -> Result<String, String> {
    let valid = text.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if valid {
        Ok(text.to_string())
    } else {
        Err(format!(
            "`{text}` is not a {what} (letters, digits, `.`, `_`, `-`; not first a `-`)"
        ))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Local => write!(f, "local"),
            Target::Ssh { user, host, port } => {
                write!(f, "ssh://")?;
                if let Some(user) = user {
                    write!(f, "{user}@")?;
                }
                if host.contains(':') {
                    write!(f, "[{host}]")?;
                } else {
                    write!(f, "{host}")?;
                }
                match port {
                    Some(port) => write!(f, ":{port}"),
                    None => Ok(()),
                }
            }
            Target::Docker { container } => write!(f, "docker://{container}"),
            Target::Podman { container } => write!(f, "podman://{container}"),
            Target::Kubernetes {
                namespace,
                pod,
                container,
            } => {
                write!(f, "k8s://")?;
                match (namespace, container) {
                    (Some(ns), Some(c)) => write!(f, "{ns}/{pod}/{c}"),
                    (Some(ns), None) => write!(f, "{ns}/{pod}"),
                    (None, _) => write!(f, "{pod}"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_and_write_back_the_same() {
        for uri in [
            "local",
            "ssh://host",
            "ssh://me@host.example.org",
            "ssh://me@10.0.0.7:2222",
            "ssh://[::1]:22",
            "ssh://[fe80::1]",
            "docker://app_1",
            "podman://3f2a9c",
            "k8s://pod-1",
            "k8s://team/pod-1",
            "k8s://team/pod-1/main",
        ] {
            let target = Target::parse(uri).unwrap_or_else(|err| panic!("{uri}: {err}"));
            assert_eq!(target.to_string(), uri);
        }
        assert_eq!(
            Target::parse("ssh://u@h:22"),
            Ok(Target::Ssh {
                user: Some("u".into()),
                host: "h".into(),
                port: Some(22)
            })
        );
    }

    #[test]
    fn nothing_that_a_tool_would_read_as_an_option_or_shell_gets_through() {
        for uri in [
            "ssh://-oProxyCommand=touch /tmp/x",
            "ssh://-p22",
            "ssh://host -oX",
            "ssh://-l@host",
            "ssh://host:0",
            "ssh://host:99999",
            "ssh://host:2x",
            "ssh://[::1",
            "ssh://[::1]x",
            "ssh://[;]",
            "ssh://",
            "docker://-it",
            "docker://a b",
            "docker://a;b",
            "docker://",
            "podman://--privileged",
            "k8s://-n/pod",
            "k8s://NS/pod",
            "k8s://a/b/c/d",
            "k8s://ns//c",
            "tcp://host",
            "host",
        ] {
            assert!(Target::parse(uri).is_err(), "{uri} was accepted");
        }
    }
}
