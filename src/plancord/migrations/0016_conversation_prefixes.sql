-- plancord schema v16: an append-only conversation. Models with preserved thinking bind every
-- thinking block to what came before it (the top-level system prompt, the tools and every
-- earlier message), so the prefix a conversation started with is kept with it and sent
-- identical on every request, a restart included: ``conversation_prefixes`` holds that
-- frozen ``system`` and ``tools`` (JSON, exactly as sent) and ``drop_block``, set once a
-- request of this conversation was refused for a thinking block bound to another prefix
-- (later requests ask the API to drop such blocks). Instructions the host adds later (the
-- regime, tools that arrive, a changed system prompt) are appended as ``role: "system"``
-- messages, so ``messages.role`` takes 'system' too; SQLite cannot change a CHECK in place,
-- so the table is rebuilt with its rows.
CREATE TABLE messages_v16 (
    agent      TEXT NOT NULL REFERENCES agents(name) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    content    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (agent, seq)
);
INSERT INTO messages_v16 (agent, seq, role, content, created_at)
    SELECT agent, seq, role, content, created_at FROM messages;
DROP TABLE messages;
ALTER TABLE messages_v16 RENAME TO messages;

CREATE TABLE conversation_prefixes (
    agent      TEXT PRIMARY KEY REFERENCES agents(name) ON DELETE CASCADE,
    system     TEXT NOT NULL,
    tools      TEXT NOT NULL,
    drop_block INTEGER NOT NULL DEFAULT 0 CHECK (drop_block IN (0, 1)),
    created_at TEXT NOT NULL
);
