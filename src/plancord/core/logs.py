"""The frozen ``[plan-mode]`` log lines operators grep for. Changing them breaks users."""

from __future__ import annotations

import logging
import re

logger = logging.getLogger("plancord.plan_mode")

_SPACE = re.compile(r"\s+")


def _word(value: object) -> str:
    return _SPACE.sub("_", str(value).strip()) or "-"


def _text(value: object) -> str:
    return _SPACE.sub(" ", str(value).strip()) or "-"


def plan_mode_line(action: str, agent: str, *, reason: str | None = None, **fields: object) -> str:
    """``[plan-mode] <action> agent=<a> k=v … [reason=<free text>]``; reason always comes last."""
    parts = [f"[plan-mode] {action}", f"agent={_word(agent)}"]
    parts += [f"{key}={_word(value)}" for key, value in fields.items() if value is not None]
    if reason is not None:
        parts.append(f"reason={_text(reason)}")
    return " ".join(parts)


def log_plan_mode(action: str, agent: str, *, reason: str | None = None, **fields: object) -> None:
    logger.info(plan_mode_line(action, agent, reason=reason, **fields))


def refusal_line(tool: str, kind: str, agent: str) -> str:
    """``[plan-mode] refused tool=<name> kind=<kind> agent=<a>`` (this one names the tool first)."""
    return f"[plan-mode] refused tool={_word(tool)} kind={_word(kind)} agent={_word(agent)}"


def log_refusal(tool: str, kind: str, agent: str) -> None:
    logger.info(refusal_line(tool, kind, agent))
