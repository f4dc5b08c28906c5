-- While an amendment to an executing plan waits for approval: the approved revision it
-- amends. Execution is paused until a human decides.
ALTER TABLE planning_state ADD COLUMN amends INTEGER;
