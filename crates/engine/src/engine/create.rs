//! The one creation path: [`Engine::begin`] takes the quota slot and makes the record,
//! then the [`Creation`] either *commits* (stores the record, then starts the work:
//! [`Engine::create`], external jobs) or *starts* the work at once as a
//! [`ProvisionalTask`], a call that may still end inline. Tool calls on both wires take
//! the second way; a task taken over after a crash is launched by the same job code
//! (`run::job::launch`) on its stored record.
//!
//! A provisional task exists for two reasons. On the Tasks extension wire the server
//! decides whether a call becomes a task: work that ends within a short window is
//! answered inline and leaves no task behind ([`ProvisionalTask::settle`]); otherwise
//! the task is created and the work that already ran goes on, never restarted. And on
//! any wire, work that ends while its creation is being committed is committed with it
//! ([`ProvisionalTask::commit`]): one fsync on SQLite instead of two, and the first read
//! after the reply finds the result.
//!
//! The work runs on one tokio task from start to end, created or not (see `run::job`);
//! before the record exists its context answers through the job's hand-over: a status
//! message is kept and stored with the creation; a question (which needs a task to live
//! on) makes the call a task at once and waits until it is one.

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{Outcome, PendingCreate, RequestJson, TaskRecord};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::context::{TaskContext, TaskHost, Work};
use crate::engine::{CreateParams, Engine};
use crate::error::EngineError;
use crate::run::abort::WorkAbort;
use crate::run::job::{Handover, Job, Phase};
use crate::run::quota::Slot;

/// How a provisional task settled.
#[derive(Debug)]
pub enum Settled {
    /// The work ended within the window: its outcome. No task was created.
    Done(Outcome),
    /// The call became a task, stored durably; its work goes on (or already ended,
    /// and the record says how).
    Task(Box<TaskRecord>),
}

/// A task about to be created: its quota slot is held and its record made (with the
/// settings in force), but nothing is stored and nothing runs yet. Dropping it gives
/// the slot back. See the module docs.
pub struct Creation {
    engine: Engine,
    record: TaskRecord,
    client_capabilities: Value,
    slot: Slot,
}

impl std::fmt::Debug for Creation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Creation")
            .field("task_id", &self.record.id)
            .finish()
    }
}

impl Engine {
    /// The first step of every creation: takes a quota slot for the caller (a refused
    /// call runs nothing) and makes the task's record, `working` and owned by the
    /// caller. Then [`Creation::commit`] or [`Creation::start`].
    ///
    /// # Errors
    /// [`EngineError::QuotaExceeded`] naming the limit; [`EngineError::Draining`] once
    /// [`Engine::drain`] began.
    pub fn begin(&self, params: CreateParams) -> Result<Creation, EngineError> {
        let inner = &self.inner;
        if inner.executor.is_draining() {
            return Err(EngineError::Draining);
        }
        let slot = inner
            .executor
            .quota
            .acquire(&params.caller)
            .map_err(|reason| {
                crate::audit::refused(&params.caller.principal, &reason);
                inner.core.activity.count(|a| a.quota_refusals += 1);
                EngineError::QuotaExceeded(reason)
            })?;
        let config = &inner.core.config;
        let now = inner.core.now();
        let ttl = config.effective_ttl(params.requested_ttl);
        let record = TaskRecord {
            id: TaskId::generate(),
            owner: params.caller.principal.clone(),
            session: params.caller.session.clone(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl: Some(ttl),
            expires_at: chrono::Duration::from_std(ttl)
                .ok()
                .and_then(|d| now.checked_add_signed(d)),
            poll_interval: Some(config.poll_interval),
            method: params.method,
            request: RequestJson::from_value(&params.request),
            outcome: None,
            runner: Some(inner.core.runner_id.clone()),
            version: 0,
            input_requests: Default::default(),
            lease_until: config
                .lease_ttl
                .and_then(|l| chrono::Duration::from_std(l).ok())
                .and_then(|l| now.checked_add_signed(l)),
            lease_generation: u64::from(config.lease_ttl.is_some()),
            external: None,
        };
        Ok(Creation {
            engine: self.clone(),
            record,
            client_capabilities: params.client_capabilities,
            slot,
        })
    }

    /// Creates a task: stores the record (durably, on durable stores) and only then
    /// spawns `work`, so the returned record exists whatever happens next. The same
    /// as `begin(params)?.commit(work)`.
    ///
    /// # Errors
    /// Quota refusals and store failures; nothing runs then.
    #[tracing::instrument(skip_all, fields(method = %params.method))]
    pub async fn create<F>(&self, params: CreateParams, work: F) -> Result<TaskRecord, EngineError>
    where
        F: FnOnce(TaskContext) -> Work,
    {
        self.begin(params)?.commit(work).await
    }
}

impl Creation {
    /// The id the task has (or would have).
    pub fn id(&self) -> &TaskId {
        &self.record.id
    }

    /// Stores the task, then starts `work` on a tokio task of its own; its outcome is
    /// recorded when it ends.
    ///
    /// # Errors
    /// A store failure; nothing runs then.
    pub async fn commit<F>(self, work: F) -> Result<TaskRecord, EngineError>
    where
        F: FnOnce(TaskContext) -> Work,
    {
        self.commit_with(work).await
    }

