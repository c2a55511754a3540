//! What the model sees of a command's output: sanitized, windowed, spilled, bounded.

use crate::support::{fx, json, json_with, n, text};

/// The default text budget and the render overhead the engine promises.
const BUDGET_BYTES: usize = 50 * 1024;
const OVERHEAD_BYTES: usize = 4096;

#[test]
fn both_streams_exit_status_and_duration() {
    let out = text("echo to-stdout; echo to-stderr >&2; exit 3");
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("to-stdout"));
    assert_eq!(lines.next(), Some("[stderr]"));
    assert_eq!(lines.next(), Some("to-stderr"));
    let status = lines.next().unwrap_or_default();
    assert!(
        status.starts_with("[exit 3 · ") && status.ends_with(" ms]"),
        "{out}"
    );
}

#[test]
fn empty_output_and_no_empty_stderr_section() {
    let out = text("true");
    assert!(out.starts_with("(no output)\n[exit 0 · "), "{out}");
    let out = text("echo hi");
    assert!(!out.contains("[stderr]"), "{out}");
}

#[test]
fn flood_is_windowed_with_exact_counts_and_spilled_in_full() {
    let result = json(&format!("{} flood 100000", fx()));
    let stdout = result["stdout"].as_str().unwrap_or_default();
    assert!(
        stdout.starts_with("line 1 of the flood\nline 2 of the flood\n"),
        "{stdout:.200}"
    );
    assert!(
        stdout.ends_with("line 100000 of the flood"),
        "the last line survives"
    );
    let total = n(&result, &["stdout_stats", "total_lines"]);
    let omitted = n(&result, &["stdout_stats", "omitted_lines"]);
    assert_eq!(total, 100_000);
    // Shown lines: every line of the view but the marker line.
    let shown = stdout.lines().count() as u64 - 1;
    assert_eq!(shown + omitted, total, "counts add up");
    assert!(shown <= 2000, "{shown} lines shown, over the line budget");
    assert!(stdout.len() <= BUDGET_BYTES + OVERHEAD_BYTES);
    let marker = stdout
        .lines()
        .find(|line| line.starts_with("[… "))
        .unwrap_or_default();
    assert!(marker.contains(&format!("{omitted} lines (")), "{marker}");
    // The spill file holds the whole stream, byte for byte.
    let path = result["stdout_stats"]["full_output_path"]
        .as_str()
        .unwrap_or_default();
    assert!(
        marker.contains(path),
        "the marker names the spill file: {marker}"
    );
    let spilled = std::fs::read_to_string(path).unwrap_or_default();
    let expected: String = (1..=100_000)
        .map(|k| format!("line {k} of the flood\n"))
        .collect();
    assert!(
        spilled == expected,
        "spill file differs from the stream ({} vs {} bytes)",
        spilled.len(),
        expected.len()
    );
    assert_eq!(
        n(&result, &["stdout_stats", "total_bytes"]),
        expected.len() as u64
    );
    let omitted_bytes = n(&result, &["stdout_stats", "omitted_bytes"]);
    let shown_bytes: u64 = stdout
        .lines()
        .filter(|l| !l.starts_with("[… "))
        .map(|l| l.len() as u64 + 1)
        .sum();
    assert_eq!(
        shown_bytes + omitted_bytes,
        expected.len() as u64,
        "byte counts add up"
    );
}

#[test]
fn both_streams_share_one_budget() {
    let result = json(&format!("{} both 40000", fx()));
    let stdout = result["stdout"].as_str().unwrap_or_default();
    let stderr = result["stderr"].as_str().unwrap_or_default();
    assert!(
        stdout.ends_with("out 40000") && stderr.ends_with("err 40000"),
        "both tails survive"
    );
    assert!(
        stdout.starts_with("out 1\n") && stderr.starts_with("err 1\n"),
        "both heads survive"
    );
    let shown = stdout.lines().count() + stderr.lines().count() - 2;
    assert!(shown <= 2000, "{shown} lines shown for the call");
    assert!(stdout.len() + stderr.len() <= BUDGET_BYTES + 2 * OVERHEAD_BYTES);
    for stream in ["stdout_stats", "stderr_stats"] {
        assert_eq!(n(&result, &[stream, "total_lines"]), 40_000);
        assert!(
            result[stream]["full_output_path"].is_string(),
            "{stream} spilled"
        );
    }
}

#[test]
fn budget_flags_are_obeyed() {
    let result = json_with(
        &[
            "--budget-bytes",
            "20000",
            "--budget-lines",
            "40",
            "--line-clip",
            "100",
        ],
        &format!("{} flood 1000", fx()),
    );
    let stdout = result["stdout"].as_str().unwrap_or_default();
    assert_eq!(
        stdout.lines().count(),
        41,
        "40 lines and the marker:\n{stdout}"
    );
    assert!(
        stdout.starts_with("line 1 of the flood\n") && stdout.ends_with("line 1000 of the flood")
    );
    assert_eq!(n(&result, &["stdout_stats", "omitted_lines"]), 960);
}

#[test]
fn long_lines_are_clipped_and_counted() {
    let result = json(&format!("{} long-line 5000000", fx()));
    let stdout = result["stdout"].as_str().unwrap_or_default();
    let first = stdout.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!("{} [… {} more chars]", "x".repeat(2000), 5_000_000 - 2000)
    );
    assert!(
        stdout.ends_with("\nlast line"),
        "{:.100}",
        &stdout[stdout.len().saturating_sub(100)..]
    );
    assert_eq!(n(&result, &["stdout_stats", "clipped_lines"]), 1);
    assert_eq!(
        n(&result, &["stdout_stats", "total_bytes"]),
        5_000_000 + 1 + 10
    );
    let path = result["stdout_stats"]["full_output_path"]
        .as_str()
        .unwrap_or_default();
    let spilled = std::fs::read(path).unwrap_or_default();
    assert_eq!(
        spilled.len(),
        5_000_000 + 11,
        "the whole line is in the spill file"
    );
}

#[test]
fn ansi_progress_bars_and_overstrike_are_cleaned() {
    let result = json(&format!("{} ansi", fx()));
    assert_eq!(
        result["stdout"],
        "green underlined\nprogress 100% \nman: bold"
    );
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    let result = json(&format!("{} bad-utf8", fx()));
    assert_eq!(
        result["stdout"],
        "valid \u{FFFD}\u{FFFD} invalid \u{2713} check"
    );
}

#[test]
fn binary_output_is_described_and_saved() {
    let out = text(&format!("{} png", fx()));
    assert!(
        out.starts_with("[stdout: binary output: 4112 bytes (png); saved to "),
        "{out}"
    );
    let path = out
        .lines()
        .next()
        .and_then(|l| l.split("saved to ").nth(1))
        .unwrap_or_default()
        .trim_end_matches(']');
    let saved = std::fs::read(path).unwrap_or_default();
    let mut expected = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    expected.extend((0..4096u32).map(|n| (n % 251) as u8));
    assert!(
        saved == expected,
        "the raw bytes are saved ({} bytes)",
        saved.len()
    );
}

#[test]
fn a_timeout_over_the_maximum_is_clamped_and_said() {
    let out = crate::support::agent_bash(&["run", "--timeout", "99999", "--", "true"]).stdout;
    assert!(
        out.contains("note: timeout_secs 99999 is over the maximum; the call ran with 3600 s"),
        "{out}"
    );
}
