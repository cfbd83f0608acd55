//! [`TaskHandle`]: following one task to its end.
//!
//! A driver runs in the background for each handle. It polls `tasks/get` at the
//! task's `pollInterval` (and keeps polling even when the server sends status
//! notifications, which only make it notice changes sooner), reports every change
//! on the handle's update stream, and collects the outcome: on 2025-11-25 with
//! `tasks/result`, held open from the moment the task needs input or ends, so the
//! server can deliver its questions on it; on the extension wire from the result or
//! error `tasks/get` inlines, answering `inputRequests` with `tasks/update`.

use futures::Stream;
use mcp_tasks_protocol::codec::v2026_07_28::Detail;
use mcp_tasks_protocol::{RpcError, TaskId, TaskStatus, TaskView};
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::client::Client;
use crate::dispatch::WatchEvent;
use crate::error::ClientError;
use crate::input::InputRequest;
use crate::reply::{ToolResult, WithMeta};
use crate::wire::Wire;

pub use crate::dispatch::Progress;

/// Poll interval when the server suggests none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The shortest poll interval honoured, whatever the server suggests.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(100);
/// The longest poll interval honoured, so a handle notices the end within a minute.
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(60);
/// Connection failures in a row after which a handle gives up.
const MAX_FAILURES: u32 = 5;
/// Updates buffered for a reader that does not keep up; later ones are dropped (the
/// outcome never is).
const UPDATE_BUFFER: usize = 256;

/// How to ask for a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskOptions {
    /// How long the server should keep the task after it is created (2025-11-25
    /// `task.ttl`); `None` leaves it to the server.
    pub ttl: Option<Duration>,
    /// Ask for progress notifications (a progress token on the call).
    pub progress: bool,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            ttl: None,
            progress: true,
        }
    }
}

impl TaskOptions {
    /// Sets the requested ttl.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }
}

/// Something that happened to a task, for display. Advisory: a slow reader may miss
/// some; the outcome comes from [`TaskHandle::result`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskUpdate {
    /// The status or status message changed (the first update is the initial state).
    Status(TaskView),
    /// A progress report.
    Progress(Progress),
    /// The server asked a question; the registered handler is answering it.
    InputRequested(InputRequest),
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskOutcome {
    /// The task's last state; `None` when the server answered at once without a task.
    pub task: Option<TaskView>,
    /// The tool's result (`CallToolResult`), when it produced one.
    pub result: Option<Value>,
    /// The JSON-RPC error the call failed with, when it failed that way.
    pub error: Option<RpcError>,
}

impl TaskOutcome {
    /// The final status. A call answered at once reads `completed`, or `failed` when
    /// it failed with an error.
    pub fn status(&self) -> TaskStatus {
        match &self.task {
            Some(t) => t.status,
            None if self.error.is_some() => TaskStatus::Failed,
            None => TaskStatus::Completed,
        }
    }

    /// Whether the result is a tool error (`isError: true`).
    pub fn is_tool_error(&self) -> bool {
        self.result
            .as_ref()
            .is_some_and(|r| ToolResult::of(r).is_error == Some(true))
    }

    /// Whether the task completed with a result that is not a tool error.
    pub fn succeeded(&self) -> bool {
        self.status() == TaskStatus::Completed && !self.is_tool_error() && self.error.is_none()
    }

    /// The text items of the result's `content`, joined by newlines.
    pub fn text(&self) -> Option<String> {
        let result = ToolResult::of(self.result.as_ref()?);
        let texts: Vec<String> = result
            .content
            .into_iter()
            .filter(|c| c.kind == "text")
            .filter_map(|c| c.text)
            .collect();
        (!texts.is_empty()).then(|| texts.join("\n"))
    }
}

/// The stream of a handle's updates; ends when the task's driver ends.
#[derive(Debug)]
pub struct Updates {
    rx: Option<mpsc::Receiver<TaskUpdate>>,
}

impl Stream for Updates {
    type Item = TaskUpdate;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<TaskUpdate>> {
        match self.rx.as_mut() {
            Some(rx) => rx.poll_recv(cx),
            None => Poll::Ready(None),
        }
    }
}

/// Aborts the driver when the handle goes away (the task itself goes on).
#[derive(Debug)]
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

// One per followed task, held while it runs: the size of the ready variant is not
// worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Outcome {
    Ready(Result<TaskOutcome, ClientError>),
    Pending {
        rx: oneshot::Receiver<Result<TaskOutcome, ClientError>>,
        _driver: AbortOnDrop,
    },
}

