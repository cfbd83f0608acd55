//! The client against `@modelcontextprotocol/server-everything` 2026.8.31 (the official
//! test server, 2025-11-25 tasks through the TypeScript SDK), over Streamable HTTP (a
//! server per test, on a free loopback port) and stdio.
//!
//! Checks: `--wire auto` (the default) falls back to 2025-11-25; its task-required tool
//! `simulate-research-query` runs as a task with status messages and asks for a
//! clarification (elicitation delivered through `tasks/result`), answered by the
//! handler; sampling (`trigger-sampling-request`) answered by the handler; progress of
//! `trigger-long-running-operation` reaches the caller; cancel; a new client of the
//! session resumes a task by id. Runs when `MCP_TASKS_INTEROP_EVERYTHING` is set
//! (`tests/interop/run.sh` sets it), else prints a notice and passes.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use mcp_tasks_client::{
    input, Client, ClientBuilder, Target, TaskOptions, TaskStatus, TaskSupport, TaskUpdate, Wire,
};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tasks_testkit::peers;

/// How long any one call here may take (the research task takes about 4 s).
const LIMIT: Duration = Duration::from_secs(60);

/// A client that answers the clarification with `choice` and sampling with a fixed
/// reply, recording every question it is asked.
fn answering(
    choice: &'static str,
    asked: &Arc<Mutex<Vec<mcp_tasks_client::InputRequest>>>,
) -> ClientBuilder {
    let (e, s) = (Arc::clone(asked), Arc::clone(asked));
    Client::builder()
        .on_elicitation(move |q| {
            e.lock().unwrap().push(q.clone());
            async move {
                let options =
                    &q.requested_schema().unwrap()["properties"]["interpretation"]["oneOf"];
                assert!(
                    options
                        .as_array()
                        .is_some_and(|o| o.iter().any(|c| c["const"] == choice)),
                    "{options}"
                );
                Ok(input::accept(json!({ "interpretation": choice })))
            }
        })
        .on_sampling(move |q| {
            s.lock().unwrap().push(q.clone());
            async move {
                Ok(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": "a sampled reply"},
                    "model": "test-model",
                    "stopReason": "endTurn"
                }))
            }
        })
}

/// Runs the research task with an ambiguous topic; returns the report, the status
/// messages seen in order, and the statuses.
async fn research(client: &Client) -> (String, Vec<String>, Vec<TaskStatus>) {
    let mut task = client
        .call_tool_as_task(
            "simulate-research-query",
            json!({"topic": "python", "ambiguous": true}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    assert!(task.task_id().is_some(), "a task");
    let mut updates = task.updates();
    let seen = tokio::spawn(async move {
        let (mut messages, mut statuses) = (Vec::<String>::new(), Vec::new());
        while let Some(u) = updates.next().await {
            if let TaskUpdate::Status(t) = u {
                if let Some(m) = t.status_message {
                    if messages.last() != Some(&m) {
                        messages.push(m);
                    }
                }
                if statuses.last() != Some(&t.status) {
                    statuses.push(t.status);
                }
            }
        }
        (messages, statuses)
    });
    let outcome = tokio::time::timeout(LIMIT, task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status(), TaskStatus::Completed);
    let (messages, statuses) = seen.await.unwrap();
    (outcome.text().unwrap_or_default(), messages, statuses)
}

#[tokio::test]
async fn auto_falls_back_to_2025_11_25_and_the_research_task_asks_for_clarification() {
    let Some(server) = peers::everything_http() else {
        return;
    };
    let asked = Arc::new(Mutex::new(Vec::new()));
    let client = answering("snake", &asked)
        .connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    assert_eq!(
        client.wire(),
        Wire::V2025_11_25,
        "no extension on this server"
    );
    assert!(client.supports_tasks());
    let tools = client.tools().await.unwrap();
    let research_tool = tools
        .iter()
        .find(|t| t.name == "simulate-research-query")
        .unwrap();
    assert_eq!(research_tool.task_support, TaskSupport::Required);

    let (report, messages, statuses) = research(&client).await;
    assert!(
        report.contains("# Research Report: python (snake)"),
        "{report}"
    );
    assert!(
        messages.iter().any(|m| m == "Gathering sources..."),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("Requesting clarification")),
        "{messages:?}"
    );
    assert!(
        statuses.contains(&TaskStatus::InputRequired),
        "{statuses:?}"
    );
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "one question: {asked:?}");
    assert!(asked[0].task_id.is_some(), "asked on behalf of the task");
    assert!(asked[0].message().unwrap().contains("\"python\""));
    client.close().await;
}

