-- plancord schema v11: the result of an execution waits for a human's decision on its
-- completion card (Merge, Discard; Roll back and Push change it without deciding it). The
-- decision lives on the execution record: ``result`` is NULL while the plan runs, then
-- 'waiting', then 'merged' or 'discarded'; ``result_version`` moves whenever the result
-- changes (a roll back, a decision), so a click on an older card is refused, not obeyed.
-- The requester is kept so the four-eyes rule holds after plan mode has ended. Merge votes
-- under plan_mode.approvals: N are records of their own, bound to one version of the
-- result. The same SQL serves SQLite and PostgreSQL; Discord ids are kept as text.
ALTER TABLE executions ADD COLUMN result TEXT
    CHECK (result IS NULL OR result IN ('waiting', 'merged', 'discarded'));
ALTER TABLE executions ADD COLUMN result_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN requested_by TEXT;
ALTER TABLE executions ADD COLUMN requested_by_name TEXT;
ALTER TABLE executions ADD COLUMN decided_by_name TEXT;
ALTER TABLE executions ADD COLUMN decided_at TEXT;
ALTER TABLE executions ADD COLUMN outcome TEXT;
ALTER TABLE executions ADD COLUMN card_channel TEXT;
ALTER TABLE executions ADD COLUMN card_message TEXT;

CREATE INDEX executions_card ON executions(card_channel, card_message);

CREATE TABLE result_votes (
    plan_id    TEXT NOT NULL REFERENCES executions(plan_id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    voter_id   TEXT NOT NULL,
    voter_name TEXT NOT NULL,
    voted_at   TEXT NOT NULL,
    PRIMARY KEY (plan_id, version, voter_id)
);
