//! What people's views of tasks read (the task board): every task, or one principal's,
//! newest first and filtered, and the timeline of one task's status changes.

use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::{TaskQuery, TaskRecord, TimelineEntry};

use crate::caller::Caller;
use crate::cursor::decode_cursor;
use crate::engine::{Engine, ListResult};
use crate::error::EngineError;

/// Which tasks a query across owners returns ([`Engine::query_tasks`]): what a board
/// page, a console or the task tools' listing shows.
#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    /// Only tasks in this status.
    pub status: Option<TaskStatus>,
    /// Only calls of this tool (the `name` of a `tools/call`).
    pub tool: Option<String>,
    /// Only tasks whose id starts with this (search by id).
    pub id_prefix: Option<String>,
    /// The `next_cursor` of the page before, to read the next (older) one.
    pub cursor: Option<String>,
    /// Tasks per page (at least 1).
    pub limit: usize,
}

impl Engine {
    /// The tasks `caller` may see, newest first: an operator's view holds every
    /// principal's tasks, anyone else's only their own (without authentication the
    /// caller is its session, as in `tasks/list`).
    ///
    /// # Errors
    /// [`EngineError::InvalidInput`] for a cursor this server did not issue.
    pub async fn query_tasks(
        &self,
        caller: &Caller,
        filter: &TaskFilter,
    ) -> Result<ListResult, EngineError> {
        let before = filter.cursor.as_deref().map(decode_cursor).transpose()?;
        let page = self
            .store()
            .query_tasks(&TaskQuery {
                owner: (!caller.operator).then(|| caller.principal.clone()),
                status: filter.status,
                request_name: filter.tool.clone(),
                id_prefix: filter.id_prefix.clone(),
                before,
                limit: filter.limit.max(1),
                now: self.inner.core.now(),
            })
            .await?;
        Ok(ListResult::from_page(page))
    }

    /// The cursor of the page after `record` in [`Engine::query_tasks`]'s order: for a
    /// view that merges or filters pages (the board's failed tab holds failed tasks and
    /// tool errors) and so ends a page on a record of its choosing.
    pub fn cursor_after(record: &TaskRecord) -> String {
        crate::cursor::encode_cursor(record)
    }

    /// How many tasks [`Engine::query_tasks`] would show `caller` for `filter` over all
    /// its pages, counting at most `filter.limit` (the cursor is ignored): the board's
    /// counts per state, as cheap as one page however many tasks there are.
    ///
    /// # Errors
    /// [`EngineError::Store`] when the store cannot be read.
    pub async fn count_tasks(
        &self,
        caller: &Caller,
        filter: &TaskFilter,
    ) -> Result<u64, EngineError> {
        Ok(self
            .store()
            .count_tasks(&TaskQuery {
                owner: (!caller.operator).then(|| caller.principal.clone()),
                status: filter.status,
                request_name: filter.tool.clone(),
                id_prefix: filter.id_prefix.clone(),
                before: None,
                limit: filter.limit,
                now: self.inner.core.now(),
            })
            .await?)
    }

    /// The status changes of `record`, oldest first. It takes the record a caller
    /// already read ([`Engine::get`] decides who may see it), so the task is not read
    /// and authorized a second time.
    ///
    /// # Errors
    /// [`EngineError::Store`] when the store cannot be read.
    pub async fn timeline(&self, record: &TaskRecord) -> Result<Vec<TimelineEntry>, EngineError> {
        Ok(self.store().timeline(&record.id).await?)
    }

    /// The attempts at `record`'s work after the first (takeovers, hand-overs,
    /// retries), oldest first, from its journal: who ran each, why, and when. Empty for
    /// work that ran once, or on a store without a journal.
    ///
    /// # Errors
    /// [`EngineError::Store`] when the journal cannot be read.
    pub async fn attempts(&self, record: &TaskRecord) -> Result<Vec<Attempt>, EngineError> {
        let Some(journal) = self.store().journal() else {
            return Ok(Vec::new());
        };
        Ok(journal
            .steps(&record.id)
            .await?
            .into_iter()
            .filter_map(|e| Attempt::from_entry(&e))
            .collect())
    }
}

/// One run of a task's work after the first, as its journal records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// Its number (2 for the first run after the first).
    pub number: u32,
    /// When it started.
    pub at: chrono::DateTime<chrono::Utc>,
    /// Why: `takeover` (the process running it stopped or handed it over) or `retry`
    /// (the work asked for one).
    pub reason: String,
    /// The runner (server process) that ran the previous attempt, when known.
    pub from: Option<String>,
    /// The runner that ran this one.
    pub to: Option<String>,
    /// The error the previous attempt reported, for a retry.
    pub error: Option<String>,
}

impl Attempt {
    fn from_entry(entry: &mcp_tasks_store::JournalEntry) -> Option<Attempt> {
        let number = entry
            .step
            .strip_prefix(crate::steps::ATTEMPT_PREFIX)?
            .parse()
            .ok()?;
        let text = |key: &str| {
            entry
                .output
                .get(key)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        Some(Attempt {
            number,
            at: entry.recorded_at,
            reason: text("reason").unwrap_or_default(),
            from: text("from"),
            to: text("to"),
            error: text("error"),
        })
    }

    /// The attempt in a sentence, for timelines: "attempt 2: taken over by … from …".
    pub fn describe(&self) -> String {
        let short = |r: &Option<String>| {
            r.as_deref()
                .map(|r| r.chars().take(8).collect::<String>())
                .unwrap_or_else(|| "an earlier one".into())
        };
        match self.reason.as_str() {
            "retry" => format!(
                "attempt {}: retry on {} after: {}",
                self.number,
                short(&self.to),
                self.error.as_deref().unwrap_or("a retryable failure")
            ),
            _ => format!(
                "attempt {}: taken over by server process {} from {}",
                self.number,
                short(&self.to),
                short(&self.from)
            ),
        }
    }
}
