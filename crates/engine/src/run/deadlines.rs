//! What happens to a task's question when time passes without an answer: its own
//! deadline hands it to other people ([`escalate`]) or marks it overdue
//! ([`note_overdue`]); and, whatever its deadline, the task's own end comes first
//! ([`settle_at`], [`fail_unanswered`]): a question still open shortly before its task
//! expires fails the task with an outcome its client can read, instead of vanishing
//! with the record at the expiry ("task not found", no decision, no reason).

use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{
    DeadlineOutcome, Failure, InputRequest, QuestionDeadline, StoreError, TaskRecord,
    TransitionParams,
};
use std::time::Duration;

use crate::input::InputError;
use crate::run::core::Core;
use crate::run::executor::Executor;

/// When an unanswered question of `record` ends the task: the settling time before its
/// expiry ([`crate::config::settle_before_expiry`]) ahead of `expires_at`. `None`: the
/// task never expires.
pub(crate) fn settle_at(record: &TaskRecord) -> Option<DateTime<Utc>> {
    let expires_at = record.expires_at?;
    let ttl = record.ttl.unwrap_or_default();
    let before = chrono::Duration::from_std(crate::config::settle_before_expiry(ttl)).ok()?;
    expires_at.checked_sub_signed(before)
}

/// Fails task `id`, whose question `key` got no answer before the task's time ran out:
/// the failure says who was asked and until when the task stays readable (it expires
/// at `expires_at`), so that the agent reads an outcome, never "not found".
#[allow(clippy::too_many_arguments)]
pub(crate) async fn fail_unanswered(
    core: &Core,
    executor: &Executor,
    id: &TaskId,
    key: &str,
    request: &InputRequest,
    expires_at: Option<DateTime<Utc>>,
) -> InputError {
    core.activity.count(|a| a.deadlines_passed += 1);
    let who = match request.assignment.as_ref().filter(|a| !a.to.is_empty()) {
        Some(a) => a.to.join(", "),
        None => "the client".to_string(),
    };
    let until = expires_at
        .map(|at| {
            format!(
                " It stays readable until it expires at {}.",
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )
        })
        .unwrap_or_default();
    let message = format!(
        "Nobody decided before the task's time ran out: the question for {who} ({}) got no answer, so the task failed.{until} Start the call again to ask again, with a longer ttl if it needs one.",
        request.method
    );
    crate::audit::deadline_passed(id, key, "the task's time ran out");
    crate::run::ledger::fail(core, executor, id, Failure::InputTimedOut, message).await;
    InputError::TimedOut {
        key: key.to_string(),
        method: request.method.clone(),
        after: Duration::ZERO,
    }
}

/// Hands question `key` of task `id` to `to` (principals or groups) when its deadline
/// passed: the stored question is assigned to them, with a new deadline `within`
/// seconds from now (then it stays open, marked overdue), and the status message says
/// so. Returns the new deadline.
pub(crate) async fn escalate(
    core: &Core,
    executor: &Executor,
    id: &TaskId,
    key: &str,
    to: &[String],
    within: Option<u64>,
) -> Option<QuestionDeadline> {
    core.activity.count(|a| a.deadlines_passed += 1);
    let next = within.map(|s| QuestionDeadline {
        at: crate::clock::after(core.now(), Duration::from_secs(s)),
        outcome: DeadlineOutcome::KeepWaiting,
    });
    let message = format!(
        "question '{key}' got no answer by its deadline: escalated to {}",
        to.join(", ")
    );
    crate::audit::deadline_passed(id, key, &format!("escalated to {}", to.join(", ")));
    loop {
        let Ok(current) = read_running(core, id).await else {
            return next;
        };
        let mut requests = current.input_requests.clone();
        match requests.get_mut(key) {
            Some(q) if q.is_outstanding() => {
                let mut assignment = q.assignment.clone().unwrap_or_default();
                assignment.to = to.to_vec();
                q.assignment = Some(assignment);
                q.deadline = next.clone();
            }
            _ => return next,
        }
        let change = TransitionParams::to(id.clone(), current.status, core.now())
            .expecting(current.version)
            .message(message.clone())
            .questions(requests)
            .fenced(executor.fence(id));
        match core.apply(change).await {
            Ok(_) => return next,
            Err(StoreError::Conflict { current }) if !current.status.is_terminal() => continue,
            Err(_) => return next,
        }
    }
}

/// Says in the task's status message (and so, when the status changes next, its
/// timeline) that question `key` is overdue; the question stays open.
pub(crate) async fn note_overdue(
    core: &Core,
    executor: &Executor,
    id: &TaskId,
    key: &str,
    deadline: &QuestionDeadline,
) {
    core.activity.count(|a| a.deadlines_passed += 1);
    let at = deadline
        .at
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let message =
        format!("question '{key}' is overdue (its deadline was {at}); still waiting for an answer");
    crate::audit::deadline_passed(id, key, "overdue");
    crate::run::ledger::update_message(core, executor, id, message).await;
}

/// The record of a task that still runs.
pub(crate) async fn read_running(
    core: &Core,
    id: &TaskId,
) -> Result<mcp_tasks_store::TaskRecord, InputError> {
    match core.store.get(id, core.now()).await {
        Ok(Some(r)) if !r.status.is_terminal() => Ok(r),
        Ok(_) => Err(InputError::TaskEnded),
        Err(e) => Err(InputError::Store(e.to_string())),
    }
}
