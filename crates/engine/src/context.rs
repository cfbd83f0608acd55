//! The handle running work uses to talk back: status messages, progress, cancellation.

use futures::future::BoxFuture;
use mcp_tasks_protocol::{LoggingLevel, TaskId};
use mcp_tasks_store::{DeadlineOutcome, InputRequest};

use crate::ask::Ask;
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, Mutex, Weak};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::input::InputError;
use crate::reader::{OpaqueReader, ResultReading};
use crate::retry::{Retry, RetryRequested};
use crate::steps::{StepError, StepLog, CURRENT_STEP};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::future::Future;

/// What a task's context calls back into: the engine, seen only through this trait so
/// that the context depends on nothing else of it.
#[async_trait::async_trait]
pub(crate) trait TaskHost: Send + Sync {
    /// Stores a status message on the task (keeping its status).
    async fn set_message(&self, id: &TaskId, message: String);

    /// Stores an input request on the task and waits for its answer, or until the
    /// deadline (a wait from now, and what happens then) passes.
    async fn ask(
        &self,
        id: &TaskId,
        key: String,
        request: InputRequest,
        deadline: Option<(std::time::Duration, DeadlineOutcome)>,
        cancel: &CancellationToken,
    ) -> Result<Value, InputError>;

    /// Records a finished step in the task's journal (fenced by the lease this
    /// process holds).
    async fn record_step(
        &self,
        id: &TaskId,
        key: String,
        attempt: u32,
        output: Value,
    ) -> Result<(), StepError>;

    /// Runs the task again later, as `retry` asks, when its tool's policy allows
    /// another attempt after `attempt`: true when it will (the work's end is then not
    /// recorded), false when the end should be recorded as it is.
    async fn retry_later(&self, id: &TaskId, attempt: u32, retry: Retry) -> bool;

    /// Waits until the task is committed to the store: true then, false when it never
    /// will be (the call ended inline). A host whose tasks exist from the start says
    /// true at once.
    async fn created(&self) -> bool {
        true
    }
}

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

/// Where log messages go: for a task, an event routed to the owner's session; for a
/// synchronous call, the request's stream. The server filters by the session's level.
pub type LogSink = Arc<dyn Fn(LogMessage) + Send + Sync>;

/// The future a task runs: it resolves to what the request returns.
pub type Work = BoxFuture<'static, mcp_tasks_store::Outcome>;

