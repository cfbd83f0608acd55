//! The engine's component for external jobs (see [`crate::external`]): the registry of
//! pollers, the in-process rate limit of polls, attaching a started job to its task,
//! polling it when a read is due, and cancelling jobs (also those of expired tasks).

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{
    ExpiredTask, Failure, FieldChange, Outcome, StoreError, StoredJob, TaskRecord, TransitionParams,
};
use parking_lot::{Mutex, RwLock};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

use crate::caller::Caller;
use crate::error::EngineError;
use crate::external::{ExternalPoller, PolledJob, EXTERNAL_STARTED_MESSAGE};
use crate::run::core::Core;
use crate::run::executor::Executor;

/// Poll-rate entries kept before old ones are dropped (tasks that ended elsewhere or
/// expired are never read again, so their entries would otherwise stay forever).
const MAX_TRACKED_POLLS: usize = 100_000;

/// How long an idle poll-rate entry is worth keeping once the map is full.
const POLL_ENTRY_TTL: Duration = Duration::from_secs(600);

/// When a task was last polled here, and whether a poll of it is under way.
#[derive(Debug, Clone, Copy)]
struct PollSlot {
    last: Instant,
    in_flight: bool,
}

/// How many cancels of expired tasks' jobs run at once: after downtime a sweep may find
/// thousands, and the external system should not get them all in the same instant.
const EXPIRED_CANCELS_AT_ONCE: usize = 16;

/// The engine's registry of pollers and the in-process rate limit of polls.
pub(crate) struct Externals {
    pollers: RwLock<HashMap<String, Arc<dyn ExternalPoller>>>,
    polls: Mutex<HashMap<TaskId, PollSlot>>,
    /// Kinds already warned about as unregistered, so the log is not flooded.
    warned: Mutex<HashSet<String>>,
    /// Permits for cancels of expired tasks' jobs.
    expired_cancels: Arc<tokio::sync::Semaphore>,
}

impl Default for Externals {
    fn default() -> Self {
        Externals {
            pollers: RwLock::default(),
            polls: Mutex::default(),
            warned: Mutex::default(),
            expired_cancels: Arc::new(tokio::sync::Semaphore::new(EXPIRED_CANCELS_AT_ONCE)),
        }
    }
}

/// A poll under way; dropping it (also when the reading request is dropped mid-poll)
/// lets the next read poll again.
struct InFlight<'a> {
    externals: &'a Externals,
    id: TaskId,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.externals.polls.lock().get_mut(&self.id) {
            slot.in_flight = false;
        }
    }
}

impl Externals {
    pub(crate) fn register(&self, kind: String, poller: Arc<dyn ExternalPoller>) {
        self.warned.lock().remove(&kind);
        self.pollers.write().insert(kind, poller);
    }

    /// The poller of `kind`; warns once per kind when none is registered.
    fn poller(&self, kind: &str) -> Option<Arc<dyn ExternalPoller>> {
        let found = self.pollers.read().get(kind).cloned();
        if found.is_none() && self.warned.lock().insert(kind.to_string()) {
            tracing::warn!(
                kind,
                "no poller is registered for external jobs of this kind; their tasks are served as stored"
            );
        }
        found
    }

