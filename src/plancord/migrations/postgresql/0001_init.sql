-- plancord schema v1 for PostgreSQL: agents, their planning state, plan revisions and the
-- audit log. The shared 0001_init.sql with bigint Discord ids, an identity column,
-- PostgreSQL's trigger syntax and byte order for the deadlines the scheduler compares;
-- everything else is the same text.
-- Timestamps are ISO-8601 UTC text with microseconds, so they compare as text.

CREATE TABLE agents (
    name                TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 32),
    model               TEXT NOT NULL,
    channel_id          BIGINT UNIQUE,
    guild_id            BIGINT,
    system_prompt       TEXT NOT NULL DEFAULT '',
    permission_profile  TEXT NOT NULL DEFAULT '{"preset": "standard"}',
    plan_mode_overrides TEXT NOT NULL DEFAULT '{}',
    role                TEXT,
    created_at          TEXT NOT NULL,
    created_by          TEXT
);

CREATE TABLE planning_state (
    agent             TEXT PRIMARY KEY REFERENCES agents(name) ON DELETE CASCADE,
    phase             TEXT NOT NULL DEFAULT 'inactive'
                      CHECK (phase IN ('inactive', 'gathering', 'submitted', 'executing')),
    task              TEXT,
    requested_by      TEXT,
    requested_by_name TEXT,
    entered_at        TEXT,
    entry_source      TEXT CHECK (entry_source IN ('user', 'agent', 'default', 'operator')),
    entry_reason      TEXT,
    plan_id           TEXT,
    revision          INTEGER NOT NULL DEFAULT 0 CHECK (revision >= 0),
    plan_sha          TEXT,
    approval_deadline TEXT COLLATE "C",
    idle_deadline     TEXT COLLATE "C",
    approved_by       TEXT,
    approved_by_name  TEXT,
    approved_at       TEXT,
    approval_mode     TEXT CHECK (approval_mode IN ('normal', 'fresh_context', 'confirm_each_edit')),
    steps             TEXT NOT NULL DEFAULT '[]',
    version           INTEGER NOT NULL DEFAULT 0,
    updated_at        TEXT,
    CHECK (phase <> 'inactive' OR (approval_deadline IS NULL AND idle_deadline IS NULL)),
    CHECK (phase <> 'executing' OR approved_by IS NOT NULL)
);

CREATE INDEX planning_state_approval_deadline ON planning_state(approval_deadline)
    WHERE approval_deadline IS NOT NULL;
CREATE INDEX planning_state_idle_deadline ON planning_state(idle_deadline)
    WHERE idle_deadline IS NOT NULL;

-- Revisions outlive their agent, like the audit log: history is never rewritten.
CREATE TABLE plan_revisions (
    plan_id      TEXT NOT NULL,
    revision     INTEGER NOT NULL CHECK (revision >= 1),
    agent        TEXT NOT NULL,
    plan_json    TEXT NOT NULL,
    markdown     TEXT NOT NULL,
    sha256       TEXT NOT NULL CHECK (length(sha256) = 64),
    submitted_at TEXT NOT NULL,
    author       TEXT NOT NULL CHECK (author IN ('agent', 'human-edit')),
    PRIMARY KEY (plan_id, revision)
);

CREATE TABLE audit_log (
    id       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at       TEXT NOT NULL,
    agent    TEXT NOT NULL,
    actor    TEXT NOT NULL,
    action   TEXT NOT NULL,
    plan_id  TEXT,
    revision INTEGER,
    detail   TEXT NOT NULL DEFAULT '{}'
);

CREATE INDEX audit_log_agent ON audit_log(agent, id);
CREATE INDEX audit_log_plan ON audit_log(plan_id, revision, id);

-- Append-only, enforced by the database: UPDATE, DELETE and TRUNCATE all fail.
CREATE FUNCTION audit_log_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only' USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE TRIGGER audit_log_is_append_only_update BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_is_append_only();

CREATE TRIGGER audit_log_is_append_only_delete BEFORE DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_is_append_only();

CREATE TRIGGER audit_log_is_append_only_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_is_append_only();
