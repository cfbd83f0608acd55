//! The statements of the SQL backends, built once per backend from the text they share
//! and the [`Dialect`] in which they differ.
//!
//! The shared text numbers its parameters `?1`, `?2`, ... (so a value can be used
//! twice); [`Dialect::parameter`] replaces the `?`. Each change is one statement, so it
//! is atomic (the backends' `queries.rs` say why).
//!
//! No statement here writes a task's timeline: triggers of the schema append it
//! whenever a task is inserted or its status changes, inside the writing statement (see
//! the backends' `migrations/`), so every status change is recorded, whichever
//! statement (or older replica) makes it.

/// The columns of a full record (the readers look them up by name).
macro_rules! columns {
    () => {
        "id, owner, session, status, status_message, created_at, last_updated_at, ttl_ms, \
         expires_at, poll_interval_ms, method, request, outcome, runner, version, \
         lease_until, lease_generation, input_requests, external"
    };
}
pub(crate) use columns;

/// The columns of a delivery as a claim returns it (the readers look them up by name).
macro_rules! delivery_columns {
    () => {
        "key, sink, payload, attempts, created_at, next_attempt_at, last_error"
    };
}
pub(crate) use delivery_columns;

/// A condition true when the runner of the `tasks` row in scope has no live heartbeat
/// at the parameter `$now` (`"?3"`, `"$4"`): no row in `runners` (a released task has
/// no runner at all), or a row whose `alive_until` has passed. See [`crate::runner`].
macro_rules! runner_not_alive {
    ($now:literal) => {
        concat!(
            "NOT EXISTS (SELECT 1 FROM runners WHERE runners.id = tasks.runner",
            " AND runners.alive_until > ",
            $now,
            ")"
        )
    };
}
pub(crate) use runner_not_alive;

/// What the SQL of one backend does its own way.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// What precedes a parameter's number: `?` (SQLite) or `$` (PostgreSQL).
    pub(crate) parameter: &'static str,
    /// A time literal before every stored time: where a list without a cursor starts.
    pub(crate) earliest_time: &'static str,
    /// A time literal after every stored time: where a board without a cursor starts.
    pub(crate) latest_time: &'static str,
    /// What names the index a count of tasks by status reads (SQLite's planner needs
    /// it named, with a space after), or nothing.
    pub(crate) status_index: &'static str,
    /// A condition true when the stored request's `name` is a string equal to ?6 (the
    /// board's tool filter). Evaluated only when ?6 is set.
    pub(crate) request_name_is: &'static str,
    /// The batch changes, which pick their rows as the backend's locking allows:
    /// deletes up to ?2 records expired at ?1, returning `id, status, external`.
    pub(crate) delete_expired: &'static str,
    /// Fails every running record of another (or no) runner that no live lease holds
    /// (a lease that has not passed, or a runner that is alive) and that waits on no external job (no process holds those). ?1 current runner,
    /// ?2 status message, ?3 outcome JSON, ?4 now.
    pub(crate) fail_orphaned: &'static str,
    /// Fails up to ?5 records still `input_required` whose expiry passed at ?1 (now),
    /// oldest expiry first: status message ?2, outcome JSON ?3, no questions left, and
    /// a new expiry ?4 so that the outcome stays readable; returns their `id`s.
    pub(crate) settle_expired_waiting: &'static str,
    /// Takes over up to ?4 running, visible records without an external job whose
    /// lease expired at ?3 (now) and whose runner is not alive, oldest lease first, returning them. ?1 runner,
    /// ?2 until.
    pub(crate) claim_expired: &'static str,
    /// Claims up to ?4 unfinished deliveries due at ?3 (now) under no live claim,
    /// oldest due first, for ?1 (runner) until ?2, counting an attempt; returns
    /// `delivery_columns!` (in no particular order).
    pub(crate) claim_deliveries: &'static str,
}

