//! Feeds arbitrary text to the policy with its default settings and checks that the verdict
//! is consistent and that no panic escapes `check`.
//!
//! brush-parser 0.4.0 panics on some inputs; the policy catches those (`catch_unwind`) and
//! answers with the unknown decision. libfuzzer-sys's panic hook would abort on them even
//! though they are caught, so `init` replaces it with one that only reports them on stderr
//! (`grep 'caught by the policy'` in the log lists them). A panic that escapes `check`, or a
//! failed assertion below, still ends the run as a crash: libfuzzer-sys catches the unwind at
//! its entry point and aborts.
//!
//! Run from `fuzz/` (on stable; `-s none` turns off the sanitizer that needs nightly):
//! `cargo fuzz run -s none policy_check corpus/policy_check seeds/policy_check -- -max_total_time=600 -timeout=5`
//! New inputs go to `corpus/policy_check` (ignored by git); `seeds/policy_check` holds the
//! hand-written seeds.

#![no_main]

use agent_bash_policy::{Decision, Policy, PolicySettings};
use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: {
        std::panic::set_hook(Box::new(|info| {
            eprintln!("caught by the policy unless a crash follows: {info}");
        }));
    },
    |data: &[u8]| {
        let command = String::from_utf8_lossy(data);
        let Ok(policy) = Policy::new(&PolicySettings::default()) else {
            panic!("the default settings must load");
        };
        let verdict = policy.check(&command);

        // The decision is the strongest segment decision; no segments means nothing runs.
        let strongest = verdict
            .segments
            .iter()
            .map(|segment| segment.decision)
            .max();
        assert_eq!(
            verdict.decision,
            strongest.unwrap_or(Decision::Allow),
            "{command:?}"
        );

        // The rule and reason are those of the first segment with that decision.
        if let Some(deciding) = verdict
            .segments
            .iter()
            .find(|segment| segment.decision == verdict.decision)
        {
            assert_eq!(verdict.rule, deciding.rule, "{command:?}");
            assert_eq!(verdict.reason, deciding.reason, "{command:?}");
        }

        // A segment decided by no rule has the default (allow), the unknown (ask) decision, or is
        // a launcher whose script was checked (allow).
        for segment in &verdict.segments {
            if segment.rule.is_none() {
                assert!(
                    matches!(segment.decision, Decision::Allow | Decision::Ask),
                    "{command:?}"
                );
            } else {
                assert!(segment.reason.is_some(), "{command:?}");
            }
        }
    }
);
