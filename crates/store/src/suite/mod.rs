//! The parity suite (feature `test-suite`): the behaviour every [`TaskStore`](crate::TaskStore) backend
//! must share, written once.
//!
//! Each case is a public `async fn` that takes a fresh, empty store and panics on
//! failure. [`store_suite!`](crate::store_suite) stamps out one `#[tokio::test]` per case
//! for a backend:
//!
//! ```ignore
//! async fn make() -> std::sync::Arc<dyn mcp_tasks_store::TaskStore> {
//!     std::sync::Arc::new(mcp_tasks_store::MemoryStore::new())
//! }
//! mcp_tasks_store::store_suite!(make);
//! ```
//!
//! `$make` may also return `Option<Arc<dyn TaskStore>>`: `None` skips the case (a
//! backend whose server is not configured; it prints why). It may return the store
//! with a guard, `(store, guard)` (see [`SuiteStore`]): the guard keeps a test's
//! resources (a temporary directory, a schema to drop) until the case ended and its
//! store was dropped.
//!
//! Times are millisecond-truncated (see [`base_time`]) because SQL backends keep
//! milliseconds; callers of a store are expected to do the same.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod board;
mod changes;
mod counts;
mod delivery;
mod expiry;
mod external;
mod input;
mod journal;
mod lease;
mod list;
mod make;
mod orphans;
#[cfg(feature = "postgres")]
pub mod postgres;
mod records;
mod runners;
mod timeline;
mod transition;

pub use board::{
    query_tasks_filters_and_pages_newest_first, query_tasks_id_prefix_wildcards_are_literal,
};
pub use changes::change_feed_reports_visible_changes;
pub use counts::count_by_status_counts_visible_tasks;
pub use delivery::{
    claimed_deliveries_are_hidden_until_the_claim_expires,
    concurrent_claimers_get_disjoint_deliveries, enqueue_delivery_is_idempotent_by_key,
    finished_deliveries_are_never_claimed_again_and_purged, new_delivery,
    retried_deliveries_are_due_again_at_their_time,
};
pub use expiry::{
    concurrent_sweeps_delete_each_record_once, expired_records_are_invisible_and_deleted_in_batches,
};
pub use external::{
    claim_expired_leases_skips_external_jobs, delete_expired_returns_external_jobs,
    external_job_round_trips, fail_orphaned_skips_external_jobs,
};
pub use input::{
    ending_a_wait_drops_its_message, expired_waiting_records_are_settled_not_deleted,
    fail_orphaned_clears_input_requests, input_requests_are_stored_replaced_and_kept,
};
pub use journal::{
    journal_is_deleted_with_the_task, journal_records_steps_once_in_order,
    journal_writes_are_fenced,
};
pub use lease::{
    claim_lease_race_has_one_winner, expired_leases_are_claimed_once,
    fenced_transition_with_stale_generation_is_lease_conflict,
    renew_with_stale_generation_is_lease_conflict,
};
pub use list::list_filters_by_owner_and_session_and_pages_by_keyset;
pub use make::{Guard, SuiteStore};
pub use orphans::{fail_orphaned_fails_only_other_runners, fail_orphaned_spares_live_leases};
pub use records::{
    concurrent_creates_of_one_id_have_one_winner, create_duplicate_id_is_duplicate,
    create_then_get_round_trips, get_unknown_is_none,
};
pub use runners::{
    live_runners_keep_their_tasks_without_renewals, reaped_runners_hand_their_tasks_over_at_once,
    released_leases_are_claimable_at_once_and_fenced,
};
pub use timeline::{
    a_pending_creation_takes_its_end_along, racing_status_changes_are_recorded_once,
    timeline_is_written_by_fail_orphaned_and_deleted_with_the_task,
    timeline_records_creation_and_status_changes_only,
};
pub use transition::{
    cancel_vs_complete_race_has_one_winner, compare_and_set_race_has_one_winner,
    expected_version_mismatch_is_conflict, message_only_update_keeps_status,
    no_transition_out_of_terminal, transition_to_terminal_records_outcome_and_bumps_version,
    unknown_id_transition_is_not_found,
};

use crate::record::{Outcome, TaskRecord, TransitionParams};
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use serde_json::json;
use std::time::Duration;

