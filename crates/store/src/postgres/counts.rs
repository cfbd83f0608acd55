//! `count_by_status` for PostgreSQL: one grouped count over the covering index
//! `tasks_status_expires` (migration 0007), never over the records themselves.

use super::row::classify;
use crate::error::StoreError;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskStatus;
use sqlx::PgPool;

/// $1 now. Expired records the sweeper has not deleted yet are not
/// counted: clients cannot see them either.
pub(super) const COUNT_BY_STATUS: &str = "SELECT status, COUNT(*) FROM tasks \
     WHERE expires_at IS NULL OR expires_at > $1 GROUP BY status";

/// Visible tasks per status.
pub(super) async fn count_by_status(
    pool: &PgPool,
    now: DateTime<Utc>,
) -> Result<Vec<(TaskStatus, u64)>, StoreError> {
    let rows: Vec<(String, i64)> = sqlx::query_as(COUNT_BY_STATUS)
        .bind(now)
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