/// A task being followed. Dropping it stops following; the task goes on on the
/// server and can be picked up with [`Client::resume`].
#[derive(Debug)]
pub struct TaskHandle {
    task: Option<TaskView>,
    updates: Option<mpsc::Receiver<TaskUpdate>>,
    outcome: Outcome,
    client: Option<Client>,
}

impl TaskHandle {
    /// A handle for an answer that came at once, without a task.
    pub(crate) fn ready(result: Value) -> Self {
        TaskHandle {
            task: None,
            updates: None,
            outcome: Outcome::Ready(Ok(TaskOutcome {
                task: None,
                result: Some(result),
                error: None,
            })),
            client: None,
        }
    }

    /// Starts following `view`'s task.
    pub(crate) fn follow(client: Client, view: TaskView, progress_token: Option<Value>) -> Self {
        let (tx, rx) = mpsc::channel(UPDATE_BUFFER);
        let (done_tx, done_rx) = oneshot::channel();
        let driver = Driver {
            events: client.watch(&view.id),
            client: client.clone(),
            last: view.clone(),
            updates: tx,
            answered: Arc::new(Mutex::new(HashSet::new())),
            progress_token,
        };
        let join = tokio::spawn(async move {
            let token = driver.progress_token.clone();
            let c = driver.client.clone();
            let r = driver.run().await;
            if let Some(t) = token {
                c.forget_progress(&t);
            }
            let _ = done_tx.send(r);
        });
        TaskHandle {
            task: Some(view),
            updates: Some(rx),
            outcome: Outcome::Pending {
                rx: done_rx,
                _driver: AbortOnDrop(join),
            },
            client: Some(client),
        }
    }

    /// The task's id; `None` when the server answered at once without a task.
    pub fn task_id(&self) -> Option<&TaskId> {
        self.task.as_ref().map(|t| &t.id)
    }

    /// The task as it was when the handle was made.
    pub fn task(&self) -> Option<&TaskView> {
        self.task.as_ref()
    }

    /// The stream of updates. The first call takes it; later calls get an empty one.
    pub fn updates(&mut self) -> Updates {
        Updates {
            rx: self.updates.take(),
        }
    }

    /// Waits for the task to end and returns how it ended (a failed or cancelled task
    /// is an `Ok` outcome; see [`TaskOutcome::status`]).
    ///
    /// # Errors
    /// The connection failed repeatedly, the task is unknown or expired (-32602), or
    /// the server answered something unreadable.
    pub async fn result(self) -> Result<TaskOutcome, ClientError> {
        match self.outcome {
            Outcome::Ready(r) => r,
            Outcome::Pending { rx, _driver } => rx.await.unwrap_or(Err(ClientError::Closed)),
        }
    }

    /// Cancels the task; the outcome then reads `cancelled`.
    ///
    /// # Errors
    /// See [`Client::cancel`]; [`ClientError::Unsupported`] for a handle without task.
    pub async fn cancel(&self) -> Result<TaskView, ClientError> {
        match (&self.client, self.task_id()) {
            (Some(c), Some(id)) => c.cancel(id).await,
            _ => Err(ClientError::Unsupported(
                "the server answered at once; there is no task to cancel".into(),
            )),
        }
    }
}

struct Driver {
    client: Client,
    last: TaskView,
    events: mpsc::UnboundedReceiver<WatchEvent>,
    updates: mpsc::Sender<TaskUpdate>,
    /// Extension input request keys being or already answered.
    answered: Arc<Mutex<HashSet<String>>>,
    progress_token: Option<Value>,
}

impl Driver {
    fn emit(&self, update: TaskUpdate) {
        let _ = self.updates.try_send(update);
    }

    /// Takes a newer view of the task; reports it when status or message changed. A
    /// terminal state is never replaced by a late non-terminal one.
    fn observe(&mut self, view: TaskView) {
        if self.last.status.is_terminal() && !view.status.is_terminal() {
            return;
        }
        if view.last_updated_at < self.last.last_updated_at && !view.status.is_terminal() {
            return;
        }
        let changed =
            view.status != self.last.status || view.status_message != self.last.status_message;
        let poll = view.poll_interval.or(self.last.poll_interval);
        self.last = view;
        self.last.poll_interval = poll;
        if changed {
            self.emit(TaskUpdate::Status(self.last.clone()));
        }
    }

    fn interval(&self) -> Duration {
        self.last
            .poll_interval
            .unwrap_or(DEFAULT_POLL_INTERVAL)
            .clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
    }

