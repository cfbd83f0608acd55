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

use mcp_tasks_protocol::TaskId;

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

/// Re-reads every task running in this process.
/// Returns how many it re-read.
pub(crate) async fn refresh_running(
    core: &Core,
    executor: &Executor,
    waiters: &QuestionWaiters,
) -> usize {
    let ids = executor.running_ids();
    for id in &ids {
        refresh(core, executor, waiters, id).await;
    }
    ids.len()
}
