//! Several engines on one database (PostgreSQL replicas): the store's change feed is
//! turned into this engine's own events, so a `tasks/result` waiting here is released
//! when another replica completes the task, status notifications reach sessions held
//! here, and work running here stops when another replica cancels its task.
//!
//! The store stays the source of truth: an event is only a hint to re-read the record,
//! a lost event ([`Change::Missed`]) triggers a re-read of everything running here, and
//! a periodic check (every heartbeat) catches what no event announced.

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{Change, ChangeFeed, TaskRecord};
use std::sync::{Arc, Weak};

use crate::engine::{now_ms, Inner};
use crate::events::TaskEvent;

/// Most task versions remembered for de-duplicating events; the memory is cleared past it.
const SEEN_CAPACITY: usize = 100_000;

pub(crate) async fn bridge(inner: Weak<Inner>, mut feed: ChangeFeed) {
    while let Some(change) = feed.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        match change {
            Change::Task(id) => inner.refresh(&id).await,
            Change::Missed => inner.refresh_running().await,
            _ => {}
        }
    }
}

impl Inner {
    /// Re-reads one task: publishes its change if this engine has not seen that version
    /// yet, and stops local work the record says is over.
    pub(crate) async fn refresh(&self, id: &TaskId) {
        match self.store.get(id, now_ms()).await {
            Ok(Some(record)) => {
                if record.status.is_terminal() {
                    self.stop_work(id);
                } else {
                    self.deliver_stored_answers(&record);
                }
                if self.note_version(&record) {
                    let _ = self.events.send(TaskEvent::Changed(Arc::new(record)));
                }
            }
            Ok(None) => self.stop_work(id),
            Err(e) => tracing::warn!(task_id = %id, error = %e, "could not re-read a changed task"),
        }
    }

    /// Re-reads every task running in this process.
    pub(crate) async fn refresh_running(&self) {
        for id in self.running_ids() {
            self.refresh(&id).await;
        }
    }

    /// Records that `record`'s version was published; false when it (or a newer one)
    /// already was.
    pub(crate) fn note_version(&self, record: &TaskRecord) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.len() > SEEN_CAPACITY {
            seen.clear();
        }
        match seen.get(&record.id) {
            Some(v) if *v >= record.version => false,
            _ => {
                seen.insert(record.id.clone(), record.version);
                true
            }
        }
    }
}
