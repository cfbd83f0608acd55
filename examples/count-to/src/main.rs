//! `count_to {n, delay_ms}` counts to n, a status line each step, and asks whether to
//! go on half-way; `echo` answers at once. Streamable HTTP at `/mcp`; the address is
//! the first argument (default 127.0.0.1:8080).
use mcp_tasks::prelude::*;
use std::time::Duration;

#[derive(Deserialize, JsonSchema)]
struct CountTo {
    /// Count up to this number.
    n: u64,
    /// Pause between steps, in milliseconds.
    #[serde(default)]
    delay_ms: u64,
}

#[derive(Deserialize, JsonSchema)]
struct GoOn {
    /// Count on to the end?
    go_on: bool,
}

async fn count_to(args: CountTo, ctx: TaskContext) -> Result<String, String> {
    for i in 1..=args.n {
        ctx.set_status_message(format!("counted {i} of {}", args.n))
            .await;
        tokio::time::sleep(Duration::from_millis(args.delay_ms)).await;
        if i == args.n / 2 {
            let answer = ctx.elicit_as::<GoOn>("Half-way there. Go on?").await;
            if !matches!(answer, Ok(Elicited::Accepted(GoOn { go_on: true }))) {
                return Ok(format!("stopped at {i}"));
            }
        }
    }
    Ok(format!("counted to {}", args.n))
}

#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

async fn echo(args: Echo) -> String {
    args.text
}

#[tokio::main]
async fn main() -> Result<(), BuildError> {
    let addr = std::env::args().nth(1).unwrap_or("127.0.0.1:8080".into());
    Server::builder()
        .tool(
            Tool::from_fn("count_to", "Counts to n.", count_to).task_support(TaskSupport::Optional),
        )
        .tool(Tool::from_fn("echo", "Sends the text back.", echo))
        .build()
        .await?
        .serve_http(addr)
        .await
}
