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
//! The cache keeps at most [`CAPACITY`] records (an arbitrary one leaves when a shard is
//! full).

use super::row::classify;
use crate::error::StoreError;
use crate::record::TaskRecord;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use sqlx::{PgPool, Row};
use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex};

/// The most records cached by one store.
const CAPACITY: usize = 1 << 16;

/// Shards of the cache, each behind its own lock.
const SHARDS: usize = 32;

/// What a cached record is checked against: the columns every change moves, of the
/// row a full read would return. $1 id, $2 now.
const VALIDATE: &str = "SELECT version, lease_generation, lease_until, runner FROM tasks \
     WHERE id = $1 AND (expires_at IS NULL OR expires_at > $2)";

/// The records read last, by id. Cloned with the store.
#[derive(Debug, Clone)]
pub(super) struct Reads {
    shards: Arc<[Mutex<HashMap<TaskId, TaskRecord>>]>,
    hasher: RandomState,
}

impl Default for Reads {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::new(),
        }
    }
}

impl Reads {
    fn shard(&self, id: &TaskId) -> &Mutex<HashMap<TaskId, TaskRecord>> {
        let index = self.hasher.hash_one(id) as usize % SHARDS;
        &self.shards[index]
    }

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
        let shard = self.shard(id);
        let cached = shard
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned();
        if let Some(cached) = cached {
            let row = sqlx::query(VALIDATE)
                .bind(id.as_str())
                .bind(now)
                .fetch_optional(pool)
                .await
                .map_err(classify)?;
            let Some(row) = row else {
                shard.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
                return Ok(None);
            };
            if matches(&row, &cached).map_err(classify)? {
                return Ok(Some(cached));
            }
        }
        let record = read.await?;
        let mut cached = shard.lock().unwrap_or_else(|p| p.into_inner());
        match &record {
            Some(record) => {
                if cached.len() >= CAPACITY / SHARDS && !cached.contains_key(id) {
                    let evicted = cached.keys().next().cloned();
                    if let Some(evicted) = evicted {
                        cached.remove(&evicted);
                    }
                }
                cached.insert(id.clone(), record.clone());
            }
            None => {
                cached.remove(id);
            }
        }
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
