//! Read-only inspection of process groups through /proc: who is still alive in a tree.
//!
//! Never signals, never waits. Linux only.

use serde::{Deserialize, Serialize};

/// A process found alive in a command's process group or session.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    pub pid: i32,
    /// The command line, arguments joined by spaces (clipped to `COMMAND_CLIP_CHARS`).
    pub command: String,
}

/// Command lines longer than this are clipped in results.
const COMMAND_CLIP_CHARS: usize = 200;

/// Live (not zombie) processes whose process group or session is `leader`.
///
/// # Caveats
/// A process that left both (`setsid` in a daemon's double fork) is not found.
pub fn members(leader: i32) -> Vec<ProcessInfo> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<ProcessInfo> = entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| is_live_member(pid, leader))
        .map(|pid| ProcessInfo {
            pid,
            command: command_line(pid),
        })
        .collect();
    found.sort_by_key(|process| process.pid);
    found
}

/// Some live (not zombie) process whose process group or session is `leader`, if any.
/// Cheaper than `members`: stops at the first, and reads no command line.
///
/// # Caveats
/// As `members`.
pub fn any_member(leader: i32) -> Option<i32> {
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .find(|&pid| is_live_member(pid, leader))
}

/// True if and only if `pid` is alive, not a zombie, and in the group or session `leader`.
pub fn is_live_member(pid: i32, leader: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let Some((_, fields)) = stat.rsplit_once(')') else {
        return false;
    };
    let mut fields = fields.split_ascii_whitespace();
    let state = fields.next();
    let _ppid = fields.next();
    let pgrp = fields.next().and_then(|f| f.parse::<i32>().ok());
    let session = fields.next().and_then(|f| f.parse::<i32>().ok());
    !matches!(state, Some("Z" | "X")) && (pgrp == Some(leader) || session == Some(leader))
}

fn command_line(pid: i32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let mut command = String::from_utf8_lossy(&raw).replace('\0', " ");
    let trimmed = command.trim_end().len();
    command.truncate(trimmed);
    if let Some((cut, _)) = command.char_indices().nth(COMMAND_CLIP_CHARS) {
        command.truncate(cut);
        command.push('…');
    }
    command
}
