//! The channel program's stderr: read all along (a full pipe would stall `ssh`), logged, and
//! its last few KiB kept for the error a failed start or a dropped connection reports.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;
use tokio::task::JoinHandle;

/// Most bytes of stderr kept.
const KEPT: usize = 4096;

/// The last lines of a channel's stderr.
pub(crate) struct Tail {
    kept: Arc<Mutex<String>>,
    /// `None` once it has ended.
    reader: Option<JoinHandle<()>>,
}

impl Tail {
    /// Reads `stderr` until it ends, keeping its tail.
    pub(crate) fn follow(stderr: ChildStderr) -> Tail {
        let kept = Arc::new(Mutex::new(String::new()));
        let keeping = kept.clone();
        let reader = tokio::spawn(async move {
            // Chunks, not lines: a line without end cannot grow without bound.
            let mut stderr = stderr;
            let mut chunk = vec![0u8; 4096];
            while let Ok(read) = stderr.read(&mut chunk).await {
                if read == 0 {
                    return;
                }
                let text = String::from_utf8_lossy(&chunk[..read]);
                tracing::debug!(target: "agent_bash_mcp::target", "target: {}", text.trim_end());
                let Ok(mut kept) = keeping.lock() else { return };
                kept.push_str(&text.replace('\n', " / "));
                if kept.len() > KEPT {
                    let mut cut = kept.len() - KEPT;
                    while !kept.is_char_boundary(cut) {
                        cut += 1;
                    }
                    kept.replace_range(..cut, "…");
                }
            }
        });
        Tail {
            kept,
            reader: Some(reader),
        }
    }

    /// What was kept, once stderr ended (or after a short wait, if it has not).
    pub(crate) async fn text(&mut self) -> String {
        if let Some(reader) = self.reader.as_mut()
            && tokio::time::timeout(Duration::from_secs(1), reader)
                .await
                .is_ok()
        {
            self.reader = None;
        }
        self.kept
            .lock()
            .map(|kept| kept.clone())
            .unwrap_or_default()
    }
}

impl Drop for Tail {
    fn drop(&mut self) {
        if let Some(reader) = &self.reader {
            reader.abort();
        }
    }
}
