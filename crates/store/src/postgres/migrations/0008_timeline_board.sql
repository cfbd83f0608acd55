-- The timeline: every status a task entered, for boards and audits. The database writes
-- it itself: the triggers below run inside the statement that inserts a task or changes
-- its status (a transition, fail_orphaned, any later statement, a replica still running
-- the previous version during a rolling upgrade), so an entry exists exactly when its
-- change committed. The status trigger compares OLD and NEW of the row the UPDATE
-- actually wrote: under READ COMMITTED a waiting UPDATE re-reads the row after the
-- concurrent writer commits, and OLD is that re-read row, so racing writers never both
-- record (or both miss) one change. Updates that keep the status (progress messages,
-- leases) add nothing. `version` is the task's version right after the change.
CREATE TABLE task_timeline (
    task_id        TEXT COLLATE "C" NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    version        BIGINT      NOT NULL,
    changed_at     TIMESTAMPTZ NOT NULL,
    status         TEXT        NOT NULL,
    status_message TEXT,
    PRIMARY KEY (task_id, version)
);

-- ON CONFLICT: an entry left at this version must never make a task write fail; the
-- newer entry is the true one.
CREATE FUNCTION tasks_timeline_append() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_timeline (task_id, version, changed_at, status, status_message)
    VALUES (
        NEW.id,
        NEW.version,
        CASE WHEN TG_OP = 'INSERT' THEN NEW.created_at ELSE NEW.last_updated_at END,
        NEW.status,
        NEW.status_message
    )
    ON CONFLICT (task_id, version) DO UPDATE SET
        changed_at = EXCLUDED.changed_at,
        status = EXCLUDED.status,
        status_message = EXCLUDED.status_message;
    RETURN NULL;
END;
$$;

CREATE TRIGGER tasks_timeline_created AFTER INSERT ON tasks
    FOR EACH ROW EXECUTE FUNCTION tasks_timeline_append();
CREATE TRIGGER tasks_timeline_status AFTER UPDATE OF status ON tasks
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION tasks_timeline_append();

-- Tasks that existed before the timeline get one entry: their status as last written.
INSERT INTO task_timeline (task_id, version, changed_at, status, status_message)
SELECT id, version, last_updated_at, status, status_message FROM tasks;

-- board_list across owners: newest first by (created_at, id), walked backwards. (One
-- owner's board walks tasks_owner_created.)
CREATE INDEX tasks_created ON tasks (created_at, id);
