//! [`DeferredTask`]: a tool's work started before its task exists.
//!
//! Two things need it. On the Tasks extension wire the server decides whether a call
//! becomes a task: work that ends within a short window is answered inline and leaves
//! no task behind ([`DeferredTask::settle`]); otherwise the task is created and the work
//! that already ran goes on, never restarted. And on any wire, work that ends while its
//! creation is being committed is committed with it ([`DeferredTask::into_task`]): one
//! fsync on SQLite instead of two, and the first read after the reply finds the result.
//!
//! The work runs on one tokio task from start to end, created or not (see
//! `deferred_job`); before the record exists its context answers through the state
//! that job shares with the [`DeferredTask`]: a status message is kept and stored with
//! the creation; an input request (which needs a task to live on) makes the call a
//! task at once and waits until it is one.

use futures::future::AbortHandle;
use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{Outcome, PendingCreate, TaskRecord};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::context::{TaskContext, TaskHost};
use crate::deferred_job::{DeferredJob, Phase, Shared};
use crate::engine::{CreateParams, Engine, Work};
use crate::error::EngineError;
use crate::quota::Slot;

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
    /// Stops the work; `None` once the work is the engine's (or was stopped).
    abort: Option<AbortHandle>,
    /// The work's job until it is spawned (see [`DeferredTask::into_task`]).
    job: Option<DeferredJob>,
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
        if let Some(abort) = self.abort.take() {
            self.cancel.cancel();
            abort.abort();
            self.shared.set_phase(Phase::Abandoned);
        }
    }
}

