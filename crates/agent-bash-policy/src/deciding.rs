//! Combining: the decision on each segment (the strongest matching rule or built-in, the
//! unknown decision, the default) and on the command line (its strongest segment), with a
//! suggestion standing in for an allow.

use crate::{Decision, Policy, Segment, Verdict, suggest, walk};

impl Policy {
    pub(super) fn check_unguarded(&self, command: &str) -> Verdict {
        let found = walk::walk(command, &self.env);
        let suggestion = suggest::first(&self.suggestions, command, &found);
        let mut segments: Vec<Segment> =
            found.into_iter().map(|found| self.decide(found)).collect();
        // A suggestion only ever stands in for an allow: what a rule, a built-in or the
        // fallback decisions ask about or deny stays so. (`first` found it only for a line
        // that is one simple command: one segment.)
        if let (Some(suggestion), [segment]) = (suggestion, segments.as_mut_slice())
            && segment.decision == Decision::Allow
        {
            segment.decision = Decision::Suggest;
            segment.rule = Some(suggestion.name.clone());
            segment.reason = Some(suggestion.message.clone());
            segment.tool = Some(suggestion.tool.clone());
        }
        let deciding = segments
            .iter()
            .fold(None::<&Segment>, |best, segment| match best {
                Some(best) if best.decision >= segment.decision => Some(best),
                _ => Some(segment),
            });
        let (decision, reason, rule) = match deciding {
            Some(segment) => (
                segment.decision,
                segment.reason.clone(),
                segment.rule.clone(),
            ),
            None => (Decision::Allow, None, None),
        };
        Verdict {
            decision,
            segments,
            reason,
            rule,
        }
    }

    /// The decision on one segment: the strongest matching rule, raised to the unknown
    /// decision when the segment is unknown; the default when nothing applies.
    fn decide(&self, found: crate::words::Found) -> Segment {
        let mut best: Option<(Decision, Option<String>, Option<String>)> = None;
        let mut consider = |decision: Decision, rule: Option<&str>, reason: Option<&str>| {
            if best
                .as_ref()
                .is_none_or(|(current, _, _)| decision > *current)
            {
                best = Some((decision, rule.map(str::to_owned), reason.map(str::to_owned)));
            }
        };
        for rule in self.rules.iter().filter(|rule| rule.matches(&found)) {
            consider(rule.decision, Some(&rule.name), rule.reason.as_deref());
        }
        // A deny is the strongest decision: the first built-in that matches decides.
        if let Some(builtin) = self.builtins.iter().find(|builtin| builtin.matches(&found)) {
            consider(Decision::Deny, Some(builtin.name), Some(builtin.reason));
        }
        if let Some(reason) = &found.unknown {
            consider(self.unknown, None, Some(reason));
        }
        let unknown_decided =
            best.as_ref().is_some_and(|(_, rule, _)| rule.is_none()) && found.unknown.is_some();
        let (decision, rule, reason) = best.unwrap_or_else(|| {
            if found.launcher {
                let reason = "runs a script whose commands are checked as their own segments";
                (Decision::Allow, None, Some(reason.to_owned()))
            } else {
                (self.default, None, None)
            }
        });
        let bounded_by_sandbox = unknown_decided && found.files_only && decision == Decision::Ask;
        Segment {
            argv: found.argv.into_iter().map(|arg| arg.text).collect(),
            decision,
            rule,
            reason,
            via: found.via,
            redirects: found
                .redirects
                .iter()
                .filter(|redirect| redirect.op != "|")
                .map(crate::words::Redirect::text)
                .collect(),
            bounded_by_sandbox,
            tool: None,
        }
    }
}
