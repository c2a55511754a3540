//! `agent-bash mcp --http ADDR`: the flags of the HTTP face, and its bearer tokens.
//!
//! A token never comes from the command line (every local user can read it in `/proc`): it
//! comes from the variable `AGENT_BASH_HTTP_TOKEN` (removed from this process's environment at
//! once, so no command inherits it) or from a file that only its owner can read, one token
//! per line. A token is required on every address, loopback too: any local user can reach a
//! loopback port.

use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_bash_mcp::HttpOptions;
use anyhow::{Context, bail};
use clap::Args;

/// The variable a token may come from.
const TOKEN_VAR: &str = "AGENT_BASH_HTTP_TOKEN";

/// Shortest token taken: 16 bytes, about 96 bits when made with `openssl rand -base64 12`.
const TOKEN_MIN: usize = 16;

#[derive(Args, Debug)]
pub(crate) struct HttpArgs {
    /// Serve MCP over Streamable HTTP at ADDR (endpoint /mcp, health at /health) instead of
    /// stdio: `PORT` (on 127.0.0.1) or `HOST:PORT`. Needs a bearer token: the variable
    /// AGENT_BASH_HTTP_TOKEN or --token-file.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Read the bearer tokens from FILE, one per line (`#` starts a comment); it must be
    /// readable by its owner only. Each token has its own jobs and terminals.
    #[arg(long, value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,
    /// Also take requests from this browser origin (`scheme://host:port`); by default a
    /// request with any `Origin` header is refused. Repeatable.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// Largest request body in bytes (default 1 MiB).
    #[arg(long, value_name = "BYTES", requires = "http", default_value_t = 1 << 20)]
    http_max_body: usize,
    /// Most requests in flight at once (default 64).
    #[arg(long, value_name = "N", requires = "http", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..))]
    http_max_requests: u32,
    /// A client's MCP session (2025-11-25) ends after this many seconds without a request
    /// (default 1800).
    #[arg(long, value_name = "SECS", requires = "http", default_value_t = 1800,
          value_parser = clap::value_parser!(u64).range(1..))]
    http_idle_secs: u64,
}

impl HttpArgs {
    /// The options to serve with, or `None` for stdio. Takes the token variable out of the
    /// environment either way, before any thread or child exists.
    pub(crate) fn options(&self) -> anyhow::Result<Option<HttpOptions>> {
        let from_env = std::env::var(TOKEN_VAR).ok();
        if from_env.is_some() {
            // SAFETY: called first thing in `mcp`, before the runtime, the logger's threads
            // or any child exist: nothing else reads the environment concurrently.
            unsafe { std::env::remove_var(TOKEN_VAR) };
        }
        let Some(addr) = &self.http else {
            return Ok(None);
        };
        let addr = parse_addr(addr)?;
        let mut tokens = Vec::new();
        if let Some(token) = from_env {
            tokens.push(checked(token.trim(), TOKEN_VAR)?);
        }
        if let Some(file) = &self.token_file {
            tokens.extend(read_tokens(file)?);
        }
        if tokens.is_empty() {
            let place = if addr.ip().is_loopback() {
                "even on loopback, where any local user can connect"
            } else {
                "above all on an address other machines reach"
            };
            bail!(
                "--http needs a bearer token, {place}: set {TOKEN_VAR} or pass --token-file \
                 FILE (one token per line, readable by you only; for example \
                 `openssl rand -hex 32 > FILE && chmod 600 FILE`)"
            );
        }
        Ok(Some(HttpOptions {
            addr,
            tokens,
            allowed_origins: self.allow_origin.clone(),
            max_body: self.http_max_body,
            max_requests: self.http_max_requests as usize,
            idle: Duration::from_secs(self.http_idle_secs),
        }))
    }
}

/// `PORT` (loopback) or `HOST:PORT`.
fn parse_addr(text: &str) -> anyhow::Result<SocketAddr> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse().with_context(|| {
        format!("--http {text}: give PORT (on 127.0.0.1) or HOST:PORT, such as 127.0.0.1:8808")
    })
}

fn checked(token: &str, from: &str) -> anyhow::Result<String> {
    if token.len() < TOKEN_MIN {
        bail!("the token in {from} is too short: at least {TOKEN_MIN} characters");
    }
    if token.bytes().any(|b| !b.is_ascii_graphic()) {
        bail!("the token in {from} has a space or a character that is not printable ASCII");
    }
    Ok(token.to_owned())
}

fn read_tokens(file: &Path) -> anyhow::Result<Vec<String>> {
    let shown = file.display();
    let mut opened =
        std::fs::File::open(file).with_context(|| format!("cannot open the token file {shown}"))?;
    let mode = opened.metadata()?.permissions().mode();
    if mode & 0o077 != 0 {
        bail!(
            "the token file {shown} can be read by other users (mode {:o}): `chmod 600 {shown}`",
            mode & 0o777
        );
    }
    let mut text = String::new();
    opened
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read the token file {shown}"))?;
    let from = format!("the token file {shown}");
    let tokens = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| checked(line, &from))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if tokens.is_empty() {
        bail!("the token file {shown} has no token");
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_alone_is_loopback_and_a_bad_address_says_what_to_give() {
        assert_eq!(parse_addr("8808").unwrap().to_string(), "127.0.0.1:8808");
        assert_eq!(parse_addr("0.0.0.0:9").unwrap().to_string(), "0.0.0.0:9");
        let err = parse_addr("localhost:x").unwrap_err().to_string();
        assert!(err.contains("give PORT"), "{err}");
    }

    #[test]
    fn short_or_spaced_tokens_are_refused() {
        assert!(checked("0123456789abcdef", "x").is_ok());
        assert!(
            checked("short", "x")
                .unwrap_err()
                .to_string()
                .contains("too short")
        );
        assert!(checked("0123456789 abcdef", "x").is_err());
    }

    #[test]
    fn a_token_file_others_can_read_is_refused_and_comments_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens");
        std::fs::write(&file, "# agents\n0123456789abcdef\n\nfedcba9876543210\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = read_tokens(&file).unwrap_err().to_string();
        assert!(err.contains("chmod 600"), "{err}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_tokens(&file).unwrap().len(), 2);
    }
}
