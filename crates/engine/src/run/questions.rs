//! Questions a task asks (input requests) and their answers, on the engine's side:
//! storing a question on the record (`input_required`), the one entry point of every
//! answer (a client's, a person's on the board, one another replica stored), the
//! question's deadline, and [`QuestionWaiters`], the in-process channels that wake the
//! work waiting for an answer. How a question reaches a person or a client is the
//! server's (`questions/` there); the requests and answers live in the task record.

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{
    DeadlineOutcome, Failure, FieldChange, InputRequest, Outcome, QuestionDeadline, StoreError,
    TransitionParams,
};
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::caller::Caller;
use crate::error::EngineError;
use crate::input::InputError;
use crate::run::core::Core;
use crate::run::deadlines::{escalate, fail_unanswered, note_overdue, read_running, settle_at};
use crate::run::executor::Executor;

/// Work waiting for the answer to an input request, by task and request key.
type Waiting = HashMap<(TaskId, String), oneshot::Sender<Outcome>>;

/// The work of this process waiting on input answers. See the module docs.
#[derive(Default)]
pub(crate) struct QuestionWaiters {
    waiting: Mutex<Waiting>,
}

impl QuestionWaiters {
    /// Stores a new input request on the task and waits for its answer.
    ///
    /// A question the task already has under `key` (asked by an earlier attempt of
    /// the work, which ran again after a takeover or a retry) is not asked again when
    /// it is the same question (method and params): answered, its answer returns at
    /// once; still open, this attempt waits for it, deadline included. A different
    /// question in that position is asked under a key of its own.
    pub(crate) async fn request(
        &self,
        core: &Core,
        executor: &Executor,
        id: &TaskId,
        key: String,
        request: InputRequest,
        cancel: &CancellationToken,
    ) -> Result<Value, InputError> {
        let current = read_running(core, id).await?;
        let (key, earlier) = position(&current, key, &request);
        {
            if let Some(earlier) = earlier {
                if let Some(answer) = earlier.answer {
                    core.activity.count(|a| a.answers_replayed += 1);
                    return into_value(answer);
                }
                // Still open from an earlier attempt: wait here (registered first,
                // then re-read, so that an answer given meanwhile is not missed).
                let (tx, rx) = oneshot::channel();
                self.waiting.lock().insert((id.clone(), key.clone()), tx);
                let now = read_running(core, id).await;
                let answered = now
                    .as_ref()
                    .ok()
                    .and_then(|r| r.input_requests.get(&key))
                    .and_then(|r| r.answer.clone());
                if let Some(answer) = answered {
                    self.waiting.lock().remove(&(id.clone(), key));
                    return into_value(answer);
                }
                if let Err(e) = now {
                    self.waiting.lock().remove(&(id.clone(), key));
                    return Err(e);
                }
                let end = TaskEnd::of(&current);
                return self
                    .wait(
                        core,
                        executor,
                        id,
                        key,
                        (earlier.deadline, end),
                        &request,
                        rx,
                        cancel,
                    )
                    .await;
            }
        }
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().insert((id.clone(), key.clone()), tx);
        let stored = self.store_request(core, executor, id, &key, &request).await;
        if let Err(e) = stored {
            self.waiting.lock().remove(&(id.clone(), key));
            return Err(e);
        }
        let deadline = request.deadline.clone();
        let end = TaskEnd::of(&current);
        self.wait(
            core,
            executor,
            id,
            key,
            (deadline, end),
            &request,
            rx,
            cancel,
        )
        .await
    }

