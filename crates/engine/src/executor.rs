//! [`Executor`]: the work running in this process. It owns the table of running tasks
//! (their cancellation tokens, abort handles and the lease generation each holds) and
//! the quota slots; it spawns work, records its outcome, and stops it (cooperative
//! cancellation first, an abort after the grace period).

use futures::future::{AbortHandle, Abortable, Aborted, BoxFuture};
use futures::FutureExt;
use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{Failure, FieldChange, Outcome, StoreError, TaskRecord, TransitionParams};
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::context::{LogSink, ProgressSink, TaskContext, TaskHost};
use crate::core::{now_ms, Core};
use crate::deferred_job::EndedFirst;
use crate::events::{TaskEvent, TaskLog};
use crate::quota::{Quota, Slot};

/// The future a task runs: it resolves to what the request returns.
pub type Work = BoxFuture<'static, Outcome>;

/// One task's work running here.
struct Running {
    cancel: CancellationToken,
    /// Stops the work (not the recording of how the task ended).
    abort: AbortHandle,
    /// The lease generation this process holds (fencing token), with leases on.
    generation: Option<u64>,
}

/// The work running in this process. See the module docs.
pub(crate) struct Executor {
    running: Mutex<HashMap<TaskId, Running>>,
    pub(crate) quota: Quota,
    /// Itself, for the timers of [`Executor::stop_work`] to look back in.
    me: Weak<Executor>,
}

impl Executor {
    pub(crate) fn new(quota: Quota) -> Arc<Self> {
        Arc::new_cyclic(|me| Executor {
            running: Mutex::new(HashMap::new()),
            quota,
            me: me.clone(),
        })
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
    ///
    /// The work ends in an [`Outcome`] to record, or in `Option<Outcome>` for work that
    /// may end with nothing to record (`None`: it handed the task over, as the start of
    /// an external job does; the task is then left as the work left it, and only the
    /// running entry and the quota slot go away).
    ///
    /// One tokio task per running task: the work and the recording of its outcome run
    /// in the same future (the work under an abort handle of its own, so that an abort
    /// stops the work but not the recording), and the recording's state is boxed only
    /// once the work has ended, so an idle running task costs its work's future and
    /// little more.
    pub(crate) fn launch<F, W, O>(
        self: &Arc<Self>,
        core: &Arc<Core>,
        host: Weak<dyn TaskHost>,
        record: &TaskRecord,
        client_capabilities: Arc<Value>,
        work: F,
        slot: Option<Slot>,
    ) where
        F: FnOnce(TaskContext) -> W,
        W: Future<Output = O> + Send + Unpin + 'static,
        O: Into<Option<Outcome>> + Send + 'static,
    {
        let cancel = CancellationToken::new();
        let ctx = task_context(core, host, record, client_capabilities, cancel.clone());
        let generation = core.config.lease_ttl.map(|_| record.lease_generation);
        let (abort, registration) = AbortHandle::new_pair();
        self.lock().insert(
            record.id.clone(),
            Running {
                cancel,
                abort,
                generation,
            },
        );
        // Made here, inside the creating request's span: the execution is its child.
        let span = crate::observability::task_span(record);
        // Making the work's future runs the caller's code (a tool's handler may do
        // some before its future starts): a panic there fails the task like a panic
        // in the future does, not the request that creates the task.
        let work = Guarded::new(|| work(ctx));
        let job = Job {
            work: Abortable::new(work, registration),
            then: Then::Record {
                executor: Arc::clone(self),
                core: Arc::clone(core),
                id: record.id.clone(),
            },
            _slot: slot,
        };
        tokio::spawn(job.instrument(span));
    }

    /// Takes over work already running for a stored record (started before its
    /// creation was committed, see `deferred`): registers it as running here with the
    /// lease generation it holds, and has its job record its outcome when it ends, as
    /// [`Executor::launch`] does for work it starts itself. When the work has already
    /// ended, nothing is registered and its end (and the slot) come back to be recorded
    /// by the caller.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn adopt(
        self: &Arc<Self>,
        core: &Arc<Core>,
        record: &TaskRecord,
        shared: &crate::deferred_job::Shared,
        abort: AbortHandle,
        cancel: CancellationToken,
        slot: Option<Slot>,
    ) -> Result<(), EndedFirst> {
        let generation = core.config.lease_ttl.map(|_| record.lease_generation);
        self.lock().insert(
            record.id.clone(),
            Running {
                cancel,
                abort,
                generation,
            },
        );
        let adopted = shared.adopt(Arc::clone(self), Arc::clone(core), record.id.clone(), slot);
        if adopted.is_err() {
            self.lock().remove(&record.id);
        }
        adopted
    }