    async fn run(mut self) -> Result<TaskOutcome, ClientError> {
        self.emit(TaskUpdate::Status(self.last.clone()));
        let wire = self.client.wire();
        let id = self.last.id.clone();
        let mut result_call: Option<JoinHandle<Result<Value, ClientError>>> = None;
        let mut result_retry_at = Instant::now();
        let mut failures = 0u32;
        let mut events_open = true;
        // Set when the server answers `tasks/result` -32601 (tower-mcp 0.25.0 removed it
        // from the 2025-11-25 wire too): the outcome is then read from what `tasks/get`
        // inlines once the task ended, as on the extension wire.
        let mut no_tasks_result: Option<RpcError> = None;
        let mut next_poll = if wire == Wire::V2026_07_28 && self.last.status != TaskStatus::Working
        {
            Instant::now()
        } else {
            Instant::now() + self.interval()
        };
        loop {
            if wire == Wire::V2025_11_25
                && no_tasks_result.is_none()
                && result_call.is_none()
                && Instant::now() >= result_retry_at
            {
                match self.last.status {
                    TaskStatus::Cancelled => {
                        return Ok(TaskOutcome {
                            task: Some(self.last.clone()),
                            result: None,
                            error: None,
                        })
                    }
                    TaskStatus::Working => {}
                    _ => {
                        let c = self.client.clone();
                        let id = id.clone();
                        result_call = Some(tokio::spawn(async move { c.task_result(&id).await }));
                    }
                }
            }
            let retry_armed = result_call.is_none()
                && wire == Wire::V2025_11_25
                && no_tasks_result.is_none()
                && result_retry_at > Instant::now();
            let result_done = async {
                match result_call.as_mut() {
                    Some(h) => h.await,
                    None => std::future::pending().await,
                }
            };
            let retry = tokio::time::sleep_until(result_retry_at.max(Instant::now()));
            tokio::select! {
                ev = self.events.recv(), if events_open => match ev {
                    Some(WatchEvent::Status(v)) => self.observe(v),
                    Some(WatchEvent::Progress(p)) => self.emit(TaskUpdate::Progress(p)),
                    Some(WatchEvent::Input(r)) => self.emit(TaskUpdate::InputRequested(r)),
                    None => events_open = false,
                },
                _ = tokio::time::sleep_until(next_poll) => {
                    match self.client.get_detailed(&id).await {
                        Ok((view, detail)) => {
                            failures = 0;
                            self.observe(view);
                            if wire == Wire::V2026_07_28 {
                                if let Some(outcome) = self.extension_step(detail) {
                                    return Ok(outcome);
                                }
                            } else if let Some(refusal) = &no_tasks_result {
                                if self.last.status.is_terminal() {
                                    return Ok(self.inlined_outcome(detail, refusal));
                                }
                            }
                        }
                        Err(e) if e.is_connection() => {
                            failures += 1;
                            if failures >= MAX_FAILURES {
                                return Err(e);
                            }
                        }
                        Err(e) => return Err(e),
                    }
                    next_poll = Instant::now() + self.interval();
                },
                r = result_done => {
                    result_call = None;
                    match r {
                        Ok(Ok(value)) => return Ok(self.finish(Some(value), None).await),
                        Ok(Err(ClientError::Rpc(e)))
                            if e.code == mcp_tasks_protocol::error_code::METHOD_NOT_FOUND
                                && !is_task_error(&e) =>
                        {
                            // No tasks/result on this server (tower-mcp 0.25.0): poll
                            // tasks/get now and read the outcome it inlines.
                            tracing::debug!(task_id = %id, "tasks/result is not offered; reading the outcome from tasks/get");
                            no_tasks_result = Some(e);
                            next_poll = Instant::now();
                        }
                        Ok(Err(ClientError::Rpc(e))) => {
                            if is_task_error(&e) || self.ended_on_server().await {
                                return Ok(self.finish(None, Some(e)).await);
                            }
                            return Err(ClientError::Rpc(e));
                        }
                        Ok(Err(e)) => {
                            failures += 1;
                            if failures >= MAX_FAILURES {
                                return Err(e);
                            }
                            result_retry_at = Instant::now() + self.interval();
                        }
                        Err(join) => {
                            failures += 1;
                            if failures >= MAX_FAILURES {
                                return Err(ClientError::transport(format!("tasks/result stopped: {join}")));
                            }
                            result_retry_at = Instant::now() + self.interval();
                        }
                    }
                },
                _ = retry, if retry_armed => {},
            }
        }
    }

