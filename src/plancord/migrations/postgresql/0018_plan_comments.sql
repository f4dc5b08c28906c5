-- plancord schema v17 for PostgreSQL (an identity column for the comments' order).
-- Members shape a waiting plan themselves. A direct edit is a revision like any other
-- (author 'human-edit'); who wrote it is kept on the revision, for the card, the diff and
-- the four-eyes rule, which refuses its editor's approval as it refuses the requester's.
ALTER TABLE plan_revisions ADD COLUMN edited_by TEXT;
ALTER TABLE plan_revisions ADD COLUMN edited_by_name TEXT;

-- Comments on a plan revision (step 0: the plan as a whole) or one of its steps. Each is
-- also an audit row; like plan_revisions, these rows outlive the agent. The agent is told
-- of a comment at its next turn (told_at); a revision it submits may say it addressed it
-- (addressed_in); its author or an approver resolves it.
CREATE TABLE plan_comments (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    plan_id          TEXT NOT NULL,
    revision         INTEGER NOT NULL CHECK (revision >= 1),
    agent            TEXT NOT NULL,
    step             INTEGER NOT NULL CHECK (step >= 0),
    body             TEXT NOT NULL CHECK (length(body) BETWEEN 1 AND 1000),
    author_id        TEXT NOT NULL,
    author_name      TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    told_at          TEXT,
    addressed_in     INTEGER,
    resolved_by_name TEXT,
    resolved_at      TEXT
);

CREATE INDEX plan_comments_plan ON plan_comments(plan_id, id);
