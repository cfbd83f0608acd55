//! `mcp-tasks call`: call a tool, as a task when it allows one; show progress, answer
//! its questions at the terminal, print the result (or, with `--detach`, the task id).

use clap::Args;
use mcp_tasks_client::{Client, Target, TaskOptions, TaskSupport, ToolInfo, Wire};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

use super::args::{target_and_one, ConnectArgs, FollowArgs};
use super::exit::{exit_for, fail, usage, EXIT_OK};
use super::follow::{
    connect_and_follow, detached, follow, immediate, outcome, resume_command, Followed, Watching,
};
use super::terminal::Terminal;
use crate::config::parse_duration;
use crate::journal::Entry;

/// Options of `call`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 completed, 1 failed (a tool error included), \
    2 usage, 3 cancelled, 4 no connection, 130 interrupted (the task goes on).\n\
    Examples:\n  \
    mcp-tasks call slow_compute --arg seconds=30          the default server\n  \
    mcp-tasks call http://127.0.0.1:8080/mcp greet --arg name=Ada\n  \
    mcp-tasks call slow_compute --arg seconds=600 --detach   print the id, leave it running\n  \
    mcp-tasks call slow_compute --arg seconds=3 -- mcp-tasks serve --stdio --demo"
)]
pub struct CallArgs {
    /// The server's MCP URL (default: $MCP_TASKS_URL, else http://127.0.0.1:8080/mcp),
    /// or the tool to call when the URL is left out.
    #[arg(value_name = "URL|TOOL")]
    first: String,

    /// The tool to call (`mcp-tasks tools` lists them).
    #[arg(value_name = "TOOL")]
    tool: Option<String>,

    /// A stdio server to start for this call, after `--` (e.g. `-- mcp-tasks serve
    /// --stdio --demo`).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    /// One argument, `key=value`; the value is read as the tool's schema says (text,
    /// number, boolean, or JSON for objects and arrays). Repeatable.
    #[arg(long = "arg", value_name = "KEY=VALUE")]
    arg: Vec<String>,

    /// All arguments as one JSON object (`--arg` entries override its keys).
    #[arg(long = "args", value_name = "JSON")]
    args_json: Option<String>,

    /// Run as a task even if the tool does not ask for one (the default is a task
    /// whenever the tool allows it; on the Tasks extension wire, whenever the server
    /// offers the extension, since there the server decides).
    #[arg(long, conflicts_with = "no_task")]
    task: bool,

    /// Call without a task even if the tool allows one. A server with a sync budget
    /// may still make a long call a task and answer with a handle to it; the task is
    /// then followed to its end, as `watch` would.
    #[arg(long)]
    no_task: bool,

    /// How long the server should keep the task (e.g. 10m, 2h); 2025-11-25 wire only.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", conflicts_with = "no_task")]
    ttl: Option<Duration>,

    /// Print the task id and exit at once; follow it later with `mcp-tasks watch`
    /// (HTTP servers only: a stdio server stops when this command exits).
    #[arg(long, conflicts_with = "no_task")]
    detach: bool,

    #[command(flatten)]
    connect: ConnectArgs,

    #[command(flatten)]
    follow: FollowArgs,
}

/// Runs `call`; returns the exit status.
pub async fn run(a: CallArgs) -> u8 {
    let positionals: Vec<String> = std::iter::once(a.first.clone())
        .chain(a.tool.clone())
        .collect();
    let (target, tool) = match target_and_one(&positionals, &a.command, "tool name") {
        Ok(t) => t,
        Err(code) => return code,
    };
    if a.detach && matches!(target, Target::Stdio { .. }) {
        return usage(
            "--detach needs an HTTP server: a stdio server stops when this command exits, \
             and its task with it; call without --detach, or serve over HTTP",
        );
    }
    let arguments = match &a.args_json {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return usage("--args must be a JSON object"),
            Err(e) => return usage(&format!("--args is not JSON: {e}")),
        },
    };
    connect_and_follow(&target, &a.connect, &a.follow, |client, term| {
        call(client, term, &a, &target, &tool, arguments)
    })
    .await
}

