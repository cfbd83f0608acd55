//! The interop scenarios (`mcp_tasks_testkit::peer_suite`) with the client library as
//! the front-end, against every peer: fastmcp-tasks, the everything server (HTTP and
//! stdio), the task servers written with rmcp, tower-mcp and turul (memory and SQLite
//! stores), and the TypeScript SDK's example servers `simpleStreamableHttp.js` and
//! `simpleTaskInteractive.js` (HTTP only).
//!
//! `tests/interop/run.sh` installs or builds the peers and points at them with
//! environment variables (`MCP_TASKS_INTEROP_FASTMCP_PYTHON`,
//! `MCP_TASKS_INTEROP_EVERYTHING`, `MCP_TASKS_INTEROP_RMCP_SERVER`,
//! `MCP_TASKS_INTEROP_TOWER_MCP_SERVER`, `MCP_TASKS_INTEROP_TURUL_SERVER`,
//! `MCP_TASKS_INTEROP_NODE`) and picks a peer's tests by their module
//! (`fastmcp_tasks_`, `everything_`, `rmcp_`, `tower_mcp_`, `turul_memory_`,
//! `turul_sqlite_`, `ts_streamable_http_`, `ts_task_interactive_`). Without its
//! variable a peer's tests print a notice and pass; a scenario a peer cannot do is
//! listed as ignored, with the reason.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use futures::StreamExt;
use mcp_tasks_client::{
    input, Client, ClientError, InputRequest, Target, TaskHandle, TaskId, TaskOptions, TaskUpdate,
    Updates, Wire, WirePreference,
};
use mcp_tasks_testkit::peer_suite::{
    self, Answer, Asked, Endpoint, FrontEnd, Negotiated, Progress, Progressed, Refused, Run,
    Sampled, Sampling, Seen, Started, LIMIT,
};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

mcp_tasks_testkit::peer_suite!(library, crate::library);

/// The client library as the front-end.
fn library() -> Library {
    Library
}

/// The client library, one client per connection.
struct Library;

/// What a client's handlers were asked, shared with them.
type Questions = Arc<Mutex<Vec<InputRequest>>>;

/// A task started and kept: its client and handle.
struct Kept {
    client: Client,
    task: TaskHandle,
}

fn target(at: &Endpoint) -> Target {
    match at {
        Endpoint::Http(url) => Target::Http(url.clone()),
        Endpoint::Stdio { program, args } => Target::Stdio {
            program: program.clone(),
            args: args.clone(),
        },
    }
}

fn preference(wire: peer_suite::Wire) -> WirePreference {
    match wire {
        peer_suite::Wire::Auto => WirePreference::Auto,
        peer_suite::Wire::Extension => WirePreference::V2026_07_28,
        peer_suite::Wire::Legacy => WirePreference::V2025_11_25,
    }
}

fn version(wire: Wire) -> String {
    wire.protocol_version().to_string()
}

/// The answer to an elicitation, checking its form: the field is there, and a choice
/// among `oneOf` consts offers the one we pick (else the field is a string).
fn answer(answer: Answer, q: &InputRequest) -> Value {
    match answer {
        Answer::None => panic!("an unexpected question: {q:?}"),
        Answer::Decline(_) => input::decline(),
        Answer::Accept(question) => {
            let field = &q.requested_schema().unwrap()["properties"][question.field];
            match field.get("oneOf") {
                Some(options) => assert!(
                    options
                        .as_array()
                        .is_some_and(|o| o.iter().any(|c| c["const"] == question.value)),
                    "{options}"
                ),
                None => assert_eq!(field["type"], question.kind, "{field}"),
            }
            let value = match question.kind {
                "boolean" => json!(question.value == "true"),
                _ => json!(question.value),
            };
            input::accept(json!({ question.field: value }))
        }
    }
}

/// A client on `wire` that answers elicitations as `how` says and sampling with
/// `reply`, recording every question.
async fn connect(
    at: &Endpoint,
    wire: peer_suite::Wire,
    how: Answer,
    reply: &str,
    session: Option<&str>,
) -> (Client, Questions) {
    let asked: Questions = Arc::new(Mutex::new(Vec::new()));
    let (e, s) = (Arc::clone(&asked), Arc::clone(&asked));
    let reply = reply.to_string();
    let mut builder = Client::builder()
        .wire(preference(wire))
        .on_elicitation(move |q| {
            e.lock().unwrap().push(q.clone());
            let a = answer(how, &q);
            async move { Ok(a) }
        })
        .on_sampling(move |q| {
            s.lock().unwrap().push(q.clone());
            let text = reply.clone();
            async move {
                Ok(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": text},
                    "model": "test-model",
                    "stopReason": "endTurn"
                }))
            }
        });
    if let Some(s) = session {
        builder = builder.resume_session(s);
    }
    let client = builder.connect(&target(at)).await.unwrap();
    (client, asked)
}

