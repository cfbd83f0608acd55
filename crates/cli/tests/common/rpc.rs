//! A JSON-RPC session over Streamable HTTP (2025-11-25 wire) for the tests that drive
//! several server processes on one store: the same session id works on every replica.
#![allow(dead_code)] // each test file compiles this module; not all of them use all of it

use mcp_tasks_testkit::eventually;
use serde_json::{json, Value};
use std::time::Duration;

/// One initialized session.
pub struct Session {
    pub http: reqwest::Client,
    pub url: String,
    /// The `mcp-session-id`.
    pub id: String,
}

impl Session {
    pub async fn open(url: &str) -> Session {
        let http = reqwest::Client::new();
        let resp = http
            .post(url)
            .header("accept", "application/json")
            .json(&json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"liveness-test","version":"0"}}}))
            .send()
            .await
            .unwrap();
        let id = resp.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_string();
        Session {
            http,
            url: url.to_string(),
            id,
        }
    }

    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        self.http
            .post(&self.url)
            .header("accept", "application/json")
            .header("mcp-session-id", &self.id)
            .json(&json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The same session on another replica.
    pub fn on(&self, url: &str) -> Session {
        Session {
            http: self.http.clone(),
            url: url.to_string(),
            id: self.id.clone(),
        }
    }

    /// The HTTP status of a `ping` on this session (404 once no replica knows it).
    pub async fn ping_status(&self) -> u16 {
        self.http
            .post(&self.url)
            .header("accept", "application/json")
            .header("mcp-session-id", &self.id)
            .json(&json!({"jsonrpc":"2.0","id":1,"method":"ping"}))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    pub async fn status(&self, id: &str) -> Value {
        self.rpc("tasks/get", json!({"taskId": id})).await["result"].clone()
    }

    /// Re-reads the task (up to `within`) until its status is `status`: another
    /// process's death has no signal a test could wait on, only the store shows it.
    pub async fn wait_status(&self, id: &str, status: &str, within: Duration) -> Value {
        let last = std::sync::Mutex::new(Value::Null);
        let found = tokio::time::timeout(
            within,
            eventually(within + within, || async {
                let task = self.status(id).await;
                *last.lock().unwrap() = task.clone();
                (task["status"] == status).then_some(task)
            }),
        )
        .await;
        found.unwrap_or_else(|_| {
            panic!(
                "task {id} not {status} within {within:?}; last seen: {}",
                last.lock().unwrap()
            )
        })
    }

    /// Calls `tool` with `arguments` as a task; returns the task's id.
    pub async fn create_with(&self, tool: &str, arguments: Value) -> String {
        let r = self
            .rpc(
                "tools/call",
                json!({"name": tool, "arguments": arguments, "task": {}}),
            )
            .await;
        r["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_string()
    }

    pub async fn call(&self, tool: &str, seconds: u64) -> Value {
        self.rpc(
            "tools/call",
            json!({"name": tool, "arguments": {"seconds": seconds}, "task": {}}),
        )
        .await
    }

    pub async fn create(&self, tool: &str, seconds: u64) -> String {
        let r = self.call(tool, seconds).await;
        r["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_string()
    }
}
