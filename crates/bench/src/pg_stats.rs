//! What PostgreSQL itself says about a database under measurement: the soak's table
//! statistics ([`table_stats`]: dead and live tuples, autovacuum, sizes) and the
//! checkpointer's pid ([`checkpointer_pid`], from which the figures count the
//! database's CPU apart from the server's); and the empty schemas `bench replicas`
//! gives each of its runs ([`create_schema`], [`drop_schema`]).
//!
//! These are the bench's own admin queries, not the store's: they read only
//! PostgreSQL's statistics views and size functions (no table of the store is scanned,
//! no store type is needed), they must still work after the server under measurement
//! has stopped (the soak's end waits for the counters its backends flush as they
//! exit), and the checkpointer is looked up for comparison servers (turul) too. One
//! connection of their own each, with the URL's TLS settings as sqlx reads them
//! (`sslmode`, `sslrootcert`, …); the server the bench started has already checked
//! that URL.

use chrono::{DateTime, Utc};
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{Connection, Row};
use std::str::FromStr;

use crate::error::BenchError;

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
/// migration table left out.
///
/// The counters lag their writers: each PostgreSQL backend flushes its own at most
/// once a second, and a busy one whose flush meets a lock (many backends writing one
/// table) puts it off, for up to a minute on PostgreSQL 15. A backend that exits
/// flushes at once. The sizes are current.
///
/// # Errors
/// [`BenchError::Server`] naming what failed: a URL sqlx cannot read, a server that
/// cannot be reached, or a query that fails.
pub async fn table_stats(url: &str) -> Result<Vec<TableStats>, BenchError> {
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
    .map_err(|e| failed("reading pg_stat_user_tables", &e))?;
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
        .map_err(|e| failed("decoding pg_stat_user_tables", &e))
}

/// The process id of the server's checkpointer, a background process that lives as
/// long as the server and whose parent is the server's main process: from it, a
/// benchmark on the same machine finds every process of the server and counts the CPU
/// the database spends (the bench's `srv CPU/op + PostgreSQL's`). `None` when the
/// server does not show it (a managed service hiding its processes).
///
/// # Errors
/// As [`table_stats`].
pub async fn checkpointer_pid(url: &str) -> Result<Option<u32>, BenchError> {
    let mut conn = connect(url).await?;
    let pid: Option<i32> = sqlx::query_scalar(
        "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer' LIMIT 1",
    )
    .fetch_optional(&mut conn)
    .await
    .map_err(|e| failed("reading pg_stat_activity", &e))?;
    let _ = conn.close().await;
    Ok(pid.and_then(|p| u32::try_from(p).ok()))
}

/// Creates the empty schema `name` (letters, digits and `_` only: it is not quoted) in
/// `url`'s database, for a run of its own: replicas started on
/// [`with_search_path`]`(url, name)` keep their tables there.
///
/// # Errors
/// [`BenchError::Usage`] for another name; otherwise as [`table_stats`] (a role
/// without the `CREATE` privilege on the database fails here).
pub async fn create_schema(url: &str, name: &str) -> Result<(), BenchError> {
    check_schema_name(name)?;
    let mut conn = connect(url).await?;
    sqlx::query(&format!("CREATE SCHEMA {name}"))
        .execute(&mut conn)
        .await
        .map_err(|e| failed(&format!("creating schema {name}"), &e))?;
    let _ = conn.close().await;
    Ok(())
}

/// Drops the schema `name` and everything in it, if it exists.
///
/// # Errors
/// As [`create_schema`].
pub async fn drop_schema(url: &str, name: &str) -> Result<(), BenchError> {
    check_schema_name(name)?;
    let mut conn = connect(url).await?;
    sqlx::query(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
        .execute(&mut conn)
        .await
        .map_err(|e| failed(&format!("dropping schema {name}"), &e))?;
    let _ = conn.close().await;
    Ok(())
}

/// `url` with `search_path` set to `schema` for every connection made with it: the
/// `-c search_path=…` startup option, added to the URL's `options` parameter (after
/// what it already holds: the last setting wins) or as a new one.
pub fn with_search_path(url: &str, schema: &str) -> String {
    let setting = format!("-c%20search_path%3D{schema}");
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, q),
        None => (url, ""),
    };
    let mut found = false;
    let mut params: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.strip_prefix("options=") {
            Some(v) if !found => {
                found = true;
                format!("options={v}%20{setting}")
            }
            _ => p.to_string(),
        })
        .collect();
    if !found {
        params.push(format!("options={setting}"));
    }
    format!("{base}?{}", params.join("&"))
}

/// A schema name the bench may use unquoted.
fn check_schema_name(name: &str) -> Result<(), BenchError> {
    let ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(BenchError::Usage(format!(
            "'{name}' is not a schema name the bench can use (lowercase letters, digits, _)"
        )))
    }
}

/// One connection to `url`, TLS as its parameters ask. The URL itself is never part of
/// an error (it may hold a password).
async fn connect(url: &str) -> Result<PgConnection, BenchError> {
    let options = PgConnectOptions::from_str(url).map_err(|e| {
        BenchError::Usage(format!(
            "the PostgreSQL URL does not parse ({e}): use postgres://USER:PASSWORD@HOST:PORT/DATABASE"
        ))
    })?;
    PgConnection::connect_with(&options)
        .await
        .map_err(|e| failed("connecting to PostgreSQL", &e))
}

/// A query or connection failure, saying what was being done.
fn failed(doing: &str, e: &sqlx::Error) -> BenchError {
    BenchError::Server(format!("{doing}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_path_joins_the_options_or_adds_them() {
        assert_eq!(
            with_search_path("postgres://u@h:5432/db", "s1"),
            "postgres://u@h:5432/db?options=-c%20search_path%3Ds1"
        );
        assert_eq!(
            with_search_path("postgres://u@h/db?sslmode=disable", "s1"),
            "postgres://u@h/db?sslmode=disable&options=-c%20search_path%3Ds1"
        );
        assert_eq!(
            with_search_path("postgres://u@h/db?options=-c%20search_path%3Dt&x=1", "s1"),
            "postgres://u@h/db?options=-c%20search_path%3Dt%20-c%20search_path%3Ds1&x=1"
        );
    }

    #[test]
    fn schema_names_are_plain_identifiers() {
        assert!(check_schema_name("mcp_tasks_replicas_1_2").is_ok());
        assert!(check_schema_name("Bad").is_err());
        assert!(check_schema_name("x; DROP").is_err());
        assert!(check_schema_name("1x").is_err());
        assert!(check_schema_name("").is_err());
    }
}
