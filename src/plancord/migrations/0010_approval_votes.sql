-- Approval votes under plan_mode.approvals: N, kept as records of their own so that no
-- amount of other audit rows (refused clicks, answers, drift) can push a vote out of sight.
-- A vote binds to one revision and its sha256; one vote per person per revision (a second
-- click counts once). Like plan_revisions, these rows outlive the agent.
CREATE TABLE approval_votes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    plan_id    TEXT NOT NULL,
    revision   INTEGER NOT NULL CHECK (revision >= 1),
    sha256     TEXT NOT NULL,
    voter_id   TEXT NOT NULL,
    voter_name TEXT NOT NULL,
    voted_at   TEXT NOT NULL,
    UNIQUE (plan_id, revision, voter_id)
);
