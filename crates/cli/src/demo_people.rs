//! Demo tools for people: `ask_a_person` asks a yes/no question of a named person or
//! group (their inbox on the task board) with a deadline, and `deploy`, a harmless
//! stand-in for a tool an operator puts behind an `[[approval]]` rule.

use mcp_tasks_engine::{Ask, DeadlineOutcome, TaskContext};
use mcp_tasks_server::{Structured, TaskSupport, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::time::Duration;

/// The people tools.
pub fn tools() -> Vec<Tool> {
    vec![ask_a_person(), deploy()]
}

/// What happens when nobody answered `ask_a_person` by its deadline.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum OnDeadline {
    /// The question stays open, marked overdue in the person's inbox.
    #[default]
    KeepWaiting,
    /// The question counts as declined.
    Decline,
    /// The task fails.
    Fail,
}

/// Arguments of `ask_a_person`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AskArgs {
    /// The yes/no question.
    #[schemars(length(min = 1, max = 500))]
    question: String,
    /// Who answers: a principal, or a group of the server's `[groups]`.
    #[schemars(length(min = 1))]
    assignee: String,
    /// How long they have (seconds); none: as long as the task lives.
    #[schemars(range(min = 0.1, max = 2592000))]
    deadline_seconds: Option<f64>,
    /// What happens at the deadline (default: keep waiting, marked overdue).
    on_deadline: Option<OnDeadline>,
}

/// What `ask_a_person` returns.
#[derive(Debug, Serialize, JsonSchema)]
struct PersonAnswer {
    /// The answer: yes or no (no also when declined).
    yes: bool,
    /// Who answered, when a person did.
    by: Option<String>,
    /// Through which channel (board, link, slack).
    via: Option<String>,
}

fn ask_a_person() -> Tool {
    Tool::from_fn(
        "ask_a_person",
        "Asks a person or a group (not the client) a yes/no question, shown in their inbox on the task board, with an optional deadline; returns the answer and who gave it.",
        |args: AskArgs, ctx: TaskContext| async move {
            let params = json!({
                "mode": "form",
                "message": args.question,
                "requestedSchema": {
                    "type": "object",
                    "properties": { "yes": { "type": "boolean", "title": "Yes?" } },
                    "required": ["yes"]
                }
            });
            let mut ask = Ask::new().assign_to([args.assignee.clone()]);
            if let Some(seconds) = args.deadline_seconds {
                let outcome = match args.on_deadline.unwrap_or_default() {
                    OnDeadline::KeepWaiting => DeadlineOutcome::KeepWaiting,
                    OnDeadline::Decline => DeadlineOutcome::Decline,
                    OnDeadline::Fail => DeadlineOutcome::Fail,
                };
                ask = ask.deadline(Duration::from_secs_f64(seconds.clamp(0.1, 2_592_000.0)), outcome);
            }
            ctx.set_status_message(format!("waiting for {} to answer", args.assignee))
                .await;
            let answer = ctx
                .request_input_with("elicitation/create", params, ask)
                .await
                .map_err(|e| format!("ask_a_person: {e}"))?;
            let yes = answer["action"] == "accept" && answer["content"]["yes"] == true;
            let by = answer.pointer("/answeredBy/principal").and_then(Value::as_str).map(str::to_string);
            let via = answer.pointer("/answeredBy/via").and_then(Value::as_str).map(str::to_string);
            let text = match (&by, yes) {
                (Some(by), true) => format!("{by} said yes"),
                (Some(by), false) => format!("{by} said no"),
                (None, _) => "nobody answered in time: no".to_string(),
            };
            Ok::<_, String>(Structured::new(text, PersonAnswer { yes, by, via }))
        },
    )
    .task_support(TaskSupport::Optional)
}

/// Arguments of `deploy`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeployArgs {
    /// The service.
    #[schemars(length(min = 1, max = 100))]
    service: String,
    /// Where to: staging or prod.
    #[schemars(regex(pattern = "^(staging|prod)$"))]
    env: String,
}

/// What `deploy` returns.
#[derive(Debug, Serialize, JsonSchema)]
struct Deployed {
    /// The service.
    service: String,
    /// Where it went.
    env: String,
}

fn deploy() -> Tool {
    Tool::from_fn(
        "deploy",
        "Pretends to deploy a service to staging or prod (does nothing; a stand-in for a tool that needs approval). Put it behind an [[approval]] rule to try approvals.",
        |args: DeployArgs, ctx: TaskContext| async move {
            ctx.set_status_message(format!("deploying {} to {}", args.service, args.env)).await;
            let text = format!("deployed {} to {} (a demo: nothing happened)", args.service, args.env);
            Ok::<_, String>(Structured::new(
                text,
                Deployed {
                    service: args.service,
                    env: args.env,
                },
            ))
        },
    )
    .task_support(TaskSupport::Optional)
}
