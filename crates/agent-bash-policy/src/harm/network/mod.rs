//! The network: shells handed to a connection, and credentials or the environment sent to
//! another machine. Reverse shells, sending data out, and reading or dumping secrets each
//! have a file; this one holds raw connections and the code interpreters fetch or run.

use super::*;

mod dumps;
mod secrets;
mod sending;
mod shells;

pub(crate) use secrets::reads_secret;
pub(crate) use sending::{sends, sends_only_to, token_service};
pub(crate) use shells::reverse_shell;

/// Programs that open raw network connections and pass data either way.
const RAW_NETWORK: &[&str] = &[
    "nc", "ncat", "netcat", "socat", "telnet", "openssl", "cryptcat", "pwncat", "sbd", "rlwrap",
];

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
