//! What the board tests share: a stateless extension-wire MCP client with a bearer
//! token, a logged-in board session (cookie and CSRF token), and a webhook receiver.
#![allow(dead_code)] // each test file compiles this module; not all of them use all of it

use reqwest::header::{HeaderMap, COOKIE, LOCATION, SET_COOKIE};
use reqwest::redirect::Policy;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

use mcp_tasks_testkit::{eventually, WAIT};

/// The server's base URL (`http://127.0.0.1:PORT`) from its MCP endpoint.
pub fn base_of(mcp_url: &str) -> String {
    mcp_url.trim_end_matches("/mcp").to_string()
}

/// An HTTP client that does not follow redirects (the tests read them).
pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .expect("http client")
}

/// A stateless 2026-07-28 client (Tasks extension), optionally with a bearer token.
/// It never answers a task's questions itself: people answer them on the board.
pub struct Ext {
    http: reqwest::Client,
    url: String,
    token: Option<String>,
    next_id: i64,
    capabilities: Value,
}

impl Ext {
    /// A client that declares no elicitation or sampling (its tasks' questions reach
    /// the board only with `--board-takes-questions`).
    pub fn new(mcp_url: &str, token: Option<&str>) -> Self {
        Ext {
            http: http(),
            url: mcp_url.to_string(),
            token: token.map(str::to_string),
            next_id: 1,
            capabilities: json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
        }
    }

    /// A client that declares elicitation and sampling (and leaves the answering to
    /// people on the board).
    pub fn capable(mcp_url: &str, token: Option<&str>) -> Self {
        let mut ext = Ext::new(mcp_url, token);
        ext.capabilities["elicitation"] = json!({});
        ext.capabilities["sampling"] = json!({});
        ext
    }

    /// The result of `method` (panics on an error).
    pub async fn result(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": self.capabilities.clone(),
        });
        let id = self.next_id;
        self.next_id += 1;
        let name = ["name", "taskId"]
            .iter()
            .find_map(|k| params.get(*k).and_then(Value::as_str).map(String::from));
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let body: Value = request
            .body(
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
            )
            .send()
            .await
            .expect("send")
            .json()
            .await
            .expect("json body");
        assert!(body.get("error").is_none(), "{method} failed: {body}");
        body["result"].clone()
    }

    /// Calls `tool` and returns the id of the task the server made of it.
    pub async fn start(&mut self, tool: &str, arguments: Value) -> String {
        let created = self
            .result("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert_eq!(created["resultType"], "task", "{created}");
        created["taskId"].as_str().expect("taskId").to_string()
    }

    /// Polls `tasks/get` until the task is in `status`.
    pub async fn wait(&mut self, task: &str, status: &str) -> Value {
        self.wait_for(task, &[status]).await
    }

    /// Polls `tasks/get` until the task is in one of `statuses`.
    pub async fn wait_for(&mut self, task: &str, statuses: &[&str]) -> Value {
        let me = tokio::sync::Mutex::new(self);
        eventually(WAIT, || async {
            let t = me
                .lock()
                .await
                .result("tasks/get", json!({"taskId": task}))
                .await;
            statuses.iter().any(|s| t["status"] == *s).then_some(t)
        })
        .await
    }
}

/// A person logged in to the board.
pub struct Person {
    pub base: String,
    pub cookie: String,
    pub csrf: String,
    http: reqwest::Client,
}

