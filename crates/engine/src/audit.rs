//! Audit events: who did what to which task, through `tracing` with the stable target
//! `mcp_tasks::audit` (filter it with `--log mcp_tasks::audit=info` or route it to its
//! own sink). Tool arguments are never logged unless the operator enabled it.

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::TaskRecord;

/// The tracing target of every audit event.
pub const TARGET: &str = "mcp_tasks::audit";

fn tool(record: &TaskRecord) -> std::borrow::Cow<'_, str> {
    record.request.name().unwrap_or_default()
}

pub(crate) fn created(record: &TaskRecord, with_arguments: bool) {
    if with_arguments {
        let args = record
            .request
            .field("arguments")
            .map(|a| a.to_string())
            .unwrap_or_default();
        tracing::info!(target: TARGET, event = "created", task_id = %record.id, principal = %record.owner, tool = %tool(record), arguments = %args);
    } else {
        tracing::info!(target: TARGET, event = "created", task_id = %record.id, principal = %record.owner, tool = %tool(record));
    }
}

pub(crate) fn status_changed(record: &TaskRecord) {
    tracing::info!(target: TARGET, event = "status_changed", task_id = %record.id, principal = %record.owner, tool = %tool(record), status = %record.status);
}

pub(crate) fn retrieved(record: &TaskRecord, by: &str) {
    tracing::info!(target: TARGET, event = "result_retrieved", task_id = %record.id, principal = %by, owner = %record.owner, tool = %tool(record), status = %record.status);
}

pub(crate) fn cancelled(record: &TaskRecord, by: &str) {
    tracing::info!(target: TARGET, event = "cancelled", task_id = %record.id, principal = %by, owner = %record.owner, tool = %tool(record));
}

pub(crate) fn expired(id: &TaskId) {
    tracing::info!(target: TARGET, event = "expired", task_id = %id);
}

pub(crate) fn denied(id: &TaskId, by: &str, owner: &str, action: &str) {
    tracing::warn!(target: TARGET, event = "access_denied", task_id = %id, principal = %by, owner = %owner, action);
}

pub(crate) fn answered(id: &TaskId, key: &str, by: &str, via: &str) {
    tracing::info!(target: TARGET, event = "answered", task_id = %id, question = key, principal = %by, via);
}

/// A question's deadline passed: `outcome` says what happened (failed, declined,
/// answered with its default, overdue, escalated to …).
pub(crate) fn deadline_passed(id: &TaskId, key: &str, outcome: &str) {
    tracing::info!(target: TARGET, event = "deadline_passed", task_id = %id, question = key, outcome);
}

pub(crate) fn refused(by: &str, reason: &str) {
    tracing::warn!(target: TARGET, event = "create_refused", principal = %by, reason);
}
