//! `mcp-tasks tools`: the server's tools and whether each runs as a task.

use console::style;
use serde_json::{json, Value};

use super::client::{fail, ServerArgs, EXIT_OK};
use super::output::out;

/// Runs `tools`; returns the exit status.
pub async fn run(a: ServerArgs) -> u8 {
    a.run("tools", |client, _target, json| async move {
        match client.tools().await {
            Ok(tools) if json => {
                let list: Vec<Value> = tools
                    .iter()
                    .map(|t| {
                        json!({
                            "name": t.name,
                            "title": t.title,
                            "description": t.description,
                            "taskSupport": t.task_support.as_str(),
                            "inputSchema": t.input_schema,
                        })
                    })
                    .collect();
                out(Value::Array(list));
                EXIT_OK
            }
            Ok(tools) => {
                let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
                for t in &tools {
                    out(format!(
                        "{:<width$}  {:<9}  {}",
                        style(&t.name).bold(),
                        t.task_support.as_str(),
                        t.description
                            .as_deref()
                            .unwrap_or("")
                            .lines()
                            .next()
                            .unwrap_or(""),
                    ));
                }
                EXIT_OK
            }
            Err(e) => fail("listing tools", &e),
        }
    })
    .await
}