/// Collects the status messages and statuses a task's updates carry, in order, each
/// once in a row.
fn record(mut updates: Updates) -> tokio::task::JoinHandle<(Vec<String>, Vec<String>)> {
    tokio::spawn(async move {
        let (mut messages, mut statuses) = (Vec::<String>::new(), Vec::<String>::new());
        while let Some(u) = updates.next().await {
            if let TaskUpdate::Status(t) = u {
                if let Some(m) = t.status_message {
                    if messages.last() != Some(&m) {
                        messages.push(m);
                    }
                }
                let s = t.status.as_str();
                if statuses.last().map(String::as_str) != Some(s) {
                    statuses.push(s.to_string());
                }
            }
        }
        (messages, statuses)
    })
}

fn asked(questions: &Questions) -> Vec<Asked> {
    questions
        .lock()
        .unwrap()
        .iter()
        .map(|q| Asked {
            method: q.method.clone(),
            message: q.message().map(str::to_string),
            task_id: q.task_id.as_ref().map(|t| t.as_str().to_string()),
        })
        .collect()
}

/// Follows `task` to its end on `client`, then reads it once more with `tasks/get`.
async fn follow(client: &Client, mut task: TaskHandle, questions: Option<&Questions>) -> Run {
    let id = task.task_id().cloned();
    let seen = record(task.updates());
    let outcome = tokio::time::timeout(LIMIT, task.result())
        .await
        .expect("the task ended in time")
        .unwrap();
    let (messages, statuses) = seen.await.unwrap();
    let got_after = match &id {
        Some(id) => Some(client.get(id).await.unwrap().status.as_str().to_string()),
        None => None,
    };
    Run {
        id: id.map(|i| i.as_str().to_string()),
        wire: Some(version(client.wire())),
        status: outcome.status().as_str().to_string(),
        text: outcome.text().unwrap_or_default(),
        structured: outcome
            .result
            .as_ref()
            .map(|r| r["structuredContent"].clone()),
        messages: Some(messages),
        statuses: Some(statuses),
        asked: questions.map(asked),
        got_after,
    }
}

impl FrontEnd for Library {
    type Task = Kept;

    async fn negotiate(&self, at: &Endpoint, wire: peer_suite::Wire) -> Negotiated {
        let (client, _) = connect(at, wire, Answer::None, "", None).await;
        let tools = client.tools().await.unwrap();
        let seen = Negotiated {
            wire: Some(version(client.wire())),
            tasks: Some(client.supports_tasks()),
            server: client.server().name.clone(),
            tools: tools
                .into_iter()
                .map(|t| (t.name, Some(t.task_support.as_str().to_string())))
                .collect(),
        };
        client.close().await;
        seen
    }

    async fn call(
        &self,
        at: &Endpoint,
        wire: peer_suite::Wire,
        tool: &str,
        args: &Value,
        how: Answer,
    ) -> Run {
        let (client, questions) = connect(at, wire, how, "", None).await;
        let task = client
            .call_tool_as_task(tool, args.clone(), TaskOptions::default())
            .await
            .unwrap();
        let run = follow(&client, task, Some(&questions)).await;
        client.close().await;
        run
    }

    async fn start(
        &self,
        at: &Endpoint,
        wire: peer_suite::Wire,
        tool: &str,
        args: &Value,
    ) -> (Started, Kept) {
        let (client, _) = connect(at, wire, Answer::None, "", None).await;
        let task = client
            .call_tool_as_task(tool, args.clone(), TaskOptions::default())
            .await
            .unwrap();
        let id = task.task_id().expect("the call became a task");
        let started = Started {
            id: id.as_str().to_string(),
            wire: version(client.wire()),
            session: client.session_id(),
        };
        (started, Kept { client, task })
    }

    async fn start_refused(
        &self,
        at: &Endpoint,
        wire: peer_suite::Wire,
        tool: &str,
        args: &Value,
    ) -> Refused {
        let (client, _) = connect(at, wire, Answer::None, "", None).await;
        let refused = client
            .call_tool_as_task(tool, args.clone(), TaskOptions::default())
            .await;
        let text = match refused {
            Err(ClientError::Unsupported(e)) => e.to_string(),
            other => panic!(
                "not refused as unsupported: {:?}",
                other.map(|t| t.task().cloned())
            ),
        };
        client.close().await;
        Refused {
            code: None,
            exit: None,
            text,
        }
    }

    async fn get(&self, _: &Endpoint, _: peer_suite::Wire, task: &Started, kept: &Kept) -> Seen {
        let t = kept
            .client
            .get(&TaskId::from_string(task.id.clone()))
            .await
            .unwrap();
        Seen {
            id: Some(t.id.as_str().to_string()),
            status: t.status.as_str().to_string(),
            message: t.status_message,
        }
    }

