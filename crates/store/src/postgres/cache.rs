//! Reads of a task that skip its JSON columns and their decoding when nothing changed.
//!
//! Replicas may run on other hosts, so nothing in memory can tell one that another
//! changed a task, and the change feed arrives after the commit (a read in between
//! would be stale). So a cached record is validated by a round trip that returns only
//! what every change of a row moves: its version (every change a client sees), its
//! lease generation (every takeover), its lease's end (every renewal, release and
//! cut) and its runner, under the same visibility condition as a full read. When they match the row
//! is the cached record and it is served; otherwise the row is read whole and cached.
//! A read is therefore never older than what was committed when its validation ran.
//!
//! The records are kept in a [`ShardedCache`] (bounded; a record is cloned out).

use super::row::classify;
use crate::error::StoreError;
use crate::record::TaskRecord;
use crate::sql::cache::ShardedCache;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use sqlx::{PgPool, Row};
use std::future::Future;

/// What a cached record is checked against: the columns every change moves, of the
/// row a full read would return. $1 id, $2 now.
const VALIDATE: &str = "SELECT version, lease_generation, lease_until, runner FROM tasks \
     WHERE id = $1 AND (expires_at IS NULL OR expires_at > $2)";

/// The records read last, by id. Cloned with the store.
#[derive(Debug, Clone, Default)]
pub(super) struct Reads {
    cache: ShardedCache<TaskRecord>,
}

impl Reads {
    /// The visible record of `id` at `now`: the cached one when the row still matches
    /// it, otherwise read by `read` (and cached).
    pub(super) async fn get<F>(
        &self,
        pool: &PgPool,
        id: &TaskId,
        now: DateTime<Utc>,
        read: F,
    ) -> Result<Option<TaskRecord>, StoreError>
    where
        F: Future<Output = Result<Option<TaskRecord>, StoreError>>,
    {
        if let Some(cached) = self.cache.get_if(id, None, |_| true) {
            let row = sqlx::query(VALIDATE)
                .bind(id.as_str())
                .bind(now)
                .fetch_optional(pool)
                .await
                .map_err(classify)?;
            let Some(row) = row else {
                self.cache.keep(id, None, None);
                return Ok(None);
            };
            if matches(&row, &cached).map_err(classify)? {
                return Ok(Some(cached));
            }
        }
        let record = read.await?;
        self.cache.keep(id, None, record.clone());
        Ok(record)
    }
}

/// Whether the row of [`VALIDATE`] is the cached record's.
fn matches(row: &sqlx::postgres::PgRow, cached: &TaskRecord) -> Result<bool, sqlx::Error> {
    let version: i64 = row.try_get("version")?;
    let generation: i64 = row.try_get("lease_generation")?;
    let lease_until: Option<DateTime<Utc>> = row.try_get("lease_until")?;
    let runner: Option<&str> = row.try_get("runner")?;
    Ok(u64::try_from(version).ok() == Some(cached.version)
        && u64::try_from(generation).ok() == Some(cached.lease_generation)
        && lease_until == cached.lease_until
        && runner == cached.runner.as_deref())
}
