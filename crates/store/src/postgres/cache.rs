//! Reads of a task that skip its JSON columns and their decoding when nothing changed.
//!
//! Replicas may run on other hosts, so nothing in memory can tell one that another
//! changed a task, and the change feed arrives after the commit (a read in between
//! would be stale). So a cached record is validated by a round trip that returns only
//! what every change of a row moves: its version (every change a client sees), its
//! lease generation (every takeover), its lease's end (every renewal, release and
//! cut) and its runner, with its expiry, which decides visibility as a full read's
//! does. When they match the row is the cached record and it is served; otherwise the
//! row is read whole and cached.
//!
//! Both round trips are batched (`reader.rs`): the checks of concurrent gets share one
//! statement, and so do their whole reads. A batch's statement starts after every get
//! it answers began, so a read is never older than what was committed when it began.
//!
//! The records are kept in a [`ShardedCache`] (bounded; a record is cloned out).

use super::queries::{CHECK_MANY, READ_MANY};
use super::reader::{visible, Batch, Reader};
use super::row::classify;
use crate::error::StoreError;
use crate::observed::ObserverSlot;
use crate::record::TaskRecord;
use crate::sql::cache::ShardedCache;
use crate::sql::values::row_to_record;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use sqlx::{PgPool, Row};
use std::collections::HashMap;

/// The records read last, by id, and the readers that check and read them. Cloned
/// with the store.
#[derive(Debug, Clone)]
pub(super) struct Reads {
    cache: ShardedCache<TaskRecord>,
    checks: Reader<Checks>,
    rows: Reader<Rows>,
}

impl Reads {
    /// An empty cache over `pool`; batch sizes go to the observer in `observer`.
    pub(super) fn new(pool: &PgPool, observer: &ObserverSlot) -> Self {
        Self {
            cache: ShardedCache::default(),
            checks: Reader::new(pool.clone(), ObserverSlot::clone(observer)),
            rows: Reader::new(pool.clone(), ObserverSlot::clone(observer)),
        }
    }

    /// The visible record of `id` at `now`: the cached one when the row still matches
    /// it, otherwise the row read whole (and cached).
    pub(super) async fn get(
        &self,
        id: &TaskId,
        now: DateTime<Utc>,
    ) -> Result<Option<TaskRecord>, StoreError> {
        if let Some(cached) = self.cache.get_if(id, None, |_| true) {
            match self.checks.read(id).await? {
                Some(stamp) if visible(stamp.expires_at, now) => {
                    if stamp.matches(&cached) {
                        return Ok(Some(cached));
                    }
                }
                _ => {
                    self.cache.keep(id, None, None);
                    return Ok(None);
                }
            }
        }
        let record = self
            .rows
            .read(id)
            .await?
            .filter(|record| visible(record.expires_at, now));
        self.cache.keep(id, None, record.clone());
        Ok(record)
    }
}

/// What a check reads of a row: the columns every change moves, and its expiry.
#[derive(Debug, Clone)]
pub(super) struct Stamp {
    version: i64,
    lease_generation: i64,
    lease_until: Option<DateTime<Utc>>,
    runner: Option<String>,
    expires_at: Option<DateTime<Utc>>,
}

impl Stamp {
    /// Whether the row is the cached record's.
    fn matches(&self, cached: &TaskRecord) -> bool {
        u64::try_from(self.version).ok() == Some(cached.version)
            && u64::try_from(self.lease_generation).ok() == Some(cached.lease_generation)
            && self.lease_until == cached.lease_until
            && self.runner.as_deref() == cached.runner.as_deref()
    }
}

/// The batched checks of cached records ([`CHECK_MANY`]).
#[derive(Debug)]
pub(super) struct Checks;

impl Batch for Checks {
    type Row = Stamp;

    const KIND: &'static str = "check";

    async fn fetch(pool: &PgPool, ids: Vec<&str>) -> Result<HashMap<String, Stamp>, StoreError> {
        let rows = sqlx::query(CHECK_MANY)
            .bind(ids)
            .fetch_all(pool)
            .await
            .map_err(classify)?;
        let mut stamps = HashMap::with_capacity(rows.len());
        for row in rows {
            let stamp = Stamp {
                version: row.try_get("version").map_err(classify)?,
                lease_generation: row.try_get("lease_generation").map_err(classify)?,
                lease_until: row.try_get("lease_until").map_err(classify)?,
                runner: row.try_get("runner").map_err(classify)?,
                expires_at: row.try_get("expires_at").map_err(classify)?,
            };
            stamps.insert(row.try_get("id").map_err(classify)?, stamp);
        }
        Ok(stamps)
    }
}

/// The batched whole reads ([`READ_MANY`]).
#[derive(Debug)]
pub(super) struct Rows;

impl Batch for Rows {
    type Row = TaskRecord;

    const KIND: &'static str = "read";

    async fn fetch(
        pool: &PgPool,
        ids: Vec<&str>,
    ) -> Result<HashMap<String, TaskRecord>, StoreError> {
        let rows = sqlx::query(READ_MANY)
            .bind(ids)
            .fetch_all(pool)
            .await
            .map_err(classify)?;
        let mut records = HashMap::with_capacity(rows.len());
        for row in &rows {
            let record = row_to_record(row)?;
            records.insert(record.id.as_str().to_string(), record);
        }
        Ok(records)
    }
}
