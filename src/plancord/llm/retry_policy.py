"""When a failed Messages API call is tried again, and after how long.

Why this exists: the service says what it wants in headers (``x-should-retry``,
``retry-after``, ``retry-after-ms``; docs: api/errors, api/rate-limits), and the SDK's own
retry loop is off (the client retries one attempt at a time so a waiting agent frees its
rate-limit slot). The rules, in order:

1. ``x-should-retry: true`` / ``false`` wins over the status table;
2. otherwise 408, 409, 429 and 5xx (529 included) are retried, nothing else;
3. a 429 for the monthly spend cap (``error.details.error_code:
   enforced_spend_limit_reached``) is never retried;
4. the wait is the server's (``retry-after-ms``, else ``retry-after`` in seconds or as an
   HTTP date), bounded: a wait longer than ``MAX_RETRY_AFTER_SECONDS`` is not cut short, it
   ends the call with a message saying when to try again; without a header, an exponential
   backoff with jitter.
"""

from __future__ import annotations

import email.utils
import random
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
BASE_DELAY_SECONDS = 0.5
MAX_DELAY_SECONDS = 30.0
MAX_RETRY_AFTER_SECONDS = 300.0
SPEND_LIMIT = "enforced_spend_limit_reached"


def should_retry(status: int, headers: Mapping[str, str], body: object) -> bool:
    """Whether the service wants this failure tried again (rules 1 to 3)."""
    flag = headers.get("x-should-retry")
    if flag == "true":
        return True
    if flag == "false":
        return False
    if status == 429 and error_code(body) == SPEND_LIMIT:
        return False
    return status in RETRY_STATUSES


def error_code(body: object) -> str | None:
    """``error.details.error_code`` of an API error body, when it has one."""
    error = body.get("error") if isinstance(body, dict) else None
    details: Any = error.get("details") if isinstance(error, dict) else None
    code = details.get("error_code") if isinstance(details, dict) else None
    return code if isinstance(code, str) else None


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The wait the server asks for, in seconds (never negative), or None when it names none."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def retry_at(seconds: float, now: datetime | None = None) -> str:
    """When a wait of ``seconds`` ends, for a person: ``2026-12-01 18:42 UTC``."""
    when = (now or datetime.now(UTC)) + timedelta(seconds=seconds)
    return f"{when:%Y-%m-%d %H:%M} UTC"


def backoff(attempt: int) -> float:
    delay: float = min(MAX_DELAY_SECONDS, BASE_DELAY_SECONDS * 2**attempt)
    return delay * (0.75 + random.random() / 2)  # noqa: S311 - jitter, not a secret
