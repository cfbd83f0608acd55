//! The Slack side of the Slack app tests: a Web API stand-in on a loopback port that
//! answers as Slack does and records each call on a channel, and interactions signed
//! and shaped as Slack sends them.
#![allow(dead_code)] // each test file compiles this module; not all of them use all of it

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::Json;
use hmac::{Hmac, Mac};
use mcp_tasks_testkit::WAIT;
use serde_json::{json, Value};
use sha2::Sha256;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

use crate::board_support::http;

/// The bot token the stand-in takes.
pub const BOT_TOKEN: &str = "xoxb-test-token";
/// The channel the stand-in answers for.
pub const CHANNEL: &str = "C0TASKS";

/// One Web API call the stand-in took.
#[derive(Debug, Clone)]
pub struct Call {
    /// The Web API method.
    pub method: String,
    /// The JSON body.
    pub body: Value,
    /// The `ts` the stand-in answered (of a posted message).
    pub ts: String,
}

/// A Slack Web API stand-in: answers as Slack does, checks the bot token, records
/// every call (in order) and sends it on a channel.
#[derive(Clone)]
pub struct StandIn {
    calls: Arc<Mutex<Vec<Call>>>,
    sent: mpsc::UnboundedSender<Call>,
    next_ts: Arc<Mutex<u64>>,
}

async fn web_api(
    State(standin): State<StandIn>,
    Path(method): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Json<Value> {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if auth != format!("Bearer {BOT_TOKEN}") {
        return Json(json!({"ok": false, "error": "invalid_auth"}));
    }
    let answer = match method.as_str() {
        "chat.postMessage" => {
            let ts = {
                let mut next = standin.next_ts.lock().unwrap();
                *next += 1;
                format!("1700000000.{:06}", *next)
            };
            json!({"ok": true, "channel": CHANNEL, "ts": ts,
                   "message": {"type": "message", "text": body["text"], "ts": ts, "blocks": body["blocks"]}})
        }
        "chat.update" => {
            json!({"ok": true, "channel": body["channel"], "ts": body["ts"], "text": body["text"],
                                "message": {"text": body["text"], "blocks": body["blocks"]}})
        }
        "chat.postEphemeral" => json!({"ok": true, "message_ts": "1700000099.000001"}),
        "views.open" => json!({"ok": true, "view": body["view"]}),
        _ => json!({"ok": false, "error": "unknown_method"}),
    };
    let call = Call {
        method: method.clone(),
        body,
        ts: answer["ts"].as_str().unwrap_or("").to_string(),
    };
    standin.calls.lock().unwrap().push(call.clone());
    let _ = standin.sent.send(call);
    Json(answer)
}

impl StandIn {
    /// Starts the stand-in; its Web API base URL and the channel of its calls.
    pub async fn start() -> (StandIn, String, mpsc::UnboundedReceiver<Call>) {
        let (sent, received) = mpsc::unbounded_channel();
        let standin = StandIn {
            calls: Arc::default(),
            sent,
            next_ts: Arc::default(),
        };
        let app = axum::Router::new()
            .route("/api/{method}", axum::routing::post(web_api))
            .with_state(standin.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (standin, format!("http://127.0.0.1:{port}/api"), received)
    }

    /// How many calls of `method` were taken so far.
    pub fn count(&self, method: &str) -> usize {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.method == method)
            .count()
    }
}

/// The next call of `method` on the stand-in's channel (others are skipped), bounded.
pub async fn next(calls: &mut mpsc::UnboundedReceiver<Call>, method: &str) -> Call {
    tokio::time::timeout(WAIT * 3, async {
        loop {
            let call = calls.recv().await.expect("the stand-in runs");
            if call.method == method {
                return call;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {method} call reached the Slack stand-in in time"))
}

/// Posts `payload` to the interaction endpoint as Slack does: a `payload` form field,
/// signed with `secret` at `timestamp`. Status and body.
pub async fn interact(base: &str, secret: &str, timestamp: i64, payload: &Value) -> (u16, Value) {
    let body = serde_urlencoded::to_string([("payload", payload.to_string())]).unwrap();
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("v0:{timestamp}:{body}").as_bytes());
    let signature = format!("v0={}", hex::encode(mac.finalize().into_bytes()));
    let response = http()
        .post(format!("{base}/board/slack/interactions"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-slack-request-timestamp", timestamp.to_string())
        .header("x-slack-signature", signature)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A click on the button `action_id` of the posted message `posted` by Slack user
/// `user`, as Slack sends it.
pub fn click(posted: &Call, ts: &str, action_id: &str, user: &str) -> Value {
    let buttons = posted.body["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "actions")
        .expect("an actions block")["elements"]
        .clone();
    let button = buttons
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["action_id"] == action_id)
        .unwrap_or_else(|| panic!("no {action_id} button in {buttons}"))
        .clone();
    json!({
        "type": "block_actions",
        "user": {"id": user, "username": user.to_lowercase(), "team_id": "T0TEAM"},
        "api_app_id": "A0APP",
        "token": "deprecated-verification-token",
        "trigger_id": "1234567890.0987654321.abcdef",
        "team": {"id": "T0TEAM", "domain": "example"},
        "container": {"type": "message", "message_ts": ts, "channel_id": CHANNEL, "is_ephemeral": false},
        "channel": {"id": CHANNEL, "name": "tasks"},
        "message": {"type": "message", "ts": ts, "text": posted.body["text"]},
        "response_url": "https://hooks.slack.invalid/actions/T0TEAM/1/x",
        "actions": [{
            "type": "button",
            "action_id": action_id,
            "block_id": "mcp_tasks.question",
            "value": button["value"],
            "text": button["text"],
            "action_ts": "1700000001.000200"
        }]
    })
}

/// The button `action_id`s of a posted message.
pub fn buttons(posted: &Call) -> Vec<String> {
    posted.body["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().unwrap().clone())
        .map(|e| e["action_id"].as_str().unwrap().to_string())
        .collect()
}
