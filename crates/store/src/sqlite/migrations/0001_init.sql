-- One row per task. Times are INTEGER milliseconds since the Unix epoch (UTC), durations
-- INTEGER milliseconds, JSON as TEXT. `version` is the compare-and-set key of transitions.
CREATE TABLE tasks (
    id               TEXT    NOT NULL PRIMARY KEY,
    owner            TEXT    NOT NULL,
    session          TEXT,
    status           TEXT    NOT NULL
        CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    status_message   TEXT,
    created_at       INTEGER NOT NULL,
    last_updated_at  INTEGER NOT NULL,
    ttl_ms           INTEGER,
    expires_at       INTEGER,
    poll_interval_ms INTEGER,
    method           TEXT    NOT NULL,
    request          TEXT    NOT NULL,
    outcome          TEXT,
    runner           TEXT,
    version          INTEGER NOT NULL
);

-- The sweeper: delete_expired walks only records that expire.
CREATE INDEX tasks_expires_at ON tasks (expires_at) WHERE expires_at IS NOT NULL;

-- list: keyset pages per owner, and per owner and session.
CREATE INDEX tasks_owner_created ON tasks (owner, created_at, id);
CREATE INDEX tasks_owner_session_created ON tasks (owner, session, created_at, id)
    WHERE session IS NOT NULL;

-- fail_orphaned at start-up: only the tasks still running.
CREATE INDEX tasks_active ON tasks (status) WHERE status IN ('working', 'input_required');
