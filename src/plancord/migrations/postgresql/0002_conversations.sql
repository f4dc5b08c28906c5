-- plancord schema v2 for PostgreSQL: the agents' conversations, model usage per call, and
-- pending human asks (bigint Discord ids and an identity column).

CREATE TABLE messages (
    agent      TEXT NOT NULL REFERENCES agents(name) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (agent, seq)
);

CREATE TABLE model_usage (
    id                 BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent              TEXT NOT NULL,
    at                 TEXT NOT NULL,
    model              TEXT NOT NULL,
    input_tokens       INTEGER NOT NULL,
    output_tokens      INTEGER NOT NULL,
    cache_read_tokens  INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    stop_reason        TEXT
);

CREATE INDEX model_usage_agent ON model_usage(agent, id);

-- A question or permission request waiting for a human; survives restarts so the front end
-- can re-attach its buttons or refuse them cleanly.
CREATE TABLE pending_asks (
    id         TEXT PRIMARY KEY,
    agent      TEXT NOT NULL REFERENCES agents(name) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('permission', 'question')),
    payload    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    deadline   TEXT NOT NULL,
    channel_id BIGINT,
    message_id BIGINT
);