    /// What follows the work: records its outcome (or, when it was stopped from outside
    /// or handed the task over, reads how the task ended), closes the task's span, and
    /// forgets the running entry.
    pub(crate) async fn ended<O: Into<Option<Outcome>>>(
        self: Arc<Self>,
        core: Arc<Core>,
        id: TaskId,
        ended: Result<std::thread::Result<O>, Aborted>,
    ) {
        let outcome = match ended {
            Ok(Ok(outcome)) => outcome.into(),
            Ok(Err(_panic)) => {
                tracing::error!(task_id = %id, "task work panicked");
                Some(Outcome::failed(
                    Failure::ToolPanicked,
                    "the tool crashed while running this task",
                ))
            }
            Err(Aborted) => None, // aborted after cancellation, expiry or a lost lease
        };
        let last = match outcome {
            Some(outcome) => self.finish(&core, &id, outcome).await,
            // Stopped from outside (cancelled, expired, lease lost): read how it ended.
            None => core.store.get(&id, now_ms()).await.ok().flatten(),
        };
        if let Some(record) = last {
            crate::observability::record_end(&tracing::Span::current(), &record, &*core.reader());
        }
        self.lock().remove(&id);
    }

    /// The transition that records `outcome` as the end of task `id`.
    pub(crate) fn end_params(
        &self,
        core: &Core,
        id: &TaskId,
        outcome: Outcome,
    ) -> TransitionParams {
        let outcome = limit_result_size(core, outcome);
        // A failure brings its own message. A result keeps the work's last word as
        // the finished task's summary (a command tool's last line, "all done"): a
        // "waiting for …" cannot be that word, since the answer that ended the wait
        // cleared it (`waiters`).
        let message = match &outcome {
            Outcome::Result { value } => core.reader().result_error_message(value),
            failed => failed.error_message().map(str::to_string),
        };
        TransitionParams::finish(id.clone(), outcome, now_ms())
            .message_change(FieldChange::set_or_keep(message))
            .fenced(self.fence(id))
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
                .apply(
                    TransitionParams::to(id.clone(), current.status, now_ms())
                        .expecting(current.version)
                        .message(message.clone())
                        .fenced(self.fence(id)),
                )
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
        let abort = match self.lock().get(id) {
            Some(r) => {
                r.cancel.cancel();
                r.abort.clone()
            }
            None => return,
        };
        let executor = self.me.clone();
        let id = id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            let still_running = executor.upgrade().is_some_and(|e| e.runs_here(&id));
            if still_running && !abort.is_aborted() {
                tracing::warn!(task_id = %id, "work ignored cancellation for the grace period; aborting it");
            }
            // Harmless once the work has ended: only the work is under this handle.
            abort.abort();
        });
    }

    /// Aborts local work at once, without a grace period: another replica owns it now.
    pub(crate) fn abort_now(&self, id: &TaskId) {
        if let Some(r) = self.lock().remove(id) {
            r.cancel.cancel();
            r.abort.abort();
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

/// What a running task's progress reports and log messages are addressed with: one
/// allocation shared by both sinks of its context.
struct Route {
    task: TaskId,
    session: Option<String>,
    /// The request's progress token, when it asked for progress notifications (boxed:
    /// most requests ask for none, and a `Value` is large).
    token: Option<Box<Value>>,
    core: Weak<Core>,
}

/// A running task's one tokio task: its work, then the recording of how it ended.
///
/// Written out rather than an `async` block so that it holds exactly these fields for
/// as long as the work runs (an `async` block keeps room for every local of every
/// step, and a running task is mostly waiting), and the recording's state is boxed
/// only once the work has ended.
struct Job<W> {
    work: Abortable<W>,
    then: Then,
    /// The quota slot, held until the work stops and its outcome is recorded.
    _slot: Option<Slot>,
}

/// What a [`Job`] does after its work.
enum Then {
    /// Record the outcome (not yet started).
    Record {
        executor: Arc<Executor>,
        core: Arc<Core>,
        id: TaskId,
    },
    /// Recording it.
    Recording(BoxFuture<'static, ()>),
    /// Done (or polled after done).
    Done,
}

impl<W, O> Future for Job<W>
where
    W: Future<Output = std::thread::Result<O>> + Unpin,
    O: Into<Option<Outcome>> + Send + 'static,
{
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        loop {
            match &mut this.then {
                Then::Recording(recording) => {
                    let done = recording.as_mut().poll(cx);
                    if done.is_ready() {
                        this.then = Then::Done;
                    }
                    return done;
                }
                Then::Done => return Poll::Ready(()),
                Then::Record { .. } => {
                    let ended = std::task::ready!(Pin::new(&mut this.work).poll(cx));
                    if let Then::Record { executor, core, id } =
                        std::mem::replace(&mut this.then, Then::Done)
                    {
                        this.then = Then::Recording(Box::pin(executor.ended(core, id, ended)));
                    }
                }
            }
        }
    }
}

/// Work as a job runs it: a panic, while making its future or in it, comes out as
/// the `Err` of a [`std::thread::Result`]. Smaller than an `Either` of the future and a
/// ready error (which would hold a whole outcome for the rare panic), so every running
/// task's job is too.
pub(crate) enum Guarded<W> {
    /// The work's future, its panics caught.
    Work(futures::future::CatchUnwind<AssertUnwindSafe<W>>),
    /// Making the future panicked: this, once.
    Panicked(Option<Box<dyn std::any::Any + Send>>),
}

impl<W: Future + Unpin> Guarded<W> {
    /// The work `make` returns, or its panic.
    pub(crate) fn new(make: impl FnOnce() -> W) -> Self {
        match std::panic::catch_unwind(AssertUnwindSafe(make)) {
            Ok(work) => Guarded::Work(AssertUnwindSafe(work).catch_unwind()),
            Err(panic) => Guarded::Panicked(Some(panic)),
        }
    }
}

impl<W: Future + Unpin> Future for Guarded<W> {
    type Output = std::thread::Result<W::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut *self {
            Guarded::Work(work) => Pin::new(work).poll(cx),
            Guarded::Panicked(panic) => Poll::Ready(Err(panic
                .take()
                .unwrap_or_else(|| Box::new("polled after the panic was reported")))),
        }
    }
}

/// Where a task's progress goes, and where its log messages go: its progress is an
/// event naming the task (the task board shows it) and, when its request asked for
/// progress, the token the creating session is sent; its log messages go to the
/// router the server registered, if any.
fn sinks(core: &Arc<Core>, record: &TaskRecord) -> (ProgressSink, LogSink) {
    let route = Arc::new(Route {
        task: record.id.clone(),
        session: record.session.clone(),
        token: core
            .reader()
            .progress_token(&record.request.to_value())
            .map(Box::new),
        core: Arc::downgrade(core),
    });
    let to_log = Arc::clone(&route);
    let progress: ProgressSink = Arc::new(move |progress| {
        if let Some(core) = route.core.upgrade() {
            let _ = core.events.send(TaskEvent::Progress {
                task: route.task.clone(),
                session: route.session.clone(),
                token: route.token.as_deref().cloned(),
                progress,
            });
        }
    });
    let log: LogSink = Arc::new(move |message| {
        let Some(route_log) = to_log.core.upgrade().and_then(|c| c.log_router()) else {
            return;
        };
        route_log(TaskLog {
            session: to_log.session.clone(),
            task: to_log.task.clone(),
            message,
        });
    });
    (progress, log)
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

/// The context work of `record` runs with: `host` answers its status messages and
/// input requests; progress and log messages go where the task's go.
pub(crate) fn task_context(
    core: &Arc<Core>,
    host: Weak<dyn TaskHost>,
    record: &TaskRecord,
    client_capabilities: Arc<Value>,
    cancel: CancellationToken,
) -> TaskContext {
    let (progress, log) = sinks(core, record);
    TaskContext::for_task(
        record.id.clone(),
        host,
        cancel,
        Some(progress),
        client_capabilities,
        core.reader(),
    )
    .with_log_sink(log)
}
