"""Retired (and retiring) model ids: the date requests to each start failing and the model
the documentation names in its place.

Why this exists: a request to a retired id fails on the service with a bare "model not
found", which says nothing of what to configure instead. The client refuses such a request
before sending it, and the config check and ``plancord doctor`` report it, with this table's
sentence: when it was retired and what to set.

Dates are those of the Anthropic-operated platforms (``about-claude/model-deprecations``;
Bedrock and Google Cloud keep their own schedules). A deprecated model gets its row when its
retirement date is announced; it stays usable until that date. Replacements are the current
model of the same family (each retired model's page: "Recommended replacement").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime


@dataclass(frozen=True, slots=True)
class Retirement:
    retired_on: date
    replacement: str


_SONNET = "claude-sonnet-5-5"
_OPUS = "claude-opus-5-5"
_HAIKU = "claude-haiku-5-5"

RETIRED_MODELS: dict[str, Retirement] = {
    # models/opus-4-5/overview; sdk _data/deprecated_models.py: "January 22nd, 2027".
    "claude-opus-4-5": Retirement(date(2027, 1, 22), _OPUS),
    "claude-opus-4-5-20251101": Retirement(date(2027, 1, 22), _OPUS),
    # models/sonnet-4-5/overview: "retires on November 30, 2026. Recommended replacement:
    # Claude Sonnet 5.5".
    "claude-sonnet-4-5": Retirement(date(2026, 11, 30), _SONNET),
    "claude-sonnet-4-5-20250929": Retirement(date(2026, 11, 30), _SONNET),
    # Release notes 2026-08-05: Claude Opus 4.1 retired.
    "claude-opus-4-1": Retirement(date(2026, 8, 5), _OPUS),
    "claude-opus-4-1-20250805": Retirement(date(2026, 8, 5), _OPUS),
    # sdk _data/deprecated_models.py: "June 30th, 2026"; the page no longer names a
    # replacement, so the current Fable model (Mythos is by invitation only).
    "claude-mythos-preview": Retirement(date(2026, 6, 30), "claude-fable-5-2"),
    # Release notes 2026-06-15: Claude Sonnet 4 and Claude Opus 4 retired.
    "claude-sonnet-4-0": Retirement(date(2026, 6, 15), _SONNET),
    "claude-sonnet-4-20250514": Retirement(date(2026, 6, 15), _SONNET),
    "claude-opus-4-0": Retirement(date(2026, 6, 15), _OPUS),
    "claude-opus-4-20250514": Retirement(date(2026, 6, 15), _OPUS),
    # model-deprecations: Claude Haiku 3 retired 2026-04-20.
    "claude-3-haiku-20240307": Retirement(date(2026, 4, 20), _HAIKU),
    # model-deprecations: Claude Sonnet 3.7 and Claude Haiku 3.5 retired 2026-02-19.
    "claude-3-7-sonnet-20250219": Retirement(date(2026, 2, 19), _SONNET),
    "claude-3-7-sonnet-latest": Retirement(date(2026, 2, 19), _SONNET),
    "claude-3-5-haiku-20241022": Retirement(date(2026, 2, 19), _HAIKU),
    "claude-3-5-haiku-latest": Retirement(date(2026, 2, 19), _HAIKU),
    # model-deprecations: Claude Opus 3 retired 2026-01-05.
    "claude-3-opus-20240229": Retirement(date(2026, 1, 5), _OPUS),
    "claude-3-opus-latest": Retirement(date(2026, 1, 5), _OPUS),
    # model-deprecations: Claude Sonnet 3.5 retired 2025-10-22.
    "claude-3-5-sonnet-20240620": Retirement(date(2025, 10, 22), _SONNET),
    "claude-3-5-sonnet-20241022": Retirement(date(2025, 10, 22), _SONNET),
    "claude-3-5-sonnet-latest": Retirement(date(2025, 10, 22), _SONNET),
    # model-deprecations: Claude Sonnet 3 and Claude 2 retired 2025-07-21.
    "claude-3-sonnet-20240229": Retirement(date(2025, 7, 21), _SONNET),
    "claude-2.1": Retirement(date(2025, 7, 21), _SONNET),
    "claude-2.0": Retirement(date(2025, 7, 21), _SONNET),
    # model-deprecations: Claude 1 and Instant retired 2024-11-06.
    "claude-instant-1.2": Retirement(date(2024, 11, 6), _HAIKU),
}


def retired_model_message(model: str, today: date | None = None) -> str | None:
    """A sentence saying ``model`` was retired and what to set instead, or None while it is
    still served (``today`` defaults to the current UTC date)."""
    retirement = RETIRED_MODELS.get(model)
    if retirement is None:
        return None
    today = today or datetime.now(UTC).date()
    if today < retirement.retired_on:
        return None
    return (
        f"{model} was retired on {retirement.retired_on:%B} {retirement.retired_on.day}, "
        f"{retirement.retired_on.year}; use {retirement.replacement} "
        "(set anthropic.model or agents.<name>.model)"
    )
