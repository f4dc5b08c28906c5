"""The agent record as the core sees it: identity, channel binding, model and policies."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

AGENT_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


def check_agent_name(name: str) -> str:
    if not AGENT_NAME.fullmatch(name):
        raise ValueError(
            f"{name!r} is not a valid agent name: use 1 to 32 letters, digits, '-' or '_'"
        )
    return name


class AgentRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    model: str
    channel_id: int | None = None
    guild_id: int | None = None
    system_prompt: str = ""
    permission_profile: dict[str, Any] = Field(default_factory=lambda: {"preset": "standard"})
    plan_mode_overrides: dict[str, Any] = Field(default_factory=dict)
    role: str | None = None
    created_at: datetime
    created_by: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_agent_name(value)
