//! The statements of the SQL backends, built once per backend from the text they share
//! and the [`Dialect`] in which they differ.
//!
//! The shared text numbers its parameters `?1`, `?2`, ... (so a value can be used
//! twice); [`Dialect::parameter`] replaces the `?`. Each change is one statement, so it
//! is atomic (the backends' `queries.rs` say why).

/// The columns of a full record (the readers look them up by name).
macro_rules! columns {
    () => {
        "id, owner, session, status, status_message, created_at, last_updated_at, ttl_ms, \
         expires_at, poll_interval_ms, method, request, outcome, runner, version, \
         lease_until, lease_generation, input_requests, external"
    };
}
pub(crate) use columns;

/// What the SQL of one backend does its own way.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// What precedes a parameter's number: `?` (SQLite) or `$` (PostgreSQL).
    pub(crate) parameter: &'static str,
    /// A time literal before every stored time: where a list without a cursor starts.
    pub(crate) earliest_time: &'static str,
    /// The batch changes, which pick their rows as the backend's locking allows:
    /// deletes up to ?2 records expired at ?1, returning `id, status, external`.
    pub(crate) delete_expired: &'static str,
    /// Fails every running record of another (or no) runner that no live lease holds
    /// and that waits on no external job (no process holds those). ?1 current runner,
    /// ?2 status message, ?3 outcome JSON, ?4 now.
    pub(crate) fail_orphaned: &'static str,
    /// Takes over up to ?4 running, visible records without an external job whose
    /// lease expired at ?3 (now), oldest lease first, returning them. ?1 runner,
    /// ?2 until.
    pub(crate) claim_expired: &'static str,
}

impl Dialect {
    /// `sql` with the dialect's parameter syntax.
    fn numbered(&self, sql: &str) -> String {
        sql.replace('?', self.parameter)
    }
}

/// Every statement of a backend that writes records.
#[derive(Debug)]
pub(crate) struct Statements {
    /// Inserts a record. ?1..?19 follow the column list.
    pub(crate) create: String,
    /// Reads a visible record. ?1 id, ?2 now.
    pub(crate) get: String,
    /// One page of one owner's records after a keyset position. ?1 owner, ?2 now,
    /// ?3 after created_at (NULL: from the start), ?4 after id, ?5 limit (one more than
    /// the page, to learn `has_more`). The row comparison is an index condition on
    /// `tasks_owner_created`, so a deep page costs what the first one does.
    pub(crate) list_by_owner: String,
    /// As `list_by_owner`, restricted to one session: ?6 session.
    pub(crate) list_by_session: String,
    /// The compare-and-set of a transition. ?1 id, ?2 status, ?3 whether to replace
    /// the message, ?4 the new message, ?5 outcome JSON or NULL to keep, ?6 now,
    /// ?7 expected version or NULL, ?8 expected lease generation or NULL, ?9 input
    /// requests JSON or NULL to keep, ?10 whether to replace the external job, ?11 its
    /// JSON (NULL removes it).
    pub(crate) transition: String,
    /// Takes a free lease (none, or expired) of a running, visible record. ?1 id,
    /// ?2 runner, ?3 until, ?4 now. Version and `last_updated_at` stay: no client
    /// sees it.
    pub(crate) claim_lease: String,
    /// Extends the lease ?2 (runner) holds at generation ?3 to ?4 (until). ?1 id,
    /// ?5 now.
    pub(crate) renew_lease: String,
    /// See [`Dialect::delete_expired`].
    pub(crate) delete_expired: &'static str,
    /// See [`Dialect::fail_orphaned`].
    pub(crate) fail_orphaned: &'static str,
    /// See [`Dialect::claim_expired`].
    pub(crate) claim_expired: &'static str,
}

const CREATE: &str = concat!(
    "INSERT INTO tasks (",
    columns!(),
    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,",
    " ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
);

const GET: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM tasks WHERE id = ?1 AND (expires_at IS NULL OR expires_at > ?2)"
);

const TRANSITION: &str = concat!(
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
    " AND (CAST(?7 AS BIGINT) IS NULL OR version = ?7)",
    " AND (CAST(?8 AS BIGINT) IS NULL OR lease_generation = ?8)",
    " RETURNING ",
    columns!()
);

const CLAIM_LEASE: &str = concat!(
    "UPDATE tasks SET runner = ?2, lease_until = ?3, lease_generation = lease_generation + 1",
    " WHERE id = ?1",
    " AND status IN ('working', 'input_required')",
    " AND (expires_at IS NULL OR expires_at > ?4)",
    " AND (lease_until IS NULL OR lease_until <= ?4)",
    " RETURNING ",
    columns!()
);

const RENEW_LEASE: &str = concat!(
    "UPDATE tasks SET lease_until = ?4",
    " WHERE id = ?1 AND runner = ?2 AND lease_generation = ?3",
    " AND status IN ('working', 'input_required')",
    " AND (expires_at IS NULL OR expires_at > ?5)",
    " RETURNING ",
    columns!()
);

impl Statements {
    pub(crate) fn new(dialect: &Dialect) -> Self {
        Self {
            create: dialect.numbered(CREATE),
            get: dialect.numbered(GET),
            list_by_owner: dialect.numbered(&list(dialect, "")),
            list_by_session: dialect.numbered(&list(dialect, " AND session = ?6")),
            transition: dialect.numbered(TRANSITION),
            claim_lease: dialect.numbered(CLAIM_LEASE),
            renew_lease: dialect.numbered(RENEW_LEASE),
            delete_expired: dialect.delete_expired,
            fail_orphaned: dialect.fail_orphaned,
            claim_expired: dialect.claim_expired,
        }
    }
}

/// A page of [`Statements::list_by_owner`], narrowed by `filter`.
fn list(dialect: &Dialect, filter: &str) -> String {
    format!(
        "SELECT {columns} FROM tasks WHERE owner = ?1{filter} \
         AND (created_at, id) > (COALESCE(?3, {earliest}), ?4) \
         AND (expires_at IS NULL OR expires_at > ?2) \
         ORDER BY created_at, id LIMIT ?5",
        columns = columns!(),
        earliest = dialect.earliest_time,
    )
}
