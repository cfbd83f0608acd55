//! [`Engine`]: the public face of the task engine. Every public method of `Engine` is in
//! this folder, one file per concern; they wire together the components of `run`
//! (which never import this) and the services of `maintenance`.
//!
//! | file | methods |
//! |---|---|
//! | `mod.rs` | [`Engine::start`], [`Engine::shutdown`], settings, events, activity, the neutral view |
//! | `drain` | [`Engine::drain`]: hand resumable work over, let the rest finish, then fail it ([`crate::DrainReport`]) |
//! | `create` | [`Engine::begin`], [`Engine::create`]: the one creation path ([`crate::Creation`], [`crate::ProvisionalTask`]) |
//! | `external` | [`Engine::register_external`], [`Engine::create_external`] |
//! | `read` | [`Engine::get`], [`Engine::list`], [`Engine::wait_terminal`] |
//! | `cancel` | [`Engine::cancel`], [`Engine::cancel_saying`] |
//! | `questions` | [`Engine::answer_input`] |
//! | `board` | [`Engine::query_tasks`], [`Engine::count_tasks`], [`Engine::timeline`] (people's views) |
//! | `sessions` | 2025-11-25 sessions in the shared store |
//! | `observe` | what metrics read: tasks by status, the backend |

pub(crate) mod board;
mod cancel;
pub(crate) mod create;
pub(crate) mod drain;
mod external;
pub(crate) mod inbox;
mod observe;
mod questions;
mod read;
mod sessions;

use mcp_tasks_protocol::{TaskId, TaskView};
use mcp_tasks_store::{Failure, Outcome, TaskRecord, TaskStore};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

use crate::caller::Caller;
use crate::config::EngineConfig;
use crate::error::EngineError;
use crate::events::TaskEvent;
use crate::hooks::EngineHooks;
use crate::maintenance::lease_keeper::LeaseKeeper;
use crate::maintenance::lease_rescuer::LeaseRescuer;
use crate::maintenance::Maintenance;
use crate::run::core::Core;
use crate::run::executor::Executor;
use crate::run::external_jobs::Externals;
use crate::run::questions::QuestionWaiters;
use crate::run::quota::Quota;
use crate::run::Components;

/// Status message of a task that a crash or restart interrupted.
pub const RESTART_STATUS_MESSAGE: &str =
    "the server restarted while this task was running; the work did not finish";

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

impl ListResult {
    /// A store's page as callers see it: the cursor of its last record when more
    /// follow (the same cursor for `tasks/list` and the board's pages).
    pub(crate) fn from_page(page: mcp_tasks_store::ListPage) -> Self {
        let next_cursor = if page.has_more {
            page.records.last().map(crate::cursor::encode_cursor)
        } else {
            None
        };
        ListResult {
            tasks: page.records,
            next_cursor,
        }
    }
}

/// The task engine. Clone it freely; clones share everything.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Components>,
    maintenance: Arc<Maintenance>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("runner_id", &self.inner.core.runner_id)
            .field("config", &self.inner.core.config)
            .finish()
    }
}

