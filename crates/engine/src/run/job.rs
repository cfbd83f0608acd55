//! [`Job`]: the one tokio task of a task's work, however the task began, and the
//! [`Handover`] that says who records its end.
//!
//! A task's work runs on one tokio task from start to end: the work (under an abort
//! handle of its own, [`WorkAbort`], its panics caught, so that an abort or a crash
//! stops the work but not the recording of how it ended), then the recording. Written out rather
//! than an `async` block so that it holds exactly these fields while the work runs
//! (an `async` block keeps room for every local of every step, and a running task is
//! mostly waiting); the recording's state is boxed only once the work has ended.
//!
//! Who records the end is the [`Handover`]'s to say. Work [`launch`]ed for a stored
//! record is the engine's from the start. *Provisional* work starts before its task
//! exists (a call that may still end inline, see `engine::create`): its end goes to
//! the caller until the task is created and the engine [`adopt`]s the job; the same
//! tokio task then records it. Until then the handover is also the work's context's
//! host ([`TaskHost`]): a status message set before the task exists is kept for its
//! creation; a question makes the call a task at once and waits until it is one.

use futures::future::{Aborted, BoxFuture};
use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{Failure, InputRequest, Outcome, TaskRecord};
use parking_lot::Mutex;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::context::{LogMessage, Progress, TaskContext, TaskHost};
use crate::input::InputError;
use crate::retry::Retry;
use crate::run::abort::{AbortSite, AbortState, Guarded, WorkAbort};
use crate::run::core::Core;
use crate::run::executor::Executor;
use crate::run::quota::Slot;
use crate::steps::{StepError, StepLog};

/// Where provisional work stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Phase {
    /// No task: the work runs as a plain call.
    Pending = 0,
    /// The record is being stored.
    Creating = 1,
    /// The task exists; the work is the engine's like any task's.
    Created = 2,
    /// No task will exist (it ended inline, or its creation failed).
    Abandoned = 3,
}

impl Phase {
    fn from_u8(v: u8) -> Phase {
        match v {
            0 => Phase::Pending,
            1 => Phase::Creating,
            2 => Phase::Created,
            _ => Phase::Abandoned,
        }
    }
}

/// What records a task's end for the engine: the components it writes through, the
/// task, and its quota slot (held until the end is recorded). Who runs the task again
/// when the work asked for a retry is the handover's `host`.
pub(crate) struct Recorder {
    pub(crate) executor: Arc<Executor>,
    pub(crate) core: Arc<Core>,
    pub(crate) id: TaskId,
    pub(crate) slot: Option<Slot>,
    /// The attempt's steps, holding the retry the work may have asked for.
    pub(crate) steps: Arc<StepLog>,
}

/// Who takes the work's end.
enum EndTo {
    /// The caller, still deciding (or creating the task): the end is kept here.
    Caller,
    /// The work ended before anyone adopted it: its outcome (`None` when it was
    /// aborted), for the caller to take. Boxed: a running task's handover has room
    /// for the recorder only.
    Ended(Option<Box<Outcome>>),
    /// The engine: the job records the end itself.
    Engine(Recorder),
    /// Taken.
    Taken,
}

/// Work that ended before the engine could adopt it: its end (`None` when it was
/// aborted) and the quota slot, back to the caller to record.
pub(crate) type EndedFirst = Box<(Option<Outcome>, Option<Slot>)>;

/// What a [`Job`], its work's context and the caller share. See the module docs.
pub(crate) struct Handover {
    phase: AtomicU8,
    /// Set when the work needs a task now (a question).
    wanted: AtomicBool,
    /// Whether the work is to stop ([`WorkAbort`]): the job's abort handle lives here
    /// rather than in an allocation of its own.
    pub(crate) abort: AbortState,
    /// Woken when the phase changes, when the work ends unadopted and when it wants
    /// a task: one for all, since every waiter re-checks what it waits for.
    changed: Notify,
    /// What the work said before the task existed; `None` until it says something
    /// (most work does not in its first moments): boxed, since the handover lives as
    /// long as the task runs.
    early: Mutex<Option<Box<Early>>>,
    end: Mutex<EndTo>,
    /// Who answers the work's status messages and questions once the task exists
    /// (the engine), and runs it again when it asks for a retry.
    pub(crate) host: Option<Weak<dyn TaskHost>>,
}

impl AbortSite for Handover {
    fn abort_state(&self) -> &AbortState {
        &self.abort
    }
}

