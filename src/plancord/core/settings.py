"""Plan-mode settings as the core sees them: one resolved set per agent and channel.

The YAML config (``plancord.config``) lets operators set these globally, per agent and per
channel; it merges the layers and hands the core one ``PlanModeSettings``. The core never
reads files or the environment itself.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from plancord.core.drift import DriftPolicy

MAX_DURATION_SECONDS = 10 * 365 * 24 * 3600
_DURATION = re.compile(r"^\s*(?:(\d+)\s*h)?\s*(?:(\d+)\s*m)?\s*(?:(\d+)\s*s)?\s*$")


def parse_duration(value: Any) -> Any:
    """Accept ``90`` (seconds), ``"30m"``, ``"1h30m"``, ``"45s"``; other values go to pydantic."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or text such as '30m' or '1h'")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is not a duration; write seconds or text such as '30m'")
        if abs(value) > MAX_DURATION_SECONDS:
            raise ValueError(f"{value!r} is too long for a duration")
        return timedelta(seconds=value)
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match and any(match.groups()):
            hours, minutes, seconds = (int(g or 0) for g in match.groups())
            total = hours * 3600 + minutes * 60 + seconds
            if total > MAX_DURATION_SECONDS:
                raise ValueError(f"{value!r} is too long for a duration")
            return timedelta(seconds=total)
        raise ValueError(f"{value!r} is not a duration; write seconds or text such as '30m', '1h'")
    return value


class ToolVisibility(StrEnum):
    STABLE = "stable"
    FILTER = "filter"


class ShellSandbox(StrEnum):
    REQUIRED = "required"
    OFF = "off"


class ApprovalPolicy(StrEnum):
    """Who may approve: the requester counts (``requester-or-approver``), or only someone
    else may approve what a person asked for (``approver``, the four-eyes rule)."""

    REQUESTER_OR_APPROVER = "requester-or-approver"
    APPROVER = "approver"


class DefaultPhase(StrEnum):
    PLAN = "plan"
    OFF = "off"


DEFAULT_PHASE_BY_ROLE: dict[str, DefaultPhase] = {
    "coordinator": DefaultPhase.PLAN,
    "worker": DefaultPhase.OFF,
    "proactive": DefaultPhase.OFF,
    "unset": DefaultPhase.OFF,
}


class ReviewMode(StrEnum):
    """What the review's findings do: ``advise`` shows them; ``require_acknowledgement`` also
    makes approving a plan with a blocker a second, audited click."""

    ADVISE = "advise"
    REQUIRE_ACKNOWLEDGEMENT = "require_acknowledgement"


class ReviewSettings(BaseModel):
    """``plan_mode.review``: an independent model reviews each submitted plan revision."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = Field(default=None, min_length=1, max_length=200)
    """The reviewer's model; None reviews with the agent's own model."""
    mode: ReviewMode = ReviewMode.ADVISE
    require_review: bool = False
    """True: a plan whose review failed or timed out cannot be approved."""
    timeout_seconds: float = Field(default=120.0, gt=0, le=900, allow_inf_nan=False)
    review_result: bool = False
    """True: the completion card also carries a review of the result against the plan."""

    @field_validator("model", mode="before")
    @classmethod
    def _model(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            if not value:
                raise ValueError("name a model, or leave model out to use the agent's")
        return value

    @field_validator("require_review", "review_result", mode="before")
    @classmethod
    def _strict_bool(cls, value: Any) -> Any:
        if not isinstance(value, bool):
            raise ValueError("true or false")
        return value

    @field_validator("timeout_seconds", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("a number of seconds, not true/false")
        return value


def review_section(value: Any) -> Any:
    """How the config file may write ``review``: ``off``/``false``/null for none, ``on``/
    ``true`` for the defaults, or a mapping of ``ReviewSettings`` keys."""
    if value is None or value is False or (isinstance(value, str) and value.strip() == "off"):
        return None
    if value is True or (isinstance(value, str) and value.strip() == "on"):
        return ReviewSettings()
    return value


class Access(BaseModel):
    """Who may instruct an agent besides server administrators and its creator."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    roles: tuple[str, ...] = ()
    """Role ids whose members may instruct the agent."""
    users: tuple[str, ...] = ()
    """User ids who may instruct the agent."""
    everyone: bool = False
    """Anyone who can post in the channel may (a small private server)."""

    @field_validator("roles", "users", mode="before")
    @classmethod
    def _ids(cls, value: object) -> object:
        if isinstance(value, str | int):
            value = [value]
        if isinstance(value, list | tuple):
            return tuple(str(v).strip() for v in value)
        return value


def longer_than_zero(value: timedelta) -> timedelta:
    """A plan-mode deadline is longer than zero."""
    if value <= timedelta(0):
        raise ValueError("must be longer than zero")
    return value


class PlanModeSettings(BaseModel):
    """Every plan-mode knob, fully resolved."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    require_approval: bool = True
    approval_timeout: timedelta = timedelta(minutes=30)
    gathering_idle_timeout: timedelta = timedelta(minutes=60)
    default_phase_by_role: dict[str, DefaultPhase] = Field(
        default_factory=lambda: dict(DEFAULT_PHASE_BY_ROLE)
    )
    approver_roles: tuple[str, ...] = ()
    tool_visibility: ToolVisibility = ToolVisibility.STABLE
    max_plan_bytes: int = Field(default=8192, ge=512, le=1_048_576)
    shell_sandbox: ShellSandbox = ShellSandbox.REQUIRED
    drift: DriftPolicy = DriftPolicy.ASK
    approval: ApprovalPolicy = ApprovalPolicy.REQUESTER_OR_APPROVER
    approvals: int = Field(default=1, ge=1, le=10)
    access: Access = Field(default_factory=Access)
    confirm_high_risk_steps: bool = False
    require_resolved_comments: bool = False
    """Approve waits until every comment on the plan is resolved."""
    budget_usd: float | None = Field(default=None, gt=0)
    """Per plan, planning and execution together: spent, execution stops with a notice."""
    budget_tokens: int | None = Field(default=None, ge=1)
    """The same in tokens (billed input plus output), for models without a price."""
    review: ReviewSettings | None = None
    """None: plans are not reviewed before the approver sees them."""

    @field_validator("review", mode="before")
    @classmethod
    def _review(cls, value: Any) -> Any:
        return review_section(value)

    @field_validator("approval_timeout", "gathering_idle_timeout", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        return parse_duration(value)

    @field_validator("approval_timeout", "gathering_idle_timeout")
    @classmethod
    def _positive(cls, value: timedelta) -> timedelta:
        return longer_than_zero(value)

    def default_phase_for(self, role: str | None) -> DefaultPhase:
        """The phase an agent of ``role`` starts a new task in (unknown roles: off)."""
        return self.default_phase_by_role.get(role or "unset", DefaultPhase.OFF)
