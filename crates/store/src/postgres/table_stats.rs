//! [`table_stats`]: what PostgreSQL says about the store's tables (dead and live tuples,
//! autovacuum, sizes), for soak runs and operators who watch a long-lived database.
//! It reads only the statistics views and size functions: no table is scanned.

use super::row::classify;
use crate::error::StoreError;
use chrono::{DateTime, Utc};
use sqlx::postgres::PgConnection;
use sqlx::{Connection, Row};

/// One table of the store's schema, as PostgreSQL's statistics see it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TableStats {
    /// The table's name (in the connection's current schema).
    pub table: String,
    /// Live rows (`pg_stat_user_tables.n_live_tup`, an estimate).
    pub live_tuples: i64,
    /// Dead rows not yet vacuumed (`n_dead_tup`): what updates and deletes left behind.
    pub dead_tuples: i64,
    /// Rows inserted, updated and deleted since the statistics were reset.
    pub inserted: i64,
    /// Rows updated (`n_tup_upd`, HOT updates included).
    pub updated: i64,
    /// Rows deleted (`n_tup_del`).
    pub deleted: i64,
    /// Times autovacuum vacuumed the table (`autovacuum_count`).
    pub autovacuum_count: i64,
    /// Its last autovacuum, if any.
    pub last_autovacuum: Option<DateTime<Utc>>,
    /// Bytes of the table's main fork (`pg_relation_size`).
    pub table_bytes: i64,
    /// Bytes of its indexes (`pg_indexes_size`).
    pub index_bytes: i64,
    /// Bytes of everything: table, indexes, TOAST (`pg_total_relation_size`).
    pub total_bytes: i64,
}

/// The statistics of every table in the URL's current schema (where the store keeps its
/// tables; `?options=-c%20search_path%3D…` picks another), sorted by name, sqlx's
/// migration table left out. Opens one connection of its own with the URL's TLS
/// settings, as [`PgStore::open`](super::PgStore::open) does, and closes it.
///
/// The counters lag their writers: each PostgreSQL backend flushes its own at most
/// once a second, and a busy one whose flush meets a lock (many backends writing one
/// table) puts it off, for up to a minute on PostgreSQL 15. A backend that exits
/// flushes at once. The sizes are current.
///
/// # Errors
/// [`StoreError::InvalidUrl`] for a URL that is not a usable PostgreSQL URL,
/// [`StoreError::Unavailable`] when the server cannot be reached, and
/// [`StoreError::Backend`] when a query fails.
pub async fn table_stats(url: &str) -> Result<Vec<TableStats>, StoreError> {
    let mut conn = connect(url).await?;
    let rows = sqlx::query(
        "SELECT relname::text AS table_name, n_live_tup, n_dead_tup, n_tup_ins, n_tup_upd, \
         n_tup_del, autovacuum_count, last_autovacuum, \
         pg_relation_size(relid) AS table_bytes, pg_indexes_size(relid) AS index_bytes, \
         pg_total_relation_size(relid) AS total_bytes \
         FROM pg_stat_user_tables \
         WHERE schemaname = current_schema() AND relname <> '_sqlx_migrations' \
         ORDER BY relname",
    )
    .fetch_all(&mut conn)
    .await
    .map_err(classify)?;
    let _ = conn.close().await;
    rows.iter()
        .map(|r| {
            Ok(TableStats {
                table: r.try_get("table_name")?,
                live_tuples: r.try_get("n_live_tup")?,
                dead_tuples: r.try_get("n_dead_tup")?,
                inserted: r.try_get("n_tup_ins")?,
                updated: r.try_get("n_tup_upd")?,
                deleted: r.try_get("n_tup_del")?,
                autovacuum_count: r.try_get("autovacuum_count")?,
                last_autovacuum: r.try_get("last_autovacuum")?,
                table_bytes: r.try_get("table_bytes")?,
                index_bytes: r.try_get("index_bytes")?,
                total_bytes: r.try_get("total_bytes")?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()
        .map_err(classify)
}

/// One connection to `url` with its TLS settings, as [`PgStore::open`](super::PgStore::open)
/// makes them.
async fn connect(url: &str) -> Result<PgConnection, StoreError> {
    let options = super::connect::options(url).await?;
    PgConnection::connect_with(&options).await.map_err(classify)
}

/// The process id of the server's checkpointer, a background process that lives as
/// long as the server and whose parent is the server's main process: from it, a
/// benchmark on the same machine finds every process of the server and counts the CPU
/// the database spends (the bench's `srv CPU/op + PostgreSQL's`). `None` when the
/// server does not show it (a managed service hiding its processes).
///
/// # Errors
/// As [`table_stats`].
pub async fn checkpointer_pid(url: &str) -> Result<Option<u32>, StoreError> {
    let mut conn = connect(url).await?;
    let pid: Option<i32> = sqlx::query_scalar(
        "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer' LIMIT 1",
    )
    .fetch_optional(&mut conn)
    .await
    .map_err(classify)?;
    let _ = conn.close().await;
    Ok(pid.and_then(|p| u32::try_from(p).ok()))
}
