//! Webhooks against the real binary: an event per transition with the board link, in
//! both formats; a receiver that is down gets its events when it is back, across a
//! restart; and two processes on one database send each event once.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod board_support;
mod common;

use board_support::{Ext, Person, Receiver};
use common::serve;
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::json;
use std::collections::HashSet;

fn config(dir: &std::path::Path, port: u16) -> String {
    let path = dir.join("tasks.toml");
    std::fs::write(
        &path,
        format!(
            r#"
[board]
public_url = "https://tasks.example.com"

[[notify]]
name = "people"
url = "http://127.0.0.1:{port}/json"
on = ["input_required", "completed"]

[[notify]]
name = "chat"
url = "http://127.0.0.1:{port}/slack"
on = ["input_required"]
format = "slack"
"#
        ),
    )
    .unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn events_wait_for_a_receiver_that_is_down_across_a_restart_and_are_sent_once() {
    let dir = tempfile::tempdir().unwrap();
    let reserved = Receiver::reserve();
    let port = reserved.port;
    let config = config(dir.path(), port);
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let args = [
        "--database",
        db.as_str(),
        "--config",
        config.as_str(),
        "--notify-retry",
        "50ms",
        "--notify-timeout",
        "1s",
    ];

    // The receiver is down while the task asks its question, and the server stops.
    let first = serve(&args);
    let mut mcp = Ext::capable(&first.url, None);
    let task = mcp
        .start("book_meeting", json!({"subject": "offsite"}))
        .await;
    mcp.wait(&task, "input_required").await;
    // Killed only once both deliveries are in the outbox (the process tried each):
    // the next processes take the task over at once, so no start-up catch-up finds it
    // waiting to write a lost event again.
    let base = board_support::base_of(&first.url);
    eventually(WAIT, || async {
        let text = reqwest::get(format!("{base}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        ["people", "chat"].iter().all(|sink| {
            text.lines().any(|l| {
                l.starts_with("mcp_tasks_webhook_attempts_total{")
                    && l.contains(&format!("sink=\"{sink}\""))
            })
        })
    })
    .await;
    drop(first);

    // Two processes start on the same database, then the receiver comes back.
    let a = serve(&args);
    let b = serve(&args);
    let receiver = Receiver::start(reserved).await;
    let (json_event, slack_event) = receiver
        .until(|got| {
            let json = got.iter().find(|r| r.path == "/json")?;
            let slack = got.iter().find(|r| r.path == "/slack")?;
            Some((json.clone(), slack.clone()))
        })
        .await;
    assert_eq!(json_event.body["event"], "task.input_required");
    assert_eq!(json_event.body["task"]["id"], task.as_str());
    assert_eq!(json_event.body["task"]["tool"], "book_meeting");
    assert_eq!(
        json_event.body["questions"],
        json!(["Details for the meeting 'offsite'?"])
    );
    let link = format!("https://tasks.example.com/board/tasks/{task}");
    assert_eq!(json_event.body["link"], link.as_str());
    let text = slack_event.body["text"].as_str().unwrap();
    assert!(
        text.contains("book_meeting") && text.contains(&format!("<{link}|")),
        "{text}"
    );

    // A new task on one of the two: its question and, once a person answers on the
    // board, its completion arrive, each once.
    let mut mcp = Ext::capable(&a.url, None);
    let second = mcp
        .start("book_meeting", json!({"subject": "launch"}))
        .await;
    let person = Person::login_local(&board_support::base_of(&a.url)).await;
    let key = person.question(&second).await;
    let (status, _) = person
        .post(
            &format!("/board/api/tasks/{second}/answer"),
            json!({"key": key, "action": "decline"}),
            true,
        )
        .await;
    assert_eq!(status, 200);
    mcp.wait(&second, "completed").await;
    let completed = receiver
        .until(|got| {
            got.iter()
                .find(|r| {
                    r.body["event"] == "task.completed" && r.body["task"]["id"] == second.as_str()
                })
                .cloned()
        })
        .await;
    assert_eq!(
        completed.path, "/json",
        "the chat sink did not ask for completions"
    );

    let got = receiver.got.lock().unwrap().clone();
    let keys: Vec<&str> = got.iter().map(|r| r.delivery.as_str()).collect();
    let unique: HashSet<&str> = keys.iter().copied().collect();
    assert_eq!(
        keys.len(),
        unique.len(),
        "a delivery arrived twice: {keys:?}"
    );
    let json_events = |id: &str, event: &str| {
        got.iter()
            .filter(|r| r.path == "/json")
            .filter(|r| r.body["task"]["id"] == id && r.body["event"] == event)
            .count()
    };
    let slack_events = |id: &str| {
        got.iter()
            .filter(|r| r.path == "/slack")
            .filter(|r| r.body["text"].as_str().unwrap_or("").contains(id))
            .count()
    };
    assert_eq!(json_events(&task, "task.input_required"), 1);
    assert_eq!(json_events(&second, "task.input_required"), 1);
    assert_eq!(json_events(&second, "task.completed"), 1);
    assert_eq!(slack_events(&task), 1);
    assert_eq!(slack_events(&second), 1);
    // Each delivery is counted once, by the process that sent it.
    let mut delivered = 0;
    for server in [&a, &b] {
        let base = board_support::base_of(&server.url);
        let text = reqwest::get(format!("{base}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        delivered += text
            .lines()
            .filter(|l| l.starts_with("mcp_tasks_webhook_attempts_total{"))
            .filter(|l| l.contains("sink=\"people\"") && l.contains("result=\"delivered\""))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum::<u64>();
    }
    assert_eq!(
        delivered, 3,
        "three events for the people sink, each counted once"
    );
    drop((a, b));
}

/// A process that stops between a task's change and the writing of its webhook
/// delivery leaves the event unwritten (here: a server without webhooks). The next
/// process on the database writes it at start and sends it, once.
#[tokio::test]
async fn an_event_left_unwritten_is_sent_by_the_next_process() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let quiet = serve(&["--database", db.as_str()]);
    let mut mcp = Ext::capable(&quiet.url, None);
    let task = mcp.start("book_meeting", json!({"subject": "retro"})).await;
    mcp.wait(&task, "input_required").await;
    // The quiet process stays alive (its event stays unwritten all the same: it has no
    // webhooks): a dead one's waiting task would be taken over by the next start at
    // once, and a task whose tool is not resumable is then failed, not waiting.

    let reserved = Receiver::reserve();
    let port = reserved.port;
    let receiver = Receiver::start(reserved).await;
    let config = config(dir.path(), port);
    let next = serve(&["--database", db.as_str(), "--config", config.as_str()]);
    let event = receiver
        .until(|got| {
            got.iter()
                .find(|r| r.path == "/json" && r.body["task"]["id"] == task.as_str())
                .cloned()
        })
        .await;
    assert_eq!(event.body["event"], "task.input_required");
    // Restarting again does not send it again: the delivery's key is taken.
    drop(next);
    let again = serve(&["--database", db.as_str(), "--config", config.as_str()]);
    let mut mcp = Ext::capable(&again.url, None);
    let later = mcp.start("book_meeting", json!({"subject": "later"})).await;
    receiver
        .until(|got| {
            got.iter()
                .find(|r| r.path == "/json" && r.body["task"]["id"] == later.as_str())
                .cloned()
        })
        .await;
    let got = receiver.got.lock().unwrap().clone();
    let first_events = got
        .iter()
        .filter(|r| r.path == "/json" && r.body["task"]["id"] == task.as_str())
        .count();
    assert_eq!(first_events, 1, "sent once across restarts");
    drop(quiet);
}

/// A tool error is told as a failure (as in the CLI and on the board): a sink for
/// `failed` hears it with the tool's words, one for `completed` does not.
#[tokio::test]
async fn a_tool_error_is_a_failed_event_with_the_tools_words() {
    let dir = tempfile::tempdir().unwrap();
    let reserved = Receiver::reserve();
    let port = reserved.port;
    let receiver = Receiver::start(reserved).await;
    let path = dir.path().join("tasks.toml");
    std::fs::write(
        &path,
        format!(
            r#"
[[notify]]
name = "failures"
url = "http://127.0.0.1:{port}/failed"
on = ["failed"]

[[notify]]
name = "successes"
url = "http://127.0.0.1:{port}/completed"
on = ["completed"]
format = "slack"
"#
        ),
    )
    .unwrap();
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    // Quick calls on the extension wire are tasks too: only tasks are told of.
    let server = serve(&[
        "--database",
        &db,
        "--config",
        path.to_str().unwrap(),
        "--task-after",
        "0s",
    ]);
    let mut mcp = Ext::capable(&server.url, None);
    let failing = mcp.start("failing_job", json!({})).await;
    let event = receiver
        .until(|got| {
            got.iter()
                .find(|r| r.path == "/failed" && r.body["task"]["id"] == failing.as_str())
                .cloned()
        })
        .await;
    assert_eq!(event.body["event"], "task.failed", "{}", event.body);
    assert_eq!(event.body["task"]["status"], "failed");
    assert!(
        event.body["task"]["toolError"]
            .as_str()
            .is_some_and(|t| t.contains("failed on purpose")),
        "{}",
        event.body
    );
    // A later success reaches the other sink; the tool error never did.
    let fine = mcp.start("slow_compute", json!({"seconds": 0})).await;
    let success = receiver
        .until(|got| {
            got.iter()
                .find(|r| {
                    r.path == "/completed"
                        && r.body["text"]
                            .as_str()
                            .is_some_and(|t| t.contains("completed"))
                })
                .cloned()
        })
        .await;
    assert!(success.body["text"]
        .as_str()
        .unwrap()
        .contains("slow_compute"));
    let got = receiver.got.lock().unwrap().clone();
    assert!(
        !got.iter()
            .any(|r| r.path == "/completed" && r.body.to_string().contains("failing_job")),
        "a tool error is not a success: {got:?}"
    );
    assert!(!got
        .iter()
        .any(|r| r.path == "/failed" && r.body["task"]["id"] == fine.as_str()));
}
