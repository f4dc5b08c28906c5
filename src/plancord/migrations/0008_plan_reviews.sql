-- The reviewer's review of each plan revision (kind 'plan') and of an executed plan's result
-- (kind 'result'), kept so the plan message, the approval check and Edit's "findings as
-- feedback" read it after a restart. A row without a review is a review running since
-- started_at. Like plan_revisions, these rows outlive the agent.
CREATE TABLE plan_reviews (
    plan_id     TEXT NOT NULL,
    revision    INTEGER NOT NULL CHECK (revision >= 1),
    kind        TEXT NOT NULL CHECK (kind IN ('plan', 'result')),
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    review      TEXT,
    PRIMARY KEY (plan_id, revision, kind)
);
