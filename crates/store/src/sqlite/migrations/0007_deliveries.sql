-- The outbox of webhook deliveries (see the store's `delivery` module). `key` names one
-- event at one destination, so enqueueing the same event twice (from two processes)
-- keeps one row; finished rows stay (finished_at set) until purged so the key stays
-- taken. A delivery is claimed by `claimed_by` until `claimed_until`; `attempts` counts
-- the claims. Times are INTEGER milliseconds; the payload is opaque JSON text.
CREATE TABLE deliveries (
    key             TEXT    NOT NULL PRIMARY KEY,
    sink            TEXT    NOT NULL,
    payload         TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    last_error      TEXT,
    claimed_by      TEXT,
    claimed_until   INTEGER,
    finished_at     INTEGER
);

-- claim_deliveries and pending_deliveries: only unfinished deliveries, by due time.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, key) WHERE finished_at IS NULL;

-- purge_deliveries: only finished deliveries, by finish time.
CREATE INDEX deliveries_finished ON deliveries (finished_at) WHERE finished_at IS NOT NULL;
