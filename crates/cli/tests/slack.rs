//! Slack app mode against the real binary and a Slack stand-in on a loopback port: a
//! waiting question is posted with buttons; a click signed as Slack signs it answers
//! it as the mapped principal and the message is updated; a wrong signature, an old
//! timestamp, an unmapped Slack user and a mapped one who may not answer are refused
//! and change nothing; a form is answered through its modal.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod board_support;
mod common;
mod slack_support;

use board_support::{base_of, Ext, Person};
use common::serve;
use mcp_tasks_testkit::WAIT;
use serde_json::{json, Value};
use slack_support::{buttons, click, interact, next, now, StandIn, BOT_TOKEN, CHANNEL};

const TOKENS: &str =
    "\"tok-alice\" = \"alice\"\n\"tok-bob\" = \"bob\"\n\"tok-carol\" = \"carol\"\n";
const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";

struct Setup {
    _dir: tempfile::TempDir,
    server: common::Server,
    base: String,
}

/// The binary serving the demo tools with authentication, people answering questions,
/// and a `[slack]` section pointing at the stand-in at `api`; `extra` is more config.
fn start(api: &str, extra: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tokens.toml"), TOKENS).unwrap();
    std::fs::write(
        dir.path().join("slack-signing-secret"),
        format!("{SECRET}\n"),
    )
    .unwrap();
    std::fs::write(dir.path().join("slack-bot-token"), format!("{BOT_TOKEN}\n")).unwrap();
    let config = dir.path().join("tasks.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[slack]
signing_secret_file = "slack-signing-secret"
bot_token_file = "slack-bot-token"
channel = "{CHANNEL}"
api_base_url = "{api}"
users = {{ "UALICE" = "alice", "UBOB" = "bob", "UCAROL" = "carol", "UDAVE" = "dave" }}
{extra}"#
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
    Setup {
        _dir: dir,
        server,
        base,
    }
}

#[tokio::test]
async fn a_signed_click_answers_and_updates_the_message_and_refusals_change_nothing() {
    let (standin, api, mut calls) = StandIn::start().await;
    let setup = start(&api, "");
    let base = &setup.base;
    let mut mcp = Ext::new(&setup.server.url, Some("tok-alice"));
    let task = mcp
        .start("confirm_delete", json!({"filename": "report.txt"}))
        .await;
    mcp.wait(&task, "input_required").await;
    let alice = Person::login(base, "tok-alice").await;

    // The question is posted with Approve / Reject buttons and the board link.
    let posted = next(&mut calls, "chat.postMessage").await;
    assert_eq!(posted.body["channel"], CHANNEL, "{:?}", posted.body);
    let text = posted.body.to_string();
    assert!(text.contains("Delete the file 'report.txt'?"), "{text}");
    assert!(text.contains(&task), "{text}");
    assert!(text.contains(&format!("/board/tasks/{task}")), "{text}");
    assert_eq!(
        buttons(&posted),
        ["mcp_tasks.approve", "mcp_tasks.reject", "mcp_tasks.open"]
    );
    let ts = posted.ts.as_str();
    assert!(!ts.is_empty());
    let waits = || async {
        let (status, detail) = alice.get(&format!("/board/api/tasks/{task}")).await;
        assert_eq!(status, 200, "{detail}");
        assert_eq!(detail["status"], "input_required", "{detail}");
        assert_eq!(detail["questions"].as_array().unwrap().len(), 1, "{detail}");
    };
    let approve = click(&posted, ts, "mcp_tasks.approve", "UALICE");

    // A wrong signature: refused, nothing read.
    let (status, body) = interact(base, "not-the-signing-secret", now(), &approve).await;
    assert_eq!(status, 401, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("signature"),
        "{body}"
    );
    waits().await;

    // A timestamp 6 minutes old (a replay), correctly signed: refused.
    let (status, body) = interact(base, SECRET, now() - 6 * 60, &approve).await;
    assert_eq!(status, 401, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("timestamp"),
        "{body}"
    );
    waits().await;

    // An unmapped Slack user: refused, told so (ephemerally), nothing changed.
    let stranger = click(&posted, ts, "mcp_tasks.approve", "UMALLORY");
    let (status, body) = interact(base, SECRET, now(), &stranger).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["response_type"], "ephemeral", "{body}");
    assert!(
        body["text"].as_str().unwrap().contains("not mapped"),
        "{body}"
    );
    let told = next(&mut calls, "chat.postEphemeral").await;
    assert_eq!(told.body["user"], "UMALLORY");
    waits().await;

    // A mapped user who may not answer (bob: not the task's owner, not an operator).
    let bob = click(&posted, ts, "mcp_tasks.approve", "UBOB");
    let (status, body) = interact(base, SECRET, now(), &bob).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["text"].as_str().unwrap().contains("may not answer"),
        "{body}"
    );
    let told = next(&mut calls, "chat.postEphemeral").await;
    assert_eq!(told.body["user"], "UBOB");
    waits().await;
    assert_eq!(standin.count("chat.update"), 0, "refusals update nothing");

    // Alice's click, signed as Slack signs it: answered, the task goes on, the
    // message says who approved and loses its buttons.
    let (status, body) = interact(base, SECRET, now(), &approve).await;
    assert_eq!(status, 200, "{body}");
    let done = mcp.wait(&task, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["deleted"], true,
        "{done}"
    );
    let update = next(&mut calls, "chat.update").await;
    assert_eq!(update.body["channel"], CHANNEL);
    assert_eq!(update.body["ts"], ts);
    let text = update.body["text"].as_str().unwrap();
    assert!(text.contains("Approved by @alice at "), "{text}");
    assert!(
        !update.body["blocks"].to_string().contains("\"actions\""),
        "no buttons left: {}",
        update.body
    );

    // The same click again: the question no longer waits; nothing more is updated.
    let (status, body) = interact(base, SECRET, now(), &approve).await;
    assert_eq!(status, 409, "{body}");
    next(&mut calls, "chat.postEphemeral").await;
    assert_eq!(standin.count("chat.update"), 1);
    assert_eq!(standin.count("chat.postMessage"), 1);
}