    /// [`Creation::commit`] for work whose future may also end without an outcome to
    /// record (`Option<Outcome>`, `None`: it handed the task over, as the start of an
    /// external job does).
    pub(crate) async fn commit_with<F, W, O>(self, work: F) -> Result<TaskRecord, EngineError>
    where
        F: FnOnce(TaskContext) -> W,
        W: Future<Output = O> + Send + Unpin + 'static,
        O: Into<Option<Outcome>> + Send + 'static,
    {
        let Creation {
            engine,
            record,
            client_capabilities,
            slot,
        } = self;
        let inner = &engine.inner;
        let core = &inner.core;
        core.note_writing(&record);
        core.store.create(&record).await?;
        crate::audit::created(&record, core.config.audit_arguments);
        core.observe(&record);
        crate::run::job::launch(
            core,
            &inner.executor,
            inner.host(),
            &record,
            core.capabilities(client_capabilities),
            work,
            Some(slot),
            Arc::new(crate::steps::StepLog::first()),
        );
        core.publish(&record);
        Ok(record)
    }

    /// Starts `work` now, before the task exists, as a [`ProvisionalTask`]: it becomes a
    /// task with [`ProvisionalTask::commit`] or, unless it ends within a window,
    /// [`ProvisionalTask::settle`]. The work runs on the one tokio task it then keeps
    /// to its end.
    pub fn start<F>(self, work: F) -> ProvisionalTask
    where
        F: FnOnce(TaskContext) -> Work,
    {
        let Creation {
            engine,
            record,
            client_capabilities,
            slot,
        } = self;
        let core = &engine.inner.core;
        let handover = Handover::provisional(engine.inner.host());
        let host: std::sync::Weak<dyn TaskHost> = {
            let weak: std::sync::Weak<Handover> = Arc::downgrade(&handover);
            weak
        };
        let cancel = CancellationToken::new();
        let ctx = crate::run::sinks::task_context(
            core,
            host,
            &record,
            core.capabilities(client_capabilities),
            cancel.clone(),
            Arc::new(crate::steps::StepLog::first()),
        );
        let steps = Arc::clone(ctx.steps());
        let span = crate::run::span::task_span(&record);
        let abort = WorkAbort::of(&handover);
        let job = Job::new(Arc::clone(&handover), || work(ctx));
        ProvisionalTask {
            engine,
            record,
            slot: Some(slot),
            cancel,
            abort: Some(abort),
            job: Some(job),
            handover,
            span,
            steps,
        }
    }
}

/// Work started before its task exists. Dropping it before it settled aborts the work
/// (the caller went away; no task exists to carry it on). See the module docs.
pub struct ProvisionalTask {
    engine: Engine,
    record: TaskRecord,
    slot: Option<Slot>,
    cancel: CancellationToken,
    /// Stops the work; `None` once the work is the engine's (or was stopped).
    abort: Option<WorkAbort>,
    /// The work's job until it is spawned (see [`ProvisionalTask::commit`]).
    job: Option<Job<Work>>,
    handover: Arc<Handover>,
    span: tracing::Span,
    /// The work's steps (and the retry it may ask for), for the job once adopted.
    steps: Arc<crate::steps::StepLog>,
}

impl std::fmt::Debug for ProvisionalTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProvisionalTask")
            .field("task_id", &self.record.id)
            .finish()
    }
}

impl Drop for ProvisionalTask {
    fn drop(&mut self) {
        if let Some(abort) = self.abort.take() {
            self.cancel.cancel();
            abort.abort();
            self.handover.set_phase(Phase::Abandoned);
        }
    }
}

impl ProvisionalTask {
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
        let shared = Arc::clone(&self.handover);
        let span = self.span.clone();
        let ran_out = match self.job.as_mut() {
            Some(job) => tokio::select! {
                () = job.instrument(span) => true,
                () = tokio::time::sleep(window) => false,
                () = shared.wanted() => false,
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
                self.handover.set_phase(Phase::Abandoned);
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
    pub async fn commit(mut self) -> Result<TaskRecord, EngineError> {
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

    /// `ProvisionalTask::create` on a tokio task of its own: a caller that stops
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
        let shared = Arc::clone(&self.handover);
        let mut record = self.record.clone();
        if let Some(message) = shared.begin_creating() {
            record.status_message = Some(message);
        }
        let pending = Arc::new(PendingCreate::new(record.clone()));
        // Offers the work's end to the creation; whether the store took it shows in the
        // record it returns (ended, or still as created).
        let offer = |outcome: &Option<Outcome>| {
            if let Some(o) = outcome {
                pending.amend(crate::run::ledger::end_params(
                    core,
                    &inner.executor,
                    &record.id,
                    o.clone(),
                ));
            }
        };
        // Work that already ended goes into the creation's own write.
        let ended_first = shared.take_end();
        if let Some(outcome) = &ended_first {
            offer(outcome);
        }
        core.note_writing(&record);
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
                let adopted = crate::run::job::adopt(
                    &inner.executor,
                    core,
                    &record,
                    &shared,
                    (self.cancel.clone(), abort),
                    slot,
                    Arc::clone(&self.steps),
                );
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
            crate::run::span::record_end(&self.span, &stored, &*core.reader());
        } else if let Some(outcome) = ended {
            // The end is the work's write: in the task's span, as for any task.
            let finishing = crate::run::ledger::finish(core, &inner.executor, &record.id, outcome);
            if let Some(last) = finishing.instrument(self.span.clone()).await {
                crate::run::span::record_end(&self.span, &last, &*core.reader());
            }
        }
        // The reply shows the task as created (`working`, as both wires have a new
        // task begin); the next read finds how it ended.
        Ok(record)
    }
}
