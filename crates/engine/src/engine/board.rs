//! What people's views of tasks read (the task board): every task, or one principal's,
//! newest first and filtered, and the timeline of one task's status changes.

use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::{BoardQuery, TaskRecord, TimelineEntry};

use crate::caller::Caller;
use crate::cursor::decode_cursor;
use crate::engine::{Engine, ListResult};
use crate::error::EngineError;

/// Which tasks a board page shows.
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
    pub async fn board_list(
        &self,
        caller: &Caller,
        filter: &TaskFilter,
    ) -> Result<ListResult, EngineError> {
        let before = filter.cursor.as_deref().map(decode_cursor).transpose()?;
        let page = self
            .store()
            .board_list(&BoardQuery {
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

    /// The status changes of `record`, oldest first. It takes the record a caller
    /// already read ([`Engine::get`] decides who may see it), so the task is not read
    /// and authorized a second time.
    ///
    /// # Errors
    /// [`EngineError::Store`] when the store cannot be read.
    pub async fn timeline(&self, record: &TaskRecord) -> Result<Vec<TimelineEntry>, EngineError> {
        Ok(self.store().timeline(&record.id).await?)
    }
}
