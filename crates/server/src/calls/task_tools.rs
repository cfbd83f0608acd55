//! The task tools: `task_wait`, `task_status`, `task_answer`, `task_cancel` and
//! `task_list`, the way back to a task for clients that speak no tasks.
//!
//! A host without tasks gets a *handle* when a plain call outlives the sync budget
//! (see `calls::plain`); with these tools its model waits for the result, reads the
//! progress and the open questions (with their forms), answers a question the host
//! cannot show, cancels, and finds a task again whose id it lost. They are offered per
//! [`TaskTools`] and obey owner binding exactly as `tasks/*` do: another principal's
//! id answers like an unknown one. Answers come back as tool results (an unknown id is
//! a result with `isError`, which the model reads), never as protocol errors, except
//! for arguments that do not fit the schema.

use mcp_tasks_engine::{Caller, EngineError, Outcome, TaskFilter};
use mcp_tasks_protocol::{RpcError, TaskId, TaskStatus};
use serde_json::{json, Map, Value};
use std::time::Duration;
use tokio::time::Instant;

use crate::calls::plain::{follow, status_json, CallLink, Followed, Waiting};
use crate::config::{TaskTools, DEFAULT_SYNC_BUDGET};
use crate::shared::Shared;

pub use crate::tools::task_tool_names::{
    is_task_tool, NAMES, TASK_ANSWER, TASK_CANCEL, TASK_LIST, TASK_STATUS, TASK_WAIT,
};

/// Most tasks `task_list` shows.
const LIST_LIMIT: usize = 20;

/// Whether a client is offered the task tools under `mode`; `speaks_tasks`: it declared
/// task support (2025-11-25 `capabilities.tasks`, or the Tasks extension).
pub(crate) fn offered(mode: TaskTools, speaks_tasks: bool) -> bool {
    match mode {
        TaskTools::Always => true,
        TaskTools::Never => false,
        TaskTools::Auto => !speaks_tasks,
    }
}

/// The server's tools as `tools/list` shows them to a client; `task_tools`: the client
/// is offered the task tools.
///
/// Such a client gets no tool's `outputSchema`. Why: a plain call of it that outlives
/// the sync budget answers with a handle (see `calls::plain`), which cannot be the
/// tool's structured output; the SDK clients refuse a result that is not an error and
/// lacks the structured content an advertised schema promises, so with the schema the
/// handle would have to be an error, which hosts paint red and models call again. The
/// tool's own structured result comes with `task_wait` (and with the call itself when
/// it ends within the budget), unvalidated but unchanged. Clients that speak tasks
/// still get the schema: their long calls become tasks, never handles.
pub(crate) fn listed(server: &Shared, task_tools: bool) -> Vec<Value> {
    server
        .tools()
        .iter()
        .map(|t| {
            let mut definition = t.definition();
            if let (true, Some(d)) = (task_tools, definition.as_object_mut()) {
                d.remove("outputSchema");
            }
            definition
        })
        .collect()
}

/// The longest a `task_wait` waits: the sync budget, or its default when the budget
/// is off.
fn wait_cap(server: &Shared) -> Duration {
    match server.config().sync_budget {
        d if d.is_zero() => DEFAULT_SYNC_BUDGET,
        d => d,
    }
}

