//! Where a context's progress and log messages go, and the types of the callbacks the
//! engine and the server hand a context: progress and log sinks, the requester of a
//! plain call, the work future.

use futures::future::BoxFuture;
use mcp_tasks_protocol::LoggingLevel;
use parking_lot::Mutex;
use serde_json::Value;
use std::sync::Arc;

use crate::input::InputError;

/// One progress report (`notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Work done so far; must increase between reports.
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// A human-readable message.
    pub message: Option<String>,
}

/// One log message (`notifications/message`) from running work.
#[derive(Debug, Clone, PartialEq)]
pub struct LogMessage {
    /// Its severity; the client chooses the least severe it wants (`logging/setLevel`).
    pub level: LoggingLevel,
    /// Which part of the tool logged it, if it says.
    pub logger: Option<String>,
    /// The message: a string or any JSON value.
    pub data: Value,
}

/// Where a synchronous call's log messages go: the request's stream. (A task's go to
/// the engine, which routes them to the owner's session.) The server filters by the
/// session's level.
pub type LogSink = Arc<dyn Fn(LogMessage) + Send + Sync>;

/// The future a task runs: it resolves to what the request returns.
pub type Work = BoxFuture<'static, mcp_tasks_store::Outcome>;

/// Where a synchronous call's progress reports go: the server builds one per call (the
/// request's stream). (A task's go to the engine, as events routed to the owner's
/// session.)
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Sends one request to the client (`elicitation/create`, `sampling/createMessage`,
/// `roots/list`) and waits for its answer, for work that is not a task: a synchronous
/// call asks on its own stream, as MCP clients without tasks expect. The server builds
/// one per call; arguments are the client method and its params.
pub type ClientRequester =
    Arc<dyn Fn(&str, Value) -> BoxFuture<'static, Result<Value, InputError>> + Send + Sync>;

/// Keeps the progress of a synchronous call from going back, and from saying each step
/// twice. The spec has a request's progress only grow. A status message of a plain call
/// (see [`TaskContext::set_status_message`], which marks it with a NaN `progress`) is
/// sent as progress only while the tool has reported no figures of its own: then it
/// counts up by one per message. Once the tool reports figures, its status messages
/// are not sent (the figures' own messages say the step; a tool that does both would
/// otherwise report every step twice). Figures below the last ones sent are raised to
/// them, and a report without a total keeps the last total.
pub(super) fn steady(sink: ProgressSink) -> ProgressSink {
    // (last progress sent, last total, whether the tool reported figures)
    let last = Mutex::new((0.0_f64, None::<f64>, false));
    Arc::new(move |mut p: Progress| {
        {
            let mut l = last.lock();
            if p.progress.is_nan() {
                if l.2 {
                    return;
                }
                p.progress = l.0 + 1.0;
            } else {
                l.2 = true;
                if p.progress < l.0 {
                    p.progress = l.0;
                }
            }
            if p.total.is_none() {
                p.total = l.1;
            }
            (l.0, l.1) = (p.progress, p.total);
        }
        sink(p);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::plumbing::TaskContextParts;
    use crate::context::TaskContext;
    use tokio_util::sync::CancellationToken;

    /// What a plain call's client was sent: (progress, total, message).
    type Seen = Arc<Mutex<Vec<(f64, Option<f64>, Option<String>)>>>;

    fn recording() -> (TaskContext, Seen) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let ctx = TaskContextParts::detached(
            CancellationToken::new(),
            Some(Arc::new(move |p: Progress| {
                sink.lock().push((p.progress, p.total, p.message));
            })),
        )
        .build();
        (ctx, seen)
    }

    /// A tool that reports figures and status messages says each step once in a plain
    /// call: the figures, with their messages; its status messages are not repeated.
    #[tokio::test]
    async fn a_plain_call_that_reports_figures_says_each_step_once() {
        let (ctx, seen) = recording();
        ctx.report_progress(3.0, Some(4.0), Some("3 of 4".into()));
        ctx.set_status_message("3 of 4 done").await;
        ctx.report_progress(4.0, Some(4.0), None);
        ctx.set_status_message("4 of 4 done").await;
        let seen = seen.lock().clone();
        assert_eq!(
            seen,
            vec![
                (3.0, Some(4.0), Some("3 of 4".to_string())),
                (4.0, Some(4.0), None),
            ]
        );
    }

    /// A tool that only sets status messages is heard in a plain call: each goes out as
    /// progress, counting up (progress must grow).
    #[tokio::test]
    async fn a_plain_calls_status_messages_count_up_when_it_reports_no_figures() {
        let (ctx, seen) = recording();
        ctx.set_status_message("fetching").await;
        ctx.set_status_message("parsing").await;
        let seen = seen.lock().clone();
        assert_eq!(
            seen,
            vec![
                (1.0, None, Some("fetching".to_string())),
                (2.0, None, Some("parsing".to_string())),
            ]
        );
    }
}
