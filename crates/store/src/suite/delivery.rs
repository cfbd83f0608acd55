//! The webhook outbox ([`DeliveryOutbox`]): idempotent enqueue, exclusive claims that
//! expire, retries, finishing under a claim, purging. Each case runs on the store's
//! [`TaskStore::outbox`] and is skipped (saying so) when it has none.

use super::at;
use crate::delivery::{
    ClaimDeliveriesParams, Delivery, DeliveryOutbox, DeliveryResult, NewDelivery,
};
use crate::error::StoreError;
use crate::TaskStore;
use std::collections::HashSet;
use std::sync::Arc;

/// The outbox of `store`, or `None` (said on stderr) to skip the case: a store that
/// keeps no outbox (a custom store for tasks alone) has nothing to check here.
fn outbox(store: &Arc<dyn TaskStore>) -> Option<&dyn DeliveryOutbox> {
    let outbox = store.outbox();
    if outbox.is_none() {
        eprintln!(
            "skipped: the {} store keeps no webhook outbox",
            store.backend_name()
        );
    }
    outbox
}

/// A delivery of `key` to the sink `hook`, due at `ms`.
pub fn new_delivery(key: &str, ms: i64) -> NewDelivery {
    NewDelivery {
        key: key.to_string(),
        sink: "hook".to_string(),
        payload: format!(r#"{{"event":"{key}"}}"#),
        created_at: at(ms),
    }
}

/// A claim by `runner` at `now_ms` until `until_ms` of at most `limit`.
fn claim(runner: &str, now_ms: i64, until_ms: i64, limit: usize) -> ClaimDeliveriesParams {
    ClaimDeliveriesParams {
        runner: runner.to_string(),
        now: at(now_ms),
        until: at(until_ms),
        limit,
    }
}

/// The keys of claimed deliveries, in the order returned.
fn keys(claimed: &[Delivery]) -> Vec<&str> {
    claimed.iter().map(|d| d.key.as_str()).collect()
}

/// Whether `result` is the error of a runner that does not hold the delivery `key`.
fn is_claim_lost(result: Result<(), StoreError>, key: &str) -> bool {
    matches!(result, Err(StoreError::DeliveryClaimLost { key: k }) if k == key)
}

/// Enqueueing a key twice keeps the first delivery, says false the second time, and
/// changes nothing (payload, due time); a claimed delivery comes back as enqueued,
/// with its first attempt counted.
pub async fn enqueue_delivery_is_idempotent_by_key(tasks: Arc<dyn TaskStore>) {
    let Some(store) = outbox(&tasks) else {
        return;
    };
    let first = new_delivery("t1:2:hook", 0);
    assert!(store.enqueue_delivery(&first).await.unwrap());
    let again = NewDelivery {
        payload: "{}".to_string(),
        created_at: at(500),
        ..first.clone()
    };
    assert!(!store.enqueue_delivery(&again).await.unwrap());
    assert!(store
        .enqueue_delivery(&new_delivery("t1:3:hook", 1))
        .await
        .unwrap());
    assert_eq!(store.pending_deliveries().await.unwrap(), 2);

    let claimed = store
        .claim_deliveries(&claim("r1", 10, 20, 1))
        .await
        .unwrap();
    assert_eq!(
        claimed,
        [Delivery {
            key: first.key.clone(),
            sink: first.sink.clone(),
            payload: first.payload.clone(),
            attempts: 1,
            created_at: at(0),
            next_attempt_at: at(0),
            last_error: None,
        }]
    );
}

/// A claim takes due deliveries oldest first (up to its limit), counts an attempt,
/// and hides them from other claimers until it expires (`claimed_until <= now`); then
/// another runner takes them over, and the first runner can no longer finish them.
/// Deliveries not yet due wait for their time.
pub async fn claimed_deliveries_are_hidden_until_the_claim_expires(tasks: Arc<dyn TaskStore>) {
    let Some(store) = outbox(&tasks) else {
        return;
    };
    // Enqueued out of due order; "d" is due later.
    for (key, ms) in [("c", 2), ("a", 0), ("b", 1), ("a2", 0), ("d", 100)] {
        assert!(store
            .enqueue_delivery(&new_delivery(key, ms))
            .await
            .unwrap());
    }
    let first = store
        .claim_deliveries(&claim("r1", 10, 20, 3))
        .await
        .unwrap();
    assert_eq!(keys(&first), ["a", "a2", "b"]);
    assert!(first.iter().all(|d| d.attempts == 1));
    let rest = store
        .claim_deliveries(&claim("r2", 11, 1_000, 10))
        .await
        .unwrap();
    assert_eq!(keys(&rest), ["c"]);
    assert!(store
        .claim_deliveries(&claim("r2", 19, 30, 10))
        .await
        .unwrap()
        .is_empty());

    // r1's claims expire at 20: r2 takes them over (r2's own claim on "c" lives on).
    let taken = store
        .claim_deliveries(&claim("r2", 20, 1_000, 10))
        .await
        .unwrap();
    assert_eq!(keys(&taken), ["a", "a2", "b"]);
    assert!(taken.iter().all(|d| d.attempts == 2));
    assert!(is_claim_lost(
        store
            .finish_delivery("a", "r1", &DeliveryResult::Delivered { at: at(25) })
            .await,
        "a"
    ));
    store
        .finish_delivery("a", "r2", &DeliveryResult::Delivered { at: at(25) })
        .await
        .unwrap();

    // "d" is due at 100, not before.
    assert!(store
        .claim_deliveries(&claim("r3", 99, 200, 10))
        .await
        .unwrap()
        .is_empty());
    let late = store
        .claim_deliveries(&claim("r3", 100, 200, 10))
        .await
        .unwrap();
    assert_eq!(keys(&late), ["d"]);
    assert_eq!(store.pending_deliveries().await.unwrap(), 4);
    assert!(store
        .claim_deliveries(&claim("r3", 100, 200, 0))
        .await
        .unwrap()
        .is_empty());
}

/// Eight claimers at once, each claiming small batches until nothing is left: every
/// delivery is claimed by exactly one of them, once.
pub async fn concurrent_claimers_get_disjoint_deliveries(tasks: Arc<dyn TaskStore>) {
    let Some(store) = outbox(&tasks) else {
        return;
    };
    let mut all = HashSet::new();
    for i in 0..60 {
        let key = format!("e{i}");
        store
            .enqueue_delivery(&new_delivery(&key, i % 7))
            .await
            .unwrap();
        all.insert(key);
    }
    let claimers: Vec<_> = (0..8)
        .map(|n| {
            let tasks = Arc::clone(&tasks);
            tokio::spawn(async move {
                let store = tasks.outbox().unwrap();
                let mut mine = Vec::new();
                loop {
                    let batch = store
                        .claim_deliveries(&claim(&format!("r{n}"), 10, 1_000, 3))
                        .await
                        .unwrap();
                    if batch.is_empty() {
                        return mine;
                    }
                    assert!(batch.iter().all(|d| d.attempts == 1), "{batch:?}");
                    mine.extend(batch.into_iter().map(|d| d.key));
                }
            })
        })
        .collect();
    let mut claimed = Vec::new();
    for claimer in claimers {
        claimed.extend(claimer.await.unwrap());
    }
    assert_eq!(claimed.len(), all.len(), "a delivery was claimed twice");
    assert_eq!(claimed.into_iter().collect::<HashSet<_>>(), all);
}

/// A retry releases the claim, keeps the error and makes the delivery due again at
/// the time it names, not before; the runner that retried it no longer holds it.
pub async fn retried_deliveries_are_due_again_at_their_time(tasks: Arc<dyn TaskStore>) {
    let Some(store) = outbox(&tasks) else {
        return;
    };
    store.enqueue_delivery(&new_delivery("k", 0)).await.unwrap();
    store
        .claim_deliveries(&claim("r1", 1, 1_000, 10))
        .await
        .unwrap();
    let retry = DeliveryResult::Retry {
        next_attempt_at: at(50),
        error: "503 Service Unavailable".to_string(),
    };
    store.finish_delivery("k", "r1", &retry).await.unwrap();
    assert!(is_claim_lost(
        store.finish_delivery("k", "r1", &retry).await,
        "k"
    ));
    assert_eq!(store.pending_deliveries().await.unwrap(), 1);
    // Released, so its old claim (until 1000) does not hide it; not due until 50.
    assert!(store
        .claim_deliveries(&claim("r2", 49, 1_000, 10))
        .await
        .unwrap()
        .is_empty());
    let again = store
        .claim_deliveries(&claim("r2", 50, 1_000, 10))
        .await
        .unwrap();
    assert_eq!(
        again,
        [Delivery {
            attempts: 2,
            next_attempt_at: at(50),
            last_error: Some("503 Service Unavailable".to_string()),
            created_at: at(0),
            ..delivery_of(&new_delivery("k", 0))
        }]
    );
    store
        .finish_delivery("k", "r2", &DeliveryResult::Delivered { at: at(60) })
        .await
        .unwrap();
    assert_eq!(store.pending_deliveries().await.unwrap(), 0);
}

/// A delivery as enqueued, before any claim.
fn delivery_of(new: &NewDelivery) -> Delivery {
    Delivery {
        key: new.key.clone(),
        sink: new.sink.clone(),
        payload: new.payload.clone(),
        attempts: 0,
        created_at: new.created_at,
        next_attempt_at: new.created_at,
        last_error: None,
    }
}

/// Only the holder of a live-or-untaken claim finishes a delivery: an unknown key, an
/// unclaimed delivery, another runner, or a finished delivery is refused with
/// `DeliveryClaimLost` and changes nothing. Delivered and given-up deliveries are
/// never claimed again, keep their key taken, and are purged once they finished
/// strictly before the cutoff (unfinished ones never); a purged key is free again.
pub async fn finished_deliveries_are_never_claimed_again_and_purged(tasks: Arc<dyn TaskStore>) {
    let Some(store) = outbox(&tasks) else {
        return;
    };
    for key in ["ok", "bad", "open", "unclaimed"] {
        store.enqueue_delivery(&new_delivery(key, 0)).await.unwrap();
    }
    assert!(is_claim_lost(
        store
            .finish_delivery("nope", "r1", &DeliveryResult::Delivered { at: at(1) })
            .await,
        "nope"
    ));
    let claimed = store
        .claim_deliveries(&claim("r1", 1, 10, 3))
        .await
        .unwrap();
    assert_eq!(keys(&claimed), ["bad", "ok", "open"]);
    assert!(is_claim_lost(
        store
            .finish_delivery("unclaimed", "r1", &DeliveryResult::Delivered { at: at(2) })
            .await,
        "unclaimed"
    ));
    assert!(is_claim_lost(
        store
            .finish_delivery("ok", "r2", &DeliveryResult::Delivered { at: at(2) })
            .await,
        "ok"
    ));
    // A claim that expired but that nobody took still lets its runner report.
    store
        .finish_delivery("ok", "r1", &DeliveryResult::Delivered { at: at(100) })
        .await
        .unwrap();
    let gave_up = DeliveryResult::GaveUp {
        at: at(200),
        error: "410 Gone".to_string(),
    };
    store.finish_delivery("bad", "r1", &gave_up).await.unwrap();
    assert!(is_claim_lost(
        store.finish_delivery("bad", "r1", &gave_up).await,
        "bad"
    ));
    assert_eq!(store.pending_deliveries().await.unwrap(), 2);

    // Much later, only the unfinished ones come back.
    let later = store
        .claim_deliveries(&claim("r2", 10_000, 20_000, 10))
        .await
        .unwrap();
    assert_eq!(keys(&later), ["open", "unclaimed"]);
    assert!(!store
        .enqueue_delivery(&new_delivery("ok", 10_000))
        .await
        .unwrap());

    assert_eq!(store.purge_deliveries(at(100)).await.unwrap(), 0);
    assert_eq!(store.purge_deliveries(at(101)).await.unwrap(), 1);
    assert_eq!(store.purge_deliveries(at(101)).await.unwrap(), 0);
    assert_eq!(store.purge_deliveries(at(1_000_000)).await.unwrap(), 1);
    assert_eq!(store.pending_deliveries().await.unwrap(), 2);
    // Unfinished deliveries survive any purge and stay claimable by their holder.
    store
        .finish_delivery("open", "r2", &DeliveryResult::Delivered { at: at(10_001) })
        .await
        .unwrap();
    assert!(store
        .enqueue_delivery(&new_delivery("ok", 10_000))
        .await
        .unwrap());
    assert_eq!(store.pending_deliveries().await.unwrap(), 2);
}