impl Dialect {
    /// `sql` with the dialect's parameter syntax.
    pub(crate) fn numbered(&self, sql: &str) -> String {
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
    /// Takes a free lease (none, or expired with its runner not alive) of a running,
    /// visible record. ?1 id,
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
    /// See [`Dialect::settle_expired_waiting`].
    pub(crate) settle_expired_waiting: &'static str,
    /// See [`Dialect::claim_expired`].
    pub(crate) claim_expired: &'static str,
    /// A task's timeline, oldest first. ?1 id.
    pub(crate) timeline: String,
    /// One board page across owners, newest first, before a keyset position. ?1 now,
    /// ?2 before created_at (NULL: from the newest), ?3 before id, ?4 status or NULL,
    /// ?5 id prefix or NULL, ?6 request name or NULL, ?7 limit (one more than the page).
    /// Walks `tasks_created` backwards; the filters are checked on the rows it meets.
    pub(crate) board_all: String,
    /// As `board_all`, for one owner (?8), walking `tasks_owner_created` backwards.
    pub(crate) board_by_owner: String,
    /// How many rows `board_all` would return over all its pages, counted up to ?5:
    /// ?1 now, ?2 status or NULL, ?3 id prefix or NULL, ?4 request name or NULL.
    pub(crate) board_count_all: String,
    /// As `board_count_all`, for one owner (?6).
    pub(crate) board_count_by_owner: String,
    /// As `board_count_all` for one status (?2, not NULL): `status = ?2` lets the
    /// store walk an index on the status, so a rare status costs no walk past the
    /// tasks in it.
    pub(crate) board_count_status_all: String,
    /// As `board_count_status_all`, for one owner (?6).
    pub(crate) board_count_status_by_owner: String,
    /// Inserts a delivery unless its key exists. ?1 key, ?2 sink, ?3 payload,
    /// ?4 created at (also when it is due).
    pub(crate) enqueue_delivery: String,
    /// See [`Dialect::claim_deliveries`].
    pub(crate) claim_deliveries: &'static str,
    /// Finishes the delivery ?1 if ?2 (runner) holds it: finished at ?3, with the error
    /// ?4 (NULL keeps the last one).
    pub(crate) finish_delivery: String,
    /// Hands the delivery ?1 back if ?2 (runner) holds it: due again at ?3, failed
    /// with ?4, claim released.
    pub(crate) retry_delivery: String,
    /// The statements of runner liveness (`runners.rs`).
    pub(crate) runners: super::runners::RunnerStatements,
    /// Counts the unfinished deliveries, as `n`.
    pub(crate) pending_deliveries: String,
    /// Deletes the deliveries finished before ?1.
    pub(crate) purge_deliveries: String,
    /// How many visible tasks there are in each status, as `status, n`: ?1 now. Expired
    /// records the sweeper has not deleted yet are not counted (clients cannot see them
    /// either). One grouped count over the covering index on `(status, expires_at)`,
    /// never over the records themselves.
    pub(crate) count_by_status: String,
    /// The journal of finished steps (`sql/journal.rs`).
    pub(crate) journal: super::journal::JournalStatements,
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
    // A task that ends while it waits drops the message of its wait (see
    // `TransitionParams::status_message`); SET reads the row as it was.
    " status_message = CASE WHEN ?3 THEN ?4",
    " WHEN status = 'input_required' AND ?2 IN ('completed', 'failed', 'cancelled') THEN NULL",
    " ELSE status_message END,",
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
    " AND (lease_until IS NULL OR (lease_until <= ?4 AND ",
    runner_not_alive!("?4"),
    "))",
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

const TIMELINE: &str = "SELECT task_id, version, changed_at, status, status_message \
     FROM task_timeline WHERE task_id = ?1 ORDER BY version";

const ENQUEUE_DELIVERY: &str = "INSERT INTO deliveries \
     (key, sink, payload, attempts, created_at, next_attempt_at) \
     VALUES (?1, ?2, ?3, 0, ?4, ?4) ON CONFLICT (key) DO NOTHING";

const FINISH_DELIVERY: &str = "UPDATE deliveries \
     SET finished_at = ?3, last_error = COALESCE(?4, last_error) \
     WHERE key = ?1 AND claimed_by = ?2 AND finished_at IS NULL";

const RETRY_DELIVERY: &str = "UPDATE deliveries \
     SET next_attempt_at = ?3, last_error = ?4, claimed_by = NULL, claimed_until = NULL \
     WHERE key = ?1 AND claimed_by = ?2 AND finished_at IS NULL";

const PENDING_DELIVERIES: &str = "SELECT COUNT(*) AS n FROM deliveries WHERE finished_at IS NULL";

const PURGE_DELIVERIES: &str =
    "DELETE FROM deliveries WHERE finished_at IS NOT NULL AND finished_at < ?1";

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
            settle_expired_waiting: dialect.settle_expired_waiting,
            claim_expired: dialect.claim_expired,
            timeline: dialect.numbered(TIMELINE),
            board_all: dialect.numbered(&board(dialect, "")),
            board_by_owner: dialect.numbered(&board(dialect, "owner = ?8 AND ")),
            board_count_all: dialect.numbered(&board_count(dialect, "", ANY_STATUS)),
            board_count_by_owner: dialect.numbered(&board_count(
                dialect,
                "owner = ?6 AND ",
                ANY_STATUS,
            )),
            board_count_status_all: dialect.numbered(&board_count(dialect, "", ONE_STATUS)),
            board_count_status_by_owner: dialect.numbered(&board_count(
                dialect,
                "owner = ?6 AND ",
                ONE_STATUS,
            )),
            enqueue_delivery: dialect.numbered(ENQUEUE_DELIVERY),
            claim_deliveries: dialect.claim_deliveries,
            finish_delivery: dialect.numbered(FINISH_DELIVERY),
            retry_delivery: dialect.numbered(RETRY_DELIVERY),
            runners: super::runners::RunnerStatements::new(|sql| dialect.numbered(sql)),
            pending_deliveries: dialect.numbered(PENDING_DELIVERIES),
            purge_deliveries: dialect.numbered(PURGE_DELIVERIES),
            count_by_status: dialect.numbered(&format!(
                "SELECT status, COUNT(*) AS n FROM tasks {}\
                 WHERE expires_at IS NULL OR expires_at > ?1 GROUP BY status",
                dialect.status_index
            )),
            journal: super::journal::JournalStatements::new(dialect),
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

/// A page of [`Statements::board_all`], narrowed by `owner` (a condition and `AND`, or
/// nothing). The id prefix is compared as a substring, never as a `LIKE` pattern, so
/// `%` and `_` in it are literal. The tool filter sits in a `CASE` so that the request
/// JSON is parsed only when that filter is set.
fn board(dialect: &Dialect, owner: &str) -> String {
    format!(
        "SELECT {columns} FROM tasks WHERE {conditions} \
         ORDER BY created_at DESC, id DESC LIMIT ?7",
        columns = columns!(),
        conditions = board_conditions(dialect, owner),
    )
}

/// A count's status condition when it may be NULL (any status).
const ANY_STATUS: &str = "(CAST(?2 AS TEXT) IS NULL OR status = ?2)";
/// A count's status condition for one status: a plain equality, which an index on
/// `status` serves.
const ONE_STATUS: &str = "status = ?2";

/// The rows of [`board`] (every page of it), counted up to ?5: the inner `LIMIT`
/// stops the walk once that many match. Without a keyset position (a count has no
/// page), and numbered apart from [`board`] (the request-name condition's `?6`
/// becomes `?4`).
fn board_count(dialect: &Dialect, owner: &str, status: &str) -> String {
    format!(
        "SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM tasks WHERE {owner}{status} \
         AND (expires_at IS NULL OR expires_at > ?1) \
         AND (CAST(?3 AS TEXT) IS NULL OR substr(id, 1, length(?3)) = ?3) \
         AND CASE WHEN CAST(?4 AS TEXT) IS NULL THEN TRUE ELSE ({request_name}) END \
         LIMIT ?5) AS capped",
        request_name = dialect.request_name_is.replace("?6", "?4"),
    )
}

/// The `WHERE` of [`board`].
fn board_conditions(dialect: &Dialect, owner: &str) -> String {
    format!(
        "{owner}(created_at, id) < (COALESCE(?2, {latest}), ?3) \
         AND (expires_at IS NULL OR expires_at > ?1) \
         AND (CAST(?4 AS TEXT) IS NULL OR status = ?4) \
         AND (CAST(?5 AS TEXT) IS NULL OR substr(id, 1, length(?5)) = ?5) \
         AND CASE WHEN CAST(?6 AS TEXT) IS NULL THEN TRUE ELSE ({request_name}) END",
        latest = dialect.latest_time,
        request_name = dialect.request_name_is,
    )
}
