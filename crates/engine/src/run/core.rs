//! [`Core`]: what every engine component shares and nothing else: the store, the
//! settings, this process's runner id, the event channel, and the one place a status
//! changes ([`Core::apply`]: a store compare-and-set, then the event that announces it).
//!
//! The components (executor, question waiters, external jobs) each own their own state
//! and reach each other only through arguments; `Core` is the one thing they all
//! take, and it depends on none of them. What it learns of the server (the reader,
//! the log router, the observers) is given at start and never changes.

use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{StoreError, TaskRecord, TaskStore, TransitionParams};
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

use crate::activity::ActivityCounters;
use crate::caller::Caller;
use crate::clock::Clock;
use crate::config::EngineConfig;
use crate::error::EngineError;
use crate::events::{LogRouter, TaskEvent};
use crate::hooks::TransitionObserver;
use crate::reader::ResultReading;

/// Capacity of the event channel; a subscriber that falls further behind re-reads the
/// store instead of losing correctness.
const EVENT_CAPACITY: usize = 4096;

/// Most task versions remembered for de-duplicating events; the memory is cleared past
/// it (a repeat event is harmless: subscribers re-read).
const SEEN_CAPACITY: usize = 100_000;

/// The mark of a version in `Core::seen` that this engine is writing and has not
/// published yet (see [`Core::note_writing`]). Versions never come near it.
const WRITING: u64 = 1 << 63;

/// Most distinct client-capability values [`Core::capabilities`] shares; a small
/// linear list, compared by value (they are small objects).
const CAPABILITIES_CAPACITY: usize = 16;

/// The state every component shares. See the module docs.
pub(crate) struct Core {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) config: EngineConfig,
    /// This process's id in `runner` columns and leases.
    pub(crate) runner_id: String,
    pub(crate) events: broadcast::Sender<TaskEvent>,
    /// "Now" for every record written and every deadline compared (see [`Clock`]).
    pub(crate) clock: Clock,
    /// The newest version of each task this engine published an event for.
    seen: Mutex<HashMap<TaskId, u64>>,
    /// Reads progress tokens and result error reports (see [`ResultReading`]).
    reader: Arc<dyn ResultReading>,
    /// Where log messages of running work go (see [`LogRouter`]).
    log_router: Option<LogRouter>,
    /// The client capabilities running tasks hold, shared (see [`Core::capabilities`]).
    capabilities: Mutex<Vec<Arc<Value>>>,
    /// Counters of background work, for whoever waits on it.
    pub(crate) activity: ActivityCounters,
    /// Told of every task this process created or changed (metrics).
    observers: Vec<TransitionObserver>,
    /// The questions people answered for tasks still running here (an approval's
    /// votes), kept in the record when the task ends (see [`Core::decided`]).
    decided: Mutex<HashMap<TaskId, mcp_tasks_store::InputRequests>>,
}

