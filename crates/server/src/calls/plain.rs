//! Plain calls in hosts that speak no tasks: the sync budget.
//!
//! Most hosts call tools without tasks and give up on a call after 60-300 s; the work
//! is then lost. With a budget ([`crate::ServerConfig::sync_budget`]) a plain
//! `tools/call` of an `optional` task tool runs as a task from the start (a provisional
//! one: a call that ends within the task window leaves no task behind, exactly as on
//! the extension wire). The call waits on it: its progress goes to the call's
//! `progressToken` (with heartbeats), its questions to the client when the client can
//! answer them on this connection. Ended within the budget: the ordinary result.
//! Otherwise, before the budget ends (or at once when the task waits for an answer the
//! client cannot give here), the client gets a *handle*: a result that tells the model
//! in plain words that the work goes on as task `ID`, and how to wait for it
//! (`task_wait`), see it (`task_status`), answer it (`task_answer`) and cancel it
//! (`task_cancel`), with the board link for people. The task lives on like any other.
//!
//! [`follow`] is the wait itself, shared with `task_wait`; the call that waits is
//! [`crate::calls::budget`].

use mcp_tasks_engine::{Caller, Engine, EngineError, Outcome, TaskEvent, TaskRecord};
use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::{TaskId, TaskStatus};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::calls::heartbeat::Heartbeat;
use crate::session::Session;
use crate::shared::Shared;
use mcp_tasks_protocol::{RequestId, RpcError};

/// A plain call's way back to its client while it waits.
pub(crate) struct CallLink {
    /// The call's session (none on the stateless wire).
    pub(crate) session: Option<Arc<Session>>,
    /// The call's own stream (the POST's SSE stream, stdout), when it has one: the
    /// task's questions and log messages go there while the call waits.
    pub(crate) stream: Option<mpsc::Sender<Value>>,
    /// Progress for the call's `progressToken`, when it sent one.
    pub(crate) heartbeat: Option<Arc<Heartbeat>>,
    /// Fires when the client cancels the call.
    pub(crate) cancel: CancellationToken,
    /// Whether this client is offered the task tools (the handle's wording).
    pub(crate) task_tools: bool,
    /// The call's JSON-RPC id on its session (for the reason of a cancellation).
    pub(crate) request: Option<RequestId>,
}

impl CallLink {
    /// The link of a call: its heartbeat when `params` carry a `progressToken` and the
    /// call has a stream to send it on.
    pub(crate) fn new(
        server: &Shared,
        session: Option<Arc<Session>>,
        stream: Option<mpsc::Sender<Value>>,
        params: &Value,
        cancel: CancellationToken,
        task_tools: bool,
    ) -> Self {
        let heartbeat =
            Heartbeat::for_call(params, stream.as_ref(), server.config().progress_interval);
        CallLink {
            session,
            stream,
            heartbeat,
            cancel,
            task_tools,
            request: None,
        }
    }

    /// The link of the request `id` on its session.
    pub(crate) fn for_request(mut self, id: &RequestId) -> Self {
        self.request = Some(id.clone());
        self
    }

    /// Whether the client cancelled the call because it timed out (a host's own
    /// limit, which the TypeScript SDK reports as the cancellation's reason) rather
    /// than because someone stopped it.
    pub(crate) fn cancelled_by_timeout(&self) -> bool {
        let reason = match (&self.session, &self.request) {
            (Some(session), Some(id)) => session.cancel_reason(id),
            _ => None,
        };
        reason.is_some_and(|r| {
            let r = r.to_ascii_lowercase();
            r.contains("timed out") || r.contains("timeout")
        })
    }

    /// Whether the client can be asked `method` with `params` on this call.
    fn can_ask(&self, method: &str, params: &Value) -> bool {
        match (&self.session, &self.stream) {
            (Some(session), Some(_)) => {
                crate::answers::check_input(&session.client_capabilities(), method, params).is_ok()
            }
            _ => false,
        }
    }
}

/// The request a plain call's task is stored with: without its `progressToken`, whose
/// notifications belong to the call (and to each `task_wait` with its own token), not
/// to the session at large.
pub(crate) fn stored_request(mut params: Value) -> Value {
    if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.remove("progressToken");
        if meta.is_empty() {
            if let Some(o) = params.as_object_mut() {
                o.remove("_meta");
            }
        }
    }
    params
}

