//! The policy stage of agent-bash: decides allow, ask or deny for a bash command from its
//! parsed structure. Pure: parses and matches, runs nothing.
