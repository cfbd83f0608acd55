//! `count_to {n, delay_ms}` counts to n, a status line each step, and asks whether to
//! go on half-way; `echo` answers at once. Streamable HTTP at `/mcp`; the address is
//! the first argument (default 127.0.0.1:8080).
//!
//! Written with turul-mcp-server 0.4.5 the way its README (`#[mcp_tool]`) and its
//! `ext-tasks-server` example show: `count_to` is a task for a client that declares
//! the Tasks extension and a plain call otherwise. A question is an `InputRequired`
//! error; the tool then runs again from the top with the answer.
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use turul_mcp_derive::mcp_tool;
use turul_mcp_ext_tasks::InMemoryTaskStore;
use turul_mcp_protocol::elicitation::{
    ElicitAction, ElicitRequest, ElicitationSchema, PrimitiveSchemaDefinition,
};
use turul_mcp_protocol::input_required::{InputRequest, InputRequests, InputResponse};
use turul_mcp_server::prelude::*;

/// The half-way question, as an elicitation form with one boolean.
fn go_on_question() -> InputRequests {
    let schema = ElicitationSchema::new()
        .with_property("go_on".to_string(), PrimitiveSchemaDefinition::boolean())
        .with_required(vec!["go_on".to_string()]);
    let question = ElicitRequest::new_form("Half-way there. Go on?", schema);
    InputRequests::from([("go_on".to_string(), InputRequest::Elicit(question))])
}

#[mcp_tool(name = "count_to", description = "Counts to n.")]
async fn count_to(
    #[param(description = "Count up to this number.")] n: u64,
    #[param(description = "Pause between steps, in milliseconds.")] delay_ms: Option<u64>,
    session: Option<SessionContext>,
) -> McpResult<String> {
    let session = session.ok_or_else(|| McpError::tool_execution("count_to needs a session"))?;
    let half = n / 2;
    // After the question the tool runs again from the top, with the answer: resume
    // after the half-way step, or stop there.
    let answer = session
        .input_responses()
        .map(|responses| match responses.get("go_on") {
            Some(InputResponse::Elicit(answer))
                if matches!(answer.action, ElicitAction::Accept) =>
            {
                let go_on = answer.content.as_ref().and_then(|c| c.get("go_on"));
                go_on.and_then(|v| v.as_bool()) == Some(true)
            }
            _ => false,
        });
    let start = match answer {
        None => 1,
        Some(true) => half + 1,
        Some(false) => return Ok(format!("stopped at {half}")),
    };
    for i in start..=n {
        session
            .notify_request_progress_with_message(
                i as f64,
                Some(n as f64),
                format!("counted {i} of {n}"),
            )
            .await;
        tokio::time::sleep(Duration::from_millis(delay_ms.unwrap_or(0))).await;
        if i == half {
            return Err(McpError::InputRequired {
                input_requests: Some(go_on_question()),
                request_state: None,
            });
        }
    }
    Ok(format!("counted to {n}"))
}

#[mcp_tool(name = "echo", description = "Sends the text back.")]
async fn echo(#[param(description = "The text to send back.")] text: String) -> McpResult<String> {
    Ok(text)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or("127.0.0.1:8080".into())
        .parse()?;
    let server = McpServer::builder()
        .name("turul-count-to")
        .version("0.1.0")
        .with_ext_tasks(Arc::new(InMemoryTaskStore::new()))
        .ext_task_tool(count_to())
        .tool_fn(echo)
        .bind_address(addr)
        .build()?;
    server.run().await?;
    Ok(())
}
