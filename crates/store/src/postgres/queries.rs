//! The statements of the PostgreSQL backend: those it shares with SQLite
//! ([`crate::sql::statements`]), and those it writes its own way.
//!
//! Each change is one statement, so it is atomic under PostgreSQL's default READ
//! COMMITTED isolation: a conditional `UPDATE` that finds its row locked by a concurrent
//! writer waits, then re-checks its `WHERE` against the committed row, so of two racing
//! compare-and-sets exactly one applies. Batch statements pick their rows with
//! `FOR UPDATE SKIP LOCKED`: two replicas running them at once split the rows instead of
//! waiting on (or deadlocking over) each other. See `migrations/` for the schema.

use crate::sql::statements::{columns, delivery_columns, runner_not_alive};
use crate::sql::{Dialect, Statements};
use std::sync::LazyLock;

/// Every statement that writes records, built on first use.
pub(super) static STATEMENTS: LazyLock<Statements> = LazyLock::new(|| {
    Statements::new(&Dialect {
        parameter: "$",
        earliest_time: "'-infinity'::timestamptz",
        latest_time: "'infinity'::timestamptz",
        status_index: "",
        // The request is TEXT (see 0001_init.sql). PostgreSQL's JSON types refuse the
        // escape \u0000 anywhere in a document, even outside `name`, so it is replaced
        // (with U+FFFD, which keeps the text valid JSON) before parsing: one task with a
        // NUL in its arguments must not break every board search. jsonb equality then
        // matches strings only, as the other backends do.
        request_name_is: "(replace(request, E'\\\\u0000', E'\\\\ufffd')::jsonb -> 'name') \
             = to_jsonb(CAST(?6 AS TEXT))",
        delete_expired: DELETE_EXPIRED,
        fail_orphaned: FAIL_ORPHANED,
        settle_expired_waiting: SETTLE_EXPIRED_WAITING,
        claim_expired: CLAIM_EXPIRED,
        claim_deliveries: CLAIM_DELIVERIES,
    })
});

/// [`Dialect::delete_expired`]: $1 now, $2 limit. Rows another replica's sweep has
/// locked are skipped, so each id is deleted (and reported) once.
const DELETE_EXPIRED: &str = "WITH doomed AS (\
     SELECT id FROM tasks WHERE expires_at IS NOT NULL AND expires_at <= $1 \
     ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) \
     DELETE FROM tasks t USING doomed WHERE t.id = doomed.id \
     RETURNING t.id, t.status, t.external";

/// [`Dialect::settle_expired_waiting`]: $1 now, $2 status message, $3 outcome JSON,
/// $4 readable until, $5 limit. Rows another replica's sweep has locked are skipped, so
/// each task is settled (and reported) once.
const SETTLE_EXPIRED_WAITING: &str = "WITH waiting AS (\
     SELECT id FROM tasks WHERE status = 'input_required' \
     AND expires_at IS NOT NULL AND expires_at <= $1 \
     ORDER BY expires_at LIMIT $5 FOR UPDATE SKIP LOCKED) \
     UPDATE tasks t SET status = 'failed', status_message = $2, outcome = $3, \
     input_requests = '{}', last_updated_at = $1, version = t.version + 1, expires_at = $4 \
     FROM waiting WHERE t.id = waiting.id RETURNING t.id";

/// [`Dialect::fail_orphaned`]: $1 current runner, $2 status message, $3 outcome JSON,
/// $4 now. Rows locked by a concurrent writer are left to it (they are being changed
/// right now anyway).
const FAIL_ORPHANED: &str = concat!(
    "WITH orphans AS (",
    "SELECT id FROM tasks WHERE status IN ('working', 'input_required')",
    " AND (runner IS NULL OR runner <> $1)",
    " AND (lease_until IS NULL OR (lease_until <= $4 AND ",
    runner_not_alive!("$4"),
    "))",
    " AND external IS NULL",
    " FOR UPDATE SKIP LOCKED)",
    " UPDATE tasks t SET status = 'failed', status_message = $2, outcome = $3,",
    " input_requests = '{}', last_updated_at = $4, version = t.version + 1",
    " FROM orphans WHERE t.id = orphans.id"
);

