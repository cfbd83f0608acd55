//! A durable outbox of webhook deliveries: events that must reach a destination (a
//! sink) once, even when several processes share the store and any of them may crash.
//! [`DeliveryOutbox`] is the trait; the structs are what goes in and comes out.
//!
//! Who uses it: the task board's notifier (`mcp-tasks-board`, `notify/`), which
//! enqueues an event per interested sink when a task enters a status, then claims, posts
//! and reports them. Nothing in the engine or the server calls it.
//!
//! Why a trait of its own, reached through [`TaskStore::outbox`]: a store's job is
//! tasks; the outbox is a second table that only webhooks need. The built-in backends
//! keep one; a custom store may answer `None`, and then webhooks cannot be configured
//! on it (the notifier refuses to start) while everything else works.
//!
//! The life of a delivery:
//!
//! 1. Every process that sees an event may [`enqueue`](DeliveryOutbox::enqueue_delivery)
//!    it under a key naming the event and the destination (for example
//!    `"<task id>:<version>:<sink>"`). The key is unique, so however many processes
//!    enqueue the same event, one delivery exists.
//! 2. A sender [`claims`](DeliveryOutbox::claim_deliveries) a batch of due deliveries
//!    until an expiry. A claim is exclusive while it lives: two senders never hold the
//!    same delivery, and a sender that dies loses its claims when they expire, after
//!    which another sender takes them over. Each claim counts an attempt.
//! 3. The sender reports the attempt with
//!    [`finish_delivery`](DeliveryOutbox::finish_delivery) ([`DeliveryResult`]):
//!    delivered, retry later, or give up. Only the holder of the claim may report; a
//!    sender whose claim was taken over gets [`StoreError::DeliveryClaimLost`] and must
//!    not report anything else about it.
//! 4. Finished deliveries stay (so their key stays taken and a late enqueue of the same
//!    event is still ignored) until [`purged`](DeliveryOutbox::purge_deliveries).
//!
//! Delivery is at least once: a sender that delivered and died before reporting leaves
//! a delivery that is sent again once its claim expires. Receivers deduplicate by key.
//!
//! [`TaskStore::outbox`]: crate::TaskStore::outbox

use crate::error::StoreError;
use async_trait::async_trait;
use chrono::{DateTime, Utc};

/// A delivery to enqueue; see [`DeliveryOutbox::enqueue_delivery`].
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

/// A delivery as a sender claimed it; see [`DeliveryOutbox::claim_deliveries`].
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

/// Which deliveries to claim; see [`DeliveryOutbox::claim_deliveries`].
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

/// What became of one attempt; see [`DeliveryOutbox::finish_delivery`].
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

/// The webhook outbox of a store (see the [module](self) for who calls it and why).
/// Each method is atomic on its own, across every process sharing the store.
#[async_trait]
pub trait DeliveryOutbox: Send + Sync {
    /// Adds a pending delivery, due at its `created_at`, unless one with its key exists:
    /// then nothing changes and this returns false. So several processes that each see
    /// the same event and enqueue it produce one delivery.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn enqueue_delivery(&self, delivery: &NewDelivery) -> Result<bool, StoreError>;

    /// Atomically takes up to `limit` deliveries that are unfinished, due
    /// (`next_attempt_at <= now`) and not under a live claim (none, or
    /// `claimed_until <= now`): each is claimed by `runner` until `until` and its
    /// `attempts` is incremented. Returns them oldest-due first (by `next_attempt_at`,
    /// then key). Concurrent claimers, in this process or others, never receive the same
    /// delivery while its claim lives.
    ///
    /// Why: several processes send webhooks from one store; each delivery must be in
    /// the hands of one sender at a time, and return to the others if that sender dies.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn claim_deliveries(
        &self,
        params: &ClaimDeliveriesParams,
    ) -> Result<Vec<Delivery>, StoreError>;

    /// Records the result of an attempt on the delivery `key`, if `runner` still holds
    /// it (it made the latest claim, and the delivery is neither finished nor handed
    /// back by a retry). [`DeliveryResult::Delivered`] and [`DeliveryResult::GaveUp`]
    /// finish it (the row stays until purged, so its key stays taken);
    /// [`DeliveryResult::Retry`] stores the error, makes it due at `next_attempt_at` and
    /// releases the claim. A claim that expired but that nobody took over still counts
    /// as held: the attempt happened, and its result is worth keeping.
    ///
    /// # Errors
    /// [`StoreError::DeliveryClaimLost`] when `runner` does not hold it (another runner
    /// took it over, it is finished, or the key is unknown), changing nothing;
    /// [`StoreError::Backend`] on I/O failure.
    async fn finish_delivery(
        &self,
        key: &str,
        runner: &str,
        result: &DeliveryResult,
    ) -> Result<(), StoreError>;

    /// How many deliveries are unfinished (due, claimed or waiting for a retry): a
    /// gauge for metrics, and what tests wait on.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn pending_deliveries(&self) -> Result<u64, StoreError>;

    /// Deletes the deliveries that finished strictly before `finished_before`, returning
    /// how many: the outbox would otherwise grow forever. Their keys are free again, so
    /// purge only what no process can still enqueue (well past the retention of the
    /// events that produce them).
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn purge_deliveries(&self, finished_before: DateTime<Utc>) -> Result<u64, StoreError>;
}
