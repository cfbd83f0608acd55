//! A client of the 2026-07-28 stateless wire: every request carries its protocol
//! version and capabilities in `_meta` and the routing headers.

use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::{json, Value};

pub const EXT: &str = "io.modelcontextprotocol/tasks";

pub struct Stateless {
    pub http: reqwest::Client,
    pub url: String,
    pub next_id: i64,
    /// Sent as `Authorization: Bearer` when set.
    pub token: Option<String>,
}

impl Stateless {
    pub fn new(url: &str) -> Self {
        Stateless {
            http: reqwest::Client::new(),
            url: url.to_string(),
            next_id: 1,
            token: None,
        }
    }

    /// Sends `method` with the standard headers; `ext` declares the extension.
    pub async fn send(
        &mut self,
        method: &str,
        mut params: Value,
        ext: bool,
        name_header: Option<&str>,
    ) -> (u16, Value) {
        let caps = if ext {
            json!({"elicitation": {}, "extensions": {EXT: {}}})
        } else {
            json!({})
        };
        let meta = params.get("_meta").cloned().unwrap_or(json!({}));
        let mut full_meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
        });
        for (k, v) in meta.as_object().cloned().unwrap_or_default() {
            full_meta[k] = v;
        }
        params["_meta"] = full_meta;
        let id = self.next_id;
        self.next_id += 1;
        let target = name_header.map(String::from).or_else(|| {
            ["name", "taskId"]
                .iter()
                .find_map(|k| params.get(*k).and_then(Value::as_str).map(String::from))
        });
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(t) = target {
            req = req.header("mcp-name", t);
        }
        if let Some(token) = &self.token {
            req = req.bearer_auth(token);
        }
        let resp = req
            .body(
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
            )
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["id"], id, "every response echoes the id: {body}");
        (status, body)
    }

    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let (_, body) = self.send(method, params, true, None).await;
        assert!(body.get("result").is_some(), "{method}: {body}");
        body["result"].clone()
    }

    pub async fn wait(&mut self, task: &str, status: &str) -> Value {
        let client = tokio::sync::Mutex::new(self);
        eventually(WAIT, || async {
            let t = client
                .lock()
                .await
                .result("tasks/get", json!({"taskId": task}))
                .await;
            (t["status"] == status).then_some(t)
        })
        .await
    }
}