    /// Claims the right to poll task `id` now: refused while another poll of it runs
    /// (single flight) or when the last one here began less than `interval` ago.
    fn begin(&self, id: &TaskId, interval: Duration) -> Option<InFlight<'_>> {
        let mut polls = self.polls.lock();
        if let Some(slot) = polls.get(id) {
            if slot.in_flight || slot.last.elapsed() < interval {
                return None;
            }
        }
        if polls.len() >= MAX_TRACKED_POLLS {
            polls.retain(|_, s| s.in_flight || s.last.elapsed() < POLL_ENTRY_TTL);
        }
        polls.insert(
            id.clone(),
            PollSlot {
                last: Instant::now(),
                in_flight: true,
            },
        );
        Some(InFlight {
            externals: self,
            id: id.clone(),
        })
    }

    /// Asks the external system to stop the job of a task the expiry sweeper deleted
    /// before it ended: its result can never be collected, so the job would only burn
    /// the other system's resources. Runs in the background, bounded by
    /// `external_call_timeout` and at most [`EXPIRED_CANCELS_AT_ONCE`] at a time, so
    /// that a slow system does not hold up the sweep; a failure is logged (the task is
    /// gone either way). Jobs of tasks that had already ended are left alone.
    pub(crate) fn cancel_expired(self: &Arc<Self>, core: &Arc<Core>, gone: &ExpiredTask) {
        self.forget(&gone.id);
        let Some(job) = gone.external.clone() else {
            return;
        };
        if gone.status.is_terminal() {
            return;
        }
        core.activity.count(|a| a.job_cancels_requested += 1);
        let externals = Arc::clone(self);
        let core = Arc::clone(core);
        let id = gone.id.clone();
        let permits = Arc::clone(&self.expired_cancels);
        tokio::spawn(async move {
            let Ok(_permit) = permits.acquire_owned().await else {
                return;
            };
            if externals.send_cancel(&core, &id, &job).await.is_ok() {
                tracing::info!(task_id = %id, kind = %job.kind, "cancelled the external job of an expired task");
            }
        });
    }

    /// Drops the rate-limit entry of a task that ended.
    pub(crate) fn forget(&self, id: &TaskId) {
        self.polls.lock().remove(id);
    }
}

impl Externals {
    /// Stores the started job in the task, fenced by the lease the start ran under.
    /// Returns an outcome to finish the task with when the job could not be recorded.
    pub(crate) async fn attach(
        &self,
        core: &Core,
        executor: &Executor,
        id: &TaskId,
        job: StoredJob,
    ) -> Option<Outcome> {
        let attached = core
            .apply(
                TransitionParams::to(id.clone(), TaskStatus::Working, core.now())
                    .message(EXTERNAL_STARTED_MESSAGE)
                    .attach(job.clone())
                    .fenced(executor.fence(id)),
            )
            .await;
        match attached {
            Ok(_) => {
                tracing::info!(task_id = %id, kind = %job.kind, "external job started; the task is polled when read");
                None
            }
            Err(
                StoreError::Conflict { .. }
                | StoreError::NotFound
                | StoreError::LeaseConflict { .. },
            ) => {
                // Cancelled, expired or taken over while the job started: nobody will
                // ever poll this job, so stop it.
                tracing::info!(task_id = %id, "task ended while its external job started; cancelling the job");
                let _ = self.cancel_job(core, id, &job).await;
                None
            }
            Err(e) => {
                tracing::error!(task_id = %id, error = %e, "could not record the started external job; cancelling it");
                let _ = self.cancel_job(core, id, &job).await;
                Some(Outcome::failed(
                    Failure::ExternalJobFailed,
                    format!("the external job started but could not be recorded: {e}"),
                ))
            }
        }
    }

    /// Asks the job's system to stop it; the reason is logged and returned on failure
    /// (also when no poller of its kind is registered here).
    pub(crate) async fn cancel_job(
        &self,
        core: &Core,
        id: &TaskId,
        job: &StoredJob,
    ) -> Result<(), String> {
        core.activity.count(|a| a.job_cancels_requested += 1);
        self.send_cancel(core, id, job).await
    }

    /// [`Externals::cancel_job`] for a cancel already counted as requested (the
    /// sweeper counts before it queues the cancel behind its concurrency limit).
    pub(crate) async fn send_cancel(
        &self,
        core: &Core,
        id: &TaskId,
        job: &StoredJob,
    ) -> Result<(), String> {
        let result = match self.poller(&job.kind) {
            Some(poller) => Self::bounded(core, "the cancel", poller.cancel(&job.state)).await,
            None => Err(format!(
                "no poller for external jobs of kind '{}' is registered on this server, so the job may still be running",
                job.kind
            )),
        };
        if let Err(reason) = &result {
            tracing::warn!(task_id = %id, kind = %job.kind, reason, "could not cancel the external job");
        }
        core.activity.count(|a| a.job_cancels_done += 1);
        result
    }

