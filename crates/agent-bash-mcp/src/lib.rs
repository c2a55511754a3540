//! agent-bash over the Model Context Protocol: the engine's `bash` tool and its job tools
//! (`bash_output`, `bash_kill`, `bash_jobs`) for any MCP client.
//!
//! This crate is the only place that knows MCP. It turns `tools/call` arguments into engine
//! requests (`args`), outcomes into MCP results (`reply`), and declares the tools (`tools`);
//! `server` ties them to one engine `Session` with rmcp.
//!
//! ```no_run
//! # async fn example() -> std::io::Result<()> {
//! use std::sync::Arc;
//! use agent_bash_core::{Config, Session};
//! use agent_bash_mcp::Server;
//!
//! let session = Session::new("/path/to/project", Config::default()).map_err(std::io::Error::other)?;
//! let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
//! Server::new(Arc::new(session))
//!     .serve(stdin, stdout, std::future::pending())
//!     .await?;
//! # Ok(())
//! # }
//! ```

#![deny(unreachable_pub)]

mod args;
mod ask;
mod http;
mod reply;
mod server;
mod target;
mod telemetry;
mod tools;

pub use http::{HttpOptions, IDS_PER_OWNER, serve_http};
/// The MCP implementation the server is built on, for its transports and `QuitReason`.
pub use rmcp;
pub use server::Server;
pub use target::{TargetRun, run_on_target};
pub use telemetry::Telemetry;
pub use tools::{Format, definitions};
