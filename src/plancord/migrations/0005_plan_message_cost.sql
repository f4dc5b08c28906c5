-- What planning had cost when a plan revision was posted, shown on its message.
ALTER TABLE plan_messages ADD COLUMN cost TEXT;
