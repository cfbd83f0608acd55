//! The in-memory outbox of webhook deliveries (see [`crate::delivery`]): a map by key,
//! with an index of the unfinished ones by due time (what a claim walks) and one of
//! the finished ones by finish time (what a purge walks), so each call costs what it
//! returns plus the live claims it steps over, never a scan of every delivery.

use super::MemoryStore;
use crate::delivery::{
    ClaimDeliveriesParams, Delivery, DeliveryOutbox, DeliveryResult, NewDelivery,
};
use crate::error::StoreError;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use std::collections::{BTreeSet, HashMap};

/// A position by time, then key: the order of both indexes.
type TimedKey = (DateTime<Utc>, String);

/// One stored delivery: what a claim returns plus who holds it and whether it ended.
#[derive(Debug)]
struct Stored {
    delivery: Delivery,
    /// The runner that made the latest claim, until a retry releases it.
    claimed_by: Option<String>,
    /// When that claim expires.
    claimed_until: Option<DateTime<Utc>>,
    /// When it was delivered or given up; `None` while unfinished.
    finished_at: Option<DateTime<Utc>>,
}

/// Every delivery, and the indexes derived from them.
#[derive(Debug, Default)]
pub(super) struct Outbox {
    deliveries: HashMap<String, Stored>,
    /// `(next_attempt_at, key)` of every unfinished delivery.
    due: BTreeSet<TimedKey>,
    /// `(finished_at, key)` of every finished delivery.
    finished: BTreeSet<TimedKey>,
}

impl Outbox {
    /// Adds a delivery unless its key exists; whether it was added.
    pub(super) fn enqueue(&mut self, new: &NewDelivery) -> bool {
        if self.deliveries.contains_key(&new.key) {
            return false;
        }
        self.due.insert((new.created_at, new.key.clone()));
        self.deliveries.insert(
            new.key.clone(),
            Stored {
                delivery: Delivery {
                    key: new.key.clone(),
                    sink: new.sink.clone(),
                    payload: new.payload.clone(),
                    attempts: 0,
                    created_at: new.created_at,
                    next_attempt_at: new.created_at,
                    last_error: None,
                },
                claimed_by: None,
                claimed_until: None,
                finished_at: None,
            },
        );
        true
    }

    /// Claims up to `limit` due deliveries under no live claim, oldest due first.
    pub(super) fn claim(&mut self, params: &ClaimDeliveriesParams) -> Vec<Delivery> {
        let deliveries = &mut self.deliveries;
        self.due
            .iter()
            .take_while(|(at, _)| *at <= params.now)
            .filter_map(|(_, key)| {
                let stored = deliveries.get_mut(key)?;
                if stored.claimed_until.is_some_and(|until| until > params.now) {
                    return None;
                }
                stored.claimed_by = Some(params.runner.clone());
                stored.claimed_until = Some(params.until);
                stored.delivery.attempts = stored.delivery.attempts.saturating_add(1);
                Some(stored.delivery.clone())
            })
            .take(params.limit)
            .collect()
    }

    /// Records an attempt's result if `runner` holds the delivery.
    pub(super) fn finish(
        &mut self,
        key: &str,
        runner: &str,
        result: &DeliveryResult,
    ) -> Result<(), StoreError> {
        let stored = self
            .deliveries
            .get_mut(key)
            .filter(|s| s.finished_at.is_none() && s.claimed_by.as_deref() == Some(runner))
            .ok_or_else(|| StoreError::DeliveryClaimLost {
                key: key.to_string(),
            })?;
        self.due
            .remove(&(stored.delivery.next_attempt_at, key.to_string()));
        match result {
            DeliveryResult::Delivered { at } => {
                stored.finished_at = Some(*at);
                self.finished.insert((*at, key.to_string()));
            }
            DeliveryResult::GaveUp { at, error } => {
                stored.finished_at = Some(*at);
                stored.delivery.last_error = Some(error.clone());
                self.finished.insert((*at, key.to_string()));
            }
            DeliveryResult::Retry {
                next_attempt_at,
                error,
            } => {
                stored.delivery.next_attempt_at = *next_attempt_at;
                stored.delivery.last_error = Some(error.clone());
                stored.claimed_by = None;
                stored.claimed_until = None;
                self.due.insert((*next_attempt_at, key.to_string()));
            }
        }
        Ok(())
    }

    /// How many deliveries are unfinished.
    pub(super) fn pending(&self) -> u64 {
        self.due.len() as u64
    }

    /// Deletes the deliveries finished strictly before `finished_before`.
    pub(super) fn purge(&mut self, finished_before: DateTime<Utc>) -> u64 {
        // Every key sorts after "", so this splits exactly at `finished_before`.
        let kept = self.finished.split_off(&(finished_before, String::new()));
        let purged = std::mem::replace(&mut self.finished, kept);
        for (_, key) in &purged {
            self.deliveries.remove(key);
        }
        purged.len() as u64
    }
}

#[async_trait]
impl DeliveryOutbox for MemoryStore {
    async fn enqueue_delivery(&self, delivery: &NewDelivery) -> Result<bool, StoreError> {
        Ok(self.outbox.lock().enqueue(delivery))
    }

    async fn claim_deliveries(
        &self,
        params: &ClaimDeliveriesParams,
    ) -> Result<Vec<Delivery>, StoreError> {
        Ok(self.outbox.lock().claim(params))
    }

    async fn finish_delivery(
        &self,
        key: &str,
        runner: &str,
        result: &DeliveryResult,
    ) -> Result<(), StoreError> {
        self.outbox.lock().finish(key, runner, result)
    }

    async fn pending_deliveries(&self) -> Result<u64, StoreError> {
        Ok(self.outbox.lock().pending())
    }

    async fn purge_deliveries(&self, finished_before: DateTime<Utc>) -> Result<u64, StoreError> {
        Ok(self.outbox.lock().purge(finished_before))
    }
}
