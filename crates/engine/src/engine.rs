//! [`Engine`]: the public face of the task engine. It creates, reads, lists, cancels
//! and awaits tasks by wiring together components that each own their state:
//!
//! | component | owns |
//! |---|---|
//! | `Core` (`core`) | the store, settings, runner id, event channel; every status change (`Core::apply`) |
//! | `Executor` (`executor`) | the work running here: tokens, abort handles, lease generations, quota slots |
//! | `InputWaiters` (`waiters`) | work waiting here for answers to its input requests |
//! | `Externals` (`external`) | pollers of external jobs and the rate limit of their polls |
//! | `Leases` (`leases`) | how to re-run a task taken over from a stopped process |
//!
//! Components reach each other only through arguments (`Core` below everything), so
//! none depends on this file; `Engine` is the only place all of them meet.

use mcp_tasks_protocol::{TaskId, TaskView};
use mcp_tasks_store::{
    ChangeFeed, Failure, ListParams, Outcome, StoreError, TaskRecord, TaskStore, TransitionParams,
};
use serde_json::Value;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::caller::Caller;
use crate::config::EngineConfig;
use crate::context::{TaskContext, TaskHost};
use crate::core::{now_ms, Core};
use crate::cursor::{decode_cursor, encode_cursor};
use crate::error::EngineError;
use crate::events::{LogRouter, TaskEvent};
use crate::executor::Executor;
use crate::external::Externals;
use crate::input::InputError;
use crate::leases::Leases;
use crate::quota::Quota;
use crate::reader::WireReader;
use crate::waiters::InputWaiters;
use mcp_tasks_store::InputRequest;

pub use crate::executor::Work;

/// Status message of a task that a crash or restart interrupted.
pub const RESTART_STATUS_MESSAGE: &str =
    "the server restarted while this task was running; the work did not finish";

/// The error a cancelled task's outcome carries (its status message says who and why).
const CANCELLED_OUTCOME: &str = "the task was cancelled before it finished";

/// What a new task is.
#[derive(Debug, Clone)]
pub struct CreateParams {
    /// Who creates it.
    pub caller: Caller,
    /// The original method (`tools/call`).
    pub method: String,
    /// The original params (kept for audit and for tools that resume).
    pub request: Value,
    /// The ttl the client asked for, before clamping.
    pub requested_ttl: Option<Duration>,
    /// The capabilities the client declared (what input requests it can answer).
    pub client_capabilities: Value,
}

/// A page of `tasks/list`.
#[derive(Debug, Clone)]
pub struct ListResult {
    /// The tasks, oldest first.
    pub tasks: Vec<TaskRecord>,
    /// Opaque cursor for the next page.
    pub next_cursor: Option<String>,
}

/// The components behind [`Engine`] handles and [`TaskContext`]s.
pub(crate) struct Inner {
    pub(crate) core: Arc<Core>,
    pub(crate) executor: Arc<Executor>,
    waiters: InputWaiters,
    pub(crate) externals: Externals,
    leases: Leases,
    /// The store as the engine uses it: timed and traced (see `observability`).
    pub(crate) observed: Arc<mcp_tasks_store::ObservedStore>,
}

#[async_trait::async_trait]
impl TaskHost for Inner {
    async fn set_message(&self, id: &TaskId, message: String) {
        self.executor.update_message(&self.core, id, message).await;
    }

    async fn ask(
        &self,
        id: &TaskId,
        key: String,
        request: InputRequest,
        cancel: &CancellationToken,
    ) -> Result<Value, InputError> {
        self.waiters
            .request(&self.core, &self.executor, id, key, request, cancel)
            .await
    }
}

/// The task engine. Clone it freely; clones share everything.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("runner_id", &self.inner.core.runner_id)
            .field("config", &self.inner.core.config)
            .finish()
    }
}

/// Turns the store's change feed into this engine's events (see `replicas`).
async fn bridge(inner: Weak<Inner>, mut feed: ChangeFeed) {
    use mcp_tasks_store::Change;
    while let Some(change) = feed.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        match change {
            Change::Task(id) => {
                crate::replicas::refresh(&inner.core, &inner.executor, &inner.waiters, &id).await
            }
            Change::Missed => {
                crate::replicas::refresh_running(&inner.core, &inner.executor, &inner.waiters)
                    .await;
            }
            _ => {}
        }
    }
}

