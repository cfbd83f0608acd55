//! The webhook outbox ([`crate::delivery`]) on both SQL backends: one statement per
//! call, so each is atomic; claims pick their rows as the backend's locking allows
//! ([`crate::sql::Dialect::claim_deliveries`]).

use super::values::{row_to_count, row_to_delivery};
use super::{Backend, Call};
use crate::delivery::{ClaimDeliveriesParams, Delivery, DeliveryResult, NewDelivery};
use crate::error::StoreError;
use chrono::{DateTime, Utc};

pub(crate) async fn enqueue(db: &impl Backend, delivery: &NewDelivery) -> Result<bool, StoreError> {
    let call = Call::new(&db.statements().enqueue_delivery)
        .bind(delivery.key.as_str())
        .bind(delivery.sink.as_str())
        .bind(delivery.payload.as_str())
        .bind(delivery.created_at);
    Ok(db.execute(call).await? > 0)
}

pub(crate) async fn claim<B: Backend>(
    db: &B,
    params: &ClaimDeliveriesParams,
) -> Result<Vec<Delivery>, StoreError> {
    let call = Call::new(db.statements().claim_deliveries)
        .bind(params.runner.as_str())
        .bind(params.until)
        .bind(params.now)
        .bind(i64::try_from(params.limit).unwrap_or(i64::MAX));
    let rows = db.fetch_all(call).await?;
    let mut claimed = rows
        .iter()
        .map(row_to_delivery)
        .collect::<Result<Vec<_>, _>>()?;
    // `RETURNING` promises no order.
    claimed.sort_by(|a, b| (a.next_attempt_at, &a.key).cmp(&(b.next_attempt_at, &b.key)));
    Ok(claimed)
}

pub(crate) async fn finish(
    db: &impl Backend,
    key: &str,
    runner: &str,
    result: &DeliveryResult,
) -> Result<(), StoreError> {
    let statements = db.statements();
    let call = match result {
        DeliveryResult::Delivered { at } => Call::new(&statements.finish_delivery)
            .bind(key)
            .bind(runner)
            .bind(*at)
            .bind(None::<&str>),
        DeliveryResult::GaveUp { at, error } => Call::new(&statements.finish_delivery)
            .bind(key)
            .bind(runner)
            .bind(*at)
            .bind(error.as_str()),
        DeliveryResult::Retry {
            next_attempt_at,
            error,
        } => Call::new(&statements.retry_delivery)
            .bind(key)
            .bind(runner)
            .bind(*next_attempt_at)
            .bind(error.as_str()),
    };
    match db.execute(call).await? {
        0 => Err(StoreError::DeliveryClaimLost {
            key: key.to_string(),
        }),
        _ => Ok(()),
    }
}

pub(crate) async fn pending<B: Backend>(db: &B) -> Result<u64, StoreError> {
    let call = Call::new(&db.statements().pending_deliveries);
    match db.fetch_optional(call).await? {
        Some(row) => row_to_count(&row),
        None => Ok(0),
    }
}

pub(crate) async fn purge(
    db: &impl Backend,
    finished_before: DateTime<Utc>,
) -> Result<u64, StoreError> {
    db.execute(Call::new(&db.statements().purge_deliveries).bind(finished_before))
        .await
}
