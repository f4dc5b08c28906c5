-- plancord schema v17: remembered rules for tool calls and the reason for every call.
-- ``call_rules`` holds the rules members make on a permission card ("Allow always", "Deny
-- always"): the agent, the decision, the scope (JSON: the tool, and an argv prefix as the
-- read-only filter's reader parsed the command, or a path pattern inside the workspace),
-- who made it and when, an optional expiry, and who revoked it and when (a revoked rule is
-- kept, so the listing and the decision records that name it stay readable). Every process
-- reads the rules at each call, so a revoke takes effect at the next call everywhere.
-- ``call_records`` holds one row per tool call: the tool, a digest of its input, the phase
-- and the step, what decided it (``decider``: gate, filter, rule, profile, human, drift,
-- stop) and why, the rule's id when a rule did, the human who answered an ask, the outcome.
-- ``seq`` orders the rows of one agent; rows are pruned per plan and by age. The same SQL
-- serves SQLite and PostgreSQL.
CREATE TABLE call_rules (
    id          TEXT PRIMARY KEY,
    agent       TEXT NOT NULL REFERENCES agents(name) ON DELETE CASCADE,
    tool        TEXT NOT NULL,
    decision    TEXT NOT NULL CHECK (decision IN ('allow', 'ask', 'deny')),
    scope       TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT,
    revoked_by  TEXT,
    revoked_at  TEXT
);

CREATE INDEX call_rules_agent_tool ON call_rules (agent, tool);

CREATE TABLE call_records (
    id        TEXT PRIMARY KEY,
    seq       BIGINT NOT NULL,
    agent     TEXT NOT NULL REFERENCES agents(name) ON DELETE CASCADE,
    plan_id   TEXT,
    revision  INTEGER,
    phase     TEXT NOT NULL,
    step      INTEGER,
    tool      TEXT NOT NULL,
    digest    TEXT NOT NULL,
    decider   TEXT NOT NULL,
    rule_id   TEXT,
    actor     TEXT,
    reason    TEXT NOT NULL,
    outcome   TEXT NOT NULL,
    at        TEXT NOT NULL
);

CREATE INDEX call_records_agent ON call_records (agent, seq);
CREATE INDEX call_records_plan ON call_records (plan_id, seq);
