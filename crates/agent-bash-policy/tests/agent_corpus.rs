//! Commands as coding agents really write them (`tests/corpus/agent_commands.txt`, sources in
//! `tests/corpus/SOURCES.md`), checked under the default settings: every one is allowed except
//! the ones listed in `NOT_ALLOWED`, each with the reason it is not. A new refusal of an
//! ordinary command fails this test, and so does a listed one that becomes allowed (the list
//! is the record of what is still refused, reported in the issue notes).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_bash_policy::{Decision, Policy};

/// The records of the corpus: `(source id, command)`.
fn corpus() -> Vec<(String, String)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/corpus/agent_commands.txt"
    );
    let text = std::fs::read_to_string(path).expect("the corpus file");
    text.split("\n%%\n")
        .map(|record| {
            let record = record.trim_end_matches('\n');
            let (header, command) = record
                .split_once('\n')
                .expect("a source line, then a command");
            let source = header.strip_prefix("#@ ").expect("`#@ source` first");
            (source.to_owned(), command.to_owned())
        })
        .collect()
}

/// A short stable name for a command: a hash of its text, then its start.
fn key(command: &str) -> String {
    // FNV-1a: stable across runs and platforms.
    let hash = command
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
    let start: String = command.chars().take(40).collect();
    format!("{hash:016x} {}", start.replace('\n', "⏎"))
}

/// The corpus commands that are not allowed, by key, with why that is right (or, marked
/// WRONG, an ask a reviewer would not want, still to be fixed).
const NOT_ALLOWED: &[(&str, &str)] = &[
    // Bash rejects these too (`bash -n`): the agent put `&&` on the line after a
    // here-document's delimiter, or a `)` where bash reads it. Bash runs the lines before
    // the syntax error, so what runs is not known.
    ("761f52902591075a", "a syntax error in bash too"),
    ("6d6b190024186b0c", "a syntax error in bash too"),
    ("69f69726067af453", "a syntax error in bash too"),
    ("ad1bd15fa1c2806c", "a syntax error in bash too"),
    ("bfdff7d722249cce", "a syntax error in bash too"),
    ("5a5b990381f51eb3", "a syntax error in bash too"),
    ("a2ab14bac833f364", "a syntax error in bash too"),
    ("dd5affa0819b771f", "a syntax error in bash too"),
    ("1332acf112cbc9e9", "a syntax error in bash too"),
    ("b142287d9eea20fa", "a syntax error in bash too"),
    ("829c4608d27b9041", "a syntax error in bash too"),
    ("3a484b6679bf1b36", "a syntax error in bash too"),
    // `bash -lc "cat <<'PYT'\ndef f(x):…"`: the `\n` are not newlines, so the inner script
    // is one line with a `(` bash rejects.
    ("be9f5d0c5eee1242", "a syntax error in bash too"),
    // Makefile syntax pasted into bash: `$(PHP_EXECUTABLE)` runs a command of that name.
    (
        "c617afa0ac0a6a99",
        "the command name is a command substitution",
    ),
    // `xargs` handing `kill` pids read at run time: asks, as the trust issue asks it to.
    ("a9aecedb4346a6bd", "xargs feeding kill"),
    // WRONG: `env NAME=$X … cmd`; the unquoted `$SB` could split into words (so the command
    // is unknown in general), but a reviewer would want this allowed.
    (
        "8746ba21466b0001",
        "WRONG: env assignment with an unquoted expansion",
    ),
];

#[test]
fn agent_commands_are_allowed_under_the_default_settings() {
    let policy = Policy::default().with_environment([
        ("HOME".to_owned(), "/home/dev".to_owned()),
        (
            "VIRTUAL_ENV".to_owned(),
            "/home/dev/project/.venv".to_owned(),
        ),
        ("CARGO_HOME".to_owned(), "/home/dev/.cargo".to_owned()),
        ("NVM_DIR".to_owned(), "/home/dev/.nvm".to_owned()),
    ]);
    let records = corpus();
    assert!(records.len() >= 1_000, "{} records", records.len());
    let mut refused = Vec::new();
    for (source, command) in &records {
        let verdict = policy.check(command);
        if verdict.decision != Decision::Allow {
            refused.push(format!(
                "{} [{source}] {:?}: {}",
                key(command),
                verdict.decision,
                verdict.reason.unwrap_or_default()
            ));
        }
    }
    let report = format!(
        "{} of {} commands not allowed ({:.2}%):\n{}",
        refused.len(),
        records.len(),
        100.0 * refused.len() as f64 / records.len() as f64,
        refused.join("\n")
    );
    println!("{report}");
    let unexpected: Vec<&String> = refused
        .iter()
        .filter(|line| !NOT_ALLOWED.iter().any(|(key, _)| line.starts_with(key)))
        .collect();
    let now_allowed: Vec<&str> = NOT_ALLOWED
        .iter()
        .map(|(key, _)| *key)
        .filter(|key| !refused.iter().any(|line| line.starts_with(key)))
        .collect();
    assert!(
        unexpected.is_empty() && now_allowed.is_empty(),
        "not allowed but not listed: {unexpected:#?}\nlisted but now allowed: {now_allowed:?}\n{report}"
    );
}
