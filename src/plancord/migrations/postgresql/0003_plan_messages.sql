-- plancord schema v3 for PostgreSQL (bigint Discord ids): where each plan revision's Discord
-- message lives, so a decision, a new revision, a timeout or a restart can find the message
-- again (and its progress message).
-- No foreign key to agents: like plan_revisions, these rows outlive the agent.

CREATE TABLE plan_messages (
    plan_id             TEXT NOT NULL,
    revision            INTEGER NOT NULL CHECK (revision >= 1),
    agent               TEXT NOT NULL,
    guild_id            BIGINT,
    channel_id          BIGINT NOT NULL,
    message_id          BIGINT NOT NULL,
    progress_message_id BIGINT,
    status              TEXT NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'decided', 'superseded', 'timed-out',
                                          'cancelled')),
    requested_by_name   TEXT,
    outcome             TEXT
                        CHECK (outcome IN ('approved', 'changes-requested', 'rejected',
                                           'cancelled', 'timed-out')),
    outcome_by          TEXT,
    outcome_at          TEXT,
    outcome_note        TEXT,
    superseded_by       INTEGER,
    posted_at           TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    PRIMARY KEY (plan_id, revision),
    CHECK (status = 'pending' OR outcome IS NOT NULL OR status = 'superseded')
);

CREATE INDEX plan_messages_agent ON plan_messages(agent, posted_at);
