//! Runs the example over stdio: the task asks, the client answers, the result follows
//! the answer (accepted with `keep_newest`, then declined).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_client::input::{accept, decline};
use mcp_tasks_client::{Client, Target, TaskOptions, TaskStatus};
use serde_json::json;

async fn run(answer: serde_json::Value) -> (String, serde_json::Value) {
    let target = Target::Stdio {
        program: env!("CARGO_BIN_EXE_example-confirm").into(),
        args: vec![],
    };
    let client = Client::builder()
        .on_elicitation(move |req| {
            let answer = answer.clone();
            async move {
                let schema = req.requested_schema().cloned().unwrap_or_default();
                assert_eq!(schema["properties"]["confirm"]["type"], "boolean");
                assert!(req.message().unwrap_or("").contains("Remove 3 files"));
                Ok(answer)
            }
        })
        .connect(&target)
        .await
        .expect("connect");
    let handle = client
        .call_tool_as_task("cleanup", json!({"suffix": ".tmp"}), TaskOptions::default())
        .await
        .unwrap();
    let outcome = handle.result().await.unwrap();
    assert_eq!(outcome.status(), TaskStatus::Completed);
    let text = outcome.text().unwrap();
    let data = outcome.result.unwrap()["structuredContent"].clone();
    client.close().await;
    (text, data)
}

#[tokio::test]
async fn the_answer_decides_what_happens() {
    let (text, data) = run(accept(json!({"confirm": true, "keep_newest": true}))).await;
    assert_eq!(text, "removed 2 files");
    assert_eq!(data["removed"], json!(["a.tmp", "b.tmp"]));

    let (text, data) = run(decline()).await;
    assert_eq!(text, "nothing removed");
    assert_eq!(data["removed"], json!([]));
}