impl Engine {
    /// Starts an engine on a store, with everything it is to know of its embedder
    /// (`hooks`: the reader, the resumer, the log router, the observers).
    ///
    /// Without leases (a store only this process uses), tasks left non-terminal by an
    /// earlier process are failed first (their work died with that process), so none
    /// stays `working`. With leases (a store other processes share), the process
    /// writes its first heartbeat, reaps the rows of dead processes of its own host
    /// (pid gone, or reused) and takes their tasks over at once: resumable ones run
    /// again here, the others are failed; tasks of processes elsewhere are taken over
    /// once those stop being alive. Then the maintenance services start (expiry
    /// sweeper; with leases, the heartbeat and the rescuer; the change bridge: see
    /// `maintenance`), until [`Engine::shutdown`].
    ///
    /// # Errors
    /// A store error if recovery (or the first heartbeat) cannot run.
    pub async fn start(
        store: Arc<dyn TaskStore>,
        mut config: EngineConfig,
        hooks: EngineHooks,
    ) -> Result<Self, EngineError> {
        if config.lease_ttl.is_none() && store.shared_by_processes() {
            config.lease_ttl = Some(crate::config::DEFAULT_LEASE_TTL);
        }
        if let Some(lease) = config.lease_ttl {
            // Beat well within the alive window: a process that beats less often than
            // it counts as alive would look dead under live work.
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
        let leased = config.lease_ttl.is_some();
        let observed = Arc::new(mcp_tasks_store::ObservedStore::new(store));
        if let Some(observer) = hooks.store_observer {
            observed.set_observer(observer);
        }
        let core = Arc::new(Core::new(
            Arc::clone(&observed) as Arc<dyn TaskStore>,
            config,
            hooks.reader,
            hooks.log_router,
            hooks.transition_observers,
        ));
        if !leased {
            fail_orphans(&core).await?;
        }
        let keeper = LeaseKeeper::from_config(&core.config, core.now());
        let components = Arc::new(Components {
            core,
            executor: Executor::new(quota, leased),
            questions: QuestionWaiters::default(),
            external_jobs: Arc::new(Externals::default()),
            resumer: hooks.resumer,
            observed,
            me: std::sync::OnceLock::new(),
        });
        let _ = components.me.set(Arc::downgrade(&components));
        if let Some(keeper) = &keeper {
            // Alive before anything is claimed or created under this runner's name.
            keeper.beat(&components).await?;
            keeper.reap_dead_neighbours(&components).await;
            if let Some(rescuer) = LeaseRescuer::from_config(&components.core.config) {
                rescuer.rescue_backlog(&components).await;
            }
        }
        let feed = match components.core.store.subscribe_changes().await {
            Ok(feed) => feed,
            Err(e) => {
                tracing::warn!(error = %e, "no change feed from the store; other replicas' changes are seen by polling only");
                None
            }
        };
        let maintenance = Maintenance::start(&components, feed, keeper);
        Ok(Engine {
            inner: components,
            maintenance: Arc::new(maintenance),
        })
    }

    /// Stops the maintenance services (expiry, heartbeat, takeovers, the change
    /// bridge) and waits until they have stopped. Work running here goes on, and the
    /// engine still answers; a process that stops for good calls this before it
    /// exits (after [`Engine::drain`], to hand its work over first), so that no
    /// service round is cut off by the runtime going away. When no work runs here
    /// under a lease any more, the process's heartbeat row is retired (it is gone,
    /// rather than presumed alive until the row lapses). Later calls do nothing.
    pub async fn shutdown(&self) {
        self.maintenance.shutdown().await;
        if let Some(keeper) = &self.maintenance.keeper {
            if self.inner.executor.held_leases().is_empty() {
                keeper.retire(&self.inner).await;
            }
        }
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
    pub async fn check_store(&self, within: Duration) -> Result<(), String> {
        let probe = TaskId::generate();
        let read = self.store().get(&probe, self.inner.core.now());
        match tokio::time::timeout(within, read).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(format!("the task store failed: {e}")),
            Err(_) => Err(format!("the task store did not answer within {within:?}")),
        }
    }

    /// Counters of the engine's background work (one per maintenance service, polls
    /// and cancels of external jobs), to wait for the next one as a signal rather than
    /// sleeping: `*activity().wait_for(|a| a.sweeps > seen).await?`. Copy the value out
    /// (it is `Copy`): a held `watch::Ref` blocks the engine's next count.
    pub fn activity(&self) -> tokio::sync::watch::Receiver<crate::activity::Activity> {
        self.inner.core.activity.subscribe()
    }

    /// Subscribes to task events (status changes and progress).
    pub fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.inner.core.events.subscribe()
    }

    /// "Now" as the engine sees it: the wall clock, or tokio's paused time in tests
    /// (see [`crate::Clock`]). Whoever keeps times beside the engine's (the server's
    /// idle sessions) reads this one.
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.inner.core.now()
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

    /// The store under the engine, for components beside it that keep rows of their
    /// own in the same database (the board's webhook deliveries), so that those are as
    /// durable and as shared between replicas as the tasks.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.inner.core.store
    }
}

/// Fails the tasks an earlier process left non-terminal on a store only this process
/// uses (without leases nobody else can be running them).
async fn fail_orphans(core: &Core) -> Result<(), EngineError> {
    // A question that outlived its task is unanswered, not interrupted.
    crate::maintenance::expiry::settle_expired_unanswered(core, crate::config::SWEEP_BATCH).await;
    let failed = core
        .store
        .fail_orphaned(
            &core.runner_id,
            RESTART_STATUS_MESSAGE,
            &Outcome::failed(
                Failure::ServerRestarted,
                format!("{RESTART_STATUS_MESSAGE}; call the tool again"),
            ),
            core.now(),
        )
        .await?;
    if failed > 0 {
        tracing::warn!(
            failed,
            "failed tasks interrupted by a previous server process"
        );
    }
    Ok(())
}
