//! The store conformance suite that the built-in backends pass, run against the custom
//! store: what a new backend should do before it holds anyone's tasks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use example_custom_store::JournalStore;
use mcp_tasks_store::TaskStore;
use std::sync::Arc;

async fn fresh_store() -> Arc<dyn TaskStore> {
    Arc::new(JournalStore::new())
}

mcp_tasks_store::store_suite!(fresh_store);
