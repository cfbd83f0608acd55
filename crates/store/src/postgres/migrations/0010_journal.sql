-- The journal of a task's work (the store's `journal` module): the output of every step
-- that finished, so that work run again skips it. `step` is the step's name and
-- occurrence; the first recording wins (the primary key). The journal goes with its
-- task.
CREATE TABLE task_journal (
    task_id     TEXT COLLATE "C" NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    step        TEXT        NOT NULL,
    attempt     BIGINT      NOT NULL,
    output      TEXT        NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (task_id, step)
);
