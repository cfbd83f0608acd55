//! Signed answer links in webhook events, against the real binary: a waiting yes/no
//! question's event carries approve / reject links; opening one changes nothing; an
//! altered, expired or someone else's link is refused and changes nothing; a link
//! answers once, through the engine, as its assignee.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod board_support;
mod common;

use board_support::{base_of, http, Ext, Person, Receiver};
use common::serve;
use mcp_tasks_testkit::{eventually, WAIT};
use reqwest::header::COOKIE;
use serde_json::{json, Value};

const TOKENS: &str = "\"tok-alice\" = \"alice\"\n\"tok-bob\" = \"bob\"\n";

/// `GET` or `POST` (empty form) a link's path on the server, with `cookie` if any:
/// status and page.
async fn open(base: &str, link: &str, post: bool, cookie: Option<&str>) -> (u16, String) {
    let path = link
        .strip_prefix("https://tasks.example.com")
        .expect("a link under the public URL");
    let url = format!("{base}{path}");
    let mut request = if post {
        http().post(url).form(&[("go", "1")])
    } else {
        http().get(url)
    };
    if let Some(cookie) = cookie {
        request = request.header(COOKIE, cookie);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// The task as its owner sees it on the board: status and number of open questions.
async fn state(alice: &Person, task: &str) -> (String, u64) {
    let (status, detail) = alice.get(&format!("/board/api/tasks/{task}")).await;
    assert_eq!(status, 200, "{detail}");
    (
        detail["status"].as_str().unwrap().to_string(),
        detail["questions"].as_array().map_or(0, |q| q.len() as u64),
    )
}

/// The event of `task` that arrived at `path`.
async fn event(receiver: &Receiver, path: &str, task: &str) -> Value {
    receiver
        .until(|got| {
            got.iter()
                .find(|r| r.path == path && r.body.to_string().contains(task))
                .map(|r| r.body.clone())
        })
        .await
}

#[tokio::test]
async fn answer_links_are_one_time_bound_and_change_nothing_when_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tokens.toml"), TOKENS).unwrap();
    std::fs::write(
        dir.path().join("board-secret"),
        "0123456789abcdef0123456789abcdef\n",
    )
    .unwrap();
    let reserved = Receiver::reserve();
    let port = reserved.port;
    let receiver = Receiver::start(reserved).await;
    let config = dir.path().join("tasks.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[board]
public_url = "https://tasks.example.com"
secret_file = "board-secret"

[[notify]]
name = "links"
url = "http://127.0.0.1:{port}/links"
on = ["input_required"]
answer_links = true
assignee = "alice"

[[notify]]
name = "short"
url = "http://127.0.0.1:{port}/short"
on = ["input_required"]
answer_links = true
assignee = "alice"
answer_link_ttl = "1s"

[[notify]]
name = "chat"
url = "http://127.0.0.1:{port}/chat"
on = ["input_required"]
format = "slack"
answer_links = true

[[notify]]
name = "plain"
url = "http://127.0.0.1:{port}/plain"
on = ["input_required"]
"#
        ),
    )
    .unwrap();
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let server = serve(&[
        "--database",
        &db,
        "--config",
        config.to_str().unwrap(),
        "--auth-tokens",
        dir.path().join("tokens.toml").to_str().unwrap(),
        "--board-takes-questions",
    ]);
    let base = base_of(&server.url);
    let mut mcp = Ext::new(&server.url, Some("tok-alice"));
    let task = mcp
        .start("confirm_delete", json!({"filename": "report.txt"}))
        .await;
    mcp.wait(&task, "input_required").await;
    let alice = Person::login(&base, "tok-alice").await;
    let bob = Person::login(&base, "tok-bob").await;

    let links = event(&receiver, "/links", &task).await;
    let answers = links["answers"].as_array().expect("answers").clone();
    assert_eq!(answers.len(), 1, "{links}");
    assert_eq!(answers[0]["assignee"], "alice");
    assert_eq!(answers[0]["message"], "Delete the file 'report.txt'?");
    let approve = answers[0]["approve"].as_str().unwrap().to_string();
    let reject = answers[0]["reject"].as_str().unwrap().to_string();
    assert!(approve.starts_with("https://tasks.example.com/board/answer/"));
    assert_ne!(approve, reject);
    let plain = event(&receiver, "/plain", &task).await;
    assert!(plain.get("answers").is_none(), "{plain}");
    let chat = receiver
        .until(|got| {
            got.iter()
                .find(|r| r.path == "/chat")
                .map(|r| r.body.clone())
        })
        .await;
    let text = chat["text"].as_str().unwrap();
    assert!(
        text.contains("|Approve>") && text.contains("|Reject>"),
        "{text}"
    );
    let short = event(&receiver, "/short", &task).await;
    let short_approve = short["answers"][0]["approve"].as_str().unwrap().to_string();
    let waiting = || ("input_required".to_string(), 1);

    // Opening a link (a mail scanner's prefetch) shows the question and changes nothing.
    for _ in 0..2 {
        let (status, page) = open(&base, &approve, false, None).await;
        assert_eq!(status, 200, "{page}");
        assert!(
            page.contains("Delete the file &#39;report.txt&#39;?"),
            "{page}"
        );
        assert!(page.contains("<form method=\"post\""), "{page}");
        assert!(page.contains("alice"), "{page}");
    }
    assert_eq!(state(&alice, &task).await, waiting());

    // An altered link: refused, nothing changed.
    let token = approve.rsplit('/').next().unwrap();
    let (payload, signature) = token.split_once('.').unwrap();
    let mut altered: Vec<char> = payload.chars().collect();
    altered[5] = if altered[5] == 'A' { 'B' } else { 'A' };
    let altered: String = altered.into_iter().collect();
    let forged = approve.replace(token, &format!("{altered}.{signature}"));
    for post in [false, true] {
        let (status, page) = open(&base, &forged, post, None).await;
        assert_eq!(status, 403, "{page}");
        assert!(page.contains("not valid"), "{page}");
    }
    assert_eq!(state(&alice, &task).await, waiting());

    // Someone else logged in on the board: refused, nothing changed.
    let (status, page) = open(&base, &approve, true, Some(&bob.cookie)).await;
    assert_eq!(status, 403, "{page}");
    assert!(
        page.contains("sent to alice") && page.contains("bob"),
        "{page}"
    );
    assert_eq!(state(&alice, &task).await, waiting());

    // An expired link (this webhook's links live 1 s): refused, nothing changed.
    eventually(WAIT, || async {
        let (status, _) = open(&base, &short_approve, false, None).await;
        (status == 410).then_some(())
    })
    .await;
    let (status, page) = open(&base, &short_approve, true, None).await;
    assert_eq!(status, 410, "{page}");
    assert!(page.contains("expired"), "{page}");
    assert_eq!(state(&alice, &task).await, waiting());

    // The link works, once, with alice's own login or none, as alice.
    let (status, page) = open(&base, &approve, true, Some(&alice.cookie)).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Approved"), "{page}");
    let done = mcp.wait(&task, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["deleted"], true,
        "{done}"
    );
    for (link, post) in [(&approve, true), (&reject, true), (&approve, false)] {
        let (status, page) = open(&base, link, post, None).await;
        assert_eq!(status, 409, "{page}");
        assert!(page.contains("Already answered"), "{page}");
    }
    assert_eq!(state(&alice, &task).await, ("completed".to_string(), 0));

    // A reject link declines.
    let second = mcp
        .start("confirm_delete", json!({"filename": "notes.txt"}))
        .await;
    let links = event(&receiver, "/links", &second).await;
    let reject = links["answers"][0]["reject"].as_str().unwrap().to_string();
    let (status, page) = open(&base, &reject, true, None).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Rejected"), "{page}");
    let done = mcp.wait(&second, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["deleted"], false,
        "{done}"
    );
    drop(server);
}

