-- One row per task. Times are TIMESTAMPTZ (callers pass whole milliseconds), durations
-- BIGINT milliseconds, JSON as TEXT: kept byte for byte, as SQLite keeps it (jsonb
-- would reorder keys and refuses \u0000). `version` is the compare-and-set key.
-- `id` compares bytewise (COLLATE "C"), so keyset pages order ids as every backend does.
CREATE TABLE tasks (
    id               TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    owner            TEXT        NOT NULL,
    session          TEXT,
    status           TEXT        NOT NULL
        CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    status_message   TEXT,
    created_at       TIMESTAMPTZ NOT NULL,
    last_updated_at  TIMESTAMPTZ NOT NULL,
    ttl_ms           BIGINT,
    expires_at       TIMESTAMPTZ,
    poll_interval_ms BIGINT,
    method           TEXT        NOT NULL,
    request          TEXT        NOT NULL,
    outcome          TEXT,
    runner           TEXT,
    version          BIGINT      NOT NULL
);

-- The sweeper: delete_expired walks only records that expire.
CREATE INDEX tasks_expires_at ON tasks (expires_at) WHERE expires_at IS NOT NULL;

-- list: keyset pages per owner, and per owner and session.
CREATE INDEX tasks_owner_created ON tasks (owner, created_at, id);
CREATE INDEX tasks_owner_session_created ON tasks (owner, session, created_at, id)
    WHERE session IS NOT NULL;

-- fail_orphaned at start-up: only the tasks still running.
CREATE INDEX tasks_active ON tasks (status) WHERE status IN ('working', 'input_required');

-- The change feed: every insert, delete, and update that bumps `version` (what a
-- client can see) notifies the task id, in the writing transaction, so it is delivered
-- exactly when the change commits. The channel is per schema (hashed to fit
-- PostgreSQL's 63-byte limit), so stores in different schemas do not hear each other.
CREATE FUNCTION tasks_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(
        'mcp_tasks_' || md5(TG_TABLE_SCHEMA),
        CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END
    );
    RETURN NULL;
END;
$$;

CREATE TRIGGER tasks_changed AFTER INSERT OR DELETE ON tasks
    FOR EACH ROW EXECUTE FUNCTION tasks_notify_change();
CREATE TRIGGER tasks_changed_version AFTER UPDATE ON tasks
    FOR EACH ROW WHEN (OLD.version IS DISTINCT FROM NEW.version)
    EXECUTE FUNCTION tasks_notify_change();
