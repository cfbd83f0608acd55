-- 2025-11-25 sessions shared by the replicas: an Mcp-Session-Id opened on one replica is
-- valid on the others. Open streams are not stored; they belong to one replica.
CREATE TABLE sessions (
    id                  TEXT        NOT NULL PRIMARY KEY,
    principal           TEXT        NOT NULL,
    authenticated       BOOLEAN     NOT NULL,
    protocol_version    TEXT        NOT NULL,
    client_capabilities TEXT        NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL
);
