-- The change feed for PostgreSQL (see the SQLite file of this number for what it holds).
-- Transactions commit side by side here, so a sequence alone would let id 6 commit before
-- id 5 and a follower reading "id > 4" skip 5 for good. The trigger takes one advisory lock
-- held to the commit before it draws the id: appends (the last statement of each decision's
-- transaction) commit one after another in id order. It also notifies the listeners, which
-- PostgreSQL delivers at the commit and never for a transaction rolled back.
CREATE SEQUENCE changes_id;

CREATE TABLE changes (
    id      BIGINT PRIMARY KEY,
    at      TEXT NOT NULL,
    origin  TEXT NOT NULL,
    kind    TEXT NOT NULL,
    agent   TEXT NOT NULL,
    subject TEXT NOT NULL,
    payload TEXT NOT NULL
);

CREATE FUNCTION changes_in_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7074038470960441444);
    NEW.id := nextval('changes_id');
    PERFORM pg_notify('plancord_changes', NEW.id::text);
    RETURN NEW;
END
$$;

CREATE TRIGGER changes_in_order BEFORE INSERT ON changes
    FOR EACH ROW EXECUTE FUNCTION changes_in_order();
