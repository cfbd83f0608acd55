-- The journal of a task's work (the store's `journal` module): the output of every step
-- that finished, so that work run again skips it. `step` is the step's name and
-- occurrence; the first recording wins (the primary key). `output` is JSON text;
-- `recorded_at` INTEGER milliseconds like every time.
CREATE TABLE task_journal (
    task_id     TEXT    NOT NULL,
    step        TEXT    NOT NULL,
    attempt     INTEGER NOT NULL,
    output      TEXT    NOT NULL,
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, step)
) WITHOUT ROWID;

-- The journal goes with its task (expiry, or any other delete). A trigger rather than a
-- foreign key: SQLite enforces those only on connections that enable them.
CREATE TRIGGER tasks_journal_deleted AFTER DELETE ON tasks
BEGIN
    DELETE FROM task_journal WHERE task_id = OLD.id;
END;
