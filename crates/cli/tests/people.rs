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
