"""The reason for every tool call: one decision record per call, and how it reads.

A record names the tool and a digest of its input (never the input itself: a record is kept
longer than the conversation may be, and is read by people who may not read the
conversation), the phase and the plan's step, what decided (``core.decider.Decider``) and
why in words (the plan-mode gate and its rule, the read-only filter's verdict and the stage
that judged it, a rule by id, a member's answer with their name, the drift policy, a stop),
and the outcome. ``/plan why``, ``plancord calls`` and the completion card's attachment all
print records through :func:`record_line`, so the three read alike.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from plancord.core.decider import Decider

__all__ = [
    "CallOutcome",
    "CallRecord",
    "RecordBounds",
    "calls_by_step",
    "input_digest",
    "record_line",
]

REASON_CHARS = 500
CALLS_PER_STEP = 50
"""Calls of one step the completion card's file lists; the rest are counted."""


@dataclass(frozen=True, slots=True)
class RecordBounds:
    """How much is kept (``rules.records``): the newest records of each plan, and none older
    than the retention."""

    keep_per_plan: int = 500
    retention_days: int = 30


class CallOutcome(StrEnum):
    RAN = "ran"
    FAILED = "failed"
    """It ran and returned an error."""
    REFUSED = "refused"
    """The gate, a rule, the profile or the drift policy refused it."""
    DENIED = "denied"
    """A member denied it on its card."""
    UNANSWERED = "unanswered"
    """Nobody answered its card in time (or the card could not be shown)."""
    NOT_RUN = "not run"
    """Its input was invalid, its tool unknown, or the host stopped it before it ran."""


@dataclass(frozen=True, slots=True)
class CallRecord:
    id: str
    seq: int
    agent: str
    phase: str
    tool: str
    digest: str
    decider: Decider
    reason: str
    outcome: CallOutcome
    at: datetime
    plan_id: str | None = None
    revision: int | None = None
    step: int | None = None
    """The plan's step (0-based) the call ran in, while executing."""
    rule_id: str | None = None
    actor: str | None = None
    """Who answered the call's card (the audit label, ``user:123(ana)``)."""


def input_digest(tool_input: Any) -> str:
    """The first 12 hex digits of the SHA-256 of the input as canonical JSON."""
    canonical = json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def clip_reason(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= REASON_CHARS else flat[: REASON_CHARS - 1] + "…"


def actor_name(label: str | None) -> str | None:
    """``ana`` from the audit label ``user:123(ana)``; the label itself otherwise."""
    if label is None:
        return None
    if label.endswith(")") and "(" in label:
        return label[label.index("(") + 1 : -1]
    return label


def record_line(record: CallRecord) -> str:
    """One record in one line: ``12:00 · step 2 · bash_execute #3fa9… · rule r1 → ran: …``."""
    where = f"step {record.step + 1}" if record.step is not None else record.phase
    decider = record.decider.value
    if record.rule_id is not None:
        decider = f"{decider} {record.rule_id}"
    if record.decider is Decider.HUMAN and record.actor is not None:
        decider = f"{decider} ({actor_name(record.actor)})"
    return (
        f"{record.at:%H:%M:%S} · {where} · {record.tool} #{record.digest} · {decider} "
        f"→ {record.outcome.value}: {record.reason}"
    )


def calls_by_step(
    records: Iterable[CallRecord], per_step: int = CALLS_PER_STEP
) -> dict[int | None, list[str]]:
    """The records of one plan as lines, by the plan's step (0-based; None: before the
    steps, while planning), in order. A step of more than ``per_step`` calls keeps its
    first ``per_step`` and a last line counting the ones left out, so the completion card's
    file stays bounded however busy a step was."""
    lines: dict[int | None, list[str]] = {}
    left_out: dict[int | None, int] = {}
    for record in records:
        shown = lines.setdefault(record.step, [])
        if len(shown) < per_step:
            shown.append(record_line(record))
        else:
            left_out[record.step] = left_out.get(record.step, 0) + 1
    for step, count in left_out.items():
        lines[step].append(f"… and {count} more (`plancord calls` prints every one)")
    return lines
