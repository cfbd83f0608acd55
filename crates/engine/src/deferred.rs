//! [`DeferredTask`]: a tool's work started before its task exists.
//!
//! Two things need it. On the Tasks extension wire the server decides whether a call
//! becomes a task: work that ends within a short window is answered inline and leaves
//! no task behind ([`DeferredTask::settle`]); otherwise the task is created and the work
//! that already ran goes on, never restarted. And on any wire, work that ends while its
//! creation is being committed is committed with it ([`DeferredTask::into_task`]): one
//! fsync on SQLite instead of two, and the first read after the reply finds the result.
//!
//! Before the record exists the work's context answers through `DeferredHost`: a
//! status message is kept and stored with the creation; an input request (which needs
//! a task to live on) makes the call a task at once and waits until it is one.

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{InputRequest, Outcome, PendingCreate, TaskRecord};
use serde_json::Value;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::context::{TaskContext, TaskHost};
use crate::engine::{CreateParams, Engine, Inner, Work};
use crate::error::EngineError;
use crate::input::InputError;
use crate::quota::Slot;

/// Where a deferred task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No task: the work runs as a plain call.
    Pending,
    /// The record is being stored.
    Creating,
    /// The task exists; the work is the engine's like any task's.
    Created,
    /// No task will exist (it ended inline, or its creation failed).
    Abandoned,
}

/// What the deferred task and its work's context share.
struct Shared {
    phase: watch::Sender<Phase>,
    /// The last status message set before the task existed.
    message: Mutex<Option<String>>,
    /// Set when the work needs a task now (an input request).
    wanted: Notify,
}

impl Shared {
    /// Waits until the task exists (`true`) or never will (`false`).
    async fn created(&self) -> bool {
        let mut rx = self.phase.subscribe();
        let settled = rx
            .wait_for(|p| matches!(p, Phase::Created | Phase::Abandoned))
            .await
            .map(|p| *p == Phase::Created);
        settled.unwrap_or(false)
    }
}

/// The context's host before (and after) the task exists. See the module docs.
struct DeferredHost {
    shared: Arc<Shared>,
    engine: Weak<Inner>,
}

#[async_trait::async_trait]
impl TaskHost for DeferredHost {
    async fn set_message(&self, id: &TaskId, message: String) {
        {
            let mut kept = self
                .shared
                .message
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if *self.shared.phase.borrow() == Phase::Pending {
                *kept = Some(message);
                return;
            }
        }
        if !self.shared.created().await {
            return;
        }
        if let Some(inner) = self.engine.upgrade() {
            inner.set_message(id, message).await;
        }
    }

    async fn ask(
        &self,
        id: &TaskId,
        key: String,
        request: InputRequest,
        cancel: &CancellationToken,
    ) -> Result<Value, InputError> {
        self.shared.wanted.notify_one();
        if !self.shared.created().await {
            return Err(InputError::Cancelled);
        }
        match self.engine.upgrade() {
            Some(inner) => inner.ask(id, key, request, cancel).await,
            None => Err(InputError::Cancelled),
        }
    }
}

/// How a deferred task settled.
#[derive(Debug)]
pub enum Settled {
    /// The work ended within the window: its outcome. No task was created.
    Done(Outcome),
    /// The call became a task, stored durably; its work goes on (or already ended,
    /// and the record says how).
    Task(Box<TaskRecord>),
}

/// Work started before its task exists. Dropping it before it settled aborts the work
/// (the caller went away; no task exists to carry it on).
pub struct DeferredTask {
    engine: Engine,
    record: TaskRecord,
    slot: Option<Slot>,
    cancel: CancellationToken,
    job: Option<JoinHandle<Option<Outcome>>>,
    shared: Arc<Shared>,
    span: tracing::Span,
}

impl std::fmt::Debug for DeferredTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredTask")
            .field("task_id", &self.record.id)
            .finish()
    }
}

impl Drop for DeferredTask {
    fn drop(&mut self) {
        if let Some(job) = self.job.take() {
            self.cancel.cancel();
            job.abort();
            self.shared.phase.send_replace(Phase::Abandoned);
        }
    }
}

impl Engine {
    /// Starts `work` as a task-to-be: the quota slot is taken now (a refused call runs
    /// nothing), the work starts at once, and the task is created only when
    /// [`DeferredTask::settle`] or [`DeferredTask::into_task`] says so.
    ///
    /// # Errors
    /// [`EngineError::QuotaExceeded`]; nothing runs then.
    pub fn start_deferred<F>(
        &self,
        params: CreateParams,
        work: F,
    ) -> Result<DeferredTask, EngineError>
    where
        F: FnOnce(TaskContext) -> Work,
    {
        let slot = self.take_slot(&params.caller)?;
        let (record, client_capabilities) = self.new_record(params);
        let (phase, _) = watch::channel(Phase::Pending);
        let shared = Arc::new(Shared {
            phase,
            message: Mutex::new(None),
            wanted: Notify::new(),
        });
        let host = Arc::new(DeferredHost {
            shared: Arc::clone(&shared),
            engine: Arc::downgrade(&self.inner),
        });
        let weak_host: Weak<dyn TaskHost> = {
            let weak: Weak<DeferredHost> = Arc::downgrade(&host);
            weak
        };
        let cancel = CancellationToken::new();
        let core = &self.inner.core;
        let ctx = crate::executor::task_context(
            core,
            weak_host,
            &record,
            core.capabilities(client_capabilities),
            cancel.clone(),
        );
        let span = crate::observability::task_span(&record);
        let work = work(ctx);
        let job = tokio::spawn(
            async move {
                let _host = host; // the context's host lives as long as the work
                Some(work.await)
            }
            .instrument(span.clone()),
        );
        Ok(DeferredTask {
            engine: self.clone(),
            record,
            slot: Some(slot),
            cancel,
            job: Some(job),
            shared,
            span,
        })
    }
}