/// Where progress reports go. The engine builds one for tasks (an event routed to the
/// owner's session); the server builds one for synchronous calls (the request's stream).
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Sends one request to the client (`elicitation/create`, `sampling/createMessage`,
/// `roots/list`) and waits for its answer, for work that is not a task: a synchronous
/// call asks on its own stream, as MCP clients without tasks expect. The server builds
/// one per call; arguments are the client method and its params.
pub type ClientRequester =
    Arc<dyn Fn(&str, Value) -> BoxFuture<'static, Result<Value, InputError>> + Send + Sync>;

/// Handed to running work (a tool). Cheap to clone.
///
/// The same type serves a task and a plain synchronous call, so a tool is written once:
/// for a synchronous call [`TaskContext::task_id`] is `None` and status messages are sent
/// as progress messages.
#[derive(Clone)]
pub struct TaskContext {
    task: Option<(TaskId, Weak<dyn TaskHost>)>,
    cancel: CancellationToken,
    progress: Option<ProgressSink>,
    client_capabilities: Arc<Value>,
    /// Checks an input request against `client_capabilities` (the wire knows what
    /// each request needs).
    reader: Arc<dyn ResultReading>,
    /// Whether a person may answer this task's questions (the engine's
    /// `people_answer_questions`): then a task may ask what its client did not declare
    /// it can answer, when the reader says a person could ([`ResultReading::people_may_answer`]).
    people_answer: bool,
    /// The preflight answers; `None` when there are none (most tools), which saves
    /// every running task an allocation.
    answers: Option<Arc<serde_json::Map<String, Value>>>,
    /// How a synchronous call reaches its client; `None` for tasks (they store their
    /// input requests) and for calls whose transport cannot carry requests.
    requester: Option<ClientRequester>,
    /// Where [`TaskContext::log`] goes; `None` drops messages.
    log: Option<LogSink>,
    /// This attempt's journaled steps and retry request (see [`TaskContext::step`]).
    steps: Arc<StepLog>,
}

impl fmt::Debug for TaskContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskContext")
            .field("task_id", &self.task_id())
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// Keeps the progress of a synchronous call from going back, and from saying each step
/// twice. The spec has a request's progress only grow. A status message of a plain call
/// (see [`TaskContext::set_status_message`], which marks it with a NaN `progress`) is
/// sent as progress only while the tool has reported no figures of its own: then it
/// counts up by one per message. Once the tool reports figures, its status messages
/// are not sent (the figures' own messages say the step; a tool that does both would
/// otherwise report every step twice). Figures below the last ones sent are raised to
/// them, and a report without a total keeps the last total.
fn steady(sink: ProgressSink) -> ProgressSink {
    // (last progress sent, last total, whether the tool reported figures)
    let last = Mutex::new((0.0_f64, None::<f64>, false));
    Arc::new(move |mut p: Progress| {
        {
            let mut l = last.lock().unwrap_or_else(|e| e.into_inner());
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

impl TaskContext {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn for_task(
        id: TaskId,
        inner: Weak<dyn TaskHost>,
        cancel: CancellationToken,
        progress: Option<ProgressSink>,
        client_capabilities: Arc<Value>,
        reader: Arc<dyn ResultReading>,
        people_answer: bool,
        steps: Arc<StepLog>,
    ) -> Self {
        TaskContext {
            steps,
            task: Some((id, inner)),
            cancel,
            progress,
            client_capabilities,
            reader,
            people_answer,
            answers: None,
            requester: None,
            log: None,
        }
    }

    /// A context for work that is not a task (a synchronous `tools/call`): cancelled
    /// through `cancel` (`notifications/cancelled`), progress to `progress`.
    pub fn detached(cancel: CancellationToken, progress: Option<ProgressSink>) -> Self {
        TaskContext {
            steps: Arc::new(StepLog::first()),
            task: None,
            cancel,
            progress: progress.map(steady),
            client_capabilities: Arc::new(Value::Null),
            reader: Arc::new(OpaqueReader),
            people_answer: false,
            answers: None,
            requester: None,
            log: None,
        }
    }

    /// The same context able to ask the client directly (a synchronous call): input
    /// requests go through `requester` instead of failing with
    /// [`InputError::Unsupported`], checked first by `reader` against
    /// `client_capabilities`.
    pub fn with_client_requests(
        mut self,
        requester: ClientRequester,
        client_capabilities: Value,
        reader: Arc<dyn ResultReading>,
    ) -> Self {
        self.requester = Some(requester);
        self.client_capabilities = Arc::new(client_capabilities);
        self.reader = reader;
        self
    }

    /// Whether the client can be asked `method` (see [`ResultReading::check_input`]).
    fn check_input(&self, method: &str, params: &Value) -> Result<(), InputError> {
        self.reader
            .check_input(&self.client_capabilities, method, params)
            .map_err(InputError::Unsupported)
    }

    /// The same context sending [`TaskContext::log`] messages to `sink`.
    pub fn with_log_sink(mut self, sink: LogSink) -> Self {
        self.log = Some(sink);
        self
    }

    /// Sends a log message to the client (`notifications/message`; for a task, with
    /// the related-task `_meta`), if the client wants that `level` (`logging/setLevel`;
    /// `info` and above until it says). `data` is a string or any JSON value. Never
    /// waits and never fails: logs are advisory.
    pub fn log(&self, level: LoggingLevel, data: impl Into<Value>) {
        self.log_as(level, None, data);
    }

    /// [`TaskContext::log`] naming the `logger` (a component of the tool).
    pub fn log_as(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) {
        if let Some(sink) = &self.log {
            sink(LogMessage {
                level,
                logger: logger.map(str::to_string),
                data: data.into(),
            });
        }
    }

    /// The same context with the answers to the questions asked before the work
    /// started (a tool's preflight questions, answered by MRTR rounds or by input
    /// requests of the task), by key.
    pub fn with_answers(mut self, answers: serde_json::Map<String, Value>) -> Self {
        self.answers = (!answers.is_empty()).then(|| Arc::new(answers));
        self
    }

    /// The answer to preflight question `key` (an `ElicitResult`), if it was answered.
    pub fn answer(&self, key: &str) -> Option<&Value> {
        self.answers.as_deref()?.get(key)
    }

    /// The task this work runs as, or `None` for a synchronous call.
    pub fn task_id(&self) -> Option<&TaskId> {
        self.task.as_ref().map(|(id, _)| id)
    }

    /// Waits until this work's task is committed to the store: true then; false for a
    /// synchronous call, or a call that ended inline (before it needed a task).
    ///
    /// Why: work may start before its task is created (on the extension wire, a call
    /// runs for the server's `--task-after` window before it becomes a task), and what
    /// it does in that time is kept in memory and written with the creation: its
    /// status message, its [`steps`](TaskContext::step). Await this before something
    /// that should only happen once the task id is durable and handed to the client,
    /// such as telling an outside system about it, or to have every step written to
    /// the journal one by one.
    pub async fn task_created(&self) -> bool {
        let Some((_, host)) = &self.task else {
            return false;
        };
        match host.upgrade() {
            Some(host) => host.created().await,
            None => false,
        }
    }

    /// Completes when the work has been asked to stop. Await it in a `select!` beside
    /// the real work; after the engine's grace period the work is aborted anyway.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.cancel.cancelled()
    }

    /// Whether the work has been asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The cancellation token itself, to hand to libraries that take one.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Sets the task's status message (visible in `tasks/get` and status notifications).
    /// For a synchronous call it is sent as a progress message when the request asked for
    /// progress, as long as the tool reported no figures of its own with
    /// [`TaskContext::report_progress`] (whose messages then say each step; sending both
    /// would say it twice). A task that already ended ignores it.
    pub async fn set_status_message(&self, message: impl Into<String>) {
        let message = message.into();
        match &self.task {
            Some((id, inner)) => {
                if let Some(host) = inner.upgrade() {
                    host.set_message(id, message).await;
                }
            }
            None => {
                if let Some(sink) = &self.progress {
                    // NaN: a status message, not figures (see `steady`).
                    sink(Progress {
                        progress: f64::NAN,
                        total: None,
                        message: Some(message),
                    });
                }
            }
        }
    }

    /// Reports progress, sent as `notifications/progress` when the request carried a
    /// progress token (for a task, for as long as the task lives).
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(sink) = &self.progress {
            sink(Progress {
                progress,
                total,
                message,
            });
        }
    }

    /// Runs `body` as the journaled step `name` and returns its output.
    ///
    /// In a task, the output is recorded in the task's journal when the body ends; when
    /// the work runs again (another server process took the task over, a retry, a
    /// restart after a drain), a step already recorded returns its recorded output and
    /// its body does not run. Steps are told apart by name and occurrence (the third
    /// step called `"fetch"` is `fetch#2`), so steps in loops work, as long as the work
    /// asks for its steps in the same order each time. A body that was running when its
    /// process died runs again: a step runs at least once, and exactly once when it
    /// finished. Give calls to outside systems [`TaskContext::step_key`] as an
    /// idempotency key so that such a repeat does no harm.
    ///
    /// Outside a task (a plain call) the body just runs.
    ///
    /// ```
    /// # async fn demo(ctx: mcp_tasks_engine::TaskContext) -> Result<(), mcp_tasks_engine::StepError> {
    /// let rows: u32 = ctx.step("fetch", async { 42 }).await?;
    /// let stored: bool = ctx.step("store", async move { rows > 0 }).await?;
    /// # let _ = stored; Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`StepError::NotRecorded`] when the step ran but could not be recorded (the task
    /// ended, another process took it over, the store failed): return; and
    /// [`StepError::Unreadable`] / [`StepError::Unserializable`] when the output does not
    /// convert to or from JSON.
    pub async fn step<T, F>(&self, name: &str, body: F) -> Result<T, StepError>
    where
        T: Serialize + DeserializeOwned,
        F: Future<Output = T>,
    {
        let key = self.steps.next_key(name);
        let Some((id, inner)) = &self.task else {
            let stable = format!("{}/{key}", self.steps.call_id());
            return Ok(CURRENT_STEP.scope(stable, body).await);
        };
        if let Some(recorded) = self.steps.replay(&key) {
            return serde_json::from_value(recorded).map_err(|e| StepError::Unreadable {
                step: key,
                reason: e.to_string(),
            });
        }
        let output = CURRENT_STEP.scope(format!("{id}/{key}"), body).await;
        let value = serde_json::to_value(&output).map_err(|e| StepError::Unserializable {
            step: key.clone(),
            reason: e.to_string(),
        })?;
        let host = inner.upgrade().ok_or_else(|| StepError::NotRecorded {
            step: key.clone(),
            reason: "the engine has shut down".into(),
        })?;
        host.record_step(id, key, self.steps.attempt, value).await?;
        Ok(output)
    }

    /// Inside the body of a [`TaskContext::step`]: a key for that step that is the
    /// same in every attempt of the task (`TASK_ID/NAME#N`), to pass as the
    /// idempotency key of a call to an outside system, so that a body run again after
    /// a crash does not charge a card twice. `None` outside a step body.
    pub fn step_key(&self) -> Option<String> {
        CURRENT_STEP.try_with(Clone::clone).ok()
    }

    /// Which attempt at the task this is: 1 for the first run, one more for every run
    /// after a takeover, a retry or a drain.
    pub fn attempt(&self) -> u32 {
        self.steps.attempt
    }

    /// Asks for this task to be run again later (a failure worth retrying: an outside
    /// service was down). Return the value as the tool's error:
    /// `return Err(ctx.retry(Retry::because("the API answered 503")))`. When the tool's
    /// retry policy allows another attempt, the task stays `working` (its status
    /// message says which attempt comes when) and the work runs again after the
    /// backoff, replaying its journaled steps; otherwise the error is the task's
    /// result, as a tool error carrying the reason.
    pub fn retry(&self, retry: Retry) -> RetryRequested {
        let requested = RetryRequested::new(&retry);
        self.steps.request_retry(retry);
        requested
    }

    /// Asks the client something on behalf of this task and waits for the answer: the
    /// task shows `input_required` until every outstanding request is answered. Several
    /// requests may be outstanding at once (call this from concurrent futures).
    ///
    /// In a synchronous call the request goes to the client on the call's own stream
    /// and the call waits for the answer (how MCP clients without tasks are asked).
    ///
    /// # Errors
    /// [`InputError::Unsupported`] when the client did not declare the capability (or
    /// this synchronous call cannot reach its client), [`InputError::Cancelled`] when
    /// the task or call is cancelled while waiting, [`InputError::TimedOut`] after the
    /// configured limit (a task fails), [`InputError::Rejected`] when the client
    /// answers with an error.
    pub async fn request_input(
        &self,
        client_method: &str,
        params: Value,
    ) -> Result<Value, InputError> {
        self.ask(client_method, params, Ask::new()).await
    }

    /// [`TaskContext::request_input`] with a deadline: when nobody answered within
    /// `after`, `outcome` happens (the task fails, the question is answered as
    /// declined, or with a default answer), and the task's timeline says so. Without a
    /// deadline a task's question waits as long as the task lives (its TTL). The
    /// deadline is stored with the question: a restart does not move it.
    ///
    /// # Errors
    /// As [`TaskContext::request_input`]; [`InputError::TimedOut`] when the deadline
    /// passed with [`DeadlineOutcome::Fail`] (the task has failed).
    pub async fn request_input_until(
        &self,
        client_method: &str,
        params: Value,
        after: std::time::Duration,
        outcome: DeadlineOutcome,
    ) -> Result<Value, InputError> {
        let ask = Ask::new().deadline(after, outcome);
        self.ask(client_method, params, ask).await
    }

    /// [`TaskContext::request_input`] for a question people answer: assigned to
    /// principals or groups (who see it in their inbox on the task board and may
    /// answer it although the task is not theirs), with a deadline, as `ask` says.
    /// A question only its assignees may answer (an approval) needs a task: its
    /// client never answers it, so a synchronous call cannot wait for it.
    ///
    /// # Errors
    /// As [`TaskContext::request_input_until`]; [`InputError::Unsupported`] for a
    /// question only its assignees may answer outside a task.
    pub async fn request_input_with(
        &self,
        method: &str,
        params: Value,
        ask: Ask,
    ) -> Result<Value, InputError> {
        self.ask(method, params, ask).await
    }

    async fn ask(&self, client_method: &str, params: Value, ask: Ask) -> Result<Value, InputError> {
        let Ask {
            deadline,
            assignment,
        } = ask;
        let Some((id, inner)) = &self.task else {
            let Some(requester) = &self.requester else {
                return Err(InputError::Unsupported(
                    "asking the client for input needs the tool to run as a task (call it with \"task\": {}) or a client connection that can carry requests".into(),
                ));
            };
            if assignment.as_ref().is_some_and(|a| a.only) {
                return Err(InputError::Unsupported(format!(
                    "this call waits for {} to answer, which needs a task: call the tool with \"task\": {{}} (or through a server with a sync budget)",
                    assignment.map(|a| a.to.join(", ")).unwrap_or_default()
                )));
            }
            self.check_input(client_method, &params)?;
            let timer = async {
                match &deadline {
                    Some((_, DeadlineOutcome::KeepWaiting | DeadlineOutcome::Escalate { .. }))
                    | None => std::future::pending().await,
                    Some((after, _)) => tokio::time::sleep(*after).await,
                }
            };
            return tokio::select! {
                answer = requester(client_method, params) => answer,
                _ = self.cancel.cancelled() => Err(InputError::Cancelled),
                _ = timer => match deadline {
                    Some((_, DeadlineOutcome::Answer { value })) => Ok(value),
                    Some((_, DeadlineOutcome::Decline)) if client_method == "elicitation/create" => {
                        Ok(serde_json::json!({"action": "decline"}))
                    }
                    Some((after, _)) => Err(InputError::TimedOut {
                        key: "call".into(),
                        method: client_method.to_string(),
                        after,
                    }),
                    None => Err(InputError::Cancelled),
                },
            };
        };
        // A task's question is stored with it, so someone other than its client (a
        // person on the task board) may answer it, when people answer questions here.
        // A later attempt (after a takeover or a retry) does not know what its client
        // declared (capabilities are not stored with the task): it asks, and the
        // question waits for whoever can answer it (the client, a person), within its
        // deadline or the task's TTL, rather than failing a task its first attempt
        // could have asked.
        let unknown_client = self.client_capabilities.is_null();
        let someone_else_may_answer = assignment.is_some()
            || (self.people_answer && self.reader.people_may_answer(client_method));
        if !(unknown_client || someone_else_may_answer) {
            self.check_input(client_method, &params)?;
        }
        let inner = inner.upgrade().ok_or(InputError::TaskEnded)?;
        let n = self.steps.next_input_number();
        // `elicitation-0`, `sampling-1`; the server's own questions by their name
        // (`mcp-tasks/approval`: `approval-0`).
        let short = match client_method.strip_prefix("mcp-tasks/") {
            Some(own) => own,
            None => client_method.split('/').next().unwrap_or("input"),
        };
        let key = format!("{short}-{n}");
        let mut request = InputRequest::new(client_method, params);
        request.assignment = assignment;
        inner.ask(id, key, request, deadline, &self.cancel).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a plain call's client was sent: (progress, total, message).
    type Seen = Arc<Mutex<Vec<(f64, Option<f64>, Option<String>)>>>;

    fn recording() -> (TaskContext, Seen) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let ctx = TaskContext::detached(
            CancellationToken::new(),
            Some(Arc::new(move |p: Progress| {
                sink.lock().unwrap().push((p.progress, p.total, p.message));
            })),
        );
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
        let seen = seen.lock().unwrap().clone();
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
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            vec![
                (1.0, None, Some("fetching".to_string())),
                (2.0, None, Some("parsing".to_string())),
            ]
        );
    }
}
