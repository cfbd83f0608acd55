//! 2025-11-25 sessions (`Mcp-Session-Id`) kept in a database several replicas share:
//! [`SessionStore`] and the [`SessionRecord`] it keeps.
//!
//! Who uses it: the server's 2025-11-25 Streamable HTTP transport, through the engine's
//! session pass-throughs (`Engine::save_session`, `load_session`, `delete_session`,
//! `sweep_sessions`). A replica that receives a request for a session it did not open
//! loads it from here; each replica marks the sessions it still holds, and any replica
//! deletes those nobody kept.
//!
//! Why a trait of its own, reached through [`TaskStore::sessions`]: only a store that
//! several replicas share has anything to keep. A store private to one process (the
//! in-memory one, a SQLite file, most custom stores) keeps sessions in the server's
//! memory only and answers `None`; the engine then treats a save, a keep or a delete as
//! done and a load as "no such session", so a store for tasks implements none of this.
//!
//! [`TaskStore::sessions`]: crate::TaskStore::sessions

use crate::error::StoreError;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// A 2025-11-25 session (`Mcp-Session-Id`), kept in a shared database so that any
/// replica can serve it: who owns it and what was negotiated. Its open streams belong to
/// one replica and are not stored.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    /// The session id.
    pub id: String,
    /// Who owns the tasks created in it.
    pub principal: String,
    /// Whether the principal is an authenticated subject.
    pub authenticated: bool,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// The capabilities the client declared.
    pub client_capabilities: Value,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
}

/// Sessions shared by the replicas of one database (see the [module](self) for who
/// calls it and why). Each method is atomic on its own.
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Stores a session so that other replicas can serve it (upsert).
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn save_session(&self, session: &SessionRecord) -> Result<(), StoreError>;

    /// Reads a session another replica opened; `None` when none has that id.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn load_session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError>;

    /// Forgets a session (the client ended it).
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn delete_session(&self, id: &str) -> Result<(), StoreError>;

    /// Records that the sessions `ids` are still in use at `now` (a replica holding
    /// them saw their clients active or their streams open), so that
    /// [`SessionStore::delete_idle_sessions`] on any replica leaves them alone. Called
    /// in batches, a few times per idle timeout, not on every request. Ids never stored
    /// are ignored, and a keep never moves a session's last use backwards.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn keep_sessions(&self, ids: &[String], now: DateTime<Utc>) -> Result<(), StoreError>;

    /// Deletes the stored sessions last in use (stored or kept) at or before `cutoff`,
    /// returning how many: clients that left without `DELETE`.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn delete_idle_sessions(&self, cutoff: DateTime<Utc>) -> Result<u64, StoreError>;
}
