-- The outbox of webhook deliveries (see the store's `delivery` module), shared by the
-- replicas. `key` names one event at one destination, so replicas enqueueing the same
-- event keep one row; finished rows stay (finished_at set) until purged so the key stays
-- taken. A delivery is claimed by `claimed_by` until `claimed_until` (claims pick rows
-- with FOR UPDATE SKIP LOCKED); `attempts` counts the claims. The payload is opaque JSON
-- text. `key` compares bytewise (COLLATE "C"), so claims order keys as every backend does.
CREATE TABLE deliveries (
    key             TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    sink            TEXT        NOT NULL,
    payload         TEXT        NOT NULL,
    attempts        BIGINT      NOT NULL DEFAULT 0,
    created_at      TIMESTAMPTZ NOT NULL,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    last_error      TEXT,
    claimed_by      TEXT,
    claimed_until   TIMESTAMPTZ,
    finished_at     TIMESTAMPTZ
);

-- claim_deliveries and pending_deliveries: only unfinished deliveries, by due time.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, key) WHERE finished_at IS NULL;

-- purge_deliveries: only finished deliveries, by finish time.
CREATE INDEX deliveries_finished ON deliveries (finished_at) WHERE finished_at IS NOT NULL;
