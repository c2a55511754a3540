//! Dumping secrets: programs that print a secret store, a cluster's secrets, a whole
//! database or a secret variable, find key files, or serve a credential folder.

use super::*;

/// The programs [`dumps_secrets`] judges (besides the language interpreters).
const SECRET_DUMPERS: &[&str] = &[
    "kubectl",
    "oc",
    "aws",
    "vault",
    "gcloud",
    "pg_dump",
    "pg_dumpall",
    "mysqldump",
    "mariadb-dump",
    "mongodump",
    "mongoexport",
    "redis-cli",
    "echo",
    "printf",
    "find",
    "gpg",
    "gpg2",
    "jq",
    "security",
    "socat",
    "ngrok",
    "busybox",
    "httpd",
    "http-server",
    "serve",
];

/// The names `find -name` looks for when it hunts for keys and credentials.
const KEY_FILE_NAMES: &[&str] = &[
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
];

/// True if `form` prints secrets or whole databases: `kubectl get secret`, `aws configure
/// export-credentials`, a secret manager's read, a database dump, `echo "$API_TOKEN"`, a
/// `find` for key files, a web server publishing the home directory or a key folder.
pub(super) fn dumps_secrets(form: &[Arg]) -> bool {
    let first = form.first().map(|arg| basename(&arg.text)).unwrap_or("");
    if !SECRET_DUMPERS.contains(&first) && !commands::is_language_interpreter(first) {
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
        Some("socat") => socat_reads_secret(&words),
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
                && KEY_FILE_NAMES
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

/// socat reading a credential file (`FILE:~/.aws/credentials`).
fn socat_reads_secret(words: &[&str]) -> bool {
    words.iter().any(|word| {
        word.split_once(':').is_some_and(|(kind, rest)| {
            matches!(
                kind.to_ascii_uppercase().as_str(),
                "FILE" | "OPEN" | "GOPEN"
            ) && is_secret_path(rest.split(',').next().unwrap_or(""))
        })
    })
}
