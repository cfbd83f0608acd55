//! The [`crate::TaskStore`] methods both SQL backends run the same way: the values a
//! statement takes, and what its rows (or the lack of one) mean.

use super::rows::Columns;
use super::values::{
    counter_to_db, duration_to_ms, external_to_db, row_to_count, row_to_expired, row_to_record,
    row_to_timeline_entry, to_json,
};
use super::{Backend, Call, Statements};
use crate::error::StoreError;
use crate::explain;
use crate::record::{
    ClaimExpiredParams, ClaimLeaseParams, ExpiredTask, ListPage, ListParams, Outcome,
    RenewLeaseParams, SettleExpiredParams, TaskQuery, TaskRecord, TimelineEntry, TransitionParams,
};
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::time::Duration;

/// The compare-and-set of a transition, every value converted; its row is the record
/// after, none when nothing changed.
pub(crate) fn transition_call<'a>(
    statements: &'static Statements,
    params: &'a TransitionParams,
) -> Result<Call<'a>, StoreError> {
    let expected = params
        .expected_version
        .map(|v| counter_to_db("version", v))
        .transpose()?;
    let fence = params
        .expected_lease_generation
        .map(|g| counter_to_db("lease generation", g))
        .transpose()?;
    let (sets_external, external) = external_to_db(&params.external)?;
    Ok(Call::new(&statements.transition)
        .bind(params.id.as_str())
        .bind(params.status.as_str())
        .bind(!params.status_message.is_keep())
        .bind(params.status_message.new_value().map(String::as_str))
        .bind(params.outcome.as_ref().map(to_json).transpose()?)
        .bind(params.now)
        .bind(expected)
        .bind(fence)
        .bind(params.input_requests.as_ref().map(to_json).transpose()?)
        .bind(sets_external)
        .bind(external))
}

/// The insert of `record`, every value converted. Fails before touching the database
/// when a value cannot be stored.
pub(crate) fn insert<'a>(
    statements: &'static Statements,
    record: &'a TaskRecord,
) -> Result<Call<'a>, StoreError> {
    let ms = |d: Option<Duration>| d.map(duration_to_ms).transpose();
    Ok(Call::new(&statements.create)
        .bind(record.id.as_str())
        .bind(record.owner.as_str())
        .bind(record.session.as_deref())
        .bind(record.status.as_str())
        .bind(record.status_message.as_deref())
        .bind(record.created_at)
        .bind(record.last_updated_at)
        .bind(ms(record.ttl)?)
        .bind(record.expires_at)
        .bind(ms(record.poll_interval)?)
        .bind(record.method.as_str())
        .bind(record.request.as_str())
        .bind(record.outcome.as_ref().map(to_json).transpose()?)
        .bind(record.runner.as_deref())
        .bind(counter_to_db("version", record.version)?)
        .bind(record.lease_until)
        .bind(counter_to_db("lease generation", record.lease_generation)?)
        .bind(to_json(&record.input_requests)?)
        .bind(record.external.as_ref().map(to_json).transpose()?))
}

pub(crate) async fn get<B: Backend>(
    db: &B,
    id: &TaskId,
    now: DateTime<Utc>,
) -> Result<Option<TaskRecord>, StoreError> {
    let call = Call::new(&db.statements().get).bind(id.as_str()).bind(now);
    db.fetch_optional(call)
        .await?
        .map(|row| row_to_record(&row))
        .transpose()
}

pub(crate) async fn list<B: Backend>(db: &B, params: &ListParams) -> Result<ListPage, StoreError> {
    let statements = db.statements();
    // With no cursor, start before every possible key.
    let (after_at, after_id) = match &params.after {
        Some((at, id)) => (Some(*at), id.as_str()),
        None => (None, ""),
    };
    let fetch = i64::try_from(params.limit)
        .unwrap_or(i64::MAX)
        .saturating_add(1);
    let sql = match params.session {
        Some(_) => &statements.list_by_session,
        None => &statements.list_by_owner,
    };
    let mut call = Call::new(sql)
        .bind(params.owner.as_str())
        .bind(params.now)
        .bind(after_at)
        .bind(after_id)
        .bind(fetch);
    if let Some(session) = &params.session {
        call = call.bind(session.as_str());
    }
    let rows = db.fetch_all(call).await?;
    let has_more = rows.len() > params.limit;
    let records = rows
        .iter()
        .take(params.limit)
        .map(row_to_record)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ListPage { records, has_more })
}

pub(crate) async fn timeline<B: Backend>(
    db: &B,
    id: &TaskId,
) -> Result<Vec<TimelineEntry>, StoreError> {
    let call = Call::new(&db.statements().timeline).bind(id.as_str());
    let rows = db.fetch_all(call).await?;
    rows.iter().map(row_to_timeline_entry).collect()
}

pub(crate) async fn query_tasks<B: Backend>(
    db: &B,
    query: &TaskQuery,
) -> Result<ListPage, StoreError> {
    let statements = db.statements();
    // With no cursor, start after every possible key.
    let (before_at, before_id) = match &query.before {
        Some((at, id)) => (Some(*at), id.as_str()),
        None => (None, ""),
    };
    let fetch = i64::try_from(query.limit)
        .unwrap_or(i64::MAX)
        .saturating_add(1);
    let sql = match query.owner {
        Some(_) => &statements.board_by_owner,
        None => &statements.board_all,
    };
    let mut call = Call::new(sql)
        .bind(query.now)
        .bind(before_at)
        .bind(before_id)
        .bind(query.status.map(|s| s.as_str()))
        .bind(query.id_prefix.as_deref())
        .bind(query.request_name.as_deref())
        .bind(fetch);
    if let Some(owner) = &query.owner {
        call = call.bind(owner.as_str());
    }
    let rows = db.fetch_all(call).await?;
    let has_more = rows.len() > query.limit;
    let records = rows
        .iter()
        .take(query.limit)
        .map(row_to_record)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ListPage { records, has_more })
}

