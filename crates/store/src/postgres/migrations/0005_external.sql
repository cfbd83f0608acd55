-- The external job a task waits on (a job started in another system, polled when the
-- task is read), as JSON `{"kind": ..., "state": ...}` stored as TEXT like the other JSON
-- columns; NULL for tasks whose work runs in a process. fail_orphaned and
-- claim_expired_leases skip rows that have one.
ALTER TABLE tasks ADD COLUMN external TEXT;