/// [`Dialect::claim_expired`]: $1 runner, $2 until, $3 now, $4 limit. `SKIP LOCKED`
/// hands each expired row to one claimer; a row another claimer committed first no
/// longer matches when re-checked.
const CLAIM_EXPIRED: &str = concat!(
    "WITH expired AS (SELECT id FROM tasks",
    " WHERE lease_until IS NOT NULL AND status IN ('working', 'input_required')",
    " AND lease_until <= $3 AND (expires_at IS NULL OR expires_at > $3)",
    " AND external IS NULL AND ",
    runner_not_alive!("$3"),
    " ORDER BY lease_until LIMIT $4 FOR UPDATE SKIP LOCKED)",
    " UPDATE tasks t SET runner = $1, lease_until = $2,",
    " lease_generation = t.lease_generation + 1",
    " FROM expired WHERE t.id = expired.id",
    " RETURNING ",
    "t.id, t.owner, t.session, t.status, t.status_message, t.created_at, t.last_updated_at,",
    " t.ttl_ms, t.expires_at, t.poll_interval_ms, t.method, t.request, t.outcome, t.runner,",
    " t.version, t.lease_until, t.lease_generation, t.input_requests, t.external"
);

/// [`Dialect::claim_deliveries`]: $1 runner, $2 until, $3 now, $4 limit. As with
/// [`CLAIM_EXPIRED`], `SKIP LOCKED` hands each due row to one claimer, and a row
/// another claimer committed first no longer matches when re-checked (its claim lives).
/// The CTE names its column `due_key` so that the returned columns name only the
/// updated table's.
const CLAIM_DELIVERIES: &str = concat!(
    "WITH due AS (SELECT key AS due_key FROM deliveries",
    " WHERE finished_at IS NULL AND next_attempt_at <= $3",
    " AND (claimed_until IS NULL OR claimed_until <= $3)",
    " ORDER BY next_attempt_at, key LIMIT $4 FOR UPDATE SKIP LOCKED)",
    " UPDATE deliveries d SET claimed_by = $1, claimed_until = $2,",
    " attempts = d.attempts + 1",
    " FROM due WHERE d.key = due.due_key",
    " RETURNING ",
    delivery_columns!()
);

/// The NOTIFY channel of the `tasks` table this connection sees (the same expression
/// as the trigger in `0001_init.sql`).
pub(super) const CHANGE_CHANNEL: &str = "SELECT 'mcp_tasks_' || md5(n.nspname) \
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
     WHERE c.oid = 'tasks'::regclass";

/// Stores a session (upsert). $1 id, $2 principal, $3 authenticated, $4 protocol
/// version, $5 client capabilities JSON, $6 created at.
pub(super) const SAVE_SESSION: &str = "INSERT INTO sessions \
     (id, principal, authenticated, protocol_version, client_capabilities, created_at, \
     last_seen_at) VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (id) DO UPDATE SET \
     principal = EXCLUDED.principal, authenticated = EXCLUDED.authenticated, \
     protocol_version = EXCLUDED.protocol_version, \
     client_capabilities = EXCLUDED.client_capabilities, \
     last_seen_at = GREATEST(sessions.last_seen_at, EXCLUDED.last_seen_at)";

/// Marks sessions as in use. $1 ids (text[]), $2 now (never moves backwards).
pub(super) const KEEP_SESSIONS: &str = "UPDATE sessions SET last_seen_at = $2 \
     WHERE id = ANY($1) AND last_seen_at < $2";

/// Deletes sessions not in use since the cutoff. $1 cutoff.
pub(super) const DELETE_IDLE_SESSIONS: &str = "DELETE FROM sessions WHERE last_seen_at <= $1";

/// Reads a session. $1 id.
pub(super) const LOAD_SESSION: &str = "SELECT id, principal, authenticated, protocol_version, \
     client_capabilities, created_at FROM sessions WHERE id = $1";

/// Forgets a session. $1 id.
pub(super) const DELETE_SESSION: &str = "DELETE FROM sessions WHERE id = $1";

/// The narrow check of cached records (`cache.rs`): what every change of a row moves,
/// and its expiry (each waiter of a batch compares it with its own `now`). $1 ids
/// (text[]).
pub(super) const CHECK_MANY: &str = "SELECT id, version, lease_generation, lease_until, \
     runner, expires_at FROM tasks WHERE id = ANY($1)";

/// The whole rows of a batch of reads (`cache.rs`), expired or not: each waiter
/// compares `expires_at` with its own `now`. $1 ids (text[]).
pub(super) const READ_MANY: &str = concat!("SELECT ", columns!(), " FROM tasks WHERE id = ANY($1)");
