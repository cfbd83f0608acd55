//! Questions for people through the real binary: a tool's question assigned to a
//! group shows in its members' inbox on the board, and when nobody answers by its
//! deadline it is escalated to the next group, who answer it; the tool learns who.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod board_support;
mod common;

use board_support::{base_of, Ext, Person};
use common::spawn_listening_logged;
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::{json, Value};

const TOKENS: &str =
    "\"tok-alice\" = \"alice\"\n\"tok-dave\" = \"dave\"\n\"tok-carol\" = \"carol\"\n";

/// The task ids in `person`'s inbox.
async fn inbox(person: &Person) -> Vec<String> {
    let (status, inbox) = person.get("/board/api/inbox").await;
    assert_eq!(status, 200, "{inbox}");
    inbox["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["taskId"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn an_unanswered_question_is_escalated_to_the_next_group_who_answer_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tokens.toml"), TOKENS).unwrap();
    let config = dir.path().join("tasks.toml");
    std::fs::write(&config, "[groups]\nops = [\"alice\"]\nleads = [\"dave\"]\n").unwrap();
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let (server, log) = spawn_listening_logged(&[
        "serve",
        "--demo",
        "--listen",
        "127.0.0.1:0",
        "--log",
        "warn,mcp_tasks::audit=info",
        "--database",
        &db,
        "--config",
        config.to_str().unwrap(),
        "--auth-tokens",
        dir.path().join("tokens.toml").to_str().unwrap(),
    ]);
    let base = base_of(&server.url);
    let alice = Person::login(&base, "tok-alice").await;
    let dave = Person::login(&base, "tok-dave").await;
    let mut carol = Ext::new(&server.url, Some("tok-carol"));
    let task = carol
        .start(
            "ask_a_person",
            json!({"question": "Ship it?", "assignee": "ops", "deadline_seconds": 1,
                   "on_deadline": "escalate", "escalate_to": "leads"}),
        )
        .await;
    carol.wait(&task, "input_required").await;
    // First the ops group's (alice), not the leads'.
    assert!(inbox(&alice).await.contains(&task));
    assert!(!inbox(&dave).await.contains(&task));
    // Nobody of ops answered within a second: the leads are asked instead.
    eventually(WAIT, || async {
        inbox(&dave).await.contains(&task).then_some(())
    })
    .await;
    assert!(!inbox(&alice).await.contains(&task), "no longer alice's");
    let (_, detail) = dave.get(&format!("/board/api/tasks/{task}")).await;
    assert_eq!(
        detail["statusMessage"],
        "question 'elicitation-1' got no answer by its deadline: escalated to leads",
        "{detail}"
    );
    let question = &detail["questions"][0];
    assert_eq!(question["assignedTo"], json!(["leads"]), "{detail}");
    assert_eq!(question["mayAnswer"], true, "{detail}");
    let key = question["key"].as_str().unwrap();
    let (status, body) = dave
        .post(
            &format!("/board/api/tasks/{task}/answer"),
            json!({"key": key, "action": "accept", "content": {"yes": true}}),
            true,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let done = carol.wait(&task, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"yes": true, "by": "dave", "via": "board"})
    );
    let (_, detail) = dave.get(&format!("/board/api/tasks/{task}")).await;
    let timeline: Vec<Value> = detail["timeline"].as_array().unwrap().clone();
    let said = serde_json::to_string(&timeline).unwrap();
    assert!(said.contains("answered by dave via board"), "{said}");
    // The escalation and the answer are audit events, naming who and how.
    let mut seen = Vec::new();
    let wanted = |l: &String| {
        l.contains("mcp_tasks::audit") && l.contains(&task) && l.contains("event=\"answered\"")
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !seen.iter().any(wanted) && std::time::Instant::now() < deadline {
        if let Ok(line) = log.recv_timeout(std::time::Duration::from_millis(200)) {
            seen.push(line);
        }
    }
    let answered = seen
        .iter()
        .find(|l| wanted(l))
        .expect("an answered audit event");
    assert!(
        answered.contains("principal=dave") && answered.contains("via=\"board\""),
        "{answered}"
    );
    assert!(
        seen.iter()
            .any(|l| l.contains("event=\"deadline_passed\"") && l.contains("escalated to leads")),
        "{seen:#?}"
    );
}

