-- Answers to a plan revision's open questions, picked from their choices on the plan
-- message before the decision; each pick is also an audit row. Like plan_revisions, these
-- rows outlive the agent. A second pick of the same question replaces the first.
CREATE TABLE plan_answers (
    plan_id     TEXT NOT NULL,
    revision    INTEGER NOT NULL CHECK (revision >= 1),
    question    INTEGER NOT NULL CHECK (question >= 0),
    answer      TEXT NOT NULL,
    answered_by TEXT NOT NULL,
    by_name     TEXT NOT NULL,
    answered_at TEXT NOT NULL,
    PRIMARY KEY (plan_id, revision, question)
);
