-- plancord schema v12: a result is pinned to the commit its card shows, and each step's
-- commit is recorded by id. ``result_commit`` is the branch's commit when the result opened
-- (or after a roll back): Merge and Push take exactly it, whatever the branch says later,
-- and a Merge vote binds to it as well as to the result's version. ``step_message`` is the
-- agent's own commit message for the current step (from the ``git_commit`` tool), used for
-- the step's commit and then cleared. ``execution_commits`` lists the host's step commits
-- in order: the card and Roll back read them, never a commit's subject (a commit rolled
-- back from the card is kept, marked, so the card can say so). The same SQL
-- serves SQLite and PostgreSQL.
ALTER TABLE executions ADD COLUMN result_commit TEXT;
ALTER TABLE executions ADD COLUMN step_message TEXT;
ALTER TABLE result_votes ADD COLUMN result_commit TEXT NOT NULL DEFAULT '';

CREATE TABLE execution_commits (
    plan_id   TEXT NOT NULL REFERENCES executions(plan_id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL CHECK (seq >= 1),
    step      INTEGER NOT NULL CHECK (step >= 1),
    commit_id TEXT NOT NULL,
    rolled_back INTEGER NOT NULL DEFAULT 0 CHECK (rolled_back IN (0, 1)),
    PRIMARY KEY (plan_id, seq)
);
