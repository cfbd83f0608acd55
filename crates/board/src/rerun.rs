//! "Run again" as the detail pane shows it: whether a task may be run again, and by
//! whom, and the tasks made by running it again (found by the related-task id their
//! request names, among the owner's [`RERUN_SEARCH`] newest tasks). The action itself
//! is `console::run_again`.
//!
//! Who may run a call again is a separation of duties, as approvals are: the task's
//! owner or an operator, never someone who decided the call's approval (an approver
//! who rejected a call cannot revive it), and the call run again meets its approval
//! from the start, where the person who ran it again has no vote
//! ([`mcp_tasks_server::Server::start_tool_task_again`]).

use mcp_tasks_engine::{Caller, TaskFilter, TaskRecord};
use mcp_tasks_protocol::methods::TOOLS_CALL;
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_server::approvals::RAN_AGAIN_BY_META;
use serde_json::{json, Value};

use crate::view;
use crate::Board;

/// How many of the owner's newest tasks are searched for a task's re-runs.
const RERUN_SEARCH: usize = 100;

/// Whether `record` may be run again: a call of a tool that failed, was cancelled or
/// ended with a tool error. `Err` says why not, for a person.
pub(crate) fn may_run_again(record: &TaskRecord) -> Result<(), String> {
    if record.method != TOOLS_CALL {
        return Err(format!(
            "only a tool call can be run again; this task runs '{}'",
            record.method
        ));
    }
    match record.status {
        TaskStatus::Failed | TaskStatus::Cancelled => Ok(()),
        TaskStatus::Completed if view::tool_error_text(record).is_some() => Ok(()),
        TaskStatus::Completed => {
            Err("this task completed; only a failed or cancelled task can be run again".into())
        }
        TaskStatus::InputRequired => {
            Err("this task is still waiting for an answer: answer it, or cancel it first".into())
        }
        _ => Err("this task is still working: wait for it to end, or cancel it first".into()),
    }
}

/// Whether `caller` may run `record` again: its owner or an operator, and not someone
/// who voted on its approval. `Err` says why not, for a person.
pub(crate) fn who_may_run_again(record: &TaskRecord, caller: &Caller) -> Result<(), String> {
    if !caller.operator && caller.principal != record.owner {
        return Err(format!(
            "only the task's owner ({}) or an operator may run a call again; ask one of them",
            record.owner
        ));
    }
    let voted = record.input_requests.values().any(|q| {
        view::QuestionKind::of(&q.method, &q.params) == view::QuestionKind::Approval
            && q.answered_by
                .as_ref()
                .is_some_and(|by| by.principal == caller.principal)
    });
    if voted {
        return Err("you decided this call's approval, so you cannot also run it again: its owner or another operator may".to_string());
    }
    Ok(())
}

/// Who ran the call of `record` again, when a person did (its request names them).
pub(crate) fn ran_again_by(record: &TaskRecord) -> Option<String> {
    record.request.field("_meta").and_then(|m| {
        m.get(RAN_AGAIN_BY_META)
            .and_then(Value::as_str)
            .map(String::from)
    })
}

/// The tasks made by running `record` again: tasks of its owner created after it whose
/// request names it as related, newest first, among the owner's [`RERUN_SEARCH`]
/// newest tasks. The search reads those rows and no more (the owner's index, no filter
/// to skip rows on), so a page costs the same for an owner with millions of tasks; a
/// re-run made before that many newer tasks is no longer linked from here (it still
/// links back, by its related-task id).
pub(crate) async fn reruns_of(board: &Board, record: &TaskRecord) -> Vec<TaskRecord> {
    let owner = Caller::authenticated(record.owner.clone(), None);
    let filter = TaskFilter {
        status: None,
        tool: None,
        id_prefix: None,
        cursor: None,
        limit: RERUN_SEARCH,
    };
    let Ok(page) = board.server().engine().query_tasks(&owner, &filter).await else {
        return Vec::new();
    };
    page.tasks
        .iter()
        .take_while(|t| t.created_at >= record.created_at)
        .filter(|t| t.id != record.id)
        .filter(|t| {
            view::related_task_ids(t.request.field("_meta").as_ref())
                .iter()
                .any(|related| related == record.id.as_str())
        })
        .cloned()
        .collect()
}

