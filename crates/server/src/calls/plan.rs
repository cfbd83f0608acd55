//! What a `tools/call` becomes: the one decision, for both wires. [`plan`] finds the
//! tool, checks its arguments, puts it behind its approval gate, reads its preflight
//! answers, and returns one [`CallPlan`]; each wire's `tools_call.rs` carries the plan
//! out and renders its answer in that wire's shapes. The predicates the decision rests
//! on ([`server_decides`], [`runs_under_budget`], [`held_by_task`],
//! [`task_tools_offered`]) are written here once.

use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::error_code::METHOD_NOT_FOUND;
use mcp_tasks_protocol::methods::{self as m, parse_params, CallToolParams, TOOLS_CALL};
use mcp_tasks_protocol::RpcError;
use serde_json::{json, Map, Value};
use std::time::Duration;

use mcp_tasks_engine::Caller;

use crate::calls::call::Answers;
use crate::calls::task_tools;
use crate::config::ServerConfig;
use crate::error_map::missing_extension;
use crate::shared::Shared;
use crate::tools::registry::{TaskSupport, Tool, ToolRegistry};

/// The arguments of a `tools/call`.
pub(crate) type Args = Map<String, Value>;

/// Which wire a call came on, and what its client declared there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// 2025-11-25, in a session.
    Session {
        /// The session negotiated a version with tasks (`params.task` is read).
        speaks_tasks: bool,
        /// The client declared `capabilities.tasks` at initialize.
        declares_tasks: bool,
    },
    /// 2026-07-28, stateless.
    Stateless {
        /// The request declared the Tasks extension in its `_meta`.
        extension: bool,
    },
}

/// What a `tools/call` becomes. Every variant but [`CallPlan::TaskTool`] and
/// [`CallPlan::InputRequired`] carries the tool, already behind its approval gate, and
/// its checked arguments.
pub(crate) enum CallPlan {
    /// One of the task tools (`task_wait`, `task_status`, ...), for a client offered
    /// them.
    TaskTool {
        /// Which one.
        name: String,
        /// Its arguments.
        args: Args,
    },
    /// 2026-07-28: the input-required round of a plain call whose tool asked mid-call
    /// comes back with the answers and the `requestState` naming the call's task.
    ResumeRound {
        /// The tool.
        tool: Tool,
        /// Its arguments.
        args: Args,
        /// The `requestState` as sent.
        state: Value,
        /// Whether the client is offered the task tools (the handle's wording).
        task_tools: bool,
    },
    /// 2026-07-28 (MRTR): preflight questions are still unanswered; they are asked
    /// (an `InputRequiredResult`) and nothing is created.
    InputRequired {
        /// The open questions by key, as `{method, params}`.
        missing: Args,
    },
    /// 2025-11-25: the client asked for a task (`params.task`); it is created now and
    /// asks its preflight questions inside it.
    Task {
        /// The tool.
        tool: Tool,
        /// Its arguments.
        args: Args,
        /// The TTL the client asked for.
        ttl: Option<Duration>,
    },
    /// 2026-07-28 with the extension: the server decides. The task is created unless
    /// the work ends within `window` (zero: the task at once), and then the result is
    /// the answer.
    TaskOrResult {
        /// The tool.
        tool: Tool,
        /// Its arguments.
        args: Args,
        /// The preflight answers the request carried.
        answers: Args,
        /// How long the call waits before its task is created.
        window: Duration,
    },
    /// A plain call under the sync budget: a task from the start, answered with its
    /// result when it ends in time, else with a handle (see `calls::plain`).
    SyncBudget {
        /// The tool.
        tool: Tool,
        /// Its arguments.
        args: Args,
        /// Its preflight answers: given in the request (2026-07-28), or asked inside
        /// the task (2025-11-25).
        answers: Answers,
        /// Whether the client is offered the task tools (the handle's wording).
        task_tools: bool,
    },
    /// No task holds the call: the tool runs inline (2025-11-25: its questions go on
    /// the call's stream; 2026-07-28: an inline input-required round).
    Inline {
        /// The tool.
        tool: Tool,
        /// Its arguments.
        args: Args,
        /// The preflight answers the request carried (none on 2025-11-25).
        answers: Args,
    },
}

/// The tool called `name`, or the error every wire answers for an unknown one.
///
/// # Errors
/// `-32602` naming the tool and saying where the list of tools is.
pub(crate) fn find(tools: &ToolRegistry, name: &str) -> Result<Tool, RpcError> {
    tools.get(name).cloned().ok_or_else(|| {
        RpcError::invalid_params(format!(
            "unknown tool '{name}': call tools/list to see the tools this server offers"
        ))
    })
}

