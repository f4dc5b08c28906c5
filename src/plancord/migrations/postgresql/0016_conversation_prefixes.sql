-- plancord schema v16 for PostgreSQL: the same as the shared file (see it for why), with the
-- role check of ``messages`` changed in place instead of rebuilding the table.
ALTER TABLE messages DROP CONSTRAINT messages_role_check;
ALTER TABLE messages ADD CONSTRAINT messages_role_check
    CHECK (role IN ('user', 'assistant', 'system'));

CREATE TABLE conversation_prefixes (
    agent      TEXT PRIMARY KEY REFERENCES agents(name) ON DELETE CASCADE,
    system     TEXT NOT NULL,
    tools      TEXT NOT NULL,
    drop_block INTEGER NOT NULL DEFAULT 0 CHECK (drop_block IN (0, 1)),
    created_at TEXT NOT NULL
);
