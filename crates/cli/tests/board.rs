//! The task board's API against the real binary: logins, who sees what, answers and
//! cancels through the engine, CSRF, live events. (The page itself is driven in a real
//! browser by `tests/board/browser.py`.)
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod board_support;
mod common;

use board_support::{base_of, http, Ext, Person};
use common::serve;
use futures::StreamExt;
use reqwest::header::{COOKIE, LOCATION};
use serde_json::{json, Value};

const TOKENS: &str =
    "\"tok-alice\" = \"alice\"\n\"tok-bob\" = \"bob\"\n\"tok-ops\" = \"ops-lead\"\n";

struct Setup {
    _dir: tempfile::TempDir,
    server: common::Server,
    base: String,
}

fn start(extra: &[&str]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(&tokens, TOKENS).unwrap();
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let mut args = vec![
        "--database",
        &db,
        "--auth-tokens",
        tokens.to_str().unwrap(),
        "--operators",
        "ops-lead",
        // The MCP clients here declare no elicitation or sampling: people answer.
        "--board-takes-questions",
        // Quick calls on the extension wire are tasks too: the board shows tasks.
        "--task-after",
        "0s",
    ];
    args.extend_from_slice(extra);
    let server = serve(&args);
    let base = base_of(&server.url);
    Setup {
        _dir: dir,
        server,
        base,
    }
}

