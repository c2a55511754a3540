//! Reverse shells: a shell, or a program that runs one, wired to a network connection so
//! whoever is at the far end types its commands.

use super::*;

/// socat address kinds that reach the network.
const SOCAT_NETWORK_KINDS: &[&str] = &[
    "tcp",
    "udp",
    "openssl",
    "sctp",
    "tcp4",
    "tcp6",
    "tcp-connect",
    "tcp-listen",
    "ssl",
];

/// Calls in interpreter code that open a socket.
const SOCKET_CALLS: &[&str] = &[
    "socket",
    "fsockopen",
    "TCPSocket",
    "net.Socket",
    "Socket.new",
    "IO::Socket",
    "connect(",
];

/// What interpreter code hands a socket to when it starts a shell on it.
const SHELL_SPAWNS: &[&str] = &[
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
        "socat" => socat_runs_shell_on_network(form),
        _ if commands::is_language_interpreter(&name) => code_connects_shell(form),
        _ => false,
    }
}

/// True if socat's addresses join a program it runs (`EXEC:`, `SYSTEM:`) to a network one.
fn socat_runs_shell_on_network(form: &[Arg]) -> bool {
    let words: Vec<String> = form
        .iter()
        .skip(1)
        .map(|arg| arg.text.to_ascii_lowercase())
        .collect();
    words
        .iter()
        .any(|word| word.starts_with("exec:") || word.starts_with("system:"))
        && words.iter().any(|word| {
            SOCAT_NETWORK_KINDS.iter().any(|kind| {
                word.starts_with(&format!("{kind}:")) || word.starts_with(&format!("{kind}-"))
            })
        })
}

/// True if an interpreter's code on the command line opens a socket and starts a shell.
fn code_connects_shell(form: &[Arg]) -> bool {
    form.iter().skip(1).any(|arg| {
        let code = arg.text.as_str();
        let socket = SOCKET_CALLS.iter().any(|word| code.contains(word));
        let shell = SHELL_SPAWNS.iter().any(|word| code.contains(word));
        socket && shell
    })
}
