//! `count_by_status` for SQLite: one grouped count over the covering index
//! `tasks_status_expires` (migration 0005), never over the records themselves.

use super::row::classify;
use crate::error::StoreError;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskStatus;
use sqlx::SqlitePool;

/// ?1 now (milliseconds). Expired records the sweeper has not deleted yet are not
/// counted: clients cannot see them either.
pub(super) const COUNT_BY_STATUS: &str = "SELECT status, COUNT(*) FROM tasks \
     INDEXED BY tasks_status_expires \
     WHERE expires_at IS NULL OR expires_at > ?1 GROUP BY status";

/// Visible tasks per status.
pub(super) async fn count_by_status(
    pool: &SqlitePool,
    now: DateTime<Utc>,
) -> Result<Vec<(TaskStatus, u64)>, StoreError> {
    let rows: Vec<(String, i64)> = sqlx::query_as(COUNT_BY_STATUS)
        .bind(now.timestamp_millis())
        .fetch_all(pool)
        .await
        .map_err(classify)?;
    rows.into_iter()
        .map(|(status, n)| {
            let status = status.parse::<TaskStatus>().map_err(|_| {
                StoreError::Backend(
                    format!("unknown task status '{status}' in the database").into(),
                )
            })?;
            Ok((status, u64::try_from(n).unwrap_or(0)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::SqliteStore;
    use sqlx::Row;

    /// The count reads only the index: the records, with their JSON, stay on disk.
    #[tokio::test]
    async fn the_count_reads_the_covering_index_only() {
        let store = SqliteStore::open("sqlite::memory:").await.unwrap();
        let plan: Vec<String> = sqlx::query(&format!("EXPLAIN QUERY PLAN {COUNT_BY_STATUS}"))
            .bind(1_i64)
            .fetch_all(store.pool())
            .await
            .unwrap()
            .iter()
            .map(|row| row.get::<String, _>("detail"))
            .collect();
        assert!(
            plan.iter()
                .any(|l| l.contains("COVERING INDEX tasks_status_expires")),
            "{plan:#?}"
        );
    }
}