    async fn cancel_refused(
        &self,
        _: &Endpoint,
        _: peer_suite::Wire,
        _: &Started,
        kept: &Kept,
    ) -> Refused {
        let text = match kept.task.cancel().await {
            Err(ClientError::Unsupported(e)) => e.to_string(),
            other => panic!("cancel not refused as unsupported: {other:?}"),
        };
        Refused {
            code: None,
            exit: None,
            text,
        }
    }

    async fn cancel(&self, _: &Endpoint, _: peer_suite::Wire, _: &Started, kept: &Kept) -> Seen {
        let t = kept.task.cancel().await.unwrap();
        Seen {
            id: Some(t.id.as_str().to_string()),
            status: t.status.as_str().to_string(),
            message: t.status_message,
        }
    }

    async fn result(&self, _: &Endpoint, _: peer_suite::Wire, _: &Started, kept: Kept) -> Run {
        let run = follow(&kept.client, kept.task, None).await;
        kept.client.close().await;
        run
    }

    async fn resume(
        &self,
        at: &Endpoint,
        wire: peer_suite::Wire,
        task: &Started,
        kept: Kept,
    ) -> Run {
        drop(kept.task);
        // The server keeps tasks per session: the new client rejoins it. Without a
        // session (stateless requests) the id is enough.
        let session = match &task.session {
            Some(_) => Some(kept.client.detach().await.expect("an HTTP session")),
            None => {
                kept.client.close().await;
                None
            }
        };
        let (second, _) = connect(at, wire, Answer::None, "", session.as_deref()).await;
        if session.is_some() {
            assert_eq!(second.session_id(), session, "the session rejoined");
        }
        let handle = second
            .resume(&TaskId::from_string(task.id.clone()))
            .await
            .unwrap();
        let run = follow(&second, handle, None).await;
        second.close().await;
        run
    }

    async fn wait_for_message(
        &self,
        _: &Endpoint,
        _: peer_suite::Wire,
        _: &Started,
        kept: &mut Kept,
        prefix: &str,
    ) {
        let mut updates = kept.task.updates();
        tokio::time::timeout(LIMIT, async {
            while let Some(u) = updates.next().await {
                if let TaskUpdate::Status(t) = u {
                    if t.status_message.is_some_and(|m| m.starts_with(prefix)) {
                        return;
                    }
                }
            }
            panic!("updates ended before a message starting with {prefix:?}");
        })
        .await
        .unwrap();
    }

    async fn get_unknown(&self, at: &Endpoint, wire: peer_suite::Wire, id: &str) -> Refused {
        let (client, _) = connect(at, wire, Answer::None, "", None).await;
        let e = client.get(&TaskId::from_string(id)).await.unwrap_err();
        client.close().await;
        Refused {
            code: e.code(),
            exit: None,
            text: e.to_string(),
        }
    }

    async fn sample(
        &self,
        at: &Endpoint,
        wire: peer_suite::Wire,
        s: &Sampling,
        reply: &str,
    ) -> Sampled {
        let (client, questions) = connect(at, wire, Answer::None, reply, None).await;
        let text = if s.task {
            // Asked on the task's behalf while `tasks/result` is held open.
            let task = client
                .call_tool_as_task(s.tool, peer_suite::json(s.args), TaskOptions::default())
                .await
                .unwrap();
            let run = follow(&client, task, Some(&questions)).await;
            assert_eq!(run.status, "completed", "{run:?}");
            run.text
        } else {
            let result =
                tokio::time::timeout(LIMIT, client.call_tool(s.tool, peer_suite::json(s.args)))
                    .await
                    .unwrap()
                    .unwrap();
            result["content"][0]["text"].as_str().unwrap().to_string()
        };
        client.close().await;
        let questions = questions.lock().unwrap().clone();
        assert!(
            questions
                .iter()
                .all(|q| q.method == "sampling/createMessage"),
            "{questions:?}"
        );
        Sampled {
            prompt: questions.first().map(|q| {
                q.params["messages"][0]["content"]["text"]
                    .as_str()
                    .unwrap()
                    .to_string()
            }),
            asked: Some(questions.len()),
            text,
        }
    }

    async fn progress(&self, at: &Endpoint, wire: peer_suite::Wire, p: &Progress) -> Progressed {
        let (client, _) = connect(at, wire, Answer::None, "", None).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let done = tokio::time::timeout(
            LIMIT,
            client.call_tool_with_progress(p.tool, peer_suite::json(p.args), move |p| {
                sink.lock().unwrap().push((p.progress, p.total))
            }),
        )
        .await
        .unwrap()
        .unwrap();
        client.close().await;
        let steps = seen.lock().unwrap().clone();
        Progressed {
            steps,
            text: done["content"][0]["text"].as_str().unwrap().to_string(),
        }
    }
}
