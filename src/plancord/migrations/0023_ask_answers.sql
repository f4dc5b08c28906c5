-- plancord schema: an ask's answer given in another process. ``pending_asks.answer`` holds,
-- as JSON, how an ask was settled by a process other than the one waiting on it (the
-- operator's shell: ``plancord asks answer``): the act or the text, who answered and the
-- outcome in words. It is written once (only while NULL), so two answers never both win;
-- the waiting process reads it and goes on. The same SQL serves SQLite and PostgreSQL.
ALTER TABLE pending_asks ADD COLUMN answer TEXT;