impl Core {
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        config: EngineConfig,
        reader: Arc<dyn ResultReading>,
        log_router: Option<LogRouter>,
        observers: Vec<TransitionObserver>,
    ) -> Self {
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        Core {
            store,
            config,
            runner_id: TaskId::generate().to_string(),
            events,
            clock: Clock::new(),
            seen: Mutex::new(HashMap::new()),
            capabilities: Mutex::new(Vec::new()),
            reader,
            log_router,
            activity: ActivityCounters::default(),
            observers,
            decided: Mutex::new(HashMap::new()),
        }
    }

    /// Remembers that a person answered question `key` of task `id` (assigned to
    /// people: an approval, a question for a group). Ending a task drops its
    /// questions; these are kept in the ended record (with who answered, how and
    /// when), so that the people who decided still see the task and its decisions.
    pub(crate) fn remember_decision(
        &self,
        id: &TaskId,
        key: &str,
        question: mcp_tasks_store::InputRequest,
    ) {
        /// Tasks with decisions remembered at most (each is forgotten when its task
        /// ends here; a task that ends elsewhere leaves its entry until then).
        const MOST: usize = 10_000;
        let mut decided = self.decided.lock();
        if decided.len() >= MOST && !decided.contains_key(id) {
            return;
        }
        decided
            .entry(id.clone())
            .or_default()
            .insert(key.to_string(), question);
    }

    /// Forgets the answer to question `key` of task `id` remembered by
    /// [`Core::remember_decision`] (its write did not happen).
    pub(crate) fn forget_decision(&self, id: &TaskId, key: &str) {
        let mut decided = self.decided.lock();
        if let Some(task) = decided.get_mut(id) {
            task.remove(key);
            if task.is_empty() {
                decided.remove(id);
            }
        }
    }

    /// The people's answers to keep in task `id`'s ended record (forgotten here).
    pub(crate) fn decided(&self, id: &TaskId) -> Option<mcp_tasks_store::InputRequests> {
        self.decided.lock().remove(id)
    }

    /// `capabilities` as a shared value: the same declared capabilities (nearly every
    /// task's client declares what the others did) are kept once, not once per running
    /// task. Remembers the last [`CAPABILITIES_CAPACITY`] distinct values; others are
    /// simply not shared.
    pub(crate) fn capabilities(&self, capabilities: Value) -> Arc<Value> {
        let mut known = self.capabilities.lock();
        if let Some(found) = known.iter().find(|k| ***k == capabilities) {
            return Arc::clone(found);
        }
        let shared = Arc::new(capabilities);
        if known.len() >= CAPABILITIES_CAPACITY {
            known.remove(0);
        }
        known.push(Arc::clone(&shared));
        shared
    }

    /// Now, to the millisecond (see [`Clock`]).
    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// The [`ResultReading`] given at start.
    pub(crate) fn reader(&self) -> Arc<dyn ResultReading> {
        Arc::clone(&self.reader)
    }

    /// The [`LogRouter`] given at start, if any.
    pub(crate) fn log_router(&self) -> Option<&LogRouter> {
        self.log_router.as_ref()
    }

    /// The poll interval of a task: its own, or the configured one.
    pub(crate) fn poll_interval_of(&self, record: &TaskRecord) -> Duration {
        record.poll_interval.unwrap_or(self.config.poll_interval)
    }

    /// Reads a task for `caller`; a task of someone else is logged as denied and
    /// answered exactly like an unknown one.
    pub(crate) async fn authorize(
        &self,
        id: &TaskId,
        caller: &Caller,
        action: &str,
    ) -> Result<TaskRecord, EngineError> {
        match self.store.get(id, self.now()).await? {
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
        self.observe(&record);
        self.publish(&record);
        Ok(record)
    }

    /// Hands `record` to every [`TransitionObserver`] given at start.
    pub(crate) fn observe(&self, record: &TaskRecord) {
        for observe in &self.observers {
            observe(record);
        }
    }

    /// Announces `record` to subscribers unless this version (or a newer one) already
    /// was.
    pub(crate) fn publish(&self, record: &TaskRecord) {
        if self.note_version(record) {
            let _ = self
                .events
                .send(TaskEvent::Changed(Arc::new(record.clone())));
        }
    }

    /// Whether `version` of task `id` (or a newer one) is known here already: this
    /// engine is writing it, wrote it or read it since.
    pub(crate) fn has_seen(&self, id: &TaskId, version: u64) -> bool {
        let seen = self.seen.lock();
        seen.get(id).is_some_and(|v| v & !WRITING >= version)
    }

    /// Notes that this engine is about to write `record` (a creation), before the
    /// write: the change feed may announce it before the write returns here, and
    /// [`Core::has_seen`] should know it then. Its event is still published once.
    pub(crate) fn note_writing(&self, record: &TaskRecord) {
        let mut seen = self.seen.lock();
        if seen.len() > SEEN_CAPACITY {
            seen.clear();
        }
        let known = seen.get(&record.id).map(|v| v & !WRITING);
        if known.is_none_or(|known| known < record.version) {
            seen.insert(record.id.clone(), record.version | WRITING);
        }
    }

    /// Records that `record`'s version was published; false when it (or a newer one)
    /// already was.
    fn note_version(&self, record: &TaskRecord) -> bool {
        let mut seen = self.seen.lock();
        if seen.len() > SEEN_CAPACITY {
            seen.clear();
        }
        match seen.get(&record.id) {
            // Noted as being written here: its first publication goes out.
            Some(v) if v & WRITING != 0 && v & !WRITING <= record.version => {
                seen.insert(record.id.clone(), record.version);
                true
            }
            Some(v) if *v >= record.version => false,
            _ => {
                seen.insert(record.id.clone(), record.version);
                true
            }
        }
    }
}
