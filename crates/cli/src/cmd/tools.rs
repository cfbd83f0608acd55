//! `mcp-tasks tools`: the server's tools and whether each runs as a task.
//!
//! What "runs as a task" means depends on the wire. On 2025-11-25 the tool declares it
//! (`execution.taskSupport`: `required`, `optional`, or `forbidden`, the default when
//! absent) and the client chooses within that. On the Tasks extension (2026-07-28) the
//! server decides per call whether a call becomes a task; a declaration, if the server
//! sends one, is only a hint. So the listing says "server decides" there instead of
//! reading an absent declaration as `forbidden` (a call of such a tool may well come
//! back as a task).

use console::style;
use mcp_tasks_client::{ToolInfo, Wire};
use serde_json::{json, Value};

use super::args::ServerArgs;
use super::exit::{fail, EXIT_OK};
use super::output::out;

/// Runs `tools`; returns the exit status.
pub async fn run(a: ServerArgs) -> u8 {
    a.run("tools", |client, _target, json| async move {
        let wire = client.wire();
        match client.tools().await {
            Ok(tools) if json => {
                let list: Vec<Value> = tools
                    .iter()
                    .map(|t| {
                        json!({
                            "name": t.name,
                            "title": t.title,
                            "description": t.description,
                            "taskSupport": declared(t).unwrap_or(match wire {
                                Wire::V2025_11_25 => t.task_support.as_str(),
                                _ => "",
                            }),
                            "tasks": tasks_column(wire, t),
                            "inputSchema": t.input_schema,
                        })
                    })
                    .map(|mut v| {
                        if v["taskSupport"] == "" {
                            v["taskSupport"] = Value::Null;
                        }
                        v
                    })
                    .collect();
                out(Value::Array(list));
                EXIT_OK
            }
            Ok(tools) => {
                let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
                let column = tools
                    .iter()
                    .map(|t| tasks_column(wire, t).len())
                    .max()
                    .unwrap_or(0)
                    .max("TASKS".len());
                out(format!(
                    "{:<width$}  {:<column$}  DESCRIPTION",
                    "TOOL", "TASKS"
                ));
                for t in &tools {
                    out(format!(
                        "{:<width$}  {:<column$}  {}",
                        style(&t.name).bold(),
                        tasks_column(wire, t),
                        t.description
                            .as_deref()
                            .unwrap_or("")
                            .lines()
                            .next()
                            .unwrap_or(""),
                    ));
                }
                out(style(legend(wire)).dim().to_string());
                EXIT_OK
            }
            Err(e) => fail("listing tools", &e),
        }
    })
    .await
}

/// The tool's own `execution.taskSupport`, when it sends one.
fn declared(t: &ToolInfo) -> Option<&str> {
    t.definition
        .get("execution")
        .and_then(|e| e.get("taskSupport"))
        .and_then(Value::as_str)
}

/// What the TASKS column says for a tool on this wire.
fn tasks_column(wire: Wire, t: &ToolInfo) -> String {
    match wire {
        Wire::V2025_11_25 => t.task_support.as_str().to_string(),
        _ => match declared(t) {
            Some(hint) => format!("server decides (declares {hint})"),
            None => "server decides".to_string(),
        },
    }
}

/// One line under the table that says what the column means on this wire.
fn legend(wire: Wire) -> &'static str {
    match wire {
        Wire::V2025_11_25 => {
            "wire 2025-11-25: required = always a task, optional = a task when asked \
             (mcp-tasks call asks), forbidden = never a task"
        }
        _ => {
            "wire 2026-07-28 (Tasks extension): the server decides per call whether a call \
             becomes a task; mcp-tasks call follows it either way"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(v: Value) -> ToolInfo {
        ToolInfo::from_definition(&v).expect("tool")
    }

    #[test]
    fn each_wire_says_what_it_means() {
        let bare = tool(json!({"name": "echo", "inputSchema": {}}));
        let hinted = tool(json!({"name": "slow", "execution": {"taskSupport": "optional"}}));
        assert_eq!(tasks_column(Wire::V2025_11_25, &bare), "forbidden");
        assert_eq!(tasks_column(Wire::V2025_11_25, &hinted), "optional");
        assert_eq!(tasks_column(Wire::V2026_07_28, &bare), "server decides");
        assert_eq!(
            tasks_column(Wire::V2026_07_28, &hinted),
            "server decides (declares optional)"
        );
        assert!(legend(Wire::V2026_07_28).contains("server decides"));
    }
}