/// Decides what the `tools/call` with `params` on `wire` by `caller` becomes. The one
/// place that does: find the tool, check its task support and arguments, authorize it
/// (Cedar policies) and put it behind its approval gate, read its preflight answers,
/// choose. A call held by an approval policy gets the policy's id in `params`' `_meta`
/// (stored with its task).
///
/// # Errors
/// `-32030` for a call the policies refuse, naming the deciding policies.
/// What the caller must fix, in each wire's terms: `-32602` for an unknown tool,
/// invalid arguments or a refused preflight answer; on 2025-11-25 `-32601` for a
/// `required` tool called without `task` or a `forbidden` one with it; on
/// 2026-07-28 `-32021` for a `required` tool without the extension.
pub(crate) fn plan(
    shared: &Shared,
    wire: Wire,
    caller: &Caller,
    params: &mut Value,
) -> Result<CallPlan, RpcError> {
    match wire {
        Wire::Session {
            speaks_tasks,
            declares_tasks,
        } => plan_session(shared, speaks_tasks, declares_tasks, caller, params),
        Wire::Stateless { extension } => plan_stateless(shared, extension, caller, params),
    }
}

/// Whether the client is offered the task tools: under `auto`, when it speaks no
/// tasks (2025-11-25: no `capabilities.tasks`, or a version before tasks; 2026-07-28:
/// no extension).
pub(crate) fn task_tools_offered(config: &ServerConfig, wire: Wire) -> bool {
    let speaks = match wire {
        Wire::Session {
            speaks_tasks,
            declares_tasks,
        } => speaks_tasks && declares_tasks,
        Wire::Stateless { extension } => extension,
    };
    task_tools::offered(config.task_tools, speaks)
}

/// Whether the server decides, for a client that declared the extension, to make the
/// call a task ([`CallPlan::TaskOrResult`]).
pub(crate) fn server_decides(extension: bool, tool: &Tool) -> bool {
    extension && (tool.support() != TaskSupport::Forbidden || tool.needs_task())
}

/// Whether a plain call runs as a task of its caller's under the sync budget: a call
/// that waits for approval always (a zero budget answers with the handle at once), an
/// `optional` task tool when the budget is on. External tools never (their work runs
/// elsewhere; a plain call of one runs inline).
pub(crate) fn runs_under_budget(config: &ServerConfig, tool: &Tool) -> bool {
    !tool.is_external()
        && (tool.needs_task()
            || (!config.sync_budget.is_zero() && tool.support() == TaskSupport::Optional))
}

/// Whether a task holds the call's work on the extension wire (so a `requestState`
/// names it), rather than the request alone.
pub(crate) fn held_by_task(config: &ServerConfig, extension: bool, tool: &Tool) -> bool {
    server_decides(extension, tool) || runs_under_budget(config, tool)
}

/// The 2025-11-25 decision.
fn plan_session(
    shared: &Shared,
    speaks_tasks: bool,
    declares_tasks: bool,
    caller: &Caller,
    params: &mut Value,
) -> Result<CallPlan, RpcError> {
    let config = shared.config();
    let wire = Wire::Session {
        speaks_tasks,
        declares_tasks,
    };
    // A task tool is recognised by its name before anything else is read.
    if let Some(name) = params
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| task_tools::is_task_tool(n))
    {
        if task_tools_offered(config, wire) {
            let args = params
                .get("arguments")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            return Ok(CallPlan::TaskTool {
                name: name.to_string(),
                args,
            });
        }
    }
    let p: CallToolParams = parse_params(TOOLS_CALL, params)?;
    let tool = find(&shared.tools(), &p.name)?;
    let task = if speaks_tasks {
        v2025_11_25::task_metadata(params)?
    } else {
        None
    };
    match (tool.support(), &task) {
        (TaskSupport::Required, None) => {
            let how = if speaks_tasks {
                "add \"task\": {} to the tools/call params"
            } else {
                "it needs protocol version 2025-11-25 or later"
            };
            return Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("tool '{}' can only run as a task (execution.taskSupport is \"required\"): {how}", p.name),
            ));
        }
        (TaskSupport::Forbidden, Some(_)) => {
            return Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!(
                    "tool '{}' cannot run as a task (execution.taskSupport is \"forbidden\"): call it without \"task\"",
                    p.name
                ),
            ))
        }
        _ => {}
    }
    let args = p.arguments.unwrap_or_default();
    tool.validate(&Value::Object(args.clone()))?;
    let tool = config.approvals.admit(tool, &args, caller, params)?;
    Ok(match task {
        Some(meta) => CallPlan::Task {
            tool,
            args,
            ttl: meta.ttl(),
        },
        None if runs_under_budget(config, &tool) => CallPlan::SyncBudget {
            tool,
            args,
            answers: Answers::AskInTask,
            task_tools: task_tools_offered(config, wire),
        },
        None => CallPlan::Inline {
            tool,
            args,
            answers: Map::new(),
        },
    })
}

