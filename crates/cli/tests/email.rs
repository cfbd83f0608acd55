//! Mail to approvers against a real SMTP server (aiosmtpd from PyPI, pinned, in
//! target/email/venv: scripts/email-venv.sh; tests/email/smtp_sink.py runs it): an
//! approval assigned to ops mails alice and bob, multipart text and HTML with the tool,
//! arguments, who asked, the deadline and signed Approve / Reject links; the server
//! refuses the first mail with a 451 and gets it later from the outbox's retry; the
//! Approve link approves once (a second use says it was used), the decision is recorded
//! as made by email, and the outcome is mailed in the same thread.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod board_support;
mod common;

use board_support::{base_of, http, Ext};
use common::spawn_listening;
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The version scripts/email-venv.sh installs.
const AIOSMTPD_VERSION: &str = "1.4.6";
/// Names the Python holding aiosmtpd, instead of target/email/venv.
const PYTHON_VAR: &str = "MCP_TASKS_AIOSMTPD_PYTHON";
const PUBLIC: &str = "https://tasks.example.com";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python with the pinned aiosmtpd, or `None` with a notice (a panic under `CI`).
fn smtp_python() -> Option<PathBuf> {
    let python = std::env::var_os(PYTHON_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/email/venv/bin/python"));
    let version = Command::new(&python)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('aiosmtpd'))",
        ])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string());
    match version {
        Some(v) if v == AIOSMTPD_VERSION => Some(python),
        found => {
            let why = format!(
                "{} has aiosmtpd {found:?}, {AIOSMTPD_VERSION} expected: run `bash scripts/email-venv.sh` (or set {PYTHON_VAR})",
                python.display()
            );
            assert!(
                std::env::var_os("CI").is_none(),
                "the email test must run under CI: {why}"
            );
            eprintln!("note: skipping the email test: {why}");
            None
        }
    }
}

/// The SMTP server, stopped when dropped (its stdin closes, and it is killed).
struct Smtp {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Smtp {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Smtp {
    /// Starts it on a free loopback port, refusing the first `refuse` mails.
    fn start(python: &Path, refuse: u32) -> Smtp {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(python)
            .arg(root().join("tests/email/smtp_sink.py"))
            .arg(port.to_string())
            .arg(dir.path())
            .arg(refuse.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "listening", "the SMTP server did not start");
        Smtp { child, port, dir }
    }

    /// Every mail received so far.
    fn mails(&self) -> Vec<Value> {
        let mut mails: Vec<(u64, Value)> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let n = name.strip_suffix(".json")?.parse().ok()?;
                let text = std::fs::read_to_string(e.path()).ok()?;
                Some((n, serde_json::from_str(&text).ok()?))
            })
            .collect();
        mails.sort_by_key(|(n, _)| *n);
        mails.into_iter().map(|(_, m)| m).collect()
    }

    /// How many mails it refused.
    fn refused(&self) -> usize {
        std::fs::read_to_string(self.dir.path().join("refused"))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }

    /// Waits for the mail to `to` whose subject starts with `subject`.
    async fn mail_to(&self, to: &str, subject: &str) -> Value {
        eventually(WAIT, || async {
            self.mails().into_iter().find(|m| {
                m["headers"]["To"].as_str().is_some_and(|t| t.contains(to))
                    && m["headers"]["Subject"]
                        .as_str()
                        .is_some_and(|s| s.starts_with(subject))
            })
        })
        .await
    }
}

fn part<'a>(mail: &'a Value, kind: &str) -> &'a str {
    mail["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == kind)
        .and_then(|p| p["body"].as_str())
        .unwrap_or_else(|| panic!("no {kind} part in {mail}"))
}

/// The URL after `label: ` in a mail's text.
fn link_after<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{label}: ")))
        .unwrap_or_else(|| panic!("no {label} link in {text}"))
        .trim()
}