/// The capabilities a plain call's task runs with: the client's, and the questions the
/// task tools let it answer (a form or URL elicitation, a sampling request) when it is
/// offered them. Such a question then waits in the task for `task_answer` (or a person
/// on the board) instead of failing the tool.
pub(crate) fn task_capabilities(client: Value, task_tools: bool) -> Value {
    if !task_tools {
        return client;
    }
    let mut caps = match client {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let elicitation = caps
        .entry("elicitation")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .map(|e| {
            e.entry("form").or_insert_with(|| json!({}));
            e.entry("url").or_insert_with(|| json!({}));
        });
    if elicitation.is_none() {
        caps.insert("elicitation".into(), json!({ "form": {}, "url": {} }));
    }
    caps.entry("sampling").or_insert_with(|| json!({}));
    Value::Object(caps)
}

/// Forwards the progress reports of task `id` already published (work that ended
/// within the task window reported them before anyone waited on events).
pub(crate) fn forward_progress(
    link: &CallLink,
    id: &TaskId,
    events: &mut broadcast::Receiver<TaskEvent>,
) {
    let Some(beat) = &link.heartbeat else {
        return;
    };
    loop {
        match events.try_recv() {
            Ok(TaskEvent::Progress { task, progress, .. }) if &task == id => {
                beat.forward(&progress)
            }
            Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) => {}
            Err(_) => return,
        }
    }
}

/// Tells the client its open questions to a cancelled task are withdrawn
/// (`notifications/cancelled` for each request that asked one).
pub(crate) fn withdraw_questions(link: &CallLink, record: &TaskRecord) {
    let Some(tx) = &link.stream else {
        return;
    };
    let open = record
        .input_requests
        .iter()
        .filter(|(_, q)| q.is_outstanding());
    for (key, _) in open {
        let id = crate::questions::in_task::request_id(&record.id, key);
        let _ = tx.try_send(mcp_tasks_protocol::jsonrpc::notification(
            mcp_tasks_protocol::methods::NOTIF_CANCELLED,
            json!({ "requestId": id, "reason": "the call that asked was cancelled" }),
        ));
    }
}

/// The outcome of a finished call as a plain call's answer.
pub(crate) fn ordinary(outcome: Outcome) -> Result<Value, RpcError> {
    match outcome {
        Outcome::Result { value } => Ok(value),
        failed => Err(crate::error_map::outcome_error(&failed).unwrap_or_else(|| {
            RpcError::new(
                mcp_tasks_protocol::error_code::INTERNAL_ERROR,
                "the tool ended without a result",
            )
        })),
    }
}

pub(crate) fn no_outcome() -> Outcome {
    Outcome::failed(
        mcp_tasks_engine::Failure::Internal,
        "the task ended without an outcome",
    )
}

/// How a wait on a task ended.
pub(crate) enum Followed {
    /// The task is terminal: its final record.
    Ended(TaskRecord),
    /// The task goes on: its latest record, and why the wait stopped.
    Waiting(TaskRecord, Waiting),
    /// The client cancelled the call that waited: the task's latest record.
    Cancelled(TaskRecord),
    /// The task could not be read (gone, expired) or the server is shutting down.
    Failed(EngineError),
}

/// Why a wait stopped with the task still going.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waiting {
    /// The budget (or the wait asked for) ran out.
    OutOfTime,
    /// The task waits for an answer this client cannot give on this call.
    ForAnswer,
}

/// How often a wait re-reads the task when no event came: another process sharing the
/// store changes it unannounced on SQLite.
const REREAD: Duration = Duration::from_secs(5);

