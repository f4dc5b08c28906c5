"""The ``schedules:`` section: what scheduled plans do with runs missed while plancord was
down, when a late run counts as missed, and how long one process's claim on a run holds."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, Field

from plancord.config.fields import _MODEL_CONFIG
from plancord.core.schedule_runs import MissedRuns, RunSettings


class SchedulesConfig(BaseModel):
    model_config = _MODEL_CONFIG

    missed: MissedRuns = MissedRuns.RUN_ONCE
    """``run_once``: runs that fell due while plancord was down run once at start, however
    many were missed; ``skip``: they are skipped, and the channel is told either way."""
    missed_after_seconds: int = Field(default=300, ge=60, le=86400)
    """A run this late is taken for missed rather than merely late."""
    claim_lease_seconds: int = Field(default=120, ge=10, le=3600)
    """How long a process's claim on a run holds before another may take it over."""

    def run_settings(self) -> RunSettings:
        return RunSettings(
            missed=self.missed,
            grace=timedelta(seconds=self.missed_after_seconds),
            lease=timedelta(seconds=self.claim_lease_seconds),
        )
