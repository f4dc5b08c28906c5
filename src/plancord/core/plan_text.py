"""The plan's markdown (``core.plan.render_markdown``) read back into model input, so a
member can download a plan's file, edit it and hand it back (``/plan edit`` with the file,
``plancord plan edit --file``). The text is read here once; what it yields goes through
``validate_plan`` like any submission.

It reads what ``render_markdown`` writes, and the slips of a hand edit: anything before the
``# Plan:`` line (the review a downloaded file starts with) is skipped, a step without
``[risk]`` is low risk, and its fields' lines may be indented by any amount."""

from __future__ import annotations

import re
from typing import Any

from plancord.core.errors import PlanValidationError

COMMENTS_MARK = "<!-- plancord: what follows is not part of the plan -->"
"""Where a plan's file ends and its comments begin (they are not the plan's text)."""
MAX_PLAN_FILE_BYTES = 1_048_576

_STEP = re.compile(r"^(\d+)\.\s+(?:\[(\w+)\]\s*)?(.*)$")
_FIELD = re.compile(r"^\s+(tools|files|network|choice):\s*(.*)$")
_ITEM = re.compile(r"`([^`]*)`")
_SECTIONS = {"## Steps": "steps", "## Open questions": "questions", "## Context notes": "notes"}


def parse_plan_text(text: str) -> dict[str, Any]:
    """The plan ``text`` describes, as model input; ``PlanValidationError`` naming the line
    of anything it cannot read."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("# Plan:")), None)
    if start is None:
        raise PlanValidationError(
            ["plan file: no '# Plan: <title>' line; start from the plan's file"]
        )
    summary = lines[start][len("# Plan:") :].strip()
    steps: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    notes: list[str] = []
    section = ""
    blank = 0
    for number, line in enumerate(lines[start + 1 :], start=start + 2):
        if line.strip() == COMMENTS_MARK:
            break
        if section != "notes" and line.strip() in _SECTIONS:
            section, blank = _SECTIONS[line.strip()], 0
            continue
        if section == "notes":
            notes.append(line)
            continue
        if not line.strip():
            blank += 1
            continue
        field = _FIELD.match(line)
        if section == "steps":
            step = _STEP.match(line)
            if step is not None and not line[0].isspace():
                risk = (step[2] or "low").lower()
                steps.append({"description": step[3], "risk": risk, "tools": [], "files": []})
            elif not steps:
                raise PlanValidationError([f"line {number}: a step starts with '1. [low] …'"])
            elif field is not None and field[1] != "choice":
                key = field[1]
                steps[-1][key] = [*steps[-1].get(key, []), *_ITEM.findall(field[2])]
            else:
                steps[-1]["description"] += "\n" * (blank + 1) + _continued(line)
        elif section == "questions":
            if line.startswith("- "):
                questions.append({"question": line[2:], "choices": []})
            elif not questions:
                raise PlanValidationError([f"line {number}: a question starts with '- '"])
            elif field is not None and field[1] == "choice":
                questions[-1]["choices"] += _ITEM.findall(field[2])
            else:
                questions[-1]["question"] += "\n" * (blank + 1) + _continued(line)
        else:
            raise PlanValidationError(
                [f"line {number}: text outside the plan's sections (## Steps, …): {line[:60]!r}"]
            )
        blank = 0
    return {
        "summary": summary,
        "steps": steps,
        "questions": [q if q["choices"] else q["question"] for q in questions],
        "context_notes": "\n".join(notes).strip(),
    }


def _continued(line: str) -> str:
    """A continuation line's text: without the four spaces the plan's file indents it by."""
    return line[4:] if line.startswith("    ") else line.strip()
