"""The ``explore:`` section: the bounds of read-only sub-agents an agent may start."""

from __future__ import annotations

from pydantic import BaseModel, Field

from plancord.config.fields import _MODEL_CONFIG, PositiveInt, PositiveSeconds


class ExploreConfig(BaseModel):
    """Bounds of one ``explore`` sub-agent, and how many run at once in this process."""

    model_config = _MODEL_CONFIG

    model: str | None = None
    max_calls: PositiveInt = 20
    max_tokens: PositiveInt = 200_000
    timeout_seconds: PositiveSeconds = 300.0
    concurrency: int = Field(default=4, ge=1, le=64)
