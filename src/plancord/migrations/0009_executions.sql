-- plancord schema v8: each approved plan's execution on its own branch, as the host keeps
-- it (the current step and each step's outcome), and the commands run, drift events and
-- high-risk checkpoints during it, with how each was decided. The same SQL serves SQLite
-- and PostgreSQL. Like plan_revisions, these rows outlive the agent: a completion card
-- reads them.

CREATE TABLE executions (
    plan_id            TEXT PRIMARY KEY,
    agent              TEXT NOT NULL,
    revision           INTEGER NOT NULL CHECK (revision >= 1),
    branch             TEXT NOT NULL,
    base               TEXT NOT NULL,
    base_commit        TEXT NOT NULL,
    reviewed_commit    TEXT NOT NULL,
    reviewed_index     TEXT NOT NULL,
    current_step       INTEGER NOT NULL DEFAULT 0 CHECK (current_step >= 0),
    steps              TEXT NOT NULL,
    waiting_checkpoint INTEGER,
    started_at         TEXT NOT NULL,
    ended_at           TEXT,
    end_reason         TEXT
);

CREATE INDEX executions_agent ON executions(agent, started_at);

CREATE TABLE execution_events (
    plan_id   TEXT NOT NULL REFERENCES executions(plan_id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL CHECK (seq >= 1),
    at        TEXT NOT NULL,
    step      INTEGER NOT NULL CHECK (step >= 1),
    kind      TEXT NOT NULL CHECK (kind IN ('command', 'drift', 'checkpoint')),
    tool      TEXT NOT NULL,
    action    TEXT NOT NULL,
    paths     TEXT NOT NULL,
    reason    TEXT,
    decision  TEXT
              CHECK (decision IS NULL OR decision IN ('allowed', 'denied', 'timed-out',
                                                      'refused', 'logged', 'stopped')),
    PRIMARY KEY (plan_id, seq)
);