    /// Whether a fresh `tasks/get` shows the task ended.
    async fn ended_on_server(&mut self) -> bool {
        match self.client.get(&self.last.id).await {
            Ok(v) => {
                let ended = v.status.is_terminal();
                self.observe(v);
                ended
            }
            Err(_) => false,
        }
    }

    /// The outcome of a 2025-11-25 task from its `tasks/result` answer, with the
    /// task's final state.
    async fn finish(&mut self, result: Option<Value>, error: Option<RpcError>) -> TaskOutcome {
        if !self.last.status.is_terminal() {
            if let Ok(v) = self.client.get(&self.last.id).await {
                self.observe(v);
            }
        }
        let tool_error = result
            .as_ref()
            .is_some_and(|r| ToolResult::of(r).is_error == Some(true));
        // This wire shows a tool error as `failed`; the result says which failure it is.
        self.last.tool_error |= tool_error && self.last.status.is_terminal();
        if !self.last.status.is_terminal() {
            // The server did not show the end yet; tasks/result says it is over.
            let mut v = self.last.clone();
            v.tool_error = tool_error;
            v.status = if error.is_some() || tool_error {
                TaskStatus::Failed
            } else {
                TaskStatus::Completed
            };
            self.observe(v);
        }
        TaskOutcome {
            task: Some(self.last.clone()),
            result,
            error,
        }
    }

    /// The outcome of an ended 2025-11-25 task whose server has no `tasks/result`, from
    /// what its `tasks/get` inlined; when it inlined nothing for a task that did not
    /// end cancelled, the `tasks/result` refusal is the outcome's error, so the caller
    /// learns why there is no result.
    fn inlined_outcome(&mut self, detail: Detail, refusal: &RpcError) -> TaskOutcome {
        let (result, error) = match detail {
            Detail::Result(r) => (Some(r), None),
            Detail::Error(e) => (
                None,
                Some(serde_json::from_value(e.clone()).unwrap_or_else(|_| {
                    RpcError::new(
                        mcp_tasks_protocol::error_code::INTERNAL_ERROR,
                        e.to_string(),
                    )
                })),
            ),
            _ if self.last.status == TaskStatus::Cancelled => (None, None),
            _ => (None, Some(refusal.clone())),
        };
        TaskOutcome {
            task: Some(self.last.clone()),
            result,
            error,
        }
    }

    /// Extension wire: answers new input requests, and returns the outcome once the
    /// task ended.
    fn extension_step(&mut self, detail: Detail) -> Option<TaskOutcome> {
        let terminal = self.last.status.is_terminal();
        match detail {
            Detail::InputRequests(requests) if !terminal => {
                for (key, request) in requests {
                    let fresh = self.answered.lock().insert(key.clone());
                    if fresh {
                        self.answer(key, request);
                    }
                }
                None
            }
            _ if !terminal => None,
            Detail::Result(r) => Some(TaskOutcome {
                task: Some(self.last.clone()),
                result: Some(r),
                error: None,
            }),
            Detail::Error(e) => Some(TaskOutcome {
                task: Some(self.last.clone()),
                result: None,
                error: Some(serde_json::from_value(e.clone()).unwrap_or_else(|_| {
                    RpcError::new(
                        mcp_tasks_protocol::error_code::INTERNAL_ERROR,
                        e.to_string(),
                    )
                })),
            }),
            _ => Some(TaskOutcome {
                task: Some(self.last.clone()),
                result: None,
                error: None,
            }),
        }
    }

    fn answer(&self, key: String, request: Value) {
        let client = self.client.clone();
        let id = self.last.id.clone();
        let answered = Arc::clone(&self.answered);
        tokio::spawn(async move {
            let answer = client.answer_input(Some(&id), &key, &request).await;
            let mut responses = Map::new();
            responses.insert(key.clone(), answer);
            if let Err(e) = client.update(&id, responses).await {
                tracing::debug!(task_id = %id, key, error = %e, "tasks/update failed; will answer again");
                answered.lock().remove(&key);
            }
        });
    }
}

/// Whether an error from `tasks/result` is the task's own outcome (the server tags it
/// with the related task) rather than a refusal of `tasks/result` itself.
fn is_task_error(e: &RpcError) -> bool {
    e.data
        .as_ref()
        .and_then(|d| WithMeta::deserialize(d).ok())
        .and_then(|d| d.meta)
        .is_some_and(|m| m.related_task.is_some())
}

#[cfg(test)]
mod tests;
