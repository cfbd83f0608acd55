//! Signed webhooks against the reference verifier: real deliveries of the binary are
//! checked by the Python receiver of docs/board.md ("Signed deliveries") with the
//! reference `standardwebhooks` library, pinned and installed into target/webhooks by
//! scripts/webhooks-venv.sh. Without that venv the test prints a notice and passes,
//! except under `CI`, where it fails (scripts/test.sh installs it first).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod board_support;
mod common;

use axum::http::{HeaderMap, StatusCode};
use board_support::{Ext, Receiver};
use common::serve;
use mcp_tasks_testkit::WAIT;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use tokio::sync::Notify;

/// The version scripts/webhooks-venv.sh installs.
const STANDARDWEBHOOKS_VERSION: &str = "1.1.0";
/// Names the Python holding standardwebhooks, instead of target/webhooks/venv.
const PYTHON_VAR: &str = "MCP_TASKS_STANDARDWEBHOOKS_PYTHON";

/// Two secrets of a rotation: the new one (first in the file) and the old one.
const NEW: &str = "whsec_JegyrP0WvihSoJSpcGqXWOclo1AVAvd9MxSkLS6MBus=";
const OLD: &str = "whsec_JGIeqo3EaWsxZmC2ceqsh2dS28ay6Cb5MXFXM1Qu2GM=";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python with the pinned standardwebhooks, or `None` with a notice (a panic under
/// `CI`).
fn verifier_python() -> Option<PathBuf> {
    let python = std::env::var_os(PYTHON_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/webhooks/venv/bin/python"));
    let version = Command::new(&python)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('standardwebhooks'))",
        ])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string());
    match version {
        Some(v) if v == STANDARDWEBHOOKS_VERSION => Some(python),
        found => {
            let why = format!(
                "{} has standardwebhooks {found:?}, {STANDARDWEBHOOKS_VERSION} expected: run \
                 `bash scripts/webhooks-venv.sh` (or set {PYTHON_VAR})",
                python.display()
            );
            assert!(
                std::env::var_os("CI").is_none(),
                "the signed-webhook test must run under CI: {why}"
            );
            eprintln!("skipping the signed-webhook test: {why}");
            None
        }
    }
}

/// The receiver example of docs/board.md: the first ```python block after the
/// "Signed deliveries" heading.
fn docs_receiver() -> String {
    let text = std::fs::read_to_string(root().join("docs/board.md")).unwrap();
    let section = text
        .split_once("### Signed deliveries")
        .expect("docs/board.md has a 'Signed deliveries' section")
        .1;
    let code = section
        .split_once("```python\n")
        .expect("the section has a Python receiver")
        .1;
    code.split_once("\n```").unwrap().0.to_string()
}

/// The docs' receiver running with one secret, killed when dropped.
struct PyReceiver {
    child: Child,
    url: String,
    lines: mpsc::Receiver<String>,
    log: PathBuf,
}

impl PyReceiver {
    fn start(python: &Path, script: &Path, secret: &str, log: PathBuf) -> Self {
        let mut child = Command::new(python)
            .arg(script)
            .env("WEBHOOK_SECRET", secret)
            .env("PORT", "0")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start the Python receiver");
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        let mut receiver = PyReceiver {
            child,
            url: String::new(),
            lines,
            log,
        };
        let first = receiver.line("its port");
        let port = first
            .strip_prefix("listening on port ")
            .unwrap_or_else(|| panic!("unexpected first line: {first}"));
        receiver.url = format!("http://127.0.0.1:{port}/");
        receiver
    }

