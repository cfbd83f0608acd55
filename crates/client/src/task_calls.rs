//! The [`Client`] calls that create and follow tasks: call as a task (with MRTR
//! rounds on the 2026-07-28 wire), get, list (the 2025-11-25 wire only), cancel,
//! resume, and the answers to input requests; and the plain tool calls, which follow
//! a task too when the server makes one anyway.

use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::{TaskId, TaskStatus, TaskView};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::mpsc;

use crate::client::{next_cursor, unsupported_if_unknown, Client, MAX_INPUT_ROUNDS, MAX_PAGES};
use crate::dispatch::{Progress, WatchEvent};
use crate::error::ClientError;
use crate::input::InputRequest;
use crate::reply::{self, CancelReply, InputRequestWire, TasksPage, ToolResult};
use crate::task::{TaskHandle, TaskOptions};
use crate::wire::{self, CallReply, Wire};

impl Client {
    /// Calls a tool and waits for its result, without asking for a task. On the
    /// extension wire the extension is not declared, so the server runs the call at
    /// once (a tool that requires a task then fails with -32021); a question the tool
    /// asks meanwhile comes as an input-required round, answered by the registered
    /// handlers (as a task's questions are) and sent back with the call's
    /// `requestState`.
    ///
    /// # Errors
    /// The server's JSON-RPC error or a connection error. A tool error is a result
    /// with `isError: true`, not an error.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        self.call_plain(json!({ "name": name, "arguments": arguments }))
            .await
    }

    /// `tools/call` without asking for a task, with the given params.
    async fn call_plain(&self, params: Value) -> Result<Value, ClientError> {
        match self.call_rounds(params, false).await? {
            CallReply::Immediate(v) => Ok(v),
            CallReply::Task(view) => {
                let handle = TaskHandle::follow(self.clone(), view, None);
                let outcome = handle.result().await?;
                match (outcome.result, outcome.error) {
                    (Some(r), _) => Ok(r),
                    (None, Some(e)) => Err(ClientError::Rpc(e)),
                    (None, None) => Err(ClientError::protocol("the task ended without a result")),
                }
            }
            CallReply::InputRequired(..) => Err(ClientError::protocol(
                "the server kept asking for input; gave up",
            )),
        }
    }

    /// [`Client::call_tool`] with a progress token: the server's progress notifications
    /// for this call (`notifications/progress`) go to `on_progress` while it runs.
    /// Tools that are not tasks report their progress only this way (the everything
    /// server's `trigger-long-running-operation`, say), so a caller that shows a
    /// progress bar needs it.
    ///
    /// # Errors
    /// As [`Client::call_tool`].
    pub async fn call_tool_with_progress<F>(
        &self,
        name: &str,
        arguments: Value,
        on_progress: F,
    ) -> Result<Value, ClientError>
    where
        F: Fn(Progress) + Send + Sync + 'static,
    {
        let token = json!(format!(
            "mcp-tasks-client-{}",
            self.inner.next_token.fetch_add(1, Ordering::Relaxed)
        ));
        let _guard = self
            .inner
            .subscriptions
            .follow_call_progress(&token, Arc::new(on_progress));
        let params = json!({
            "name": name,
            "arguments": arguments,
            "_meta": { "progressToken": token },
        });
        self.call_plain(params).await
    }

    /// Calls a tool as a task and returns a handle to follow it: its id, a stream of
    /// updates, and its result. Input requests of the task go to the registered
    /// handlers.
    ///
    /// On the extension wire the server decides: a tool it runs at once gives a handle
    /// without a task id whose result is ready.
    ///
    /// # Errors
    /// [`ClientError::Unsupported`] when the server has no tasks, the server's
    /// JSON-RPC error (e.g. -32601 when the tool forbids tasks), a connection error.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        options: TaskOptions,
    ) -> Result<TaskHandle, ClientError> {
        if !self.supports_tasks() {
            return Err(ClientError::Unsupported(format!(
                "the server (protocol {}) does not run tool calls as tasks",
                self.inner.server.protocol_version
            )));
        }
        let mut params = json!({ "name": name, "arguments": arguments });
        let mut token = None;
        if self.wire() == Wire::V2025_11_25 {
            let mut task = json!({});
            if let Some(ttl) = options.ttl {
                task["ttl"] = json!(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
            }
            params["task"] = task;
            if options.progress {
                let t = json!(format!(
                    "mcp-tasks-client-{}",
                    self.inner.next_token.fetch_add(1, Ordering::Relaxed)
                ));
                params["_meta"] = json!({ "progressToken": t });
                token = Some(t);
            }
        }
        match self.call_rounds(params, true).await? {
            CallReply::Task(view) => {
                if let Some(t) = &token {
                    self.inner.subscriptions.follow_progress(t, view.id.clone());
                }
                Ok(TaskHandle::follow(self.clone(), view, token))
            }
            CallReply::Immediate(v) => Ok(TaskHandle::ready(v)),
            CallReply::InputRequired(..) => Err(ClientError::protocol(
                "the server kept asking for input; gave up",
            )),
        }
    }

    /// `tools/call`, answering extension MRTR rounds (`input_required` results) with
    /// the registered handlers.
    pub(crate) async fn call_rounds(
        &self,
        mut params: Value,
        extension: bool,
    ) -> Result<CallReply, ClientError> {
        let mut responses = Map::new();
        for _ in 0..MAX_INPUT_ROUNDS {
            let reply = self
                .request_with(m::TOOLS_CALL, params.clone(), extension, self.inner.timeout)
                .await?;
            match wire::call_reply(self.wire(), reply)? {
                CallReply::InputRequired(requests, state) => {
                    for (key, req) in requests {
                        if responses.contains_key(&key) {
                            continue;
                        }
                        let answer = self.answer_input(None, &key, &req).await;
                        responses.insert(key, answer);
                    }
                    params["inputResponses"] = Value::Object(responses.clone());
                    // The server's memory of the call (a question asked mid-call): sent
                    // back verbatim, or dropped when this round came without one.
                    match state {
                        Some(s) => params["requestState"] = s,
                        None => {
                            if let Some(o) = params.as_object_mut() {
                                o.remove("requestState");
                            }
                        }
                    }
                }
                other => return Ok(other),
            }
        }
        Ok(CallReply::InputRequired(Map::new(), None))
    }

    /// Asks the registered handler to answer an extension input request; a missing
    /// handler or a failed one answers an elicitation with `cancel`.
    pub(crate) async fn answer_input(
        &self,
        task: Option<&TaskId>,
        key: &str,
        request: &Value,
    ) -> Value {
        // A request that does not fit (no method) goes on with an empty method, which
        // no handler answers: it is answered `cancel` below, as an unknown kind is.
        let (method, params) = match reply::parse::<InputRequestWire>("an input request", request) {
            Ok(r) => (r.method, r.params.unwrap_or_else(|| json!({}))),
            Err(e) => {
                tracing::debug!(key, error = %e, "unreadable input request");
                (String::new(), json!({}))
            }
        };
        let req = InputRequest {
            method: method.clone(),
            params,
            task_id: task.cloned(),
            key: key.to_string(),
        };
        if let Some(task) = task {
            self.inner
                .subscriptions
                .notify(task, &WatchEvent::Input(req.clone()));
        }
        match self.inner.handlers.for_method(&method) {
            Some(h) => match h(req).await {
                Ok(v) => v,
                Err(e) => {
                    tracing::debug!(key, error = %e.message, "input handler failed; answering cancel");
                    crate::input::cancel()
                }
            },
            None => {
                tracing::debug!(
                    key,
                    method,
                    "no handler for an input request; answering cancel"
                );
                crate::input::cancel()
            }
        }
    }

    /// The current state of a task.
    ///
    /// # Errors
    /// -32602 for an unknown or expired task, a connection error.
    pub async fn get(&self, task_id: &TaskId) -> Result<TaskView, ClientError> {
        Ok(self.get_detailed(task_id).await?.0)
    }

    /// `tasks/get` with what the extension wire inlines (result, error, input
    /// requests); on 2025-11-25 only a result or error a server inlined there (which
    /// the wire does not have; see `wire::task_reply`), else `Detail::None`.
    pub(crate) async fn get_detailed(
        &self,
        task_id: &TaskId,
    ) -> Result<(TaskView, v2026_07_28::Detail), ClientError> {
        let v = self
            .request(m::TASKS_GET, json!({ "taskId": task_id }))
            .await?;
        wire::task_reply(self.wire(), &v)
    }

    /// `view` with [`TaskView::tool_error`] known on every wire. The extension wire
    /// inlines the result, so its views know already; on 2025-11-25 a `failed` task
    /// may be a tool error (`isError: true`) or a JSON-RPC error, which only the
    /// task's `tasks/result` tells (it answers at once for a task that ended). Other
    /// views are returned as they are, without a request.
    ///
    /// # Errors
    /// A connection error while asking `tasks/result`.
    pub async fn with_tool_error(&self, mut view: TaskView) -> Result<TaskView, ClientError> {
        if self.wire() != Wire::V2025_11_25 || view.status != TaskStatus::Failed || view.tool_error
        {
            return Ok(view);
        }
        match self.task_result(&view.id).await {
            Ok(result) => {
                view.tool_error = ToolResult::of(&result).is_error == Some(true);
                Ok(view)
            }
            // Failed with a JSON-RPC error (or the result is gone): not a tool error.
            Err(ClientError::Rpc(_)) => Ok(view),
            Err(e) => Err(e),
        }
    }

    /// Every task the server lists for this client, following `nextCursor`.
    ///
    /// # Errors
    /// [`ClientError::Unsupported`] on the extension wire (it has no `tasks/list`) or
    /// when the server answers -32601; a connection error.
    pub async fn list(&self) -> Result<Vec<TaskView>, ClientError> {
        if self.wire() == Wire::V2026_07_28 {
            return Err(ClientError::Unsupported(
                "the tasks extension has no tasks/list".into(),
            ));
        }
        let mut tasks = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = self
                .request(m::TASKS_LIST, params)
                .await
                .map_err(|e| unsupported_if_unknown(e, m::TASKS_LIST))?;
            let page: TasksPage = reply::parse(m::TASKS_LIST, &page)?;
            for t in &page.tasks {
                tasks.push(wire::task_reply(Wire::V2025_11_25, t)?.0);
            }
            match next_cursor(page.next_cursor, &cursor)? {
                Some(c) if seen.insert(c.clone()) => cursor = Some(c),
                Some(_) => return Err(ClientError::protocol("tasks/list repeated a cursor")),
                None => return Ok(tasks),
            }
        }
        Err(ClientError::protocol("tasks/list never stopped paging"))
    }

    /// Cancels a task and returns its state afterwards. Tried even when the server
    /// does not advertise `tasks.cancel` (some handle it all the same).
    ///
    /// # Errors
    /// [`ClientError::Unsupported`] when the server answers -32601; -32602 for an
    /// unknown task or (2025-11-25) one that already ended; a connection error.
    pub async fn cancel(&self, task_id: &TaskId) -> Result<TaskView, ClientError> {
        let v = self
            .request(m::TASKS_CANCEL, json!({ "taskId": task_id }))
            .await
            .map_err(|e| unsupported_if_unknown(e, m::TASKS_CANCEL))?;
        match self.wire() {
            // tower-mcp 0.25.0 answers a 2025-11-25 `tasks/cancel` of a running task
            // with `{}` rather than the task: its state is then read with `tasks/get`.
            Wire::V2025_11_25 if !is_task(&v) => self.get(task_id).await,
            Wire::V2025_11_25 => Ok(wire::task_reply(Wire::V2025_11_25, &v)?.0),
            Wire::V2026_07_28 => self.get(task_id).await,
        }
    }

    /// Follows a task created earlier (by this client before a restart, or by anyone
    /// holding its id): the same handle [`Client::call_tool_as_task`] returns.
    ///
    /// # Errors
    /// -32602 for an unknown or expired task, a connection error.
    pub async fn resume(&self, task_id: &TaskId) -> Result<TaskHandle, ClientError> {
        let view = self.get(task_id).await?;
        Ok(TaskHandle::follow(self.clone(), view, None))
    }

    /// Registers a watcher of `task`'s events.
    pub(crate) fn watch(&self, task: &TaskId) -> mpsc::UnboundedReceiver<WatchEvent> {
        self.inner.subscriptions.watch(task)
    }

    /// Forgets the progress token of a finished task.
    pub(crate) fn forget_progress(&self, token: &Value) {
        self.inner.subscriptions.forget_progress(token);
    }

    /// `tasks/result` (2025-11-25): waits for the task's outcome however long it runs.
    pub(crate) async fn task_result(&self, task_id: &TaskId) -> Result<Value, ClientError> {
        self.request_with(m::TASKS_RESULT, json!({ "taskId": task_id }), true, None)
            .await
    }

    /// `tasks/update` (extension): answers input requests by key.
    pub(crate) async fn update(
        &self,
        task_id: &TaskId,
        responses: Map<String, Value>,
    ) -> Result<(), ClientError> {
        self.request(
            m::TASKS_UPDATE,
            json!({ "taskId": task_id, "inputResponses": responses }),
        )
        .await
        .map(|_| ())
    }
}

/// Whether a 2025-11-25 `tasks/cancel` answer is the task (it has a `status`), rather
/// than the empty acknowledgement some servers send.
fn is_task(v: &Value) -> bool {
    CancelReply::deserialize(v).is_ok_and(|r| r.status.is_some())
}
