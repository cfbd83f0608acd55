//! `--conformance-fixtures`: exactly the tools the official conformance suite's server
//! scenarios call, with the contracts they check: the Tasks-extension scenarios' tools
//! here, the 2025-11-25 tool scenarios' (`test_simple_text`, `test_sampling`,
//! `json_schema_2020_12_tool`...) in [`crate::fixtures_2025`]. Written with the public
//! typed-tool API.

use anyhow::Result;
use mcp_tasks_engine::TaskContext;
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::RpcError;
use mcp_tasks_server::{NoArgs, ProtocolError, TaskSupport, Tool, ToolRegistry};
use serde_json::{json, Value};
use std::time::Duration;

use futures::future::try_join;
use mcp_tasks_server::{ElicitAs, Structured};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Registers `greet`, `slow_compute`, `failing_job`, `protocol_error_job`,
/// `confirm_delete`, `multi_input` and `test_tool_with_task` (the Tasks scenarios'),
/// the input-required scenarios' ([`crate::fixtures_mrtr::register`]), then the
/// 2025-11-25 scenarios' tools ([`crate::fixtures_2025::register`]).
pub fn register(registry: &mut ToolRegistry) -> Result<()> {
    registry.register(crate::demo::greet())?;
    registry.register(crate::demo::slow_compute())?;
    registry.register(crate::demo::failing_job())?;
    registry.register(protocol_error_job())?;
    registry.register(crate::demo_input::confirm_delete())?;
    registry.register(multi_input())?;
    registry.register(test_tool_with_task())?;
    crate::fixtures_mrtr::register(registry)?;
    crate::fixtures_2025::register(registry)
}

/// Fails with a JSON-RPC error (not a tool error) after a short while: the task ends
/// `failed` with the error inlined.
fn protocol_error_job() -> Tool {
    Tool::from_fn(
        "protocol_error_job",
        "Fails with a JSON-RPC internal error (-32603) after half a second. Task required.",
        |_: NoArgs, ctx: TaskContext| async move {
            tokio::select! {
                _ = ctx.cancelled() => return Ok(Err::<(), _>("protocol_error_job was cancelled")),
                _ = tokio::time::sleep(Duration::from_millis(500)) => {}
            }
            Err(ProtocolError(RpcError::new(
                INTERNAL_ERROR,
                "protocol_error_job failed on purpose with a protocol error",
            )))
        },
    )
    .task_support(TaskSupport::Required)
}

/// Asks the user's name before anything runs (an MRTR round on the extension wire),
/// then runs as a task that greets them.
fn test_tool_with_task() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": { "name": { "type": "string", "title": "Your name" } },
        "required": ["name"]
    });
    Tool::from_fn(
        "test_tool_with_task",
        "Asks for your name first, then greets you from a task.",
        |_: NoArgs, ctx: TaskContext| async move {
            let name = ctx
                .answer("user_name")
                .and_then(|a| a.get("content"))
                .and_then(|c| c.get("name").or_else(|| c.get("user_name")))
                .and_then(Value::as_str)
                .unwrap_or("stranger")
                .to_string();
            tokio::select! {
                _ = ctx.cancelled() => return Err("test_tool_with_task was cancelled".to_string()),
                _ = tokio::time::sleep(Duration::from_millis(300)) => {}
            }
            Ok(format!("Hello, {name}! Your task is done."))
        },
    )
    .ask_first("user_name", "What is your name?", schema)
    .task_support(TaskSupport::Required)
}

/// The first question of the fixture `multi_input`: a name.
#[derive(Debug, Deserialize, JsonSchema)]
struct NameForm {
    #[schemars(title = "Name")]
    name: String,
}

/// The second question of the fixture `multi_input`: a confirmation.
#[derive(Debug, Deserialize, JsonSchema)]
struct ConfirmForm {
    #[schemars(title = "Confirm")]
    confirm: bool,
}

/// What the fixture `multi_input` returns.
#[derive(Debug, Serialize, JsonSchema)]
struct NameAndConfirm {
    /// The name given, if the first question was answered.
    name: Option<String>,
    /// The confirmation, if the second question was answered.
    confirm: Option<bool>,
}

/// Two questions at once, shaped as the suite's `tasks-mrtr-partial-fulfillment`
/// answers them (`{name, confirm}` to each key): a name, then a confirmation. The demo
/// server's `multi_input` asks for a colour instead, which that answer does not give,
/// and answers are checked against their form before the tool sees them.
fn multi_input() -> Tool {
    Tool::from_fn(
        "multi_input",
        "Asks two questions at once (a name and a confirmation) and reports the answers.",
        |_: NoArgs, ctx: TaskContext| async move {
            let name = ctx.elicit_as::<NameForm>("What is your name?");
            let confirm = ctx.elicit_as::<ConfirmForm>("Confirm?");
            let (name, confirm) = try_join(name, confirm)
                .await
                .map_err(|e| format!("multi_input: {e}"))?;
            let name = name.accepted().map(|f| f.name);
            let confirm = confirm.accepted().map(|f| f.confirm);
            Ok::<_, String>(Structured::new(
                format!("name {name:?}, confirm {confirm:?}"),
                NameAndConfirm { name, confirm },
            ))
        },
    )
    .task_support(TaskSupport::Optional)
}
