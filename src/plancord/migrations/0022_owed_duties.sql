-- plancord schema v21: writes that must happen, owed until they land. A step whose loss
-- would wedge or mislead (an ended execution's result opened, an execution ended, a
-- settled ask's card marked) that could not be done at once (the database locked by
-- another process, Discord answering 5xx) is a row here: its ``kind``, the ``subject`` it
-- is about (a plan id, an ask id), what doing it needs (``detail``, JSON), how many times it
-- was tried (``attempts``) and when it is tried next (``next_at``, seconds since the epoch
-- by the database's own clock, like ``leases``). One retrier per process works the rows
-- that are due; it claims a row by writing its lease's ``owner`` (v17), so two processes
-- never do one duty at once, and a row whose owner's lease expired is anyone's again. A
-- duty done is deleted. The same SQL serves SQLite and PostgreSQL.
CREATE TABLE owed_duties (
    kind        TEXT NOT NULL,
    subject     TEXT NOT NULL,
    detail      TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    owed_since  DOUBLE PRECISION NOT NULL,
    next_at     DOUBLE PRECISION NOT NULL,
    owner       TEXT,
    last_error  TEXT,
    PRIMARY KEY (kind, subject)
);

CREATE INDEX owed_duties_due ON owed_duties (next_at);