#[tokio::test]
async fn sampling_and_progress_of_plain_calls_reach_the_client() {
    let Some(server) = peers::everything_http() else {
        return;
    };
    let asked = Arc::new(Mutex::new(Vec::new()));
    let client = answering("technical", &asked)
        .connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    let sampled = tokio::time::timeout(
        LIMIT,
        client.call_tool("trigger-sampling-request", json!({"prompt": "autumn"})),
    )
    .await
    .unwrap()
    .unwrap();
    let text = sampled["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("a sampled reply"), "{text}");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].method, "sampling/createMessage");
    let prompt = asked[0].params["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(prompt.contains("autumn"), "{prompt}");

    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&progress);
    let done = tokio::time::timeout(
        LIMIT,
        client.call_tool_with_progress(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
            move |p| sink.lock().unwrap().push((p.progress, p.total)),
        ),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(done["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("Steps: 3"));
    assert_eq!(
        *progress.lock().unwrap(),
        vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
    client.close().await;
}

#[tokio::test]
async fn cancel_ends_a_research_task() {
    let Some(server) = peers::everything_http() else {
        return;
    };
    let client = Client::connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    let task = client
        .call_tool_as_task(
            "simulate-research-query",
            json!({"topic": "rust"}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    let after = task.cancel().await.unwrap();
    assert_eq!(after.status, TaskStatus::Cancelled);
    let outcome = tokio::time::timeout(LIMIT, task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status(), TaskStatus::Cancelled);
    client.close().await;
}

#[tokio::test]
async fn a_new_client_of_the_session_resumes_a_task_by_id() {
    let Some(server) = peers::everything_http() else {
        return;
    };
    let target = Target::Http(server.url.clone());
    let first = Client::connect(&target).await.unwrap();
    let task = first
        .call_tool_as_task(
            "simulate-research-query",
            json!({"topic": "rust"}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    let id = task.task_id().cloned().unwrap();
    drop(task);
    let session = first.detach().await.expect("an HTTP session");

    // The server keeps tasks per session: the new client rejoins it.
    let second = Client::builder()
        .resume_session(session.clone())
        .connect(&target)
        .await
        .unwrap();
    let outcome = tokio::time::timeout(LIMIT, second.resume(&id).await.unwrap().result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status(), TaskStatus::Completed);
    assert!(outcome
        .text()
        .unwrap_or_default()
        .contains("# Research Report: rust"));
    second.close().await;
}

#[tokio::test]
async fn over_stdio_the_research_task_and_sampling_are_answered() {
    let Some((program, args)) = peers::everything_stdio() else {
        return;
    };
    let asked = Arc::new(Mutex::new(Vec::new()));
    let client = answering("programming", &asked)
        .connect(&Target::Stdio { program, args })
        .await
        .unwrap();
    assert_eq!(client.wire(), Wire::V2025_11_25);
    let (report, messages, _) = research(&client).await;
    assert!(
        report.contains("# Research Report: python (programming)"),
        "{report}"
    );
    assert!(
        messages.iter().any(|m| m == "Generating report..."),
        "{messages:?}"
    );
    let sampled: Value = client
        .call_tool("trigger-sampling-request", json!({"prompt": "winter"}))
        .await
        .unwrap();
    assert!(sampled["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("a sampled reply"));
    assert_eq!(
        asked.lock().unwrap().len(),
        2,
        "a clarification and a sampling"
    );
    client.close().await;
}
