//! What a task asks of people, as the board shows it: for each open question whether
//! the viewer may answer it (an approval takes its approvers' votes only), its
//! assignees and deadline (overdue when passed), the decisions already given (who,
//! through which channel, when). The inbox (`inbox`) lists what waits for a viewer.

use chrono::{DateTime, Utc};
use mcp_tasks_engine::{Caller, InputRequest, TaskRecord};
use serde_json::{json, Value};

use crate::view::{millis, question_text, QuestionKind};

/// Whether `caller` may answer `question` of `record` on the board, or why not (the
/// engine's rule, which decides in the end: this only spares a person a refused try).
pub(crate) fn may_answer(
    record: &TaskRecord,
    question: &InputRequest,
    caller: &Caller,
) -> Result<(), String> {
    let Some(assignment) = &question.assignment else {
        return Ok(());
    };
    let named = assignment.names(&caller.principal, &caller.groups);
    if named || (!assignment.only && caller.may_access(&record.owner)) {
        return Ok(());
    }
    let ran_again = question.params["ranAgainBy"].as_array().is_some_and(|by| {
        by.iter()
            .any(|p| p.as_str() == Some(caller.principal.as_str()))
    });
    if ran_again {
        return Err(format!(
            "You ran this call again, so you cannot also approve it: waiting for another of {}.",
            assignment.to.join(", ")
        ));
    }
    if assignment.except.iter().any(|p| p == &caller.principal) {
        return Err(format!(
            "You approved an earlier round already; each person counts once. Waiting for another of {}.",
            assignment.to.join(", ")
        ));
    }
    Err(format!(
        "This is for {} to answer.",
        assignment.to.join(", ")
    ))
}

/// Whether `record` asks (or asked) `caller` something: one of its questions is
/// assigned to them or to one of their groups.
pub(crate) fn asks(record: &TaskRecord, caller: &Caller) -> bool {
    record.input_requests.values().any(|q| {
        q.assignment
            .as_ref()
            .is_some_and(|a| a.lists(&caller.principal, &caller.groups))
    })
}

/// Adds to a task's detail what concerns people: per open question `assignedTo`,
/// `onlyAssignees`, `deadline`, `overdue`, `mayAnswer` (and `whyNot`); and
/// `decisions`, the answers people gave, oldest first.
pub(crate) fn annotate(
    detail: &mut Value,
    record: &TaskRecord,
    caller: &Caller,
    now: DateTime<Utc>,
) {
    // Whether the viewer may act on the task (cancel it), or only sees it because it
    // asks them something (an approver of someone else's call).
    detail["mayAct"] = json!(caller.may_access(&record.owner));
    if let Some(questions) = detail["questions"].as_array_mut() {
        for q in questions {
            let Some(request) = q["key"].as_str().and_then(|k| record.input_requests.get(k)) else {
                continue;
            };
            if let Some(a) = &request.assignment {
                q["assignedTo"] = json!(a.to);
                q["onlyAssignees"] = json!(a.only);
            }
            if let Some(d) = &request.deadline {
                q["deadline"] = json!(millis(d.at));
                q["overdue"] = json!(d.at <= now);
            }
            match may_answer(record, request, caller) {
                Ok(()) => q["mayAnswer"] = json!(true),
                Err(why) => {
                    q["mayAnswer"] = json!(false);
                    q["whyNot"] = json!(why);
                }
            }
        }
    }
    let mut decisions: Vec<(DateTime<Utc>, Value)> = record
        .input_requests
        .iter()
        .filter_map(|(key, request)| {
            let by = request.answered_by.as_ref()?;
            let said = request
                .answer
                .as_ref()
                .and_then(|a| describe(request, a))
                .unwrap_or_else(|| "answered".to_string());
            Some((
                by.at,
                json!({
                    "key": key,
                    "question": question_text(&request.method, &request.params),
                    "said": said,
                    "by": by.principal,
                    "via": by.via,
                    "at": millis(by.at),
                }),
            ))
        })
        .collect();
    decisions.sort_by_key(|(at, _)| *at);
    detail["decisions"] = decisions.into_iter().map(|(_, d)| d).collect();
}

fn describe(request: &InputRequest, answer: &mcp_tasks_engine::Outcome) -> Option<String> {
    match QuestionKind::of(&request.method, &request.params) {
        QuestionKind::Approval => {
            let mut said = mcp_tasks_server::approvals::describe_answer(&request.params, answer)?;
            if let mcp_tasks_engine::Outcome::Result { value } = answer {
                if let Some(r) = value.get("reason").and_then(Value::as_str) {
                    if !said.contains(r) {
                        said.push_str(&format!(": {r}"));
                    }
                }
            }
            Some(said)
        }
        _ => match answer {
            mcp_tasks_engine::Outcome::Result { value } => value
                .get("action")
                .and_then(Value::as_str)
                .map(|a| format!("answered ({a})")),
            _ => Some("refused".to_string()),
        },
    }
}
