//! The one tokio task of a deferred task's work, and the state it shares with the
//! [`DeferredTask`](crate::DeferredTask) that started it.
//!
//! The work starts before its task exists, and must not be moved or restarted when
//! the task is created: so it is spawned once, as a [`DeferredJob`], which on its end
//! hands the outcome to whoever owns it then. Before the task is created that is the
//! caller (through [`Shared`]); once it is, the engine has adopted the job and the
//! same tokio task records the outcome, as a launched task's [`Job`] does.
//!
//! [`Shared`] is also the work's context's host ([`TaskHost`]) until the end: a status
//! message set before the task exists is kept for its creation; an input request makes
//! the call a task at once and waits until it is one. A running deferred task thus
//! costs its work, this one shared allocation and its tokio task.
//!
//! [`Job`]: crate::executor

use futures::future::{AbortHandle, Abortable, Aborted, BoxFuture};
use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{Failure, InputRequest, Outcome};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::context::TaskHost;
use crate::core::Core;
use crate::engine::{Inner, Work};
use crate::executor::Executor;
use crate::input::InputError;
use crate::quota::Slot;

/// Where a deferred task stands.
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

/// Who takes the work's end.
enum EndTo {
    /// The caller, still deciding (or creating the task): the end is kept here.
    Caller,
    /// The work ended before anyone adopted it: its outcome (`None` when it was
    /// aborted), for the caller to take.
    Ended(Option<Outcome>),
    /// The engine adopted the job: it records the end itself.
    Engine {
        executor: Arc<Executor>,
        core: Arc<Core>,
        id: TaskId,
        _slot: Option<Slot>,
    },
    /// Taken.
    Taken,
}

/// Work that ended before the engine could adopt it: its end (`None` when it was
/// aborted) and the quota slot, back to the caller to record.
pub(crate) type EndedFirst = Box<(Option<Outcome>, Option<Slot>)>;

/// What a [`DeferredJob`], its work's context and the caller share.
pub(crate) struct Shared {
    phase: AtomicU8,
    /// Woken when the phase changes and when the work ends unadopted.
    changed: Notify,
    /// Set when the work needs a task now (an input request).
    pub(crate) wanted: Notify,
    /// The last status message set before the task existed.
    message: Mutex<Option<String>>,
    end: Mutex<EndTo>,
    engine: Weak<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means a panic elsewhere mid-update of a small value that
    // stays consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    pub(crate) fn new(engine: Weak<Inner>) -> Arc<Shared> {
        Arc::new(Shared {
            phase: AtomicU8::new(Phase::Pending as u8),
            changed: Notify::new(),
            wanted: Notify::new(),
            message: Mutex::new(None),
            end: Mutex::new(EndTo::Caller),
            engine,
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
        let mut kept = lock(&self.message);
        self.set_phase(Phase::Creating);
        kept.take()
    }

    /// Waits until `done` says the shared state is as wanted, re-checking on every
    /// change (registered before each check, so no wake-up is missed).
    async fn wait_until<T>(&self, mut done: impl FnMut(&Shared) -> Option<T>) -> T {
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
        let mut end = lock(&self.end);
        match std::mem::replace(&mut *end, EndTo::Taken) {
            EndTo::Ended(outcome) => Some(outcome),
            other => {
                *end = other;
                None
            }
        }
    }

    /// Hands the job's end to the engine: from now on the job records it. Returns the
    /// end instead when the work had already ended (the caller records it then).
    pub(crate) fn adopt(
        &self,
        executor: Arc<Executor>,
        core: Arc<Core>,
        id: TaskId,
        slot: Option<Slot>,
    ) -> Result<(), EndedFirst> {
        let mut end = lock(&self.end);
        match std::mem::replace(&mut *end, EndTo::Taken) {
            EndTo::Caller => {
                *end = EndTo::Engine {
                    executor,
                    core,
                    id,
                    _slot: slot,
                };
                Ok(())
            }
            EndTo::Ended(outcome) => Err(Box::new((outcome, slot))),
            other => {
                *end = other;
                Err(Box::new((None, slot)))
            }
        }
    }
}

#[async_trait::async_trait]
impl TaskHost for Shared {
    async fn set_message(&self, id: &TaskId, message: String) {
        {
            let mut kept = lock(&self.message);
            if self.phase() == Phase::Pending {
                *kept = Some(message);
                return;
            }
        }
        if !self.created().await {
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
        self.wanted.notify_one();
        if !self.created().await {
            return Err(InputError::Cancelled);
        }
        match self.engine.upgrade() {
            Some(inner) => inner.ask(id, key, request, cancel).await,
            None => Err(InputError::Cancelled),
        }
    }
}

/// The work as its job runs it: a panic caught (while making the future too), under
/// an abort handle.
type Guarded = Abortable<crate::executor::Guarded<Work>>;

/// A deferred task's one tokio task: its work, then the hand-over of its end. See the
/// module docs.
pub(crate) struct DeferredJob {
    work: Guarded,
    shared: Arc<Shared>,
    recording: Option<BoxFuture<'static, ()>>,
}

impl DeferredJob {
    /// The job for the work `make` returns (a panic while making it is the work's
    /// crash), stopped by the returned handle.
    pub(crate) fn new(
        shared: Arc<Shared>,
        make: impl FnOnce() -> Work,
    ) -> (DeferredJob, AbortHandle) {
        let work = crate::executor::Guarded::new(make);
        let (abort, registration) = AbortHandle::new_pair();
        let job = DeferredJob {
            work: Abortable::new(work, registration),
            shared,
            recording: None,
        };
        (job, abort)
    }
}

/// What ended work leaves for the caller: its outcome, a crash as a failure, nothing
/// when it was aborted.
fn outcome_of(ended: Result<std::thread::Result<Outcome>, Aborted>) -> Option<Outcome> {
    match ended {
        Ok(Ok(outcome)) => Some(outcome),
        Ok(Err(_panic)) => Some(Outcome::failed(
            Failure::ToolPanicked,
            "the tool crashed while running this task",
        )),
        Err(Aborted) => None,
    }
}

impl Future for DeferredJob {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        loop {
            if let Some(recording) = this.recording.as_mut() {
                return recording.as_mut().poll(cx);
            }
            let ended = std::task::ready!(Pin::new(&mut this.work).poll(cx));
            let mut end = lock(&this.shared.end);
            match std::mem::replace(&mut *end, EndTo::Taken) {
                EndTo::Engine {
                    executor,
                    core,
                    id,
                    _slot,
                } => {
                    drop(end);
                    this.recording = Some(Box::pin(async move {
                        executor.ended(core, id, ended).await;
                        drop(_slot);
                    }));
                }
                EndTo::Caller => {
                    if let Ok(Err(_)) = &ended {
                        tracing::error!("task work panicked");
                    }
                    *end = EndTo::Ended(outcome_of(ended));
                    drop(end);
                    this.shared.changed.notify_waiters();
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