/// Waits on task `id` for a plain call until it ends, `deadline` passes, the task waits
/// for an answer the client cannot give here, or the client cancels. Meanwhile the
/// task's progress goes to the call's `progressToken` (with heartbeats) and the
/// questions the client can answer go to it on the call's stream.
pub(crate) async fn follow(
    server: &Shared,
    link: &CallLink,
    id: &TaskId,
    caller: &Caller,
    deadline: Instant,
    mut events: broadcast::Receiver<TaskEvent>,
) -> Followed {
    let engine = server.engine();
    let mut record = match engine.get(id, caller).await {
        Ok(r) => r,
        Err(e) => return Followed::Failed(e),
    };
    loop {
        if record.status.is_terminal() {
            // Progress reported before the end is sent before the result.
            forward_progress(link, id, &mut events);
            return Followed::Ended(record);
        }
        if record.status == TaskStatus::InputRequired {
            if let (Some(session), Some(_)) = (&link.session, &link.stream) {
                crate::questions::in_task::deliver(server.questions(), session, &record);
            }
            let unanswerable = record
                .input_requests
                .values()
                .filter(|r| r.is_outstanding())
                .any(|r| !link.can_ask(&r.method, &r.params));
            if unanswerable {
                return Followed::Waiting(record, Waiting::ForAnswer);
            }
        }
        let now = Instant::now();
        if now >= deadline {
            return Followed::Waiting(record, Waiting::OutOfTime);
        }
        let beat_at = link.heartbeat.as_ref().map(|h| h.due_at());
        let wake = [Some(deadline), beat_at, Some(now + REREAD)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(deadline);
        tokio::select! {
            () = link.cancel.cancelled() => return Followed::Cancelled(record),
            () = tokio::time::sleep_until(wake) => {
                if let Some(h) = &link.heartbeat {
                    h.beat_if_due(record.status_message.as_deref());
                }
                match engine.get(id, caller).await {
                    Ok(r) => record = r,
                    Err(e) => return Followed::Failed(e),
                }
            }
            event = events.recv() => match event {
                Ok(TaskEvent::Changed(r)) if &r.id == id => record = (*r).clone(),
                Ok(TaskEvent::Progress { task, progress, .. }) if &task == id => {
                    if let Some(h) = &link.heartbeat {
                        h.forward(&progress);
                    }
                }
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(_)) => match engine.get(id, caller).await {
                    Ok(r) => record = r,
                    Err(e) => return Followed::Failed(e),
                },
                Err(broadcast::error::RecvError::Closed) => {
                    return Followed::Failed(EngineError::ShuttingDown)
                }
            },
        }
    }
}

/// Registers the call's stream as task `id`'s while the call waits on it (see
/// [`attach`]); undone when dropped.
pub(crate) struct Attached<'a> {
    server: &'a Shared,
    session: Option<&'a Arc<Session>>,
    task: TaskId,
}

/// Makes the call's stream task `id`'s while the call waits on it, so that the task's
/// questions and log messages go there, without related-task `_meta` (see
/// [`crate::sessions::Sessions::attach_plain_wait`]). Call it before the work first runs.
pub(crate) fn attach<'a>(server: &'a Shared, link: &'a CallLink, id: &TaskId) -> Attached<'a> {
    let session = match (&link.session, &link.stream) {
        (Some(session), Some(tx)) => {
            server.sessions().attach_plain_wait(session, id, tx.clone());
            Some(session)
        }
        _ => None,
    };
    Attached {
        server,
        session,
        task: id.clone(),
    }
}

impl Drop for Attached<'_> {
    fn drop(&mut self) {
        if let Some(session) = self.session {
            self.server
                .sessions()
                .detach_plain_wait(session, &self.task);
        }
    }
}

/// The handle: the answer to a plain call whose work goes on as a task (see the module
/// docs), not an error, carrying the task's state as structured content.
///
/// The SDK clients validate `structuredContent` against a tool's `outputSchema` (the
/// TypeScript SDK also refuses a result without it) unless the result is an error. A
/// client offered the task tools is shown no `outputSchema` (`task_tools::listed`), so
/// its handle is an ordinary result; only a client that was shown the tool's schema
/// (it speaks tasks, or the task tools are off) gets the handle flagged `isError`, since
/// it cannot fit the schema (its text says plainly that nothing failed).
pub(crate) fn handle(
    server: &Shared,
    link: &CallLink,
    record: &TaskRecord,
    tool: &str,
    tool_has_output_schema: bool,
    why: Waiting,
) -> Value {
    let text = handle_text(server, link, record, tool, why);
    let schema_shown = tool_has_output_schema && !link.task_tools;
    let mut result = json!({
        "content": [{ "type": "text", "text": text }],
        "isError": schema_shown,
        "_meta": v2025_11_25::related_task(record.id.as_str()),
    });
    if !schema_shown {
        result["structuredContent"] = status_json(server.engine(), record);
    }
    result
}

