"""The reviewer's answer, checked: every valid finding kept, every invalid one named.

Why this exists: the reviewer reads agent-written text, so its answer is untrusted, and it
is easy to provoke a slip from the plan's own text (a step number that does not exist, a
finding too long, too many findings, ``resolved`` on a first review). Rejecting the whole
answer for one slip loses its blockers: the card said "Review unavailable" and a plain
Approve went through. So the host keeps each finding that is valid, drops only the ones
that are not (each named, for the card), and counts a dropped blocker as a blocker: an
answer that contained any blocker, valid or not, needs the approver's acknowledgement where
acknowledgement is asked. Only an answer with no findings list at all is unusable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plancord.core.review import (
    MAX_FINDING_CHARS,
    MAX_FINDINGS,
    Finding,
    ReviewAnswerInvalid,
    Severity,
    one_line,
)

#: How many findings of one answer are looked at, at most (the rest are counted).
_READ_AT_MOST = 200


@dataclass(frozen=True, slots=True)
class ReviewAnswer:
    findings: tuple[Finding, ...]
    resolved: tuple[Finding, ...]
    dropped: tuple[str, ...]
    """Each part of the answer the host did not keep, and why, in one line."""
    dropped_blockers: int
    """Blockers among the dropped findings: they still need acknowledging."""


def parse_review_answer(
    data: object, *, steps: int, previous: Sequence[Finding] = ()
) -> ReviewAnswer:
    """The valid findings and resolved earlier findings of a reviewer's tool input, and
    what was dropped. ``steps`` is the reviewed plan's step count; ``previous`` the previous
    review's findings in the order they were numbered for the reviewer. Raises
    ``ReviewAnswerInvalid`` only when there is no findings list to read."""
    if not isinstance(data, Mapping):
        raise ReviewAnswerInvalid(["the answer must be an object with findings and resolved"])
    raw = data.get("findings")
    if not isinstance(raw, list):
        raise ReviewAnswerInvalid(["findings: must be a list"])
    dropped: list[str] = []
    extra = sorted(str(key) for key in data if key not in ("findings", "resolved"))
    if extra:
        dropped.append(f"unknown field(s) ignored: {', '.join(extra)[:100]}")
    kept: list[Finding] = []
    dropped_blockers = 0
    for index, item in enumerate(raw[:_READ_AT_MOST]):
        finding, problem = _finding(item, steps)
        if finding is not None:
            kept.append(finding)
            continue
        blocker = isinstance(item, Mapping) and item.get("severity") == Severity.BLOCKER.value
        dropped_blockers += blocker
        dropped.append(f"finding {index + 1}{' (a blocker)' if blocker else ''}: {problem}")
    if len(raw) > _READ_AT_MOST:
        unread = raw[_READ_AT_MOST:]
        dropped_blockers += sum(
            isinstance(i, Mapping) and i.get("severity") == Severity.BLOCKER.value for i in unread
        )
        dropped.append(f"{len(unread)} findings past the first {_READ_AT_MOST} not read")
    worst_first = sorted(kept, key=lambda f: _RANK[f.severity])
    findings, over = worst_first[:MAX_FINDINGS], worst_first[MAX_FINDINGS:]
    if over:
        dropped_blockers += sum(f.severity is Severity.BLOCKER for f in over)
        dropped.append(f"{len(over)} findings past the {MAX_FINDINGS} kept (the least severe)")
    resolved = _resolved(data.get("resolved", []), previous, dropped)
    return ReviewAnswer(tuple(findings), resolved, tuple(dropped), dropped_blockers)


_RANK = {Severity.BLOCKER: 0, Severity.CONCERN: 1, Severity.INFO: 2}


def _finding(item: object, steps: int) -> tuple[Finding | None, str]:
    """The finding ``item`` makes, or None and why not. A text past the length limit is
    cut (a long blocker is still a blocker), not dropped."""
    if not isinstance(item, Mapping):
        return None, "not an object with severity, step and text"
    problems: list[str] = []
    extra = sorted(str(key) for key in item if key not in ("severity", "step", "text"))
    if extra:
        problems.append(f"unknown field(s) {', '.join(extra)[:100]}")
    severity = item.get("severity")
    if not isinstance(severity, str) or severity not in {s.value for s in Severity}:
        problems.append("severity must be info, concern or blocker")
    step = item.get("step")
    if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
        problems.append("step must be a step number or null")
    elif step is not None and not 1 <= step <= steps:
        problems.append(f"the plan has no step {step} (it has 1 to {steps})")
    text: Any = item.get("text")
    if not isinstance(text, str) or not one_line(text):
        problems.append("text must be a sentence")
    if problems:
        return None, "; ".join(problems)
    line = one_line(str(text))
    if len(line) > MAX_FINDING_CHARS:
        line = line[: MAX_FINDING_CHARS - 1] + "…"
    return Finding(severity=Severity(str(severity)), step=step, text=line), ""


def _resolved(raw: object, previous: Sequence[Finding], dropped: list[str]) -> tuple[Finding, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        dropped.append("resolved: not a list of finding numbers")
        return ()
    picked: list[Finding] = []
    seen: set[int] = set()
    for number in raw[: MAX_FINDINGS + 1]:
        if isinstance(number, bool) or not isinstance(number, int):
            dropped.append(f"resolved {str(number)[:20]!r}: not a finding number")
        elif not 1 <= number <= len(previous):
            known = f"1 to {len(previous)}" if previous else "there was no earlier review"
            dropped.append(f"resolved {number}: no earlier finding {number} ({known})")
        elif number not in seen:
            seen.add(number)
            picked.append(previous[number - 1])
    if len(raw) > MAX_FINDINGS + 1:
        dropped.append(f"resolved: {len(raw) - MAX_FINDINGS - 1} numbers past the first not read")
    return tuple(picked)


def review_input_schema() -> dict[str, Any]:
    """The JSON schema of the reviewer's one tool, matching what ``parse_review_answer``
    keeps (the parse still checks everything: a schema guides the model, it binds nothing)."""
    return {
        "type": "object",
        "properties": {
            "findings": {
                "type": "array",
                "maxItems": MAX_FINDINGS,
                "items": {
                    "type": "object",
                    "properties": {
                        "severity": {"type": "string", "enum": [s.value for s in Severity]},
                        "step": {
                            "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                            "description": "The step number it concerns; null for the plan.",
                        },
                        "text": {"type": "string", "maxLength": MAX_FINDING_CHARS},
                    },
                    "required": ["severity", "step", "text"],
                    "additionalProperties": False,
                },
            },
            "resolved": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1},
                "description": "Numbers of the previous review's findings this revision resolves.",
            },
        },
        "required": ["findings", "resolved"],
        "additionalProperties": False,
    }
