"""The config file's building blocks: the error every failure becomes, and the field types
and validators its sections share (snowflakes, agent names, roles, durations)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
)

from plancord.core.settings import (
    DEFAULT_PHASE_BY_ROLE,
    parse_duration,
)

AGENT_ROLES: tuple[str, ...] = ("coordinator", "worker", "proactive")
LOG_LEVELS: tuple[str, ...] = ("DEBUG", "INFO", "WARNING", "ERROR")
DEFAULT_CONFIG_FILE = Path("config.yaml")

_MODEL_CONFIG = ConfigDict(extra="forbid", frozen=True)
_AGENT_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_MAX_SNOWFLAKE = 2**63 - 1
_SECONDS = re.compile(r"^\s*\d+(?:\.\d+)?\s*$")
_SECRET_KEYS: dict[str, str] = {
    "token": "DISCORD_TOKEN",
    "bot_token": "DISCORD_TOKEN",
    "discord_token": "DISCORD_TOKEN",
    "api_key": "ANTHROPIC_API_KEY",
    "apikey": "ANTHROPIC_API_KEY",
    "anthropic_api_key": "ANTHROPIC_API_KEY",
}
_ENV_FIELDS: dict[str, str] = {
    "DISCORD_TOKEN": "discord_token",
    "ANTHROPIC_API_KEY": "anthropic_api_key",
}


class ConfigError(Exception):
    """A configuration that cannot be used; ``str(exc)`` is one line naming file, line and key
    (of each problem, when there are several: ``problems`` holds them one by one)."""

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        key: str | None = None,
        problems: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.line = line
        self.key = key
        self.problems = problems or (message,)


def _suggestion(word: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _one_of(options: Sequence[str]) -> str:
    quoted = [repr(option) for option in options]
    return ", ".join(quoted[:-1]) + f" or {quoted[-1]}" if len(quoted) > 1 else quoted[0]


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a number, not true/false")
    return value


def _not_empty(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        raise ValueError("must not be empty")
    return value


def _snowflake(value: Any) -> Any:
    """Discord ids: positive integers that fit SQLite's INTEGER, given as numbers or digit text."""
    if isinstance(value, str) and value.strip().isdecimal():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _MAX_SNOWFLAKE:
        raise ValueError(f"{value!r} is not a Discord id; write the number Discord shows")
    return value


def _agent_name(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not _AGENT_NAME.match(value):
        raise ValueError(
            f"{value!r} is not an agent name; use letters, digits, - and _ (1 to 32 characters)"
        )
    return value


def _role_key(value: str) -> str:
    if value not in DEFAULT_PHASE_BY_ROLE:
        raise ValueError(
            f"{value!r} is not a role{_suggestion(value, list(DEFAULT_PHASE_BY_ROLE))}"
            f" (roles: {', '.join(DEFAULT_PHASE_BY_ROLE)})"
        )
    return value


def _duration(value: Any) -> Any:
    if isinstance(value, str) and _SECONDS.match(value):
        value = float(value)
    return parse_duration(value)


def _approver_roles(value: Any) -> Any:
    """Role names or Discord role ids, as strings; one value alone means a list of one."""
    if value is None:
        return None
    items = [value] if isinstance(value, str | int) else value
    if not isinstance(items, list | tuple):
        return value
    roles: list[str] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int):
            raise ValueError(f"{item!r} is not a role name or role id")
        role = str(item).strip()
        if not role:
            raise ValueError("a role name must not be empty")
        if role not in roles:
            roles.append(role)
    return tuple(roles)


def _none_is_empty(value: Any) -> Any:
    """A YAML section whose keys are all commented out reads as null; treat it as empty."""
    return {} if value is None else value


PositiveInt = Annotated[int, BeforeValidator(_not_bool), Field(gt=0)]
NonNegativeInt = Annotated[int, BeforeValidator(_not_bool), Field(ge=0)]
PositiveSeconds = Annotated[float, BeforeValidator(_not_bool), Field(gt=0, allow_inf_nan=False)]
Snowflake = Annotated[int, BeforeValidator(_snowflake)]
AgentName = Annotated[str, BeforeValidator(_agent_name)]
RoleKey = Annotated[str, AfterValidator(_role_key)]
ConfigPath = Annotated[Path, BeforeValidator(_not_empty)]