/// What the model reads in a handle.
fn handle_text(
    server: &Shared,
    link: &CallLink,
    record: &TaskRecord,
    tool: &str,
    why: Waiting,
) -> String {
    let id = record.id.as_str();
    let budget = humantime::format_duration(server.config().sync_budget);
    let mut text = match why {
        Waiting::OutOfTime => format!(
            "Not an error: tool '{tool}' is still working after {budget}, so its work goes on as task {id} and nothing is lost."
        ),
        Waiting::ForAnswer => format!(
            "Not an error: tool '{tool}' is waiting for an answer, so its work goes on as task {id} and nothing is lost."
        ),
    };
    if let Some(message) = record.status_message.as_deref().filter(|m| !m.is_empty()) {
        text.push_str(&format!(" Its status: {message}."));
    }
    let mut client_may_answer = false;
    for (key, q) in record
        .input_requests
        .iter()
        .filter(|(_, q)| q.is_outstanding())
    {
        let asked = q.params["message"].as_str().unwrap_or("(no message)");
        match q.assignment.as_ref().filter(|a| a.only) {
            Some(people) => text.push_str(&match people_channels(server) {
                Some(channels) => format!(
                    "\nWaiting for {} to decide ('{key}': {asked}). Only they can answer it, {channels}; do not answer it yourself. The call runs once it is approved; if it is rejected the result says why.",
                    people.to.join(", ")
                ),
                None => format!(
                    "\nWaiting for {} to decide ('{key}': {asked}), but this server offers them no way to answer (no task board, chat or answer links), so it waits until its deadline or until the task's time runs out; do not answer it yourself, tell the user.",
                    people.to.join(", ")
                ),
            }),
            None => {
                client_may_answer = true;
                text.push_str(&format!("\nOpen question '{key}' ({}): {asked}", q.method));
            }
        }
    }
    let call = json!({ "taskId": id }).to_string();
    if link.task_tools {
        text.push_str(&format!(
            "\n- To get the result, call task_wait with {call} (it waits up to {budget}; call it again while the task is still working)."
        ));
        text.push_str(&format!(
            "\n- To see its progress and any open question with its form, call task_status with {call}."
        ));
        if record.status == TaskStatus::InputRequired && client_may_answer {
            text.push_str(&format!(
                "\n- To answer an open question, ask the user and call task_answer with {{\"taskId\": \"{id}\", \"answers\": {{\"<question key>\": {{<the form's fields>}}}}}}."
            ));
        }
        text.push_str(&format!("\n- To stop it, call task_cancel with {call}."));
    } else {
        text.push_str(&format!(
            "\n- Poll it with tasks/get {call}; its result comes with tasks/result (or inlined in tasks/get on the Tasks extension); tasks/cancel stops it."
        ));
    }
    if let Some(link) = board_link(server, &record.id) {
        text.push_str(&format!(
            "\nPeople can follow it (and answer its questions) on the task board: {link}"
        ));
    }
    text
}

/// Where people answer questions assigned to them through this server, as a phrase
/// ("on the task board or in Slack"): [`crate::ServerConfig::people_channels`], else
/// the task board when one is served. `None`: nowhere (a stdio server).
pub(crate) fn people_channels(server: &Shared) -> Option<String> {
    let config = server.config();
    let mut channels = config.people_channels.clone();
    if channels.is_empty() && config.board_url.is_some() {
        channels.push("on the task board".to_string());
    }
    let (last, rest) = channels.split_last()?;
    Some(if rest.is_empty() {
        last.clone()
    } else {
        format!("{} or {last}", rest.join(", "))
    })
}

/// The task's page on the board, when one is served.
pub(crate) fn board_link(server: &Shared, id: &TaskId) -> Option<String> {
    server
        .config()
        .board_url
        .as_deref()
        .map(|root| format!("{}/tasks/{id}", root.trim_end_matches('/')))
}

/// A task's state for a model: id, status, status message, tool, times, and its open
/// questions with their forms.
pub(crate) fn status_json(engine: &Engine, record: &TaskRecord) -> Value {
    let view = engine.view(record);
    let questions: Vec<Value> = record
        .input_requests
        .iter()
        .filter(|(_, q)| q.is_outstanding())
        .map(|(key, q)| {
            let mut question = json!({
                "key": key,
                "method": q.method,
                "message": q.params.get("message").cloned().unwrap_or(Value::Null),
            });
            if let Some(schema) = q.params.get("requestedSchema") {
                question["requestedSchema"] = schema.clone();
            }
            if let Some(url) = q.params.get("url") {
                question["url"] = url.clone();
            }
            if let Some(deadline) = &q.deadline {
                question["deadline"] = json!(deadline.at.to_rfc3339());
            }
            if let Some(people) = q.assignment.as_ref() {
                question["assignedTo"] = json!(people.to);
                // Only they answer it (an approval): the model must not try.
                question["onlyAssigneesAnswer"] = json!(people.only);
            }
            question
        })
        .collect();
    let mut status = json!({
        "taskId": record.id.as_str(),
        "status": view.status.as_str(),
        "createdAt": record.created_at.to_rfc3339(),
        "lastUpdatedAt": record.last_updated_at.to_rfc3339(),
        "questions": questions,
    });
    if let Some(tool) = record
        .request
        .field("name")
        .as_ref()
        .and_then(Value::as_str)
    {
        status["tool"] = json!(tool);
    }
    if let Some(message) = &record.status_message {
        status["statusMessage"] = json!(message);
    }
    status
}
