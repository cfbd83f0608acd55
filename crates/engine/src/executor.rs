//! [`Executor`]: the work running in this process. It owns the table of running tasks
//! (their cancellation tokens, abort handles and the lease generation each holds) and
//! the quota slots; it spawns work, records its outcome, and stops it (cooperative
//! cancellation first, an abort after the grace period).

use futures::future::BoxFuture;
use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{Failure, Outcome, StoreError, TaskRecord, TransitionParams};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::context::{LogSink, ProgressSink, TaskContext, TaskHost};
use crate::core::{now_ms, Core};
use crate::events::{TaskEvent, TaskLog};
use crate::quota::{Quota, Slot};

/// The future a task runs: it resolves to what the request returns.
pub type Work = BoxFuture<'static, Outcome>;

/// Work that may end with nothing to record (`None`: it handed the task over, as the
/// start of an external job does).
pub(crate) type HandOffWork = BoxFuture<'static, Option<Outcome>>;

/// One task's work running here.
struct Running {
    cancel: CancellationToken,
    abort: Option<AbortHandle>,
    /// The lease generation this process holds (fencing token), with leases on.
    generation: Option<u64>,
}

/// The work running in this process. See the module docs.
pub(crate) struct Executor {
    running: Mutex<HashMap<TaskId, Running>>,
    pub(crate) quota: Quota,
}

