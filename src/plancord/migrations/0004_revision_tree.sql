-- The workspace a revision was reviewed against: its commit and uncommitted changes, so an
-- approval of a plan whose tree changed since submission asks for a fresh look.
ALTER TABLE plan_revisions ADD COLUMN tree TEXT;
