use super::*;

/// Walks `line` with no environment known.
fn walk(line: &str) -> Vec<Found> {
    super::walk(line, &HashMap::new())
}

fn commands(line: &str) -> Vec<String> {
    walk(line)
        .iter()
        .map(|found| {
            found
                .argv
                .iter()
                .map(|arg| arg.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn finds_nested_commands_outer_first() {
    assert_eq!(
        commands("echo $(rm -rf /) `id`"),
        ["echo $(rm -rf /) `id`", "rm -rf /", "id"]
    );
    assert_eq!(commands("X=$(whoami) ls"), ["ls", "whoami"]);
    assert_eq!(commands("X=$(whoami)"), ["whoami"]);
    assert_eq!(commands("cat <(curl x) | sh"), ["cat <(…)", "curl x", "sh"]);
    assert_eq!(
        commands("echo ${x:-$(rm -rf /)}"),
        ["echo ${x:-$(rm -rf /)}", "rm -rf /"]
    );
    assert_eq!(
        commands("bash -c 'ls; pwd'"),
        ["bash -c ls; pwd", "ls", "pwd"]
    );
    assert_eq!(commands("f() { rm -rf /; }; f"), ["rm -rf /", "f"]);
    assert_eq!(
        commands("find . -exec rm {} \\;"),
        ["find . -exec rm {} ;", "rm {}"]
    );
}

#[test]
fn code_outside_command_words_is_found() {
    for (line, inner) in [
        ("a[$(id)]=1", "id"),
        ("let 'a[$(id)]=1'", "id"),
        ("read -r 'a[`id`]' <<< x", "id"),
        ("[[ -v 'a[$(id)]' ]]", "id"),
        ("trap -- 'id' EXIT", "id"),
        ("ssh -oProxyCommand='nc x 22' h", "nc x 22"),
        ("git -c alias.x='!id' x", "id"),
        ("GIT_SSH_COMMAND='ssh -i k' git fetch", "ssh -i k"),
        ("( ( id ) )", "id"),
        ("((id) )", "id"),
    ] {
        assert!(commands(line).contains(&inner.to_owned()), "{line}");
    }
    assert_eq!(commands("((x = 1 + 2))"), Vec::<String>::new());
    assert_eq!(commands("let 'a[1]=2'"), ["let a[1]=2"]);
    let unknown = |line: &str| walk(line).iter().any(|found| found.unknown.is_some());
    assert!(unknown("hash -p /bin/rm ls"));
    assert!(unknown("shopt -s expand_aliases"));
    assert!(!unknown("hash -r"));
}

#[test]
fn braces_expand() {
    assert_eq!(commands("{rm,-rf,/}"), ["rm -rf /"]);
    assert_eq!(commands("echo a{b,c}d {1..3}"), ["echo abd acd 1 2 3"]);
    assert_eq!(commands("echo {}"), ["echo {}"]);
}

#[test]
fn heredocs_expand_only_with_an_unquoted_delimiter() {
    assert_eq!(
        commands("cat <<EOF\n$(rm -rf /)\nEOF\n"),
        ["cat", "rm -rf /"]
    );
    assert_eq!(commands("cat <<'EOF'\n$(rm -rf /)\nEOF\n"), ["cat"]);
    assert_eq!(
        commands("bash <<'EOF'\nrm -rf /\nEOF\n"),
        ["bash", "rm -rf /"]
    );
}

#[test]
fn fork_bombs_are_marked() {
    let found = walk(":(){ :|:& };:");
    assert!(found.iter().any(|found| found.fork_bomb));
    let found = walk(":(){ :|:; };:");
    assert!(found.iter().any(|found| found.fork_bomb));
    for harmless in [
        "f() { f; }; f",
        "walk() { walk \"$1/x\" | sort; }",
        "f() { g & }",
    ] {
        assert!(
            !walk(harmless).iter().any(|found| found.fork_bomb),
            "{harmless}"
        );
    }
}

#[test]
fn command_names_from_the_environment_are_read_where_the_command_leaves_them_alone() {
    let env = crate::env::usable([
        ("VENV".to_owned(), "/w/.venv".to_owned()),
        ("HOME".to_owned(), "/home/me".to_owned()),
        ("SHELL".to_owned(), "/bin/bash".to_owned()),
    ]);
    let names = |line: &str| -> Vec<(String, bool)> {
        super::walk(line, &env)
            .iter()
            .map(|found| {
                let first = found.argv.first().cloned().unwrap_or_default();
                (first.text, found.unknown.is_none())
            })
            .collect()
    };
    let known = |text: &str| (text.to_owned(), true);
    let unknown = |text: &str| (text.to_owned(), false);
    assert_eq!(
        names("\"$VENV/bin/python\" -m pytest"),
        [known("/w/.venv/bin/python")]
    );
    assert_eq!(
        names("${HOME}/.cargo/bin/cargo build"),
        [known("/home/me/.cargo/bin/cargo")]
    );
    // Through a wrapper, and a launcher whose script is then walked.
    assert_eq!(
        names("timeout 5 $HOME/bin/tool; \"$SHELL\" -c 'ls'"),
        [known("timeout"), known("/bin/bash"), known("ls")]
    );
    // Assigned, read, sourced, or expanded by another shell: not known. An assigned
    // value is also walked as the command it most likely builds (`expanded.rs`).
    assert_eq!(
        names("VENV=/tmp; $VENV/bin/python"),
        [unknown("$VENV/bin/python"), known("/tmp/bin/python")]
    );
    assert_eq!(
        names("read HOME; $HOME/x"),
        [known("read"), unknown("$HOME/x")]
    );
    assert_eq!(
        names("source env.sh; $VENV/bin/python"),
        [known("source"), unknown("$VENV/bin/python")]
    );
    assert_eq!(
        names("sudo bash -c '$HOME/bin/x'"),
        [known("sudo"), unknown("$HOME/bin/x")]
    );
    assert_eq!(names("$UNSET/bin/x"), [unknown("$UNSET/bin/x")]);
    assert_eq!(
        names("$HOME$(id)/x"),
        [unknown("$HOME$(id)/x"), known("id")]
    );
}
