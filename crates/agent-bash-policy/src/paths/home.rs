//! The home directory's many spellings (`${HOME:?}`, `/home/$USER`, `$(echo ~)`, …),
//! rewritten to the `$HOME` the path rules read.

/// Expansions whose value is the home directory or fails (`${HOME:?}`, `${HOME%/}`), the
/// user's name under `/home` or `/Users`, or nothing (an unquoted `$IFS`), rewritten to what
/// the rules read (`$HOME`, ``).
pub(crate) fn home_spellings(text: &str) -> std::borrow::Cow<'_, str> {
    // Most words name no home and no `IFS`: those stay as they are, uncopied.
    if !text.contains('$')
        || ![
            "HOME", "IFS", "USER", "LOGNAME", "whoami", "id -un", "~", "XDG_",
        ]
        .iter()
        .any(|part| text.contains(part))
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut text = text.replace("${IFS}", "").replace("$IFS", "");
    for user in ["$USER", "${USER}", "$LOGNAME", "${LOGNAME}"] {
        for base in ["/home/", "/Users/"] {
            text = text.replace(&format!("{base}{user}"), "$HOME");
        }
    }
    text = resolve_home_expansions(&text);
    if let Some(rest) = text.strip_prefix("${HOME")
        && let Some(end) = rest.find('}')
        && [":?", "?", "%", ":-", "-", ":=", "="]
            .iter()
            .any(|op| rest[..end].starts_with(op))
    {
        text = format!("$HOME{}", &rest[end + 1..]);
    }
    std::borrow::Cow::Owned(text)
}

/// Expansions of `HOME` whose value bash gives without running anything, and command
/// substitutions that only print the home directory, rewritten to `$HOME` (or to what they
/// leave of it: `${HOME::1}` is `/`, `$(dirname ~)` the directory holding homes).
fn resolve_home_expansions(text: &str) -> String {
    let mut text = text.to_owned();
    if !["HOME", "~", "XDG_", "USER", "whoami", "id -un"]
        .iter()
        .any(|part| text.contains(part))
    {
        return text;
    }
    for same in [
        "${HOME[0]}",
        "${HOME[@]}",
        "${HOME[*]}",
        "${HOME:0}",
        "${HOME@E}",
        "${HOME@P}",
        "${HOME@L}",
        "${HOME%%/}",
        "${HOME%/}",
        "${HOME#}",
        "${HOME:-}",
        "${HOME-}",
        "$(echo ~)",
        "$(echo $HOME)",
        "$(echo ${HOME})",
        "$(realpath ~)",
        "$(readlink -f ~)",
        "$(cd ~ && pwd)",
        "$(cd && pwd)",
        "$(cd; pwd)",
        "$(cd ~; pwd)",
        "$(eval echo ~)",
        "$(printf %s ~)",
        "$(printf %s $HOME)",
        "`echo ~`",
        "`echo $HOME`",
        "~$USER",
        "~$(whoami)",
        "~$(id -un)",
        "$(getent passwd $(id -un) | cut -d: -f6)",
        "$(getent passwd $USER | cut -d: -f6)",
        "$(getent passwd $(whoami) | cut -d: -f6)",
        "${XDG_CONFIG_HOME}/..",
        "$XDG_CONFIG_HOME/..",
        "$XDG_DATA_HOME/../..",
        "${XDG_DATA_HOME}/../..",
        "$XDG_CACHE_HOME/..",
        "${XDG_CACHE_HOME}/..",
    ] {
        text = text.replace(same, "$HOME");
    }
    for same in [
        "$(getent passwd \"$(id -un)\" | cut -d: -f6)",
        "$(getent passwd \"$USER\" | cut -d: -f6)",
    ] {
        text = text.replace(same, "$HOME");
    }
    for parent in [
        "$(dirname \"$HOME\")",
        "$(dirname \"${HOME}\")",
        "$(dirname ~)",
        "$(dirname $HOME)",
        "${HOME%/*}",
        "$(dirname ${HOME})",
    ] {
        text = text.replace(parent, "/home");
    }
    for first in ["${HOME::1}", "${HOME:0:1}"] {
        text = text.replace(first, "/");
    }
    // `${HOME:+WORD}` and `${HOME+WORD}` are WORD, HOME being set.
    for marker in ["${HOME:+", "${HOME+"] {
        while let Some(at) = text.find(marker) {
            let inner = &text[at + marker.len()..];
            let Some(end) = inner.find('}') else { break };
            let word = inner[..end].to_owned();
            text = format!("{}{word}{}", &text[..at], &inner[end + 1..]);
        }
    }
    text
}