impl DeferredTask {
    /// The id the task has (or would have).
    pub fn id(&self) -> &TaskId {
        &self.record.id
    }

    /// Waits up to `window` for the work. Ended in time: its outcome, and no task
    /// exists. Otherwise (or as soon as the work asks for input) the task is created
    /// durably and the work goes on as the task's.
    ///
    /// # Errors
    /// A store failure creating the task; the work is stopped then.
    pub async fn settle(mut self, window: Duration) -> Result<Settled, EngineError> {
        // The job stays in `self` while waiting: a caller that stops waiting drops
        // `self`, which stops the work (no task exists to carry it on).
        let ended = {
            let Some(job) = self.job.as_mut() else {
                return Err(EngineError::ShuttingDown);
            };
            tokio::select! {
                joined = job => Some(joined),
                _ = tokio::time::sleep(window) => None,
                _ = self.shared.wanted.notified() => None,
            }
        };
        let Some(job) = self.job.take() else {
            return Err(EngineError::ShuttingDown);
        };
        match ended {
            Some(joined) => {
                drop(job);
                self.shared.phase.send_replace(Phase::Abandoned);
                self.slot.take();
                let outcome =
                    crate::executor::joined(&self.record.id, joined).unwrap_or_else(|| {
                        Outcome::failed(
                            mcp_tasks_store::Failure::Cancelled,
                            "the call was stopped before it finished",
                        )
                    });
                Ok(Settled::Done(outcome))
            }
            None => self
                .create_detached(job)
                .await
                .map(|r| Settled::Task(Box::new(r))),
        }
    }

    /// Creates the task now, whatever the work does; work that ends before the
    /// creation is committed is committed with it (see the module docs).
    ///
    /// # Errors
    /// A store failure; the work is stopped then.
    pub async fn into_task(mut self) -> Result<TaskRecord, EngineError> {
        let Some(job) = self.job.take() else {
            return Err(EngineError::ShuttingDown);
        };
        self.create_detached(job).await
    }

    /// [`DeferredTask::create`] on a tokio task of its own: a caller that stops
    /// waiting (its client went away) must not leave a record written but its work
    /// unowned, so once started the creation runs to its end.
    async fn create_detached(
        self,
        job: JoinHandle<Option<Outcome>>,
    ) -> Result<TaskRecord, EngineError> {
        // In the request's span, as the creation would be without the spawn.
        tokio::spawn(self.create(job).instrument(tracing::Span::current()))
            .await
            .unwrap_or(Err(EngineError::ShuttingDown))
    }

    async fn create(
        mut self,
        mut job: JoinHandle<Option<Outcome>>,
    ) -> Result<TaskRecord, EngineError> {
        let inner = Arc::clone(&self.engine.inner);
        let core = &inner.core;
        let mut record = self.record.clone();
        {
            let mut kept = self
                .shared
                .message
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if let Some(message) = kept.take() {
                record.status_message = Some(message);
            }
            self.shared.phase.send_replace(Phase::Creating);
        }
        let pending = Arc::new(PendingCreate::new(record.clone()));
        let creating = core.store.create_pending(Arc::clone(&pending));
        tokio::pin!(creating);
        let mut ended = None;
        let stored = tokio::select! {
            biased;
            stored = &mut creating => stored,
            joined = &mut job => {
                // Offer the end to the creation; whether the store took it shows in
                // the record it returns (ended, or still as created).
                let outcome = crate::executor::joined(&record.id, joined);
                if let Some(o) = &outcome {
                    pending.amend(inner.executor.end_params(core, &record.id, o.clone()));
                }
                ended = Some(outcome);
                creating.await
            }
        };
        let stored = match stored {
            Ok(r) => r,
            Err(e) => {
                self.cancel.cancel();
                job.abort();
                self.shared.phase.send_replace(Phase::Abandoned);
                return Err(e.into());
            }
        };
        crate::audit::created(&record, core.config.audit_arguments);
        core.observe(&record);
        self.shared.phase.send_replace(Phase::Created);
        let slot = self.slot.take();
        // Work that ended while its creation was being written, too late to go along:
        // its end is written before the reply, so the first read after it finds it.
        let ended = match ended {
            Some(outcome) => Some(outcome),
            None if job.is_finished() => Some(crate::executor::joined(&record.id, job.await)),
            None => {
                core.publish(&record);
                inner.executor.adopt(
                    core,
                    &record,
                    job,
                    self.cancel.clone(),
                    slot,
                    self.span.clone(),
                );
                return Ok(record);
            }
        };
        drop(slot);
        if stored.status.is_terminal() {
            // Committed with its creation: one atomic step, one fsync.
            crate::audit::status_changed(&stored);
            core.observe(&stored);
            core.publish(&stored);
            crate::observability::record_end(&self.span, &stored, &*core.reader());
        } else {
            core.publish(&record);
            if let Some(outcome) = ended.flatten() {
                // The end is the work's write: in the task's span, as for any task.
                let finishing = inner.executor.finish(core, &record.id, outcome);
                if let Some(last) = finishing.instrument(self.span.clone()).await {
                    crate::observability::record_end(&self.span, &last, &*core.reader());
                }
            }
        }
        // The reply shows the task as created (`working`, as both wires have a new
        // task begin); the next read finds how it ended.
        Ok(record)
    }
}