/// Expands to one `#[tokio::test]` per suite case, each calling `$make().await` for a
/// fresh `Arc<dyn TaskStore>` (or an `Option` of one, `None` skipping the case).
/// `$make` is an async fn or a closure returning a future.
/// The calling crate needs `tokio` (with `macros` and `rt-multi-thread`) as a
/// dependency. Invoke it once per module (the test names would clash otherwise).
#[macro_export]
macro_rules! store_suite {
    ($make:expr) => {
        $crate::store_suite!(@cases $make;
            create_then_get_round_trips,
            create_duplicate_id_is_duplicate,
            ending_a_wait_drops_its_message,
            concurrent_creates_of_one_id_have_one_winner,
            get_unknown_is_none,
            a_pending_creation_takes_its_end_along,
            transition_to_terminal_records_outcome_and_bumps_version,
            unknown_id_transition_is_not_found,
            no_transition_out_of_terminal,
            expected_version_mismatch_is_conflict,
            message_only_update_keeps_status,
            input_requests_are_stored_replaced_and_kept,
            fail_orphaned_clears_input_requests,
            expired_waiting_records_are_settled_not_deleted,
            cancel_vs_complete_race_has_one_winner,
            compare_and_set_race_has_one_winner,
            list_filters_by_owner_and_session_and_pages_by_keyset,
            expired_records_are_invisible_and_deleted_in_batches,
            concurrent_sweeps_delete_each_record_once,
            fail_orphaned_fails_only_other_runners,
            fail_orphaned_spares_live_leases,
            claim_lease_race_has_one_winner,
            renew_with_stale_generation_is_lease_conflict,
            fenced_transition_with_stale_generation_is_lease_conflict,
            expired_leases_are_claimed_once,
            live_runners_keep_their_tasks_without_renewals,
            released_leases_are_claimable_at_once_and_fenced,
            reaped_runners_hand_their_tasks_over_at_once,
            change_feed_reports_visible_changes,
            external_job_round_trips,
            fail_orphaned_skips_external_jobs,
            claim_expired_leases_skips_external_jobs,
            delete_expired_returns_external_jobs,
            timeline_records_creation_and_status_changes_only,
            timeline_is_written_by_fail_orphaned_and_deleted_with_the_task,
            racing_status_changes_are_recorded_once,
            query_tasks_filters_and_pages_newest_first,
            query_tasks_id_prefix_wildcards_are_literal,
            enqueue_delivery_is_idempotent_by_key,
            claimed_deliveries_are_hidden_until_the_claim_expires,
            concurrent_claimers_get_disjoint_deliveries,
            retried_deliveries_are_due_again_at_their_time,
            finished_deliveries_are_never_claimed_again_and_purged,
            count_by_status_counts_visible_tasks,
            journal_records_steps_once_in_order,
            journal_writes_are_fenced,
            journal_is_deleted_with_the_task,
        );
    };
    (@cases $make:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                if let Some((store, guard)) = $crate::suite::SuiteStore::into_parts(($make)().await) {
                    $crate::suite::$case(store).await;
                    drop(guard);
                }
            }
        )*
    };
}

/// A fixed, millisecond-precise instant that every case counts from, so results do
/// not depend on the clock.
pub fn base_time() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(1_767_225_600_123).expect("a valid timestamp")
}

/// `base_time() + ms` milliseconds.
pub fn at(ms: i64) -> DateTime<Utc> {
    base_time() + ChronoDuration::milliseconds(ms)
}

/// Truncates a time to whole milliseconds, the precision every backend keeps.
pub fn truncate_ms(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(t.timestamp_millis()).expect("a time that was valid")
}

/// A fresh `working` record of `owner` (and `session`) created at `created_at`, run by
/// the runner `current`, with no ttl and version 1.
pub fn record(owner: &str, session: Option<&str>, created_at: DateTime<Utc>) -> TaskRecord {
    TaskRecord {
        id: TaskId::generate(),
        owner: owner.to_string(),
        session: session.map(str::to_string),
        status: TaskStatus::Working,
        status_message: None,
        created_at,
        last_updated_at: created_at,
        ttl: None,
        expires_at: None,
        poll_interval: Some(Duration::from_secs(1)),
        method: "tools/call".to_string(),
        request: json!({"name": "slow", "arguments": {"n": 3}}).into(),
        outcome: None,
        runner: Some("current".to_string()),
        version: 1,
        input_requests: Default::default(),
        lease_until: None,
        lease_generation: 0,
        external: None,
    }
}

/// A transition of `id` to `status` at `now` with no message, outcome or version check.
pub fn to_status(id: &TaskId, status: TaskStatus, now: DateTime<Utc>) -> TransitionParams {
    TransitionParams::to(id.clone(), status, now)
}

/// A successful tool result.
pub fn ok_outcome(text: &str) -> Outcome {
    Outcome::Result {
        value: json!({"content": [{"type": "text", "text": text}], "isError": false}),
    }
}
