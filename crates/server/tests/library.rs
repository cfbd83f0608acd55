//! The library API as a user meets it: `Server::builder()` with typed tools and an
//! external-job tool, served over HTTP on a free port and driven by the mcp-tasks
//! client on both task wires. Two servers sharing one store play two replicas.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use mcp_tasks_client::{Client, Target, TaskOptions, TaskStatus, WirePreference};
use mcp_tasks_engine::{EngineConfig, TaskContext};
use mcp_tasks_server::{
    ExternalJob, JobError, JobPoll, Json, NoArgs, ProtocolError, Server, Structured, TaskSupport,
    Tool,
};
use mcp_tasks_store::{MemoryStore, TaskStore};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod common;

use mcp_tasks_testkit::{eventually, WAIT};

#[derive(Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    #[schemars(range(min = 0))]
    b: i64,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

/// A fake batch system: jobs by id, `None` while running, `Some(result)` when done.
#[derive(Default, Clone)]
struct FakeBatch {
    jobs: Arc<Mutex<HashMap<String, Option<String>>>>,
    cancelled: Arc<Mutex<Vec<String>>>,
    polls: Arc<Mutex<u32>>,
}

impl FakeBatch {
    fn finish(&self, job: &str, result: &str) {
        self.jobs
            .lock()
            .unwrap()
            .insert(job.into(), Some(result.into()));
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Submit {
    name: String,
}

#[derive(Serialize, Deserialize)]
struct JobRef {
    job: String,
}

impl ExternalJob for FakeBatch {
    type Args = Submit;
    type State = JobRef;
    type Output = Result<String, String>;

    async fn start(&self, args: Submit, _ctx: TaskContext) -> Result<JobRef, JobError> {
        if args.name == "refused" {
            return Err("the batch system refused the job".into());
        }
        self.jobs.lock().unwrap().insert(args.name.clone(), None);
        Ok(JobRef { job: args.name })
    }

    async fn poll(&self, s: &JobRef) -> Result<JobPoll<JobRef, Self::Output>, JobError> {
        *self.polls.lock().unwrap() += 1;
        match self.jobs.lock().unwrap().get(&s.job) {
            Some(Some(result)) => Ok(JobPoll::Done(Ok(result.clone()))),
            Some(None) => Ok(JobPoll::Running {
                state: None,
                status_message: Some(format!("{} is running", s.job)),
            }),
            None => Ok(JobPoll::Done(Err(format!("job {} vanished", s.job)))),
        }
    }

    async fn cancel(&self, s: &JobRef) -> Result<(), JobError> {
        self.cancelled.lock().unwrap().push(s.job.clone());
        Ok(())
    }

    fn sync_poll_interval(&self) -> Duration {
        Duration::from_millis(20)
    }
}

fn tools(batch: FakeBatch) -> Vec<Tool> {
    vec![
        Tool::from_fn("add", "Adds.", |args: Add, ctx: TaskContext| async move {
            ctx.set_status_message("adding").await;
            Json(Sum {
                sum: args.a + args.b,
            })
        })
        .task_support(TaskSupport::Optional),
        Tool::from_fn("fails", "Always a tool error.", |_: NoArgs| async {
            Err::<String, _>("no luck")
        })
        .task_support(TaskSupport::Optional),
        Tool::from_fn("protocol_fail", "A protocol error.", |_: NoArgs| async {
            Err::<String, _>(ProtocolError(mcp_tasks_protocol::RpcError::new(
                -32603,
                "broken on purpose",
            )))
        })
        .task_support(TaskSupport::Optional),
        Tool::from_fn("describe", "Text and data.", |args: Submit| async move {
            Structured::new(format!("about {}", args.name), json!({"name": args.name}))
        }),
        Tool::external("batch", "Runs on the fake batch system.", batch)
            .task_support(TaskSupport::Optional),
    ]
}

fn engine_config() -> EngineConfig {
    EngineConfig {
        poll_interval: Duration::from_millis(50),
        ..EngineConfig::default()
    }
}

/// Serves a built server on a free loopback port; stops it when dropped.
struct Running {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

async fn serve(store: Arc<dyn TaskStore>, batch: FakeBatch) -> Running {
    let server = Server::builder()
        .name("library-test")
        .store(store)
        .engine_config(engine_config())
        .tools(tools(batch))
        .build()
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.serve_http_on(listener, async move {
        let _ = rx.await;
    }));
    Running {
        url,
        stop: Some(tx),
    }
}

async fn connect(url: &str, wire: WirePreference) -> Client {
    Client::builder()
        .wire(wire)
        .connect(&Target::Http(url.into()))
        .await
        .unwrap()
}

#[tokio::test]
async fn typed_tools_work_the_same_on_both_wires() {
    let running = serve(Arc::new(MemoryStore::new()), FakeBatch::default()).await;
    for wire in [WirePreference::V2025_11_25, WirePreference::V2026_07_28] {
        let client = connect(&running.url, wire).await;
        let tools = client.tools().await.unwrap();
        let add = tools.iter().find(|t| t.name == "add").unwrap();
        assert_eq!(add.input_schema["required"], json!(["a", "b"]));
        assert_eq!(add.input_schema["properties"]["b"]["minimum"], json!(0));

        let out = client
            .call_tool_as_task("add", json!({"a": 2, "b": 3}), TaskOptions::default())
            .await
            .unwrap()
            .result()
            .await
            .unwrap();
        assert_eq!(out.status(), TaskStatus::Completed, "{wire:?}");
        assert_eq!(
            out.result.as_ref().unwrap()["structuredContent"],
            json!({"sum": 5})
        );

        let err = client
            .call_tool_as_task("add", json!({"a": 2, "b": -1}), TaskOptions::default())
            .await
            .expect_err("b below its minimum");
        assert_eq!(err.code(), Some(-32602), "{wire:?}");

        let failed = client
            .call_tool_as_task("fails", json!({}), TaskOptions::default())
            .await
            .unwrap()
            .result()
            .await
            .unwrap();
        assert!(failed.is_tool_error(), "{wire:?}");
        assert_eq!(failed.text().as_deref(), Some("no luck"));

        let broken = client
            .call_tool_as_task("protocol_fail", json!({}), TaskOptions::default())
            .await;
        if wire == WirePreference::V2026_07_28 {
            // The extension lets the server answer a quick call inline: the tool's
            // protocol error is then the call's own error, and no task exists.
            let err = broken.expect_err("answered inline with the tool's error");
            assert_eq!(err.code(), Some(-32603), "{wire:?}");
        } else {
            let broken = broken.unwrap().result().await.unwrap();
            assert_eq!(broken.status(), TaskStatus::Failed, "{wire:?}");
            assert_eq!(
                broken.error.as_ref().map(|e| e.code),
                Some(-32603),
                "{wire:?}"
            );
        }

        let described = client
            .call_tool("describe", json!({"name": "x"}))
            .await
            .unwrap();
        assert_eq!(described["content"][0]["text"], "about x");
        assert_eq!(described["structuredContent"], json!({"name": "x"}));
        client.close().await;
    }
}

#[tokio::test]
async fn external_jobs_are_polled_cancelled_and_run_synchronously() {
    let batch = FakeBatch::default();
    let running = serve(Arc::new(MemoryStore::new()), batch.clone()).await;
    for (wire, job) in [
        (WirePreference::V2025_11_25, "old-wire"),
        (WirePreference::V2026_07_28, "new-wire"),
    ] {
        let client = connect(&running.url, wire).await;
        let handle = client
            .call_tool_as_task("batch", json!({"name": job}), TaskOptions::default())
            .await
            .unwrap();
        let id = handle.task_id().cloned().unwrap();
        // The poll's status message reaches tasks/get while the job runs.
        let (client_ref, id_ref) = (&client, &id);
        let seen = eventually(WAIT, || async move {
            let view = client_ref.get(id_ref).await.unwrap();
            (view.status_message.as_deref() == Some(&format!("{job} is running"))).then_some(view)
        })
        .await;
        assert_eq!(seen.status, TaskStatus::Working);
        batch.finish(job, &format!("{job} done"));
        let out = handle.result().await.unwrap();
        assert_eq!(out.status(), TaskStatus::Completed, "{wire:?}");
        assert_eq!(out.text(), Some(format!("{job} done")));

        let cancel_me = format!("{job}-cancelled");
        let handle = client
            .call_tool_as_task("batch", json!({"name": cancel_me}), TaskOptions::default())
            .await
            .unwrap();
        let id = handle.task_id().cloned().unwrap();
        // The job started and is stored with the task, so the cancel reaches it.
        let (client_ref, id_ref, batch_ref, job_ref) = (&client, &id, &batch, &cancel_me);
        eventually(WAIT, || async move {
            let view = client_ref.get(id_ref).await.unwrap();
            view.status_message.is_some() && batch_ref.jobs.lock().unwrap().contains_key(job_ref)
        })
        .await;
        let view = client.cancel(&id).await.unwrap();
        assert_eq!(view.status, TaskStatus::Cancelled);
        // The batch system was asked to cancel the job.
        eventually(WAIT, || async {
            batch.cancelled.lock().unwrap().contains(&cancel_me)
        })
        .await;

        let refused = client
            .call_tool_as_task("batch", json!({"name": "refused"}), TaskOptions::default())
            .await
            .unwrap()
            .result()
            .await
            .unwrap();
        assert!(refused.is_tool_error());
        assert!(refused.text().unwrap().contains("refused the job"));
        client.close().await;
    }

    // A plain call starts the job and polls it until it finishes.
    let client = connect(&running.url, WirePreference::V2025_11_25).await;
    let finisher = batch.clone();
    let polls_before = *batch.polls.lock().unwrap();
    tokio::spawn(async move {
        // Finish the job once the call started it and polled it.
        eventually(WAIT, || async {
            finisher.jobs.lock().unwrap().contains_key("sync")
                && *finisher.polls.lock().unwrap() > polls_before
        })
        .await;
        finisher.finish("sync", "sync done");
    });
    let result = client
        .call_tool("batch", json!({"name": "sync"}))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "sync done");
    client.close().await;
}

#[tokio::test]
async fn another_replica_answers_for_an_external_job() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryStore::new());
    let batch = FakeBatch::default();
    let a = serve(store.clone(), batch.clone()).await;
    let b = serve(store.clone(), batch.clone()).await;
    let on_a = connect(&a.url, WirePreference::V2026_07_28).await;
    let handle = on_a
        .call_tool_as_task("batch", json!({"name": "shared"}), TaskOptions::default())
        .await
        .unwrap();
    let id = handle.task_id().cloned().unwrap();
    // What makes it any replica's: the job state is in the store, no work is running.
    let (store_ref, id_ref) = (&store, &id);
    let stored = eventually(WAIT, || async move {
        let record = store_ref
            .get(id_ref, chrono::Utc::now())
            .await
            .unwrap()
            .unwrap();
        record.external
    })
    .await;
    assert_eq!(stored.kind, "batch");
    assert_eq!(stored.state, json!({"job": "shared"}));
    drop(handle);
    on_a.close().await;
    drop(a); // replica A stops

    batch.finish("shared", "finished elsewhere");
    let on_b = connect(&b.url, WirePreference::V2026_07_28).await;
    let handle = on_b.resume(&id).await.unwrap();
    let out = handle.result().await.unwrap();
    assert_eq!(out.status(), TaskStatus::Completed);
    assert_eq!(out.text().as_deref(), Some("finished elsewhere"));
    on_b.close().await;
}
