-- The change feed carries the version a change committed (issue #34): a replica that
-- made the change itself, or already read that version, skips the re-read it would
-- otherwise make for every notification, its own creations included (one read per
-- created task). The payload is `ID VERSION` for inserts and updates, `ID` alone for
-- deletes. Ids never contain a space. A replica of an older version reads the whole
-- payload as an id, finds no such task and learns of the change only from its
-- periodic re-read, so upgrade every replica.
CREATE OR REPLACE FUNCTION tasks_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(
        'mcp_tasks_' || md5(TG_TABLE_SCHEMA),
        CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id || ' ' || NEW.version END
    );
    RETURN NULL;
END;
$$;
