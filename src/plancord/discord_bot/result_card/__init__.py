"""The completion card: what an execution produced, per step, with its full diff attached,
and the buttons that decide it (Merge, Discard, Roll back…, Push)."""