async fn post(base: &str, link: &str) -> (u16, String) {
    let path = link
        .strip_prefix(PUBLIC)
        .expect("a link under the public URL");
    let response = http()
        .post(format!("{base}{path}"))
        .form(&[("go", "1")])
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvers_are_mailed_answer_once_by_email_and_read_the_outcome_in_the_thread() {
    let Some(python) = smtp_python() else { return };
    let smtp = Smtp::start(&python, 1);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tokens.toml"),
        "\"tok-carol\" = \"carol\"\n\"tok-alice\" = \"alice\"\n",
    )
    .unwrap();
    let config = dir.path().join("tasks.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[server]
auth_tokens = "tokens.toml"

[board]
public_url = "{PUBLIC}"

[groups]
ops = ["alice", "bob"]

[[approval]]
tool = "deploy"
approvers = ["ops"]
deadline = "1h"
message = "Deploy to production?"

[email]
host = "127.0.0.1"
port = {port}
tls = "none"
from = "mcp-tasks <tasks@example.com>"

[people]
alice = "alice@example.com"
bob = "bob@example.com"
"#,
            port = smtp.port
        ),
    )
    .unwrap();
    let server = spawn_listening(&[
        "serve",
        "--demo",
        "--log",
        "warn",
        "--listen",
        "127.0.0.1:0",
        "--database",
        "memory:",
        "--notify-retry",
        "100ms",
        "--config",
        config.to_str().unwrap(),
    ]);
    let base = base_of(&server.url);
    let mut carol = Ext::new(&server.url, Some("tok-carol"));
    let task = carol
        .start("deploy", json!({"service": "web", "env": "prod"}))
        .await;
    let id8: String = task.chars().take(8).collect();
    let subject = format!("[mcp-tasks] deploy (task {id8})");

    // One mail to each approver, although the server refused the first attempt.
    let alice = smtp.mail_to("alice@example.com", &subject).await;
    let bob = smtp.mail_to("bob@example.com", &subject).await;
    assert!(smtp.refused() >= 1, "the first mail was refused with a 451");
    for mail in [&alice, &bob] {
        let h = &mail["headers"];
        assert_eq!(h["Subject"], subject.as_str(), "{mail}");
        assert_eq!(h["From"], "mcp-tasks <tasks@example.com>");
        assert!(
            h["Message-ID"].as_str().unwrap().ends_with("@example.com>"),
            "{h}"
        );
        assert!(
            h.get("In-Reply-To").is_none(),
            "the first mail opens the thread: {h}"
        );
        assert_eq!(mail["contentType"], "multipart/alternative");
    }
    let text = part(&alice, "text/plain");
    for needle in [
        "Approval needed: Deploy to production?",
        "Tool: deploy",
        "Asked by: carol",
        "Approvers: ops (1 must approve)",
        "Deadline: 20",
        "\"env\": \"prod\"",
        "\"service\": \"web\"",
        &format!("Open the task on the board: {PUBLIC}/board/tasks/{task}"),
        "Each link works once, answers as alice",
    ] {
        assert!(text.contains(needle), "«{needle}» in:\n{text}");
    }
    let html = part(&alice, "text/html");
    assert!(
        html.contains("Deploy to production?") && html.contains(">Approve</a>"),
        "{html}"
    );
    assert!(
        html.contains("&quot;env&quot;: &quot;prod&quot;"),
        "escaped: {html}"
    );

    // Alice's Approve link approves, once.
    let approve = link_after(text, "Approve");
    let (status, page) = post(&base, approve).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Approved"), "{page}");
    let (status, page) = post(&base, approve).await;
    assert_eq!(status, 409, "{page}");
    assert!(
        page.contains("Already answered") && page.contains("works once"),
        "{page}"
    );
    carol.wait(&task, "completed").await;

    // The outcome, in each approver's thread, says who decided through which channel.
    let outcome = smtp
        .mail_to("alice@example.com", &format!("Re: {subject}"))
        .await;
    assert_eq!(
        outcome["headers"]["In-Reply-To"], alice["headers"]["Message-ID"],
        "{outcome}"
    );
    assert_eq!(
        outcome["headers"]["References"],
        alice["headers"]["Message-ID"]
    );
    let said = part(&outcome, "text/plain");
    assert!(said.contains("The task deploy completed."), "{said}");
    assert!(said.contains("approve by alice via email"), "{said}");
    let to_bob = smtp
        .mail_to("bob@example.com", &format!("Re: {subject}"))
        .await;
    assert_eq!(
        to_bob["headers"]["In-Reply-To"],
        bob["headers"]["Message-ID"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_escalation_is_mailed_to_both_the_old_and_the_new_approvers() {
    let Some(python) = smtp_python() else { return };
    let smtp = Smtp::start(&python, 0);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tokens.toml"),
        "\"tok-carol\" = \"carol\"\n",
    )
    .unwrap();
    let config = dir.path().join("tasks.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[server]
auth_tokens = "tokens.toml"

[board]
public_url = "{PUBLIC}"

[[approval]]
tool = "deploy"
approvers = ["alice"]
deadline = "1s"
on_timeout = "escalate"
escalate_to = ["dave"]

[email]
host = "127.0.0.1"
port = {port}
tls = "none"
from = "tasks@example.com"

[people]
alice = "alice@example.com"
dave = "dave@example.com"
"#,
            port = smtp.port
        ),
    )
    .unwrap();
    let server = spawn_listening(&[
        "serve",
        "--demo",
        "--log",
        "warn",
        "--listen",
        "127.0.0.1:0",
        "--database",
        "memory:",
        "--config",
        config.to_str().unwrap(),
    ]);
    let mut carol = Ext::new(&server.url, Some("tok-carol"));
    let task = carol
        .start("deploy", json!({"service": "web", "env": "prod"}))
        .await;
    let id8: String = task.chars().take(8).collect();
    let subject = format!("[mcp-tasks] deploy (task {id8})");
    let first = smtp.mail_to("alice@example.com", &subject).await;
    // Nobody decided within a second: alice is told, in her thread, and dave is asked.
    let told = smtp
        .mail_to("alice@example.com", &format!("Re: {subject}"))
        .await;
    assert_eq!(
        told["headers"]["In-Reply-To"],
        first["headers"]["Message-ID"]
    );
    let said = part(&told, "text/plain");
    assert!(
        said.contains("by its deadline, so it was escalated to dave. You no longer need"),
        "{said}"
    );
    let dave = smtp.mail_to("dave@example.com", &subject).await;
    let text = part(&dave, "text/plain");
    assert!(text.starts_with("Escalated to you:"), "{text}");
    assert!(
        text.contains("Approve: https://tasks.example.com/board/answer/"),
        "{text}"
    );
}
