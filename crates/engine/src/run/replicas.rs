//! Several engines on one database (PostgreSQL replicas, processes sharing an SQLite
//! file): re-reading a task another process may have changed turns it into this
//! engine's own event, so a `tasks/result` waiting here is released when another
//! replica completes the task, status notifications reach sessions held here, answers
//! stored elsewhere reach work waiting here, and work running here stops when another
//! replica cancels its task.
//!
//! The store stays the source of truth: an event is only a hint to re-read the record,
//! a lost event (`Change::Missed`) triggers a re-read of everything running here, and
//! a periodic re-read (the change bridge, in `maintenance`) catches what no event
//! announced. This module owns no state: it is the re-read, given the components it
//! updates.

use futures::future::join_all;
use mcp_tasks_protocol::TaskId;
use std::collections::HashSet;

use crate::run::core::Core;
use crate::run::executor::Executor;
use crate::run::questions::QuestionWaiters;

/// Re-reads one task: publishes its change if this engine has not seen that version
/// yet, hands stored answers to work waiting here, and stops local work the record
/// says is over.
pub(crate) async fn refresh(
    core: &Core,
    executor: &Executor,
    waiters: &QuestionWaiters,
    id: &TaskId,
) {
    match core.store.get(id, core.now()).await {
        Ok(Some(record)) => {
            if record.status.is_terminal() {
                executor.stop_work(id, core.config.cancel_grace);
            } else {
                waiters.deliver_stored_answers(&record);
            }
            core.publish(&record);
        }
        Ok(None) => executor.stop_work(id, core.config.cancel_grace),
        Err(e) => tracing::warn!(task_id = %id, error = %e, "could not re-read a changed task"),
    }
}

/// How many re-reads [`refresh_many`] has in flight at once: enough for the store to
/// answer them with one statement (PostgreSQL batches concurrent reads), few enough
/// that a burst of thousands does not queue everything at once.
const REFRESH_AT_ONCE: usize = 256;

/// Re-reads several tasks (each once, however often it is named), up to
/// [`REFRESH_AT_ONCE`] at a time: on PostgreSQL concurrent reads share one statement,
/// so a burst of another replica's changes costs a few round trips instead of one per
/// task, and the change feed is drained as fast as it fills. Returns how many tasks it
/// re-read.
pub(crate) async fn refresh_many(
    core: &Core,
    executor: &Executor,
    waiters: &QuestionWaiters,
    ids: &[TaskId],
) -> usize {
    let mut named = HashSet::with_capacity(ids.len());
    let unique: Vec<&TaskId> = ids.iter().filter(|id| named.insert(*id)).collect();
    for chunk in unique.chunks(REFRESH_AT_ONCE) {
        join_all(chunk.iter().map(|id| refresh(core, executor, waiters, id))).await;
    }
    unique.len()
}
