-- Leases for several runners sharing one database: who holds a running task until when
-- (`runner` already names the holder), and a generation bumped on every claim that
-- fences writes from a runner whose lease was taken over. Existing rows are unleased.
ALTER TABLE tasks ADD COLUMN lease_until INTEGER;
ALTER TABLE tasks ADD COLUMN lease_generation INTEGER NOT NULL DEFAULT 0;

-- claim_expired_leases: only running tasks that hold a lease, oldest expiry first.
CREATE INDEX tasks_lease_until ON tasks (lease_until)
    WHERE lease_until IS NOT NULL AND status IN ('working', 'input_required');