async fn call(
    client: Client,
    term: Arc<Terminal>,
    a: &CallArgs,
    target: &Target,
    tool: &str,
    mut arguments: Map<String, Value>,
) -> Followed {
    let tools = match client.tools().await {
        Ok(t) => t,
        Err(e) => return Followed::done(fail("listing tools", &e)),
    };
    let Some(info) = tools.iter().find(|t| t.name == tool) else {
        return Followed::done(usage(&no_such_tool(tool, &tools)));
    };
    for kv in &a.arg {
        let Some((k, v)) = kv.split_once('=') else {
            return Followed::done(usage(&format!("--arg '{kv}' is not key=value")));
        };
        match coerce(info, k, v) {
            Ok(v) => {
                arguments.insert(k.to_string(), v);
            }
            Err(e) => return Followed::done(usage(&e)),
        }
    }
    let as_task = if a.no_task {
        false
    } else {
        a.task || a.detach || a.ttl.is_some() || offers_task(&client, info)
    };
    let args = Value::Object(arguments);
    let watching = Watching {
        json: a.connect.json,
        resume: resume_command(target, &a.connect),
        journal: a.connect.journal(target),
        board: a.follow.public_url.clone(),
        target: target.clone(),
    };
    if !as_task {
        term.status(format!("calling {tool}…"));
        // Tools that are not tasks report progress only on their own call.
        let bar = Arc::clone(&term);
        let r = client
            .call_tool_with_progress(tool, args, move |p| match p.total {
                Some(total) => bar.progress(p.progress, total, p.message),
                None => {
                    if let Some(m) = p.message {
                        bar.status(m);
                    }
                }
            })
            .await;
        term.finish();
        // A server with a sync budget answers a plain call that outlives it with a
        // handle to the task the call became: follow that task to its end, as
        // `watch` would, instead of printing the handle as the tool's answer.
        if let Some(id) = r.as_ref().ok().and_then(handle_task_id) {
            term.note(&format!(
                "{tool} outlived the server's sync budget; its work goes on as task {id}: following it"
            ));
            match client.resume(&id).await {
                Ok(handle) => return follow(&client, handle, &term, &watching).await,
                Err(e) => return Followed::done(fail(&format!("following task {id}"), &e)),
            }
        }
        return Followed::done(immediate(r, a.connect.json));
    }
    if a.ttl.is_some() && client.wire() == Wire::V2026_07_28 {
        eprintln!("note: --ttl is ignored on the Tasks extension wire (the server picks the ttl); use --wire 2025-11-25 to ask for one");
    }
    let options = TaskOptions {
        ttl: a.ttl,
        ..TaskOptions::default()
    };
    term.status(format!("starting {tool}…"));
    let handle = match client.call_tool_as_task(tool, args, options).await {
        Ok(h) => h,
        Err(e) => {
            term.finish();
            return Followed::done(fail(&format!("calling {tool}"), &e));
        }
    };
    match handle.task() {
        Some(view) => {
            let id = view.id.clone();
            if let Some(j) = &watching.journal {
                j.record(&Entry::new(view, tool, client.wire()));
            }
            if a.detach {
                term.finish();
                detached(
                    &id,
                    watching.resume.as_deref(),
                    a.connect.json,
                    client.session_id(),
                    client.wire(),
                );
                return Followed {
                    code: EXIT_OK,
                    detached: true,
                };
            }
            term.note(&match &watching.resume {
                Some(r) => format!(
                    "task {id} started; to follow it again: {}",
                    r.replace("{id}", id.as_str())
                ),
                None => format!("task {id} started"),
            });
            follow(&client, handle, &term, &watching).await
        }
        None => {
            let r = handle.result().await;
            term.finish();
            Followed::done(match r {
                Ok(o) => outcome(Ok(o), a.connect.json),
                Err(e) => exit_for(&e),
            })
        }
    }
}

/// The task a plain call's answer hands over to (the related-task `_meta` of a sync
/// budget's handle), if it is one.
fn handle_task_id(result: &Value) -> Option<mcp_tasks_client::TaskId> {
    result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
        .as_str()
        .map(mcp_tasks_client::TaskId::from_string)
}

/// The usage error for a tool the server does not have: the nearest name when one is
/// close enough to be what was meant, else the names it has.
fn no_such_tool(tool: &str, tools: &[ToolInfo]) -> String {
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    match crate::suggest::nearest(tool, names.iter().copied()) {
        Some(near) => format!(
            "the server has no tool '{tool}'; did you mean '{near}'? (`mcp-tasks tools` lists them all)"
        ),
        None if names.is_empty() => format!("the server has no tool '{tool}'; it has no tools"),
        None => format!(
            "the server has no tool '{tool}'; it has: {}",
            names.join(", ")
        ),
    }
}

