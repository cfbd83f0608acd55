//! [`EngineHooks`]: what the engine learns of whoever embeds it, given once at
//! [`Engine::start`](crate::Engine::start) and never changed after: how to read wire
//! requests and results, how to re-run a task taken over from a stopped process,
//! where task logs go, and who is told of every change.
//!
//! All of it is fixed before the first task runs, so no task ever sees a half-wired
//! engine, and nothing installed later silently replaces what another part installed.

use mcp_tasks_store::{StoreObserver, TaskRecord};
use std::sync::Arc;

use crate::context::{TaskContext, Work};
use crate::events::LogRouter;
use crate::reader::{OpaqueReader, ResultReading};
use crate::retry::RetryPolicy;

/// Told of each record this process wrote: a new task (version 0) and every status
/// change it applied (the store's compare-and-set winner, so with several replicas
/// each change is seen by exactly one of them). Must not block.
pub type TransitionObserver = Arc<dyn Fn(&TaskRecord) + Send + Sync>;

/// Decides whether a task can run again (taken over from a stopped process, handed
/// over by a draining one, or retried), and builds its work: `None` means the task is
/// failed instead. Given by the server, which knows the tools.
pub type Resumer = Arc<dyn Fn(&TaskRecord) -> Option<Resumption> + Send + Sync>;

/// The work of a task that runs again, and how often it may.
pub struct Resumption {
    /// Builds the work (its context replays the journaled steps of earlier attempts).
    pub work: Box<dyn FnOnce(TaskContext) -> Work + Send>,
    /// How many attempts the task gets in all, and the waits between retries.
    pub retry: RetryPolicy,
}

impl Resumption {
    /// `work`, under the default [`RetryPolicy`].
    pub fn new(work: impl FnOnce(TaskContext) -> Work + Send + 'static) -> Self {
        Resumption {
            work: Box::new(work),
            retry: RetryPolicy::default(),
        }
    }

    /// The same work under `policy`.
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }
}

impl std::fmt::Debug for Resumption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resumption")
            .field("retry", &self.retry)
            .finish()
    }
}

/// Everything the engine is told of its embedder, at start. See the module docs.
#[derive(Clone)]
pub struct EngineHooks {
    /// How requests and results are read (the server's wire knowledge); the default
    /// ([`OpaqueReader`]) routes no progress and finds no errors in results.
    pub reader: Arc<dyn ResultReading>,
    /// How to re-run a task taken over from a stopped process (tools declared
    /// resumable); without one, such tasks are failed with a message naming the cause.
    pub resumer: Option<Resumer>,
    /// Where log messages of tasks running here go ([`TaskContext::log`]); without a
    /// router they are dropped.
    pub log_router: Option<LogRouter>,
    /// Who is told of every task this process creates or changes (the server's
    /// metrics, the board's webhooks), called in this order.
    pub transition_observers: Vec<TransitionObserver>,
    /// Who is told how long each store operation took (the server's metrics).
    pub store_observer: Option<Arc<dyn StoreObserver>>,
}

impl Default for EngineHooks {
    fn default() -> Self {
        EngineHooks {
            reader: Arc::new(OpaqueReader),
            resumer: None,
            log_router: None,
            transition_observers: Vec::new(),
            store_observer: None,
        }
    }
}

impl std::fmt::Debug for EngineHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineHooks")
            .field("resumer", &self.resumer.is_some())
            .field("log_router", &self.log_router.is_some())
            .field("transition_observers", &self.transition_observers.len())
            .field("store_observer", &self.store_observer.is_some())
            .finish()
    }
}

impl EngineHooks {
    /// These hooks reading wire requests and results with `reader`.
    pub fn reader(mut self, reader: Arc<dyn ResultReading>) -> Self {
        self.reader = reader;
        self
    }

    /// These hooks re-running taken-over tasks with `resumer`.
    pub fn resumer(mut self, resumer: Resumer) -> Self {
        self.resumer = Some(resumer);
        self
    }

    /// These hooks sending task logs to `router`.
    pub fn log_router(mut self, router: LogRouter) -> Self {
        self.log_router = Some(router);
        self
    }

    /// These hooks with one more party told of every change (after those before).
    pub fn observe_transitions(mut self, observer: TransitionObserver) -> Self {
        self.transition_observers.push(observer);
        self
    }

    /// These hooks timing store operations with `observer`.
    pub fn store_observer(mut self, observer: Arc<dyn StoreObserver>) -> Self {
        self.store_observer = Some(observer);
        self
    }
}