impl Executor {
    pub(crate) fn new(quota: Quota) -> Self {
        Executor {
            running: Mutex::new(HashMap::new()),
            quota,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<TaskId, Running>> {
        // A poisoned lock only means another thread panicked mid-update of a map of
        // handles; the map itself is still usable.
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Spawns `work` for a stored record: registers it as running here (with the lease
    /// generation it holds), and records its outcome when it ends. `host` answers the
    /// work's status messages and input requests; `slot` is the quota slot held until
    /// the work stops.
    pub(crate) fn launch<F>(
        self: &Arc<Self>,
        core: &Arc<Core>,
        host: Weak<dyn TaskHost>,
        record: &TaskRecord,
        client_capabilities: Value,
        work: F,
        slot: Option<Slot>,
    ) where
        F: FnOnce(TaskContext) -> Work,
    {
        let work = move |ctx| {
            let work = work(ctx);
            Box::pin(async move { Some(work.await) }) as HandOffWork
        };
        self.launch_with(core, host, record, client_capabilities, work, slot);
    }

    /// [`Executor::launch`] for work that may end with nothing to record: the task is
    /// then left as the work left it, and only the running entry and the quota slot
    /// go away.
    pub(crate) fn launch_with<F>(
        self: &Arc<Self>,
        core: &Arc<Core>,
        host: Weak<dyn TaskHost>,
        record: &TaskRecord,
        client_capabilities: Value,
        work: F,
        slot: Option<Slot>,
    ) where
        F: FnOnce(TaskContext) -> HandOffWork,
    {
        let cancel = CancellationToken::new();
        let ctx = task_context(core, host, record, client_capabilities, cancel.clone());
        // Made here, inside the creating request's span: the execution is its child.
        let span = crate::observability::task_span(record);
        let job = tokio::spawn(work(ctx).instrument(span.clone()));
        self.adopt(core, record, job, cancel, slot, span);
    }

    /// Takes over work already running for a stored record (started before its
    /// creation was committed, see `deferred`): registers it as running here with the
    /// lease generation it holds, and records its outcome when it ends.
    pub(crate) fn adopt(
        self: &Arc<Self>,
        core: &Arc<Core>,
        record: &TaskRecord,
        job: tokio::task::JoinHandle<Option<Outcome>>,
        cancel: CancellationToken,
        slot: Option<Slot>,
        span: tracing::Span,
    ) {
        let generation = core.config.lease_ttl.map(|_| record.lease_generation);
        self.lock().insert(
            record.id.clone(),
            Running {
                cancel,
                abort: Some(job.abort_handle()),
                generation,
            },
        );
        let executor = Arc::clone(self);
        let core = Arc::clone(core);
        let id = record.id.clone();
        let finished_span = span.clone();
        let outcome_recorded = async move {
            let _slot = slot; // the quota slot is held until the work stops
            let outcome = joined(&id, job.await);
            let last = match outcome {
                Some(outcome) => executor.finish(&core, &id, outcome).await,
                // Stopped from outside (cancelled, expired, lease lost): read how it ended.
                None => core.store.get(&id, now_ms()).await.ok().flatten(),
            };
            if let Some(record) = last {
                crate::observability::record_end(&finished_span, &record, &*core.reader());
            }
            executor.lock().remove(&id);
        };
        tokio::spawn(outcome_recorded.instrument(span));
    }

    /// The transition that records `outcome` as the end of task `id`.
    pub(crate) fn end_params(
        &self,
        core: &Core,
        id: &TaskId,
        outcome: Outcome,
    ) -> TransitionParams {
        let outcome = limit_result_size(core, outcome);
        let status = if outcome.is_error() {
            TaskStatus::Failed
        } else {
            TaskStatus::Completed
        };
        let message = match &outcome {
            Outcome::Result { value } => core.reader().result_error_message(value).map(Some),
            failed => failed.error_message().map(|m| Some(m.to_string())),
        };
        TransitionParams {
            id: id.clone(),
            expected_version: None,
            status,
            status_message: message,
            outcome: Some(outcome),
            now: now_ms(),
            input_requests: Some(Default::default()),
            expected_lease_generation: self.fence(id),
            external: None,
        }
    }

    /// Records the work's outcome. Loses quietly against an earlier terminal transition
    /// (a cancel, an expiry): terminal is final. Returns the record as it is after (the
    /// finished one, or the one that won), when known.
    pub(crate) async fn finish(
        &self,
        core: &Core,
        id: &TaskId,
        outcome: Outcome,
    ) -> Option<TaskRecord> {
        let finished = core.apply(self.end_params(core, id, outcome)).await;
        match finished {
            Ok(r) => {
                tracing::info!(task_id = %id, status = %r.status, "task finished");
                Some(r)
            }
            Err(StoreError::Conflict { current }) => {
                tracing::debug!(task_id = %id, status = %current.status, "late outcome ignored: task already terminal");
                Some(*current)
            }
            Err(StoreError::LeaseConflict { .. }) => {
                tracing::warn!(task_id = %id, "outcome dropped: another replica took this task over");
                core.activity.count(|a| a.lease_losses += 1);
                None
            }
            Err(StoreError::NotFound) => {
                tracing::debug!(task_id = %id, "late outcome ignored: task expired");
                None
            }
            Err(e) => {
                tracing::error!(task_id = %id, error = %e, "could not record task outcome");
                None
            }
        }
    }

    /// Sets a status message, keeping whatever non-terminal status the task has
    /// (compare-and-set on the version, so a concurrent `input_required` is kept).
    pub(crate) async fn update_message(&self, core: &Core, id: &TaskId, message: String) {
        loop {
            let current = match core.store.get(id, now_ms()).await {
                Ok(Some(r)) if !r.status.is_terminal() => r,
                Ok(_) => return,
                Err(e) => {
                    tracing::warn!(task_id = %id, error = %e, "could not read task to store status message");
                    return;
                }
            };
            let result = core
                .apply(TransitionParams {
                    id: id.clone(),
                    expected_version: Some(current.version),
                    status: current.status,
                    status_message: Some(Some(message.clone())),
                    outcome: None,
                    now: now_ms(),
                    input_requests: None,
                    expected_lease_generation: self.fence(id),
                    external: None,
                })
                .await;
            match result {
                Ok(_) | Err(StoreError::NotFound) => return,
                Err(StoreError::Conflict { current }) if !current.status.is_terminal() => continue,
                Err(StoreError::Conflict { .. }) => return,
                Err(e) => {
                    tracing::warn!(task_id = %id, error = %e, "could not store status message");
                    return;
                }
            }
        }
    }

    /// Asks the work to stop, and aborts it after `grace` if it has not.
    pub(crate) fn stop_work(&self, id: &TaskId, grace: std::time::Duration) {
        let (cancel, abort) = match self.lock().get(id) {
            Some(r) => (r.cancel.clone(), r.abort.clone()),
            None => return,
        };
        cancel.cancel();
        if let Some(abort) = abort {
            tokio::spawn(async move {
                tokio::time::sleep(grace).await;
                if !abort.is_finished() {
                    tracing::warn!("work ignored cancellation for the grace period; aborting it");
                    abort.abort();
                }
            });
        }
    }

    /// Aborts local work at once, without a grace period: another replica owns it now.
    pub(crate) fn abort_now(&self, id: &TaskId) {
        if let Some(r) = self.lock().remove(id) {
            r.cancel.cancel();
            if let Some(a) = r.abort {
                a.abort();
            }
        }
    }

    /// The lease generation the work of `id` holds here, to fence its writes.
    pub(crate) fn fence(&self, id: &TaskId) -> Option<u64> {
        self.lock().get(id).and_then(|r| r.generation)
    }

    /// The tasks this process runs under a lease, with the generation it holds.
    pub(crate) fn held_leases(&self) -> Vec<(TaskId, u64)> {
        self.lock()
            .iter()
            .filter_map(|(id, r)| r.generation.map(|g| (id.clone(), g)))
            .collect()
    }

    /// The ids of the tasks whose work runs in this process.
    pub(crate) fn running_ids(&self) -> Vec<TaskId> {
        self.lock().keys().cloned().collect()
    }

    /// Whether the work of task `id` runs in this process.
    pub(crate) fn runs_here(&self, id: &TaskId) -> bool {
        self.lock().contains_key(id)
    }

    /// How many tasks run in this process.
    pub(crate) fn count(&self) -> usize {
        self.lock().len()
    }
}

/// What a finished job of a task leaves to record: its outcome, a crash as a failure,
/// nothing when it was aborted (cancelled, expired, lease lost: the record says how it
/// ended).
pub(crate) fn joined(
    id: &TaskId,
    joined: Result<Option<Outcome>, tokio::task::JoinError>,
) -> Option<Outcome> {
    match joined {
        Ok(outcome) => outcome,
        Err(e) if e.is_panic() => {
            tracing::error!(task_id = %id, "task work panicked");
            Some(Outcome::failed(
                Failure::ToolPanicked,
                "the tool crashed while running this task",
            ))
        }
        Err(_) => None,
    }
}

/// The context work of `record` runs with: `host` answers its status messages and
/// input requests; progress and log messages go where the task's go.
pub(crate) fn task_context(
    core: &Arc<Core>,
    host: Weak<dyn TaskHost>,
    record: &TaskRecord,
    client_capabilities: Value,
    cancel: CancellationToken,
) -> TaskContext {
    TaskContext::for_task(
        record.id.clone(),
        host,
        cancel,
        progress_sink(core, record),
        Arc::new(client_capabilities),
        core.reader(),
    )
    .with_log_sink(log_sink(core, record))
}

/// Where a task's progress goes: an event naming the task (the task board shows it)
/// and, when its request asked for progress, the token the creating session is sent.
fn progress_sink(core: &Core, record: &TaskRecord) -> Option<ProgressSink> {
    let token = core.reader().progress_token(&record.request);
    let events = core.events.clone();
    let session = record.session.clone();
    let task = record.id.clone();
    Some(Arc::new(move |progress| {
        let _ = events.send(TaskEvent::Progress {
            task: task.clone(),
            session: session.clone(),
            token: token.clone(),
            progress,
        });
    }))
}

/// Where a task's log messages go: the router the server registered, if any.
fn log_sink(core: &Arc<Core>, record: &TaskRecord) -> LogSink {
    let core = Arc::downgrade(core);
    let session = record.session.clone();
    let task = record.id.clone();
    Arc::new(move |message| {
        let Some(route) = core.upgrade().and_then(|c| c.log_router()) else {
            return;
        };
        route(TaskLog {
            session: session.clone(),
            task: task.clone(),
            message,
        });
    })
}

/// Replaces a result too large to store by an error that says so.
fn limit_result_size(core: &Core, outcome: Outcome) -> Outcome {
    let size = serde_json::to_vec(&outcome).map(|v| v.len()).unwrap_or(0);
    let limit = core.config.max_result_bytes;
    if size <= limit {
        return outcome;
    }
    Outcome::failed(
        Failure::ResultTooLarge,
        format!(
            "the result of {size} bytes exceeds the stored-result limit of {limit} bytes (max_result_bytes); it was discarded"
        ),
    )
}
