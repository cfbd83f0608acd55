-- When a shared session was last known to be in use: set when it is stored, renewed by
-- the replicas holding it while it is alive, so that sessions whose clients left
-- without DELETE can be deleted once idle for the server's session timeout. The default
-- keeps inserts of replicas still running the previous version working during a
-- rolling upgrade.
ALTER TABLE sessions ADD COLUMN last_seen_at TIMESTAMPTZ NOT NULL DEFAULT now();
UPDATE sessions SET last_seen_at = created_at;
CREATE INDEX sessions_by_last_seen ON sessions (last_seen_at);
