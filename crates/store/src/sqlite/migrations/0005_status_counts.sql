-- Tasks per status for the metrics gauge (TaskStore::count_by_status): a covering
-- index, so the count reads this index and never the records with their JSON.
CREATE INDEX tasks_status_expires ON tasks (status, expires_at);
