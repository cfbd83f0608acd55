//! # mcp-tasks-store
//!
//! Where task records live. The engine talks to one object-safe trait, [`TaskStore`];
//! backends implement it side by side:
//!
//! | module | backend |
//! |---|---|
//! | [`memory`] | in-process maps; the reference backend, always built, lost on exit |
//! | `sqlite` (feature `sqlite`, default) | one SQLite file via sqlx: the embedded default |
//! | `suite` (feature `test-suite`) | the parity cases every backend must pass |
//!
//! Records hold JSON blobs (request params, result) but the store knows nothing of
//! JSON-RPC. Every status change is one atomic compare-and-set ([`TaskStore::transition`]),
//! so a cancel racing a completion has exactly one winner on any backend.

pub mod error;
pub mod memory;
pub mod record;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(feature = "test-suite")]
pub mod suite;

pub use error::StoreError;
pub use memory::MemoryStore;
pub use record::{
    InputRequest, InputRequests, ListPage, ListParams, Outcome, TaskRecord, TransitionParams,
};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use std::sync::Arc;

/// The storage seam under the engine. Object safe, so a server holds an
/// `Arc<dyn TaskStore>` chosen at start-up (by URL or passed in by an embedder).
///
/// Implementations must make each method atomic on its own: the engine never does a
/// read-modify-write across two calls.
#[async_trait]
pub trait TaskStore: Send + Sync + std::fmt::Debug {
    /// Inserts a new record. Returns only once the record is durable for durable
    /// backends, because a client may be told about the task right after.
    ///
    /// # Errors
    /// [`StoreError::Duplicate`] if the id exists; [`StoreError::Backend`] on I/O failure.
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError>;

    /// Reads a record by id. Expired records (`expires_at <= now`) are reported as
    /// absent even before the sweeper deletes them.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn get(&self, id: &TaskId, now: DateTime<Utc>) -> Result<Option<TaskRecord>, StoreError>;

    /// Lists records of one owner (and optionally one session), oldest first, by keyset
    /// pagination on `(created_at, id)`, skipping expired ones.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn list(&self, params: &ListParams) -> Result<ListPage, StoreError>;

    /// Applies one change to a non-terminal record atomically: new status, status
    /// message, outcome. Fails with [`StoreError::Conflict`] (carrying the current
    /// record) when the record is already terminal or its version differs from
    /// `expected_version` (when given). Returns the updated record, version bumped.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::Conflict`], [`StoreError::Backend`].
    async fn transition(&self, params: &TransitionParams) -> Result<TaskRecord, StoreError>;

    /// Deletes up to `limit` records whose `expires_at <= now`, returning their ids.
    /// Costs O(expired) thanks to an index on `expires_at`, never a scan of all tasks.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError>;

    /// Moves every non-terminal record whose `runner` is not `current_runner` to
    /// `failed` with `status_message` and `error`, returning how many. Called at start-up
    /// so that no task is left `working` after the process that ran it died.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError>;

    /// Whether this backend pushes change notifications across processes (PostgreSQL
    /// LISTEN/NOTIFY). When false the engine relies on its own in-process events.
    fn supports_notify(&self) -> bool {
        false
    }
}

/// Opens a store from a URL: `memory:` or `sqlite://path` (`sqlite::memory:` too).
///
/// # Errors
/// [`StoreError::InvalidUrl`] for an unknown scheme; backend errors when opening fails.
pub async fn open(url: &str) -> Result<Arc<dyn TaskStore>, StoreError> {
    if url == "memory:" || url == "memory://" {
        return Ok(Arc::new(MemoryStore::new()));
    }
    #[cfg(feature = "sqlite")]
    if url.starts_with("sqlite:") {
        return Ok(Arc::new(SqliteStore::open(url).await?));
    }
    Err(StoreError::InvalidUrl(format!(
        "'{url}' is not a supported database URL: use 'memory:' or 'sqlite://PATH' (for example sqlite://./mcp-tasks.db)"
    )))
}