/// What provisional work said before its task existed.
#[derive(Default)]
struct Early {
    /// The last status message.
    message: Option<String>,
    /// Steps finished (key, attempt, output): recorded once the task exists, before
    /// the work's next step or question.
    steps: Vec<(String, u32, Value)>,
}

impl Handover {
    /// The handover of provisional work: its end is the caller's until adopted;
    /// `host` answers for the work once its task exists.
    pub(crate) fn provisional(host: Weak<dyn TaskHost>) -> Arc<Handover> {
        Arc::new(Handover {
            phase: AtomicU8::new(Phase::Pending as u8),
            wanted: AtomicBool::new(false),
            abort: AbortState::default(),
            changed: Notify::new(),
            early: Mutex::new(None),
            end: Mutex::new(EndTo::Caller),
            host: Some(host),
        })
    }

    /// The handover of work whose task is stored: the engine's from the start.
    fn engine(recorder: Recorder, host: Weak<dyn TaskHost>) -> Arc<Handover> {
        Arc::new(Handover {
            phase: AtomicU8::new(Phase::Created as u8),
            wanted: AtomicBool::new(false),
            abort: AbortState::default(),
            changed: Notify::new(),
            early: Mutex::new(None),
            end: Mutex::new(EndTo::Engine(recorder)),
            host: Some(host),
        })
    }