    /// Waits for the answer to the stored question `key`, until its deadline (if it
    /// has one) or until shortly before the task expires, whichever comes first: an
    /// unanswered question then fails the task with an outcome its client can read
    /// (see `deadlines`), so it never vanishes with the record.
    #[allow(clippy::too_many_arguments)]
    async fn wait(
        &self,
        core: &Core,
        executor: &Executor,
        id: &TaskId,
        key: String,
        (deadline, end): (Option<QuestionDeadline>, TaskEnd),
        request: &InputRequest,
        rx: oneshot::Receiver<Outcome>,
        cancel: &CancellationToken,
    ) -> Result<Value, InputError> {
        let mut rx = rx;
        let mut deadline = deadline;
        let answer = loop {
            let own = deadline
                .as_ref()
                .filter(|d| d.outcome != DeadlineOutcome::KeepWaiting || d.at > core.now())
                .map(|d| d.at);
            // The question's own deadline decides, unless the task ends before it.
            let (at, task_ends) = match (own, end.settle_at) {
                (Some(own), Some(settle)) if settle < own => (Some(settle), true),
                (Some(own), _) => (Some(own), false),
                (None, settle) => (settle, settle.is_some()),
            };
            let until = at.map(|at| (at - core.now()).to_std().unwrap_or(Duration::ZERO));
            let timer = async {
                match until {
                    Some(wait) => tokio::time::sleep(wait).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                a = &mut rx => break a.map_err(|_| InputError::TaskEnded),
                _ = cancel.cancelled() => break Err(InputError::Cancelled),
                _ = timer => {
                    if task_ends {
                        self.waiting.lock().remove(&(id.clone(), key.clone()));
                        return Err(fail_unanswered(core, executor, id, &key, request, end.expires_at).await);
                    }
                    let passed = deadline.take().unwrap_or(QuestionDeadline { at: core.now(), outcome: DeadlineOutcome::Fail });
                    match &passed.outcome {
                        // Overdue: said once, then the wait goes on without a deadline.
                        DeadlineOutcome::KeepWaiting => {
                            note_overdue(core, executor, id, &key, &passed).await;
                        }
                        // Handed to the next people, with a deadline of their own.
                        DeadlineOutcome::Escalate { to, within } => {
                            deadline = escalate(core, executor, id, &key, to, *within).await;
                        }
                        _ => {
                            self.waiting.lock().remove(&(id.clone(), key.clone()));
                            return self.pass_deadline(core, executor, id, &key, request, passed).await;
                        }
                    }
                }
            }
        };
        self.waiting.lock().remove(&(id.clone(), key));
        answer.and_then(into_value)
    }

    /// What a question's deadline does: fails the task, or answers the question as
    /// declined or with its default answer (the timeline keeps the message saying so).
    async fn pass_deadline(
        &self,
        core: &Core,
        executor: &Executor,
        id: &TaskId,
        key: &str,
        request: &InputRequest,
        deadline: QuestionDeadline,
    ) -> Result<Value, InputError> {
        core.activity.count(|a| a.deadlines_passed += 1);
        let at = deadline
            .at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let answer = match deadline.outcome {
            DeadlineOutcome::Answer { value } => Outcome::Result { value },
            DeadlineOutcome::Decline if request.method == "elicitation/create" => Outcome::Result {
                value: serde_json::json!({"action": "decline"}),
            },
            DeadlineOutcome::Decline
            | DeadlineOutcome::Fail
            | DeadlineOutcome::KeepWaiting
            | DeadlineOutcome::Escalate { .. } => {
                let message = format!(
                    "question '{key}' ({}) got no answer by its deadline {at}; the task failed",
                    request.method
                );
                crate::audit::deadline_passed(id, key, "the task failed");
                crate::run::ledger::fail(core, executor, id, Failure::InputTimedOut, message).await;
                return Err(InputError::TimedOut {
                    key: key.to_string(),
                    method: request.method.clone(),
                    after: Duration::ZERO,
                });
            }
        };
        let how = match &answer {
            Outcome::Result { value } if value.get("action") == Some(&Value::from("decline")) => {
                "declined"
            }
            _ => "answered with its default",
        };
        let message = format!("question '{key}' got no answer by its deadline {at}: {how}");
        crate::audit::deadline_passed(id, key, how);
        loop {
            let current = read_running(core, id).await?;
            let mut requests = current.input_requests.clone();
            match requests.get_mut(key) {
                Some(r) if r.answer.is_none() => r.answer = Some(answer.clone()),
                // Answered at the last moment: that answer counts.
                Some(r) => return into_value(r.answer.clone().unwrap_or(answer)),
                None => return Err(InputError::TaskEnded),
            }
            let still_asking = requests.values().any(|r| r.is_outstanding());
            let status = if still_asking {
                TaskStatus::InputRequired
            } else {
                TaskStatus::Working
            };
            let change = TransitionParams::to(id.clone(), status, core.now())
                .expecting(current.version)
                .message(message.clone())
                .questions(requests)
                .fenced(executor.fence(id));
            match core.apply(change).await {
                Ok(_) => return into_value(answer),
                Err(StoreError::Conflict { current }) if !current.status.is_terminal() => continue,
                Err(StoreError::Conflict { .. }) | Err(StoreError::NotFound) => {
                    return Err(InputError::TaskEnded)
                }
                Err(e) => return Err(InputError::Store(e.to_string())),
            }
        }
    }

    async fn store_request(
        &self,
        core: &Core,
        executor: &Executor,
        id: &TaskId,
        key: &str,
        request: &InputRequest,
    ) -> Result<(), InputError> {
        loop {
            let current = match core.store.get(id, core.now()).await {
                Ok(Some(r)) => r,
                Ok(None) => return Err(InputError::TaskEnded),
                Err(e) => return Err(InputError::Store(e.to_string())),
            };
            if current.status.is_terminal() {
                return Err(InputError::TaskEnded);
            }
            let outstanding = current
                .input_requests
                .values()
                .filter(|r| r.is_outstanding())
                .count();
            if outstanding >= core.config.max_input_requests {
                return Err(InputError::TooMany {
                    limit: core.config.max_input_requests,
                });
            }
            let mut requests = current.input_requests.clone();
            requests.insert(key.to_string(), request.clone());
            let change = TransitionParams::to(id.clone(), TaskStatus::InputRequired, core.now())
                .expecting(current.version)
                .questions(requests)
                .fenced(executor.fence(id));
            match core.apply(change).await {
                Ok(_) => return Ok(()),
                Err(StoreError::Conflict { current }) if !current.status.is_terminal() => continue,
                Err(StoreError::Conflict { .. }) | Err(StoreError::NotFound) => {
                    return Err(InputError::TaskEnded)
                }
                Err(e) => return Err(InputError::Store(e.to_string())),
            }
        }
    }

    /// Applies an answer: removes the request from the record (back to `working` when
    /// none is left) and wakes the waiting work. Returns false when the request was
    /// not outstanding (already answered, or never asked).
    ///
    /// `via` is the channel a person answered through (`board`, `link`, `slack`);
    /// `None` is the client that asked. A question assigned only to some people (an
    /// approval) takes answers from them alone, never from the client; an assigned
    /// question also lets its assignees see and answer the task.
    pub(crate) async fn answer(
        &self,
        core: &Core,
        id: &TaskId,
        key: &str,
        mut answer: Outcome,
        caller: &Caller,
        via: Option<&str>,
    ) -> Result<bool, EngineError> {
        let mut stamped = None;
        loop {
            let current = match core.store.get(id, core.now()).await? {
                Some(r) => r,
                None => return Err(EngineError::NotFound),
            };
            let pending = current
                .input_requests
                .get(key)
                .filter(|r| r.is_outstanding());
            may_answer(&current, pending, caller, via, key)?;
            let Some(request) = pending.filter(|_| !current.status.is_terminal()) else {
                return Ok(false);
            };
            // A wrong answer never reaches the work: the question stays open, and the
            // one who answered learns what to fix.
            if let Outcome::Result { value } = &answer {
                core.reader()
                    .check_answer(&request.method, &request.params, value)
                    .map_err(|problem| {
                        EngineError::InvalidInput(format!(
                            "the answer to input request '{key}' was refused: {problem}; the question is still open, answer it again"
                        ))
                    })?;
            }
            // A person's answer says who gave it, through which channel and when: in
            // the record (the task's history) and, for a question asked of people (an
            // approval counts distinct approvers), to the work as `answeredBy`. An
            // ordinary question's answer goes to the work exactly as a client would
            // have sent it (a gateway hands it to its upstream, which may check it).
            let by = match (via, &stamped) {
                (Some(via), None) => {
                    let by = mcp_tasks_store::Answerer {
                        principal: caller.principal.clone(),
                        via: via.to_string(),
                        at: core.now(),
                    };
                    if let (
                        Outcome::Result {
                            value: Value::Object(map),
                        },
                        true,
                    ) = (&mut answer, request.assignment.is_some())
                    {
                        map.insert(
                            "answeredBy".into(),
                            serde_json::json!({"principal": by.principal, "via": by.via, "at": by.at}),
                        );
                    }
                    stamped = Some(by.clone());
                    Some(by)
                }
                (_, by) => by.clone(),
            };
            let mut requests = current.input_requests.clone();
            if let Some(r) = requests.get_mut(key) {
                r.answer = Some(answer.clone());
                r.answered_by = by.clone();
            }
            let still_asking = requests.values().any(|r| r.is_outstanding());
            let status = if still_asking {
                TaskStatus::InputRequired
            } else {
                TaskStatus::Working
            };
            // The message shown while the task waited ("waiting for …") does not
            // outlive the wait: leaving `input_required` clears it, until the work
            // says what it does next. A person's answer is said instead, so that the
            // timeline keeps who answered what, when and through which channel.
            let said = by.as_ref().map(|by| {
                let what = core
                    .reader()
                    .describe_answer(&request.method, &request.params, &answer)
                    .unwrap_or_else(|| "a question answered".to_string());
                format!("{what} by {} via {}", by.principal, by.via)
            });
            let message = match said {
                Some(said) => FieldChange::Set(said),
                None if current.status == TaskStatus::InputRequired && !still_asking => {
                    FieldChange::Clear
                }
                None => FieldChange::Keep,
            };
            // A person's answer to a question for people is kept when the task ends.
            let decision = by
                .as_ref()
                .and(requests.get(key))
                .filter(|r| r.assignment.is_some())
                .cloned();
            let change = TransitionParams::to(id.clone(), status, core.now())
                .expecting(current.version)
                .message_change(message)
                .questions(requests);
            // Remembered before the write: once it is stored, the work may take the
            // answer (from the record, on a store event) and end the task before this
            // call goes on, and the ended record must keep the decision.
            let remembered = decision.is_some();
            if let Some(decision) = decision {
                core.remember_decision(id, key, decision);
            }
            let forget = || {
                if remembered {
                    core.forget_decision(id, key);
                }
            };
            match core.apply(change).await {
                Ok(_) => break,
                Err(StoreError::Conflict { .. }) => {
                    forget();
                    continue;
                }
                Err(StoreError::NotFound) => {
                    forget();
                    return Err(EngineError::NotFound);
                }
                Err(e) => {
                    forget();
                    return Err(e.into());
                }
            }
        }
        if let Some(by) = &stamped {
            crate::audit::answered(id, key, &by.principal, &by.via);
        }
        match self.waiting.lock().remove(&(id.clone(), key.to_string())) {
            Some(tx) => {
                let _ = tx.send(answer);
            }
            // The work runs on another replica: it picks the answer up from the record.
            None => tracing::debug!(task_id = %id, key, "answer stored for work running elsewhere"),
        }
        Ok(true)
    }

    /// Hands answers found in a re-read record to work waiting in this process (the
    /// answer arrived at another replica).
    pub(crate) fn deliver_stored_answers(&self, record: &mcp_tasks_store::TaskRecord) {
        for (key, request) in &record.input_requests {
            let Some(answer) = &request.answer else {
                continue;
            };
            if let Some(tx) = self
                .waiting
                .lock()
                .remove(&(record.id.clone(), key.clone()))
            {
                let _ = tx.send(answer.clone());
            }
        }
    }
}

/// When a task that waits for an answer ends: its expiry, and the moment an unanswered
/// question fails it before then (see `deadlines`).
#[derive(Debug, Clone, Copy)]
struct TaskEnd {
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
    settle_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl TaskEnd {
    fn of(record: &mcp_tasks_store::TaskRecord) -> Self {
        TaskEnd {
            expires_at: record.expires_at,
            settle_at: settle_at(record),
        }
    }
}

/// Whether `caller` may answer question `key` of `record` through `via` (`None`: as
/// the client). A question assigned only to some people takes their answers alone; an
/// assigned question is also open to its assignees; otherwise the task's owner (and
/// operators, and anyone holding the id without authentication) answers.
fn may_answer(
    record: &mcp_tasks_store::TaskRecord,
    question: Option<&InputRequest>,
    caller: &Caller,
    via: Option<&str>,
    key: &str,
) -> Result<(), EngineError> {
    let assignment = question.and_then(|q| q.assignment.as_ref());
    let named = assignment.is_some_and(|a| a.names(&caller.principal, &caller.groups));
    let listed = assignment.is_some_and(|a| a.lists(&caller.principal, &caller.groups));
    let may_access = caller.may_access(&record.owner);
    if !(may_access || listed) {
        crate::audit::denied(&record.id, &caller.principal, &record.owner, "answer_input");
        return Err(EngineError::NotFound);
    }
    let Some(assignment) = assignment.filter(|a| a.only) else {
        return Ok(());
    };
    if via.is_none() {
        crate::audit::denied(
            &record.id,
            &caller.principal,
            &record.owner,
            "answer_approval_as_client",
        );
        return Err(EngineError::NotAllowed(format!(
            "question '{key}' is for {} to answer, not for the client that asked: the task goes on once they did",
            assignment.to.join(", ")
        )));
    }
    if !named {
        crate::audit::denied(
            &record.id,
            &caller.principal,
            &record.owner,
            "answer_assigned_question",
        );
        let again = assignment.except.iter().any(|p| p == &caller.principal);
        return Err(EngineError::NotAllowed(if again {
            format!("{} may not answer question '{key}': they answered an earlier round of it or started this call themselves (running it again), and each person counts once; another of {} must answer", caller.principal, assignment.to.join(", "))
        } else {
            format!(
                "question '{key}' is for {} to answer; {} is not one of them",
                assignment.to.join(", "),
                caller.principal
            )
        }));
    }
    Ok(())
}

/// Where `request` goes among the task's questions: under `key`, with the question an
/// earlier attempt stored there when it is the same one; under a key of its own when
/// another question holds `key`.
fn position(
    current: &mcp_tasks_store::TaskRecord,
    key: String,
    request: &InputRequest,
) -> (String, Option<InputRequest>) {
    match current.input_requests.get(&key) {
        None => (key, None),
        Some(earlier) if earlier.method == request.method && earlier.params == request.params => {
            (key, Some(earlier.clone()))
        }
        Some(_) => {
            let free = (2..)
                .map(|n| format!("{key}.{n}"))
                .find(|k| !current.input_requests.contains_key(k))
                .unwrap_or(key);
            (free, None)
        }
    }
}

/// The work's view of an answer.
fn into_value(answer: Outcome) -> Result<Value, InputError> {
    match answer {
        Outcome::Result { value } => Ok(value),
        Outcome::Error { code, message, .. } => Err(InputError::Rejected { code, message }),
        Outcome::Failed { message, .. } => Err(InputError::Malformed(message)),
    }
}
