-- The timeline: every status a task entered, for boards and audits. The database writes
-- it itself: the triggers below run inside the statement that inserts a task or changes
-- its status (a transition, fail_orphaned, any later statement), so an entry exists
-- exactly when its change committed and no write path can forget it. Updates that keep
-- the status (progress messages, leases) add nothing. `changed_at` is INTEGER
-- milliseconds like every time; `version` is the task's version right after the change.
CREATE TABLE task_timeline (
    task_id        TEXT    NOT NULL,
    version        INTEGER NOT NULL,
    changed_at     INTEGER NOT NULL,
    status         TEXT    NOT NULL,
    status_message TEXT,
    PRIMARY KEY (task_id, version)
) WITHOUT ROWID;

-- OR REPLACE: an entry left at this version by an earlier task of the same id must never
-- make a task write fail; the newer entry is the true one.
CREATE TRIGGER tasks_timeline_created AFTER INSERT ON tasks
BEGIN
    INSERT OR REPLACE INTO task_timeline (task_id, version, changed_at, status, status_message)
    VALUES (NEW.id, NEW.version, NEW.created_at, NEW.status, NEW.status_message);
END;

CREATE TRIGGER tasks_timeline_status AFTER UPDATE OF status ON tasks
    WHEN OLD.status IS NOT NEW.status
BEGIN
    INSERT OR REPLACE INTO task_timeline (task_id, version, changed_at, status, status_message)
    VALUES (NEW.id, NEW.version, NEW.last_updated_at, NEW.status, NEW.status_message);
END;

-- The history goes with its task (expiry, or any other delete). A trigger rather than a
-- foreign key: SQLite enforces those only on connections that enable them.
CREATE TRIGGER tasks_timeline_deleted AFTER DELETE ON tasks
BEGIN
    DELETE FROM task_timeline WHERE task_id = OLD.id;
END;

-- Tasks that existed before the timeline get one entry: their status as last written.
INSERT INTO task_timeline (task_id, version, changed_at, status, status_message)
SELECT id, version, last_updated_at, status, status_message FROM tasks;

-- board_list across owners: newest first by (created_at, id), walked backwards. (One
-- owner's board walks tasks_owner_created.)
CREATE INDEX tasks_created ON tasks (created_at, id);