#[tokio::test]
async fn a_form_is_answered_through_its_modal_and_declined_with_a_button() {
    let (_standin, api, mut calls) = StandIn::start().await;
    let setup = start(&api, "");
    let base = &setup.base;
    let mut mcp = Ext::new(&setup.server.url, Some("tok-alice"));
    let task = mcp.start("multi_input", json!({})).await;
    mcp.wait(&task, "input_required").await;

    // Two questions, two messages, each with "Answer…" and Decline.
    let first = next(&mut calls, "chat.postMessage").await;
    let second = next(&mut calls, "chat.postMessage").await;
    let (name, colour) = if first.body.to_string().contains("What is your name?") {
        (first, second)
    } else {
        (second, first)
    };
    for posted in [&name, &colour] {
        assert_eq!(
            buttons(posted),
            ["mcp_tasks.answer", "mcp_tasks.decline", "mcp_tasks.open"]
        );
    }
    let (name_ts, colour_ts) = (name.ts.as_str(), colour.ts.as_str());

    // "Answer…" opens the form's modal with the click's trigger.
    let (status, body) = interact(
        base,
        SECRET,
        now(),
        &click(&name, name_ts, "mcp_tasks.answer", "UALICE"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let opened = next(&mut calls, "views.open").await;
    assert_eq!(opened.body["trigger_id"], "1234567890.0987654321.abcdef");
    let view = &opened.body["view"];
    assert_eq!(view["type"], "modal");
    let input = view["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "input")
        .expect("an input")
        .clone();
    let block_id = input["block_id"].as_str().unwrap();
    let action_id = input["element"]["action_id"].as_str().unwrap();
    let submission = |value: Value| {
        json!({
            "type": "view_submission",
            "user": {"id": "UALICE", "username": "alice"},
            "view": {
                "id": "V0MODAL",
                "type": "modal",
                "callback_id": view["callback_id"],
                "private_metadata": view["private_metadata"],
                "state": {"values": {block_id: {action_id: value}}},
            },
        })
    };

    // An empty name is refused in the modal (the field says why), nothing changes.
    let (status, body) = interact(
        base,
        SECRET,
        now(),
        &submission(json!({"type": "plain_text_input", "value": null})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["response_action"], "errors", "{body}");
    assert!(body["errors"][block_id].is_string(), "{body}");

    let (status, body) = interact(
        base,
        SECRET,
        now(),
        &submission(json!({"type": "plain_text_input", "value": "Ada"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let update = next(&mut calls, "chat.update").await;
    assert_eq!(update.body["ts"], name_ts);
    let text = update.body["text"].as_str().unwrap();
    assert!(text.contains("Answered by @alice"), "{text}");

    // Decline the colour with its button.
    let (status, body) = interact(
        base,
        SECRET,
        now(),
        &click(&colour, colour_ts, "mcp_tasks.decline", "UALICE"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let update = next(&mut calls, "chat.update").await;
    assert_eq!(update.body["ts"], colour_ts);
    assert!(
        update.body["text"]
            .as_str()
            .unwrap()
            .contains("Declined by @alice"),
        "{}",
        update.body
    );
    let done = mcp.wait(&task, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"name": "Ada", "colour": "(no answer)"}),
        "{done}"
    );
}

#[tokio::test]
async fn a_question_answered_on_the_board_loses_its_buttons_in_slack() {
    let (standin, api, mut calls) = StandIn::start().await;
    let setup = start(&api, "");
    let mut mcp = Ext::new(&setup.server.url, Some("tok-alice"));
    let task = mcp
        .start("confirm_delete", json!({"filename": "notes.txt"}))
        .await;
    let posted = next(&mut calls, "chat.postMessage").await;
    let alice = Person::login(&setup.base, "tok-alice").await;
    let key = alice.question(&task).await;
    let (status, body) = alice
        .post(
            &format!("/board/api/tasks/{task}/answer"),
            json!({"key": key, "action": "decline"}),
            true,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let update = next(&mut calls, "chat.update").await;
    assert_eq!(update.body["ts"], posted.ts.as_str());
    let text = update.body["text"].as_str().unwrap();
    assert!(text.contains("answered elsewhere"), "{text}");
    assert!(!update.body["blocks"].to_string().contains("\"actions\""));
    mcp.wait(&task, "completed").await;
    // A click on the old message now: refused, the message not touched again.
    let approve = click(&posted, &posted.ts, "mcp_tasks.approve", "UALICE");
    let (status, body) = interact(&setup.base, SECRET, now(), &approve).await;
    assert_eq!(status, 409, "{body}");
    next(&mut calls, "chat.postEphemeral").await;
    assert_eq!(standin.count("chat.update"), 1);
}

#[tokio::test]
async fn an_approval_is_decided_by_its_approvers_from_slack_with_a_reason_on_reject() {
    let (standin, api, mut calls) = StandIn::start().await;
    let rules =
        "\n[groups]\nops = [\"carol\"]\n\n[[approval]]\ntool = \"deploy\"\napprovers = [\"ops\"]\n";
    let setup = start(&api, rules);
    let base = &setup.base;
    let mut mcp = Ext::new(&setup.server.url, Some("tok-alice"));
    let task = mcp
        .start("deploy", json!({"service": "web", "env": "prod"}))
        .await;
    mcp.wait(&task, "input_required").await;
    let posted = next(&mut calls, "chat.postMessage").await;
    assert_eq!(
        buttons(&posted),
        ["mcp_tasks.approve", "mcp_tasks.reject", "mcp_tasks.open"]
    );
    let text = posted.body["blocks"].to_string();
    assert!(text.contains("Approvers: ops"), "{text}");
    assert!(text.contains("\\\"service\\\": \\\"web\\\""), "{text}");

    // The task's owner is no approver: refused, nothing changed.
    let (status, body) = interact(
        base,
        SECRET,
        now(),
        &click(&posted, &posted.ts, "mcp_tasks.approve", "UALICE"),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert!(body["text"].as_str().unwrap().contains("ops"), "{body}");
    next(&mut calls, "chat.postEphemeral").await;
    mcp.wait(&task, "input_required").await;

    // Carol (in ops) rejects: a modal asks why; a blank reason is refused in it.
    let (status, body) = interact(
        base,
        SECRET,
        now(),
        &click(&posted, &posted.ts, "mcp_tasks.reject", "UCAROL"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let opened = next(&mut calls, "views.open").await;
    let view = opened.body["view"].clone();
    assert_eq!(view["callback_id"], "mcp_tasks.reason");
    let submit = |reason: &str| {
        json!({
            "type": "view_submission",
            "user": {"id": "UCAROL", "username": "carol"},
            "view": {
                "id": "V0REASON",
                "type": "modal",
                "callback_id": view["callback_id"],
                "private_metadata": view["private_metadata"],
                "state": {"values": {"reason": {"value": {"type": "plain_text_input", "value": reason}}}},
            },
        })
    };
    let (status, body) = interact(base, SECRET, now(), &submit("  ")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["response_action"], "errors", "{body}");
    mcp.wait(&task, "input_required").await;
    let (status, body) = interact(base, SECRET, now(), &submit("not on a Friday")).await;
    assert_eq!(status, 200, "{body}");
    let update = next(&mut calls, "chat.update").await;
    assert_eq!(update.body["ts"], posted.ts.as_str());
    let text = update.body["text"].as_str().unwrap();
    assert!(
        text.contains("Rejected by @carol at ") && text.ends_with(": not on a Friday"),
        "{text}"
    );
    let done = mcp.wait(&task, "completed").await;
    assert!(done.to_string().contains("not on a Friday"), "{done}");

    // Another call: carol approves with the button, the tool runs.
    let second = mcp
        .start("deploy", json!({"service": "api", "env": "staging"}))
        .await;
    let posted = next(&mut calls, "chat.postMessage").await;
    assert!(posted.body.to_string().contains(&second));
    let (status, body) = interact(
        base,
        SECRET,
        now(),
        &click(&posted, &posted.ts, "mcp_tasks.approve", "UCAROL"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let update = next(&mut calls, "chat.update").await;
    assert!(
        update.body["text"]
            .as_str()
            .unwrap()
            .contains("Approved by @carol"),
        "{}",
        update.body
    );
    let done = mcp.wait(&second, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["env"], "staging",
        "{done}"
    );
    assert_eq!(standin.count("chat.update"), 2);
}

#[tokio::test]
async fn a_quorum_needs_two_people_in_slack_and_one_click_twice_counts_once() {
    let (standin, api, mut calls) = StandIn::start().await;
    let rules = "\n[groups]\nops = [\"carol\", \"dave\"]\n\n[[approval]]\ntool = \"deploy\"\napprovers = [\"ops\"]\nrequired = 2\n";
    let setup = start(&api, rules);
    let base = &setup.base;
    let mut mcp = Ext::new(&setup.server.url, Some("tok-alice"));
    let task = mcp
        .start("deploy", json!({"service": "web", "env": "prod"}))
        .await;
    let first = next(&mut calls, "chat.postMessage").await;
    let text = first.body["blocks"].to_string();
    assert!(text.contains("2 approvals needed, 0 given"), "{text}");
    let (status, body) = interact(
        base,
        SECRET,
        now(),
        &click(&first, &first.ts, "mcp_tasks.approve", "UCAROL"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let update = next(&mut calls, "chat.update").await;
    assert_eq!(update.body["ts"], first.ts.as_str());
    // The next round is a new question: a new message, saying who approved so far.
    let second = next(&mut calls, "chat.postMessage").await;
    let text = second.body["blocks"].to_string();
    assert!(
        text.contains("2 approvals needed, 1 given (carol)"),
        "{text}"
    );
    mcp.wait(&task, "input_required").await;

    // Carol again: her vote counts once; refused, the task still waits.
    let (status, body) = interact(
        base,
        SECRET,
        now(),
        &click(&second, &second.ts, "mcp_tasks.approve", "UCAROL"),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    next(&mut calls, "chat.postEphemeral").await;
    mcp.wait(&task, "input_required").await;

    // Dave makes two.
    let (status, body) = interact(
        base,
        SECRET,
        now(),
        &click(&second, &second.ts, "mcp_tasks.approve", "UDAVE"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let update = next(&mut calls, "chat.update").await;
    assert_eq!(update.body["ts"], second.ts.as_str());
    assert!(
        update.body["text"]
            .as_str()
            .unwrap()
            .contains("Approved by @dave"),
        "{}",
        update.body
    );
    let done = mcp.wait(&task, "completed").await;
    assert_eq!(done["result"]["structuredContent"]["env"], "prod", "{done}");
    assert_eq!(standin.count("chat.update"), 2);
}

/// Runs `serve` with a `[slack]` section of `slack` (in a folder holding the files
/// `files`) and returns its exit code and stderr; it must stop by itself, and is killed
/// (failing the test) if it does not within the wait.
fn serve_refused(slack: &str, files: &[(&str, &str)]) -> (Option<i32>, String) {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let config = dir.path().join("tasks.toml");
    std::fs::write(&config, format!("[slack]\n{slack}")).unwrap();
    let mut child = common::command(
        dir.path(),
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database",
            "memory:",
            "--config",
            config.to_str().unwrap(),
        ],
    )
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    // The exit, as a signal: a thread waits on the child and reports it.
    let pid = child.id();
    let mut stderr_pipe = child.stderr.take().unwrap();
    let (exited, exit) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = exited.send(child.wait().ok().and_then(|s| s.code()));
    });
    let code = match exit.recv_timeout(WAIT * 2) {
        Ok(code) => code,
        Err(_) => {
            // Stops the process this test started, by its pid.
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
            panic!("serve did not stop on a wrong [slack] section");
        }
    };
    let mut stderr = String::new();
    stderr_pipe.read_to_string(&mut stderr).unwrap();
    (code, stderr)
}

#[test]
fn a_wrong_slack_section_stops_the_server_at_start_naming_what_to_fix() {
    let section = "signing_secret_file = \"secret\"\nbot_token_file = \"token\"\nchannel = \"C1\"\nusers = { \"U1\" = \"alice\" }\n";
    let (code, stderr) = serve_refused(section, &[("token", "xoxb-1\n")]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("[slack]: reading the signing secret") && stderr.contains("secret"),
        "{stderr}"
    );
    let (code, stderr) = serve_refused(section, &[("secret", "\n  \n"), ("token", "xoxb-1\n")]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("is empty"), "{stderr}");
    let (code, stderr) = serve_refused(
        &section.replace("\"C1\"", "\" \""),
        &[("secret", "s3cret\n"), ("token", "xoxb-1\n")],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("'channel' is empty"), "{stderr}");
    let (code, stderr) = serve_refused(
        &format!("{section}colour = \"red\"\n"),
        &[("secret", "s3cret\n"), ("token", "xoxb-1\n")],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("colour"), "{stderr}");
}