#[tokio::test]
async fn an_approval_link_counts_only_for_an_approver() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tokens.toml"), TOKENS).unwrap();
    std::fs::write(
        dir.path().join("board-secret"),
        "0123456789abcdef0123456789abcdef\n",
    )
    .unwrap();
    let reserved = Receiver::reserve();
    let port = reserved.port;
    let receiver = Receiver::start(reserved).await;
    let config = dir.path().join("tasks.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[board]
public_url = "https://tasks.example.com"
secret_file = "board-secret"

[groups]
ops = ["alice"]

[[approval]]
tool = "deploy"
approvers = ["ops"]

[[notify]]
name = "approver"
url = "http://127.0.0.1:{port}/approver"
on = ["input_required"]
answer_links = true
assignee = "alice"

[[notify]]
name = "requester"
url = "http://127.0.0.1:{port}/requester"
on = ["input_required"]
answer_links = true
assignee = "bob"
"#
        ),
    )
    .unwrap();
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let server = serve(&[
        "--database",
        &db,
        "--config",
        config.to_str().unwrap(),
        "--auth-tokens",
        dir.path().join("tokens.toml").to_str().unwrap(),
    ]);
    let base = base_of(&server.url);
    // bob asks for a deploy; only alice (ops) may approve it.
    let mut mcp = Ext::new(&server.url, Some("tok-bob"));
    let task = mcp
        .start("deploy", json!({"service": "web", "env": "prod"}))
        .await;
    mcp.wait(&task, "input_required").await;
    let bob = Person::login(&base, "tok-bob").await;

    // The requester's own link (assignee bob) is refused and changes nothing.
    let own = event(&receiver, "/requester", &task).await;
    let own_approve = own["answers"][0]["approve"]
        .as_str()
        .expect("an approval gets links")
        .to_string();
    let (status, page) = open(&base, &own_approve, true, None).await;
    assert_eq!(status, 403, "{page}");
    assert!(page.contains("ops"), "the page says who decides: {page}");
    assert_eq!(state(&bob, &task).await, ("input_required".to_string(), 1));

    // The approver's link approves the call, which runs.
    let approver = event(&receiver, "/approver", &task).await;
    let approve = approver["answers"][0]["approve"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, page) = open(&base, &approve, true, None).await;
    assert_eq!(status, 200, "{page}");
    let done = mcp.wait(&task, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"service": "web", "env": "prod"})
    );
    let (_, detail) = bob.get(&format!("/board/api/tasks/{task}")).await;
    let timeline = detail["timeline"].to_string();
    assert!(
        timeline.contains("approved by alice via link"),
        "{timeline}"
    );
}