    /// The next line it prints, waiting at most [`WAIT`] * 3.
    fn line(&self, what: &str) -> String {
        self.lines.recv_timeout(WAIT * 3).unwrap_or_else(|e| {
            panic!(
                "the Python receiver printed no line ({what}): {e}; its stderr:\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            )
        })
    }
}

impl Drop for PyReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One request the recorder got: its path, headers and the body as sent.
#[derive(Debug, Clone)]
struct Recorded {
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Records every request with its raw body; the first request to `/signed` gets 503,
/// so that delivery is retried.
struct Recorder {
    got: Arc<Mutex<Vec<Recorded>>>,
    arrived: Arc<Notify>,
}

impl Recorder {
    async fn start() -> (Self, u16) {
        let reserved = Receiver::reserve();
        let port = reserved.port;
        let got: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let arrived = Arc::new(Notify::new());
        let (state, signal) = (Arc::clone(&got), Arc::clone(&arrived));
        let app = axum::Router::new().fallback(
            move |uri: axum::http::Uri, headers: HeaderMap, body: String| {
                let (state, signal) = (Arc::clone(&state), Arc::clone(&signal));
                async move {
                    let mut got = state.lock().unwrap();
                    let first_signed =
                        uri.path() == "/signed" && !got.iter().any(|r| r.path == "/signed");
                    got.push(Recorded {
                        path: uri.path().to_string(),
                        headers: headers
                            .iter()
                            .map(|(n, v)| {
                                (n.as_str().to_string(), v.to_str().unwrap_or("").to_string())
                            })
                            .collect(),
                        body,
                    });
                    drop(got);
                    signal.notify_waiters();
                    if first_signed {
                        StatusCode::SERVICE_UNAVAILABLE
                    } else {
                        StatusCode::OK
                    }
                }
            },
        );
        // The reserved socket starts listening (see `board_support::Receiver`).
        let listener = reserved.listen();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (Recorder { got, arrived }, port)
    }

    /// Waits (on the arrival signal) until `pick` finds something.
    async fn until<T>(&self, mut pick: impl FnMut(&[Recorded]) -> Option<T>) -> T {
        tokio::time::timeout(WAIT * 3, async {
            loop {
                let arrived = self.arrived.notified();
                if let Some(found) = pick(&self.got.lock().unwrap()) {
                    return found;
                }
                arrived.await;
            }
        })
        .await
        .expect("the deliveries arrived in time")
    }
}

/// Posts `body` with the Standard Webhooks headers `headers` to a receiver; its status
/// and answer.
async fn replay(url: &str, headers: &[(&str, String)], body: &str) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, value.as_str());
    }
    let response = request.send().await.expect("the receiver answers");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// The `webhook-*` headers of a recorded delivery, to replay it (altered or not).
fn standard_headers(r: &Recorded) -> Vec<(&'static str, String)> {
    ["webhook-id", "webhook-timestamp", "webhook-signature"]
        .into_iter()
        .filter_map(|name| Some((name, r.header(name)?.to_string())))
        .collect()
}

