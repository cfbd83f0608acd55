//! Reading tasks: one task (polling its external job when due), the caller's list, and
//! waiting until a task ends.

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{ListParams, TaskRecord};
use std::time::Duration;
use tokio::sync::broadcast;

use crate::caller::Caller;
use crate::cursor::decode_cursor;
use crate::engine::{Engine, ListResult};
use crate::error::EngineError;
use crate::events::TaskEvent;

impl Engine {
    /// Reads a task the caller may see.
    ///
    /// A task waiting on an external job is polled first when its last poll is at
    /// least a poll interval old (see [`Engine::create_external`]).
    ///
    /// # Errors
    /// [`EngineError::NotFound`] for unknown, expired or foreign tasks.
    pub async fn get(&self, id: &TaskId, caller: &Caller) -> Result<TaskRecord, EngineError> {
        self.read(id, caller, "get").await
    }

    /// Lists the caller's own tasks, one page at a time.
    ///
    /// # Errors
    /// [`EngineError::InvalidInput`] for a cursor this server did not issue.
    pub async fn list(
        &self,
        caller: &Caller,
        cursor: Option<&str>,
    ) -> Result<ListResult, EngineError> {
        let after = cursor.map(decode_cursor).transpose()?;
        let page = self
            .inner
            .core
            .store
            .list(&ListParams {
                owner: caller.principal.clone(),
                session: None,
                after,
                limit: self.inner.core.config.list_page_size.max(1),
                now: self.inner.core.now(),
            })
            .await?;
        Ok(ListResult::from_page(page))
    }

    /// Waits until the task is terminal and returns its final record (with the outcome).
    /// Woken by engine events; a lagging subscriber re-reads the store, and a slow
    /// periodic re-read guards against a missed wake-up costing more than latency. A task
    /// waiting on an external job changes only when it is polled, so for those the
    /// re-read (which polls) comes every poll interval.
    ///
    /// # Errors
    /// [`EngineError::NotFound`] (also when the task expires while waiting).
    pub async fn wait_terminal(
        &self,
        id: &TaskId,
        caller: &Caller,
    ) -> Result<TaskRecord, EngineError> {
        const RECHECK: Duration = Duration::from_secs(10);
        let mut rx = self.subscribe();
        loop {
            let record = self.read(id, caller, "result").await?;
            if record.status.is_terminal() {
                crate::audit::retrieved(&record, &caller.principal);
                return Ok(record);
            }
            // A job elsewhere changes only when polled, and another process on a
            // store without a change feed (SQLite) changes the record unannounced:
            // re-read those every poll interval.
            let unannounced =
                !self.inner.core.store.supports_notify() && !self.inner.executor.runs_here(id);
            let recheck = if record.external.is_some() || unannounced {
                RECHECK.min(self.inner.core.poll_interval_of(&record))
            } else {
                RECHECK
            };
            // One deadline for the whole wait: events of other tasks must not keep
            // pushing the re-read (and so the poll) back.
            let deadline = tokio::time::Instant::now() + recheck;
            loop {
                match tokio::time::timeout_at(deadline, rx.recv()).await {
                    Ok(Ok(TaskEvent::Changed(r))) if &r.id == id => {
                        if r.status.is_terminal() && caller.may_access(&r.owner) {
                            crate::audit::retrieved(&r, &caller.principal);
                            return Ok((*r).clone());
                        }
                        if r.external.is_some() && record.external.is_none() {
                            break; // an external job was attached: poll it from now on
                        }
                    }
                    Ok(Ok(_)) => continue,
                    Ok(Err(broadcast::error::RecvError::Lagged(_))) | Err(_) => break,
                    Ok(Err(broadcast::error::RecvError::Closed)) => {
                        return Err(EngineError::ShuttingDown)
                    }
                }
            }
        }
    }

    /// Reads a task for `caller` and brings an external job's news into it when due.
    async fn read(
        &self,
        id: &TaskId,
        caller: &Caller,
        action: &str,
    ) -> Result<TaskRecord, EngineError> {
        let inner = &self.inner;
        inner
            .external_jobs
            .read(&inner.core, &inner.executor, id, caller, action)
            .await
    }
}
