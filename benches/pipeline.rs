//! Output pipeline throughput: bytes through (redact →) sniff → sanitize → lines → window
//! (→ spill). The `redacting/*` cases add the secret stage with the built-in token patterns
//! and five secret values, plus two short ones looked for beside their names, as a session
//! with secrets in its environment has.
//!
//! The spill cap is 0 here so the figures are the CPU cost of the pipeline, not the disk's.
//! Run: `cargo bench --bench pipeline`.

// Setup that cannot fail in a bench may unwrap, as in tests (clippy.toml covers only tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use std::sync::Arc;

use agent_bash_core::bench::Capture;
use agent_bash_core::bench::Secrets;
use agent_bash_core::bench::Share;
use agent_bash_core::bench::SpillDir;
use agent_bash_core::{Budget, SecretsConfig};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const INPUT_BYTES: usize = 32 << 20;
/// As the collect stage reads.
const CHUNK_BYTES: usize = agent_bash_core::bench::READ_CHUNK_BYTES;

fn plain() -> Vec<u8> {
    let mut out = Vec::with_capacity(INPUT_BYTES);
    let mut n = 0u64;
    while out.len() < INPUT_BYTES {
        n += 1;
        out.extend_from_slice(
            format!(
                "   Compiling crate-number-{n} v0.1.{n} (/work/project/crates/crate-{n})\tok\n"
            )
            .as_bytes(),
        );
    }
    out
}

fn ansi() -> Vec<u8> {
    let mut out = Vec::with_capacity(INPUT_BYTES);
    let mut n = 0u64;
    while out.len() < INPUT_BYTES {
        n += 1;
        out.extend_from_slice(
            format!("\x1b[1m\x1b[32m   Compiling\x1b[0m crate-{n} \x1b[2mv0.1.{n}\x1b[0m\r\x1b[K\x1b]8;;file:///x\x1b\\link\x1b]8;;\x1b\\ \x1b[31;1merror\x1b[0m: é ✓\n")
                .as_bytes(),
        );
    }
    out
}

/// Random bytes in base64, 76 characters a line: the shape of `head -c 1G /dev/urandom |
/// base64`, whose short lines and random letters (now and then shaped like a token) are the
/// hardest plain text for the line and secret stages.
fn base64_lines() -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(INPUT_BYTES);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    while out.len() < INPUT_BYTES {
        for _ in 0..76 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            out.push(ALPHABET[(state & 63) as usize]);
        }
        out.push(b'\n');
    }
    out
}

fn binary() -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    while out.len() < INPUT_BYTES {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.extend_from_slice(&state.to_le_bytes());
    }
    out
}

fn one_long_line() -> Vec<u8> {
    vec![b'a'; INPUT_BYTES]
}

/// Plain output where one line in a hundred prints a secret.
fn with_secrets() -> Vec<u8> {
    let mut out = Vec::with_capacity(INPUT_BYTES);
    let mut n = 0u64;
    while out.len() < INPUT_BYTES {
        n += 1;
        let line = if n.is_multiple_of(100) {
            format!(
                "   Deploying with token s3cr3t-value-number-3 and ghp_{:036}\n",
                n
            )
        } else {
            format!("   Compiling crate-number-{n} v0.1.{n} (/work/project/crates/crate-{n})\tok\n")
        };
        out.extend_from_slice(line.as_bytes());
    }
    out
}

fn secrets() -> Arc<Secrets> {
    let mut values: Vec<(String, String)> = (0..5)
        .map(|n| {
            (
                format!("SERVICE_{n}_TOKEN"),
                format!("s3cr3t-value-number-{n}"),
            )
        })
        .collect();
    // Short values, looked for only beside their names.
    values.push(("MYSQL_ROOT_PASSWORD".into(), "root".into()));
    values.push(("AWS_SECRET_ACCESS_KEY".into(), "abc".into()));
    let env = values
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()));
    Arc::new(Secrets::new(env, &SecretsConfig::default()).unwrap())
}

fn run_pipeline(input: &[u8], dir: &Arc<SpillDir>, secrets: Option<&Arc<Secrets>>) -> usize {
    let budget = Budget::default();
    let mut capture = Capture::new(
        agent_bash_core::Stream::Stdout,
        budget,
        dir.clone(),
        "bench-stdout".into(),
        0,
    );
    if let Some(secrets) = secrets {
        capture = capture.redacting(secrets);
    }
    for chunk in input.chunks(CHUNK_BYTES) {
        capture.feed(chunk);
    }
    capture.close();
    let out = capture.finish(Share {
        bytes: budget.bytes,
        lines: budget.lines,
    });
    out.text.len()
}

fn pipeline(c: &mut Criterion) {
    let tmp = std::env::temp_dir().join("agent-bash-bench");
    let dir = SpillDir::new(tmp);
    let mut group = c.benchmark_group("pipeline");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(INPUT_BYTES as u64));
    for (name, input) in [
        ("plain", plain()),
        ("base64", base64_lines()),
        ("ansi", ansi()),
        ("binary", binary()),
        ("one_long_line", one_long_line()),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| black_box(run_pipeline(black_box(&input), &dir, None)))
        });
    }
    let secrets = secrets();
    for (name, input) in [
        ("redacting/plain", plain()),
        ("redacting/base64", base64_lines()),
        ("redacting/with_secrets", with_secrets()),
        ("redacting/ansi", ansi()),
        ("redacting/binary", binary()),
        ("redacting/one_long_line", one_long_line()),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| black_box(run_pipeline(black_box(&input), &dir, Some(&secrets))))
        });
    }
    group.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