fn with(
    headers: &[(&'static str, String)],
    name: &str,
    value: String,
) -> Vec<(&'static str, String)> {
    headers
        .iter()
        .map(|(n, v)| (*n, if *n == name { value.clone() } else { v.clone() }))
        .collect()
}

#[tokio::test]
async fn deliveries_verify_with_the_reference_library_and_alterations_are_refused() {
    let Some(python) = verifier_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("receiver.py");
    std::fs::write(&script, docs_receiver()).unwrap();
    // Receivers that each hold one secret of the rotation.
    let holds_new = PyReceiver::start(&python, &script, NEW, dir.path().join("new.log"));
    let holds_old = PyReceiver::start(&python, &script, OLD, dir.path().join("old.log"));
    let (recorder, port) = Recorder::start().await;

    std::fs::write(
        dir.path().join("webhook-secret"),
        format!("# the current secret first, then the one being retired\n{NEW}\n{OLD}\n"),
    )
    .unwrap();
    let config = dir.path().join("tasks.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[[notify]]
name = "to-new"
url = "{new_url}"
on = ["input_required"]
secret_file = "webhook-secret"

[[notify]]
name = "to-old"
url = "{old_url}"
on = ["input_required"]
secret_file = "webhook-secret"

[[notify]]
name = "signed"
url = "http://127.0.0.1:{port}/signed"
on = ["input_required"]
secret_file = "webhook-secret"

[[notify]]
name = "inline"
url = "http://127.0.0.1:{port}/inline"
on = ["input_required"]
secrets = ["{NEW}"]

[[notify]]
name = "plain"
url = "http://127.0.0.1:{port}/plain"
on = ["input_required"]
"#,
            new_url = holds_new.url,
            old_url = holds_old.url,
        ),
    )
    .unwrap();
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let server = serve(&[
        "--database",
        &db,
        "--config",
        config.to_str().unwrap(),
        "--notify-retry",
        "50ms",
    ]);
    let mut mcp = Ext::capable(&server.url, None);
    let task = mcp
        .start("book_meeting", json!({"subject": "offsite"}))
        .await;
    mcp.wait(&task, "input_required").await;

    // A real delivery, signed with both secrets, is verified by each receiver with the
    // one secret it holds.
    for receiver in [&holds_new, &holds_old] {
        let line = receiver.line("a verified delivery");
        assert!(
            line.starts_with("verified msg_") && line.ends_with(" task.input_required"),
            "{line}"
        );
    }

    let (signed, retried, inline, plain) = recorder
        .until(|got| {
            let signed: Vec<&Recorded> = got.iter().filter(|r| r.path == "/signed").collect();
            let inline = got.iter().find(|r| r.path == "/inline")?;
            let plain = got.iter().find(|r| r.path == "/plain")?;
            match signed[..] {
                [first, second, ..] => {
                    Some((first.clone(), second.clone(), inline.clone(), plain.clone()))
                }
                _ => None,
            }
        })
        .await;
    // A retry is the same message: the same id and body, its own signature list.
    let id = signed.header("webhook-id").unwrap().to_string();
    assert!(id.starts_with("msg_") && !id.contains('.'), "{id}");
    assert_eq!(retried.header("webhook-id"), Some(id.as_str()));
    assert_eq!(retried.body, signed.body);
    let signatures = retried.header("webhook-signature").unwrap();
    assert_eq!(signatures.split(' ').count(), 2, "{signatures}");
    assert!(signatures.split(' ').all(|s| s.starts_with("v1,")));
    assert!(retried.header("x-mcp-tasks-delivery").is_some());
    let body: serde_json::Value = serde_json::from_str(&retried.body).unwrap();
    assert_eq!(body["task"]["id"], task.as_str());
    // Another sink's delivery of the same event is another message.
    assert_ne!(inline.header("webhook-id"), Some(id.as_str()));
    assert_eq!(
        inline
            .header("webhook-signature")
            .unwrap()
            .split(' ')
            .count(),
        1
    );
    // Without a secret: an id and a timestamp, no signature.
    assert!(plain
        .header("webhook-id")
        .is_some_and(|v| v.starts_with("msg_")));
    assert!(plain
        .header("webhook-timestamp")
        .is_some_and(|v| v.parse::<i64>().is_ok()));
    assert_eq!(plain.header("webhook-signature"), None);

    // Replayed as sent: both receivers accept the rotation's delivery.
    let headers = standard_headers(&retried);
    for receiver in [&holds_new, &holds_old] {
        let (status, text) = replay(&receiver.url, &headers, &retried.body).await;
        assert_eq!(status, 204, "{text}");
        assert!(receiver
            .line("the replay")
            .starts_with(&format!("verified {id} ")));
    }
    // Signed with the new secret alone: the receiver holding only the old one refuses.
    let inline_headers = standard_headers(&inline);
    let (status, _) = replay(&holds_new.url, &inline_headers, &inline.body).await;
    assert_eq!(status, 204);
    assert!(holds_new
        .line("the inline replay")
        .starts_with("verified msg_"));
    let (status, text) = replay(&holds_old.url, &inline_headers, &inline.body).await;
    assert_eq!(
        (status, text.as_str()),
        (401, "No matching signature found")
    );

    // Alterations are refused, and change nothing the receiver prints.
    let tampered = retried.body.replace("offsite", "offsitf");
    assert_ne!(tampered, retried.body);
    let (status, text) = replay(&holds_new.url, &headers, &tampered).await;
    assert_eq!(
        (status, text.as_str()),
        (401, "No matching signature found")
    );
    let sent_at: i64 = retried
        .header("webhook-timestamp")
        .unwrap()
        .parse()
        .unwrap();
    let shifted = with(&headers, "webhook-timestamp", (sent_at - 1).to_string());
    let (status, text) = replay(&holds_new.url, &shifted, &retried.body).await;
    assert_eq!(
        (status, text.as_str()),
        (401, "No matching signature found")
    );
    let other_id = with(
        &headers,
        "webhook-id",
        "msg_00000000000000000000000000000000".into(),
    );
    let (status, text) = replay(&holds_new.url, &other_id, &retried.body).await;
    assert_eq!(
        (status, text.as_str()),
        (401, "No matching signature found")
    );
    let unsigned = standard_headers(&plain);
    let (status, text) = replay(&holds_new.url, &unsigned, &plain.body).await;
    assert_eq!((status, text.as_str()), (401, "Missing required headers"));

    // An old timestamp (a replay 6 minutes later; the library's tolerance is 5) is
    // refused for its age: with the timestamp altered, and correctly signed at that
    // time by the server's signer (which, at the current time, passes).
    let old = sent_at - 360;
    let (status, text) = replay(
        &holds_new.url,
        &with(&headers, "webhook-timestamp", old.to_string()),
        &retried.body,
    )
    .await;
    assert_eq!((status, text.as_str()), (401, "Message timestamp too old"));
    let secret = mcp_tasks_board::WebhookSecret::parse(NEW).unwrap();
    let now = chrono::Utc::now().timestamp();
    let fresh = vec![
        ("webhook-id", id.clone()),
        ("webhook-timestamp", now.to_string()),
        ("webhook-signature", secret.sign(&id, now, &retried.body)),
    ];
    let (status, text) = replay(&holds_new.url, &fresh, &retried.body).await;
    assert_eq!(status, 204, "{text}");
    assert!(holds_new
        .line("the fresh re-signing")
        .starts_with("verified"));
    let stale = vec![
        ("webhook-id", id.clone()),
        ("webhook-timestamp", old.to_string()),
        ("webhook-signature", secret.sign(&id, old, &retried.body)),
    ];
    let (status, text) = replay(&holds_new.url, &stale, &retried.body).await;
    assert_eq!((status, text.as_str()), (401, "Message timestamp too old"));

    // Nothing refused was printed as verified.
    drop(server);
    drop(holds_old);
    let extra: Vec<String> = holds_new.lines.try_iter().collect();
    assert!(extra.is_empty(), "{extra:?}");
}

/// A `webhook-*` header in a sink's own `headers` is refused at start, and so is a
/// secret that is not `whsec_` base64; the message names the sink, not the secret.
#[test]
fn wrong_secrets_and_standard_headers_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "headers = { Webhook-Signature = \"v1,x\" }",
            "header 'Webhook-Signature' is set by the server",
        ),
        (
            "secrets = [\"hunter2-not-a-whsec\"]",
            "starts with 'whsec_'",
        ),
        ("secret_file = \"missing-file\"", "reading the secret file"),
    ];
    for (line, expected) in cases {
        let config = dir.path().join("tasks.toml");
        std::fs::write(
            &config,
            format!("[[notify]]\nname = \"hooks\"\nurl = \"http://127.0.0.1:9/x\"\n{line}\n"),
        )
        .unwrap();
        let mut child = Command::new(common::BIN)
            .args([
                "serve",
                "--demo",
                "--database",
                "memory:",
                "--listen",
                "127.0.0.1:0",
                "--config",
                config.to_str().unwrap(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Its stderr ends when it exits: read to the end on a thread and wait for that
        // (bounded: a server that started after all is killed, and the test fails).
        let mut pipe = child.stderr.take().unwrap();
        let (done, ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
            let _ = done.send(text);
        });
        let (stderr, in_time) = match ended.recv_timeout(WAIT) {
            Ok(text) => (text, true),
            Err(_) => {
                let _ = child.kill();
                (ended.recv().unwrap_or_default(), false)
            }
        };
        // A server killed here did not refuse: no status counts then.
        let status = child.wait().ok().filter(|_| in_time);
        assert!(
            status.is_some_and(|s| !s.success()),
            "{line}: the server did not refuse to start: {stderr}"
        );
        assert!(
            stderr.contains(expected) && stderr.contains("'hooks'"),
            "{line}: {stderr}"
        );
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
}