/// The task tools' definitions, for `tools/list`.
pub(crate) fn definitions(server: &Shared) -> Vec<Value> {
    let cap = wait_cap(server).as_secs_f64();
    let task_id = json!({
        "type": "string",
        "minLength": 1,
        "description": "The task's id, as given when the call became a task (or from task_list)."
    });
    let tool = |name: &str,
                title: &str,
                description: String,
                properties: Value,
                required: &[&str],
                read_only: bool| {
        json!({
            "name": name,
            "title": title,
            "description": description,
            "inputSchema": { "type": "object", "properties": properties, "required": required },
            "execution": { "taskSupport": "forbidden" },
            "annotations": { "readOnlyHint": read_only, "openWorldHint": false },
        })
    };
    vec![
        tool(
            TASK_WAIT,
            "Wait for a task",
            format!("Waits for a task that a long tool call became (up to {cap} s, or `seconds`), then returns the tool's own result, or the task's current status, progress and open questions when it is still running. Call it again while the status is working."),
            json!({ "taskId": task_id, "seconds": { "type": "number", "minimum": 0, "description": format!("How long to wait at most, in seconds (at most {cap}).") } }),
            &["taskId"],
            true,
        ),
        tool(
            TASK_STATUS,
            "Task status",
            "Shows a task's status, status message and open questions (each with its key and the form to fill in), without waiting.".to_string(),
            json!({ "taskId": task_id }),
            &["taskId"],
            true,
        ),
        tool(
            TASK_ANSWER,
            "Answer a task's question",
            "Answers a task's open question that this client could not show: `answers` maps each question's key (from task_status) to the form's values, for example {\"confirm\": true} (taken as accepted), or to a full answer such as {\"action\": \"decline\"}. Ask the user; never answer for them.".to_string(),
            json!({ "taskId": task_id, "answers": { "type": "object", "description": "Question key to answer: the form's values, or {\"action\": \"accept\"|\"decline\"|\"cancel\", \"content\": {...}}.", "additionalProperties": { "type": "object" } } }),
            &["taskId", "answers"],
            false,
        ),
        tool(
            TASK_CANCEL,
            "Cancel a task",
            "Stops a task that is still running; its work is cancelled.".to_string(),
            json!({ "taskId": task_id }),
            &["taskId"],
            false,
        ),
        tool(
            TASK_LIST,
            "List your tasks",
            format!("Lists your most recent tasks (at most {LIST_LIMIT}, newest first) with a one-line summary each, to find a task whose id was lost."),
            json!({ "status": { "type": "string", "enum": ["working", "input_required", "completed", "failed", "cancelled"], "description": "Only tasks in this status." } }),
            &[],
            true,
        ),
    ]
}

/// Calls task tool `name` for `caller`. `None`: the client cancelled a `task_wait`.
///
/// # Errors
/// `-32602` for arguments that do not fit the tool's schema.
pub(crate) async fn call(
    server: &Shared,
    link: &CallLink,
    caller: &Caller,
    name: &str,
    args: &Map<String, Value>,
) -> Option<Result<Value, RpcError>> {
    let result = match name {
        TASK_LIST => list(server, caller, args).await,
        _ => {
            let id = match task_id(name, args) {
                Ok(id) => id,
                Err(e) => return Some(Err(e)),
            };
            match name {
                TASK_WAIT => return wait(server, link, caller, &id, args).await,
                TASK_STATUS => status(server, caller, &id).await,
                TASK_ANSWER => answer(server, caller, &id, args).await,
                TASK_CANCEL => cancel(server, caller, &id).await,
                other => Err(RpcError::invalid_params(format!(
                    "unknown task tool '{other}'"
                ))),
            }
        }
    };
    Some(result)
}

fn task_id(tool: &str, args: &Map<String, Value>) -> Result<TaskId, RpcError> {
    match args.get("taskId").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => Ok(TaskId::from_string(id)),
        _ => Err(RpcError::invalid_params(format!(
            "{tool} needs \"taskId\": the id of a task, as given when the call became a task (task_list shows yours)"
        ))),
    }
}

/// A tool result: `text` for the model, `structured` for programs.
fn result(text: String, structured: Value, is_error: bool) -> Value {
    json!({
        "content": [{ "type": "text", "text": text }],
        "structuredContent": structured,
        "isError": is_error,
    })
}

/// A tool error the model can read and act on.
fn tool_error(text: String) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}

/// The answer for an id the caller may not see: the same for unknown, expired and
/// someone else's tasks, so an id reveals nothing.
fn not_found(id: &TaskId) -> Value {
    tool_error(format!(
        "no task '{id}' here: the id is unknown, the task expired, or it is not yours. task_list shows your tasks."
    ))
}

/// A task's status as a tool result, with `lead` in front of the summary.
fn status_result(server: &Shared, record: &mcp_tasks_engine::TaskRecord, lead: &str) -> Value {
    let structured = status_json(server.engine(), record);
    let mut text = format!(
        "{lead}\nTask {}: {}",
        record.id,
        structured["status"].as_str().unwrap_or("?")
    );
    if let Some(m) = record.status_message.as_deref() {
        text.push_str(&format!(" ({m})"));
    }
    if let Some(questions) = structured["questions"].as_array() {
        for q in questions {
            text.push_str(&format!(
                "\nOpen question '{}': {} Form: {}",
                q["key"].as_str().unwrap_or(""),
                q["message"].as_str().unwrap_or(""),
                q.get("requestedSchema")
                    .map_or_else(|| "(none)".to_string(), Value::to_string),
            ));
        }
        if !questions.is_empty() {
            text.push_str(&format!("\nAsk the user, then call task_answer with {{\"taskId\": \"{}\", \"answers\": {{\"<key>\": {{<the form's fields>}}}}}}.", record.id));
        }
    }
    if let Some(link) = crate::calls::plain::board_link(server, &record.id) {
        text.push_str(&format!("\nTask board: {link}"));
    }
    result(text, structured, false)
}