    pub(crate) fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::Acquire))
    }

    pub(crate) fn set_phase(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Release);
        self.changed.notify_waiters();
    }

    /// The status message kept before the task existed, taken while moving to
    /// [`Phase::Creating`] (so that none set meanwhile is lost: a later one goes to
    /// the task once it exists).
    pub(crate) fn begin_creating(&self) -> Option<String> {
        let mut kept = self.early.lock();
        self.set_phase(Phase::Creating);
        kept.as_mut().and_then(|e| e.message.take())
    }

    /// Waits until `done` says the shared state is as wanted, re-checking on every
    /// change (registered before each check, so no wake-up is missed).
    async fn wait_until<T>(&self, mut done: impl FnMut(&Handover) -> Option<T>) -> T {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if let Some(v) = done(self) {
                return v;
            }
            changed.await;
        }
    }

    /// Waits until the work needs a task now (it asked a question).
    pub(crate) async fn wanted(&self) {
        self.wait_until(|s| s.wanted.load(Ordering::Acquire).then_some(()))
            .await;
    }

    /// Says that the work needs a task now, waking whoever waits for it.
    fn want(&self) {
        self.wanted.store(true, Ordering::Release);
        self.changed.notify_waiters();
    }

    /// Waits until the task exists (`true`) or never will (`false`).
    async fn created(&self) -> bool {
        self.wait_until(|s| match s.phase() {
            Phase::Created => Some(true),
            Phase::Abandoned => Some(false),
            _ => None,
        })
        .await
    }

    /// Waits for the end of work nobody adopted: its outcome (`None`: it was aborted).
    pub(crate) async fn ended(&self) -> Option<Outcome> {
        self.wait_until(|s| s.take_end()).await
    }

    /// The end of work nobody adopted, if it has ended.
    pub(crate) fn take_end(&self) -> Option<Option<Outcome>> {
        let mut end = self.end.lock();
        match std::mem::replace(&mut *end, EndTo::Taken) {
            EndTo::Ended(outcome) => Some(outcome.map(|o| *o)),
            other => {
                *end = other;
                None
            }
        }
    }

    /// Hands the job's end to the engine: from now on the job records it. Returns the
    /// end instead when the work had already ended (the caller records it then).
    fn adopt(&self, recorder: Recorder) -> Result<(), EndedFirst> {
        let mut end = self.end.lock();
        match std::mem::replace(&mut *end, EndTo::Taken) {
            EndTo::Caller => {
                *end = EndTo::Engine(recorder);
                Ok(())
            }
            EndTo::Ended(outcome) => Err(Box::new((outcome.map(|o| *o), recorder.slot))),
            other => {
                *end = other;
                Err(Box::new((None, recorder.slot)))
            }
        }
    }

    /// The host to answer for the work, once its task exists (`None`: never).
    async fn host_when_created(&self) -> Option<Arc<dyn TaskHost>> {
        if !self.created().await {
            return None;
        }
        self.host.as_ref().and_then(Weak::upgrade)
    }

    /// Records the steps that finished before the task existed.
    async fn record_early_steps(&self, id: &TaskId, host: &dyn TaskHost) -> Result<(), StepError> {
        let early = self
            .early
            .lock()
            .as_mut()
            .map(|e| std::mem::take(&mut e.steps))
            .unwrap_or_default();
        for (key, attempt, output) in early {
            host.record_step(id, key, attempt, output).await?;
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl TaskHost for Handover {
    async fn set_message(&self, id: &TaskId, message: String) {
        {
            let mut kept = self.early.lock();
            if self.phase() == Phase::Pending {
                kept.get_or_insert_with(Default::default).message = Some(message);
                return;
            }
        }
        if let Some(host) = self.host_when_created().await {
            host.set_message(id, message).await;
        }
    }

    async fn ask(
        &self,
        id: &TaskId,
        key: String,
        request: InputRequest,
        deadline: Option<(std::time::Duration, mcp_tasks_store::DeadlineOutcome)>,
        cancel: &CancellationToken,
    ) -> Result<Value, InputError> {
        self.want();
        match self.host_when_created().await {
            Some(host) => {
                if let Err(e) = self.record_early_steps(id, &*host).await {
                    tracing::warn!(task_id = %id, error = %e, "could not record the steps that ended before the task existed");
                }
                host.ask(id, key, request, deadline, cancel).await
            }
            None => Err(InputError::Cancelled),
        }
    }

    async fn record_step(
        &self,
        id: &TaskId,
        key: String,
        attempt: u32,
        output: Value,
    ) -> Result<(), StepError> {
        {
            let mut early = self.early.lock();
            if self.phase() == Phase::Pending {
                // No task yet (and maybe never: the call may end inline); kept for
                // when it exists.
                early
                    .get_or_insert_with(Default::default)
                    .steps
                    .push((key, attempt, output));
                return Ok(());
            }
        }
        let Some(host) = self.host_when_created().await else {
            // The call ended inline: there is no journal to write to, nor a need.
            return Ok(());
        };
        self.record_early_steps(id, &*host).await?;
        host.record_step(id, key, attempt, output).await
    }

    async fn created(&self) -> bool {
        self.host_when_created().await.is_some()
    }

    fn progress(
        &self,
        id: &TaskId,
        session: Option<&str>,
        token: Option<&Value>,
        progress: Progress,
    ) {
        // Before the task exists too, as for any running work: it is the engine's.
        if let Some(host) = self.host.as_ref().and_then(Weak::upgrade) {
            host.progress(id, session, token, progress);
        }
    }

    fn log(&self, id: &TaskId, session: Option<&str>, message: LogMessage) {
        if let Some(host) = self.host.as_ref().and_then(Weak::upgrade) {
            host.log(id, session, message);
        }
    }

    async fn retry_later(&self, id: &TaskId, attempt: u32, retry: Retry) -> bool {
        match self.host_when_created().await {
            Some(host) => host.retry_later(id, attempt, retry).await,
            None => false,
        }
    }
}

/// A task's one tokio task: its work (stopped by the [`WorkAbort`] of its handover),
/// then the hand-over or recording of its end. See the module docs.
pub(crate) struct Job<W> {
    work: Guarded<W>,
    handover: Arc<Handover>,
    recording: Option<BoxFuture<'static, ()>>,
}

impl<W, O> Job<W>
where
    W: Future<Output = O> + Send + Unpin + 'static,
    O: Into<Option<Outcome>> + Send + 'static,
{
    /// The job for the work `make` returns (a panic while making it is the work's
    /// crash), stopped by the [`WorkAbort`] of `handover`.
    pub(crate) fn new(handover: Arc<Handover>, make: impl FnOnce() -> W) -> Job<W> {
        Job {
            work: Guarded::new(make),
            handover,
            recording: None,
        }
    }
}

/// What ended work leaves: its outcome (`None`: nothing to record, as when it handed
/// the task over), a crash as a failure, nothing when it was aborted.
fn outcome_of<O: Into<Option<Outcome>>>(
    ended: Result<std::thread::Result<O>, Aborted>,
) -> Option<Outcome> {
    match ended {
        Ok(Ok(outcome)) => outcome.into(),
        Ok(Err(_panic)) => {
            tracing::error!("task work panicked");
            Some(Outcome::failed(
                Failure::ToolPanicked,
                "the tool crashed while running this task",
            ))
        }
        Err(Aborted) => None, // aborted after cancellation, expiry or a lost lease
    }
}

impl<W, O> Future for Job<W>
where
    W: Future<Output = O> + Unpin,
    O: Into<Option<Outcome>> + Send + 'static,
{
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        loop {
            if let Some(recording) = this.recording.as_mut() {
                return recording.as_mut().poll(cx);
            }
            let ended = std::task::ready!(this.handover.abort.poll(&mut this.work, cx));
            let outcome = outcome_of(ended);
            let mut end = this.handover.end.lock();
            match std::mem::replace(&mut *end, EndTo::Taken) {
                EndTo::Engine(recorder) => {
                    drop(end);
                    let host = this.handover.host.clone();
                    this.recording = Some(Box::pin(async move {
                        let Recorder {
                            executor,
                            core,
                            id,
                            slot,
                            steps,
                        } = recorder;
                        // Work that asked for a retry and returned (rather than being
                        // stopped) runs again when its policy allows.
                        let retry = steps.take_retry().filter(|_| outcome.is_some());
                        if let (Some(retry), Some(host)) =
                            (retry, host.as_ref().and_then(Weak::upgrade))
                        {
                            if host.retry_later(&id, steps.attempt, retry).await {
                                executor.forget(&id);
                                drop(slot);
                                return;
                            }
                        }
                        crate::run::ledger::record_end(&core, &executor, &id, outcome).await;
                        drop(slot);
                    }));
                }
                EndTo::Caller => {
                    *end = EndTo::Ended(outcome.map(Box::new));
                    drop(end);
                    this.handover.changed.notify_waiters();
                    return Poll::Ready(());
                }
                other => {
                    *end = other;
                    return Poll::Ready(());
                }
            }
        }
    }
}

/// Spawns `work` for a stored record: registers it as running here (with the lease
/// generation it holds), and records its outcome when it ends. `host` answers the
/// work's status messages and questions; `slot` is the quota slot held until the work
/// stops. The work ends in an [`Outcome`] to record, or in `Option<Outcome>` for work
/// that may end with nothing to record (`None`: it handed the task over, as the start
/// of an external job does; only the running entry and the slot then go away).
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch<F, W, O>(
    core: &Arc<Core>,
    executor: &Arc<Executor>,
    host: Weak<dyn TaskHost>,
    record: &TaskRecord,
    client_capabilities: Arc<Value>,
    work: F,
    slot: Option<Slot>,
    steps: Arc<StepLog>,
) where
    F: FnOnce(TaskContext) -> W,
    W: Future<Output = O> + Send + Unpin + 'static,
    O: Into<Option<Outcome>> + Send + 'static,
{
    let cancel = CancellationToken::new();
    let ctx = crate::run::sinks::task_context(
        core,
        host.clone(),
        record,
        client_capabilities,
        cancel.clone(),
        Arc::clone(&steps),
    );
    // Made here, inside the creating request's span: the execution is its child.
    let span = crate::run::span::task_span(record);
    let handover = Handover::engine(
        Recorder {
            executor: Arc::clone(executor),
            core: Arc::clone(core),
            id: record.id.clone(),
            slot,
            steps,
        },
        host,
    );
    executor.register(record, cancel, WorkAbort::of(&handover));
    // Making the work's future runs the caller's code (a tool's handler may do some
    // before its future starts): a panic there fails the task like a panic in the
    // future does, not the request that creates the task.
    let job = Job::new(handover, || work(ctx));
    tokio::spawn(job.instrument(span));
}

/// Takes over provisional work already running for a record just stored: registers it
/// as running here and has its job record its end, as for launched work. When the
/// work has already ended, nothing is registered and its end (and the slot) come back
/// to be recorded by the caller.
pub(crate) fn adopt(
    executor: &Arc<Executor>,
    core: &Arc<Core>,
    record: &TaskRecord,
    handover: &Handover,
    running: (CancellationToken, WorkAbort),
    slot: Option<Slot>,
    steps: Arc<StepLog>,
) -> Result<(), EndedFirst> {
    let (cancel, abort) = running;
    executor.register(record, cancel, abort);
    let adopted = handover.adopt(Recorder {
        executor: Arc::clone(executor),
        core: Arc::clone(core),
        id: record.id.clone(),
        slot,
        steps,
    });
    if adopted.is_err() {
        executor.forget(&record.id);
    }
    adopted
}
