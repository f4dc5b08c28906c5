-- plancord schema v17: scheduled plans. A schedule is a task its agent plans on its own at
-- set times (a cron expression in a time zone, or an interval from its anchor), then waits
-- for a human like any plan. ``next_run_at`` is the next run, in UTC; ``version`` guards
-- every change. A run is a row of ``schedule_runs``, written in the same transaction that
-- moves the schedule's ``next_run_at`` on (under its version), so of several processes
-- exactly one claims each run, and the key (schedule, due time) refuses a second row for
-- it whatever happens. ``owner`` and ``claimed_at`` are the claim's lease: a run left
-- ``claimed`` by a process that died is taken over once its lease has expired. Runs keep
-- no reference to their schedule, so a deleted schedule's runs stay countable. The same
-- SQL serves SQLite and PostgreSQL.
CREATE TABLE schedules (
    id                TEXT PRIMARY KEY,
    agent             TEXT NOT NULL REFERENCES agents(name) ON DELETE CASCADE,
    task              TEXT NOT NULL,
    cron              TEXT,
    every_seconds     INTEGER CHECK (every_seconds IS NULL OR every_seconds >= 60),
    anchor            TEXT NOT NULL,
    tz                TEXT NOT NULL,
    note              TEXT NOT NULL DEFAULT '',
    when_busy         TEXT NOT NULL CHECK (when_busy IN ('skip', 'queue')),
    max_runs_per_day  INTEGER NOT NULL CHECK (max_runs_per_day >= 1),
    created_by        TEXT NOT NULL,
    created_by_name   TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    state             TEXT NOT NULL CHECK (state IN ('active', 'paused')),
    next_run_at       TEXT NOT NULL,
    version           INTEGER NOT NULL DEFAULT 0,
    CHECK ((cron IS NULL) <> (every_seconds IS NULL))
);

CREATE INDEX schedules_due ON schedules (state, next_run_at);
CREATE INDEX schedules_agent ON schedules (agent);

CREATE TABLE schedule_runs (
    schedule_id  TEXT NOT NULL,
    due_at       TEXT NOT NULL,
    agent        TEXT NOT NULL REFERENCES agents(name) ON DELETE CASCADE,
    owner        TEXT NOT NULL,
    claimed_at   TEXT NOT NULL,
    outcome      TEXT NOT NULL CHECK (outcome IN (
        'claimed', 'queued', 'started', 'skipped-busy', 'skipped-missed', 'skipped-budget',
        'skipped-gone', 'failed')),
    missed       INTEGER NOT NULL DEFAULT 0,
    plan_id      TEXT,
    finished_at  TEXT,
    PRIMARY KEY (schedule_id, due_at)
);

CREATE INDEX schedule_runs_open ON schedule_runs (outcome, claimed_at);