/// Maps an engine error of a task tool to its answer.
fn engine_error(id: &TaskId, e: EngineError) -> Result<Value, RpcError> {
    match e {
        EngineError::NotFound => Ok(not_found(id)),
        EngineError::AlreadyTerminal(status) => Ok(tool_error(format!(
            "task '{id}' is already {status}; a finished task cannot be changed. task_wait returns its result."
        ))),
        EngineError::InvalidInput(problem) | EngineError::NotAllowed(problem) => {
            Ok(tool_error(problem))
        }
        other => Err(crate::error_map::to_rpc(other)),
    }
}

async fn wait(
    server: &Shared,
    link: &CallLink,
    caller: &Caller,
    id: &TaskId,
    args: &Map<String, Value>,
) -> Option<Result<Value, RpcError>> {
    let cap = wait_cap(server);
    let wanted = match args.get("seconds") {
        None | Some(Value::Null) => cap,
        Some(v) => match v.as_f64().filter(|s| s.is_finite() && *s >= 0.0) {
            Some(s) => Duration::from_secs_f64(s).min(cap),
            None => {
                return Some(Err(RpcError::invalid_params(format!(
                    "task_wait: \"seconds\" must be a number of seconds from 0 to {}",
                    cap.as_secs_f64()
                ))))
            }
        },
    };
    let deadline = Instant::now() + wanted;
    let events = server.engine().subscribe();
    let _attached = crate::calls::plain::attach(server, link, id);
    Some(
        match follow(server, link, id, caller, deadline, events).await {
            Followed::Ended(record) => Ok(ended(server, &record)),
            Followed::Waiting(record, why) => {
                let lead = match why {
                    Waiting::OutOfTime => format!(
                        "Still running after waiting {}: call task_wait again to keep waiting.",
                        humantime::format_duration(Duration::from_secs(wanted.as_secs()))
                    ),
                    Waiting::ForAnswer => {
                        "The task waits for an answer to its question.".to_string()
                    }
                };
                Ok(status_result(server, &record, &lead))
            }
            Followed::Cancelled(_) => return None,
            Followed::Failed(e) => engine_error(id, e),
        },
    )
}

/// The answer of `task_wait` for a task that ended: the tool's own result when it
/// completed, else what went wrong.
fn ended(server: &Shared, record: &mcp_tasks_engine::TaskRecord) -> Value {
    let related = mcp_tasks_protocol::codec::v2025_11_25::related_task(record.id.as_str());
    match record.outcome.as_deref() {
        Some(Outcome::Result { value }) => {
            let mut value = value.clone();
            if let Some(o) = value.as_object_mut() {
                let meta = o.entry("_meta").or_insert_with(|| json!({}));
                if let (Some(meta), Some(related)) = (meta.as_object_mut(), related.as_object()) {
                    meta.extend(related.clone());
                }
            }
            value
        }
        Some(failed) => {
            let message = crate::error_map::outcome_error(failed)
                .map(|e| e.message)
                .unwrap_or_default();
            let what = if record.status == TaskStatus::Cancelled {
                "was cancelled"
            } else {
                "failed"
            };
            let mut v = status_result(
                server,
                record,
                &format!("Task {} {what}: {message}", record.id),
            );
            v["isError"] = json!(true);
            v
        }
        None => status_result(server, record, "The task ended without an outcome."),
    }
}

async fn status(server: &Shared, caller: &Caller, id: &TaskId) -> Result<Value, RpcError> {
    match server.engine().get(id, caller).await {
        Ok(record) => {
            let lead = if record.status.is_terminal() {
                "The task has ended; task_wait returns its result."
            } else {
                "The task is still running; task_wait waits for its result."
            };
            Ok(status_result(server, &record, lead))
        }
        Err(e) => engine_error(id, e),
    }
}

