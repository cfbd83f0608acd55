//! Every SQL statement of the SQLite backend, and nowhere else.
//!
//! Parameters are numbered (`?1`, `?2`, ...) so a value can be used twice. Times and
//! durations are integer milliseconds; see `migrations/0001_init.sql` and
//! `migrations/0002_leases.sql`.

/// The columns of a full record (the reader looks them up by name).
macro_rules! columns {
    () => {
        "id, owner, session, status, status_message, created_at, last_updated_at, ttl_ms, \
         expires_at, poll_interval_ms, method, request, outcome, runner, version, \
         lease_until, lease_generation, input_requests, external"
    };
}

/// Inserts a record. ?1..?19 follow the column list.
pub(super) const CREATE: &str = concat!(
    "INSERT INTO tasks (",
    columns!(),
    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
);

/// Reads a visible record. ?1 id, ?2 now.
pub(super) const GET: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM tasks WHERE id = ?1 AND (expires_at IS NULL OR expires_at > ?2)"
);

/// One page of one owner's records after a keyset position. ?1 owner, ?2 now,
/// ?3 after created_at, ?4 after id, ?5 limit (page size + 1, to learn `has_more`).
pub(super) const LIST_BY_OWNER: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM tasks WHERE owner = ?1 AND (created_at, id) > (?3, ?4)",
    " AND (expires_at IS NULL OR expires_at > ?2)",
    " ORDER BY created_at, id LIMIT ?5"
);

/// As [`LIST_BY_OWNER`], restricted to one session: ?6 session.
pub(super) const LIST_BY_SESSION: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM tasks WHERE owner = ?1 AND session = ?6 AND (created_at, id) > (?3, ?4)",
    " AND (expires_at IS NULL OR expires_at > ?2)",
    " ORDER BY created_at, id LIMIT ?5"
);

/// The one-statement compare-and-set of a transition. ?1 id, ?2 status, ?3 whether to
/// replace the message (0/1), ?4 the new message, ?5 outcome JSON or NULL to keep,
/// ?6 now, ?7 expected version or NULL, ?8 expected lease generation or NULL,
/// ?9 input requests JSON or NULL to keep.
/// ?10 whether to replace the external job, ?11 its JSON (NULL removes it).
pub(super) const TRANSITION: &str = concat!(
    "UPDATE tasks SET status = ?2,",
    " status_message = CASE WHEN ?3 THEN ?4 ELSE status_message END,",
    " outcome = COALESCE(?5, outcome),",
    " input_requests = COALESCE(?9, input_requests),",
    " external = CASE WHEN ?10 THEN ?11 ELSE external END,",
    " last_updated_at = ?6,",
    " version = version + 1",
    " WHERE id = ?1",
    " AND status NOT IN ('completed', 'failed', 'cancelled')",
    " AND (expires_at IS NULL OR expires_at > ?6)",
    " AND (?7 IS NULL OR version = ?7)",
    " AND (?8 IS NULL OR lease_generation = ?8)",
    " RETURNING ",
    columns!()
);

/// Deletes up to ?2 records expired at ?1, returning their ids.
pub(super) const DELETE_EXPIRED: &str = "DELETE FROM tasks WHERE id IN (\
     SELECT id FROM tasks WHERE expires_at IS NOT NULL AND expires_at <= ?1 \
     ORDER BY expires_at LIMIT ?2) RETURNING id, status, external";

/// Fails every running record of another (or no) runner that no live lease holds and
/// that waits on no external job (no process holds those).
/// ?1 current runner, ?2 status message, ?3 outcome JSON, ?4 now.
pub(super) const FAIL_ORPHANED: &str = "UPDATE tasks SET status = 'failed', \
     status_message = ?2, outcome = ?3, input_requests = '{}', last_updated_at = ?4, \
     version = version + 1 \
     WHERE status IN ('working', 'input_required') \
     AND (runner IS NULL OR runner <> ?1) \
     AND (lease_until IS NULL OR lease_until <= ?4) \
     AND external IS NULL";

/// Takes a free lease (none, or expired) of a running, visible record. ?1 id,
/// ?2 runner, ?3 until, ?4 now. Version and `last_updated_at` stay: no client sees it.
pub(super) const CLAIM_LEASE: &str = concat!(
    "UPDATE tasks SET runner = ?2, lease_until = ?3, lease_generation = lease_generation + 1",
    " WHERE id = ?1",
    " AND status IN ('working', 'input_required')",
    " AND (expires_at IS NULL OR expires_at > ?4)",
    " AND (lease_until IS NULL OR lease_until <= ?4)",
    " RETURNING ",
    columns!()
);

/// Extends the lease ?2 (runner) holds at generation ?3 to ?4 (until). ?1 id, ?5 now.
pub(super) const RENEW_LEASE: &str = concat!(
    "UPDATE tasks SET lease_until = ?4",
    " WHERE id = ?1 AND runner = ?2 AND lease_generation = ?3",
    " AND status IN ('working', 'input_required')",
    " AND (expires_at IS NULL OR expires_at > ?5)",
    " RETURNING ",
    columns!()
);

/// Takes over up to ?4 running, visible records whose lease expired at ?3 (now),
/// oldest lease first. ?1 runner, ?2 until. One statement under SQLite's single write
/// lock, so concurrent claimers never take the same record. Without statistics the
/// planner would prefer `tasks_active` (every running task, then a sort): the lease
/// index is named so the walk stays O(expired).
pub(super) const CLAIM_EXPIRED: &str = concat!(
    "UPDATE tasks SET runner = ?1, lease_until = ?2, lease_generation = lease_generation + 1",
    " WHERE id IN (SELECT id FROM tasks INDEXED BY tasks_lease_until",
    " WHERE lease_until IS NOT NULL AND status IN ('working', 'input_required')",
    " AND lease_until <= ?3 AND (expires_at IS NULL OR expires_at > ?3)",
    " AND external IS NULL",
    " ORDER BY lease_until LIMIT ?4)",
    " RETURNING ",
    columns!()
);
