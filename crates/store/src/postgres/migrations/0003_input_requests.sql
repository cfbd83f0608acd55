-- Outstanding input requests (elicitation, sampling, ...) of a task, as a JSON object keyed
-- by request key, stored as TEXT like the other JSON columns. Kept in the store so a
-- reconnecting client is asked again.
ALTER TABLE tasks ADD COLUMN input_requests TEXT NOT NULL DEFAULT '{}';