/// Whether a call without `--task`/`--no-task` asks for a task. On 2025-11-25 the tool
/// says (`execution.taskSupport`). On the extension wire the server decides per call
/// which calls become tasks, and tools need not say anything (fastmcp-tasks lists none
/// of its task tools with `taskSupport`): the call declares the extension unless the
/// tool explicitly forbids tasks, and a tool the server runs at once simply returns.
fn offers_task(client: &Client, info: &ToolInfo) -> bool {
    asks_for_task(client.wire(), client.supports_tasks(), info)
}

/// [`offers_task`] for a connection on `wire` (`supports`: the server runs tasks).
fn asks_for_task(wire: Wire, supports: bool, info: &ToolInfo) -> bool {
    if !supports {
        return false;
    }
    match wire {
        Wire::V2026_07_28 => {
            info.task_support != TaskSupport::Forbidden
                || info.definition["execution"]["taskSupport"].is_null()
        }
        _ => info.task_support != TaskSupport::Forbidden,
    }
}

/// Reads `value` as the tool's schema types argument `key`.
fn coerce(tool: &ToolInfo, key: &str, value: &str) -> Result<Value, String> {
    let ty = tool.input_schema["properties"][key]["type"]
        .as_str()
        .unwrap_or("");
    let bad = |what: &str| format!("--arg {key}={value}: {what}");
    match ty {
        "string" => Ok(Value::String(value.to_string())),
        "number" => value
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| bad("expected a number")),
        "integer" => value
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| bad("expected a whole number")),
        "boolean" => match value {
            "true" | "yes" | "y" | "1" => Ok(Value::Bool(true)),
            "false" | "no" | "n" | "0" => Ok(Value::Bool(false)),
            _ => Err(bad("expected true or false")),
        },
        "object" | "array" => {
            serde_json::from_str(value).map_err(|e| bad(&format!("expected JSON: {e}")))
        }
        _ => Ok(serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(definition: serde_json::Value) -> ToolInfo {
        ToolInfo {
            name: "t".into(),
            title: None,
            description: None,
            task_support: TaskSupport::of_tool(&definition),
            input_schema: json!({}),
            definition,
        }
    }

    /// On the extension wire a tool that says nothing about tasks is still called as
    /// one (the server decides); on 2025-11-25 saying nothing means forbidden.
    #[test]
    fn the_extension_wire_leaves_the_task_to_the_server() {
        let silent = tool(json!({"name": "t"}));
        let forbids = tool(json!({"name": "t", "execution": {"taskSupport": "forbidden"}}));
        let optional = tool(json!({"name": "t", "execution": {"taskSupport": "optional"}}));
        assert!(asks_for_task(Wire::V2026_07_28, true, &silent));
        assert!(!asks_for_task(Wire::V2026_07_28, true, &forbids));
        assert!(asks_for_task(Wire::V2026_07_28, true, &optional));
        assert!(!asks_for_task(Wire::V2025_11_25, true, &silent));
        assert!(asks_for_task(Wire::V2025_11_25, true, &optional));
        assert!(!asks_for_task(Wire::V2025_11_25, false, &optional));
    }

    #[test]
    fn a_misspelt_tool_gets_the_nearest_name() {
        let tools = [
            tool(json!({"name": "slow_compute"})),
            tool(json!({"name": "greet"})),
        ];
        let mut named = tools.clone();
        named[0].name = "slow_compute".into();
        named[1].name = "greet".into();
        let e = no_such_tool("slow_compte", &named);
        assert!(e.contains("did you mean 'slow_compute'?"), "{e}");
        let e = no_such_tool("zzzz", &named);
        assert!(e.contains("it has: slow_compute, greet"), "{e}");
    }

    #[test]
    fn arguments_follow_the_schema() {
        let tool = ToolInfo {
            name: "t".into(),
            title: None,
            description: None,
            task_support: TaskSupport::Optional,
            input_schema: json!({"properties": {
                "s": {"type": "string"}, "n": {"type": "number"}, "b": {"type": "boolean"}, "o": {"type": "object"}
            }}),
            definition: json!({}),
        };
        assert_eq!(coerce(&tool, "s", "007"), Ok(json!("007")));
        assert_eq!(coerce(&tool, "n", "1.5"), Ok(json!(1.5)));
        assert!(coerce(&tool, "n", "x").is_err());
        assert_eq!(coerce(&tool, "b", "yes"), Ok(json!(true)));
        assert_eq!(coerce(&tool, "o", r#"{"a":1}"#), Ok(json!({"a": 1})));
        assert_eq!(coerce(&tool, "other", "3"), Ok(json!(3)));
        assert_eq!(coerce(&tool, "other", "hi"), Ok(json!("hi")));
    }
}
