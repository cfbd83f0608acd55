//! [`Engine`]: creating, reading, listing, cancelling and awaiting tasks. Every status
//! change goes through `Inner::apply`, so the transition rule and the event that
//! follows it live in one place.

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use mcp_tasks_protocol::{TaskId, TaskStatus, TaskView};
use mcp_tasks_store::{
    Failure, ListParams, Outcome, StoreError, TaskRecord, TaskStore, TransitionParams,
};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, oneshot};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use crate::caller::Caller;
use crate::config::EngineConfig;
use crate::context::{LogSink, ProgressSink, TaskContext};
use crate::error::EngineError;
use crate::events::{LogRouter, TaskEvent, TaskLog};
use crate::reader::WireReader;

/// The future a task runs: it resolves to what the request returns.
pub type Work = BoxFuture<'static, Outcome>;

/// Status message of a task that a crash or restart interrupted.
pub const RESTART_STATUS_MESSAGE: &str =
    "the server restarted while this task was running; the work did not finish";

/// Capacity of the event channel; a subscriber that falls further behind re-reads the
/// store instead of losing correctness.
const EVENT_CAPACITY: usize = 4096;

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

pub(crate) struct Running {
    cancel: CancellationToken,
    abort: Option<AbortHandle>,
    /// The lease generation this process holds (fencing token), with leases on.
    pub(crate) generation: Option<u64>,
}

/// Work waiting for the answer to an input request, by task and request key.
type Waiters = HashMap<(TaskId, String), oneshot::Sender<Outcome>>;

/// Shared state behind [`Engine`] handles and [`TaskContext`]s.
pub(crate) struct Inner {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) config: EngineConfig,
    pub(crate) runner_id: String,
    running: Mutex<HashMap<TaskId, Running>>,
    waiters: Mutex<Waiters>,
    quota: crate::quota::Quota,
    /// The newest version of each task this engine published an event for.
    pub(crate) seen: Mutex<HashMap<TaskId, u64>>,
    /// Re-creates the work of a task taken over from a stopped replica.
    pub(crate) resumer: Mutex<Option<crate::leases::Resumer>>,
    /// Reads progress tokens and result error reports (see [`WireReader`]).
    reader: std::sync::RwLock<Arc<dyn WireReader>>,
    pub(crate) events: broadcast::Sender<TaskEvent>,
    /// Where log messages of running work go (see [`LogRouter`]).
    pub(crate) log_router: std::sync::RwLock<Option<LogRouter>>,
    /// Pollers of external jobs and the rate limit of their polls.
    pub(crate) externals: crate::external::Externals,
}

/// The task engine. Clone it freely; clones share everything.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("runner_id", &self.inner.runner_id)
            .field("config", &self.inner.config)
            .finish()
    }
}

