//! `mcp-tasks tools`: the server's tools and whether each runs as a task.

use clap::Args;
use console::style;
use serde_json::{json, Value};

use super::client::{fail, finish, target, usage, ConnectArgs, EXIT_OK};

/// Options of `tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// The server URL (omit it when the server command follows `--`).
    #[arg(value_name = "TARGET", num_args = 0..=1)]
    positionals: Vec<String>,

    /// The stdio server to spawn, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    #[command(flatten)]
    connect: ConnectArgs,
}

/// Runs `tools`; returns the exit status.
pub async fn run(a: ToolsArgs) -> u8 {
    let (target, rest) = match target(&a.positionals, &a.command) {
        Ok(t) => t,
        Err(e) => return usage(&e),
    };
    if !rest.is_empty() {
        return usage("tools takes only a target");
    }
    let client = match a.connect.builder().connect(&target).await {
        Ok(c) => c,
        Err(e) => return fail("connecting", &e),
    };
    let code = match client.tools().await {
        Ok(tools) if a.connect.json => {
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
            println!("{}", Value::Array(list));
            EXIT_OK
        }
        Ok(tools) => {
            let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
            for t in &tools {
                println!(
                    "{:<width$}  {:<9}  {}",
                    style(&t.name).bold(),
                    t.task_support.as_str(),
                    t.description
                        .as_deref()
                        .unwrap_or("")
                        .lines()
                        .next()
                        .unwrap_or(""),
                );
            }
            EXIT_OK
        }
        Err(e) => fail("listing tools", &e),
    };
    finish(client, &a.connect).await;
    code
}
