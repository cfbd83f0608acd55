//! The few Slack Web API methods the app calls: `chat.postMessage`, `chat.update`,
//! `chat.postEphemeral` and `views.open`. Each is a JSON `POST` to
//! `{api_base_url}/{method}` with the bot token as a Bearer credential; Slack answers
//! HTTP 200 with `{"ok": false, "error": "…"}` for most failures, so `ok` is what
//! counts.

use mcp_tasks_protocol::Secret;
use serde_json::{json, Value};
use std::time::Duration;

/// Where a message was posted: what `chat.update` needs to change it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MessageRef {
    /// The channel's id (as Slack answered it: `#name` becomes `C…`).
    pub(crate) channel: String,
    /// The message's timestamp, its id within the channel.
    pub(crate) ts: String,
}

/// A client of Slack's Web API with the bot token.
pub(crate) struct Web {
    http: reqwest::Client,
    base: String,
    token: Secret<String>,
}

impl std::fmt::Debug for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Web")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Web {
    /// A client calling `base` (`https://slack.com/api`, or a stand-in) with `token`.
    pub(crate) fn new(
        base: &str,
        token: Secret<String>,
        timeout: Duration,
    ) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .user_agent(concat!("mcp-tasks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("building the Slack HTTP client: {e}"))?;
        Ok(Web {
            http,
            base: base.trim_end_matches('/').to_string(),
            token,
        })
    }

    /// Calls `method` with `body`; the answer when Slack says `ok`.
    async fn call(&self, method: &str, body: Value) -> Result<Value, String> {
        let response = self
            .http
            .post(format!("{}/{method}", self.base))
            .bearer_auth(self.token.expose())
            .json(&body)
            .send()
            .await
            .map_err(|e| format!("Slack {method}: {e}"))?;
        let status = response.status();
        let answer: Value = response
            .json()
            .await
            .map_err(|e| format!("Slack {method} answered {status} without JSON: {e}"))?;
        if answer["ok"] == true {
            Ok(answer)
        } else {
            let error = answer["error"].as_str().unwrap_or("no error given");
            Err(format!(
                "Slack {method} answered {status}, error '{error}' (see Slack's documentation of {method}; 'not_in_channel' means the bot needs inviting, 'invalid_auth' a wrong bot_token_file)"
            ))
        }
    }

    /// Posts a message to `channel`; where it landed.
    pub(crate) async fn post_message(
        &self,
        channel: &str,
        text: &str,
        blocks: Value,
    ) -> Result<MessageRef, String> {
        let answer = self
            .call(
                "chat.postMessage",
                json!({"channel": channel, "text": text, "blocks": blocks, "unfurl_links": false}),
            )
            .await?;
        match (answer["channel"].as_str(), answer["ts"].as_str()) {
            (Some(channel), Some(ts)) => Ok(MessageRef {
                channel: channel.to_string(),
                ts: ts.to_string(),
            }),
            _ => Err("Slack chat.postMessage answered ok without 'channel' and 'ts'".into()),
        }
    }

    /// Replaces the message at `at` with `text` and `blocks`.
    pub(crate) async fn update(
        &self,
        at: &MessageRef,
        text: &str,
        blocks: Value,
    ) -> Result<(), String> {
        self.call(
            "chat.update",
            json!({"channel": at.channel, "ts": at.ts, "text": text, "blocks": blocks}),
        )
        .await
        .map(drop)
    }

    /// Shows `text` to `user` alone in `channel` (why their click did nothing).
    pub(crate) async fn post_ephemeral(
        &self,
        channel: &str,
        user: &str,
        text: &str,
    ) -> Result<(), String> {
        self.call(
            "chat.postEphemeral",
            json!({"channel": channel, "user": user, "text": text}),
        )
        .await
        .map(drop)
    }

    /// Opens `view` (a modal) for the interaction whose `trigger_id` is given (valid
    /// for 3 seconds after the click).
    pub(crate) async fn open_view(&self, trigger_id: &str, view: Value) -> Result<(), String> {
        self.call(
            "views.open",
            json!({"trigger_id": trigger_id, "view": view}),
        )
        .await
        .map(drop)
    }
}