impl Person {
    /// Logs in with `token` through the login form.
    pub async fn login(base: &str, token: &str) -> Self {
        let http = http();
        let response = http
            .post(format!("{base}/board/login"))
            .form(&[("token", token)])
            .send()
            .await
            .expect("login");
        assert_eq!(
            response.status(),
            303,
            "a good token redirects to the board"
        );
        assert_eq!(response.headers()[LOCATION], "/board");
        let set = response.headers()[SET_COOKIE]
            .to_str()
            .expect("cookie")
            .to_string();
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/board"] {
            assert!(set.contains(attribute), "{attribute} missing: {set}");
        }
        let cookie = set.split(';').next().expect("name=value").to_string();
        let me: Value = http
            .get(format!("{base}/board/api/me"))
            .header(COOKIE, &cookie)
            .send()
            .await
            .expect("me")
            .json()
            .await
            .expect("me json");
        let csrf = me["csrf"].as_str().expect("csrf token").to_string();
        Person {
            base: base.to_string(),
            cookie,
            csrf,
            http,
        }
    }

    /// The local user of a board served without authentication (no login; the CSRF
    /// token from `/board/api/me`).
    pub async fn login_local(base: &str) -> Self {
        let http = http();
        let me: Value = http
            .get(format!("{base}/board/api/me"))
            .send()
            .await
            .expect("me")
            .json()
            .await
            .expect("me json");
        Person {
            base: base.to_string(),
            cookie: String::new(),
            csrf: me["csrf"].as_str().expect("csrf token").to_string(),
            http,
        }
    }

    /// `GET` a board path with the cookie: status and JSON body.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let (status, body) = self.page(path).await;
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    /// `GET` a board path with the cookie: status and body as text (a page's HTML, as
    /// a browser without JavaScript sees it).
    pub async fn page(&self, path: &str) -> (u16, String) {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .header(COOKIE, &self.cookie)
            .send()
            .await
            .expect("get");
        let status = response.status().as_u16();
        (status, response.text().await.unwrap_or_default())
    }

    /// `POST` JSON to a board path with the cookie and, when `with_csrf`, the token.
    pub async fn post(&self, path: &str, body: Value, with_csrf: bool) -> (u16, Value) {
        let mut request = self
            .http
            .post(format!("{}{path}", self.base))
            .header(COOKIE, &self.cookie)
            .json(&body);
        if with_csrf {
            request = request.header("x-csrf-token", &self.csrf);
        }
        let response = request.send().await.expect("post");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// The ids of the tasks on the first page of the list.
    pub async fn listed(&self) -> Vec<String> {
        let (status, page) = self.get("/board/api/tasks").await;
        assert_eq!(status, 200, "{page}");
        page["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .map(|t| t["id"].as_str().expect("id").to_string())
            .collect()
    }

    /// Waits until the task asks a question and returns its key.
    pub async fn question(&self, task: &str) -> String {
        eventually(WAIT, || async {
            let (_, detail) = self.get(&format!("/board/api/tasks/{task}")).await;
            detail["questions"][0]["key"].as_str().map(str::to_string)
        })
        .await
    }
}

/// One webhook request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub delivery: String,
    pub body: Value,
}

/// A webhook receiver on a loopback port; records every request and signals each.
#[derive(Clone)]
pub struct Receiver {
    pub got: Arc<Mutex<Vec<Received>>>,
    pub arrived: Arc<Notify>,
}

/// A loopback port held for a receiver that is not up yet. The socket is bound, so no
/// other process can take the port in the meantime (a port picked and released, then
/// bound later, fails with `AddrInUse` when someone else took it), but it does not
/// listen, so connections to it are refused exactly as for a receiver that is down.
pub struct ReservedPort {
    socket: tokio::net::TcpSocket,
    /// The port, to put in a webhook URL.
    pub port: u16,
}

impl ReservedPort {
    /// Starts listening on the reserved port (the same socket).
    pub fn listen(self) -> tokio::net::TcpListener {
        self.socket
            .listen(1024)
            .expect("listen on the reserved port")
    }
}

impl Receiver {
    /// Reserves a loopback port for a receiver that starts later ([`Receiver::start`]).
    pub fn reserve() -> ReservedPort {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket
            .bind(([127, 0, 0, 1], 0).into())
            .expect("bind a loopback port");
        let port = socket.local_addr().expect("addr").port();
        ReservedPort { socket, port }
    }

    /// Starts answering 200 on the reserved port (the same socket starts listening).
    pub async fn start(reserved: ReservedPort) -> Self {
        let receiver = Receiver {
            got: Arc::new(Mutex::new(Vec::new())),
            arrived: Arc::new(Notify::new()),
        };
        let state = receiver.clone();
        let app = axum::Router::new().fallback(
            move |uri: axum::http::Uri, headers: HeaderMap, body: String| {
                let state = state.clone();
                async move {
                    let delivery = headers
                        .get("x-mcp-tasks-delivery")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    let body = serde_json::from_str(&body).unwrap_or(Value::Null);
                    state.got.lock().expect("lock").push(Received {
                        path: uri.path().to_string(),
                        delivery,
                        body,
                    });
                    state.arrived.notify_waiters();
                    "ok"
                }
            },
        );
        let listener = reserved.listen();
        tokio::spawn(async move { axum::serve(listener, app).await });
        receiver
    }

    /// Waits (on the arrival signal) until `pick` finds something among what arrived.
    pub async fn until<T>(&self, mut pick: impl FnMut(&[Received]) -> Option<T>) -> T {
        tokio::time::timeout(WAIT * 6, async {
            loop {
                let arrived = self.arrived.notified();
                if let Some(found) = pick(&self.got.lock().expect("lock")) {
                    return found;
                }
                arrived.await;
            }
        })
        .await
        .expect("the webhook event arrived in time")
    }
}
