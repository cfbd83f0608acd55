//! What the server's metrics read of the engine: tasks counted by status, and the
//! store's backend name.

use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::{StoreError, TaskStore};

use crate::engine::Engine;

impl Engine {
    /// Visible tasks per status in the store (every process's tasks), or `None` when
    /// the store cannot count. For the tasks-by-status gauge; cache the answer.
    ///
    /// # Errors
    /// What the store said.
    pub async fn count_by_status(&self) -> Result<Option<Vec<(TaskStatus, u64)>>, StoreError> {
        self.inner
            .observed
            .count_by_status(self.inner.core.now())
            .await
    }

    /// The store's backend name (`memory`, `sqlite`, `postgresql`, `custom`).
    pub fn store_backend(&self) -> &'static str {
        self.inner.observed.backend_name()
    }
}
