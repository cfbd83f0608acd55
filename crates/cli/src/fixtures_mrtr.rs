//! The conformance suite's input-required scenarios (SEP-2322, `input-required-result-*`):
//! plain calls on the 2026-07-28 wire whose tools ask, before they run (a question asked
//! first, answered without `requestState`) or mid-call (the sync budget's task, whose
//! round carries a sealed `requestState`).

use mcp_tasks_engine::TaskContext;
use mcp_tasks_server::{ElicitAs, NoArgs, TaskSupport, Tool, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// Registers `test_input_required_result_elicitation`, `..._request_state`,
/// `..._multi_round` and `..._tampered_state`.
pub fn register(registry: &mut ToolRegistry) -> anyhow::Result<()> {
    registry.register(elicitation())?;
    registry.register(confirm("test_input_required_result_request_state"))?;
    registry.register(confirm("test_input_required_result_tampered_state"))?;
    registry.register(multi_round())?;
    Ok(())
}

/// Asks the user's name before it runs (key `user_name`), then greets them.
fn elicitation() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": { "name": { "type": "string" } },
        "required": ["name"]
    });
    Tool::from_fn(
        "test_input_required_result_elicitation",
        "Asks your name first, then greets you.",
        |_: NoArgs, ctx: TaskContext| async move {
            let name = ctx
                .answer("user_name")
                .and_then(|a| a.get("content"))
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("stranger")
                .to_string();
            Ok::<_, String>(format!("Hello, {name}!"))
        },
    )
    .ask_first("user_name", "What is your name?", schema)
    .task_support(TaskSupport::Optional)
}

/// The form of `confirm`'s question.
#[derive(Debug, Deserialize, JsonSchema)]
struct Confirmed {
    ok: bool,
}

/// Asks for a confirmation mid-call; says `state-ok` once the call came back with its
/// state and the answer.
fn confirm(name: &'static str) -> Tool {
    Tool::from_fn(
        name,
        "Asks for a confirmation mid-call (the input-required round with requestState).",
        |_: NoArgs, ctx: TaskContext| async move {
            let answer = ctx
                .elicit_as::<Confirmed>("Please confirm")
                .await
                .map_err(|e| e.to_string())?;
            let ok = answer.accepted().is_some_and(|a| a.ok);
            Ok::<_, String>(format!("state-ok: confirmed {ok}"))
        },
    )
    .task_support(TaskSupport::Optional)
}

/// Step 1's form.
#[derive(Debug, Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// Step 2's form.
#[derive(Debug, Deserialize, JsonSchema)]
struct Colour {
    color: String,
}

/// Two questions mid-call, one round each.
fn multi_round() -> Tool {
    Tool::from_fn(
        "test_input_required_result_multi_round",
        "Asks your name, then your favourite colour, one round each.",
        |_: NoArgs, ctx: TaskContext| async move {
            let name = ctx
                .elicit_as::<Name>("Step 1: What is your name?")
                .await
                .map_err(|e| e.to_string())?
                .accepted()
                .map_or_else(|| "nobody".to_string(), |n| n.name);
            let color = ctx
                .elicit_as::<Colour>("Step 2: What is your favorite color?")
                .await
                .map_err(|e| e.to_string())?
                .accepted()
                .map_or_else(|| "no colour".to_string(), |c| c.color);
            Ok::<_, String>(format!("{name} likes {color}"))
        },
    )
    .task_support(TaskSupport::Optional)
}