/// Starts the demo server on `db` with approval rules, a short lease (a killed
/// process's tasks are taken over within seconds) and alice as an approver.
fn start_with_rules(dir: &std::path::Path) -> common::Server {
    std::fs::write(dir.join("tokens.toml"), TOKENS).unwrap();
    let config = dir.join("rules.toml");
    std::fs::write(
        &config,
        "[groups]\nops = [\"alice\"]\n\n[[approval]]\ntool = \"deploy\"\napprovers = [\"ops\"]\n\n[[approval]]\ntool = \"slow_compute\"\napprovers = [\"ops\"]\n",
    )
    .unwrap();
    common::serve(&[
        "--database",
        &format!("sqlite://{}", dir.join("tasks.db").display()),
        "--config",
        config.to_str().unwrap(),
        "--auth-tokens",
        dir.join("tokens.toml").to_str().unwrap(),
        "--lease-ttl",
        "1s",
    ])
}

/// The key of the open approval of `task`, as alice sees it on the board.
async fn approval_key(alice: &Person, task: &str) -> String {
    eventually(WAIT, || async {
        let (_, detail) = alice.get(&format!("/board/api/tasks/{task}")).await;
        detail["questions"][0]["key"].as_str().map(str::to_string)
    })
    .await
}

async fn approve(alice: &Person, task: &str) {
    let key = approval_key(alice, task).await;
    let (status, body) = alice
        .post(
            &format!("/board/api/tasks/{task}/answer"),
            json!({"key": key, "action": "approve"}),
            true,
        )
        .await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn an_approval_survives_a_kill_9_and_an_approved_tool_is_not_run_twice() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start_with_rules(dir.path());
    let mut carol = Ext::new(&server.url, Some("tok-carol"));
    // Waiting for approval when the process dies.
    let waiting = carol
        .start("deploy", json!({"service": "web", "env": "prod"}))
        .await;
    carol.wait(&waiting, "input_required").await;
    // Approved and running (a tool that is not resumable) when the process dies.
    let running = carol
        .start("slow_compute", json!({"seconds": 600, "label": "long"}))
        .await;
    let alice = Person::login(&base_of(&server.url), "tok-alice").await;
    approve(&alice, &running).await;
    // The tool itself runs (its first progress report), so its start is journaled.
    eventually(WAIT, || async {
        let (_, detail) = alice.get(&format!("/board/api/tasks/{running}")).await;
        detail["progress"].is_object().then_some(())
    })
    .await;

    server.child.kill().unwrap(); // SIGKILL: no shutdown code runs
    server.child.wait().unwrap();
    drop(server);

    let server = start_with_rules(dir.path());
    let mut carol = Ext::new(&server.url, Some("tok-carol"));
    let alice = Person::login(&base_of(&server.url), "tok-alice").await;
    // The approval still waits (taken over once the dead process's lease ran out),
    // and once given, the tool runs.
    let key = approval_key(&alice, &waiting).await;
    assert!(key.starts_with("approval-"), "{key}");
    approve(&alice, &waiting).await;
    let done = carol.wait(&waiting, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"service": "web", "env": "prod"})
    );
    // The approved tool that had started is not started again.
    let carol = tokio::sync::Mutex::new(carol);
    let ended = eventually(std::time::Duration::from_secs(40), || async {
        let t = carol
            .lock()
            .await
            .result("tasks/get", json!({"taskId": running}))
            .await;
        (t["status"] != "working").then_some(t)
    })
    .await;
    let text = ended["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(text.contains("not run again"), "{ended}");
}
