//! The calls this machine serves itself: `bash` with its progress reports, a job's read and
//! kill, the job list, and the terminal tools, each giving way to a cancellation.

use std::time::Duration;

use agent_bash_core::{CancellationToken, Progress, render};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use tokio::sync::watch;

use super::Server;
use crate::ask::{Asker, Asking};
use crate::{args, reply, telemetry, tools};

impl Server {
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        asking: &Asking,
    ) -> CallToolResult {
        if let Some(remote) = &self.remote {
            return self.forward(remote, request, &context, asking).await;
        }
        let arguments = request.arguments.as_ref();
        match request.name.as_ref() {
            tools::BASH => self.bash(request.arguments.as_ref(), context, asking).await,
            tools::OUTPUT => match args::output(arguments) {
                Ok(call) => {
                    tracing::debug!(?call, "bash_output");
                    let read = self.session.job_output(
                        call.job_id,
                        call.wait_secs,
                        call.pattern.as_deref(),
                    );
                    // A read that waits gives way to the client's cancellation and to
                    // the server's end; nothing is consumed until it returns. It reports
                    // progress meanwhile, which keeps clients that reset their timeout on
                    // progress from giving up on a long wait.
                    let waiting = waiting_progress(&context, call.job_id);
                    tokio::select! {
                        read = read => {
                            let read = telemetry::job_read(&self.telemetry, read);
                            reply::job_output(read, self.shape)
                        }
                        () = waiting => reply::refusal("the progress reports stopped"),
                        () = context.ct.cancelled() => reply::refusal("cancelled"),
                        () = self.shutdown.cancelled() => reply::refusal("the server is stopping"),
                    }
                }
                Err(message) => reply::refusal(&message),
            },
            tools::KILL => match args::kill(arguments) {
                Ok(call) => {
                    tracing::debug!(?call, "bash_kill");
                    let killed = self
                        .session
                        .kill_job(call.job_id, call.signal.as_deref())
                        .await;
                    reply::job_output(telemetry::job_read(&self.telemetry, killed), self.shape)
                }
                Err(message) => reply::refusal(&message),
            },
            tools::JOBS => match args::jobs(arguments) {
                Ok(()) => reply::job_list(&self.session.jobs(), self.shape),
                Err(message) => reply::refusal(&message),
            },
            tools::TERMINAL_OPEN
            | tools::TERMINAL_SEND
            | tools::TERMINAL_VIEW
            | tools::TERMINAL_CLOSE => {
                self.terminal(&request.name, arguments, &context, asking)
                    .await
            }
            name => self.unknown_tool(name),
        }
    }

    async fn bash(
        &self,
        arguments: Option<&rmcp::model::JsonObject>,
        context: RequestContext<RoleServer>,
        asking: &Asking,
    ) -> CallToolResult {
        let call = match args::bash(arguments) {
            Ok(call) => call,
            Err(message) => return reply::refusal(&message),
        };
        tracing::debug!(command = %call.request.command, description = ?call.request.description, "bash");
        let cancel = self.shutdown.child_token();
        let (progress_tx, progress_rx) = watch::channel(Progress::default());
        let done = CancellationToken::new();
        let description = call.request.description.clone();
        let reporter = context.meta.get_progress_token().map(|token| {
            report_progress(
                progress_rx,
                context.peer.clone(),
                token,
                done.clone(),
                description,
            )
        });
        let asker = Asker {
            asking,
            cancel: &cancel,
        };
        let asker = telemetry::Watched {
            approver: &asker,
            recorder: &self.telemetry,
        };
        let run = self
            .session
            .run_with(call.request, &cancel, Some(&progress_tx), &asker);
        let finished = async {
            tokio::pin!(run);
            tokio::select! {
                finished = &mut run => finished,
                () = context.ct.cancelled() => {
                    // The client cancelled: stop the tree. The protocol drops the answer,
                    // so what was captured goes to the log.
                    cancel.cancel();
                    run.await
                }
            }
        };
        let finished = match reporter {
            Some(reporter) => {
                let (finished, ()) = tokio::join!(
                    async {
                        let finished = finished.await;
                        done.cancel();
                        finished
                    },
                    reporter
                );
                finished
            }
            None => finished.await,
        };
        match finished {
            Ok(finished) => {
                if finished.outcome.cancelled {
                    tracing::info!(
                        stdout = %finished.outcome.stdout,
                        stderr = %finished.outcome.stderr,
                        "call cancelled"
                    );
                }
                telemetry::outcome(&self.telemetry, &finished.outcome);
                reply::outcome(&finished.outcome, self.shape).await
            }
            Err(err) => reply::refusal(&err.to_string()),
        }
    }

    /// A terminal tool's call. Its wait gives way to the client's cancellation and to the
    /// server's end.
    async fn terminal(
        &self,
        name: &str,
        arguments: Option<&rmcp::model::JsonObject>,
        context: &RequestContext<RoleServer>,
        asking: &Asking,
    ) -> CallToolResult {
        let cancel = self.shutdown.child_token();
        let asker = Asker {
            asking,
            cancel: &cancel,
        };
        let session = &self.session;
        let answer = async {
            match name {
                tools::TERMINAL_OPEN => match args::terminal_open(arguments) {
                    Ok(open) => Ok(session.terminal_open(open, &asker).await),
                    Err(message) => Err(message),
                },
                tools::TERMINAL_SEND => match args::terminal_send(arguments) {
                    Ok((id, input)) => Ok(session.terminal_send(id, input, &asker).await),
                    Err(message) => Err(message),
                },
                tools::TERMINAL_VIEW => match args::terminal_view(arguments) {
                    Ok((id, wait)) => Ok(session.terminal_view(id, wait).await),
                    Err(message) => Err(message),
                },
                _ => match args::terminal_close(arguments) {
                    Ok(id) => Ok(session.terminal_close(id).await),
                    Err(message) => Err(message),
                },
            }
        };
        tracing::debug!(name, ?arguments, "terminal");
        tokio::select! {
            answer = answer => match answer {
                Ok(answer) => {
                    let answer = telemetry::terminal(&self.telemetry, answer);
                    reply::terminal(answer, self.shape)
                }
                Err(message) => reply::refusal(&message),
            },
            () = context.ct.cancelled() => {
                cancel.cancel();
                reply::refusal("cancelled")
            }
            () = self.shutdown.cancelled() => reply::refusal("the server is stopping"),
        }
    }
}

