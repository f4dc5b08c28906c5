-- plancord schema v15: starting an approved plan's execution (its branch in git, its record
-- in the database) is written as an intent before git runs, like the decisions on a result
-- (v14), so that a crash between git and the approval's transaction is undone after a
-- restart: the plan then still waits for a decision, and git is back as it was. The intent
-- row is also the claim: at most one start is open per agent (the partial unique index: one
-- workspace, one git at a time), and it is opened only while the plan waits for a decision
-- at the revision the click named and no execution of the agent runs or waits for a
-- decision on its result, so of two approvals at once exactly one reaches git, whichever
-- processes they come from. The approval's own transaction (its state, its audit row, the
-- execution's record) completes the intent, so an open intent always means an approval that
-- did not commit. ``detail`` is JSON: what git is to do, noted after git has read the
-- workspace and before it changes a ref (the base branch, the reviewed commit and index),
-- read back by the recovery. ``owner`` names the process running it, as in v14. The same
-- SQL serves SQLite and PostgreSQL.
CREATE TABLE start_intents (
    id          TEXT PRIMARY KEY,
    agent       TEXT NOT NULL REFERENCES agents(name) ON DELETE CASCADE,
    plan_id     TEXT NOT NULL,
    revision    INTEGER NOT NULL CHECK (revision >= 1),
    actor       TEXT NOT NULL,
    actor_name  TEXT NOT NULL,
    detail      TEXT NOT NULL,
    owner       TEXT NOT NULL,
    state       TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'done', 'undone')),
    opened_at   TEXT NOT NULL,
    closed_at   TEXT,
    outcome     TEXT
);

CREATE UNIQUE INDEX start_intents_one_open ON start_intents (agent) WHERE state = 'open';
CREATE INDEX start_intents_plan ON start_intents (plan_id);
