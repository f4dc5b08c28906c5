-- plancord schema v14: a decision on an execution's result (Merge, Discard, Roll back, Push)
-- is written as an intent before git runs and completed after, so that git and the database
-- agree after any crash. The intent row is also the claim: at most one intent per result is
-- open at a time (the partial unique index), and it is opened only while the result still
-- waits at the version the click named, so of two approvals at once exactly one reaches git.
-- ``detail`` is JSON: what git is to do (the commit Merge lands, the step Roll back goes back
-- before, the remote Push sends to), read back by the recovery after a restart. ``owner``
-- names the process running it (host, pid and the pid's start time), so a restart recovers
-- only intents whose process is gone. A finished intent is ``done``; one recovered as never
-- having reached git, or refused by git, is ``undone``. The same SQL serves SQLite and
-- PostgreSQL.
CREATE TABLE result_intents (
    id          TEXT PRIMARY KEY,
    plan_id     TEXT NOT NULL REFERENCES executions(plan_id) ON DELETE CASCADE,
    agent       TEXT NOT NULL,
    version     INTEGER NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('result-merge', 'result-discard', 'result-roll-back', 'result-push')),
    actor       TEXT NOT NULL,
    actor_name  TEXT NOT NULL,
    detail      TEXT NOT NULL,
    owner       TEXT NOT NULL,
    state       TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'done', 'undone')),
    opened_at   TEXT NOT NULL,
    closed_at   TEXT,
    outcome     TEXT
);

CREATE UNIQUE INDEX result_intents_one_open ON result_intents (plan_id) WHERE state = 'open';
