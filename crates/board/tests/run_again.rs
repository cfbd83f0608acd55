//! "Run again" under approvals, with the principals of docs/approvals.md's example
//! (`ops` = alice and bob approve deploys, `root` is an operator, `agent` calls):
//! an approver who rejected a call cannot revive it, only the owner or an operator
//! may run a call again, the call run again meets its approval from the start where
//! the person who ran it again has no vote, the timelines say who ran it again, and
//! the agent reads the link to the old task through MCP (`tasks/get` `_meta`).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use mcp_tasks_board::{Board, BoardConfig};
use mcp_tasks_engine::{Caller, TaskContext};
use mcp_tasks_protocol::TaskId;
use mcp_tasks_server::approvals::{ApprovalRule, Approvals, APPROVAL_METHOD};
use mcp_tasks_server::auth::{AuthMode, StaticTokens};
use mcp_tasks_server::{NoArgs, Server, ServerConfig, TaskSupport, Tool};
use mcp_tasks_store::MemoryStore;
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const PEOPLE: [(&str, &str); 5] = [
    ("tok-alice", "alice"),
    ("tok-bob", "bob"),
    ("tok-dave", "dave"),
    ("tok-agent", "agent"),
    ("tok-root", "root"),
];

struct Running {
    server: Server,
    base: String,
    http: reqwest::Client,
    deploys: Arc<AtomicUsize>,
    serving: tokio::task::JoinHandle<()>,
}

/// A person logged in to the board: their cookie and CSRF token.
struct Person {
    cookie: String,
    csrf: String,
}

