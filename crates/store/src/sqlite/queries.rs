//! The statements of the SQLite backend: those it shares with PostgreSQL
//! ([`crate::sql::statements`]), and the batch changes it writes its own way. Each
//! change is one statement under SQLite's single write lock, so it is atomic and
//! concurrent callers never take the same record.
//!
//! Times and durations are integer milliseconds; see `migrations/0001_init.sql` and
//! `migrations/0002_leases.sql` (and `0006_timeline_board.sql`, `0007_deliveries.sql`
//! for the timeline triggers and the outbox).

use crate::sql::statements::{columns, delivery_columns, runner_not_alive};
use crate::sql::{Dialect, Statements};
use std::sync::LazyLock;

/// Every statement, built on first use.
pub(super) static STATEMENTS: LazyLock<Statements> = LazyLock::new(|| {
    Statements::new(&Dialect {
        parameter: "?",
        // i64::MIN milliseconds.
        earliest_time: "-9223372036854775808",
        // i64::MAX milliseconds.
        latest_time: "9223372036854775807",
        // Without statistics the planner may read the records: the covering index
        // (migration 0005) is named.
        status_index: "INDEXED BY tasks_status_expires ",
        // JSON text of a string is 'text'; json_extract then returns the decoded string.
        request_name_is: "json_type(request, '$.name') = 'text' \
             AND json_extract(request, '$.name') = ?6",
        delete_expired: DELETE_EXPIRED,
        fail_orphaned: FAIL_ORPHANED,
        settle_expired_waiting: SETTLE_EXPIRED_WAITING,
        claim_expired: CLAIM_EXPIRED,
        claim_deliveries: CLAIM_DELIVERIES,
    })
});

/// [`Dialect::delete_expired`]: ?1 now, ?2 limit.
const DELETE_EXPIRED: &str = "DELETE FROM tasks WHERE id IN (\
     SELECT id FROM tasks WHERE expires_at IS NOT NULL AND expires_at <= ?1 \
     ORDER BY expires_at LIMIT ?2) RETURNING id, status, external";

/// [`Dialect::settle_expired_waiting`]: ?1 now, ?2 status message, ?3 outcome JSON,
/// ?4 readable until, ?5 limit. The covering `tasks_status_expires` index finds them.
const SETTLE_EXPIRED_WAITING: &str = "UPDATE tasks SET status = 'failed', \
     status_message = ?2, outcome = ?3, input_requests = '{}', last_updated_at = ?1, \
     version = version + 1, expires_at = ?4 WHERE id IN (\
     SELECT id FROM tasks WHERE status = 'input_required' \
     AND expires_at IS NOT NULL AND expires_at <= ?1 \
     ORDER BY expires_at LIMIT ?5) RETURNING id";

/// [`Dialect::fail_orphaned`]: ?1 current runner, ?2 status message, ?3 outcome JSON,
/// ?4 now.
const FAIL_ORPHANED: &str = concat!(
    "UPDATE tasks SET status = 'failed',",
    " status_message = ?2, outcome = ?3, input_requests = '{}', last_updated_at = ?4,",
    " version = version + 1",
    " WHERE status IN ('working', 'input_required')",
    " AND (runner IS NULL OR runner <> ?1)",
    " AND (lease_until IS NULL OR (lease_until <= ?4 AND ",
    runner_not_alive!("?4"),
    "))",
    " AND external IS NULL"
);

/// [`Dialect::claim_expired`]: ?1 runner, ?2 until, ?3 now, ?4 limit. Without statistics the
/// planner would prefer `tasks_active` (every running task, then a sort): the lease
/// index is named so the walk stays O(expired).
const CLAIM_EXPIRED: &str = concat!(
    "UPDATE tasks SET runner = ?1, lease_until = ?2, lease_generation = lease_generation + 1",
    " WHERE id IN (SELECT id FROM tasks INDEXED BY tasks_lease_until",
    " WHERE lease_until IS NOT NULL AND status IN ('working', 'input_required')",
    " AND lease_until <= ?3 AND (expires_at IS NULL OR expires_at > ?3)",
    " AND external IS NULL AND ",
    runner_not_alive!("?3"),
    " ORDER BY lease_until LIMIT ?4)",
    " RETURNING ",
    columns!()
);

/// [`Dialect::claim_deliveries`]: ?1 runner, ?2 until, ?3 now, ?4 limit. One statement
/// under SQLite's write lock (taken before it reads), so two claimers, in this process
/// or another on the same file, never take the same delivery.
const CLAIM_DELIVERIES: &str = concat!(
    "UPDATE deliveries SET claimed_by = ?1, claimed_until = ?2, attempts = attempts + 1",
    " WHERE key IN (SELECT key FROM deliveries INDEXED BY deliveries_due",
    " WHERE finished_at IS NULL AND next_attempt_at <= ?3",
    " AND (claimed_until IS NULL OR claimed_until <= ?3)",
    " ORDER BY next_attempt_at, key LIMIT ?4)",
    " RETURNING ",
    delivery_columns!()
);