pub(crate) async fn count_tasks<B: Backend>(db: &B, query: &TaskQuery) -> Result<u64, StoreError> {
    let statements = db.statements();
    let sql = match (&query.owner, query.status) {
        (Some(_), Some(_)) => &statements.board_count_status_by_owner,
        (Some(_), None) => &statements.board_count_by_owner,
        (None, Some(_)) => &statements.board_count_status_all,
        (None, None) => &statements.board_count_all,
    };
    let mut call = Call::new(sql)
        .bind(query.now)
        .bind(query.status.map(|s| s.as_str()))
        .bind(query.id_prefix.as_deref())
        .bind(query.request_name.as_deref())
        .bind(i64::try_from(query.limit).unwrap_or(i64::MAX));
    if let Some(owner) = &query.owner {
        call = call.bind(owner.as_str());
    }
    match db.fetch_optional(call).await? {
        Some(row) => row_to_count(&row),
        None => Ok(0),
    }
}

pub(crate) async fn transition<B: Backend>(
    db: &B,
    params: &TransitionParams,
) -> Result<TaskRecord, StoreError> {
    let call = transition_call(db.statements(), params)?;
    if let Some(row) = db.fetch_optional(call).await? {
        return row_to_record(&row);
    }
    // Nothing changed: say why, from the record as it is now.
    let current = get(db, &params.id, params.now).await?;
    Err(explain::transition_failed(current, params))
}

pub(crate) async fn delete_expired<B: Backend>(
    db: &B,
    now: DateTime<Utc>,
    limit: usize,
) -> Result<Vec<ExpiredTask>, StoreError> {
    let call = Call::new(db.statements().delete_expired)
        .bind(now)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX));
    let rows = db.fetch_all(call).await?;
    rows.iter().map(row_to_expired).collect()
}

pub(crate) async fn settle_expired_waiting<B: Backend>(
    db: &B,
    params: &SettleExpiredParams,
) -> Result<Vec<TaskId>, StoreError> {
    let call = Call::new(db.statements().settle_expired_waiting)
        .bind(params.now)
        .bind(params.status_message.as_str())
        .bind(to_json(&params.error)?)
        .bind(params.readable_until)
        .bind(i64::try_from(params.limit).unwrap_or(i64::MAX));
    let rows = db.fetch_all(call).await?;
    rows.iter()
        .map(|row| Ok(TaskId::from_string(row.text("id")?)))
        .collect()
}

pub(crate) async fn fail_orphaned(
    db: &impl Backend,
    current_runner: &str,
    status_message: &str,
    error: &Outcome,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    let call = Call::new(db.statements().fail_orphaned)
        .bind(current_runner)
        .bind(status_message)
        .bind(to_json(error)?)
        .bind(now);
    db.execute(call).await
}

pub(crate) async fn claim_lease<B: Backend>(
    db: &B,
    params: &ClaimLeaseParams,
) -> Result<TaskRecord, StoreError> {
    let call = Call::new(&db.statements().claim_lease)
        .bind(params.id.as_str())
        .bind(params.runner.as_str())
        .bind(params.until)
        .bind(params.now);
    match db.fetch_optional(call).await? {
        Some(row) => row_to_record(&row),
        None => Err(explain::claim_failed(
            get(db, &params.id, params.now).await?,
        )),
    }
}

pub(crate) async fn renew_lease<B: Backend>(
    db: &B,
    params: &RenewLeaseParams,
) -> Result<TaskRecord, StoreError> {
    let call = Call::new(&db.statements().renew_lease)
        .bind(params.id.as_str())
        .bind(params.runner.as_str())
        .bind(counter_to_db("lease generation", params.generation)?)
        .bind(params.until)
        .bind(params.now);
    match db.fetch_optional(call).await? {
        Some(row) => row_to_record(&row),
        None => Err(explain::renew_failed(
            get(db, &params.id, params.now).await?,
            params,
        )),
    }
}

/// The takeover of expired leases in one statement (PostgreSQL; SQLite runs its own,
/// which moves the change board's slots around its commit).
#[cfg(feature = "postgres")]
pub(crate) async fn claim_expired_leases<B: Backend>(
    db: &B,
    params: &ClaimExpiredParams,
) -> Result<Vec<TaskRecord>, StoreError> {
    let rows = db
        .fetch_all(claim_expired_call(db.statements(), params))
        .await?;
    rows.iter().map(row_to_record).collect()
}

/// The takeover of expired leases, every value bound; its rows are the records taken.
pub(crate) fn claim_expired_call<'a>(
    statements: &'static Statements,
    params: &'a ClaimExpiredParams,
) -> Call<'a> {
    Call::new(statements.claim_expired)
        .bind(params.runner.as_str())
        .bind(params.until)
        .bind(params.now)
        .bind(i64::try_from(params.limit).unwrap_or(i64::MAX))
}

/// Visible tasks per status, counted over the index on `(status, expires_at)`.
pub(crate) async fn count_by_status<B: Backend>(
    db: &B,
    now: DateTime<Utc>,
) -> Result<Vec<(TaskStatus, u64)>, StoreError> {
    let call = Call::new(&db.statements().count_by_status).bind(now);
    let rows = db.fetch_all(call).await?;
    rows.iter()
        .map(|row| {
            let status = row.text("status")?;
            let status = status.parse::<TaskStatus>().map_err(|_| {
                StoreError::Backend(
                    format!("unknown task status '{status}' in the database").into(),
                )
            })?;
            Ok((status, row_to_count(row)?))
        })
        .collect()
}
