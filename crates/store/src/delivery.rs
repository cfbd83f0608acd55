//! A durable outbox of webhook deliveries: events that must reach a destination (a
//! sink) once, even when several processes share the store and any of them may crash.
//!
//! The life of a delivery:
//!
//! 1. Every process that sees an event may [`enqueue`](crate::TaskStore::enqueue_delivery)
//!    it under a key naming the event and the destination (for example
//!    `"<task id>:<version>:<sink>"`). The key is unique, so however many processes
//!    enqueue the same event, one delivery exists.
//! 2. A sender [`claims`](crate::TaskStore::claim_deliveries) a batch of due deliveries
//!    until an expiry. A claim is exclusive while it lives: two senders never hold the
//!    same delivery, and a sender that dies loses its claims when they expire, after
//!    which another sender takes them over. Each claim counts an attempt.
//! 3. The sender reports the attempt with
//!    [`finish_delivery`](crate::TaskStore::finish_delivery) ([`DeliveryResult`]):
//!    delivered, retry later, or give up. Only the holder of the claim may report; a
//!    sender whose claim was taken over gets [`StoreError::DeliveryClaimLost`] and must
//!    not report anything else about it.
//! 4. Finished deliveries stay (so their key stays taken and a late enqueue of the same
//!    event is still ignored) until [`purged`](crate::TaskStore::purge_deliveries).
//!
//! Delivery is at least once: a sender that delivered and died before reporting leaves
//! a delivery that is sent again once its claim expires. Receivers deduplicate by key.
//!
//! [`StoreError::DeliveryClaimLost`]: crate::StoreError::DeliveryClaimLost

use chrono::{DateTime, Utc};

/// A delivery to enqueue; see [`crate::TaskStore::enqueue_delivery`].
#[derive(Debug, Clone, PartialEq)]
pub struct NewDelivery {
    /// Unique per event and destination, for example `"<task id>:<version>:<sink>"`:
    /// what makes enqueueing idempotent across processes.
    pub key: String,
    /// The destination's name (the sender looks up its URL and secret).
    pub sink: String,
    /// What to send: JSON text, opaque to the store.
    pub payload: String,
    /// When the event happened; the delivery is due from then.
    pub created_at: DateTime<Utc>,
}

/// A delivery as a sender claimed it; see [`crate::TaskStore::claim_deliveries`].
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// Its unique key (what the sender reports the result under).
    pub key: String,
    /// The destination's name.
    pub sink: String,
    /// What to send.
    pub payload: String,
    /// Attempts so far, counting the claim that returned it (so 1 on the first try).
    pub attempts: u32,
    /// When it was enqueued.
    pub created_at: DateTime<Utc>,
    /// When it became due (the enqueue time, or the time a retry asked for).
    pub next_attempt_at: DateTime<Utc>,
    /// Why the previous attempt failed, if one did.
    pub last_error: Option<String>,
}

/// Which deliveries to claim; see [`crate::TaskStore::claim_deliveries`].
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimDeliveriesParams {
    /// Who claims them (each sending process or task names itself uniquely).
    pub runner: String,
    /// The current time: deliveries due at or before it, whose claim (if any) expired
    /// at or before it, may be claimed.
    pub now: DateTime<Utc>,
    /// When the new claims expire: long enough to send and report, since after it
    /// another sender may take the delivery over and send it again.
    pub until: DateTime<Utc>,
    /// At most this many deliveries per call.
    pub limit: usize,
}

/// What became of one attempt; see [`crate::TaskStore::finish_delivery`].
#[derive(Debug, Clone, PartialEq)]
pub enum DeliveryResult {
    /// The destination accepted it: finished, never claimed again.
    Delivered {
        /// When.
        at: DateTime<Utc>,
    },
    /// It failed but may work later: due again at `next_attempt_at` (not before),
    /// claimable by any sender then.
    Retry {
        /// When to try again.
        next_attempt_at: DateTime<Utc>,
        /// Why this attempt failed (kept as the delivery's `last_error`).
        error: String,
    },
    /// It failed for good (the destination refused it, or attempts ran out): finished,
    /// never claimed again, with the error kept.
    GaveUp {
        /// When.
        at: DateTime<Utc>,
        /// Why.
        error: String,
    },
}
