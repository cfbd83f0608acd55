-- When a shared session was last known to be in use: set when it is stored, renewed by
-- the replicas holding it while it is alive, so that sessions whose clients left
-- without DELETE can be deleted once idle for the server's session timeout.
ALTER TABLE sessions ADD COLUMN last_seen_at TIMESTAMPTZ;
UPDATE sessions SET last_seen_at = created_at;
ALTER TABLE sessions ALTER COLUMN last_seen_at SET NOT NULL;
CREATE INDEX sessions_by_last_seen ON sessions (last_seen_at);