async fn answer(
    server: &Shared,
    caller: &Caller,
    id: &TaskId,
    args: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let Some(answers) = args.get("answers").and_then(Value::as_object) else {
        return Err(RpcError::invalid_params(
            "task_answer needs \"answers\": an object from each open question's key (task_status shows them) to the form's values",
        ));
    };
    let engine = server.engine();
    let record = match engine.get(id, caller).await {
        Ok(r) => r,
        Err(e) => return engine_error(id, e),
    };
    let open: Vec<&String> = record
        .input_requests
        .iter()
        .filter(|(_, q)| q.is_outstanding())
        .map(|(k, _)| k)
        .collect();
    let mut done = Vec::new();
    let mut problems = Vec::new();
    for (key, given) in answers {
        let Some(question) = record
            .input_requests
            .get(key)
            .filter(|q| q.is_outstanding())
        else {
            problems.push(format!(
                "'{key}' is not an open question of this task (open: {})",
                if open.is_empty() {
                    "none".to_string()
                } else {
                    open.iter()
                        .map(|k| format!("'{k}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ));
            continue;
        };
        let value = as_answer(&question.method, given);
        match engine
            .answer_input(id, key, Outcome::Result { value }, caller)
            .await
        {
            Ok(true) => done.push(format!("'{key}'")),
            Ok(false) => problems.push(format!("'{key}' was answered already")),
            Err(EngineError::InvalidInput(problem) | EngineError::NotAllowed(problem)) => {
                problems.push(format!("the answer to '{key}' was refused: {problem}"))
            }
            Err(e) => return engine_error(id, e),
        }
    }
    let record = engine.get(id, caller).await.unwrap_or(record);
    let lead = if done.is_empty() {
        format!("Nothing was answered: {}.", problems.join("; "))
    } else if problems.is_empty() {
        format!(
            "Answered {}. Call task_wait to wait for the result.",
            done.join(", ")
        )
    } else {
        format!(
            "Answered {}; not answered: {}.",
            done.join(", "),
            problems.join("; ")
        )
    };
    let mut v = status_result(server, &record, &lead);
    v["isError"] = json!(!problems.is_empty());
    Ok(v)
}

/// A model's answer to a question of `method` as the client's answer would be: an
/// elicitation answer without an `action` is the form's values, accepted.
fn as_answer(method: &str, given: &Value) -> Value {
    if method == mcp_tasks_protocol::methods::ELICITATION_CREATE
        && given.get("action").and_then(Value::as_str).is_none()
    {
        return json!({ "action": "accept", "content": given });
    }
    given.clone()
}

async fn cancel(server: &Shared, caller: &Caller, id: &TaskId) -> Result<Value, RpcError> {
    match server.engine().cancel(id, caller).await {
        Ok(record) => Ok(status_result(server, &record, "The task is cancelled.")),
        Err(e) => engine_error(id, e),
    }
}

async fn list(
    server: &Shared,
    caller: &Caller,
    args: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let status = match args.get("status") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_str().and_then(parse_status) {
            Some(s) => Some(s),
            None => {
                return Err(RpcError::invalid_params(
                    "task_list: \"status\" must be one of working, input_required, completed, failed, cancelled",
                ))
            }
        },
    };
    if !caller.authenticated && caller.session.is_none() {
        return Ok(tool_error(
            "task_list needs a session or an authenticated caller: anonymous requests on the stateless wire share no owner, so their tasks are found by id only (keep the ids handles give)".to_string(),
        ));
    }
    let page = server
        .engine()
        .query_tasks(
            caller,
            &TaskFilter {
                status,
                limit: LIST_LIMIT,
                ..Default::default()
            },
        )
        .await
        .map_err(crate::error_map::to_rpc)?;
    let tasks: Vec<Value> = page
        .tasks
        .iter()
        .map(|r| status_json(server.engine(), r))
        .collect();
    let mut text = if tasks.is_empty() {
        "You have no tasks here.".to_string()
    } else {
        format!("Your {} most recent task(s), newest first:", tasks.len())
    };
    for t in &tasks {
        text.push_str(&format!(
            "\n- {} · {} · {} · started {}{}",
            t["taskId"].as_str().unwrap_or(""),
            t["status"].as_str().unwrap_or(""),
            t["tool"].as_str().unwrap_or("?"),
            t["createdAt"].as_str().unwrap_or(""),
            t["statusMessage"]
                .as_str()
                .map(|m| format!(" · {m}"))
                .unwrap_or_default(),
        ));
    }
    Ok(result(text, json!({ "tasks": tasks }), false))
}

fn parse_status(s: &str) -> Option<TaskStatus> {
    Some(match s {
        "working" => TaskStatus::Working,
        "input_required" => TaskStatus::InputRequired,
        "completed" => TaskStatus::Completed,
        "failed" => TaskStatus::Failed,
        "cancelled" => TaskStatus::Cancelled,
        _ => return None,
    })
}
