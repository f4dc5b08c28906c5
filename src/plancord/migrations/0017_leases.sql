-- plancord schema v17: ownership across processes and hosts is a lease in the shared store.
-- Each process (the bot, the operator's shell) takes a row under a random ``owner`` id and
-- renews it by a heartbeat while it lives; ``expires_at`` is seconds since the epoch by the
-- database's own clock (SQLite's is the host's; PostgreSQL's is the server's, so the hosts'
-- clocks never have to agree). An open intent (v14, v15) names its owner's lease: it is
-- taken over only once that lease has expired or is gone, whichever host or container the
-- owner ran on. ``host`` and ``pid`` only say where the owner ran, for people. A
-- ``git_holds`` row says that the owner is running git in the agent's workspace now, so a
-- sweep of git's lock files on another host leaves them while that owner's lease is live.
-- The same SQL serves SQLite and PostgreSQL.
CREATE TABLE leases (
    owner       TEXT PRIMARY KEY,
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    taken_at    DOUBLE PRECISION NOT NULL,
    expires_at  DOUBLE PRECISION NOT NULL
);

CREATE TABLE git_holds (
    agent   TEXT NOT NULL,
    owner   TEXT NOT NULL,
    since   DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (agent, owner)
);
