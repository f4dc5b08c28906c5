"""The ``metrics:`` section: an optional Prometheus endpoint, off unless turned on, and on
the loopback address unless the operator names another, so turning it on exposes nothing
beyond the host by accident."""

from __future__ import annotations

from pydantic import BaseModel, Field

from plancord.config.fields import _MODEL_CONFIG


class MetricsConfig(BaseModel):
    model_config = _MODEL_CONFIG

    enabled: bool = False
    host: str = Field(default="127.0.0.1", min_length=1)
    port: int = Field(default=9464, ge=0, le=65535)
    """0: a free port the system picks (tests; the log line names it)."""
