//! Every SQL statement of the PostgreSQL backend, and nowhere else.
//!
//! Each change is one statement, so it is atomic under PostgreSQL's default READ
//! COMMITTED isolation: a conditional `UPDATE` that finds its row locked by a concurrent
//! writer waits, then re-checks its `WHERE` against the committed row, so of two racing
//! compare-and-sets exactly one applies. Batch statements pick their rows with
//! `FOR UPDATE SKIP LOCKED`: two replicas running them at once split the rows instead of
//! waiting on (or deadlocking over) each other. See `migrations/` for the schema.

/// The columns of a full record (the reader looks them up by name).
macro_rules! columns {
    () => {
        "id, owner, session, status, status_message, created_at, last_updated_at, ttl_ms, \
         expires_at, poll_interval_ms, method, request, outcome, runner, version, \
         lease_until, lease_generation, input_requests, external"
    };
}

/// Inserts a record. $1..$19 follow the column list.
pub(super) const CREATE: &str = concat!(
    "INSERT INTO tasks (",
    columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)"
);

/// Reads a visible record. $1 id, $2 now.
pub(super) const GET: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM tasks WHERE id = $1 AND (expires_at IS NULL OR expires_at > $2)"
);

/// One page of one owner's records after a keyset position. $1 owner, $2 now,
/// $3 after created_at (NULL: from the start), $4 after id, $5 limit (page size + 1, to
/// learn `has_more`). The row comparison is an index condition on
/// `tasks_owner_created`, so a deep page costs what the first one does.
pub(super) const LIST_BY_OWNER: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM tasks WHERE owner = $1",
    " AND (created_at, id) > (COALESCE($3, '-infinity'::timestamptz), $4)",
    " AND (expires_at IS NULL OR expires_at > $2)",
    " ORDER BY created_at, id LIMIT $5"
);

/// As [`LIST_BY_OWNER`], restricted to one session: $6 session.
pub(super) const LIST_BY_SESSION: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM tasks WHERE owner = $1 AND session = $6",
    " AND (created_at, id) > (COALESCE($3, '-infinity'::timestamptz), $4)",
    " AND (expires_at IS NULL OR expires_at > $2)",
    " ORDER BY created_at, id LIMIT $5"
);

/// The one-statement compare-and-set of a transition. $1 id, $2 status, $3 whether to
/// replace the message, $4 the new message, $5 outcome JSON or NULL to keep, $6 now,
/// $7 expected version or NULL, $8 expected lease generation or NULL, $9 input
/// requests JSON or NULL to keep.
/// $10 whether to replace the external job, $11 its JSON (NULL removes it).
pub(super) const TRANSITION: &str = concat!(
    "UPDATE tasks SET status = $2,",
    " status_message = CASE WHEN $3 THEN $4 ELSE status_message END,",
    " outcome = COALESCE($5, outcome),",
    " input_requests = COALESCE($9, input_requests),",
    " external = CASE WHEN $10 THEN $11 ELSE external END,",
    " last_updated_at = $6,",
    " version = version + 1",
    " WHERE id = $1",
    " AND status NOT IN ('completed', 'failed', 'cancelled')",
    " AND (expires_at IS NULL OR expires_at > $6)",
    " AND ($7::BIGINT IS NULL OR version = $7)",
    " AND ($8::BIGINT IS NULL OR lease_generation = $8)",
    " RETURNING ",
    columns!()
);

/// Deletes up to $2 records expired at $1, returning their ids. Rows another replica's
/// sweep has locked are skipped, so each id is deleted (and reported) once.
pub(super) const DELETE_EXPIRED: &str = "WITH doomed AS (\
     SELECT id FROM tasks WHERE expires_at IS NOT NULL AND expires_at <= $1 \
     ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) \
     DELETE FROM tasks t USING doomed WHERE t.id = doomed.id \
     RETURNING t.id, t.status, t.external";

/// Fails every running record of another (or no) runner that no live lease holds and
/// that waits on no external job (no process holds those).
/// $1 current runner, $2 status message, $3 outcome JSON, $4 now. Rows locked by a
/// concurrent writer are left to it (they are being changed right now anyway).
pub(super) const FAIL_ORPHANED: &str = "WITH orphans AS (\
     SELECT id FROM tasks WHERE status IN ('working', 'input_required') \
     AND (runner IS NULL OR runner <> $1) \
     AND (lease_until IS NULL OR lease_until <= $4) \
     AND external IS NULL \
     FOR UPDATE SKIP LOCKED) \
     UPDATE tasks t SET status = 'failed', status_message = $2, outcome = $3, \
     input_requests = '{}', last_updated_at = $4, version = t.version + 1 \
     FROM orphans WHERE t.id = orphans.id";

/// Takes a free lease (none, or expired) of a running, visible record. $1 id,
/// $2 runner, $3 until, $4 now. Version and `last_updated_at` stay: no client sees it.
pub(super) const CLAIM_LEASE: &str = concat!(
    "UPDATE tasks SET runner = $2, lease_until = $3, lease_generation = lease_generation + 1",
    " WHERE id = $1",
    " AND status IN ('working', 'input_required')",
    " AND (expires_at IS NULL OR expires_at > $4)",
    " AND (lease_until IS NULL OR lease_until <= $4)",
    " RETURNING ",
    columns!()
);

/// Extends the lease $2 (runner) holds at generation $3 to $4 (until). $1 id, $5 now.
pub(super) const RENEW_LEASE: &str = concat!(
    "UPDATE tasks SET lease_until = $4",
    " WHERE id = $1 AND runner = $2 AND lease_generation = $3",
    " AND status IN ('working', 'input_required')",
    " AND (expires_at IS NULL OR expires_at > $5)",
    " RETURNING ",
    columns!()
);

/// Takes over up to $4 running, visible records whose lease expired at $3 (now),
/// oldest lease first. $1 runner, $2 until. `SKIP LOCKED` hands each expired row to one
/// claimer; a row another claimer committed first no longer matches when re-checked.
pub(super) const CLAIM_EXPIRED: &str = concat!(
    "WITH expired AS (SELECT id FROM tasks",
    " WHERE lease_until IS NOT NULL AND status IN ('working', 'input_required')",
    " AND lease_until <= $3 AND (expires_at IS NULL OR expires_at > $3)",
    " AND external IS NULL",
    " ORDER BY lease_until LIMIT $4 FOR UPDATE SKIP LOCKED)",
    " UPDATE tasks t SET runner = $1, lease_until = $2,",
    " lease_generation = t.lease_generation + 1",
    " FROM expired WHERE t.id = expired.id",
    " RETURNING ",
    "t.id, t.owner, t.session, t.status, t.status_message, t.created_at, t.last_updated_at,",
    " t.ttl_ms, t.expires_at, t.poll_interval_ms, t.method, t.request, t.outcome, t.runner,",
    " t.version, t.lease_until, t.lease_generation, t.input_requests, t.external"
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
