//! The fake external system the external-job tests share: a map of job states behind
//! a mutex, its poller, and the helpers that start and read tasks on it. Each test
//! file uses only part of it.
#![allow(dead_code, missing_docs, clippy::unwrap_used, clippy::expect_used)]

use async_trait::async_trait;
use mcp_tasks_engine::{
    Caller, CreateParams, Engine, EngineConfig, EngineHooks, ExternalPoller, Outcome, PolledJob,
    TaskRecord,
};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{MemoryStore, TaskStore};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

use mcp_tasks_testkit::{eventually, WAIT};

pub const KIND: &str = "query";

/// A job of the fake external system.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    Running { page: u64 },
    Done(Outcome),
    Cancelled,
}

/// The fake external system, and its poller.
#[derive(Debug, Default)]
pub struct Fake {
    pub jobs: Mutex<HashMap<String, Job>>,
    pub next: AtomicUsize,
    pub polls: AtomicUsize,
    /// The states `cancel` was called with.
    pub cancels: Mutex<Vec<Value>>,
    /// When set, `cancel` fails with this reason.
    pub cancel_error: Mutex<Option<String>>,
    /// While set, each poll first waits for a permit of it: the system is slow (or
    /// silent) to answer until the test adds permits or closes it.
    pub poll_gate: Mutex<Option<Arc<Semaphore>>>,
}

impl Fake {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Starts a job; returns its state as a tool would hand it to the engine.
    pub fn start_job(&self) -> Value {
        let id = format!("job-{}", self.next.fetch_add(1, Ordering::SeqCst));
        self.jobs
            .lock()
            .unwrap()
            .insert(id.clone(), Job::Running { page: 0 });
        json!({"job": id, "page": 0})
    }

    pub fn set(&self, state: &Value, job: Job) {
        let id = state["job"].as_str().unwrap().to_string();
        self.jobs.lock().unwrap().insert(id, job);
    }

    pub fn job(&self, state: &Value) -> Option<Job> {
        self.jobs
            .lock()
            .unwrap()
            .get(state["job"].as_str().unwrap())
            .cloned()
    }

    pub fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    /// Holds every poll from now on until the returned gate is closed.
    pub fn hold_polls(&self) -> Arc<Semaphore> {
        let gate = Arc::new(Semaphore::new(0));
        *self.poll_gate.lock().unwrap() = Some(gate.clone());
        gate
    }
}

#[async_trait]
impl ExternalPoller for Fake {
    async fn poll(&self, state: &Value) -> Result<PolledJob, String> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        let gate = self.poll_gate.lock().unwrap().clone();
        if let Some(gate) = gate {
            // Closed: the system answers again.
            let _ = gate.acquire().await;
        }
        let id = state["job"].as_str().ok_or("state without a job id")?;
        match self.job(state) {
            Some(Job::Running { page }) => Ok(PolledJob::Running {
                state: Some(json!({"job": id, "page": page})),
                status_message: Some(format!("{page} pages read")),
            }),
            Some(Job::Done(outcome)) => Ok(PolledJob::Finished(outcome)),
            Some(Job::Cancelled) => Ok(PolledJob::Finished(Outcome::Error {
                code: -32603,
                message: "the job was cancelled".into(),
                data: None,
            })),
            None => Err(format!("no job {id}")),
        }
    }

    async fn cancel(&self, state: &Value) -> Result<(), String> {
        self.cancels.lock().unwrap().push(state.clone());
        if let Some(reason) = self.cancel_error.lock().unwrap().clone() {
            return Err(reason);
        }
        self.set(state, Job::Cancelled);
        Ok(())
    }
}

pub fn caller() -> Caller {
    Caller::anonymous("owner", Some("session".into()))
}

pub fn params() -> CreateParams {
    CreateParams {
        caller: caller(),
        method: "tools/call".into(),
        request: json!({"name": KIND, "arguments": {"sql": "SELECT 1"}}),
        requested_ttl: None,
        client_capabilities: json!({}),
    }
}

pub fn config(poll_interval: Duration) -> EngineConfig {
    EngineConfig {
        poll_interval,
        ..EngineConfig::default()
    }
}

/// A lease short enough for a restart test to outlive.
pub const SHORT_LEASE: Duration = Duration::from_millis(100);

pub fn short_lease(config: EngineConfig) -> EngineConfig {
    EngineConfig {
        lease_ttl: Some(SHORT_LEASE),
        ..config
    }
}

pub fn rows(text: &str) -> Outcome {
    Outcome::Result {
        value: json!({"content": [{"type": "text", "text": text}], "isError": false}),
    }
}

pub async fn engine_on(
    store: Arc<dyn TaskStore>,
    config: EngineConfig,
    fake: &Arc<Fake>,
) -> Engine {
    engine_with(store, config, EngineHooks::default(), fake).await
}

/// [`engine_on`] with `hooks` (a reader of its own).
pub async fn engine_with(
    store: Arc<dyn TaskStore>,
    config: EngineConfig,
    hooks: EngineHooks,
    fake: &Arc<Fake>,
) -> Engine {
    let engine = Engine::start(store, config, hooks).await.unwrap();
    engine.register_external(KIND, fake.clone());
    engine
}

/// An engine on a fresh memory store polling every `poll_interval`.
pub async fn memory_engine(poll_interval: Duration, fake: &Arc<Fake>) -> Engine {
    engine_on(Arc::new(MemoryStore::new()), config(poll_interval), fake).await
}

/// Creates a task whose start starts a job of `fake`; returns the record once the job
/// is attached, with the job's state.
pub async fn start(engine: &Engine, fake: &Arc<Fake>) -> (TaskRecord, Value) {
    let system = fake.clone();
    let record = engine
        .create_external(params(), KIND, move |_ctx| {
            Box::pin(async move { Ok(system.start_job()) })
        })
        .await
        .unwrap();
    assert_eq!(record.status, TaskStatus::Working);
    let attached = attached(engine, &record.id).await;
    let state = attached.external.clone().unwrap().state;
    (attached, state)
}

/// Reads the task until its job is attached (the start runs in the background).
pub async fn attached(engine: &Engine, id: &TaskId) -> TaskRecord {
    eventually(WAIT, || async {
        let record = engine.get(id, &caller()).await.unwrap();
        record.external.is_some().then_some(record)
    })
    .await
}

/// Reads the task (each read polls the job when due) until `done` holds for it.
pub async fn read_until(
    engine: &Engine,
    id: &TaskId,
    done: impl Fn(&TaskRecord) -> bool,
) -> TaskRecord {
    eventually(WAIT, || async {
        let record = engine.get(id, &caller()).await.unwrap();
        done(&record).then_some(record)
    })
    .await
}

/// What the server's reader says of MCP tool results, enough for this test: the
/// engine itself never reads `isError`.
pub struct IsErrorReader;

impl mcp_tasks_engine::ResultReading for IsErrorReader {
    fn progress_token(&self, _request: &serde_json::Value) -> Option<serde_json::Value> {
        None
    }

    fn result_error_message(&self, result: &serde_json::Value) -> Option<String> {
        (result["isError"] == true).then(|| {
            format!(
                "the tool reported an error: {}",
                result["content"][0]["text"].as_str().unwrap_or("")
            )
        })
    }
}