impl Engine {
    /// Prepares `work` as a task-to-be: the quota slot is taken now (a refused call
    /// runs nothing); the work starts with [`DeferredTask::settle`] or
    /// [`DeferredTask::into_task`], on the one tokio task it then keeps to its end, and
    /// the task is created only when they say so.
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
        let shared = Shared::new(Arc::downgrade(&self.inner));
        let weak_host: std::sync::Weak<dyn TaskHost> = {
            let weak: std::sync::Weak<Shared> = Arc::downgrade(&shared);
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
        let (job, abort) = DeferredJob::new(Arc::clone(&shared), || work(ctx));
        Ok(DeferredTask {
            engine: self.clone(),
            record,
            slot: Some(slot),
            cancel,
            abort: Some(abort),
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
        // The abort handle stays in `self` while waiting: a caller that stops waiting
        // drops `self`, which stops the work (no task exists to carry it on).
        // The job is polled here, in the caller's task, during the window: work that
        // ends in it costs no spawn, as a plain call would. Moving the job to a tokio
        // task of its own afterwards is safe (its work is a boxed future) and wakes it.
        let shared = Arc::clone(&self.shared);
        let span = self.span.clone();
        let ran_out = match self.job.as_mut() {
            Some(job) => tokio::select! {
                () = job.instrument(span) => true,
                () = tokio::time::sleep(window) => false,
                () = shared.wanted.notified() => false,
            },
            None => false,
        };
        let ended = if ran_out {
            self.job = None;
            shared.take_end()
        } else {
            None
        };
        match ended {
            Some(ended) => {
                self.abort.take();
                self.shared.set_phase(Phase::Abandoned);
                self.slot.take();
                let outcome = ended.unwrap_or_else(|| {
                    Outcome::failed(
                        mcp_tasks_store::Failure::Cancelled,
                        "the call was stopped before it finished",
                    )
                });
                Ok(Settled::Done(outcome))
            }
            None => {
                self.spawn_job();
                self.create_detached()
                    .await
                    .map(|r| Settled::Task(Box::new(r)))
            }
        }
    }

    /// Creates the task now, whatever the work does; work that ends before the
    /// creation is committed is committed with it (see the module docs).
    ///
    /// # Errors
    /// A store failure; the work is stopped then.
    pub async fn into_task(mut self) -> Result<TaskRecord, EngineError> {
        // Polled once here first: work that ends at once (an instant tool) has ended
        // before its creation is written, so both go in one write whatever the
        // scheduler does; other work goes on on its own tokio task.
        if let Some(job) = self.job.as_mut() {
            let span = self.span.clone();
            if futures::FutureExt::now_or_never(job.instrument(span)).is_some() {
                self.job = None;
            }
        }
        self.spawn_job();
        self.create_detached().await
    }

    /// Starts the work's job on a tokio task of its own (once; it runs there to its
    /// end, created or not).
    fn spawn_job(&mut self) {
        if let Some(job) = self.job.take() {
            tokio::spawn(job.instrument(self.span.clone()));
        }
    }

    /// [`DeferredTask::create`] on a tokio task of its own: a caller that stops
    /// waiting (its client went away) must not leave a record written but its work
    /// unowned, so once started the creation runs to its end.
    async fn create_detached(self) -> Result<TaskRecord, EngineError> {
        // In the request's span, as the creation would be without the spawn.
        tokio::spawn(self.create().instrument(tracing::Span::current()))
            .await
            .unwrap_or(Err(EngineError::ShuttingDown))
    }

    async fn create(mut self) -> Result<TaskRecord, EngineError> {
        let Some(abort) = self.abort.take() else {
            return Err(EngineError::ShuttingDown);
        };
        let inner = Arc::clone(&self.engine.inner);
        let core = &inner.core;
        let shared = Arc::clone(&self.shared);
        let mut record = self.record.clone();
        if let Some(message) = shared.begin_creating() {
            record.status_message = Some(message);
        }
        let pending = Arc::new(PendingCreate::new(record.clone()));
        // Offers the work's end to the creation; whether the store took it shows in the
        // record it returns (ended, or still as created).
        let offer = |outcome: &Option<Outcome>| {
            if let Some(o) = outcome {
                pending.amend(inner.executor.end_params(core, &record.id, o.clone()));
            }
        };
        // Work that already ended goes into the creation's own write.
        let ended_first = shared.take_end();
        if let Some(outcome) = &ended_first {
            offer(outcome);
        }
        let creating = core.store.create_pending(Arc::clone(&pending));
        tokio::pin!(creating);
        let (stored, ended) = match ended_first {
            Some(outcome) => (creating.await, Some(outcome)),
            None => tokio::select! {
                biased;
                stored = &mut creating => (stored, None),
                outcome = shared.ended() => {
                    offer(&outcome);
                    (creating.await, Some(outcome))
                }
            },
        };
        let stored = match stored {
            Ok(r) => r,
            Err(e) => {
                self.cancel.cancel();
                abort.abort();
                shared.set_phase(Phase::Abandoned);
                return Err(e.into());
            }
        };
        crate::audit::created(&record, core.config.audit_arguments);
        core.observe(&record);
        if !stored.status.is_terminal() {
            // The task as created, before the job may record an end, so that events
            // keep their order.
            core.publish(&record);
        }
        let slot = self.slot.take();
        // Work that ended while its creation was being written, too late to go along:
        // its end is written before the reply, so the first read after it finds it.
        let (ended, slot) = match ended {
            Some(outcome) => (outcome, slot),
            None => {
                let adopted =
                    inner
                        .executor
                        .adopt(core, &record, &shared, abort, self.cancel.clone(), slot);
                shared.set_phase(Phase::Created);
                match adopted {
                    Ok(()) => return Ok(record),
                    // It ended between the creation and the adoption.
                    Err(ended) => *ended,
                }
            }
        };
        shared.set_phase(Phase::Created);
        drop(slot);
        if stored.status.is_terminal() {
            // Committed with its creation: one atomic step, one fsync.
            crate::audit::status_changed(&stored);
            core.observe(&stored);
            core.publish(&stored);
            crate::observability::record_end(&self.span, &stored, &*core.reader());
        } else if let Some(outcome) = ended {
            // The end is the work's write: in the task's span, as for any task.
            let finishing = inner.executor.finish(core, &record.id, outcome);
            if let Some(last) = finishing.instrument(self.span.clone()).await {
                crate::observability::record_end(&self.span, &last, &*core.reader());
            }
        }
        // The reply shows the task as created (`working`, as both wires have a new
        // task begin); the next read finds how it ended.
        Ok(record)
    }
}
