//! The writes running work makes to its task's record, fenced by the lease it holds:
//! its end (an outcome, a crash, a result too large to keep), its status messages, and
//! the failure of a task whose question went unanswered. Every one goes through
//! [`Core::apply`], the one place a status changes.

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{Failure, FieldChange, Outcome, StoreError, TaskRecord, TransitionParams};

use crate::run::core::Core;
use crate::run::executor::Executor;

/// The transition that records `outcome` as the end of task `id`.
pub(crate) fn end_params(
    core: &Core,
    executor: &Executor,
    id: &TaskId,
    outcome: Outcome,
) -> TransitionParams {
    let outcome = limit_result_size(core, outcome);
    // A failure brings its own message. A result keeps the work's last word as the
    // finished task's summary (a command tool's last line, "all done"): a "waiting for
    // …" cannot be that word, since the answer that ended the wait cleared it
    // (`questions`).
    let message = match &outcome {
        Outcome::Result { value } => core.reader().result_error_message(value),
        failed => failed.error_message().map(str::to_string),
    };
    let mut change = TransitionParams::finish(id.clone(), outcome, core.now())
        .message_change(FieldChange::set_or_keep(message))
        .fenced(executor.fence(id));
    if let Some(decided) = core.decided(id) {
        change = change.questions(decided);
    }
    change
}

/// Records the work's outcome. Loses quietly against an earlier terminal transition (a
/// cancel, an expiry): terminal is final. Returns the record as it is after (the
/// finished one, or the one that won), when known.
pub(crate) async fn finish(
    core: &Core,
    executor: &Executor,
    id: &TaskId,
    outcome: Outcome,
) -> Option<TaskRecord> {
    let finished = core.apply(end_params(core, executor, id, outcome)).await;
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

/// What follows a task's work: records its outcome (or, when it was stopped from
/// outside or handed the task over, `None`, reads how the task ended), closes the
/// task's span (the current one), and forgets the running entry.
pub(crate) async fn record_end(
    core: &Core,
    executor: &Executor,
    id: &TaskId,
    outcome: Option<Outcome>,
) {
    // Work stopped from outside (a drain's hand-over, a lost lease) may still end with
    // an outcome of its own (it saw its cancellation before the abort took effect):
    // the task is not this work's any more, so that end is not written.
    let outcome = outcome.filter(|_| executor.runs_here(id));
    let last = match outcome {
        Some(outcome) => finish(core, executor, id, outcome).await,
        // Stopped from outside (cancelled, expired, lease lost): read how it ended.
        None => core.store.get(id, core.now()).await.ok().flatten(),
    };
    if let Some(record) = last {
        crate::run::span::record_end(&tracing::Span::current(), &record, &*core.reader());
    }
    executor.forget(id);
}

/// Sets a status message, keeping whatever non-terminal status the task has
/// (compare-and-set on the version, so a concurrent `input_required` is kept).
pub(crate) async fn update_message(core: &Core, executor: &Executor, id: &TaskId, message: String) {
    loop {
        let current = match core.store.get(id, core.now()).await {
            Ok(Some(r)) if !r.status.is_terminal() => r,
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(task_id = %id, error = %e, "could not read task to store status message");
                return;
            }
        };
        let result = core
            .apply(
                TransitionParams::to(id.clone(), current.status, core.now())
                    .expecting(current.version)
                    .message(message.clone())
                    .fenced(executor.fence(id)),
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

/// Ends a task as failed with `message` and stops its work.
pub(crate) async fn fail(
    core: &Core,
    executor: &Executor,
    id: &TaskId,
    failure: Failure,
    message: String,
) {
    let mut change = TransitionParams::fail(id.clone(), failure, message, core.now());
    if let Some(decided) = core.decided(id) {
        change = change.questions(decided);
    }
    if core.apply(change).await.is_ok() {
        executor.stop_work(id, core.config.cancel_grace);
    }
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