/// The 2026-07-28 decision.
fn plan_stateless(
    shared: &Shared,
    extension: bool,
    caller: &Caller,
    params: &mut Value,
) -> Result<CallPlan, RpcError> {
    let config = shared.config();
    let p: CallToolParams = parse_params(TOOLS_CALL, params)?;
    let task_tools = task_tools_offered(config, Wire::Stateless { extension });
    if task_tools && task_tools::is_task_tool(&p.name) {
        return Ok(CallPlan::TaskTool {
            name: p.name,
            args: p.arguments.unwrap_or_default(),
        });
    }
    let tool = find(&shared.tools(), &p.name)?;
    if tool.support() == TaskSupport::Required && !extension {
        return Err(missing_extension(&format!("tool '{}'", p.name)));
    }
    let args = p.arguments.unwrap_or_default();
    tool.validate(&Value::Object(args.clone()))?;
    let tool = config.approvals.admit(tool, &args, caller, params)?;
    let params = &*params;

    // The input-required round of a plain call whose tool asked mid-call: the call
    // comes back with the answers and the state naming its task (a call no task holds
    // carries its answers in the state instead: an inline round).
    if let Some(state) = params
        .get("requestState")
        .filter(|s| !s.is_null() && held_by_task(config, extension, &tool))
    {
        return Ok(CallPlan::ResumeRound {
            tool,
            args,
            state: state.clone(),
            task_tools,
        });
    }

    // MRTR: the preflight questions must all be answered (in `inputResponses`) before
    // anything runs; otherwise ask the ones still open and create nothing.
    let (answers, missing) = preflight_answers(&tool, params)?;
    if !missing.is_empty() {
        return Ok(CallPlan::InputRequired { missing });
    }

    if server_decides(extension, &tool) {
        // The server decides: a `required` tool always becomes a task; an `optional`
        // one only when it is still running after the configured window, and no wait
        // for a tool whose calls are known to run long.
        let window = match tool.support() {
            TaskSupport::Required => Duration::ZERO,
            _ => shared.task_window(&tool, Duration::MAX),
        };
        return Ok(CallPlan::TaskOrResult {
            tool,
            args,
            answers,
            window,
        });
    }
    if runs_under_budget(config, &tool) {
        return Ok(CallPlan::SyncBudget {
            tool,
            args,
            answers: Answers::Given(answers),
            task_tools,
        });
    }
    Ok(CallPlan::Inline {
        tool,
        args,
        answers,
    })
}