/// Now, truncated to milliseconds: the precision every store keeps, so a record reads
/// back exactly as written.
pub(crate) fn now_ms() -> DateTime<Utc> {
    let now = Utc::now();
    DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
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
        let runner_id = TaskId::generate().to_string();
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        let quota =
            crate::quota::Quota::new(config.max_tasks_per_principal, config.max_active_tasks);
        let failed = store
            .fail_orphaned(
                &runner_id,
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
                store,
                config,
                runner_id,
                running: Mutex::new(HashMap::new()),
                waiters: Mutex::new(HashMap::new()),
                quota,
                seen: Mutex::new(HashMap::new()),
                resumer: Mutex::new(None),
                reader: std::sync::RwLock::new(Arc::new(crate::reader::OpaqueReader)),
                events,
                log_router: std::sync::RwLock::new(None),
                externals: Default::default(),
            }),
        };
        match engine.inner.store.subscribe_changes().await {
            Ok(Some(feed)) => {
                tokio::spawn(crate::replicas::bridge(Arc::downgrade(&engine.inner), feed));
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
        &self.inner.config
    }

    /// Subscribes to task events (status changes and progress).
    pub fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.inner.events.subscribe()
    }

    /// Registers where log messages of tasks running here go ([`TaskContext::log`]);
    /// without a router they are dropped. Replaces an earlier one.
    pub fn set_log_router(&self, router: LogRouter) {
        *self
            .inner
            .log_router
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(router);
    }

    /// Runs the expiry sweeper until `shutdown` completes. Each round deletes expired
    /// records in bounded batches and stops their work.
    pub async fn run_sweeper(&self, shutdown: impl std::future::Future<Output = ()>) {
        crate::sweeper::run(self, shutdown).await;
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
        self.create_task(params, move |ctx| {
            let work = work(ctx);
            Box::pin(async move { Some(work.await) })
        })
        .await
    }

    /// [`Engine::create`] for work whose future may end without an outcome to record
    /// (`None`: it handed the task over, as the start of an external job does).
    pub(crate) async fn create_task<F>(
        &self,
        params: CreateParams,
        work: F,
    ) -> Result<TaskRecord, EngineError>
    where
        F: FnOnce(TaskContext) -> BoxFuture<'static, Option<Outcome>>,
    {
        let config = &self.inner.config;
        let slot = self
            .inner
            .quota
            .acquire(&params.caller.principal)
            .map_err(|reason| {
                crate::audit::refused(&params.caller.principal, &reason);
                EngineError::QuotaExceeded(reason)
            })?;
        let now = now_ms();
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
            request: params.request,
            outcome: None,
            runner: Some(self.inner.runner_id.clone()),
            version: 0,
            input_requests: Default::default(),
            lease_until: config
                .lease_ttl
                .and_then(|l| chrono::Duration::from_std(l).ok())
                .and_then(|l| now.checked_add_signed(l)),
            lease_generation: u64::from(config.lease_ttl.is_some()),
            external: None,
        };
        self.inner.store.create(&record).await?;
        crate::audit::created(&record, config.audit_arguments);
        Inner::launch_with(
            &self.inner,
            &record,
            params.client_capabilities,
            work,
            Some(slot),
        );
        if self.inner.note_version(&record) {
            let _ = self
                .inner
                .events
                .send(TaskEvent::Changed(Arc::new(record.clone())));
        }
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
        self.inner.read(id, caller, "get").await
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
            .store
            .list(&ListParams {
                owner: caller.principal.clone(),
                session: None,
                after,
                limit: self.inner.config.list_page_size.max(1),
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
        let current = self.inner.authorize(id, caller, "cancel").await?;
        if current.status.is_terminal() {
            return Err(EngineError::AlreadyTerminal(current.status));
        }
        // An external job is asked to stop first, so that a failure can still go into
        // the status message; the task is cancelled whatever the job system says.
        let mut message = String::from("cancelled by the client");
        if let Some(job) = &current.external {
            if let Err(reason) = self.inner.cancel_job(&current.id, job).await {
                message.push_str(&format!("; stopping the external job failed: {reason}"));
            }
        }
        let record = self
            .inner
            .apply(TransitionParams {
                id: id.clone(),
                expected_version: None,
                status: TaskStatus::Cancelled,
                status_message: Some(Some(message)),
                outcome: Some(Outcome::failed(
                    Failure::Cancelled,
                    "the task was cancelled before it finished",
                )),
                now: now_ms(),
                input_requests: Some(Default::default()),
                expected_lease_generation: None,
                external: None,
            })
            .await
            .map_err(|e| match e {
                StoreError::Conflict { current } => EngineError::AlreadyTerminal(current.status),
                StoreError::NotFound => EngineError::NotFound,
                other => EngineError::Store(other),
            })?;
        self.inner.stop_work(id);
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
            let record = self.inner.read(id, caller, "result").await?;
            if record.status.is_terminal() {
                crate::audit::retrieved(&record, &caller.principal);
                return Ok(record);
            }
            // A job elsewhere changes only when polled, and another process on a
            // store without a change feed (SQLite) changes the record unannounced:
            // re-read those every poll interval.
            let unannounced = !self.inner.store.supports_notify() && !self.runs_here(id);
            let recheck = if record.external.is_some() || unannounced {
                RECHECK.min(self.inner.poll_interval_of(&record))
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
        self.inner.answer_input(id, key, answer, caller).await
    }

    /// The neutral view of a record, for a codec to render.
    pub fn view(&self, record: &TaskRecord) -> TaskView {
        let reports_error = match &record.outcome {
            Some(Outcome::Result { value }) => self.inner.reader().result_reports_error(value),
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

    /// Whether this process runs the work of task `id` now.
    fn runs_here(&self, id: &TaskId) -> bool {
        self.inner.lock_running().contains_key(id)
    }

    /// How many tasks this process is running now.
    pub fn running_count(&self) -> usize {
        self.inner.lock_running().len()
    }

    pub(crate) async fn refresh_running(&self) {
        self.inner.refresh_running().await;
        self.inner.heartbeat().await;
    }

    /// Stores a 2025-11-25 session in the shared store (no-op on single-process stores).
    ///
    /// # Errors
    /// Store failures.
    pub async fn save_session(
        &self,
        session: &mcp_tasks_store::SessionRecord,
    ) -> Result<(), EngineError> {
        Ok(self.inner.store.save_session(session).await?)
    }

    /// Reads a session another replica opened.
    ///
    /// # Errors
    /// Store failures.
    pub async fn load_session(
        &self,
        id: &str,
    ) -> Result<Option<mcp_tasks_store::SessionRecord>, EngineError> {
        Ok(self.inner.store.load_session(id).await?)
    }

    /// Forgets a session in the shared store.
    ///
    /// # Errors
    /// Store failures.
    pub async fn delete_session(&self, id: &str) -> Result<(), EngineError> {
        Ok(self.inner.store.delete_session(id).await?)
    }

    /// Sweeps the shared store's sessions: marks `alive` (held by this process and not
    /// idle) as in use now, then deletes those no replica marked or stored within
    /// `idle_timeout`. Returns how many were deleted.
    ///
    /// # Errors
    /// Store failures.
    pub async fn sweep_sessions(
        &self,
        alive: &[String],
        idle_timeout: std::time::Duration,
    ) -> Result<u64, EngineError> {
        let now = now_ms();
        self.inner.store.keep_sessions(alive, now).await?;
        let idle = chrono::Duration::from_std(idle_timeout).unwrap_or(chrono::Duration::MAX);
        // Never before 1970: PostgreSQL refuses timestamps chrono can still represent.
        let cutoff = now
            .checked_sub_signed(idle)
            .unwrap_or(DateTime::UNIX_EPOCH)
            .max(DateTime::UNIX_EPOCH);
        Ok(self.inner.store.delete_idle_sessions(cutoff).await?)
    }

    /// Registers how to re-run a task taken over from a stopped replica (tools declared
    /// resumable); without it such tasks are failed with a message naming the cause.
    /// Registers how requests and results are read (the server's wire knowledge);
    /// without one, no progress is routed and results report no errors of their own.
    pub fn set_reader(&self, reader: Arc<dyn WireReader>) {
        *self.inner.reader.write().unwrap_or_else(|p| p.into_inner()) = reader;
    }

    /// Registers how a task taken over from a stopped process is re-run.
    pub fn set_resumer(&self, resumer: crate::leases::Resumer) {
        *self.inner.resumer.lock().unwrap_or_else(|p| p.into_inner()) = Some(resumer);
    }

    pub(crate) fn store(&self) -> &Arc<dyn TaskStore> {
        &self.inner.store
    }

    pub(crate) fn stop_work(&self, id: &TaskId) {
        self.inner.stop_work(id);
    }
}

impl Inner {
    /// Spawns `work` for a stored record: registers it as running here (with the lease
    /// generation it holds), and records its outcome when it ends. `slot` is the quota
    /// slot held until the work stops.
    pub(crate) fn launch<F>(
        self: &Arc<Self>,
        record: &TaskRecord,
        client_capabilities: Value,
        work: F,
        slot: Option<crate::quota::Slot>,
    ) where
        F: FnOnce(TaskContext) -> Work,
    {
        let work = move |ctx| {
            let work = work(ctx);
            Box::pin(async move { Some(work.await) }) as BoxFuture<'static, Option<Outcome>>
        };
        Inner::launch_with(self, record, client_capabilities, work, slot);
    }

    /// [`Inner::launch`] for work that may end with nothing to record (`None`): the
    /// task is then left as the work left it (an external job took it over), and only
    /// the running entry and the quota slot go away.
    pub(crate) fn launch_with<F>(
        self: &Arc<Self>,
        record: &TaskRecord,
        client_capabilities: Value,
        work: F,
        slot: Option<crate::quota::Slot>,
    ) where
        F: FnOnce(TaskContext) -> BoxFuture<'static, Option<Outcome>>,
    {
        let cancel = CancellationToken::new();
        let progress: Option<ProgressSink> =
            self.reader().progress_token(&record.request).map(|token| {
                let events = self.events.clone();
                let session = record.session.clone();
                Arc::new(move |progress| {
                    let _ = events.send(TaskEvent::Progress {
                        session: session.clone(),
                        token: token.clone(),
                        progress,
                    });
                }) as ProgressSink
            });
        let log: LogSink = {
            let inner = Arc::downgrade(self);
            let session = record.session.clone();
            let task = record.id.clone();
            Arc::new(move |message| {
                let Some(inner) = inner.upgrade() else { return };
                let router = inner
                    .log_router
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                if let Some(route) = router {
                    route(TaskLog {
                        session: session.clone(),
                        task: task.clone(),
                        message,
                    });
                }
            })
        };
        let ctx = TaskContext::for_task(
            record.id.clone(),
            Arc::downgrade(self),
            cancel.clone(),
            progress,
            Arc::new(client_capabilities),
        )
        .with_log_sink(log);
        let generation = self.config.lease_ttl.map(|_| record.lease_generation);
        self.lock_running().insert(
            record.id.clone(),
            Running {
                cancel,
                abort: None,
                generation,
            },
        );
        let job = tokio::spawn(work(ctx));
        let abort = job.abort_handle();
        if let Some(r) = self.lock_running().get_mut(&record.id) {
            r.abort = Some(abort);
        }
        let inner = Arc::clone(self);
        let id = record.id.clone();
        tokio::spawn(async move {
            let _slot = slot; // the quota slot is held until the work stops
            let outcome = match job.await {
                Ok(outcome) => outcome,
                Err(e) if e.is_panic() => {
                    tracing::error!(task_id = %id, "task work panicked");
                    Some(Outcome::failed(
                        Failure::ToolPanicked,
                        "the tool crashed while running this task",
                    ))
                }
                Err(_) => None, // aborted after cancellation, expiry or a lost lease
            };
            if let Some(outcome) = outcome {
                let _ = inner.finish(&id, outcome).await;
            }
            inner.lock_running().remove(&id);
        });
    }

    /// The registered [`WireReader`].
    pub(crate) fn reader(&self) -> Arc<dyn WireReader> {
        Arc::clone(&self.reader.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The tasks this process runs under a lease, with the generation it holds.
    pub(crate) fn held_leases(&self) -> Vec<(TaskId, u64)> {
        self.lock_running()
            .iter()
            .filter_map(|(id, r)| r.generation.map(|g| (id.clone(), g)))
            .collect()
    }

    /// Aborts local work at once, without a grace period: another replica owns it now.
    pub(crate) fn abort_now(&self, id: &TaskId) {
        if let Some(r) = self.lock_running().remove(id) {
            r.cancel.cancel();
            if let Some(a) = r.abort {
                a.abort();
            }
        }
    }

    /// The lease generation the work of `id` holds here, to fence its writes.
    pub(crate) fn fence(&self, id: &TaskId) -> Option<u64> {
        self.lock_running().get(id).and_then(|r| r.generation)
    }

    pub(crate) fn lock_running(&self) -> std::sync::MutexGuard<'_, HashMap<TaskId, Running>> {
        // A poisoned lock only means another thread panicked mid-update of a map of
        // handles; the map itself is still usable.
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The ids of the tasks whose work runs in this process.
    pub(crate) fn running_ids(&self) -> Vec<TaskId> {
        self.lock_running().keys().cloned().collect()
    }

    pub(crate) fn lock_waiters(&self) -> std::sync::MutexGuard<'_, Waiters> {
        self.waiters.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads a task for `caller`; a task of someone else is logged as denied and
    /// answered exactly like an unknown one.
    pub(crate) async fn authorize(
        &self,
        id: &TaskId,
        caller: &Caller,
        action: &str,
    ) -> Result<TaskRecord, EngineError> {
        match self.store.get(id, now_ms()).await? {
            Some(r) if caller.may_access(&r.owner) => Ok(r),
            Some(r) => {
                crate::audit::denied(id, &caller.principal, &r.owner, action);
                Err(EngineError::NotFound)
            }
            None => Err(EngineError::NotFound),
        }
    }

    /// The one place a status changes: store compare-and-set, then the event.
    pub(crate) async fn apply(&self, params: TransitionParams) -> Result<TaskRecord, StoreError> {
        let record = self.store.transition(&params).await?;
        if params.outcome.is_some() || params.input_requests.is_some() {
            crate::audit::status_changed(&record);
        }
        if !self.note_version(&record) {
            return Ok(record);
        }
        let _ = self
            .events
            .send(TaskEvent::Changed(Arc::new(record.clone())));
        Ok(record)
    }

    /// Records the work's outcome. Loses quietly against an earlier terminal transition
    /// (a cancel, an expiry): terminal is final. Returns the record as it is after (the
    /// finished one, or the one that won), when known.
    pub(crate) async fn finish(&self, id: &TaskId, outcome: Outcome) -> Option<TaskRecord> {
        let outcome = self.limit_result_size(outcome);
        let status = if outcome.is_error() {
            TaskStatus::Failed
        } else {
            TaskStatus::Completed
        };
        let message = match &outcome {
            Outcome::Result { value } => self.reader().result_error_message(value).map(Some),
            failed => failed.error_message().map(|m| Some(m.to_string())),
        };
        match self
            .apply(TransitionParams {
                id: id.clone(),
                expected_version: None,
                status,
                status_message: message,
                outcome: Some(outcome),
                now: now_ms(),
                input_requests: Some(Default::default()),
                expected_lease_generation: self.fence(id),
                external: None,
            })
            .await
        {
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

    /// Replaces a result too large to store by an error that says so.
    fn limit_result_size(&self, outcome: Outcome) -> Outcome {
        let size = serde_json::to_vec(&outcome).map(|v| v.len()).unwrap_or(0);
        let limit = self.config.max_result_bytes;
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

    /// Sets a status message, keeping whatever non-terminal status the task has
    /// (compare-and-set on the version, so a concurrent `input_required` is kept).
    pub(crate) async fn update_message(&self, id: &TaskId, message: String) {
        loop {
            let current = match self.store.get(id, now_ms()).await {
                Ok(Some(r)) if !r.status.is_terminal() => r,
                Ok(_) => return,
                Err(e) => {
                    tracing::warn!(task_id = %id, error = %e, "could not read task to store status message");
                    return;
                }
            };
            let result = self
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

    /// Asks the work to stop, and aborts it after the grace period if it has not.
    pub(crate) fn stop_work(&self, id: &TaskId) {
        let (cancel, abort) = match self.lock_running().get(id) {
            Some(r) => (r.cancel.clone(), r.abort.clone()),
            None => return,
        };
        cancel.cancel();
        if let Some(abort) = abort {
            let grace = self.config.cancel_grace;
            tokio::spawn(async move {
                tokio::time::sleep(grace).await;
                if !abort.is_finished() {
                    tracing::warn!("work ignored cancellation for the grace period; aborting it");
                    abort.abort();
                }
            });
        }
    }
}

fn encode_cursor(r: &TaskRecord) -> String {
    hex::encode(format!("{}|{}", r.created_at.timestamp_millis(), r.id))
}

fn decode_cursor(cursor: &str) -> Result<(DateTime<Utc>, TaskId), EngineError> {
    let bad = || {
        EngineError::InvalidInput(format!(
            "invalid cursor '{cursor}': pass back a nextCursor from tasks/list unchanged"
        ))
    };
    let bytes = hex::decode(cursor).map_err(|_| bad())?;
    let text = String::from_utf8(bytes).map_err(|_| bad())?;
    let (ms, id) = text.split_once('|').ok_or_else(bad)?;
    let ms: i64 = ms.parse().map_err(|_| bad())?;
    let at = DateTime::from_timestamp_millis(ms).ok_or_else(bad)?;
    if id.is_empty() {
        return Err(bad());
    }
    Ok((at, TaskId::from_string(id)))
}
