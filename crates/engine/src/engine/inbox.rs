//! What people are asked: the tasks waiting for a question assigned to someone (an
//! approval, a question for a group), for their inbox on the task board, and the read
//! that lets an assignee see a task that is not theirs.

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{InputRequest, TaskRecord};

use crate::caller::Caller;
use crate::engine::board::TaskFilter;
use crate::engine::Engine;
use crate::error::EngineError;

/// How many waiting tasks an inbox read looks through at most: the inbox shows the
/// questions of the newest waiting tasks, and says when it stopped looking.
pub const INBOX_SCAN_LIMIT: usize = 2000;

/// One question waiting for `caller` (assigned to them or to one of their groups).
#[derive(Debug, Clone)]
pub struct InboxItem {
    /// The task asking.
    pub task: TaskRecord,
    /// The question's key.
    pub key: String,
    /// The question.
    pub question: InputRequest,
}

impl InboxItem {
    /// Whether the question's deadline passed while it still waits (an overdue
    /// question that stays open).
    pub fn overdue(&self, now: chrono::DateTime<chrono::Utc>) -> bool {
        self.question.deadline.as_ref().is_some_and(|d| d.at <= now)
    }
}

/// The inbox: what waits for one person, soonest deadline first.
#[derive(Debug, Clone, Default)]
pub struct Inbox {
    /// The questions, by deadline (those without one last, newest task first).
    pub items: Vec<InboxItem>,
    /// True when more waiting tasks exist than one read looks through
    /// ([`INBOX_SCAN_LIMIT`]).
    pub truncated: bool,
}

impl Engine {
    /// Reads task `id` for a person: as [`Engine::get`], and also when one of its
    /// questions is assigned to them (an approver sees the task they are asked about,
    /// whoever owns it).
    ///
    /// # Errors
    /// [`EngineError::NotFound`] for unknown, expired or foreign tasks that ask
    /// nothing of `caller`.
    pub async fn get_for_person(
        &self,
        id: &TaskId,
        caller: &Caller,
    ) -> Result<TaskRecord, EngineError> {
        match self.get(id, caller).await {
            Err(EngineError::NotFound) => {}
            other => return other,
        }
        match self.store().get(id, self.inner.core.now()).await? {
            Some(record) if asks(&record, caller) => Ok(record),
            _ => Err(EngineError::NotFound),
        }
    }

    /// The open questions assigned to `caller` (by principal or group), soonest
    /// deadline first, looking through at most [`INBOX_SCAN_LIMIT`] waiting tasks.
    ///
    /// # Errors
    /// [`EngineError::Store`] when the store cannot be read.
    pub async fn inbox(&self, caller: &Caller) -> Result<Inbox, EngineError> {
        let everyone = Caller {
            operator: true,
            ..caller.clone()
        };
        let mut filter = TaskFilter {
            status: Some(TaskStatus::InputRequired),
            limit: 200,
            ..TaskFilter::default()
        };
        let mut inbox = Inbox::default();
        let mut seen = 0;
        loop {
            let page = self.query_tasks(&everyone, &filter).await?;
            seen += page.tasks.len();
            for task in page.tasks {
                let mine: Vec<(String, InputRequest)> = task
                    .input_requests
                    .iter()
                    .filter(|(_, q)| q.is_outstanding() && assigned(q, caller))
                    .map(|(k, q)| (k.clone(), q.clone()))
                    .collect();
                for (key, question) in mine {
                    inbox.items.push(InboxItem {
                        task: task.clone(),
                        key,
                        question,
                    });
                }
            }
            match page.next_cursor {
                Some(next) if seen < INBOX_SCAN_LIMIT => filter.cursor = Some(next),
                Some(_) => {
                    inbox.truncated = true;
                    break;
                }
                None => break,
            }
        }
        // Soonest deadline first; without a deadline after, newest task first (the
        // order they were read in).
        inbox.items.sort_by_key(|i| {
            i.question
                .deadline
                .as_ref()
                .map(|d| d.at)
                .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC)
        });
        Ok(inbox)
    }
}

/// Whether `question` is assigned to `caller`.
fn assigned(question: &InputRequest, caller: &Caller) -> bool {
    question
        .assignment
        .as_ref()
        .is_some_and(|a| a.names(&caller.principal, &caller.groups))
}

/// Whether `record` asks (or asked) `caller` anything.
fn asks(record: &TaskRecord, caller: &Caller) -> bool {
    record.input_requests.values().any(|q| {
        q.assignment
            .as_ref()
            .is_some_and(|a| a.lists(&caller.principal, &caller.groups))
    })
}