/// The tool's preflight questions against the request's `inputResponses`: the answers
/// given (each checked before anything runs: a wrong one is the caller's to fix, and
/// nothing was created that it could leave behind), and the questions still open.
fn preflight_answers(tool: &Tool, params: &Value) -> Result<(Args, Args), RpcError> {
    let responses = params.get("inputResponses").and_then(Value::as_object);
    let mut answers = Map::new();
    let mut missing = Map::new();
    for q in tool.preflight() {
        match responses.and_then(|r| r.get(&q.key)) {
            Some(a) => {
                crate::answers::check_answer(m::ELICITATION_CREATE, &q.elicit_params(), a)
                    .map_err(|problem| {
                        RpcError::invalid_params(format!(
                            "the answer to '{}' in inputResponses was refused: {problem}; send the call again with a corrected answer",
                            q.key
                        ))
                    })?;
                answers.insert(q.key.clone(), a.clone());
            }
            None => {
                missing.insert(
                    q.key.clone(),
                    json!({ "method": m::ELICITATION_CREATE, "params": q.elicit_params() }),
                );
            }
        }
    }
    Ok((answers, missing))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approvals::{ApprovalRule, Approvals};
    use crate::Server;
    use mcp_tasks_protocol::TaskSupport;

    fn tool(name: &str, support: TaskSupport) -> Tool {
        Tool::new(
            name,
            "test tool",
            json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            |_args, _ctx| Box::pin(async { Ok(json!({"content": []})) }),
        )
        .unwrap()
        .task_support(support)
    }

    /// A server with an `optional`, a `required` and a `forbidden` tool, one with a
    /// preflight question, and `gated` behind an approval rule.
    async fn server(config: ServerConfig) -> Server {
        let confirm = tool("confirm", TaskSupport::Optional).ask_first(
            "ok",
            "Go on?",
            json!({"type": "object", "properties": {"yes": {"type": "boolean"}}}),
        );
        Server::builder()
            .tools([
                tool("optional", TaskSupport::Optional),
                tool("required", TaskSupport::Required),
                tool("forbidden", TaskSupport::Forbidden),
                tool("gated", TaskSupport::Forbidden),
                confirm,
            ])
            .server_config(config)
            .build()
            .await
            .unwrap()
    }

    fn gated() -> ServerConfig {
        let rule: ApprovalRule = toml::from_str("tool = \"gated\"\napprovers = [\"ops\"]").unwrap();
        ServerConfig {
            approvals: Approvals::new(vec![rule], Default::default()).unwrap(),
            ..ServerConfig::default()
        }
    }

    const TASKS_2025: Wire = Wire::Session {
        speaks_tasks: true,
        declares_tasks: true,
    };
    const PLAIN_2025: Wire = Wire::Session {
        speaks_tasks: true,
        declares_tasks: false,
    };
    const EXTENSION: Wire = Wire::Stateless { extension: true };
    const STATELESS: Wire = Wire::Stateless { extension: false };

    fn decide(server: &Server, wire: Wire, mut params: Value) -> Result<CallPlan, RpcError> {
        plan(
            server.as_ref(),
            wire,
            &Caller::anonymous("test", None),
            &mut params,
        )
    }

    fn name_of(plan: &CallPlan) -> &'static str {
        match plan {
            CallPlan::TaskTool { .. } => "task tool",
            CallPlan::ResumeRound { .. } => "resume round",
            CallPlan::InputRequired { .. } => "input required",
            CallPlan::Task { .. } => "task",
            CallPlan::TaskOrResult { .. } => "task or result",
            CallPlan::SyncBudget { .. } => "sync budget",
            CallPlan::Inline { .. } => "inline",
        }
    }

    fn planned(server: &Server, wire: Wire, params: Value) -> &'static str {
        name_of(&decide(server, wire, params).unwrap())
    }

    #[tokio::test]
    async fn the_2025_wire_plans_a_task_when_asked_else_the_budget_or_inline() {
        let s = server(ServerConfig::default()).await;
        let call = |name: &str| json!({"name": name, "arguments": {"n": 1}});
        let with_task = |name: &str| json!({"name": name, "arguments": {}, "task": {"ttl": 5000}});
        match decide(&s, TASKS_2025, with_task("optional")).unwrap() {
            CallPlan::Task { ttl, .. } => assert_eq!(ttl, Some(Duration::from_secs(5))),
            other => panic!("planned {}", name_of(&other)),
        }
        assert_eq!(planned(&s, TASKS_2025, with_task("required")), "task");
        assert_eq!(planned(&s, TASKS_2025, call("optional")), "sync budget");
        assert_eq!(planned(&s, TASKS_2025, call("forbidden")), "inline");
        let required = decide(&s, TASKS_2025, call("required")).err().unwrap();
        assert_eq!(required.code, METHOD_NOT_FOUND);
        let forbidden = decide(&s, TASKS_2025, with_task("forbidden"))
            .err()
            .unwrap();
        assert_eq!(forbidden.code, METHOD_NOT_FOUND);
        // A session before tasks never reads `task`: a required tool cannot run.
        let old = Wire::Session {
            speaks_tasks: false,
            declares_tasks: false,
        };
        assert_eq!(planned(&s, old, with_task("forbidden")), "inline");
        assert!(decide(&s, old, call("required")).is_err());
    }

    #[tokio::test]
    async fn a_zero_budget_runs_plain_calls_inline_but_never_an_approval() {
        let s = server(ServerConfig {
            sync_budget: Duration::ZERO,
            ..gated()
        })
        .await;
        let call = |name: &str| json!({"name": name, "arguments": {}});
        assert_eq!(planned(&s, TASKS_2025, call("optional")), "inline");
        assert_eq!(planned(&s, STATELESS, call("optional")), "inline");
        // A call waiting for approval is held by a task whatever the budget.
        assert_eq!(planned(&s, TASKS_2025, call("gated")), "sync budget");
        assert_eq!(planned(&s, STATELESS, call("gated")), "sync budget");
        assert_eq!(planned(&s, EXTENSION, call("gated")), "task or result");
    }

    #[tokio::test]
    async fn task_tools_are_planned_only_for_clients_offered_them() {
        let s = server(ServerConfig::default()).await;
        let wait = json!({"name": "task_wait", "arguments": {"taskId": "t"}});
        assert_eq!(planned(&s, PLAIN_2025, wait.clone()), "task tool");
        assert_eq!(planned(&s, STATELESS, wait.clone()), "task tool");
        // Clients that speak tasks are not offered them: the name is an unknown tool.
        assert!(decide(&s, TASKS_2025, wait.clone()).is_err());
        assert!(decide(&s, EXTENSION, wait).is_err());
    }

    #[tokio::test]
    async fn the_extension_wire_lets_the_server_decide_with_a_window() {
        let s = server(ServerConfig::default()).await;
        let call = |name: &str| json!({"name": name, "arguments": {}});
        match decide(&s, EXTENSION, call("optional")).unwrap() {
            CallPlan::TaskOrResult { window, .. } => {
                assert_eq!(window, ServerConfig::default().task_after)
            }
            other => panic!("planned {}", name_of(&other)),
        }
        match decide(&s, EXTENSION, call("required")).unwrap() {
            CallPlan::TaskOrResult { window, .. } => assert_eq!(window, Duration::ZERO),
            other => panic!("planned {}", name_of(&other)),
        }
        assert_eq!(planned(&s, EXTENSION, call("forbidden")), "inline");
        assert_eq!(planned(&s, STATELESS, call("optional")), "sync budget");
        assert_eq!(planned(&s, STATELESS, call("forbidden")), "inline");
        let required = decide(&s, STATELESS, call("required")).err().unwrap();
        assert_eq!(
            required.code,
            mcp_tasks_protocol::error_code::MISSING_CAPABILITY
        );
    }

    #[tokio::test]
    async fn preflight_questions_are_asked_before_anything_and_answers_checked() {
        let s = server(ServerConfig::default()).await;
        match decide(&s, EXTENSION, json!({"name": "confirm"})).unwrap() {
            CallPlan::InputRequired { missing } => {
                assert_eq!(missing["ok"]["method"], m::ELICITATION_CREATE)
            }
            other => panic!("planned {}", name_of(&other)),
        }
        let answered = json!({"name": "confirm", "inputResponses": {
            "ok": {"action": "accept", "content": {"yes": true}}
        }});
        match decide(&s, EXTENSION, answered).unwrap() {
            CallPlan::TaskOrResult { answers, .. } => assert!(answers.contains_key("ok")),
            other => panic!("planned {}", name_of(&other)),
        }
        let wrong = json!({"name": "confirm", "inputResponses": {
            "ok": {"action": "accept", "content": {"yes": "maybe"}}
        }});
        let refused = decide(&s, EXTENSION, wrong).err().unwrap();
        assert!(
            refused.message.contains("inputResponses"),
            "{}",
            refused.message
        );
    }

    #[tokio::test]
    async fn a_request_state_resumes_only_a_call_a_task_holds() {
        let s = server(ServerConfig::default()).await;
        let with_state =
            |name: &str| json!({"name": name, "arguments": {}, "requestState": "sealed"});
        assert_eq!(
            planned(&s, STATELESS, with_state("optional")),
            "resume round"
        );
        assert_eq!(
            planned(&s, EXTENSION, with_state("optional")),
            "resume round"
        );
        // No task holds an inline call: its state is read by the inline round.
        assert_eq!(planned(&s, STATELESS, with_state("forbidden")), "inline");
    }

    #[tokio::test]
    async fn unknown_tools_and_bad_arguments_are_refused_on_both_wires() {
        let s = server(ServerConfig::default()).await;
        for wire in [TASKS_2025, PLAIN_2025, EXTENSION, STATELESS] {
            let unknown = decide(&s, wire, json!({"name": "nope"})).err().unwrap();
            assert!(
                unknown.message.contains("unknown tool"),
                "{}",
                unknown.message
            );
            let bad = json!({"name": "optional", "arguments": {"n": "one"}});
            assert!(decide(&s, wire, bad).is_err());
        }
    }
}