#[tokio::test]
async fn people_see_their_own_tasks_operators_see_all_and_actions_need_the_csrf_token() {
    let s = start(&[]);
    // Not logged in: the page sends people to the login form, the API answers 401.
    let page = http()
        .get(format!("{}/board", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 303);
    assert_eq!(page.headers()[LOCATION], "/board/login");
    let api = http()
        .get(format!("{}/board/api/tasks", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), 401);
    let refused = http()
        .post(format!("{}/board/login", s.base))
        .form(&[("token", "not-a-token")])
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert!(refused.text().await.unwrap().contains("not accepted"));

    let alice = Person::login(&s.base, "tok-alice").await;
    let bob = Person::login(&s.base, "tok-bob").await;
    let ops = Person::login(&s.base, "tok-ops").await;
    let (_, me) = ops.get("/board/api/me").await;
    assert_eq!(me["principal"], "ops-lead");
    assert_eq!(me["operator"], true);

    // A client that cannot answer questions itself starts a task that asks one: the
    // question waits on the board.
    let mut alice_mcp = Ext::new(&s.server.url, Some("tok-alice"));
    let meeting = alice_mcp
        .start("book_meeting", json!({"subject": "planning"}))
        .await;
    let mut bob_mcp = Ext::new(&s.server.url, Some("tok-bob"));
    let slow = bob_mcp
        .start("slow_compute", json!({"seconds": 600, "label": "bob's"}))
        .await;
    alice_mcp.wait(&meeting, "input_required").await;

    // Each sees their own; the operator sees both, with owners.
    assert_eq!(alice.listed().await, vec![meeting.clone()]);
    assert_eq!(bob.listed().await, vec![slow.clone()]);
    let (_, all) = ops.get("/board/api/tasks").await;
    let owners: Vec<(&str, &str)> = all["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap(), t["owner"].as_str().unwrap()))
        .collect();
    assert_eq!(
        owners,
        vec![(slow.as_str(), "bob"), (meeting.as_str(), "alice")]
    );
    let (_, mine) = alice.get("/board/api/tasks").await;
    assert!(
        mine["tasks"][0].get("owner").is_none(),
        "owners are for operators"
    );

    // Another's task is answered exactly like a task that does not exist.
    let (status, foreign) = alice.get(&format!("/board/api/tasks/{slow}")).await;
    let (unknown_status, unknown) = alice.get("/board/api/tasks/no-such-task").await;
    assert_eq!((status, &foreign), (unknown_status, &unknown));
    assert_eq!(status, 404);
    let (status, foreign) = alice
        .post(&format!("/board/api/tasks/{slow}/cancel"), json!({}), true)
        .await;
    assert_eq!((status, foreign), (404, unknown.clone()));
    let (status, _) = bob
        .post(
            &format!("/board/api/tasks/{meeting}/answer"),
            json!({"key": "elicitation-0", "action": "decline"}),
            true,
        )
        .await;
    assert_eq!(status, 404);

    // The question, as the page renders it.
    let key = alice.question(&meeting).await;
    let (_, detail) = alice.get(&format!("/board/api/tasks/{meeting}")).await;
    let question = &detail["questions"][0];
    assert_eq!(question["kind"], "form");
    assert_eq!(question["message"], "Details for the meeting 'planning'?");
    assert_eq!(
        question["requestedSchema"]["properties"]["catering"]["type"],
        "array"
    );
    assert_eq!(detail["arguments"], json!({"subject": "planning"}));

    // Without the CSRF token nothing changes; a form that breaks the schema is refused
    // with every problem named; a good one completes the task with the answer.
    let answer = json!({"key": key, "action": "accept", "content": {
        "organizer": "Alice", "email": "alice@example.com", "day": "2026-12-01",
        "attendees": 5, "room": "south", "catering": ["coffee", "cake"], "remote": false,
        "starts": "2026-12-01T09:30:00Z", "budget": 120.5, "agenda": "https://example.com/agenda"
    }});
    let path = format!("/board/api/tasks/{meeting}/answer");
    let (status, refused) = alice.post(&path, answer.clone(), false).await;
    assert_eq!(status, 403, "{refused}");
    assert!(refused["error"].as_str().unwrap().contains("CSRF"));
    let mut bad = answer.clone();
    bad["content"]["email"] = json!("not-an-email");
    bad["content"]["attendees"] = json!(50);
    let (status, refused) = alice.post(&path, bad, true).await;
    assert_eq!(status, 422, "{refused}");
    let problems = refused["error"].as_str().unwrap();
    assert!(
        problems.contains("Organizer email must be an email address")
            && problems.contains("Attendees must be at most 20.")
            && !problems.contains("got"),
        "every problem in plain words, each field named by its title: {problems}"
    );
    // An empty form is no answer: its required fields are named, the question stays.
    let empty = json!({"key": key, "action": "accept", "content": {}});
    let (status, refused) = alice.post(&path, empty, true).await;
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("Organizer is required."),
        "{refused}"
    );
    alice_mcp.wait(&meeting, "input_required").await;
    let (status, ok) = alice.post(&path, answer.clone(), true).await;
    assert_eq!((status, ok), (200, json!({"ok": true})));
    let done = alice_mcp.wait(&meeting, "completed").await;
    let booking = &done["result"]["structuredContent"];
    assert_eq!(booking["action"], "accept");
    assert_eq!(booking["answer"]["room"], "south");
    assert_eq!(booking["answer"]["catering"], json!(["coffee", "cake"]));
    // Answers count once.
    let (status, _) = alice.post(&path, answer, true).await;
    assert_eq!(status, 409);

    // The operator cancels bob's task; the task says who did, and its timeline shows it.
    let (status, _) = ops
        .post(&format!("/board/api/tasks/{slow}/cancel"), json!({}), false)
        .await;
    assert_eq!(status, 403, "cancel needs the CSRF token too");
    let (status, cancelled) = ops
        .post(&format!("/board/api/tasks/{slow}/cancel"), json!({}), true)
        .await;
    assert_eq!(status, 200, "{cancelled}");
    let cancelled = bob_mcp.wait(&slow, "cancelled").await;
    assert!(cancelled["statusMessage"]
        .as_str()
        .unwrap()
        .contains("ops-lead"));
    let (_, detail) = bob.get(&format!("/board/api/tasks/{slow}")).await;
    let statuses: Vec<&str> = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, vec!["working", "cancelled"]);

    // Filters: by status and tool, and by id prefix.
    let (_, completed) = ops.get("/board/api/tasks?status=completed").await;
    assert_eq!(completed["tasks"].as_array().unwrap().len(), 1);
    let (_, by_tool) = ops.get("/board/api/tasks?tool=slow_compute").await;
    assert_eq!(by_tool["tasks"][0]["id"], slow.as_str());
    let (_, by_id) = ops
        .get(&format!("/board/api/tasks?q={}", &meeting[..8]))
        .await;
    assert_eq!(by_id["tasks"][0]["id"], meeting.as_str());
    let (status, _) = ops.get("/board/api/tasks?status=sleeping").await;
    assert_eq!(status, 400);

    // Logging out ends the login, also for a copy of the cookie.
    let response = http()
        .post(format!("{}/board/logout", s.base))
        .header(COOKIE, &alice.cookie)
        .form(&[("csrf", alice.csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303);
    assert!(response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    let (status, _) = alice.get("/board/api/tasks").await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn sampling_is_answered_and_a_form_declined_on_the_board() {
    let s = start(&[]);
    let ops = Person::login(&s.base, "tok-ops").await;
    let mut mcp = Ext::new(&s.server.url, Some("tok-bob"));
    let summary = mcp
        .start("summarize_with_model", json!({"text": "a long story"}))
        .await;
    let key = ops.question(&summary).await;
    let (_, detail) = ops.get(&format!("/board/api/tasks/{summary}")).await;
    assert_eq!(detail["questions"][0]["kind"], "sampling");
    assert!(detail["questions"][0]["messages"].is_array());
    let (status, _) = ops
        .post(
            &format!("/board/api/tasks/{summary}/answer"),
            json!({"key": key, "action": "reply", "text": "A short story."}),
            true,
        )
        .await;
    assert_eq!(status, 200);
    let done = mcp.wait(&summary, "completed").await;
    assert!(
        done["result"].to_string().contains("A short story."),
        "{done}"
    );

    let meeting = mcp.start("book_meeting", json!({"subject": "retro"})).await;
    let key = ops.question(&meeting).await;
    let (status, _) = ops
        .post(
            &format!("/board/api/tasks/{meeting}/answer"),
            json!({"key": key, "action": "decline"}),
            true,
        )
        .await;
    assert_eq!(status, 200);
    let done = mcp.wait(&meeting, "completed").await;
    assert_eq!(done["result"]["structuredContent"]["action"], "decline");
}

#[tokio::test]
async fn pages_watch_tasks_change_live() {
    let s = start(&[]);
    let alice = Person::login(&s.base, "tok-alice").await;
    let events = http()
        .get(format!("{}/board/api/events", s.base))
        .header(COOKIE, &alice.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    assert!(events.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    // bob's task must not show up on alice's stream; hers must.
    let mut bob_mcp = Ext::new(&s.server.url, Some("tok-bob"));
    let bobs = bob_mcp.start("slow_compute", json!({"seconds": 0})).await;
    let mut alice_mcp = Ext::new(&s.server.url, Some("tok-alice"));
    let hers = alice_mcp
        .start("slow_compute", json!({"seconds": 0, "label": "live"}))
        .await;
    let mut stream = events.bytes_stream();
    let mut text = String::new();
    let completed = tokio::time::timeout(mcp_tasks_testkit::WAIT, async {
        while let Some(chunk) = stream.next().await {
            text.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
            let done = text.split("\n\n").any(|event| {
                event.contains("event: task")
                    && event.contains(&hers)
                    && event.contains("\"completed\"")
            });
            if done {
                return;
            }
        }
    })
    .await;
    assert!(completed.is_ok(), "no live event of the task: {text}");
    assert!(
        !text.contains(&bobs),
        "another principal's task was streamed"
    );
    let row: Value = text
        .split("\n\n")
        .find(|e| e.contains(&hers))
        .and_then(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap())
        .unwrap();
    assert_eq!(row["tool"], "slow_compute");
}

#[tokio::test]
async fn other_sites_are_refused_and_the_board_can_be_turned_off() {
    let s = start(&[]);
    let alice = Person::login(&s.base, "tok-alice").await;
    let response = http()
        .post(format!("{}/board/api/tasks/x/cancel", s.base))
        .header(COOKIE, &alice.cookie)
        .header("x-csrf-token", &alice.csrf)
        .header("origin", "https://evil.example")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let login = http()
        .post(format!("{}/board/login", s.base))
        .header("origin", "https://evil.example")
        .form(&[("token", "tok-alice")])
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 403, "a login posted from another site");
    let page = http()
        .get(format!("{}/board", s.base))
        .header(COOKIE, &alice.cookie)
        .send()
        .await
        .unwrap();
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"));
    let html = page.text().await.unwrap();
    assert!(html.contains(&alice.csrf) && html.contains("alice"));

    let off = start(&["--no-board"]);
    let response = http()
        .get(format!("{}/board", off.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn without_authentication_the_loopback_board_is_the_local_users() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    // Quick calls on the extension wire are tasks too: the board shows tasks.
    let server = serve(&["--database", &db, "--task-after", "0s"]);
    let base = base_of(&server.url);
    let local = Person::login_local(&base).await;
    let (_, me) = local.get("/board/api/me").await;
    assert_eq!(me["operator"], true);
    assert_eq!(me["loggedIn"], false);
    let login = http()
        .get(format!("{base}/board/login"))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 303, "no login without authentication");
    // Two anonymous MCP clients: the local user sees both.
    let mut a = Ext::new(&server.url, None);
    let mut b = Ext::new(&server.url, None);
    let first = a.start("slow_compute", json!({"seconds": 0})).await;
    let second = b.start("slow_compute", json!({"seconds": 0})).await;
    let ids = local.listed().await;
    assert!(ids.contains(&first) && ids.contains(&second));
    // Without --board-takes-questions, a task still cannot ask what its client did not
    // declare: the tool fails at once, as the protocol has it, rather than waiting.
    let asks = a.start("book_meeting", json!({"subject": "x"})).await;
    let ended = a.wait_for(&asks, &["failed", "completed"]).await;
    assert!(ended.to_string().contains("elicitation"), "{ended}");

    // The same DNS-rebinding defence as /mcp.
    let foreign = http()
        .get(format!("{base}/board/api/tasks"))
        .header("origin", "http://rebound.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
}

/// The list is rendered on the server: a browser without JavaScript sees the tasks,
/// filtered as the (plain GET) filter form asks, each linking to its page.
#[tokio::test]
async fn the_list_is_on_the_page_without_javascript() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let server = serve(&["--database", &db, "--task-after", "0s"]);
    let base = base_of(&server.url);
    let local = Person::login_local(&base).await;
    let mut mcp = Ext::new(&server.url, None);
    let done = mcp.start("slow_compute", json!({"seconds": 0})).await;
    let running = mcp.start("slow_compute", json!({"seconds": 600})).await;
    mcp.wait(&done, "completed").await;

    let (status, html) = local.page("/board").await;
    assert_eq!(status, 200);
    for id in [&done, &running] {
        assert!(html.contains(&format!("<tr data-id=\"{id}\"")), "{html}");
        assert!(
            html.contains(&format!("href=\"/board/tasks/{id}\"")),
            "{html}"
        );
    }
    assert!(!html.contains("No tasks yet."), "{html}");
    assert!(html.contains("<form id=\"filters\" method=\"get\" action=\"/board\">"));

    let (_, completed) = local
        .page("/board?status=completed&tool=slow_compute")
        .await;
    assert!(
        completed.contains(&format!("data-id=\"{done}\"")),
        "{completed}"
    );
    assert!(
        !completed.contains(&format!("data-id=\"{running}\"")),
        "{completed}"
    );
    assert!(
        completed.contains("<option value=\"completed\" selected>"),
        "{completed}"
    );
    assert!(completed.contains("value=\"slow_compute\""), "{completed}");

    // A task's link shows its detail without JavaScript; an unknown one says so.
    let (status, detail) = local.page(&format!("/board/tasks/{done}")).await;
    assert_eq!(status, 200);
    assert!(
        detail.contains(&format!("<code id=\"detail-id\">{done}</code>")),
        "{detail}"
    );
    assert!(detail.contains("finished after 0 s</pre>"), "{detail}");
    assert!(detail.contains("<ol class=\"timeline\">"), "{detail}");
    assert!(
        detail.contains(&format!("data-id=\"{running}\"")),
        "the list too"
    );
    let (_, unknown) = local.page("/board/tasks/no-such-task").await;
    assert!(unknown.contains("<p class=\"error\">"), "{unknown}");

    let (_, none) = local.page("/board?status=cancelled").await;
    assert!(none.contains("No tasks yet."), "{none}");
    let (status, bad) = local.page("/board?status=sleeping").await;
    assert_eq!(status, 200);
    assert!(bad.contains("unknown status"), "{bad}");
    mcp.result("tasks/cancel", json!({"taskId": running})).await;
}