impl Running {
    /// The server of docs/approvals.md's example (a `deploy` tool one of `ops`
    /// approves; `root` an operator), with MCP at `/mcp` and the board.
    async fn start(operators: &[&str]) -> Self {
        let deploys = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&deploys);
        let deploy = Tool::from_fn(
            "deploy",
            "Counts deploys.",
            move |_: NoArgs, _ctx: TaskContext| {
                let counter = Arc::clone(&counter);
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, String>("deployed".to_string())
                }
            },
        )
        .task_support(TaskSupport::Optional);
        let rule: ApprovalRule =
            serde_json::from_value(json!({"tool": "deploy", "approvers": ["ops"]})).unwrap();
        let groups = BTreeMap::from([
            ("ops".to_string(), vec!["alice".into(), "bob".into()]),
            ("leads".to_string(), vec!["dave".into()]),
        ]);
        let tokens: HashMap<String, String> = PEOPLE
            .iter()
            .map(|(t, p)| (t.to_string(), p.to_string()))
            .collect();
        let server = Server::builder()
            .store(Arc::new(MemoryStore::new()))
            .server_config(ServerConfig {
                auth: AuthMode::Required(Arc::new(StaticTokens::new(tokens))),
                ..ServerConfig::default()
            })
            .approvals(Approvals::new(vec![rule], groups).unwrap())
            .tool(deploy)
            .build()
            .await
            .unwrap();
        let board = Board::new(
            server.clone(),
            BoardConfig {
                operators: operators.iter().map(|o| o.to_string()).collect(),
                ..BoardConfig::default()
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let router = server.router("/mcp").merge(board.router());
        let serving = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Running {
            server,
            base,
            http,
            deploys,
            serving,
        }
    }

    async fn login(&self, token: &str) -> Person {
        let response = self
            .http
            .post(format!("{}/board/login", self.base))
            .header("origin", &self.base)
            .form(&[("token", token)])
            .send()
            .await
            .unwrap();
        let cookie = response
            .headers()
            .get("set-cookie")
            .expect("a login sets its cookie")
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_string();
        let mut person = Person {
            cookie,
            csrf: String::new(),
        };
        person.csrf = self.get(&person, "/board/api/me").await["csrf"]
            .as_str()
            .unwrap()
            .to_string();
        person
    }

    async fn get(&self, who: &Person, path: &str) -> Value {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .header("cookie", &who.cookie)
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert!(status.is_success(), "GET {path}: {status} {body}");
        body
    }

    async fn post(&self, who: &Person, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .header("cookie", &who.cookie)
            .header("origin", &self.base)
            .header("x-csrf-token", &who.csrf)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    /// The key of the open approval of task `id`, and its params, once asked.
    async fn open_approval(&self, id: &str) -> (String, Value) {
        let everyone = Caller::anonymous("test", None).as_operator();
        eventually(WAIT, || async {
            let r = self
                .server
                .engine()
                .get(&TaskId::from_string(id), &everyone)
                .await
                .unwrap();
            r.input_requests
                .iter()
                .find(|(_, q)| q.is_outstanding() && q.method == APPROVAL_METHOD)
                .map(|(k, q)| (k.clone(), q.params.clone()))
        })
        .await
    }

    /// The task's board detail once it ended.
    async fn ended(&self, who: &Person, id: &str) -> Value {
        eventually(WAIT, || async {
            let detail = self.get(who, &format!("/board/api/tasks/{id}")).await;
            matches!(
                detail["status"].as_str(),
                Some("completed" | "failed" | "cancelled")
            )
            .then_some(detail)
        })
        .await
    }

    /// `tasks/get` as the agent, over the extension wire (stateless HTTP).
    async fn agent_tasks_get(&self, id: &str) -> Value {
        let client = mcp_tasks_client::Client::builder()
            .bearer_token("tok-agent")
            .connect(&mcp_tasks_client::Target::Http(format!(
                "{}/mcp",
                self.base
            )))
            .await
            .unwrap();
        client
            .request("tasks/get", json!({"taskId": id}))
            .await
            .unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_call_is_run_again_only_by_its_owner_or_an_operator_and_meets_its_approval_anew()
{
    let run = Running::start(&["root"]).await;
    let bob = run.login("tok-bob").await;
    let alice = run.login("tok-alice").await;
    let root = run.login("tok-root").await;
    let agent = run.login("tok-agent").await;

    // The agent's deploy waits for ops; bob rejects it.
    let old = run
        .server
        .start_tool_task(
            Caller::authenticated("agent", None),
            json!({"name": "deploy", "arguments": {}}),
        )
        .await
        .unwrap()
        .id
        .to_string();
    let (key, _) = run.open_approval(&old).await;
    let (status, said) = run
        .post(
            &bob,
            &format!("/board/api/tasks/{old}/answer"),
            json!({"key": key, "action": "reject", "reason": "freeze until Monday"}),
        )
        .await;
    assert_eq!(status, 200, "{said}");
    let detail = run.ended(&bob, &old).await;
    assert!(detail["toolError"].is_string(), "{detail}");
    assert_eq!(run.deploys.load(Ordering::SeqCst), 0);

    // bob decided it and is neither its owner nor an operator: no button, and a 403
    // with the reason; alice (an approver too) neither.
    assert_eq!(detail["canRunAgain"], false, "{detail}");
    for who in [&bob, &alice] {
        let (status, refused) = run
            .post(who, &format!("/board/api/tasks/{old}/rerun"), json!({}))
            .await;
        assert_eq!(status, 403, "{refused}");
        assert!(
            refused["error"]
                .as_str()
                .unwrap()
                .contains("only the task's owner (agent) or an operator"),
            "{refused}"
        );
    }
    // The owner and an operator are offered it.
    for who in [&agent, &root] {
        let detail = run.get(who, &format!("/board/api/tasks/{old}")).await;
        assert_eq!(detail["canRunAgain"], true, "{detail}");
    }

    // root runs it again: a new task of the agent's, held by the approval gate again,
    // with no vote carried over; root has no vote on it.
    let (status, made) = run
        .post(&root, &format!("/board/api/tasks/{old}/rerun"), json!({}))
        .await;
    assert_eq!(status, 200, "{made}");
    let new = made["id"].as_str().unwrap().to_string();
    let (key, params) = run.open_approval(&new).await;
    assert_eq!(params["approvedBy"], json!([]), "{params}");
    assert_eq!(params["ranAgainBy"], json!(["root"]), "{params}");
    assert_eq!(run.deploys.load(Ordering::SeqCst), 0, "held by the gate");
    let detail = run.get(&bob, &format!("/board/api/tasks/{new}")).await;
    assert_eq!(detail["status"], "input_required", "{detail}");
    let first = &detail["timeline"][0];
    assert_eq!(first["status"], "rerun", "{detail}");
    assert!(
        first["statusMessage"].as_str().unwrap().contains(&format!(
            "run again by root on the task board from task {old}"
        )),
        "{detail}"
    );

    // The old task links the new one, and its timeline says who ran it again.
    let detail = run.get(&root, &format!("/board/api/tasks/{old}")).await;
    assert_eq!(detail["reruns"], json!([new]), "{detail}");
    let last = detail["timeline"].as_array().unwrap().last().unwrap();
    assert_eq!(
        last["statusMessage"],
        format!("run again by root as task {new}"),
        "{detail}"
    );

    // The agent learns through MCP which task the new one repeats, and who ran it.
    let got = run.agent_tasks_get(&new).await;
    assert_eq!(
        got["_meta"]["io.modelcontextprotocol/relatedTaskIds"],
        json!([old]),
        "{got}"
    );
    assert_eq!(got["_meta"]["mcp-tasks/ranAgainBy"], "root", "{got}");

    // bob's approval of the new call is a decision of its own; the deploy runs once.
    let (status, said) = run
        .post(
            &bob,
            &format!("/board/api/tasks/{new}/answer"),
            json!({"key": key, "action": "approve"}),
        )
        .await;
    assert_eq!(status, 200, "{said}");
    let detail = run.ended(&bob, &new).await;
    assert_eq!(detail["status"], "completed", "{detail}");
    assert_eq!(run.deploys.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whoever_ran_a_call_again_cannot_approve_it_and_whoever_decided_it_cannot_run_it_again() {
    // bob is an operator here too.
    let run = Running::start(&["root", "bob"]).await;
    let bob = run.login("tok-bob").await;
    let agent = run.login("tok-agent").await;

    // The agent's own call, rejected by bob; the agent (its owner) runs it again.
    let old = run
        .server
        .start_tool_task(
            Caller::authenticated("agent", None),
            json!({"name": "deploy", "arguments": {}}),
        )
        .await
        .unwrap()
        .id
        .to_string();
    let (key, _) = run.open_approval(&old).await;
    run.post(
        &bob,
        &format!("/board/api/tasks/{old}/answer"),
        json!({"key": key, "action": "reject", "reason": "not now"}),
    )
    .await;
    run.ended(&bob, &old).await;
    let (status, made) = run
        .post(&agent, &format!("/board/api/tasks/{old}/rerun"), json!({}))
        .await;
    assert_eq!(status, 200, "{made}");
    let new = made["id"].as_str().unwrap().to_string();
    let (key, params) = run.open_approval(&new).await;
    assert_eq!(params["ranAgainBy"], json!(["agent"]), "{params}");

    // A person who ran a call again is refused as its approver, whatever their groups:
    // asked through the engine's one answer entry (any channel).
    let refused = run
        .server
        .engine()
        .answer_input_as(
            &TaskId::from_string(new.clone()),
            &key,
            mcp_tasks_engine::Outcome::Result {
                value: json!({"decision": "approve"}),
            },
            &Caller::authenticated("agent", None).with_groups(vec!["ops".into()]),
            "board",
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("started this call themselves"),
        "{refused}"
    );
    assert_eq!(run.deploys.load(Ordering::SeqCst), 0);

    // bob decided the first call's approval: although an operator, he may not run it
    // again (no button, 403 with the reason).
    let detail = run.get(&bob, &format!("/board/api/tasks/{old}")).await;
    assert_eq!(detail["canRunAgain"], false, "{detail}");
    let (status, refused) = run
        .post(&bob, &format!("/board/api/tasks/{old}/rerun"), json!({}))
        .await;
    assert_eq!(status, 403, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("you decided this call's approval"),
        "{refused}"
    );
}

/// `operators` may name a group: dave, a member of `leads`, is an operator when
/// `leads` is listed; bob, who is not, is not (issue 45: operators named by group).
#[tokio::test]
async fn an_operators_entry_may_name_a_group() {
    let running = Running::start(&["leads"]).await;
    let dave = running.login("tok-dave").await;
    let bob = running.login("tok-bob").await;
    assert_eq!(
        running.get(&dave, "/board/api/me").await["operator"],
        json!(true)
    );
    assert_eq!(
        running.get(&bob, "/board/api/me").await["operator"],
        json!(false)
    );
}