    /// Runs one call to a poller (`what`: "the poll", "the cancel"), giving up after
    /// `external_call_timeout` so that no read or cancel hangs on a silent system.
    async fn bounded<T>(
        core: &Core,
        what: &str,
        call: impl std::future::Future<Output = Result<T, String>>,
    ) -> Result<T, String> {
        let limit = core.config.external_call_timeout;
        tokio::time::timeout(limit, call).await.unwrap_or_else(|_| {
            Err(format!(
                "the job's system did not answer {what} within {limit:?}"
            ))
        })
    }

    /// Reads a task for `caller` (`Core::authorize`) and brings an external job's
    /// news into it when due ([`Externals::poll`]).
    pub(crate) async fn read(
        &self,
        core: &Core,
        executor: &Executor,
        id: &TaskId,
        caller: &Caller,
        action: &str,
    ) -> Result<TaskRecord, EngineError> {
        let record = core.authorize(id, caller, action).await?;
        Ok(self.poll(core, executor, record).await)
    }

    /// Polls the external job of a non-terminal task when due, and returns the record as
    /// it is after. Not due when the task changed less than a poll interval ago (some
    /// replica just polled it, or it just started), when this process polled it less
    /// than a poll interval ago, or while a poll of it is under way here; then, and on
    /// any failure, the stored record is returned unchanged.
    pub(crate) async fn poll(
        &self,
        core: &Core,
        executor: &Executor,
        record: TaskRecord,
    ) -> TaskRecord {
        let Some(job) = record.external.clone() else {
            return record;
        };
        if record.status.is_terminal() {
            self.forget(&record.id);
            return record;
        }
        let interval = core.poll_interval_of(&record);
        // A record "from the future" (clock skew between replicas) counts as fresh.
        let since_change = (core.now() - record.last_updated_at)
            .to_std()
            .unwrap_or(Duration::ZERO);
        if since_change < interval {
            return record;
        }
        let Some(poller) = self.poller(&job.kind) else {
            return record;
        };
        let Some(_flight) = self.begin(&record.id, interval) else {
            return record;
        };
        let answer = Self::bounded(core, "the poll", poller.poll(&job.state)).await;
        core.activity.count(|a| a.polls += 1);
        match answer {
            Err(reason) => {
                tracing::warn!(task_id = %record.id, kind = %job.kind, reason, "could not poll the external job; will try again on a later read");
                record
            }
            Ok(PolledJob::Running {
                state,
                status_message,
            }) => Self::job_running(core, record, *job, state, status_message).await,
            Ok(PolledJob::Finished(outcome)) => {
                let id = record.id.clone();
                let finished = crate::run::ledger::finish(core, executor, &id, outcome).await;
                self.forget(&id);
                finished.unwrap_or(record)
            }
        }
    }

    /// Records a running job's new state and message, if either changed. A concurrent
    /// change wins (compare-and-set on the version); the record as it now is is returned.
    async fn job_running(
        core: &Core,
        record: TaskRecord,
        job: StoredJob,
        state: Option<Value>,
        status_message: Option<String>,
    ) -> TaskRecord {
        let state = state.filter(|s| *s != job.state);
        let status_message =
            status_message.filter(|m| record.status_message.as_deref() != Some(m.as_str()));
        if state.is_none() && status_message.is_none() {
            return record;
        }
        let job = state.map(|state| StoredJob {
            kind: job.kind,
            state,
        });
        let change = TransitionParams::to(record.id.clone(), record.status, core.now())
            .expecting(record.version)
            .message_change(FieldChange::set_or_keep(status_message))
            .external_change(FieldChange::set_or_keep(job));
        match core.apply(change).await {
            Ok(updated) => updated,
            Err(StoreError::Conflict { current }) => *current,
            Err(e) => {
                tracing::warn!(task_id = %record.id, error = %e, "could not store the external job's progress");
                record
            }
        }
    }
}
