//! Reads of a job: what its files gained since the previous read, windowed like a call's
//! output, after waiting (bounded) for new lines, a line matching a pattern, or the end.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use super::{Cursor, Job, JobOutput, JobStatus, millis};
use crate::config::Budget;
use crate::error::Error;
use crate::lock;
use crate::outcome::Note;
use crate::output::{Capture, Stream, StreamKind, StreamOutput, window};

/// Longest line a pattern is matched against (longer ones are matched on their start), and
/// how far back a read looks for the last complete line.
const LONGEST_LINE: usize = 64 * 1024;

/// The output of `job` since the previous read, after waiting up to `wait` for the job to
/// end or for new output (a line matching `pattern`, if given).
///
/// # Errors
/// `Pattern`.
pub(super) async fn output(
    job: &Job,
    wait: Duration,
    pattern: Option<&str>,
    budget: Budget,
) -> Result<JobOutput, Error> {
    let regex = pattern
        .map(|pattern| {
            regex::bytes::Regex::new(pattern).map_err(|err| Error::Pattern {
                pattern: pattern.to_string(),
                reason: err.to_string(),
            })
        })
        .transpose()?;
    let began = Instant::now();
    let matched = wait_for_news(job, wait, regex).await;
    let waited = began.elapsed();
    let mut output = read_new(job, budget).await;
    output.waited_ms = millis(waited);
    if let Some(pattern) = pattern {
        output.pattern = Some(pattern.to_string());
        output.pattern_matched = Some(matched);
        if !matched {
            output.notes.push(Note::PatternNotMatched {
                pattern: pattern.to_string(),
                waited_secs: waited.as_secs(),
                job_ended: output.job.status != JobStatus::Running,
            });
        }
    }
    Ok(output)
}

/// Waits until a read would show something: a new complete line (or, with `regex`, a new
/// line matching it), the job's end, or `wait`. True if a line matched `regex`.
async fn wait_for_news(job: &Job, wait: Duration, regex: Option<regex::bytes::Regex>) -> bool {
    let deadline = tokio::time::Instant::now() + wait;
    let mut changes = job.state.subscribe();
    let mut scan = *lock(&job.cursor);
    loop {
        let ended = changes.borrow_and_update().ended.is_some();
        let lengths = job.file_lengths();
        if let Some(regex) = &regex {
            // Off the async workers: a flooding job's new part can be large.
            let (regex, paths) = (
                regex.clone(),
                (job.stdout_path.clone(), job.stderr_path.clone()),
            );
            let scanned = tokio::task::spawn_blocking(move || {
                let matched = scan_lines(&paths.0, &mut scan.stdout, lengths.stdout, &regex, ended)
                    || scan_lines(&paths.1, &mut scan.stderr, lengths.stderr, &regex, ended);
                (matched, scan)
            })
            .await;
            if let Ok((matched, scanned_to)) = scanned {
                scan = scanned_to;
                if matched {
                    return true;
                }
            }
        } else if has_new_line(job, *lock(&job.cursor), lengths, ended) {
            return false;
        }
        if ended || wait.is_zero() {
            return false;
        }
        match tokio::time::timeout_at(deadline, changes.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => return false,
        }
    }
}

/// Windows what the job's files gained since its cursor, and moves the cursor past it.
async fn read_new(job: &Job, budget: Budget) -> JobOutput {
    let _one_read_at_a_time = job.reading.lock().await;
    // Status first: once it says ended, the files are complete.
    let info_before = job.info();
    let kinds = *lock(&job.kinds);
    let from = *lock(&job.cursor);
    let running = info_before.status == JobStatus::Running;
    let lengths = Cursor {
        stdout: info_before.stdout_bytes,
        stderr: info_before.stderr_bytes,
    };
    let paths = (job.stdout_path.clone(), job.stderr_path.clone());
    let windowed = tokio::task::spawn_blocking(move || {
        let to = Cursor {
            stdout: line_end(&paths.0, from.stdout, lengths.stdout, running),
            stderr: line_end(&paths.1, from.stderr, lengths.stderr, running),
        };
        let stdout = window_part(
            Stream::Stdout,
            &paths.0,
            from.stdout,
            to.stdout,
            budget,
            kinds[0],
        );
        let stderr = window_part(
            Stream::Stderr,
            &paths.1,
            from.stderr,
            to.stderr,
            budget,
            kinds[1],
        );
        let (out_share, err_share) = window::allocate(&budget, stdout.demand(), stderr.demand());
        (to, stdout.finish(out_share), stderr.finish(err_share))
    })
    .await;
    let windowed = windowed.map(|(to, stdout, stderr)| {
        // Moved only now: a read dropped while it windows leaves the output unread.
        *lock(&job.cursor) = to;
        (stdout, stderr)
    });
    let mut notes = lock(&job.file_problems).clone();
    let (stdout, stderr) = windowed.unwrap_or_else(|err| {
        notes.push(Note::JobReadFailed {
            error: err.to_string(),
        });
        (StreamOutput::default(), StreamOutput::default())
    });
    JobOutput {
        job: info_before,
        stdout: stdout.text,
        stderr: stderr.text,
        stdout_stats: stdout.stats,
        stderr_stats: stderr.stats,
        pattern: None,
        pattern_matched: None,
        waited_ms: 0,
        notes,
    }
}

