-- Tasks per status for the metrics gauge (TaskStore::count_by_status): a covering
-- index, so the count can be an index-only scan that never reads the records.
CREATE INDEX tasks_status_expires ON tasks (status, expires_at);
