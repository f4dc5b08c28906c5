-- plancord schema v12: a plan review requested under require_acknowledgement or
-- require_review holds approval while it runs, on every path, whatever the settings of the
-- process that approves (the operator CLI may run without the config file). The row records
-- it when the review starts: ``hold_seconds`` is how long after ``started_at`` the running
-- review still holds (the reviewer's timeout and a margin), NULL when it holds nothing.
ALTER TABLE plan_reviews ADD COLUMN hold_seconds INTEGER;