/// True if and only if a read would show something new: a complete line past `cursor`
/// (or anything, once the job has ended).
fn has_new_line(job: &Job, cursor: Cursor, lengths: Cursor, ended: bool) -> bool {
    line_end(&job.stdout_path, cursor.stdout, lengths.stdout, !ended) > cursor.stdout
        || line_end(&job.stderr_path, cursor.stderr, lengths.stderr, !ended) > cursor.stderr
}

/// Where a read of a running job's file `from..to` should stop: after the last complete
/// line, since a line still being written (or a write still being copied in: the file
/// grows a page at a time) belongs to the next read. A part with no line end is read
/// whole once it is longer than a line the model could be shown anyway.
fn line_end(path: &Path, from: u64, to: u64, running: bool) -> u64 {
    if !running || to <= from {
        return to;
    }
    let start = to.saturating_sub(LONGEST_LINE as u64).max(from);
    let mut tail = Vec::new();
    let read = File::open(path).and_then(|mut file| {
        file.seek(SeekFrom::Start(start))?;
        file.take(to - start).read_to_end(&mut tail)
    });
    if read.is_err() {
        return to;
    }
    match memchr::memrchr(b'\n', &tail) {
        Some(newline) => start + newline as u64 + 1,
        None if to - from >= LONGEST_LINE as u64 => to,
        None => from,
    }
}

/// Feeds bytes `from..to` of `path` through a reading capture.
fn window_part(
    stream: Stream,
    path: &Path,
    from: u64,
    to: u64,
    budget: Budget,
    kind: StreamKind,
) -> Capture {
    let mut capture = Capture::reading(stream, budget, path.to_path_buf(), kind);
    if to > from
        && let Ok(mut file) = File::open(path)
        && file.seek(SeekFrom::Start(from)).is_ok()
    {
        let mut part = file.take(to - from);
        let mut buffer = vec![0u8; 64 * 1024];
        while let Ok(n) = part.read(&mut buffer) {
            if n == 0 {
                break;
            }
            capture.feed(&buffer[..n]);
        }
    }
    capture.close();
    capture
}

/// Looks for a line matching `regex` among the complete lines of `path` from `*position`
/// to `end` (and the last line without a newline too, if `at_end`: the job has ended), and
/// moves `*position` past the lines it read.
fn scan_lines(
    path: &Path,
    position: &mut u64,
    end: u64,
    regex: &regex::bytes::Regex,
    at_end: bool,
) -> bool {
    if end <= *position {
        return false;
    }
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    if file.seek(SeekFrom::Start(*position)).is_err() {
        return false;
    }
    let mut part = file.take(end - *position);
    let mut buffer = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut consumed = *position;
    // Bytes of the line being read that are already behind `consumed`.
    let mut partial = 0u64;
    while let Ok(n) = part.read(&mut buffer) {
        if n == 0 {
            break;
        }
        let mut rest = &buffer[..n];
        while let Some(newline) = memchr::memchr(b'\n', rest) {
            let room = LONGEST_LINE.saturating_sub(line.len());
            line.extend_from_slice(&rest[..newline.min(room)]);
            consumed += partial + newline as u64 + 1;
            partial = 0;
            let hit = regex.is_match(&line);
            line.clear();
            rest = &rest[newline + 1..];
            if hit {
                *position = consumed;
                return true;
            }
        }
        let room = LONGEST_LINE.saturating_sub(line.len());
        line.extend_from_slice(&rest[..rest.len().min(room)]);
        partial += rest.len() as u64;
    }
    if at_end && partial > 0 && regex.is_match(&line) {
        *position = consumed + partial;
        return true;
    }
    *position = consumed;
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(content: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("job-1-stdout.log");
        std::fs::write(&path, content).expect("written");
        (dir, path)
    }

    #[test]
    fn a_running_job_is_read_up_to_its_last_complete_line() {
        let (_dir, path) = file(b"one\ntwo\nthr");
        let len = 11;
        assert_eq!(
            line_end(&path, 0, len, true),
            8,
            "the line being written waits"
        );
        assert_eq!(
            line_end(&path, 8, len, true),
            8,
            "nothing complete past the cursor"
        );
        assert_eq!(
            line_end(&path, 0, len, false),
            len,
            "an ended job is read whole"
        );
        assert_eq!(line_end(&path, 4, 4, true), 4);
        // A line longer than any shown line is read whole even without its end.
        let long = vec![b'x'; LONGEST_LINE + 10];
        let (_dir, path) = file(&long);
        assert_eq!(
            line_end(&path, 0, long.len() as u64, true),
            long.len() as u64
        );
    }

    #[test]
    fn a_pattern_scan_moves_past_the_lines_it_read_and_stops_at_a_match() {
        let (_dir, path) = file(b"starting\nlistening on 8080\nready\npartial ready");
        let regex = regex::bytes::Regex::new("listening on [0-9]+").expect("a regex");
        let mut position = 0;
        assert!(scan_lines(&path, &mut position, 46, &regex, false));
        assert_eq!(position, 27, "just past the matching line");
        let ready = regex::bytes::Regex::new("^partial").expect("a regex");
        assert!(
            !scan_lines(&path, &mut position, 46, &ready, false),
            "an unfinished line"
        );
        assert_eq!(
            position, 33,
            "past `ready`, not into the line being written"
        );
        assert!(
            scan_lines(&path, &mut position, 46, &ready, true),
            "the job's last line"
        );
        assert_eq!(position, 46);
        assert!(
            !scan_lines(&path, &mut position, 46, &ready, true),
            "nothing new"
        );
    }
}
