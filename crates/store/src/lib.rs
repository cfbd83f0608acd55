//! # mcp-tasks-store
//!
//! Where task records live. The engine talks to one object-safe trait, [`TaskStore`];
//! backends implement it side by side:
//!
//! | module | backend |
//! |---|---|
//! | [`memory`] | in-process maps; the reference backend, always built, lost on exit |
//! | `sqlite` (feature `sqlite`, default) | one SQLite file via sqlx: the embedded default |
//! | `postgres` (feature `postgres`) | PostgreSQL via sqlx: several replicas share one database |
//! | `suite` (feature `test-suite`) | the parity cases every backend must pass |
//! | `sql` | the store SQLite and PostgreSQL share, written once over a `Backend` seam: the trait impls, statements, the batching writers' common part, the read cache, value conversions |
//! | [`record`] | the task record ([`TaskRecord`]), its [`TimelineEntry`]s, and the parameter structs of store calls |
//! | [`delivery`] | the durable outbox of webhook deliveries: [`DeliveryOutbox`] ([`NewDelivery`], [`Delivery`], [`DeliveryResult`]) |
//! | [`session`] | 2025-11-25 sessions that replicas share: [`SessionStore`] ([`SessionRecord`]) |
//! | [`change`] | the change feed several processes use to hear of each other's writes |
//! | [`runner`] | runner liveness: one heartbeat row per process ([`RunnerRecord`]) |
//! | [`error`] | [`StoreError`] |
//! | `explain` | why a compare-and-set did not apply, told from the record as it is now |
//! | [`observed`] | [`ObservedStore`]: any store, timed and traced per operation (metrics, OTLP spans) |
//!
//! Records hold JSON blobs (request params, result) but the store knows nothing of
//! JSON-RPC. Every status change is one atomic compare-and-set ([`TaskStore::transition`]),
//! so a cancel racing a completion has exactly one winner on any backend.
//!
//! For several processes sharing one database the trait also carries **leases** (a
//! running task is held by one runner until an expiry, with a generation that fences
//! stale writers: [`TaskStore::claim_lease`], [`TaskStore::renew_lease`],
//! [`TaskStore::claim_expired_leases`], [`TransitionParams::expected_lease_generation`])
//! and a **change feed** ([`TaskStore::subscribe_changes`], [`change`]). Their default
//! implementations describe a single process, where the process itself is every lease
//! and there is nobody else to hear from.
//!
//! For operators it keeps, on every backend, the **timeline** of each task (every
//! status it entered, written in the same atomic step as the change:
//! [`TaskStore::timeline`]) and a **board** listing across owners with filters
//! ([`TaskStore::query_tasks`]).
//!
//! What only some callers need is a trait of its own, reached through an accessor that
//! answers `None` by default, so a custom store implements [`TaskStore`] alone:
//!
//! | trait | accessor | who needs it | built-in backends |
//! |---|---|---|---|
//! | [`DeliveryOutbox`] | [`TaskStore::outbox`] | the board's webhooks: an outbox several processes share without sending an event twice | memory, SQLite, PostgreSQL |
//! | [`SessionStore`] | [`TaskStore::sessions`] | the 2025-11-25 HTTP transport, so that any replica serves a session another opened | PostgreSQL (the others serve one process, whose memory holds its sessions) |
#![deny(missing_docs)]

pub mod change;
pub mod delivery;
pub mod error;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod explain;
pub mod journal;
pub mod memory;
pub mod observed;
pub mod pending;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod record;
pub mod request;
pub mod runner;
pub mod session;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(feature = "test-suite")]
pub mod suite;
mod task_store;
#[cfg(test)]
mod trait_check;

pub use change::{Change, ChangeFeed, ChangeMark, ChangeMarks};
pub use delivery::{ClaimDeliveriesParams, Delivery, DeliveryOutbox, DeliveryResult, NewDelivery};
pub use error::StoreError;
pub use journal::{JournalEntry, RecordStep, Recorded, StepJournal};
pub use memory::MemoryStore;
pub use observed::{ObservedStore, ObserverSlot, StoreObserver};
pub use pending::PendingCreate;
#[cfg(feature = "postgres")]
pub use postgres::PgStore;
pub use record::{
    Answerer, Assignment, ClaimExpiredParams, ClaimLeaseParams, DeadlineOutcome, ExpiredTask,
    Failure, FieldChange, InputRequest, InputRequests, ListPage, ListParams, Outcome,
    QuestionDeadline, RenewLeaseParams, SettleExpiredParams, StoredJob, TaskQuery, TaskRecord,
    TimelineEntry, TransitionParams,
};
pub use request::RequestJson;
pub use runner::{ReleaseLeasesParams, RunnerRecord};
pub use session::{SessionRecord, SessionStore};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use task_store::TaskStore;

use std::sync::Arc;

/// The `tracing` target of the spans meant for export (OTLP): MCP requests, task
/// executions, store operations, upstream calls. A subscriber that exports traces
/// enables this target and nothing else; the stderr log leaves it out, so these spans
/// add no noise to log lines.
pub const TRACE_TARGET: &str = "mcp_tasks::otel";

/// Opens a store from a URL: `memory:`, `sqlite://path` (`sqlite::memory:` too), or
/// with the `postgres` feature `postgres://...` / `postgresql://...`.
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
    #[cfg(feature = "postgres")]
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(Arc::new(PgStore::open(url).await?));
    }
    let postgres = if cfg!(feature = "postgres") {
        ", 'postgres://USER@HOST/DATABASE'"
    } else {
        ""
    };
    Err(StoreError::InvalidUrl(format!(
        "'{}' is not a supported database URL: use 'memory:', 'sqlite://PATH' (for example sqlite://./mcp-tasks.db){postgres}",
        mcp_tasks_protocol::secret::redact_url(url)
    )))
}
