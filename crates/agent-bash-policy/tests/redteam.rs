//! The blind red team's corpus (`tests/redteam/*.tsv`): command lines written by someone who
//! had not read the policy's code, in forms no rule was written against, with ordinary
//! developer commands that look like them. Six files, by six writers: the first two
//! (hidden programs to runners; options to remote systems) were written before the policy's
//! tables and families and guided them; the next two (attacks disguised as ordinary work;
//! rare tools and bash corners) were written afterwards and measured blind before any rule
//! looked at them; the fifth (`blind-fresh.tsv`, every class in less obvious forms) and the
//! sixth (`blind-second.tsv`, attacks a hostile repository could talk an agent into, with
//! many look-alike ordinary commands) were written last, again without the policy's code,
//! and measured blind the same way. One case a line, tab-separated: the decision it
//! must get (`deny`; `ask`, which a `deny` also satisfies; `allow`), the command (`⏎` stands
//! for a newline), and the bash behaviour it relies on. `#` lines are sections.
//!
//! Every case is checked under the default settings and sorted into: held, *bypass* (an
//! attack allowed), *false refusal* (ordinary work denied), *softened* (a deny that only
//! asks) and *asked* (ordinary work that asks). The cases that do not hold yet are listed in
//! `tests/redteam/open.txt` with what they get today: the test fails on any case that is not
//! held and not listed (a regression) and on any listed case that now holds (so the list
//! keeps counting what is left). The counts go into the issue notes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use agent_bash_policy::{Decision, Policy};

const FILES: [&str; 6] = [
    "hidden-program-to-runners.tsv",
    "options-to-remote.tsv",
    "blind-disguised.tsv",
    "blind-rare-tools.tsv",
    "blind-fresh.tsv",
    "blind-second.tsv",
];

/// How a case fared.
fn outcome(expected: &str, got: Decision) -> &'static str {
    match (expected, got) {
        ("deny" | "ask", Decision::Allow) => "bypass",
        ("allow", Decision::Deny) => "false-refusal",
        ("deny", Decision::Ask) => "softened",
        ("allow", Decision::Ask) => "asked",
        _ => "held",
    }
}

#[test]
fn the_red_team_corpus_holds_except_the_listed_gaps() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/redteam");
    let policy = Policy::default();
    let mut gaps = BTreeSet::new();
    let mut counts = std::collections::BTreeMap::new();
    for file in FILES {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).expect("a corpus file");
        for (index, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let columns: Vec<&str> = line.split('\t').collect();
            let [expected, command, behaviour] = columns[..] else {
                panic!("{file}:{}: expected three tab-separated columns", index + 1);
            };
            assert!(
                matches!(expected, "deny" | "ask" | "allow"),
                "{file}:{}: bad decision {expected:?}",
                index + 1
            );
            assert!(
                !behaviour.trim().is_empty(),
                "{file}:{}: say why",
                index + 1
            );
            let got = policy.check(&command.replace('⏎', "\n")).decision;
            let kind = outcome(expected, got);
            *counts.entry((expected.to_owned(), kind)).or_insert(0) += 1;
            if kind != "held" {
                gaps.insert(format!("{file}:{} {kind}", index + 1));
            }
        }
    }
    let listed: BTreeSet<String> = std::fs::read_to_string(format!("{dir}/open.txt"))
        .expect("the list of open gaps")
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect();
    let new: Vec<&String> = gaps.difference(&listed).collect();
    let closed: Vec<&String> = listed.difference(&gaps).collect();
    assert!(
        new.is_empty() && closed.is_empty(),
        "not held and not listed (regressions): {new:#?}\nlisted but now held (update open.txt): {closed:#?}\ncounts: {counts:?}"
    );
}
