//! What a verdict tells its host beyond the decision: the tool a `suggest` names, and
//! whether an `ask` is one a sandbox that confines writes bounds.

use crate::{Decision, Verdict};

impl Verdict {
    /// The host's tool a `suggest` verdict names instead of the command; `None` for any
    /// other decision.
    ///
    /// ```
    /// use agent_bash_policy::{Decision, Policy, PolicySettings};
    ///
    /// let settings = PolicySettings {
    ///     host: Some("claude-code".into()),
    ///     ..PolicySettings::default()
    /// };
    /// let policy = Policy::new(&settings).unwrap();
    /// let verdict = policy.check("cat src/main.rs");
    /// assert_eq!(verdict.decision, Decision::Suggest);
    /// assert_eq!(verdict.suggested_tool(), Some("Read"));
    /// assert_eq!(policy.check("cat src/main.rs | wc -l").suggested_tool(), None);
    /// ```
    pub fn suggested_tool(&self) -> Option<&str> {
        if self.decision != Decision::Suggest {
            return None;
        }
        self.segments
            .iter()
            .find(|segment| segment.decision == Decision::Suggest)
            .and_then(|segment| segment.tool.as_deref())
    }

    /// True if the verdict is `ask` only for commands whose harm a sandbox that confines
    /// writes bounds (each `ask` segment is `bounded_by_sandbox`): a host that runs the
    /// command so confined may allow it.
    ///
    /// ```
    /// use agent_bash_policy::Policy;
    ///
    /// let policy = Policy::default();
    /// assert!(policy.check("find . -name '*.pyc' | xargs rm -rf").bounded_by_sandbox());
    /// assert!(policy.check("git ls-files -z | grep -z x | xargs -0 chmod -R a-w").bounded_by_sandbox());
    /// // Paths from elsewhere, or rewritten on the way, are not bounded to the project.
    /// assert!(!policy.check("find / -name x | xargs rm -rf").bounded_by_sandbox());
    /// assert!(!policy.check("find ../x | xargs rm -rf").bounded_by_sandbox());
    /// assert!(!policy.check("find . | sed 's/^/\\//' | xargs rm -rf").bounded_by_sandbox());
    /// assert!(!policy.check("find . | grep -o '/.*' | xargs rm -rf").bounded_by_sandbox());
    /// assert!(!policy.check("cat list | xargs rm -rf").bounded_by_sandbox());
    /// assert!(!policy.check("find . | xargs -I{} rm -rf /{}").bounded_by_sandbox());
    /// assert!(!policy.check("find . | xargs rm -rf ~").bounded_by_sandbox());
    /// assert!(!policy.check("find ~ -name '*.pyc' -delete").bounded_by_sandbox());
    /// assert!(!policy.check("X=rm; $X -rf /").bounded_by_sandbox());
    /// assert!(!policy.check("rm -rf /").bounded_by_sandbox());
    /// ```
    pub fn bounded_by_sandbox(&self) -> bool {
        self.decision == Decision::Ask
            && self
                .segments
                .iter()
                .filter(|segment| segment.decision == Decision::Ask)
                .all(|segment| segment.bounded_by_sandbox)
    }
}