/// Forwards the engine's progress reports as MCP progress notifications until the call
/// is `done`. The progress value is the elapsed time in seconds; the message starts with the
/// call's description, when the model gave one.
async fn report_progress(
    mut reports: watch::Receiver<Progress>,
    peer: Peer<RoleServer>,
    token: ProgressToken,
    done: CancellationToken,
    description: Option<String>,
) {
    while let Some(Ok(())) = done.run_until_cancelled(reports.changed()).await {
        let report = *reports.borrow_and_update();
        let message = render::progress(&report, description.as_deref());
        let notification =
            ProgressNotificationParam::new(token.clone(), report.elapsed.as_secs_f64())
                .with_message(message);
        if peer.notify_progress(notification).await.is_err() {
            return;
        }
    }
}

/// Reports `waiting for job N · S s` once a second, if the client asked for progress;
/// never completes on its own.
async fn waiting_progress(context: &RequestContext<RoleServer>, job_id: u64) {
    let Some(token) = context.meta.get_progress_token() else {
        return std::future::pending().await;
    };
    let began = tokio::time::Instant::now();
    let mut tick = tokio::time::interval_at(began + PROGRESS_EVERY, PROGRESS_EVERY);
    loop {
        tick.tick().await;
        let elapsed = began.elapsed();
        let notification = ProgressNotificationParam::new(token.clone(), elapsed.as_secs_f64())
            .with_message(render::waiting(job_id, elapsed));
        if context.peer.notify_progress(notification).await.is_err() {
            return std::future::pending().await;
        }
    }
}

/// How often a waiting read reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
