//! The parity suite on the in-memory backend.

use mcp_tasks_store::{MemoryStore, TaskStore};
use std::sync::Arc;

async fn fresh_store() -> Arc<dyn TaskStore> {
    Arc::new(MemoryStore::new())
}

mcp_tasks_store::store_suite!(fresh_store);
