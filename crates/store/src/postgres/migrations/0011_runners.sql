-- Runner liveness (issue #30): one row per server process on this database, kept
-- alive by one heartbeat write per interval instead of a lease renewal per running
-- task. A task is up for takeover once its lease (`lease_until`, granted by the claim)
-- has passed and its runner has no row here, or a row whose `alive_until` has passed.
-- `host`, `pid` and `process_start` let a process starting on the same host tell at
-- once that a predecessor is gone.
CREATE TABLE runners (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid BIGINT NOT NULL,
    process_start TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    alive_until TIMESTAMPTZ NOT NULL
);

-- runners_on_host: the rows of one host.
CREATE INDEX runners_host ON runners (host);

-- reap_runner: the running tasks of one runner.
CREATE INDEX tasks_runner ON tasks (runner)
    WHERE status IN ('working', 'input_required');