impl Engine {
    /// Starts an engine on a store. Tasks left non-terminal by an earlier process are
    /// failed first (their work died with that process), so none stays `working`.
    ///
    /// # Errors
    /// A store error if recovery cannot run.
    pub async fn start(
        store: Arc<dyn TaskStore>,
        mut config: EngineConfig,
    ) -> Result<Self, EngineError> {
        if config.lease_ttl.is_none() && store.shared_by_processes() {
            config.lease_ttl = Some(crate::config::DEFAULT_LEASE_TTL);
        }
        if let Some(lease) = config.lease_ttl {
            // Renew well before expiry: a lease renewed less often than it lasts would
            // lapse under live work and hand it to another process.
            config.heartbeat = config
                .heartbeat
                .min(lease / 3)
                .max(Duration::from_millis(1));
        }
        let quota = Quota::new(
            config.max_tasks_per_principal,
            config.max_tasks_per_session,
            config.max_active_tasks,
        );
        let observed = Arc::new(mcp_tasks_store::ObservedStore::new(store));
        let core = Arc::new(Core::new(
            Arc::clone(&observed) as Arc<dyn TaskStore>,
            config,
        ));
        let failed = core
            .store
            .fail_orphaned(
                &core.runner_id,
                RESTART_STATUS_MESSAGE,
                &Outcome::failed(
                    Failure::ServerRestarted,
                    format!("{RESTART_STATUS_MESSAGE}; call the tool again"),
                ),
                now_ms(),
            )
            .await?;
        if failed > 0 {
            tracing::warn!(
                failed,
                "failed tasks interrupted by a previous server process"
            );
        }
        let engine = Engine {
            inner: Arc::new(Inner {
                core,
                executor: Executor::new(quota),
                waiters: InputWaiters::default(),
                externals: Externals::default(),
                leases: Leases::default(),
                observed,
            }),
        };
        match engine.inner.core.store.subscribe_changes().await {
            Ok(Some(feed)) => {
                tokio::spawn(bridge(Arc::downgrade(&engine.inner), feed));
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "no change feed from the store; other replicas' changes are seen by polling only")
            }
        }
        Ok(engine)
    }

    /// The settings in force.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.core.config
    }

    /// Whether the store answers: one bounded read (of a task id nobody has) within
    /// `within`. For readiness probes.
    ///
    /// # Errors
    /// What the store said, or that it did not answer in time.
    pub async fn check_store(&self, within: std::time::Duration) -> Result<(), String> {
        let probe = TaskId::generate();
        match tokio::time::timeout(within, self.store().get(&probe, crate::core::now_ms())).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(format!("the task store failed: {e}")),
            Err(_) => Err(format!("the task store did not answer within {within:?}")),
        }
    }

    /// Adds one more party told of every task this process creates or changes (the
    /// server's metrics, the board's notifications). Each is called in turn, in the
    /// order added.
    pub fn add_transition_observer(&self, observer: crate::TransitionObserver) {
        self.inner.core.add_observer(observer);
    }

    /// Counters of the engine's background work (sweeps, heartbeats, polls and
    /// cancels of external jobs), to wait for the next one as a signal rather than
    /// sleeping: `*activity().wait_for(|a| a.heartbeats > seen).await?`. Copy the
    /// value out (it is `Copy`): a held `watch::Ref` blocks the engine's next count.
    pub fn activity(&self) -> tokio::sync::watch::Receiver<crate::Activity> {
        self.inner.core.activity.subscribe()
    }

    /// Subscribes to task events (status changes and progress).
    pub fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.inner.core.events.subscribe()
    }

    /// Registers where log messages of tasks running here go ([`TaskContext::log`]);
    /// without a router they are dropped. Replaces an earlier one.
    pub fn set_log_router(&self, router: LogRouter) {
        self.inner.core.set_log_router(router);
    }

    /// Registers how requests and results are read (the server's wire knowledge);
    /// without one, no progress is routed and results report no errors of their own.
    pub fn set_reader(&self, reader: Arc<dyn WireReader>) {
        self.inner.core.set_reader(reader);
    }

    /// Registers how to re-run a task taken over from a stopped process (tools
    /// declared resumable); without it such tasks are failed with a message naming the
    /// cause.
    pub fn set_resumer(&self, resumer: crate::leases::Resumer) {
        self.inner.leases.set_resumer(resumer);
    }

    /// Creates a task: stores the record (durably, on durable stores) and only then
    /// spawns `work`, so the returned record exists whatever happens next.
    ///
    /// # Errors
    /// Store failures; nothing runs then.
    #[tracing::instrument(skip_all, fields(method = %params.method))]
    pub async fn create<F>(&self, params: CreateParams, work: F) -> Result<TaskRecord, EngineError>
    where
        F: FnOnce(TaskContext) -> Work,
    {
        self.create_task(params, work).await
    }

    /// [`Engine::create`] for work whose future may also end without an outcome to
    /// record (`Option<Outcome>`, `None`: it handed the task over, as the start of an
    /// external job does).
    pub(crate) async fn create_task<F, W, O>(
        &self,
        params: CreateParams,
        work: F,
    ) -> Result<TaskRecord, EngineError>
    where
        F: FnOnce(TaskContext) -> W,
        W: std::future::Future<Output = O> + Send + Unpin + 'static,
        O: Into<Option<Outcome>> + Send + 'static,
    {
        let inner = &self.inner;
        let config = &inner.core.config;
        let slot = self.take_slot(&params.caller)?;

        let (record, client_capabilities) = self.new_record(params);
        inner.core.store.create(&record).await?;
        crate::audit::created(&record, config.audit_arguments);
        inner.core.observe(&record);
        inner.executor.launch(
            &inner.core,
            self.host(),
            &record,
            inner.core.capabilities(client_capabilities),
            work,
            Some(slot),
        );
        inner.core.publish(&record);
        Ok(record)
    }

    /// Reads a task the caller may see.
    ///
    /// A task waiting on an external job is polled first when its last poll is at
    /// least a poll interval old (see [`Engine::create_external`]).
    ///
    /// # Errors
    /// [`EngineError::NotFound`] for unknown, expired or foreign tasks.
    pub async fn get(&self, id: &TaskId, caller: &Caller) -> Result<TaskRecord, EngineError> {
        self.read(id, caller, "get").await
    }

    /// Lists the caller's own tasks, one page at a time.
    ///
    /// # Errors
    /// [`EngineError::InvalidInput`] for a cursor this server did not issue.
    pub async fn list(
        &self,
        caller: &Caller,
        cursor: Option<&str>,
    ) -> Result<ListResult, EngineError> {
        let after = cursor.map(decode_cursor).transpose()?;
        let page = self
            .inner
            .core
            .store
            .list(&ListParams {
                owner: caller.principal.clone(),
                session: None,
                after,
                limit: self.inner.core.config.list_page_size.max(1),
                now: now_ms(),
            })
            .await?;
        let next_cursor = if page.has_more {
            page.records.last().map(encode_cursor)
        } else {
            None
        };
        Ok(ListResult {
            tasks: page.records,
            next_cursor,
        })
    }

    /// Cancels a task: the record becomes `cancelled` before this returns, then the work
    /// is asked to stop and, after the grace period, aborted. Whatever the work does
    /// next, the task stays cancelled.
    ///
    /// # Errors
    /// [`EngineError::NotFound`]; [`EngineError::AlreadyTerminal`] when it already ended.
    #[tracing::instrument(skip_all, fields(task_id = %id))]
    pub async fn cancel(&self, id: &TaskId, caller: &Caller) -> Result<TaskRecord, EngineError> {
        self.cancel_saying(id, caller, "cancelled by the client")
            .await
    }

    /// [`Engine::cancel`] with the status message the task is left with, so that a
    /// person reading it later knows who stopped it (the task board says which
    /// operator did).
    ///
    /// # Errors
    /// As [`Engine::cancel`].
    pub async fn cancel_saying(
        &self,
        id: &TaskId,
        caller: &Caller,
        reason: &str,
    ) -> Result<TaskRecord, EngineError> {
        let inner = &self.inner;
        let current = inner.core.authorize(id, caller, "cancel").await?;
        if current.status.is_terminal() {
            return Err(EngineError::AlreadyTerminal(current.status));
        }
        // An external job is asked to stop first, so that a failure can still go into
        // the status message; the task is cancelled whatever the job system says.
        let mut message = reason.to_string();
        if let Some(job) = &current.external {
            if let Err(reason) = inner
                .externals
                .cancel_job(&inner.core, &current.id, job)
                .await
            {
                message.push_str(&format!("; stopping the external job failed: {reason}"));
            }
        }
        let record = inner
            .core
            .apply(
                TransitionParams::cancel(id.clone(), CANCELLED_OUTCOME, now_ms()).message(message),
            )
            .await
            .map_err(|e| match e {
                StoreError::Conflict { current } => EngineError::AlreadyTerminal(current.status),
                StoreError::NotFound => EngineError::NotFound,
                other => EngineError::Store(other),
            })?;
        self.stop_work(id);
        self.inner.externals.forget(id);
        crate::audit::cancelled(&record, &caller.principal);
        Ok(record)
    }

    /// Waits until the task is terminal and returns its final record (with the outcome).
    /// Woken by engine events; a lagging subscriber re-reads the store, and a slow
    /// periodic re-read guards against a missed wake-up costing more than latency. A task
    /// waiting on an external job changes only when it is polled, so for those the
    /// re-read (which polls) comes every poll interval.
    ///
    /// # Errors
    /// [`EngineError::NotFound`] (also when the task expires while waiting).
    pub async fn wait_terminal(
        &self,
        id: &TaskId,
        caller: &Caller,
    ) -> Result<TaskRecord, EngineError> {
        const RECHECK: Duration = Duration::from_secs(10);
        let mut rx = self.subscribe();
        loop {
            let record = self.read(id, caller, "result").await?;
            if record.status.is_terminal() {
                crate::audit::retrieved(&record, &caller.principal);
                return Ok(record);
            }
            // A job elsewhere changes only when polled, and another process on a
            // store without a change feed (SQLite) changes the record unannounced:
            // re-read those every poll interval.
            let unannounced =
                !self.inner.core.store.supports_notify() && !self.inner.executor.runs_here(id);
            let recheck = if record.external.is_some() || unannounced {
                RECHECK.min(self.inner.core.poll_interval_of(&record))
            } else {
                RECHECK
            };
            // One deadline for the whole wait: events of other tasks must not keep
            // pushing the re-read (and so the poll) back.
            let deadline = tokio::time::Instant::now() + recheck;
            loop {
                match tokio::time::timeout_at(deadline, rx.recv()).await {
                    Ok(Ok(TaskEvent::Changed(r))) if &r.id == id => {
                        if r.status.is_terminal() && caller.may_access(&r.owner) {
                            crate::audit::retrieved(&r, &caller.principal);
                            return Ok((*r).clone());
                        }
                        if r.external.is_some() && record.external.is_none() {
                            break; // an external job was attached: poll it from now on
                        }
                    }
                    Ok(Ok(_)) => continue,
                    Ok(Err(broadcast::error::RecvError::Lagged(_))) | Err(_) => break,
                    Ok(Err(broadcast::error::RecvError::Closed)) => {
                        return Err(EngineError::ShuttingDown)
                    }
                }
            }
        }
    }

    /// Delivers a client's answer to an input request of a task. Returns `Ok(false)`
    /// when that request is not outstanding (answered already: answers count once).
    ///
    /// # Errors
    /// [`EngineError::NotFound`] for unknown, expired or foreign tasks.
    pub async fn answer_input(
        &self,
        id: &TaskId,
        key: &str,
        answer: Outcome,
        caller: &Caller,
    ) -> Result<bool, EngineError> {
        let inner = &self.inner;
        inner
            .waiters
            .answer(&inner.core, id, key, answer, caller)
            .await
    }

    /// The neutral view of a record, for a codec to render.
    pub fn view(&self, record: &TaskRecord) -> TaskView {
        let reports_error = match record.outcome.as_deref() {
            Some(Outcome::Result { value }) => self.inner.core.reader().result_reports_error(value),
            _ => false,
        };
        TaskView {
            id: record.id.clone(),
            status: record.status,
            status_message: record.status_message.clone(),
            created_at: record.created_at,
            last_updated_at: record.last_updated_at,
            ttl: record.ttl,
            poll_interval: record.poll_interval,
            tool_error: reports_error,
        }
    }

    /// How many tasks this process is running now.
    pub fn running_count(&self) -> usize {
        self.inner.executor.count()
    }

    /// One heartbeat: re-reads the tasks running here (another process may have
    /// cancelled them), renews their leases and takes over expired ones.
    pub(crate) async fn refresh_running(&self) {
        let inner = &self.inner;
        // Only a store other processes write needs the periodic re-read: the in-memory
        // store's change feed sees every write (a lagging subscriber gets `Missed`,
        // which re-reads everything), and re-reading a million running tasks every
        // heartbeat cost a core (docs/benchmarks.md, round three).
        if inner.core.store.shared_by_processes() {
            let reread =
                crate::replicas::refresh_running(&inner.core, &inner.executor, &inner.waiters)
                    .await;
            inner
                .core
                .activity
                .count(|a| a.heartbeat_rereads += reread as u64);
        }
        inner
            .leases
            .heartbeat(&inner.core, &inner.executor, self.host())
            .await;
        inner.core.activity.count(|a| a.heartbeats += 1);
    }

    /// Reads a task for `caller` and brings an external job's news into it when due.
    async fn read(
        &self,
        id: &TaskId,
        caller: &Caller,
        action: &str,
    ) -> Result<TaskRecord, EngineError> {
        let inner = &self.inner;
        inner
            .externals
            .read(&inner.core, &inner.executor, id, caller, action)
            .await
    }

    /// What the contexts of work started here call back into.
    fn host(&self) -> Weak<dyn TaskHost> {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        weak
    }

    /// Counts background work (see [`crate::Activity`]).
    pub(crate) fn count_activity(&self, bump: impl FnOnce(&mut crate::Activity)) {
        self.inner.core.activity.count(bump);
    }

    /// The store under the engine, for components beside it that keep rows of their
    /// own in the same database (the board's webhook deliveries), so that those are as
    /// durable and as shared between replicas as the tasks.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.inner.core.store
    }

    pub(crate) fn stop_work(&self, id: &TaskId) {
        self.inner
            .executor
            .stop_work(id, self.inner.core.config.cancel_grace);
    }
}