/// Adds what the detail pane needs for "run again": whether `caller` may be offered
/// it (the button is shown to the owner and operators only), the tasks already made
/// from this one, and in the timeline who ran it again (here, and on the new task).
pub(crate) async fn add_run_again(
    board: &Board,
    record: &TaskRecord,
    caller: &Caller,
    detail: &mut Value,
) {
    detail["canRunAgain"] =
        json!(may_run_again(record).is_ok() && who_may_run_again(record, caller).is_ok());
    let reruns = if record.status.is_terminal() && record.method == TOOLS_CALL {
        reruns_of(board, record).await
    } else {
        Vec::new()
    };
    detail["reruns"] = json!(reruns.iter().map(|t| t.id.as_str()).collect::<Vec<_>>());
    let Some(timeline) = detail["timeline"].as_array_mut() else {
        return;
    };
    // Oldest first, as the timeline: each re-run is an entry when it was made.
    for made in reruns.iter().rev() {
        let by = ran_again_by(made).unwrap_or_else(|| "someone".into());
        timeline.push(json!({
            "at": view::millis(made.created_at),
            "status": "rerun",
            "label": "run again",
            "statusMessage": format!("run again by {by} as task {}", made.id),
            "task": made.id.as_str(),
        }));
    }
    if let Some(by) = ran_again_by(record) {
        let from = view::related_task_ids(record.request.field("_meta").as_ref());
        let from = from
            .first()
            .map(|id| format!(" from task {id}"))
            .unwrap_or_default();
        timeline.insert(
            0,
            json!({
                "at": view::millis(record.created_at),
                "status": "rerun",
                "label": "run again",
                "statusMessage": format!("run again by {by} on the task board{from}"),
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tasks_engine::Outcome;
    use mcp_tasks_protocol::TaskId;

    fn task(status: TaskStatus, method: &str, outcome: Option<Outcome>) -> TaskRecord {
        let at = chrono::DateTime::from_timestamp_millis(1_800_000_000_000).unwrap_or_default();
        TaskRecord {
            id: TaskId::generate(),
            owner: "alice".into(),
            session: None,
            status,
            status_message: None,
            created_at: at,
            last_updated_at: at,
            ttl: None,
            expires_at: None,
            poll_interval: None,
            method: method.into(),
            request: json!({"name": "deploy", "arguments": {"to": "prod"}}).into(),
            outcome: outcome.map(Box::new),
            runner: None,
            version: 1,
            input_requests: Default::default(),
            lease_until: None,
            lease_generation: 0,
            external: None,
        }
    }

    #[test]
    fn only_failed_cancelled_or_tool_error_calls_may_run_again() {
        let tool_error = Outcome::Result {
            value: json!({"isError": true, "content": [{"type": "text", "text": "boom"}]}),
        };
        let fine = Outcome::Result {
            value: json!({"content": [{"type": "text", "text": "ok"}]}),
        };
        for ok in [
            task(TaskStatus::Failed, TOOLS_CALL, None),
            task(TaskStatus::Cancelled, TOOLS_CALL, None),
            task(TaskStatus::Completed, TOOLS_CALL, Some(tool_error)),
        ] {
            assert!(may_run_again(&ok).is_ok(), "{:?}", ok.status);
        }
        let refused = |record: TaskRecord| may_run_again(&record).unwrap_err();
        assert!(refused(task(TaskStatus::Working, TOOLS_CALL, None)).contains("still working"));
        assert!(refused(task(TaskStatus::InputRequired, TOOLS_CALL, None))
            .contains("still waiting for an answer"));
        assert!(refused(task(TaskStatus::Completed, TOOLS_CALL, Some(fine))).contains("completed"));
        assert!(
            refused(task(TaskStatus::Failed, "sampling/createMessage", None))
                .contains("only a tool call")
        );
    }
}
