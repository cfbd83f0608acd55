//! `turul-task-client URL`: turul's own client (turul-mcp-client 0.4.2 with its
//! `ext-tasks` feature, the same release as turul-mcp-server 0.4.5) driving an
//! mcp-tasks server (`mcp-tasks serve --demo`) on the 2026-07-28 Tasks extension wire,
//! written the way turul's `examples/ext-tasks-server/src/client.rs` drives turul's
//! server: declare the extension, `call_tool_or_task`, `task_get`, `task_update`,
//! `task_wait`, `task_cancel`.
//!
//! Prints one `PASS name` or `FAIL name: why` line per check and ends with
//! `N passed, M failed` (the format tests/interop/run.sh counts); exits non-zero when a
//! check failed. Every wait is bounded.

use serde_json::{json, Value};
use std::future::Future;
use std::time::Duration;
use turul_mcp_client::config::ConnectionConfig;
use turul_mcp_client::transport::HttpTransport;
use turul_mcp_client::{ClientConfig, McpClient, McpVersion, ToolCallOutcome};
use turul_mcp_ext_tasks::DetailedTask;

/// The longest any one check may take.
const LIMIT: Duration = Duration::from_secs(30);

type Check = Result<(), String>;

/// Runs a check under [`LIMIT`], turning a timeout into a failure.
async fn bounded(f: impl Future<Output = Check>) -> Check {
    tokio::time::timeout(LIMIT, f)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {} s", LIMIT.as_secs())))
}

