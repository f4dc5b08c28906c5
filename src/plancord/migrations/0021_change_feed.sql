-- The change feed: every decision (a plan decided, timed out or cancelled; a result opened
-- or decided; an execution ended; an ask settled) appends one row here in the transaction
-- that makes it, so every other process sharing the store hears of it. On SQLite the one
-- writer makes ids increase in commit order; processes follow with one range read of the
-- primary key (id > the last one seen). Rows are pruned after a day: a process that starts
-- redraws what it shows from the store itself, not from old changes.
CREATE TABLE changes (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    at      TEXT NOT NULL,
    origin  TEXT NOT NULL,
    kind    TEXT NOT NULL,
    agent   TEXT NOT NULL,
    subject TEXT NOT NULL,
    payload TEXT NOT NULL
);