/// A client of `url` that declared the Tasks extension and form elicitation, with
/// `headers` on every request.
async fn connect_with(url: &str, headers: &[(&str, &str)]) -> Result<McpClient, String> {
    let mut config = ClientConfig::default();
    config.declared_capabilities.ext_tasks = true;
    config.declared_capabilities.elicitation = true;
    let mut connection = ConnectionConfig::default();
    if !headers.is_empty() {
        connection.headers = Some(
            headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
    }
    let transport = HttpTransport::with_config(url, &connection)
        .map_err(|e| format!("transport for {url}: {e}"))?;
    let client = McpClient::new(Box::new(transport), config);
    client
        .connect()
        .await
        .map_err(|e| format!("connect to {url}: {e}"))?;
    Ok(client)
}

/// A client as turul's docs write one.
async fn connect(url: &str) -> Result<McpClient, String> {
    connect_with(url, &[]).await
}

/// A client for one task's `tasks/get|update|cancel`: SEP-2663 says the client MUST
/// send `Mcp-Name: <taskId>` with them, which turul-mcp-client 0.4.2 does not
/// (its transport names only tools, prompts and resources), and our server refuses
/// such a request (-32020). turul's transport takes extra headers per client, not per
/// request, hence a client per task (docs/interop.md, "Peers' problems").
async fn task_client(url: &str, task_id: &str) -> Result<McpClient, String> {
    connect_with(url, &[("Mcp-Name", task_id)]).await
}

/// Calls `tool` and expects a task; returns its id.
async fn start(client: &McpClient, tool: &str, args: Value) -> Result<String, String> {
    match client
        .call_tool_or_task(tool, args)
        .await
        .map_err(|e| format!("tools/call {tool}: {e}"))?
    {
        ToolCallOutcome::Task(t) => Ok(t.task.fields.task_id),
        ToolCallOutcome::Completed(r) => {
            Err(format!("{tool} answered inline, not as a task: {r:?}"))
        }
    }
}

/// The first text of a completed task's result.
fn result_text(t: &DetailedTask) -> Result<String, String> {
    match t {
        DetailedTask::Completed { result, .. } => Ok(result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()),
        other => Err(format!("not completed: {other:?}")),
    }
}

/// `tasks/get` until the task leaves `working` (bounded by the caller).
async fn until_not_working(client: &McpClient, id: &str) -> Result<DetailedTask, String> {
    loop {
        let t = client
            .task_get(id)
            .await
            .map_err(|e| format!("tasks/get {id}: {e}"))?;
        if !matches!(t, DetailedTask::Working { .. }) {
            return Ok(t);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn negotiates(client: &McpClient) -> Check {
    match client.negotiated_version().await {
        Some(McpVersion::V2026_07_28) => Ok(()),
        other => Err(format!("negotiated {other:?}, 2026-07-28 expected")),
    }
}

async fn tasks_get_without_mcp_name_is_refused(client: &McpClient) -> Check {
    let id = start(
        client,
        "slow_compute",
        json!({"seconds": 0.5, "label": "bare"}),
    )
    .await?;
    match client.task_get(&id).await {
        Err(e) if e.to_string().contains("-32020") => Ok(()),
        Err(e) => Err(format!("refused, but not with -32020: {e}")),
        Ok(t) => Err(format!(
            "answered without Mcp-Name (turul's client now sends it? then drop the per-task client): {t:?}"
        )),
    }
}

async fn task_runs_to_its_result(url: &str, client: &McpClient) -> Check {
    let id = start(
        client,
        "slow_compute",
        json!({"seconds": 1, "label": "turul"}),
    )
    .await?;
    let client = &task_client(url, &id).await?;
    let first = client
        .task_get(&id)
        .await
        .map_err(|e| format!("tasks/get {id}: {e}"))?;
    if !matches!(first, DetailedTask::Working { .. }) {
        return Err(format!("not working right after the call: {first:?}"));
    }
    let done = client
        .task_wait(&id)
        .await
        .map_err(|e| format!("task_wait {id}: {e}"))?;
    let text = result_text(&done)?;
    if text.contains("slow_compute 'turul'") {
        Ok(())
    } else {
        Err(format!("result text {text:?}"))
    }
}

async fn question_is_answered(url: &str, client: &McpClient) -> Check {
    let id = start(client, "confirm_delete", json!({"filename": "notes.txt"})).await?;
    let client = &task_client(url, &id).await?;
    let asked = until_not_working(client, &id).await?;
    let DetailedTask::InputRequired { input_requests, .. } = &asked else {
        return Err(format!("no question: {asked:?}"));
    };
    let message = serde_json::to_value(input_requests)
        .map_err(|e| e.to_string())?
        .to_string();
    if !message.contains("notes.txt") {
        return Err(format!("the question does not name the file: {message}"));
    }
    let answers: serde_json::Map<String, Value> = input_requests
        .keys()
        .map(|k| {
            (
                k.clone(),
                json!({"action": "accept", "content": {"confirm": true}}),
            )
        })
        .collect();
    client
        .task_update(&id, Value::Object(answers))
        .await
        .map_err(|e| format!("tasks/update {id}: {e}"))?;
    let done = client
        .task_wait(&id)
        .await
        .map_err(|e| format!("task_wait {id}: {e}"))?;
    let text = result_text(&done)?;
    if text.starts_with("Deleted notes.txt") {
        Ok(())
    } else {
        Err(format!("result text {text:?}"))
    }
}

async fn cancel_ends_a_task(url: &str, client: &McpClient) -> Check {
    let id = start(
        client,
        "slow_compute",
        json!({"seconds": 600, "label": "cancel me"}),
    )
    .await?;
    let client = &task_client(url, &id).await?;
    client
        .task_cancel(&id)
        .await
        .map_err(|e| format!("tasks/cancel {id}: {e}"))?;
    // Cancellation is cooperative: the task ends `cancelled` soon after the ack.
    let end = until_not_working(client, &id).await?;
    match end {
        DetailedTask::Cancelled { .. } => Ok(()),
        other => Err(format!("after tasks/cancel: {other:?}")),
    }
}

async fn unknown_task_is_refused(url: &str) -> Check {
    let client = task_client(url, "no-such-task").await?;
    match client.task_get("no-such-task").await {
        Err(e) if !e.to_string().contains("-32020") => Ok(()),
        Err(e) => Err(format!("refused for its headers, not as unknown: {e}")),
        Ok(t) => Err(format!("an unknown id was answered: {t:?}")),
    }
}

#[tokio::main]
async fn main() {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: turul-task-client URL   (an mcp-tasks serve --demo endpoint)");
        std::process::exit(2);
    };
    let (mut passed, mut failed) = (0, 0);
    let mut report = |name: &str, r: Check| match r {
        Ok(()) => {
            passed += 1;
            println!("PASS {name}");
        }
        Err(e) => {
            failed += 1;
            println!("FAIL {name}: {e}");
        }
    };
    let client = match tokio::time::timeout(LIMIT, connect(&url)).await {
        Ok(Ok(c)) => {
            report("connects with the extension declared", Ok(()));
            c
        }
        Ok(Err(e)) => {
            report("connects with the extension declared", Err(e));
            println!("{passed} passed, {failed} failed");
            std::process::exit(1);
        }
        Err(_) => {
            report(
                "connects with the extension declared",
                Err("timed out".into()),
            );
            println!("{passed} passed, {failed} failed");
            std::process::exit(1);
        }
    };
    report("negotiates 2026-07-28", bounded(negotiates(&client)).await);
    report(
        "turul's tasks/get without Mcp-Name is refused with -32020 (SEP-2663 requires the header)",
        bounded(tasks_get_without_mcp_name_is_refused(&client)).await,
    );
    report(
        "a call becomes a task, seen working, then completed",
        bounded(task_runs_to_its_result(&url, &client)).await,
    );
    report(
        "a question is answered with tasks/update",
        bounded(question_is_answered(&url, &client)).await,
    );
    report(
        "tasks/cancel ends a task",
        bounded(cancel_ends_a_task(&url, &client)).await,
    );
    report(
        "an unknown task is refused",
        bounded(unknown_task_is_refused(&url)).await,
    );
    println!("{passed} passed, {failed} failed");
    std::process::exit(i32::from(failed > 0));
}
